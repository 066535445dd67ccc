"""The histogram of `transit bench histogram` from Python: every PE adds 1 to random slots of a
table spread over all PEs, in batches of NumPy arrays. python3 histogram.py (one PE), or
mpirun -n 4 python3 histogram.py."""
import numpy as np

import transit

SLOTS, UPDATES, BATCH = 1000, 1 << 20, 1 << 16  # table slots per PE, updates per PE, items per insert

with transit.Context() as ctx:
    table = np.zeros(SLOTS, dtype=np.int64)

    def count(slots):  # whole runs of arrived items: a view of transit's buffer, during the call only
        table[:] += np.bincount(slots, minlength=SLOTS)

    hist = transit.Streamer(ctx, np.int64, count)
    rng = np.random.default_rng(ctx.rank)
    for _ in range(UPDATES // BATCH):
        hist.insert(rng.integers(0, ctx.size, BATCH), rng.integers(0, SLOTS, BATCH))  # PEs, slots
    hist.finish()
    total = ctx.allreduce(int(table.sum()))
    assert total == UPDATES * ctx.size, f"counted {total} updates, expected {UPDATES * ctx.size}"
    if ctx.rank == 0:
        print(f"histogram: {total} updates from {ctx.size} PEs, every one counted")
