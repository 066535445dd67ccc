"""transit from Python: aggregated fine-grained communication in batches of NumPy arrays.

    import numpy as np, transit
    with transit.Context() as ctx:            # MPI.COMM_WORLD under mpirun, else one local PE
        s = transit.Streamer(ctx, np.uint64, lambda items: ...)
        s.insert(dest_pes, items)               # arrays: one destination per item
        s.finish()

Batches, not items: each call handles whole arrays. The GIL is released while transit waits and
progresses; deliver callbacks take it back. An exception raised in a callback is raised again by
the call that delivered; left unhandled on an MPI job, it ends the job (MPI_Abort) with the line
"transit: PE <rank>: <exception>" instead of leaving the other ranks waiting.
See README "From Python".
"""
import atexit
import os
import sys

from ._transit import Context, GlobalArray, Streamer, build_info, sparse_exchange, version
from ._transit import _live_contexts, _prepare_mpi

__all__ = ["Context", "GlobalArray", "Streamer", "build_info", "sparse_exchange", "version", "prepare_mpi"]


def prepare_mpi():
    """Before MPI starts (before `from mpi4py import MPI` in a program that imports it before its
    first Context): Open MPI's settings for transit's messages, as transit::run sets them (a 32 KiB
    shared-memory eager limit; your own settings win). Context() does it when it starts MPI."""
    _prepare_mpi()
__version__ = version


def _abort_job_if_open(exc_type, exc, tb):
    """sys.excepthook: after the usual report, an exception nobody handled ends an MPI job whose
    contexts are open, since its other ranks may wait for this one in a collective call forever."""
    _previous_excepthook(exc_type, exc, tb)
    contexts = [c for c in _live_contexts() if c.on_mpi and not c.closed]
    if not contexts:
        return
    what = f"{exc_type.__name__}: {exc}" if str(exc) else exc_type.__name__  # KeyboardInterrupt has no text
    sys.stderr.write(f"transit: PE {contexts[0].rank}: {what}\n")
    sys.stderr.flush()
    from mpi4py import MPI
    MPI.COMM_WORLD.Abort(1)


def _close_at_exit():
    """Contexts the program did not close are closed (collectively) before MPI is finalised, oldest
    first, which is the same order on every rank. One that fails to close (a streamer left open
    with items not delivered) is reported as "transit: PE <rank>: <error>" and the process exits
    with status 1 once every context is closed (after finalising MPI, which an exit handler cannot
    otherwise signal: its exceptions are ignored)."""
    failure = None
    for c in _live_contexts():
        where = ""
        try:
            where = f"PE {c.rank}: "
            c.close()
        except Exception as e:  # the others still close: their peers are closing them too
            failure = failure or f"transit: {where}{e}\n"
    if failure is None:
        return
    sys.stderr.write(failure)
    sys.stdout.flush()
    sys.stderr.flush()
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        mpi.Finalize()
    os._exit(1)


_previous_excepthook = sys.excepthook
sys.excepthook = _abort_job_if_open
atexit.register(_close_at_exit)
