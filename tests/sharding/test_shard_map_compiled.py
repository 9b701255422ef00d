"""bt.shard_map's body compiled once for every device
(baton/_shard_map_compile.py, issue 37): the compiled program gives the
bytes the per-device threads give, calls the body only to trace it, keeps
each device's memory to its blocks, and bodies it cannot compile run on the
threads with the same results."""

import numpy as np
import pytest
from conftest import N, in_use

import baton as bt
import baton.numpy as bnp
from baton import _shard_map
from baton.sharding import NamedSharding, P

L = bt.lax
X = np.arange(N * 4 * 3, dtype=np.float32).reshape(N * 4, 3) / 7.0 - 2.0
W = {"w": np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2),
     "bias": np.array([0.5, -0.25], np.float32)}


def _block_loss(p, b):
    return ((b @ p["w"] + p["bias"]) ** 2).mean()


@pytest.fixture
def mesh():
    return bt.make_mesh((2, N // 2), ("a", "b"))


def run(mesh, fn, out_specs, compile_bodies, monkeypatch, spec=P(("a", "b"))):
    """fn shard_mapped over X, with bodies compiled or on threads: (each
    device's output blocks as numpy, whether it ran compiled)."""
    monkeypatch.setattr(_shard_map, "compile_bodies", compile_bodies)
    f = bt.shard_map(fn, mesh=mesh, in_specs=spec, out_specs=out_specs)
    out = f(X)
    blocks = [
        [np.asarray(s.data) for s in o.addressable_shards] for o in bt.tree.leaves(out)
    ]
    return blocks, _shard_map.compiled(f, X)


BODIES = {
    "psum over one axis, read after": (
        lambda b: b * 2 + L.psum(b * b, "b"),
        P(("a", "b")),
    ),
    "every reduction over both axes": (
        lambda b: (L.psum(b, ("a", "b")), L.pmean(b, "a"), L.pmax(b, "b"), L.pmin(b, ("b", "a"))),
        (P(), P("b"), P("a"), P()),
    ),
    "axis_index and a chain of collectives": (
        lambda b: L.pmax(L.psum(b.sum(0), "a") * L.axis_index("b"), "b") - L.axis_index("a"),
        P("a"),
    ),
    "integers and bfloat16": (
        lambda b: (L.psum((b * 10).astype(np.int32), "b"), L.psum(b.astype(bnp.bfloat16), "a")),
        (P("a"), P("b")),
    ),
    "all_gather tiled and stacked": (
        lambda b: (L.all_gather(b, "b", tiled=True), L.all_gather(b, ("a", "b"), axis=1)),
        (P(("a", "b")), P(("a", "b"))),
    ),
    "psum_scatter and all_to_all": (
        lambda b: (
            L.psum_scatter(b, "a", scatter_dimension=0, tiled=True),
            L.all_to_all(b, "b", 0, 1, tiled=True),
            L.psum_scatter(b[:2], "b"),
        ),
        (P(("a", "b")), P(("a", "b")), P(("a", "b"))),
    ),
    "ppermute and pbroadcast": (
        lambda b: (
            L.ppermute(b, ("a", "b"), [(0, 1), (1, 2), (3, 0)]),
            L.pbroadcast(b * 3, "b", 1),
        ),
        (P(("a", "b")), P(("a", "b"))),
    ),
    "a gathered value reduced and used again": (
        lambda b: L.psum(L.all_gather(b.sum(1), "a", tiled=True), "b") * L.axis_index("a")
        + b.mean(),
        P(("a", "b")),
    ),
    "pcast marks a value varying": (
        lambda b: L.pcast(bnp.ones(2), ("a", "b"), to="varying") * L.axis_index("b"),
        P(("a", "b")),
    ),
    "a data-parallel step's gradients, psummed as a tree": (
        lambda b: L.psum(bt.grad(_block_loss)(W, b), ("a", "b")),
        {"w": P(), "bias": P()},
    ),
}


@pytest.mark.parametrize("name", list(BODIES))
def test_compiled_bodies_equal_the_threads_bytewise(mesh, name, monkeypatch):
    fn, out_specs = BODIES[name]
    compiled, ran_compiled = run(mesh, fn, out_specs, True, monkeypatch)
    threads, ran_threads = run(mesh, fn, out_specs, False, monkeypatch)
    assert ran_compiled is True and not ran_threads
    for c_out, t_out in zip(compiled, threads):
        for c, t in zip(c_out, t_out):
            assert c.dtype == t.dtype and c.shape == t.shape
            assert c.tobytes() == t.tobytes(), name


def test_psum_of_distinct_blocks_is_their_sum_on_every_device(mesh):
    f = bt.shard_map(lambda b: L.psum(b, ("a", "b")), mesh=mesh, in_specs=P(("a", "b")), out_specs=P())
    out = f(X)
    assert _shard_map.compiled(f, X) is True
    want = sum(np.split(X, N))
    for s in out.addressable_shards:
        np.testing.assert_allclose(np.asarray(s.data), want, rtol=1e-6)
        assert s.data.device == s.device


def test_a_data_parallel_bodys_psums_are_one_all_reduce(mesh):
    # Each gradient psummed alone would be an exchange of its own (launches
    # and copies on every device); the small ones over the same axes are
    # packed into one (compiler/all_reduce_combiner.h), and each device
    # gets the sum of every block's gradient.
    f = bt.shard_map(
        lambda b: L.psum(bt.grad(_block_loss)(W, b), ("a", "b")),
        mesh=mesh, in_specs=P(("a", "b")), out_specs=P(),
    )
    out = f(X)
    assert _shard_map.compiled(f, X) is True
    (body,) = [
        v for k, v in f._baton_shard_map_checks.items()
        if isinstance(k, tuple) and k[0] == "compiled"
    ]
    assert body.exe.as_text().count("all-reduce") == 1, body.exe.as_text()
    want_w = np.zeros((3, 2), np.float64)
    want_b = np.zeros(2, np.float64)
    for blk in np.split(X.astype(np.float64), N):
        # d mean(r ** 2) / dr over the block's rows x 2 outputs
        err = 2 * (blk @ W["w"] + W["bias"]) / (blk.shape[0] * 2)
        want_w += blk.T @ err
        want_b += err.sum(0)
    for s in out["w"].addressable_shards:
        np.testing.assert_allclose(np.asarray(s.data), want_w, rtol=1e-5)
    for s in out["bias"].addressable_shards:
        np.testing.assert_allclose(np.asarray(s.data), want_b, rtol=1e-5)


def test_a_psum_over_axes_out_of_mesh_order_adds_in_group_order(mesh, monkeypatch):
    # psum over ('b', 'a') numbers the group 'b'-major, as JAX does: on the
    # 2 x 2 mesh it adds the blocks of devices (a, b) = (0, 0), (1, 0),
    # (0, 1), (1, 1). In float32, 1e8 + 1 - 1e8 + 0 is 0 in mesh order and
    # 1e8 - 1e8 + 1 + 0 = 1 in group order; compiled and threads agree.
    if N != 4:
        pytest.skip("the values are chosen for a 2 x 2 mesh")
    blocks = np.repeat(np.array([1e8, 1.0, -1e8, 0.0], np.float32), 4)
    for compile_bodies in (True, False):
        monkeypatch.setattr(_shard_map, "compile_bodies", compile_bodies)
        f = bt.shard_map(
            lambda b: L.psum(b, ("b", "a")), mesh=mesh, in_specs=P(("a", "b")),
            out_specs=P(),
        )
        out = f(blocks)
        assert bool(_shard_map.compiled(f, blocks)) is compile_bodies
        np.testing.assert_array_equal(np.asarray(out), np.ones(4, np.float32))


def test_a_jitted_function_calling_psum_is_inlined_into_the_compiled_body(mesh):
    # On the threads a collective inside a jitted function cannot run (it
    # would be traced with no devices to meet); compiled, the jitted
    # function is part of the body's trace.
    f = bt.shard_map(
        lambda b: bt.jit(lambda v: L.psum(v, "a") / 2)(b),
        mesh=mesh,
        in_specs=P(("a", "b")),
        out_specs=P("b"),
    )
    out = np.asarray(f(X))
    assert _shard_map.compiled(f, X) is True
    blocks = np.split(X, N)  # device (a, b) holds block a * (N // 2) + b
    half = N // 2
    want = np.concatenate([(blocks[b] + blocks[half + b]) / 2 for b in range(half)])
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_a_compiled_body_holds_only_its_blocks_and_outputs(mesh):
    # After a warm call, another leaves only its result on each device.
    x = bt.device_put(np.ones((N * 256,), np.float32), NamedSharding(mesh, P(("a", "b"))))
    bt.block_until_ready(x)
    f = bt.shard_map(
        lambda b: L.psum(b * 2, ("a", "b")), mesh=mesh, in_specs=P(("a", "b")), out_specs=P()
    )
    bt.block_until_ready(f(x))  # warm: compiled
    assert _shard_map.compiled(f, x) is True
    steady = in_use()
    out = bt.block_until_ready(f(x))
    assert [a - b for a, b in zip(in_use(), steady)] == [1024] * N  # the result only
    np.testing.assert_array_equal(np.asarray(out), np.full(256, 2 * N, np.float32))
    del out
    assert in_use() == steady


@pytest.mark.parametrize(
    "fn",
    [
        lambda b: L.psum(float(b.sum()) * b, "a"),  # reads a value on the host
        # A donation inside (a trace would ignore it).
        lambda b: bt.jit(lambda v: v * 2, donate_argnums=0)(L.psum(b, "a")),
    ],
    ids=["host read", "donation inside"],
)
def test_bodies_that_cannot_be_compiled_run_on_the_threads(mesh, fn, monkeypatch):
    f = bt.shard_map(fn, mesh=mesh, in_specs=P(("a", "b")), out_specs=P(("a", "b")), check_vma=False)
    got = [np.asarray(s.data) for s in f(X).addressable_shards]
    assert _shard_map.compiled(f, X) is False
    monkeypatch.setattr(_shard_map, "compile_bodies", False)
    g = bt.shard_map(fn, mesh=mesh, in_specs=P(("a", "b")), out_specs=P(("a", "b")), check_vma=False)
    want = [np.asarray(s.data) for s in g(X).addressable_shards]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_the_output_check_still_refuses_a_varying_output(mesh):
    f = bt.shard_map(lambda b: L.psum(b, "a"), mesh=mesh, in_specs=P(("a", "b")), out_specs=P())
    with pytest.raises(ValueError, match="varies over"):
        f(X)


@pytest.mark.parametrize(
    "fn, same_as",
    [
        # A ring of ppermutes in a fori_loop (2 devices along "b": a swap).
        (
            lambda b: L.fori_loop(0, 2, lambda k, c: L.ppermute(c, "b", [(0, 1), (1, 0)]) + c, b),
            lambda b: 2 * L.psum(b, "b"),
        ),
        # A collective in one branch of a cond.
        (
            lambda b: L.cond(b.sum() > 0, lambda v: L.psum(v, "a"), lambda v: v * 0, b),
            lambda b: bnp.where(b.sum() > 0, L.psum(b, "a"), b * 0),
        ),
        # A collective inside a vmap of the body.
        (
            lambda b: bt.vmap(lambda r: L.pmax(r, "a"))(b),
            lambda b: L.pmax(b, "a"),
        ),
    ],
    ids=["fori_loop", "cond", "vmap"],
)
def test_bodies_with_collectives_in_loops_conds_and_vmaps_run_as_one_program(
    mesh, fn, same_as
):
    # On the threads each device traced the loop / branch / vmap on its own
    # and the collectives exchanged values of those traces (an error); the
    # per-device compile refuses them too. They run as one partitioned
    # program instead: the body vmapped over the mesh axes
    # (baton/_shard_map_trace.py).
    f = bt.shard_map(fn, mesh=mesh, in_specs=P(("a", "b")), out_specs=P(("a", "b")))
    got = np.asarray(f(X))
    assert _shard_map.compiled(f, X) is True
    g = bt.shard_map(same_as, mesh=mesh, in_specs=P(("a", "b")), out_specs=P(("a", "b")))
    np.testing.assert_allclose(got, np.asarray(g(X)), rtol=1e-6)
    out = f(X)
    assert out.sharding == NamedSharding(mesh, P(("a", "b")))
