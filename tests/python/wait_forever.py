"""wait_forever.py PIDDIR MODE, under mpirun at 2 or more ranks: waits in transit forever until
SIGINT. MODE "one": rank 0 waits in a barrier that the other ranks never join (they sleep in
Python); MODE "all": rank 0 waits in a barrier of one context, the others in a barrier of another.
Each waiting rank writes its pid to PIDDIR/<rank> first, for test_interrupt.py to send it SIGINT."""
import os
import sys
import time

from mpi4py import MPI

import transit

piddir, mode = sys.argv[1], sys.argv[2]
first = transit.Context()
second = transit.Context(comm=MPI.COMM_WORLD)
rank = first.rank
waits = rank == 0 or mode == "all"
if waits:
    with open(os.path.join(piddir, f"{rank}.tmp"), "w") as f:
        f.write(str(os.getpid()))
    os.rename(os.path.join(piddir, f"{rank}.tmp"), os.path.join(piddir, str(rank)))
    (first if rank == 0 else second).barrier()
    print(f"rank {rank}: the barrier returned", flush=True)
else:
    time.sleep(600)
