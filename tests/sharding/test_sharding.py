"""Sharded arrays (DESIGN 5.6, issue 15 acceptance 1): placement, values,
per-device bytes, into= at flat bytes, donation of every shard."""

import numpy as np
import pytest
from conftest import N, in_use

import baton as bt
from baton.sharding import Mesh, NamedSharding, P, SingleDeviceSharding


def ptr(a):
    view = np.asarray(a)
    return view.__array_interface__["data"][0]


@pytest.fixture
def mesh():
    return bt.make_mesh((N,), ("x",))


def floats(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


def test_each_device_holds_its_block_and_one_nth_of_the_bytes(mesh):
    x = floats(4 * 64, 8)  # 8 KiB: 2 KiB per device
    before = in_use()
    y = bt.device_put(x, NamedSharding(mesh, P("x")))
    assert isinstance(y, bt.ShardedArray)
    assert y.shape == (256, 8) and y.dtype == np.float32 and y.nbytes == x.nbytes
    shards = y.addressable_shards
    assert [s.device for s in shards] == bt.devices()
    for i, s in enumerate(shards):
        assert s.index == (slice(64 * i, 64 * (i + 1)), slice(None))
        assert s.data.device == bt.devices()[i] and s.data.shape == (64, 8)
        np.testing.assert_array_equal(np.asarray(s.data), x[64 * i : 64 * (i + 1)])
    assert [a - b for a, b in zip(in_use(), before)] == [x.nbytes // N] * N
    np.testing.assert_array_equal(np.asarray(y), x)
    np.testing.assert_array_equal(bt.device_get({"y": y})["y"], x)
    assert not y.is_fully_replicated and y.is_fully_addressable
    del y, shards, s
    assert in_use() == before  # every shard released with the last reference


def test_a_replicated_array_costs_every_device_one_copy(mesh):
    x = floats(64, 4)
    before = in_use()
    y = bt.device_put(x, NamedSharding(mesh, P()))
    assert y.is_fully_replicated
    assert [a - b for a, b in zip(in_use(), before)] == [x.nbytes] * N
    assert [s.replica_id for s in y.addressable_shards] == [0, 1, 2, 3]
    for s in y.addressable_shards:
        np.testing.assert_array_equal(np.asarray(s.data), x)


def test_a_two_dimensional_mesh_splits_and_replicates():
    mesh = bt.make_mesh((2, 2), ("data", "model"))
    x = floats(128, 4)
    y = bt.device_put(x, NamedSharding(mesh, P("data")))
    idx = [(s.index[0].start, s.replica_id) for s in y.addressable_shards]
    assert idx == [(0, 0), (0, 1), (64, 0), (64, 1)]
    z = bt.device_put(x, NamedSharding(mesh, P("model", "data")))
    assert z.addressable_shards[1].index == (slice(64, 128), slice(0, 2))
    np.testing.assert_array_equal(np.asarray(z), x)
    w = bt.device_put(x, NamedSharding(mesh, P(("data", "model"))))
    assert [s.data.shape for s in w.addressable_shards] == [(32, 4)] * 4
    np.testing.assert_array_equal(np.asarray(w), x)


def test_from_a_device_array_and_between_shardings(mesh):
    x = floats(256)
    a = bt.device_put(x)
    y = bt.device_put(a, NamedSharding(mesh, P("x")))
    np.testing.assert_array_equal(np.asarray(y), x)
    assert not a.is_deleted()
    r = bt.device_put(y, NamedSharding(mesh, P()))  # reshard
    np.testing.assert_array_equal(np.asarray(r.addressable_shards[3].data), x)
    one = bt.device_put(y, bt.devices()[2])  # gather explicitly
    assert isinstance(one, bt.Array) and one.device == bt.devices()[2]
    np.testing.assert_array_equal(np.asarray(one), x)
    same = bt.device_put(y, y.sharding, may_alias=True)
    assert same is y
    s1 = bt.device_put(x, SingleDeviceSharding(bt.devices()[1]))
    assert isinstance(s1, bt.Array) and s1.device == bt.devices()[1]


def test_into_a_replicated_array_keeps_every_device_flat(mesh):
    sharding = NamedSharding(mesh, P())
    params = bt.device_put(floats(64, 64), sharding)  # 16 KiB per device
    ptrs = [ptr(s.data) for s in params.addressable_shards]
    steady = in_use()
    for d in bt.devices():
        bt.reset_peak_memory_stats(d)
    new = floats(64, 64) + 1
    out = bt.device_put(new, into=params)
    bt.block_until_ready(out)
    assert params.is_deleted()
    assert in_use() == steady
    assert [bt.memory_stats(d)["peak_bytes_in_use"] for d in bt.devices()] == steady
    assert [ptr(s.data) for s in out.addressable_shards] == ptrs
    np.testing.assert_array_equal(np.asarray(out), new)


def test_into_refuses_a_mismatch_and_consumes_nothing(mesh):
    y = bt.device_put(floats(256), NamedSharding(mesh, P("x")))
    with pytest.raises(ValueError, match="same shape and dtype"):
        bt.device_put(floats(128), into=y)
    with pytest.raises(TypeError, match="single-device array"):
        bt.device_put(bt.device_put(floats(256)), into=y)
    other = bt.device_put(floats(256), NamedSharding(mesh, P()))
    with pytest.raises(ValueError, match="same shape, dtype and sharding"):
        bt.device_put(other, into=y)
    assert not y.is_deleted()
    view = np.asarray(y.addressable_shards[2].data)
    with pytest.raises(bt.errors.DonationError, match="host view"):
        bt.device_put(floats(256), into=y)
    del view
    np.testing.assert_array_equal(np.asarray(y), floats(256))


def test_donation_reuses_every_shard_in_place(mesh):
    sharding = NamedSharding(mesh, P("x"))
    step = bt.jit(lambda a: a * 2 + 1, donate_argnums=0)
    minus = bt.jit(lambda a: a - 1)
    minus(
        bt.donate(step(bt.device_put(floats(4 * 256), sharding)))
    )  # compiles (constants)
    y = bt.device_put(floats(4 * 256), sharding)
    ptrs = [ptr(s.data) for s in y.addressable_shards]
    steady = in_use()
    out = step(y)
    assert y.is_deleted()
    assert [ptr(s.data) for s in out.addressable_shards] == ptrs
    assert in_use() == steady
    np.testing.assert_array_equal(np.asarray(out), floats(4 * 256) * 2 + 1)
    out2 = minus(bt.donate(out))  # call-site donation
    assert out.is_deleted() and in_use() == steady
    assert [ptr(s.data) for s in out2.addressable_shards] == ptrs


def test_delete_frees_every_shard(mesh):
    before = in_use()
    y = bt.device_put(floats(1024), NamedSharding(mesh, P("x")))
    assert in_use() != before
    y.delete()
    assert y.is_deleted() and in_use() == before
    with pytest.raises(bt.errors.DeletedArrayError):
        np.asarray(y)
    y.delete()  # idempotent


def test_live_arrays_lists_each_shard(mesh):
    y = bt.device_put(floats(256), NamedSharding(mesh, P("x")))
    for d, s in zip(bt.devices(), y.addressable_shards):
        assert any(a is s.data or a._id == s.data._id for a in bt.live_arrays(d))


def test_elementwise_operators_run_shard_by_shard(mesh):
    x = floats(256)
    s = NamedSharding(mesh, P("x"))
    y = bt.device_put(x, s)
    z = bt.numpy.tanh(y * 0.01) + 2 * y
    assert isinstance(z, bt.ShardedArray) and z.sharding == s
    np.testing.assert_allclose(np.asarray(z), np.tanh(x * 0.01) + 2 * x, rtol=1e-6)
    assert (y > 10).dtype == np.bool_
    assert [sh.data.device for sh in z.addressable_shards] == bt.devices()


def test_a_program_that_is_not_elementwise_is_partitioned(mesh):
    # Before issue 37 each of these raised ValueError pointing to shard_map.
    x = floats(256)
    y = bt.device_put(x, NamedSharding(mesh, P("x")))
    assert float(np.asarray(y.sum())) == x.sum()
    np.testing.assert_array_equal(np.asarray(bt.jit(lambda a: a[::-1])(y)), x[::-1])
    z = bt.jit(lambda a, b: a + b)(y, bt.device_put(floats(256)))
    np.testing.assert_array_equal(np.asarray(z), 2 * x)
    # Donating to the partitioned sum: no output can reuse the shards. In
    # "error" mode that is refused, nothing consumed; by default it warns
    # and the shards are freed after the call.
    bt.config.update("donation", "error")
    try:
        with pytest.raises(bt.DonationError, match="Nothing was consumed"):
            bt.jit(lambda a: a.sum())(bt.donate(y))
    finally:
        bt.config.update("donation", "warn")
    assert not y.is_deleted()  # the refused call gave the shards back
    with pytest.warns(bt.DonationWarning, match="no output can reuse"):
        total = bt.jit(lambda a: a.sum())(bt.donate(y))
    assert y.is_deleted() and float(total) == x.sum()


def test_a_replicated_argument_runs_any_program_on_each_device(mesh):
    x = floats(64, 4)
    y = bt.device_put(x, NamedSharding(mesh, P()))
    t = bt.jit(lambda a: a.sum(axis=0))(y)
    assert t.is_fully_replicated and t.shape == (4,)
    np.testing.assert_allclose(np.asarray(t), x.sum(axis=0))


def test_device_put_replicated_and_sharded():
    x = floats(64)
    r = bt.device_put_replicated(x, bt.devices())
    assert r.shape == (N, 64)
    assert [s.data.device for s in r.addressable_shards] == bt.devices()
    np.testing.assert_array_equal(np.asarray(r), np.stack([x] * N))
    parts = [floats(64) + i for i in range(N)]
    s = bt.device_put_sharded(parts, bt.devices())
    np.testing.assert_array_equal(np.asarray(s), np.stack(parts))


def test_shardings_describe_themselves(mesh):
    s = NamedSharding(mesh, P("x"))
    assert s.shard_shape((8, 3)) == (2, 3)
    assert s.num_devices == N and s.device_set == set(bt.devices())
    assert s == NamedSharding(mesh, P("x", None)) and hash(s) == hash(
        NamedSharding(mesh, P("x", None))
    )
    assert s != NamedSharding(mesh, P())
    assert s.with_memory_kind("pinned_host").memory_kind == "pinned_host"
    m = s.devices_indices_map((8,))
    assert m[bt.devices()[3]] == (slice(6, 8),)
    assert bt.tree.leaves({"a": P("x"), "b": P()}) == [P("x"), P()]


def test_bad_shardings_say_what_is_wrong(mesh):
    with pytest.raises(ValueError, match="does not have"):
        NamedSharding(mesh, P("y"))
    with pytest.raises(ValueError, match="twice"):
        NamedSharding(bt.make_mesh((2, 2), ("a", "b")), P("a", "a"))
    with pytest.raises(ValueError, match="divisible"):
        bt.device_put(floats(6), NamedSharding(mesh, P("x")))
    with pytest.raises(ValueError, match="rank"):
        bt.device_put(floats(8), NamedSharding(mesh, P("x", None)))
    with pytest.raises(ValueError, match="needs 8 devices"):
        bt.make_mesh((8,), ("x",))
    with pytest.raises(ValueError, match="axis name"):
        Mesh(np.array(bt.devices()), ("a", "b"))
    with pytest.raises(TypeError, match="Device"):
        bt.device_put(floats(8), "cpu:0")


def test_memory_kinds_per_shard(mesh):
    s = NamedSharding(mesh, P("x"), memory_kind="pinned_host")
    before = [bt.memory_stats(d, "pinned_host")["bytes_in_use"] for d in bt.devices()]
    y = bt.device_put(floats(1024), s)
    assert y.memory_kind == "pinned_host"
    after = [bt.memory_stats(d, "pinned_host")["bytes_in_use"] for d in bt.devices()]
    assert [a - b for a, b in zip(after, before)] == [1024] * N


def test_a_single_device_array_has_one_whole_shard():
    a = bt.device_put(floats(4, 2), bt.devices()[1])
    (s,) = a.addressable_shards
    assert s.data is a and s.device == bt.devices()[1]
    assert s.index == (slice(None), slice(None)) and s.replica_id == 0
    assert a.is_fully_replicated and a.is_fully_addressable
    assert a.sharding == SingleDeviceSharding(bt.devices()[1], memory_kind="device")


@pytest.mark.parametrize("viewed", [1, 3])
def test_a_refused_sharded_donation_consumes_no_shard(mesh, viewed):
    # Issue 36: the devices' calls ran one by one, so a host view on shard
    # `viewed` refused that shard's donation after the shards before it were
    # consumed (while DonationError said nothing was).
    sharding = NamedSharding(mesh, P("x"))
    step = bt.jit(lambda a, b: (a * 2, b + 1), donate_argnums=(0, 1))
    xs = bt.device_put(floats(4 * 64), sharding)
    ys = bt.device_put(floats(4 * 64) + 1, sharding)
    view = np.asarray(ys.addressable_shards[viewed].data)
    before = in_use()
    with pytest.raises(bt.errors.DonationError, match=r"argument \[0\]\[1\].*host ref"):
        step(xs, ys)
    assert not xs.is_deleted() and not ys.is_deleted()
    assert not any(s.data.is_deleted() for s in xs.addressable_shards)
    assert not any(s.data.is_deleted() for s in ys.addressable_shards)
    assert in_use() == before
    np.testing.assert_array_equal(np.asarray(xs), floats(4 * 64))
    del view
    a, b = step(xs, ys)  # the view is gone: now it donates every shard
    assert xs.is_deleted() and ys.is_deleted()
    np.testing.assert_array_equal(np.asarray(a), floats(4 * 64) * 2)
    np.testing.assert_array_equal(np.asarray(b), floats(4 * 64) + 2)


def test_sharded_donation_by_keyword_and_argname(mesh):
    sharding = NamedSharding(mesh, P("x"))
    step = bt.jit(lambda a, *, scale: a * scale, donate_argnames="a")
    xs = bt.device_put(floats(4 * 64), sharding)
    view = np.asarray(xs.addressable_shards[2].data)
    with pytest.raises(bt.errors.DonationError):
        step(a=xs, scale=2.0)
    assert not any(s.data.is_deleted() for s in xs.addressable_shards)
    del view
    out = step(xs, scale=2.0)
    assert xs.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), floats(4 * 64) * 2)


def test_the_shards_are_the_cpp_sharded_arrays_blocks(mesh, monkeypatch):
    # The storage is a C++ baton::ShardedArray (_impl): its blocks and the
    # shards' arrays are one storage, so it is released (R1) with the last
    # reference, whichever holds it.
    from baton import _partitioned_call

    x = floats(4 * 16, 8)
    before = in_use()
    y = bt.device_put(x, NamedSharding(mesh, P("x")))
    impl = y._impl
    assert impl.shape == y.shape and impl.dtype == y.dtype
    assert impl.block_shape == (16, 8) and impl.dims == [[0], []]
    assert impl.axis_names == ["x"] and impl.axis_sizes == [N]
    assert impl.devices == bt.devices()
    blocks = impl.blocks
    for k, s in enumerate(y.addressable_shards):
        assert blocks[k] is s.data
        assert blocks[k].unsafe_buffer_pointer() == s.data.unsafe_buffer_pointer()
    np.testing.assert_array_equal(impl.copy_to_host(), x)
    with pytest.raises(ValueError, match="block of mesh position 3 is missing"):
        bt._baton.ShardedArray.from_blocks(
            y.shape, "float32", ["x"], [N], [[0], []], bt.devices(), blocks[:3]
        )

    # A call donating nothing goes through SpmdExecutable.run: the outputs'
    # shards are the blocks of the C++ sharded arrays it returned.
    def no_execute(*args):
        raise AssertionError("a call donating nothing went through execute")

    monkeypatch.setattr(_partitioned_call, "_execute_donating", no_execute)
    z, t = bt.jit(lambda a: (a * 2 + 1, a.sum(axis=0)))(y)
    assert z.sharding == y.sharding and t.is_fully_replicated
    for out in (z, t):
        for block, s in zip(out._impl.blocks, out.addressable_shards):
            assert block is s.data
            assert block.unsafe_buffer_pointer() == s.data.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.asarray(z), x * 2 + 1)
    np.testing.assert_array_equal(t._impl.copy_to_host(), x.sum(axis=0))

    del y, z, t, s, block, out
    assert in_use() != before  # `impl` and `blocks` still hold y's storage
    del blocks
    assert in_use() != before
    del impl
    assert in_use() == before
