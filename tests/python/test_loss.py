"""A Streamer closed with items not delivered raises, naming it and the count, and its context
stays usable; a Context closed with such a streamer still closes, then raises. On one local PE
and under mpirun (every rank makes the same mistake, so every rank raises)."""
import numpy as np
import pytest

import transit

LOST = r"#\d+ destroyed mid-step \(step 0, open\): 10 items buffered"


def streamer_with_items(ctx, delivered):
    s = transit.Streamer(ctx, np.uint64, lambda items: delivered.append(len(items)))
    s.insert(np.full(10, (ctx.rank + 1) % ctx.size), np.arange(10, dtype=np.uint64))
    return s


def test_close_with_items_buffered_raises_and_the_context_stays_usable():
    with transit.Context() as ctx:
        delivered = []
        s = streamer_with_items(ctx, delivered)
        with pytest.raises(RuntimeError, match=LOST):
            s.close()
        with pytest.raises(ValueError, match="closed"):
            s.finish()
        ctx.barrier()
        again = streamer_with_items(ctx, delivered)
        again.finish()
        again.close()
        assert sum(delivered) == 10


def test_context_close_with_items_buffered_closes_then_raises():
    ctx = transit.Context()
    streamer_with_items(ctx, [])
    with pytest.raises(RuntimeError, match=LOST):
        ctx.close()
    assert ctx.closed


def test_leaving_a_with_block_by_an_exception_raises_that_exception_alone():
    streamers = []
    with pytest.raises(KeyError, match="the program's own"):
        with transit.Context() as ctx:
            streamers.append(streamer_with_items(ctx, []))
            raise KeyError("the program's own")
    if not ctx.closed:  # left open on MPI with several ranks (closing is collective): end it cleanly
        assert ctx.on_mpi and ctx.size > 1
        streamers[0].finish()
        ctx.close()
    assert ctx.closed
