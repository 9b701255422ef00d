"""shard_map inside jit, grad and vmap on 8 CPU devices, written for JAX:
the neural-network examples of JAX's "Introduction to shard_map" page
(data parallelism with a pmean'd loss, fully sharded data parallelism with
all_gather'd parameters, tensor parallelism with psum_scatter, both on a
2-D mesh), each as a jitted gradient step, its collective matmul (a
ppermute in a fori_loop), vmap with axis_name collectives, and
collectives inside a grad, jvp, vjp, jacobian, checkpoint or while_loop of
a body.
test_shard_map_traced.py runs this file twice, as it is with
JAX (``python _shard_map_traced_cases.py``) and unchanged on baton
(``python -m baton.as_jax _shard_map_traced_cases.py``), and compares what
each prints: one JSON object {case: {"value": nested list, "spec": [...]}}
or {case: {"error": exception type name}}. baton's run needs
BATON_NUM_CPU_DEVICES=8 in its environment.
"""

import json
import os
from functools import partial

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

try:
    from jax import shard_map  # noqa: E402
except ImportError:  # older JAX
    from jax.experimental.shard_map import shard_map  # noqa: E402

# Automatic axes, as the page's meshes were (JAX's make_mesh now makes
# Explicit ones, which refuse an argument not already placed as in_specs).
mesh = jax.make_mesh((8,), ("batch",), axis_types=(AxisType.Auto,))
mesh2 = jax.make_mesh((4, 2), ("batch", "feats"), axis_types=(AxisType.Auto,) * 2)
mesh4 = jax.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,), devices=jax.devices()[:4])


def ints(*shape, seed=0, scale=0.25):
    """Small multiples of 1/4: products and sums stay exact enough."""
    n = int(np.prod(shape))
    return (((np.arange(n) * 37 + seed * 11) % 7 - 3) * scale).astype(
        np.float32
    ).reshape(shape)


def init_layer(n_in, n_out, seed):
    return ints(n_in, n_out, seed=seed, scale=0.125), ints(n_out, seed=seed + 1)


def init(layer_sizes):
    return [
        init_layer(m, n, 2 * k) for k, (m, n) in enumerate(zip(layer_sizes[:-1], layer_sizes[1:]))
    ]


LAYERS = [8, 16, 16, 8]
PARAMS = init(LAYERS)
INPUTS = ints(32, 8, seed=9)
TARGETS = ints(32, 8, seed=10)


def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jax.nn.relu(outputs)
    return outputs


def loss(params, batch):
    inputs, targets = batch
    predictions = predict(params, inputs)
    return jnp.mean(jnp.sum((predictions - targets) ** 2, axis=-1))


# Data parallelism: parameters replicated, the batch split, the loss pmean'd.
@partial(shard_map, mesh=mesh, in_specs=(P(), P("batch", None)), out_specs=P())
def loss_dp(params, batch):
    inputs, targets = batch
    predictions = predict(params, inputs)
    local_loss = jnp.mean(jnp.sum((predictions - targets) ** 2, axis=-1))
    return jax.lax.pmean(local_loss, "batch")


def dp_grad():
    batch = jax.device_put((INPUTS, TARGETS), NamedSharding(mesh, P("batch")))
    return jax.jit(jax.grad(loss_dp))(PARAMS, batch)


def dp_value_and_grad_equals_loss():
    batch = (INPUTS, TARGETS)
    v, g = jax.jit(jax.value_and_grad(loss_dp))(PARAMS, batch)
    v0, g0 = jax.value_and_grad(loss)(PARAMS, batch)
    return {"loss": v, "loss_whole": v0, "grad_w0": g[0][0], "grad_w0_whole": g0[0][0]}


# Fully sharded data parallelism: each parameter split over the batch axis
# too, all_gather'd where used.
def predict_fsdp(params_frag, inputs):
    for W_frag, b_frag in params_frag:
        W = jax.lax.all_gather(W_frag, "batch", tiled=True)
        b = jax.lax.all_gather(b_frag, "batch", tiled=True)
        outputs = jnp.dot(inputs, W) + b
        inputs = jax.nn.relu(outputs)
    return outputs


@partial(shard_map, mesh=mesh, in_specs=(P("batch"), P("batch")), out_specs=P())
def loss_fsdp(local_params, local_batch):
    inputs, targets = local_batch
    predictions = predict_fsdp(local_params, inputs)
    local_loss = jnp.mean(jnp.sum((predictions - targets) ** 2, axis=-1))
    return jax.lax.pmean(local_loss, "batch")


def fsdp_grad():
    params = jax.device_put(PARAMS, NamedSharding(mesh, P("batch")))
    batch = jax.device_put((INPUTS, TARGETS), NamedSharding(mesh, P("batch")))
    return jax.jit(jax.grad(loss_fsdp))(params, batch)


# Tensor parallelism: the features split, a psum_scatter after each matmul.
@partial(
    shard_map,
    mesh=mesh,
    in_specs=(P(None, "batch"), P("batch", None), P("batch")),
    out_specs=P(None, "batch"),
)
def gemm_tp(inputs, W, b):
    block_result = jnp.dot(inputs, W)
    return jax.lax.psum_scatter(block_result, "batch", scatter_dimension=1, tiled=True) + b


def predict_tp(params, inputs):
    for W, b in params:
        outputs = gemm_tp(inputs, W, b)
        inputs = jax.nn.relu(outputs)
    return outputs


def tp_predict():
    return jax.jit(predict_tp)(PARAMS, INPUTS)


def tp_grad():
    def loss_tp(params, batch):
        inputs, targets = batch
        predictions = predict_tp(params, inputs)
        return jnp.mean(jnp.sum((predictions - targets) ** 2, axis=-1))

    return jax.jit(jax.grad(loss_tp))(PARAMS, (INPUTS, TARGETS))


# FSDP and TP together on a 2-D mesh.
@partial(
    shard_map,
    mesh=mesh2,
    in_specs=(P(("batch", "feats")), P("batch", None)),
    out_specs=P(),
)
def loss_fsdp_tp(local_params, local_batch):
    inputs, targets = local_batch
    for W_frag, b_frag in local_params:
        W = jax.lax.all_gather(W_frag, ("batch", "feats"), tiled=True)
        b = jax.lax.all_gather(b_frag, ("batch", "feats"), tiled=True)
        inputs = jax.nn.relu(jnp.dot(inputs, W) + b)
    local_loss = jnp.mean(jnp.sum((inputs - targets) ** 2, axis=-1))
    return jax.lax.pmean(local_loss, ("batch", "feats"))


def fsdp_2d_grad():
    params = jax.device_put(PARAMS, NamedSharding(mesh2, P(("batch", "feats"))))
    return jax.jit(jax.grad(loss_fsdp_tp))(params, (INPUTS, TARGETS))


def rows_times_index():
    f = shard_map(
        lambda x: x * (jax.lax.axis_index("batch") + 1),
        mesh=mesh,
        in_specs=P("batch"),
        out_specs=P("batch"),
    )
    return jax.jit(lambda x: f(x) + 1)(INPUTS)


def ppermute_ring():
    f = shard_map(
        lambda x: jax.lax.ppermute(x, "batch", [(i, (i + 1) % 8) for i in range(8)]),
        mesh=mesh,
        in_specs=P("batch"),
        out_specs=P("batch"),
    )
    return jax.jit(lambda x: f(x) * 2)(INPUTS)


def all_to_all_swap():
    f = shard_map(
        lambda x: jax.lax.all_to_all(x, "batch", 1, 0, tiled=True),
        mesh=mesh,
        in_specs=P("batch", None),
        out_specs=P(None, "batch"),
    )
    return jax.jit(f)(ints(8, 16, seed=3))


# The page's collective matmul: the lhs all-gathered piece by piece around
# a ring (ppermute in a fori_loop) while each piece is multiplied.
@partial(
    shard_map,
    mesh=mesh4,
    in_specs=(P("i", None), P(None, "i")),
    out_specs=P("i", None),
)
def collective_matmul_allgather_lhs_contracting(lhs_block, rhs_block):
    axis_size = jax.lax.psum(1, "i")
    axis_index = jax.lax.axis_index("i")
    chunk_size = lhs_block.shape[1]
    assert rhs_block.shape[0] % chunk_size == 0

    def f(i, carrys):
        accum, lhs_block = carrys
        rhs_chunk = jax.lax.dynamic_slice_in_dim(
            rhs_block, (axis_index + i) % axis_size * chunk_size, chunk_size
        )
        accum = accum + lhs_block @ rhs_chunk
        lhs_block = jax.lax.ppermute(
            lhs_block, "i", [(j, (j - 1) % axis_size) for j in range(axis_size)]
        )
        return accum, lhs_block

    accum = jnp.zeros((lhs_block.shape[0], rhs_block.shape[1]), dtype=lhs_block.dtype)
    accum = jax.lax.pcast(accum, "i", to="varying")
    accum, lhs_block = jax.lax.fori_loop(0, axis_size - 1, f, (accum, lhs_block))
    rhs_chunk = jax.lax.dynamic_slice_in_dim(
        rhs_block, (axis_index + axis_size - 1) % axis_size * chunk_size, chunk_size
    )
    return accum + lhs_block @ rhs_chunk


def collective_matmul():
    lhs = jax.device_put(ints(8, 16, seed=11), NamedSharding(mesh4, P("i", None)))
    rhs = jax.device_put(ints(16, 8, seed=12), NamedSharding(mesh4, P(None, "i")))
    return jax.jit(collective_matmul_allgather_lhs_contracting)(lhs, rhs)


def collective_matmul_in_a_jitted_step():
    lhs = jax.device_put(ints(8, 16, seed=11), NamedSharding(mesh4, P("i", None)))
    rhs = jax.device_put(ints(16, 8, seed=12), NamedSharding(mesh4, P(None, "i")))
    return jax.jit(lambda a, b: collective_matmul_allgather_lhs_contracting(a, b) * 2)(
        lhs, rhs
    )


def vmap_collectives_in_loops_and_conds():
    ring = [(k, (k + 1) % 4) for k in range(4)]

    def body(v):
        c = jax.lax.fori_loop(0, 3, lambda k, c: jax.lax.ppermute(c, "i", ring) + c, v)
        d = jax.lax.cond(v.sum() > 10, lambda a: jax.lax.psum(a, "i"), lambda a: a * 2, v)
        s, ys = jax.lax.scan(lambda c, x: (c + jax.lax.pmax(x, "i"), c), 0.0, v)
        return c, d, s, ys

    return jax.vmap(body, axis_name="i")(ints(4, 3, seed=13))


def vmap_of_shard_map():
    f = shard_map(
        lambda x: x / jax.lax.psum(x.sum(), "batch"),
        mesh=mesh,
        in_specs=P("batch"),
        out_specs=P("batch"),
    )
    return jax.jit(jax.vmap(f))(ints(3, 16, seed=4) + 2.0)


def pmap_in_jit_and_grad():
    x = ints(8, 3, seed=14) + 2.0
    f = jax.pmap(lambda v: v / jax.lax.psum(v.sum(), "i") + jax.lax.axis_index("i"), axis_name="i")
    g = jax.grad(lambda a: jax.pmap(lambda v: jax.lax.psum((v ** 2).sum(), "i"), axis_name="i")(a).sum())
    return {"jit": jax.jit(lambda a: f(a) * 2)(x), "grad": g(x)}


def vmap_axis_name_psum():
    return jax.vmap(lambda x: x / jax.lax.psum(x, "i"), axis_name="i")(ints(4, 3, seed=5) + 2.0)


def vmap_axis_name_gather_and_index():
    return jax.vmap(
        lambda x: jax.lax.all_gather(x, "i") * jax.lax.axis_index("i"), axis_name="i"
    )(ints(4, 3, seed=6))


def vmap_nested_axis_names():
    return jax.vmap(
        jax.vmap(lambda x: jax.lax.psum(x, ("i", "j")) - jax.lax.pmax(x, "i"), axis_name="j"),
        axis_name="i",
    )(ints(3, 4, 2, seed=7))


def grad_through_vmap_psum():
    f = jax.vmap(lambda w: w * jax.lax.psum(w * w, "i"), axis_name="i")
    return jax.grad(lambda w: f(w).sum())(ints(4, 3, seed=8))


def grad_inside_dp_body():
    # Each device's gradient of the pmean'd loss: parameters invariant, so
    # their cotangents are summed over the batch axis (JAX's check_vma).
    @partial(shard_map, mesh=mesh, in_specs=(P(), P("batch")), out_specs=(P(), P()))
    def step(params, local_batch):
        def local(p):
            inputs, targets = local_batch
            l = jnp.mean(jnp.sum((predict(p, inputs) - targets) ** 2, axis=-1))
            return jax.lax.pmean(l, "batch")
        return jax.value_and_grad(local)(params)
    batch = jax.device_put((INPUTS, TARGETS), NamedSharding(mesh, P("batch")))
    v, g = jax.jit(step)(PARAMS, batch)
    v0, g0 = jax.value_and_grad(loss)(PARAMS, (INPUTS, TARGETS))
    return {"loss": v, "loss_whole": v0, "grad": g, "grad_whole": g0}


def grad_inside_body_varying():
    f = shard_map(
        lambda z: jax.grad(lambda y: (y * jax.lax.psum(y, "i")).sum())(z),
        mesh=mesh4, in_specs=P("i"), out_specs=P("i"),
    )
    return jax.jit(f)(ints(8, 3, seed=15))


def grad_inside_body_top_level():
    f = shard_map(
        lambda z: jax.grad(lambda y: jax.lax.psum((y * y).sum(), "i"))(z) + jax.lax.axis_index("i"),
        mesh=mesh4, in_specs=P("i"), out_specs=P("i"),
    )
    return f(ints(8, 3, seed=16))


def grad_inside_body_2d_outer_axis():
    f = shard_map(
        lambda z, w: jax.grad(lambda v: jax.lax.psum(jnp.sum(jnp.tanh(z * v)), "batch"))(w),
        mesh=mesh2, in_specs=(P("batch", "feats"), P(None, "feats")), out_specs=P(None, "feats"),
    )
    return jax.jit(f)(ints(8, 4, seed=17), ints(1, 4, seed=18))


def grad_inside_body_check_vma_false():
    # Without check_vma, psum transposes to psum (as under vmap): the
    # replicated parameter's gradient is each device's own.
    x, w = ints(8, seed=24), jnp.float32(1.5)
    f = shard_map(
        lambda w, y: jax.grad(lambda v: jax.lax.pmean((y * v).sum(), "i"))(w)[None],
        mesh=mesh4, in_specs=(P(), P("i")), out_specs=P("i"), check_vma=False,
    )
    g = shard_map(
        lambda y: jax.grad(lambda v: jax.lax.psum((y * v).sum(), "i"))(y),
        mesh=mesh4, in_specs=P("i"), out_specs=P("i"), check_vma=False,
    )
    return {"pmean": jax.jit(f)(w, x), "psum": jax.jit(g)(x)}


def jvp_inside_body():
    def body(z):
        v, t = jax.jvp(lambda y: y / jax.lax.psum(y.sum(), "i"), (z,), (jnp.ones_like(z),))
        return v, t
    f = shard_map(body, mesh=mesh4, in_specs=P("i"), out_specs=(P("i"), P("i")))
    return jax.jit(f)(ints(8, 3, seed=19) + 2.0)


def vmap_axis_name_grad_and_jvp():
    x = ints(4, 3, seed=20)
    g = jax.vmap(jax.grad(lambda y: jax.lax.psum((y * y).sum(), "i")), axis_name="i")(x)
    m = jax.vmap(jax.grad(lambda y: jax.lax.pmean(jnp.sin(y).sum(), "i")), axis_name="i")(x)
    w = jax.vmap(jax.grad(lambda y, c: jax.lax.psum((y * c).sum(), "i")), in_axes=(0, None), axis_name="i")(x, x[0])
    j = jax.vmap(lambda y: jax.jvp(lambda z: jax.lax.psum(z * z, "i"), (y,), (y,)), axis_name="i")(x)
    return {"psum": g, "pmean": m, "unbatched": w, "jvp": j}


def vmap_axis_name_closures_loops_checkpoint():
    x, c = ints(4, 3, seed=25), ints(3, seed=26)

    def body(y):
        g = jax.grad(lambda v: jax.lax.psum(jnp.sin(v * y).sum(), "i"))(c)
        h = jax.checkpoint(lambda v: jax.lax.pmax(v * y, "i"))(c)
        k = jax.lax.while_loop(
            lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] + jax.lax.pmean(s[1] * y, "i")), (0, y)
        )[1]
        return g, h, k

    return jax.vmap(body, axis_name="i")(x)


def vjp_jacobians_inside_body():
    x = ints(8, seed=27) + 1.0
    bodies = {
        "vjp": lambda b: jax.vjp(lambda y: jax.lax.psum(y * y, "i"), b)[1](b)[0],
        "jacrev": lambda b: jax.jacrev(lambda y: jax.lax.psum(y * y, "i"))(b).sum(0),
        "jacfwd": lambda b: jax.jacfwd(lambda y: jax.lax.psum(y * y, "i"))(b).sum(0),
        "hessian": lambda b: jax.hessian(lambda y: jax.lax.psum((y**3).sum(), "i"))(b).sum(0),
    }
    out = {}
    for name, body in bodies.items():
        for vma in (True, False):
            if name == "vjp" and vma:
                continue  # JAX: a varying cotangent for an invariant output
            f = shard_map(body, mesh=mesh4, in_specs=P("i"), out_specs=P("i"), check_vma=vma)
            out[f"{name}_{vma}"] = jax.jit(f)(x)
    return out


def checkpoint_inside_body():
    f = shard_map(
        lambda z: jax.grad(jax.checkpoint(lambda y: jax.lax.psum(jnp.sin(y).sum(), "i")))(z),
        mesh=mesh4, in_specs=P("i"), out_specs=P("i"),
    )
    return jax.jit(f)(ints(8, 3, seed=21))


def grad_of_grad_inside_body():
    f = shard_map(
        lambda z: jax.grad(lambda y: jax.grad(lambda u: jax.lax.psum((u ** 3).sum(), "i"))(y).sum())(z),
        mesh=mesh4, in_specs=P("i"), out_specs=P("i"),
    )
    return jax.jit(f)(ints(8, 3, seed=22))


def while_loop_inside_body():
    def body(z):
        def step(c):
            k, v = c
            return k + 1, v + jax.lax.psum(v, "i") * 0.25
        return jax.lax.while_loop(lambda c: c[0] < 3, step, (0, z))[1]
    f = shard_map(body, mesh=mesh4, in_specs=P("i"), out_specs=P("i"))
    return jax.jit(f)(ints(8, 3, seed=23))


CASES = {
    "dp_grad": dp_grad,
    "dp_value_and_grad_equals_loss": dp_value_and_grad_equals_loss,
    "fsdp_grad": fsdp_grad,
    "tp_predict": tp_predict,
    "tp_grad": tp_grad,
    "fsdp_2d_grad": fsdp_2d_grad,
    "rows_times_index": rows_times_index,
    "ppermute_ring": ppermute_ring,
    "all_to_all_swap": all_to_all_swap,
    "collective_matmul": collective_matmul,
    "collective_matmul_in_a_jitted_step": collective_matmul_in_a_jitted_step,
    "vmap_collectives_in_loops_and_conds": vmap_collectives_in_loops_and_conds,
    "vmap_of_shard_map": vmap_of_shard_map,
    "pmap_in_jit_and_grad": pmap_in_jit_and_grad,
    "vmap_axis_name_psum": vmap_axis_name_psum,
    "vmap_axis_name_gather_and_index": vmap_axis_name_gather_and_index,
    "vmap_nested_axis_names": vmap_nested_axis_names,
    "grad_through_vmap_psum": grad_through_vmap_psum,
    "grad_inside_dp_body": grad_inside_dp_body,
    "grad_inside_body_varying": grad_inside_body_varying,
    "grad_inside_body_top_level": grad_inside_body_top_level,
    "grad_inside_body_2d_outer_axis": grad_inside_body_2d_outer_axis,
    "grad_inside_body_check_vma_false": grad_inside_body_check_vma_false,
    "jvp_inside_body": jvp_inside_body,
    "vmap_axis_name_grad_and_jvp": vmap_axis_name_grad_and_jvp,
    "vmap_axis_name_closures_loops_checkpoint": vmap_axis_name_closures_loops_checkpoint,
    "vjp_jacobians_inside_body": vjp_jacobians_inside_body,
    "checkpoint_inside_body": checkpoint_inside_body,
    "grad_of_grad_inside_body": grad_of_grad_inside_body,
    "while_loop_inside_body": while_loop_inside_body,
}


def spec_of(a):
    s = getattr(a, "sharding", None)
    parts = list(getattr(s, "spec", ()) or ())
    while parts and parts[-1] is None:
        parts.pop()
    return [list(p) if isinstance(p, tuple) else p for p in parts]


def describe(out):
    if isinstance(out, dict):
        return {k: describe(v) for k, v in sorted(out.items())}
    if isinstance(out, (list, tuple)):
        return {str(i): describe(v) for i, v in enumerate(out)}
    return {"value": np.asarray(out).astype(np.float32).tolist(), "spec": spec_of(out)}


def flat(d, prefix=""):
    if "value" in d or "error" in d:
        return {prefix: d}
    out = {}
    for k, v in d.items():
        out.update(flat(v, f"{prefix}/{k}"))
    return out


results = {}
for name, fn in CASES.items():
    try:
        results[name] = flat(describe(fn()))
    except Exception as e:  # the comparison reports which side raised what
        results[name] = {"": {"error": type(e).__name__, "message": str(e)[:300]}}
print(json.dumps(results))
