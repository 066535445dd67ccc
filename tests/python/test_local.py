"""The transit package on one PE of the local backend (no launcher): every call, and every bad
input with the error it must give."""
import re

import numpy as np
import pytest

import transit


@pytest.fixture
def ctx():
    with transit.Context() as c:
        yield c


def test_context_is_one_local_pe(ctx):
    assert (ctx.rank, ctx.size, ctx.on_mpi, ctx.closed) == (0, 1, False, False)
    ctx.barrier()
    assert ctx.allreduce(5) == 5
    assert ctx.allreduce(2.5, op="max") == 2.5
    assert ctx.allreduce(np.array([1, 7, 3]), op="min").tolist() == [1, 7, 3]


def test_streamer_delivers_views_of_runs(ctx):
    got = []

    def deliver(items):
        assert isinstance(items, np.ndarray) and items.dtype == np.int64
        assert not items.flags.writeable  # transit's buffer, read in place
        got.append(items.copy())

    s = transit.Streamer(ctx, np.int64, deliver)
    s.insert(np.zeros(1000, dtype=np.int32), np.arange(1000, dtype=np.int64))
    s.insert([0, 0], np.array([-1, -2]))
    s.finish()
    assert sorted(np.concatenate(got).tolist()) == sorted(list(range(1000)) + [-1, -2])


def test_structured_items(ctx):
    item = np.dtype([("key", np.uint32), ("weight", np.float32), ("tag", "S3")])
    got = []
    s = transit.Streamer(ctx, item, lambda items: got.append(items.copy()))
    items = np.array([(7, 0.5, b"abc"), (9, 1.5, b"xyz")], dtype=item)
    s.insert(np.zeros(2, dtype=np.uint8), items)
    s.finish()
    assert np.concatenate(got).tolist() == items.tolist()


def test_quiesce_with_inserts_from_deliver(ctx):
    seen = []
    s = None

    def deliver(items):
        seen.extend(items.tolist())
        more = items[items > 0] - 1  # each item starts a chain down to 0
        if len(more):
            s.insert(np.zeros(len(more), dtype=np.int64), more)

    s = transit.Streamer(ctx, np.int64, deliver)
    s.insert(np.zeros(3, dtype=np.int64), np.array([3, 0, 2]))
    s.quiesce()
    assert sorted(seen) == [0, 0, 0, 1, 1, 2, 2, 3]


def test_exception_in_deliver_is_raised_by_the_call(ctx):
    raised = KeyError("slot 42")

    def deliver(items):
        raise raised

    s = transit.Streamer(ctx, np.int64, deliver)
    s.insert(np.zeros(4, dtype=np.int64), np.arange(4))
    with pytest.raises(KeyError) as e:
        s.finish()
    assert e.value is raised  # the original exception, not a copy or a RuntimeError
    s.finish()  # ends the step: closing the streamer mid-step would raise what it lost


def test_dest_out_of_range_names_position_value_and_bound(ctx):
    got = []
    s = transit.Streamer(ctx, np.int64, lambda items: got.append(len(items)))
    with pytest.raises(ValueError, match=re.escape("dest[2] = 1 is out of range: expected a PE in [0, 1)")):
        s.insert(np.array([0, 0, 1, 0]), np.arange(4))
    with pytest.raises(ValueError, match=re.escape("dest[0] = -3 is out of range")):
        s.insert(np.array([-3], dtype=np.int8), np.arange(1))
    with pytest.raises(ValueError, match=re.escape("dest[1] = 4294967296 is out of range")):
        s.insert(np.array([0, 2**32], dtype=np.uint64), np.arange(2))  # not wrapped to 0 in an int
    with pytest.raises(ValueError, match="dest: got dtype float64, expected an integer dtype"):
        s.insert(np.zeros(1), np.arange(1))
    s.finish()
    assert got == []  # nothing of a refused batch was sent


def test_wrong_items_name_both_dtypes_and_lengths(ctx):
    s = transit.Streamer(ctx, np.int64, lambda items: None)
    with pytest.raises(ValueError, match="items: got dtype int32, expected the streamer's dtype int64"):
        s.insert(np.zeros(2, dtype=np.int64), np.arange(2, dtype=np.int32))
    with pytest.raises(ValueError, match="items: got 3 values for 2 destinations"):
        s.insert(np.zeros(2, dtype=np.int64), np.arange(3))
    with pytest.raises(ValueError, match="items: got an array of 2 dimensions, expected 1"):
        s.insert(np.zeros(2, dtype=np.int64), np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="dtype: got object, expected a dtype without Python objects"):
        transit.Streamer(ctx, object, lambda items: None)
    with pytest.raises(TypeError, match="deliver: got a int, expected a callable"):
        transit.Streamer(ctx, np.int64, 3)
    s.finish()


def test_closed_context_refuses_every_call():
    ctx = transit.Context()
    s = transit.Streamer(ctx, np.int64, lambda items: None)
    a = transit.GlobalArray(ctx, 4, np.int64)
    ctx.close()
    ctx.close()  # idempotent
    assert ctx.closed
    closed = "the transit.Context is closed"
    for call in (lambda: ctx.barrier(), lambda: ctx.allreduce(1), lambda: ctx.rank,
                 lambda: s.insert([0], np.arange(1)), lambda: s.finish(), lambda: a.get([0]), lambda: a.sync(),
                 lambda: transit.Streamer(ctx, np.int64, print), lambda: transit.GlobalArray(ctx, 1, np.int64),
                 lambda: transit.sparse_exchange(ctx, {})):
        with pytest.raises(ValueError, match=closed):
            call()


def test_closed_streamer_and_array(ctx):
    s = transit.Streamer(ctx, np.int64, lambda items: None)
    s.close()
    with pytest.raises(ValueError, match="Streamer.insert: the transit.Streamer is closed"):
        s.insert([0], np.arange(1))
    a = transit.GlobalArray(ctx, 4, np.float64)
    a.close()
    with pytest.raises(ValueError, match="GlobalArray.put: the transit.GlobalArray is closed"):
        a.put([0], [1.0])


def test_global_array_ops(ctx):
    a = transit.GlobalArray(ctx, 10, np.int64)
    assert len(a) == 10 and a.dtype == np.int64 and a.local_first == 0
    a.put(np.arange(10), np.arange(10) * 10)
    a.sync()
    assert a.get([9, 0, 3]).tolist() == [90, 0, 30]
    a.accumulate([1, 1, 2], 5)  # a scalar is repeated
    a.accumulate([3], [7], op="max")
    a.accumulate([4], [-7], op="min")
    a.sync()
    assert a.local.tolist() == [0, 20, 25, 30, -7, 50, 60, 70, 80, 90]
    olds = a.fetch_add(np.array([5, 5, 5]), np.array([1, 2, 3]))
    assert sorted(olds.tolist()) == [50, 51, 53]
    a.sync()
    assert a.get([5])[0] == 56

    f = transit.GlobalArray(ctx, 3, np.float64)
    f.accumulate([0, 0, 2], np.array([0.25, 0.5, -1.0]))
    f.sync()
    assert f.local.tolist() == [0.75, 0.0, -1.0]


def test_global_array_bad_input(ctx):
    a = transit.GlobalArray(ctx, 10, np.int64)
    with pytest.raises(ValueError, match=re.escape("idx[1] = 10 is out of range: expected an index in [0, 10)")):
        a.put([0, 10], [1, 2])
    with pytest.raises(ValueError, match=re.escape("idx[0] = -1 is out of range")):
        a.get([-1])
    with pytest.raises(ValueError, match="vals: got dtype float64, expected values the array's dtype int64 holds"):
        a.put([0], [1.5])
    with pytest.raises(ValueError, match="deltas: got 1 values for 2 indices"):
        a.fetch_add([0, 1], [1])
    with pytest.raises(ValueError, match="op: got 'prod', expected 'sum', 'min' or 'max'"):
        a.accumulate([0], [1], op="prod")
    a.sync()
    assert a.local.tolist() == [0] * 10  # nothing of a refused batch was done
    with pytest.raises(ValueError, match="dtype: got int32, expected int64 or float64"):
        transit.GlobalArray(ctx, 4, np.int32)
    with pytest.raises(ValueError, match="n: got -1, expected a size of 0 or more"):
        transit.GlobalArray(ctx, -1, np.int64)


def test_exchange_to_self(ctx):
    got = transit.sparse_exchange(ctx, {0: np.array([1.5, 2.5])})
    assert list(got) == [0] and got[0].tolist() == [1.5, 2.5] and got[0].dtype == np.float64
    assert transit.sparse_exchange(ctx, {}) == {}
    with pytest.raises(ValueError, match=re.escape("sends: peer 1 is out of range: expected a PE in [0, 1)")):
        transit.sparse_exchange(ctx, {1: np.arange(3)})
    with pytest.raises(ValueError, match="sends\\[0\\]: got dtype int32, expected int64"):
        transit.sparse_exchange(ctx, {0: np.arange(3, dtype=np.int32)}, dtype=np.int64)


def test_allreduce_bad_input(ctx):
    with pytest.raises(ValueError, match="op: got 'avg', expected 'sum', 'min' or 'max'"):
        ctx.allreduce(1, op="avg")
    with pytest.raises(ValueError, match="value: got dtype <U1, expected integers or floats"):
        ctx.allreduce("x")
    with pytest.raises(ValueError, match="value: got dtype uint64, expected integers that int64 holds"):
        ctx.allreduce(np.array([2**63], dtype=np.uint64))


def test_comm_must_be_an_mpi4py_communicator():
    with pytest.raises(TypeError, match="comm: got a str, expected an mpi4py communicator"):
        transit.Context("world")


def test_a_deliver_array_kept_after_its_call_raises_on_access(ctx):
    kept = []

    def deliver(items):
        assert items.sum() in (sum(range(100)), 400)  # usable during the call
        kept.append(items)

    s = transit.Streamer(ctx, np.int64, deliver)
    s.insert(np.zeros(100, dtype=np.int64), np.arange(100))
    s.finish()
    s.insert(np.zeros(100, dtype=np.int64), np.full(100, 4))  # the next delivery reuses the buffer
    s.finish()
    assert len(kept) == 2
    for k in kept:
        assert isinstance(k, np.ndarray) and "expired" in repr(k)
        for access in (lambda: k[0], lambda: k.sum(), lambda: np.sum(k), lambda: k + 1, lambda: len(k),
                       lambda: list(k), lambda: k.copy(), lambda: k.tolist(), lambda: k.shape,
                       lambda: np.concatenate([k]), lambda: k == 4, lambda: np.bincount(k)):
            with pytest.raises(ValueError, match=r"valid during that call only.*items\.copy\(\).*copy=True"):
                access()


def test_a_deliver_array_not_kept_is_left_alone(ctx):
    sums = []
    s = transit.Streamer(ctx, np.int64, lambda items: sums.append(int(items.sum())))
    s.insert(np.zeros(10, dtype=np.int64), np.arange(10))
    s.finish()
    assert sums == [45]


def test_copy_true_hands_out_arrays_that_keep_their_values(ctx):
    kept = []

    def deliver(items):
        assert items.flags.writeable and items.flags.owndata  # the callback's own array
        kept.append(items)

    s = transit.Streamer(ctx, np.int64, deliver, copy=True)
    for step in range(3):
        s.insert(np.zeros(1000, dtype=np.int64), np.full(1000, step))
        s.finish()
    values = np.concatenate(kept)
    assert values.size == 3000 and np.bincount(values).tolist() == [1000, 1000, 1000]


def test_subarray_dtype_items_are_rows(ctx):
    item = np.dtype((np.int64, 3))
    got, owned = [], []
    s = transit.Streamer(ctx, item, lambda rows: got.append(rows.copy()))
    s.insert([0, 0], np.arange(6).reshape(2, 3))
    s.finish()
    assert np.concatenate(got).tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match=re.escape(
            "items: got an array of shape (6,) and dtype int64, expected shape (n, 3) and dtype int64 "
            "for the streamer's dtype ('<i8', (3,))")):
        s.insert([0, 0], np.arange(6))
    with pytest.raises(ValueError, match=re.escape("got an array of shape (2, 3) and dtype int32")):
        s.insert([0, 0], np.arange(6, dtype=np.int32).reshape(2, 3))
    c = transit.Streamer(ctx, np.dtype((np.float32, (2, 2))), owned.append, copy=True)
    c.insert([0], np.ones((1, 2, 2), dtype=np.float32))
    c.finish()
    assert owned[0].shape == (1, 2, 2) and owned[0].sum() == 4


def test_watchdog_option_is_checked_and_leaves_the_environment_alone():
    import os
    before = os.environ.get("TRANSIT_WATCHDOG")
    with transit.Context(watchdog=5.0) as c:
        c.barrier()
    assert os.environ.get("TRANSIT_WATCHDOG") == before
    with pytest.raises(ValueError, match=re.escape("watchdog: got -1, expected 0 (off) or seconds in [0.001, 604800]")):
        transit.Context(watchdog=-1)
    with pytest.raises(TypeError, match="watchdog: got a str, expected a number of seconds or None"):
        transit.Context(watchdog="5")
    assert os.environ.get("TRANSIT_WATCHDOG") == before


def test_build_info_says_how_the_module_was_built():
    info = transit.build_info()
    assert info["version"] == transit.version
    assert isinstance(info["mpi"], bool) and isinstance(info["mpi4py"], bool)
    assert info["cxx_standard"] >= 202002
    if info["mpi4py"]:
        assert info["mpi"] and info["mpi_library"]


def test_python_m_transit_prints_the_build_info():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "transit"], check=True, capture_output=True, text=True).stdout
    info = transit.build_info()
    assert f"version       {info['version']}" in out
    assert f"mpi4py        {info['mpi4py']}" in out


def test_errors_speak_python_not_the_c_api(ctx):
    s = None

    def deliver(items):
        s.insert([0], np.array([1]))  # during finish: refused

    s = transit.Streamer(ctx, np.int64, deliver)
    s.insert([0], np.array([5]))
    with pytest.raises(RuntimeError) as e:
        s.finish()
    message = str(e.value)
    assert message.startswith("Streamer.insert after finish() began and before it returned"), message
    for internal in ("done()", "wait()", "C items", "streamer::", "transit_streamer"):
        assert internal not in message, message
    # The step never ended, so closing the streamer reports what it lost, in Python's terms too.
    with pytest.raises(RuntimeError) as e:
        s.close()
    message = str(e.value)
    assert message.startswith("Streamer.close: transit.Streamer #0 destroyed mid-step"), message
    for internal in ("done()", "wait()", "C items", "streamer::", "transit_streamer"):
        assert internal not in message, message


def test_sparse_exchange_needs_no_dtype_on_a_pe_that_sends_nothing(ctx):
    assert transit.sparse_exchange(ctx, {}) == {}
    item = np.dtype([("key", np.uint32), ("w", np.float64)])
    got = transit.sparse_exchange(ctx, {0: np.array([(1, 0.5)], dtype=item)})
    assert got[0].dtype == item and got[0].tolist() == [(1, 0.5)]
