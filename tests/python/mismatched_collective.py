"""Under mpirun at 2 or more ranks, with transit.Context(watchdog=2): rank 0 waits in a barrier of
one context while the others wait in a barrier of another, a mismatch that would hang forever. The
watchdog ends each wait after 2 s with its report (RuntimeError "watchdog: no progress for ...
while in ..."), which nobody handles: the job ends with a nonzero status."""
from mpi4py import MPI

import transit

first = transit.Context(watchdog=2)
second = transit.Context(comm=MPI.COMM_WORLD, watchdog=2.0)
(first if first.rank == 0 else second).barrier()
print("the mismatched barriers returned", flush=True)
