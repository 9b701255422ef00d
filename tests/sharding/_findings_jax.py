"""JAX's side of test_sharding_findings.py: runs each case on 4 CPU devices
(a subprocess of its own, since JAX reads its device count at start-up) and
prints one JSON object {case: {"value": [...], "spec": [...]} or {"error":
exception type name}}."""

import json
import os

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

X = np.arange(8.0, dtype=np.float32)
X2 = np.arange(16.0, dtype=np.float32).reshape(4, 4)
Y = np.arange(2.0, dtype=np.float32)
SPEC_I = P("i")
L = jax.lax


def auto(shape=(4,), names=("i",)):
    return jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape))


def explicit(shape=(4,), names=("i",)):
    return jax.make_mesh(shape, names, axis_types=(AxisType.Explicit,) * len(shape))


def smap(f, out, ins=SPEC_I, x=X, **kw):
    return jax.shard_map(f, mesh=auto(), in_specs=ins, out_specs=out, **kw)(x)


def smap2(f, out, **kw):
    mesh = auto((2, 2), ("i", "j"))
    return jax.shard_map(f, mesh=mesh, in_specs=P("i", "j"), out_specs=out, **kw)(X2)


def spec_of(a):
    parts = list(a.sharding.spec)
    while parts and parts[-1] is None:
        parts.pop()
    return [list(p) if isinstance(p, tuple) else p for p in parts]


def under(mesh, fn):
    with jax.set_mesh(mesh):
        return fn()


CASES = {
    # 1: the out_specs check
    "identity_P()": lambda: smap(lambda b: b, P()),
    "identity_P()_unchecked": lambda: smap(lambda b: b, P(), check_vma=False),
    "psum_P()": lambda: smap(lambda b: L.psum(b, "i"), P()),
    "pmean_P()": lambda: smap(lambda b: L.pmean(b, "i"), P()),
    "pmax_P()": lambda: smap(lambda b: L.pmax(b, "i"), P()),
    "const_P()": lambda: smap(lambda b: jnp.ones(3), P()),
    "psum_scalar_P()": lambda: smap(lambda b: L.psum(1.0, "i"), P()),
    "replicated_in_P()": lambda: smap(lambda b: b * 2, P(), ins=P()),
    "all_gather_P()": lambda: smap(lambda b: L.all_gather(b, "i"), P()),
    "axis_index_P()": lambda: smap(lambda b: L.axis_index("i"), P()),
    "ppermute_P()": lambda: smap(
        lambda b: L.ppermute(L.psum(b, "i"), "i", [(k, (k + 1) % 4) for k in range(4)]),
        P(),
    ),
    "pytree_bad_leaf": lambda: smap(
        lambda b: {"a": b, "s": L.psum(b, "i")}, {"a": P(), "s": P()}
    ),
    "pytree_ok": lambda: smap(
        lambda b: {"a": b, "s": L.psum(b, "i")}, {"a": P("i"), "s": P()}
    )["a"],
    "jit_inside_bad": lambda: smap(lambda b: jax.jit(lambda c: c * 2)(b), P()),
    "jit_inside_ok": lambda: smap(
        lambda b: jax.jit(lambda c: c * 2)(L.psum(b, "i")), P()
    ),
    "2d_psum_i_keep_j": lambda: smap2(lambda b: L.psum(b, "i"), P(None, "j")),
    "2d_psum_i_P()": lambda: smap2(lambda b: L.psum(b, "i"), P()),
    "2d_psum_ij_P()": lambda: smap2(lambda b: L.psum(b, ("i", "j")), P()),
    "2d_all_to_all_P(None,j)": lambda: smap2(
        lambda b: L.all_to_all(L.psum(b, "i"), "i", 0, 0, tiled=True), P(None, "j")
    ),
    "pcast_varying_P()": lambda: smap(
        lambda b: L.pcast(jnp.ones(2), "i", to="varying"), P()
    ),
    "pcast_varying_P(i)": lambda: smap(
        lambda b: L.pcast(jnp.ones(2), "i", to="varying"), P("i")
    ),
    "fori_dep": lambda: smap(
        lambda b: L.fori_loop(
            0, 3, lambda i, c: c + b, L.pcast(jnp.zeros(2), "i", to="varying")
        ),
        P(),
    ),
    "fori_inv": lambda: smap(
        lambda b: L.fori_loop(0, 3, lambda i, c: c + 1, L.psum(b, "i")), P()
    ),
    "scan_dep": lambda: smap(
        lambda b: L.scan(
            lambda c, e: (c + e, c), L.pcast(jnp.zeros(()), "i", to="varying"), b
        )[0],
        P(),
    ),
    "scan_inv": lambda: smap(
        lambda b: L.scan(lambda c, e: (c + e, c), 0.0, L.psum(b, "i"))[0], P()
    ),
    "cond_pred_dep": lambda: smap(
        lambda b: L.cond(b[0] > 100, lambda: jnp.ones(2), lambda: jnp.zeros(2)), P()
    ),
    "vmap_inv": lambda: smap(lambda b: L.psum(jax.vmap(lambda e: e * 2)(b), "i"), P()),
    # 2: specs and placement
    "device_put_P_no_mesh": lambda: jax.device_put(X, P("i")),
    "device_put_P_mesh": lambda: under(auto(), lambda: jax.device_put(X, P("i"))),
    "in_specs_omitted_auto": lambda: jax.shard_map(
        lambda b: b, mesh=auto(), out_specs=P("i")
    )(X),
    "in_specs_omitted_explicit": lambda: under(
        explicit(),
        lambda: jax.shard_map(lambda b: b * 2, out_specs=P("i"))(
            jax.device_put(X, P("i"))
        ),
    ),
    "in_specs_mismatch_explicit": lambda: under(
        explicit(),
        lambda: jax.shard_map(lambda b: b * 2, in_specs=P(), out_specs=P("i"))(
            jax.device_put(X, P("i"))
        ),
    ),
    "in_specs_None": lambda: smap(lambda b: b, P(), ins=None),
    "static_int": lambda: jax.shard_map(
        lambda b, n: b * n, mesh=auto(), in_specs=(P("i"), None), out_specs=P("i")
    )(X, 3),
    "static_array": lambda: jax.shard_map(
        lambda b, c: b + c, mesh=auto(), in_specs=(P("i"), None), out_specs=P("i")
    )(X, jnp.ones(2)),
    "out_None_leaf": lambda: smap(lambda b: (b, None), (P("i"), None))[0],
    "out_None_for_array": lambda: smap(lambda b: b, None),
    "closed_over_P()": lambda: smap(lambda b: jnp.asarray(Y), P()),
    "closed_over_P(i)": lambda: smap(lambda b: jnp.asarray(Y), P("i")),
    "created_in_body": lambda: smap(lambda b: b + jnp.ones(2) * jnp.arange(2.0), P("i")),
    "created_in_body_2d": lambda: smap2(lambda b: b @ jnp.eye(2) + jnp.zeros((2, 2)), P("i", "j")),
    "dot_out_sharding": lambda: under(
        explicit(),
        lambda: jnp.dot(
            jax.device_put(X2, P("i")), jnp.asarray(X2[:, :2]), out_sharding=P("i")
        ),
    ),
    "dot_out_sharding_auto_axis": lambda: under(
        auto(),
        lambda: jnp.dot(
            jax.device_put(X2, P("i")), jnp.asarray(X2[:, :2]), out_sharding=P("i")
        ),
    ),
    "dot_contract_out_sharding_P()": lambda: under(
        explicit(),
        lambda: jnp.dot(
            jax.device_put(X, P("i")), jax.device_put(X, P("i")), out_sharding=P()
        ),
    ),
    # 3: the newer API
    "typeof_auto": lambda: under(
        auto(), lambda: list(jax.typeof(jax.device_put(X, P("i"))).sharding.spec)
    ),
    "typeof_explicit": lambda: under(
        explicit(), lambda: list(jax.typeof(jax.device_put(X, P("i"))).sharding.spec)
    ),
    "reshard_P()": lambda: under(
        explicit(), lambda: jax.sharding.reshard(jax.device_put(X, P("i")), P())
    ),
    "wsc_auto": lambda: under(
        auto(),
        lambda: L.with_sharding_constraint(jax.device_put(X, P("i")), P()),
    ),
    "wsc_named_no_mesh": lambda: L.with_sharding_constraint(
        X, NamedSharding(auto(), P("i"))
    ),
    "wsc_explicit_mismatch": lambda: under(
        explicit(),
        lambda: L.with_sharding_constraint(jax.device_put(X, P("i")), P()),
    ),
    "explicit_axes": lambda: under(
        auto(),
        lambda: jax.sharding.explicit_axes(lambda a: a * 2, in_sharding=P("i"))(X),
    ),
    "auto_axes": lambda: under(
        explicit(),
        lambda: jax.sharding.auto_axes(lambda a: a * 2, out_sharding=P("i"))(
            jax.device_put(X, P("i"))
        ),
    ),
    "axis_types": lambda: (
        [str(t) for t in explicit().axis_types]
        + [str(t) for t in auto().axis_types]
        + [str(t) for t in AxisType]
    ),
}


def encode(v):
    if isinstance(v, list):
        return {"value": v}
    out = {"value": np.asarray(v).tolist(), "shape": list(np.shape(v))}
    if hasattr(v, "sharding") and hasattr(v.sharding, "spec"):
        out["spec"] = spec_of(v)
    return out


if __name__ == "__main__":
    assert len(jax.devices()) == 4
    results = {}
    for name, fn in CASES.items():
        try:
            results[name] = encode(fn())
        except Exception as e:
            results[name] = {"error": type(e).__name__}
    print(json.dumps(results))
