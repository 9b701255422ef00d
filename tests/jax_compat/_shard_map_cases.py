"""shard_map programs run through JAX and baton on 4 CPU devices each
(started by test_shard_map_vs_jax.py with the device counts set); prints one
line "name ok" or "name FAIL: why" per case."""

import json
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding as JS
from jax.sharding import PartitionSpec as JP

import baton as bt
import baton.numpy as bnp
from baton.sharding import NamedSharding as BS
from baton.sharding import P as BP

X = np.random.default_rng(0).standard_normal((32, 6)).astype(np.float32)
SHIFT = [(i, (i + 1) % 4) for i in range(4)]


def J(spec):
    return JP(*spec)


def B(spec):
    return BP(*spec)


# name: (mesh shape, axis names, in spec, out spec, body(lax, np-module))
CASES = {
    "psum": ((4,), ("x",), ("x",), (), lambda L, m: lambda b: L.psum(b, "x")),
    "pmean": ((4,), ("x",), ("x",), (), lambda L, m: lambda b: L.pmean(b, "x")),
    "pmax": ((4,), ("x",), ("x",), (), lambda L, m: lambda b: L.pmax(b, "x")),
    "pmin": ((4,), ("x",), ("x",), (), lambda L, m: lambda b: L.pmin(b, "x")),
    "axis_size": (
        (4,),
        ("x",),
        ("x",),
        ("x",),
        lambda L, m: lambda b: b * L.axis_size("x") + L.axis_index("x"),
    ),
    "psum_of_sum": (
        (4,),
        ("x",),
        ("x",),
        (),
        lambda L, m: lambda b: L.psum(m.sum(b, axis=0), "x"),
    ),
    "all_gather": (
        (4,),
        ("x",),
        ("x",),
        (),
        lambda L, m: lambda b: L.all_gather(b, "x"),
    ),
    "all_gather_axis1": (
        (4,),
        ("x",),
        ("x",),
        (),
        lambda L, m: lambda b: L.all_gather(b, "x", axis=1),
    ),
    "all_gather_tiled": (
        (4,),
        ("x",),
        ("x",),
        (),
        lambda L, m: lambda b: L.all_gather(b, "x", tiled=True),
    ),
    "psum_scatter_tiled": (
        (4,),
        ("x",),
        ("x",),
        ("x",),
        lambda L, m: lambda b: L.psum_scatter(b, "x", tiled=True),
    ),
    "psum_scatter": (
        (4,),
        ("x",),
        ("x",),
        ("x",),
        lambda L, m: lambda b: L.psum_scatter(b[:4], "x"),
    ),
    "all_to_all_tiled": (
        (4,),
        ("x",),
        ("x",),
        ("x",),
        lambda L, m: lambda b: L.all_to_all(b, "x", 0, 0, tiled=True),
    ),
    "all_to_all": (
        (4,),
        ("x",),
        ("x",),
        ("x",),
        lambda L, m: lambda b: L.all_to_all(b[:4], "x", 0, 1),
    ),
    "ppermute": (
        (4,),
        ("x",),
        ("x",),
        ("x",),
        lambda L, m: lambda b: L.ppermute(b, "x", SHIFT),
    ),
    "pbroadcast": (
        (4,),
        ("x",),
        ("x",),
        ("x",),
        # JAX's CPU backend cannot lower pbroadcast: its documented
        # equivalent, psum(where(axis_index == source, x, 0)), stands for it.
        lambda L, m: (
            (lambda b: L.pbroadcast(b, "x", 2))
            if L is bt.lax
            else (lambda b: L.psum(m.where(L.axis_index("x") == 2, b, 0), "x"))
        ),
    ),
    "pshuffle": (
        (4,),
        ("x",),
        ("x",),
        ("x",),
        lambda L, m: lambda b: L.pshuffle(b, "x", [2, 0, 3, 1]),
    ),
    "pswapaxes": (
        (4,),
        ("x",),
        ("x",),
        ("x",),
        lambda L, m: lambda b: L.pswapaxes(b[:4], "x", 0),
    ),
    "axis_index": (
        (4,),
        ("x",),
        ("x",),
        ("x",),
        lambda L, m: lambda b: b * 0 + L.axis_index("x"),
    ),
    "mesh2d_psum_b": (
        (2, 2),
        ("a", "b"),
        (("a", "b"),),
        ("a",),
        lambda L, m: lambda b: L.psum(b, "b"),
    ),
    "mesh2d_psum_a": (
        (2, 2),
        ("a", "b"),
        ("a", "b"),
        (None, "b"),
        lambda L, m: lambda b: L.psum(b, "a"),
    ),
    "mesh2d_gather": (
        (2, 2),
        ("a", "b"),
        ("a", "b"),
        ("a",),
        lambda L, m: lambda b: L.all_gather(b, "b", axis=1, tiled=True),
    ),
}


def run_jax(shape, names, ins, outs, body):
    mesh = jax.make_mesh(shape, names)
    x = jax.device_put(X, JS(mesh, J(ins)))
    f = jax.shard_map(
        body(jax.lax, jnp),
        mesh=mesh,
        in_specs=J(ins),
        out_specs=J(outs),
        check_vma=False,
    )
    return np.asarray(f(x))


def run_baton(shape, names, ins, outs, body):
    mesh = bt.make_mesh(shape, names)
    x = bt.device_put(X, BS(mesh, B(ins)))
    f = bt.shard_map(
        body(bt.lax, bnp),
        mesh=mesh,
        in_specs=B(ins),
        out_specs=B(outs),
        check_vma=False,  # as JAX's above
    )
    return np.asarray(f(x))


def check(name, fn):
    try:
        fn()
        print(f"{name} ok")
    except Exception as e:  # reported per case
        print(f"{name} FAIL: {type(e).__name__}: {e}".replace("\n", " "))


def case(args):
    def go():
        j, b = run_jax(*args), run_baton(*args)
        assert j.shape == b.shape, (j.shape, b.shape)
        np.testing.assert_allclose(b, j, rtol=1e-6, atol=1e-6)

    return go


def placement():
    for spec in [("x",), (), (None, "x")]:
        jm, bm = jax.make_mesh((4,), ("x",)), bt.make_mesh((4,), ("x",))
        j = jax.device_put(X[:, :4], JS(jm, J(spec)))
        b = bt.device_put(X[:, :4], BS(bm, B(spec)))
        jidx = [s.index for s in j.addressable_shards]
        bidx = [s.index for s in b.addressable_shards]
        assert jidx == bidx, (spec, jidx, bidx)
        assert j.sharding.shard_shape(X[:, :4].shape) == b.sharding.shard_shape(
            X[:, :4].shape
        )


def trimmed(spec):
    parts = list(spec)
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


def elementwise_jit():
    jm, bm = jax.make_mesh((4,), ("x",)), bt.make_mesh((4,), ("x",))
    j = jax.jit(lambda a: jnp.tanh(a) * 2 + 1)(jax.device_put(X, JS(jm, JP("x"))))
    b = bt.jit(lambda a: bnp.tanh(a) * 2 + 1)(bt.device_put(X, BS(bm, BP("x"))))
    np.testing.assert_allclose(np.asarray(b), np.asarray(j), rtol=1e-6, atol=1e-6)
    assert trimmed(b.sharding.spec) == trimmed(j.sharding.spec), (
        b.sharding,
        j.sharding,
    )


def data_parallel_grad():
    w = np.random.default_rng(1).standard_normal((6, 3)).astype(np.float32)
    y = np.random.default_rng(2).standard_normal((32, 3)).astype(np.float32)

    def loss(m):
        return lambda w, x, y: m.mean((x @ w - y) ** 2)

    def step(lib, L, m):
        g = lib.grad(loss(m))
        return lambda w, x, y: L.pmean(g(w, x, y), "x")

    jm, bm = jax.make_mesh((4,), ("x",)), bt.make_mesh((4,), ("x",))
    # check_vma=False: with it, JAX's grad of a replicated input inside
    # shard_map already sums over the devices; baton never adds collectives
    # (as JAX's check_vma=False / check_rep=False), so the pmean is explicit.
    jg = jax.shard_map(
        step(jax, jax.lax, jnp),
        mesh=jm,
        in_specs=(JP(), JP("x"), JP("x")),
        out_specs=JP(),
        check_vma=False,
    )(w, jax.device_put(X, JS(jm, JP("x"))), jax.device_put(y, JS(jm, JP("x"))))
    bg = bt.shard_map(
        step(bt, bt.lax, bnp),
        mesh=bm,
        in_specs=(BP(), BP("x"), BP("x")),
        out_specs=BP(),
    )(w, X, y)
    np.testing.assert_allclose(np.asarray(bg), np.asarray(jg), rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    assert len(jax.devices()) == 4 and len(bt.devices()) == 4, "run with 4 devices"
    # BATON_API_COVERAGE_CASES=FILE: which public names each case reads
    # (_api_coverage.py), for the coverage report the parent test feeds.
    notes = os.environ.get("BATON_API_COVERAGE_CASES")
    if notes:
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
        import _api_coverage
        import namespace_coverage

        _api_coverage.install(namespace_coverage.PAIRS)
    checks = [(name, case(args)) for name, args in CASES.items()]
    checks += [
        ("placement", placement),
        ("elementwise_jit", elementwise_jit),
        ("data_parallel_grad", data_parallel_grad),
    ]
    for name, fn in checks:
        if notes:
            _api_coverage.set_current_test(name)
        check(name, fn)
    if notes:
        with open(notes, "w") as f:
            json.dump(_api_coverage.reads_by_test(), f)
    sys.stdout.flush()
