"""Under mpirun: PE 1's deliver callback raises while every PE is in finish(). The exception is
raised by PE 1's finish(), leaves the with block (which cannot close the context: the other PEs
are not closing) and nobody handles it: the job must end, since the other PEs would wait in
finish() forever, with a nonzero status and the line "transit: PE 1: ..."."""
import numpy as np

import transit

with transit.Context() as ctx:
    def deliver(items):
        if ctx.rank == 1:
            raise RuntimeError(f"deliberate failure in deliver on PE 1 ({len(items)} items)")

    s = transit.Streamer(ctx, np.int64, deliver)
    s.insert(np.arange(ctx.size * 10) % ctx.size, np.arange(ctx.size * 10))
    s.finish()
    print(f"PE {ctx.rank}: finish returned", flush=True)
