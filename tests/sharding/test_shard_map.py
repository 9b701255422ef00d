"""bt.shard_map and its collectives over 4 in-process devices (DESIGN 5.6,
issue 15 acceptance 2): every collective equals its numpy reference."""

import threading

import numpy as np
import pytest
from conftest import N, in_use

import baton as bt
from baton.sharding import NamedSharding, P

X = np.arange(N * 8 * 3, dtype=np.float32).reshape(N * 8, 3) - 40.0
BLOCKS = np.split(X, N)  # device i's block of X under P("x")


@pytest.fixture
def mesh():
    return bt.make_mesh((N,), ("x",))


X_SPEC = P("x")


def smap(mesh, fn, out=X_SPEC, spec=X_SPEC, check_vma=True):
    return np.asarray(
        bt.shard_map(fn, mesh=mesh, in_specs=spec, out_specs=out, check_vma=check_vma)(
            X
        )
    )


def test_psum_pmean_pmax_pmin(mesh):
    lax = bt.lax
    out = bt.shard_map(
        lambda b: (
            lax.psum(b, "x"),
            lax.pmean(b, "x"),
            lax.pmax(b, "x"),
            lax.pmin(b, "x"),
        ),
        mesh=mesh,
        in_specs=P("x"),
        out_specs=P(),
    )(X)
    s, m, hi, lo = (np.asarray(o) for o in out)
    np.testing.assert_array_equal(s, sum(BLOCKS))
    np.testing.assert_allclose(m, sum(BLOCKS) / N, rtol=1e-6)
    np.testing.assert_array_equal(hi, np.maximum.reduce(BLOCKS))
    np.testing.assert_array_equal(lo, np.minimum.reduce(BLOCKS))
    # every device holds its own, bitwise equal copy
    shards = [np.asarray(sh.data) for sh in out[0].addressable_shards]
    assert [sh.data.device for sh in out[0].addressable_shards] == bt.devices()
    for a in shards:
        assert a.tobytes() == shards[0].tobytes()


def test_psum_of_a_python_scalar_is_the_axis_size(mesh):
    out = bt.shard_map(
        lambda b: b * 0 + bt.lax.psum(1, "x"),
        mesh=mesh,
        in_specs=P("x"),
        out_specs=P("x"),
    )(X)
    np.testing.assert_array_equal(np.asarray(out), np.full_like(X, N))


def test_all_gather(mesh):
    # An all-gathered value counts as varying over the axis (as in JAX
    # 0.10.2's check_vma), so out_specs=P() needs check_vma=False.
    np.testing.assert_array_equal(
        smap(
            mesh,
            lambda b: bt.lax.all_gather(b, "x", tiled=True),
            out=P(),
            check_vma=False,
        ),
        X,
    )
    g = smap(mesh, lambda b: bt.lax.all_gather(b, "x"), out=P(), check_vma=False)
    np.testing.assert_array_equal(g, np.stack(BLOCKS))
    g1 = smap(
        mesh, lambda b: bt.lax.all_gather(b, "x", axis=1), out=P(), check_vma=False
    )
    np.testing.assert_array_equal(g1, np.stack(BLOCKS, axis=1))


def test_psum_scatter(mesh):
    total = sum(BLOCKS)  # (8, 3)
    t = smap(mesh, lambda b: bt.lax.psum_scatter(b, "x", tiled=True))
    np.testing.assert_array_equal(t, total)  # block i of the sum on device i
    u = smap(mesh, lambda b: bt.lax.psum_scatter(b[:N], "x"))
    np.testing.assert_array_equal(u, sum(b[:N] for b in BLOCKS).reshape(-1))


def test_all_to_all(mesh):
    t = smap(mesh, lambda b: bt.lax.all_to_all(b, "x", 0, 0, tiled=True))
    ref = np.concatenate(
        [
            np.concatenate([np.split(BLOCKS[j], N)[i] for j in range(N)])
            for i in range(N)
        ]
    )
    np.testing.assert_array_equal(t, ref)
    u = smap(mesh, lambda b: bt.lax.all_to_all(b[:N], "x", 0, 1))
    ref = np.concatenate(
        [np.stack([BLOCKS[j][i] for j in range(N)], axis=1) for i in range(N)]
    )
    np.testing.assert_array_equal(u, ref)


def test_ppermute_and_axis_index(mesh):
    shift = [(i, (i + 1) % N) for i in range(N)]
    r = smap(mesh, lambda b: bt.lax.ppermute(b, "x", shift))
    np.testing.assert_array_equal(r, np.concatenate(BLOCKS[-1:] + BLOCKS[:-1]))
    half = smap(mesh, lambda b: bt.lax.ppermute(b, "x", [(0, 1)]))
    ref = np.zeros_like(X)
    ref[8:16] = BLOCKS[0]
    np.testing.assert_array_equal(half, ref)
    idx = smap(mesh, lambda b: b[:1, :1] * 0 + bt.lax.axis_index("x"))
    np.testing.assert_array_equal(idx.ravel(), np.arange(N))
    sizes = smap(mesh, lambda b: b * 0 + bt.lax.axis_size("x"))
    np.testing.assert_array_equal(sizes, np.full_like(X, N))


def test_groups_of_a_two_dimensional_mesh():
    mesh = bt.make_mesh((2, 2), ("a", "b"))
    blocks = np.split(X, N)  # (a, b) holds block 2a + b under P(("a", "b"))
    r = smap(mesh, lambda b: bt.lax.psum(b, "b"), out=P("a"), spec=P(("a", "b")))
    np.testing.assert_array_equal(
        r, np.concatenate([blocks[0] + blocks[1], blocks[2] + blocks[3]])
    )
    c = smap(mesh, lambda b: bt.lax.psum(b, "a"), out=P("b"), spec=P(("a", "b")))
    np.testing.assert_array_equal(
        c, np.concatenate([blocks[0] + blocks[2], blocks[1] + blocks[3]])
    )
    both = smap(mesh, lambda b: bt.lax.psum(b, ("a", "b")), out=P(), spec=P(("a", "b")))
    np.testing.assert_array_equal(both, sum(blocks))
    ids = smap(
        mesh,
        lambda b: b[:1, :1] * 0 + bt.lax.axis_index(("a", "b")),
        out=P(("a", "b")),
        spec=P(("a", "b")),
    )
    np.testing.assert_array_equal(ids.ravel(), np.arange(N))


def test_pytrees_of_arguments_and_results(mesh):
    def f(tree_in, scale):
        return {"s": bt.lax.psum(tree_in["w"] * scale, "x"), "local": tree_in["b"] + 1}

    out = bt.shard_map(
        f,
        mesh=mesh,
        in_specs=({"w": P("x"), "b": P("x")}, P()),
        out_specs={"s": P(), "local": P("x")},
    )({"w": X, "b": X}, np.float32(2.0))
    np.testing.assert_array_equal(np.asarray(out["s"]), 2 * sum(BLOCKS))
    np.testing.assert_array_equal(np.asarray(out["local"]), X + 1)


def test_each_device_runs_on_its_own_thread_and_device(mesh):
    seen = []

    def f(b):
        seen.append((threading.get_ident(), b.device))
        return bt.lax.psum(b, "x")

    smap(mesh, f, out=P())
    assert sorted(d.id for _, d in seen) == list(range(N))
    assert len({t for t, _ in seen}) == N


def test_a_placed_argument_is_used_without_a_copy(mesh):
    y = bt.device_put(X, NamedSharding(mesh, P("x")))
    ids = [s.data._id for s in y.addressable_shards]
    got = []
    bt.shard_map(
        lambda b: got.append(b._id) or b, mesh=mesh, in_specs=P("x"), out_specs=P("x")
    )(y)
    assert sorted(got) == sorted(ids)


def test_psum_costs_each_device_its_inputs_and_one_result(mesh):
    y = bt.device_put(np.ones((N * 256,), np.float32), NamedSharding(mesh, P("x")))
    bt.block_until_ready(y)
    f = bt.shard_map(
        lambda b: bt.lax.psum(b, "x"), mesh=mesh, in_specs=P("x"), out_specs=P()
    )
    bt.block_until_ready(f(y))  # warm
    steady = in_use()
    out = bt.block_until_ready(f(y))
    assert [a - b for a, b in zip(in_use(), steady)] == [1024] * N  # the result only
    np.testing.assert_array_equal(np.asarray(out), np.full(256, N, np.float32))


def test_a_donated_update_inside_the_body_is_in_place(mesh):
    sharding = NamedSharding(mesh, P())
    update = bt.jit(lambda p, g: p - 0.5 * g, donate_argnums=0)

    def step(p, x):
        return update(p, bt.lax.pmean(x, "x"))

    params = bt.device_put(np.ones((64, 4), np.float32), sharding)
    f = bt.shard_map(step, mesh=mesh, in_specs=(P(), P("x")), out_specs=P())
    data = bt.device_put(np.ones((N * 64, 4), np.float32), NamedSharding(mesh, P("x")))
    params = f(params, data)  # warm
    before = [s.data._id for s in params.addressable_shards]
    new = f(params, data)
    assert [s.data._id for s in new.addressable_shards] != before  # new handles ...
    assert params.is_deleted()  # ... over the donated storage of every shard
    np.testing.assert_array_equal(np.asarray(new), np.zeros((64, 4), np.float32))


def test_jit_of_shard_map_runs_it(mesh):
    f = bt.jit(
        bt.shard_map(
            lambda b: bt.lax.psum(b, "x"), mesh=mesh, in_specs=P("x"), out_specs=P()
        )
    )
    np.testing.assert_array_equal(np.asarray(f(X)), sum(BLOCKS))


def test_with_mesh_is_the_default(mesh):
    with mesh:
        out = bt.shard_map(
            lambda b: bt.lax.psum(b, "x"), in_specs=P("x"), out_specs=P()
        )(X)
    np.testing.assert_array_equal(np.asarray(out), sum(BLOCKS))


def test_the_jax_import_path(mesh):
    from baton.experimental.shard_map import shard_map

    out = shard_map(lambda b: bt.lax.psum(b, "x"), mesh, P("x"), P())(X)
    np.testing.assert_array_equal(np.asarray(out), sum(BLOCKS))


def test_an_error_on_one_device_is_raised_and_stops_the_others(mesh):
    def f(b):
        if int(bt.lax.axis_index("x")) == 2:
            raise KeyError("device 2 failed")
        return bt.lax.psum(b, "x")

    with pytest.raises(KeyError, match="device 2 failed"):
        smap(mesh, f, out=P())


def test_a_device_that_skips_a_collective_is_named(mesh):
    def f(b):
        if int(bt.lax.axis_index("x")) == 1:
            return b
        return bt.lax.psum(b, "x")

    with pytest.raises(RuntimeError, match="without taking part"):
        smap(mesh, f, out=P("x"))


def test_collective_errors(mesh):
    with pytest.raises(ValueError, match=r"outside bt\.shard_map"):
        bt.lax.psum(bt.device_put(X), "x")
    with pytest.raises(ValueError, match="not an axis"):
        smap(mesh, lambda b: bt.lax.psum(b, "y"))
    with pytest.raises(ValueError, match="different arrays"):
        smap(mesh, lambda b: bt.lax.psum(b[: int(bt.lax.axis_index("x")) + 1], "x"))
    with pytest.raises(ValueError, match="divisible"):
        smap(mesh, lambda b: bt.lax.psum_scatter(b[:3], "x", tiled=True))
    with pytest.raises(ValueError, match="repeats"):
        smap(mesh, lambda b: bt.lax.ppermute(b, "x", [(0, 1), (0, 2)]))
    with pytest.raises(ValueError, match="different shapes"):
        smap(mesh, lambda b: b[: int(bt.lax.axis_index("x")) + 1])
    with pytest.raises(ValueError, match="in_specs"):
        bt.shard_map(lambda a, b: a, mesh=mesh, in_specs=(P("x"),), out_specs=P())(X, X)
    # Inside bt.jit it was NotImplementedError; now a vmap over the mesh
    # axes (test_shard_map_traced.py).
    out = bt.jit(
        lambda a: bt.shard_map(
            lambda b: b, mesh=mesh, in_specs=P("x"), out_specs=P("x")
        )(a)
    )(X)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(X))


def test_devices_calling_different_collectives_is_an_error(mesh):
    # Issue 36: device 0 calling psum while the others call pmax was not
    # noticed (the group mixed the two).
    xs = bt.device_put(np.ones((N, 3), np.float32), NamedSharding(mesh, P("x")))

    def body(b):
        if int(bt.lax.axis_index("x")) == 0:
            return bt.lax.psum(b, "x")
        return bt.lax.pmax(b, "x")

    f = bt.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P())
    with pytest.raises(ValueError, match="called different collectives"):
        np.asarray(f(xs))
    g = bt.shard_map(
        lambda b: bt.lax.psum(b, "x"), mesh=mesh, in_specs=P("x"), out_specs=P()
    )
    np.testing.assert_array_equal(np.asarray(g(xs)), np.full((1, 3), float(N)))
