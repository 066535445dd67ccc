"""Leaves the interpreter with a streamer holding 10 items not delivered: closing it at exit must
report "transit: PE <rank>: ... 10 items buffered ..." and exit nonzero (tests/python/CMakeLists.txt)."""
import numpy as np

import transit

ctx = transit.Context()
s = transit.Streamer(ctx, np.uint64, lambda items: None)
s.insert(np.full(10, (ctx.rank + 1) % ctx.size), np.arange(10, dtype=np.uint64))
print(f"PE {ctx.rank}: leaving with the streamer open", flush=True)
