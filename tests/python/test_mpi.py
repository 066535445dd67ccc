"""The transit package under mpirun (any number of ranks): contexts on MPI.COMM_WORLD and on
communicators the program made, with exact results, and the bad communicators."""
import re

import numpy as np
import pytest
from mpi4py import MPI

import transit

world = MPI.COMM_WORLD


@pytest.fixture(scope="module")
def ctx():
    with transit.Context() as c:  # MPI.COMM_WORLD: the program runs under mpirun
        yield c


def batches(rank, pes, slots, updates, batch):
    """PE `rank`'s updates of the histogram: (destination PEs, slots) in batches."""
    rng = np.random.default_rng(1000 + rank)
    for start in range(0, updates, batch):
        n = min(batch, updates - start)
        yield rng.integers(0, pes, n), rng.integers(0, slots, n)


def histogram(ctx, slots=1000, updates=100_000, batch=1 << 14):
    """The histogram of `transit bench histogram`: increments of random slots of a table of
    `slots` per PE, 8-byte items. Returns this PE's table."""
    table = np.zeros(slots, dtype=np.int64)

    def deliver(items):
        np.add.at(table, items, 1)

    s = transit.Streamer(ctx, np.int64, deliver)
    for dest, slot in batches(ctx.rank, ctx.size, slots, updates, batch):
        s.insert(dest, slot)
    s.finish()
    s.close()
    return table


def expected_table(rank, pes, slots, updates, batch=1 << 14):
    """This PE's table recomputed from every PE's random stream."""
    table = np.zeros(slots, dtype=np.int64)
    for source in range(pes):
        for dest, slot in batches(source, pes, slots, updates, batch):
            np.add.at(table, slot[dest == rank], 1)
    return table


def test_context_on_the_world(ctx):
    assert (ctx.rank, ctx.size, ctx.on_mpi) == (world.rank, world.size, True)
    assert ctx.allreduce(ctx.rank + 1) == ctx.size * (ctx.size + 1) // 2
    assert ctx.allreduce(np.array([ctx.rank, -ctx.rank]), op="max").tolist() == [ctx.size - 1, 0]
    ctx.barrier()


def test_histogram_exact(ctx):
    updates = 100_000
    table = histogram(ctx, updates=updates)
    # The check of `transit bench histogram`: every update counted once.
    assert ctx.allreduce(int(table.sum())) == updates * ctx.size
    assert np.array_equal(table, expected_table(ctx.rank, ctx.size, 1000, updates))


def test_two_histograms_at_once_on_a_split_world(ctx):
    """The program splits its world into two groups; each runs its own histogram on its group,
    while the world's context stays open, and MPI is used between transit's calls."""
    group = world.Split(world.rank % 2, world.rank)
    with transit.Context(group) as g:
        assert (g.rank, g.size) == (group.rank, group.size)
        table = histogram(g, slots=500, updates=50_000)
        assert world.allreduce(1) == world.size  # the program's own MPI, between transit's calls
        assert g.allreduce(int(table.sum())) == 50_000 * g.size
        assert np.array_equal(table, expected_table(g.rank, g.size, 500, 50_000))
    group.Free()
    ctx.barrier()


def test_global_array_exact(ctx):
    pes, me = ctx.size, ctx.rank
    n = 7 * pes + 3  # uneven blocks
    a = transit.GlobalArray(ctx, n, np.int64)
    a.put(np.arange(me, n, pes), np.arange(me, n, pes) * 10)  # each element by one PE
    a.sync()
    assert a.get(np.arange(n)).tolist() == [i * 10 for i in range(n)]
    a.sync()  # every PE has read before any PE adds: a get races with another PE's later update
    a.accumulate(np.arange(n), 1)  # every PE adds 1 everywhere
    a.sync()  # before the max below: sums and maxima of different PEs do not commute
    a.accumulate(np.array([0]), np.array([100 + me]), op="max")
    a.sync()
    expected = [i * 10 + pes for i in range(n)]
    expected[0] = max(pes, 100 + pes - 1)
    assert a.get(np.arange(n)).tolist() == expected
    a.sync()
    olds = a.fetch_add(np.full(5, n - 1), np.ones(5, dtype=np.int64))
    a.sync()
    # 5 * pes fetch-adds of 1 on one element: each old value seen exactly once over all PEs.
    seen = np.concatenate(world.allgather(olds))
    start = expected[n - 1]
    assert sorted(seen.tolist()) == list(range(start, start + 5 * pes))
    assert a.get([n - 1])[0] == start + 5 * pes
    block = a.local
    assert ctx.allreduce(len(block)) == n
    assert block.tolist() == a.get(np.arange(a.local_first, a.local_first + len(block))).tolist()
    a.close()


def test_sparse_exchange(ctx):
    pes, me = ctx.size, ctx.rank
    sends = {(me + k) % pes: np.arange(me * 100, me * 100 + k + 1, dtype=np.int32) for k in range(min(pes, 3))}
    got = transit.sparse_exchange(ctx, sends)
    expected = {}
    for source in range(pes):
        for k in range(min(pes, 3)):
            if (source + k) % pes == me:
                expected[source] = list(range(source * 100, source * 100 + k + 1))
    assert {s: a.tolist() for s, a in got.items()} == expected
    assert all(a.dtype == np.int32 for a in got.values())
    # A PE that sends nothing still receives, with the dtype given.
    sends = {0: np.array([me + 0.5])} if me != 0 else {}
    got = transit.sparse_exchange(ctx, sends, dtype=np.float64)
    if me == 0:
        assert {s: a.tolist() for s, a in got.items()} == {s: [s + 0.5] for s in range(1, pes)}
    else:
        assert got == {}
    # Without dtype= too: each message carries its dtype.
    got = transit.sparse_exchange(ctx, sends)
    if me == 0:
        assert {s: a.tolist() for s, a in got.items()} == {s: [s + 0.5] for s in range(1, pes)}
        assert all(a.dtype == np.float64 for a in got.values())
    else:
        assert got == {}


def test_sparse_exchange_of_different_dtypes_is_refused(ctx):
    if ctx.size == 1:
        pytest.skip("needs two PEs")
    mine = np.int32 if ctx.rank == 0 else np.int64
    sends = {p: np.arange(2, dtype=mine) for p in range(ctx.size)}
    theirs = "int64" if ctx.rank == 0 else "int32"
    with pytest.raises(ValueError, match=f"sent items of dtype {theirs}, this PE sent {np.dtype(mine)}: "
                                         "every PE must exchange one dtype"):
        transit.sparse_exchange(ctx, sends)


def test_dest_out_of_range(ctx):
    s = transit.Streamer(ctx, np.int64, lambda items: None)
    bound = re.escape(f"dest[1] = {ctx.size} is out of range: expected a PE in [0, {ctx.size})")
    with pytest.raises(ValueError, match=bound):
        s.insert(np.array([0, ctx.size]), np.arange(2))
    s.finish()
    s.close()


def test_comm_null_refused():
    with pytest.raises(ValueError, match="comm: got MPI.COMM_NULL, expected an intracommunicator"):
        transit.Context(MPI.COMM_NULL)


def test_intercommunicator_refused():
    if world.size < 2:
        pytest.skip("an intercommunicator needs two groups, so two ranks")
    group = world.Split(world.rank % 2, world.rank)
    inter = group.Create_intercomm(0, world, 1 - world.rank % 2)
    with pytest.raises(ValueError, match="comm: got an intercommunicator, expected an intracommunicator"):
        transit.Context(inter)
    inter.Free()
    group.Free()
