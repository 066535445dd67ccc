"""The histogram of `transit bench histogram` from Python with NumPy batches: every PE increments
random slots of a table of --table-slots per PE, 8-byte items (the slot), --items-per-pe updates
per PE inserted in batches of --batch; the receiver counts a whole delivered run with np.bincount.
Prints M updates/s per PE, as `transit bench histogram` does, and verifies the table the same way
(its global sum equals the updates sent).

    mpirun -n 2 python3 bench/python_histogram.py
    mpirun -n 2 build/bin/transit bench histogram        # the C++ kernel, same defaults

Run with PYTHONPATH=build/python, or with the package installed (README "From Python")."""
import argparse
import time

import numpy as np

import transit


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--items-per-pe", type=int, default=1 << 22, help="updates per PE (transit bench's default)")
    p.add_argument("--table-slots", type=int, default=1000, help="table slots per PE (transit bench's default)")
    p.add_argument("--batch", type=int, default=1 << 16, help="items per insert call")
    p.add_argument("--repeat", type=int, default=1, help="measured runs, each printed")
    p.add_argument("--pregenerate", action="store_true",
                   help="draw the random updates before the timed region: what transit through Python costs alone")
    a = p.parse_args()
    for name in ("items_per_pe", "table_slots", "batch", "repeat"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')}: got {getattr(a, name)}, expected a positive integer")

    with transit.Context() as ctx:
        table = np.zeros(a.table_slots, dtype=np.int64)

        def count(slots):
            table[:] += np.bincount(slots, minlength=a.table_slots)

        hist = transit.Streamer(ctx, np.int64, count)
        rng = np.random.default_rng(ctx.rank)

        def batches():
            for first in range(0, a.items_per_pe, a.batch):
                n = min(a.batch, a.items_per_pe - first)
                yield rng.integers(0, ctx.size, n), rng.integers(0, a.table_slots, n)  # PEs, slots

        for run in range(a.repeat):
            table[:] = 0
            updates = list(batches()) if a.pregenerate else batches()
            ctx.barrier()
            start = time.perf_counter()
            for dest, slots in updates:
                hist.insert(dest, slots)
            hist.finish()
            ctx.barrier()
            seconds = ctx.allreduce(time.perf_counter() - start, op="max")
            verified = ctx.allreduce(int(table.sum())) == a.items_per_pe * ctx.size
            if ctx.rank == 0:
                drawn = " (drawn before)" if a.pregenerate else ""
                print(f"histogram python{drawn}: {ctx.size} PEs, {a.items_per_pe} updates per PE in batches of {a.batch}, "
                      f"{a.table_slots} slots per PE: {a.items_per_pe / seconds / 1e6:.2f} M updates/s per PE "
                      f"({seconds:.3f} s), verified: {'yes' if verified else 'NO'}", flush=True)
            if not verified:
                raise SystemExit(1)


if __name__ == "__main__":
    main()
