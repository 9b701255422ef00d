"""jit of sharded arguments on 8 CPU devices, written for JAX: the cases of
JAX's "Distributed arrays and automatic parallelization" and "Explicit
sharding" pages (sums, means, dots with each operand sharded, an MLP's
forward and backward pass with data-parallel and tensor-parallel
parameters, reshapes). test_partitioning.py runs this file twice, as it is
with JAX (``python _partitioning_cases.py``) and unchanged on baton
(``python -m baton.as_jax _partitioning_cases.py``), and compares what each
prints: one JSON object {case: {"value": nested list, "spec": [...]}} or
{case: {"error": exception type name}}. baton's run needs
BATON_NUM_CPU_DEVICES=8 in its environment (baton.as_jax imports baton, which
reads it, before this file runs).
"""

import json
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

# Automatic partitioning (the compiler chooses the layouts and the
# collectives), as on the "Distributed arrays and automatic
# parallelization" page.
mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def put(a, *spec):
    return jax.device_put(a, NamedSharding(mesh, P(*spec)))


def ints(*shape, seed=0):
    """Small integers as float32: every sum is exact in any order."""
    n = int(np.prod(shape))
    return ((np.arange(n) * 37 + seed * 11) % 7 - 3).astype(np.float32).reshape(shape)


X = ints(8, 4, seed=1)
W = ints(4, 6, seed=2)


def mlp_params():
    return {
        "w1": ints(4, 16, seed=3),
        "b1": ints(16, seed=4),
        "w2": ints(16, 2, seed=5),
    }


def predict(params, x):
    h = jnp.maximum(x @ params["w1"] + params["b1"], 0.0)
    return h @ params["w2"]


def loss(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)


def dp_step():
    """Data parallel: the batch split over both mesh axes, the parameters
    replicated; the loss and the gradients (all-reduced)."""
    params = jax.tree.map(lambda a: put(a), mlp_params())
    x = put(ints(8, 4, seed=6), ("x", "y"))
    y = put(ints(8, 2, seed=7), ("x", "y"))
    value, grads = jax.jit(jax.value_and_grad(loss))(params, x, y)
    return {"loss": value, "w1": grads["w1"], "b1": grads["b1"], "w2": grads["w2"]}


def tp_step():
    """Tensor parallel (Megatron): w1 by columns and w2 by rows over 'y',
    the batch over 'x'."""
    p = mlp_params()
    params = {"w1": put(p["w1"], None, "y"), "b1": put(p["b1"], "y"),
              "w2": put(p["w2"], "y", None)}
    x = put(ints(8, 4, seed=6), "x")
    y = put(ints(8, 2, seed=7), "x")
    value, grads = jax.jit(jax.value_and_grad(loss))(params, x, y)
    return {"loss": value, "w1": grads["w1"], "b1": grads["b1"], "w2": grads["w2"]}


def scan_tp_step():
    """Tensor parallel layers under lax.scan (a scanned model: the layers'
    weights stacked): each layer's w1 by columns and w2 by rows over 'y',
    the batch over 'x'; every step needs an all-reduce."""
    w1 = put(ints(2, 4, 16, seed=8) * 0.125, None, None, "y")
    w2 = put(ints(2, 16, 4, seed=9) * 0.125, None, "y", None)

    def model(w1, w2, x):
        def layer(c, w):
            return c + jnp.maximum(c @ w[0], 0.0) @ w[1], None

        return jax.lax.scan(layer, x, (w1, w2))[0]

    def scan_loss(w1, w2, x, y):
        return jnp.mean((model(w1, w2, x) - y) ** 2)

    x = put(ints(8, 4, seed=6), "x")
    y = put(ints(8, 4, seed=7), "x")
    value, (g1, g2) = jax.jit(jax.value_and_grad(scan_loss, argnums=(0, 1)))(w1, w2, x, y)
    return {"loss": value, "w1": g1, "w2": g2}


def while_tp_train():
    """A training loop as a while_loop over tensor-parallel weights (w1 by
    columns, w2 by rows over 'y'), stopping at a step budget or a loss
    target: each iteration's forward and backward need an all-reduce."""
    w1 = put(ints(4, 16, seed=10) * 0.125, None, "y")
    w2 = put(ints(16, 4, seed=11) * 0.125, "y", None)
    x = put(ints(8, 4, seed=6) * 0.25)

    def loss_fn(w1, w2):
        return jnp.mean((x + jnp.maximum(x @ w1, 0.0) @ w2) ** 2)

    def train(w1, w2):
        def cond(c):
            return (c[2] < 4) & (c[3] > 1e-3)

        def body(c):
            w1, w2, i, _ = c
            loss, (g1, g2) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w1, w2)
            return w1 - 0.01 * g1, w2 - 0.01 * g2, i + 1, loss

        return jax.lax.while_loop(cond, body, (w1, w2, 0, jnp.float32(1.0)))

    n1, n2, steps, loss = jax.jit(train)(w1, w2)
    return {"w1": n1, "w2": n2, "steps": steps, "loss": loss}


def switch_tp():
    """lax.switch over tensor-parallel weights (w1 by columns, w2 by rows
    over 'y'): two branches need an all-reduce (a layer and a scaled
    layer), one none; each index taken, 5 clamped to the last. Each branch
    also returns x @ w1, split by columns in all of them."""
    w1 = put(ints(4, 16, seed=10) * 0.125, None, "y")
    w2 = put(ints(16, 4, seed=11) * 0.125, "y", None)
    x = put(ints(8, 4, seed=6) * 0.25)
    branches = [
        lambda x, w1, w2: (jnp.maximum(x @ w1, 0.0) @ w2, x @ w1),
        lambda x, w1, w2: ((x @ w1) @ w2 * 0.5, x @ w1 + 1.0),
        lambda x, w1, w2: (x * 2.0, (x @ w1) * 3.0),
    ]
    f = jax.jit(lambda i, x, w1, w2: jax.lax.switch(i, branches, x, w1, w2))
    out = {}
    for i in (0, 1, 2, 5):
        y, h = f(i, x, w1, w2)
        out[f"y{i}"], out[f"h{i}"] = y, h
    return out


def cond_tp_grad():
    """The gradient of a loss whose layer is under a cond (a tensor-parallel
    layer or a plain one, by a traced flag): the backward pass is a cond
    too, both needing all-reduces where the weights are split."""
    w1 = put(ints(4, 16, seed=12) * 0.125, None, "y")
    w2 = put(ints(16, 4, seed=13) * 0.125, "y", None)
    x = put(ints(8, 4, seed=7) * 0.25)

    def loss_fn(w1, w2, deep):
        y = jax.lax.cond(deep, lambda: jnp.tanh(x @ w1) @ w2, lambda: x @ w1 @ w2)
        return jnp.mean((x + y) ** 2)

    g = jax.jit(jax.value_and_grad(loss_fn, argnums=(0, 1)))
    out = {}
    for deep in (True, False):
        value, (g1, g2) = g(w1, w2, deep)
        out[f"loss_{deep}"], out[f"w1_{deep}"], out[f"w2_{deep}"] = value, g1, g2
    return out


def along_split_rows():
    """Ops along the split dimension: computed with it whole, their results
    keep the split where their length divides by it (rows 0:8, a pad to 20,
    a sort, a dynamic update, a concatenation to 20 rows, an FFT, a scatter)
    and are whole where it does not (rows 1:4, a pad to 18)."""
    a = put(ints(16, 4, seed=8), "x")
    f = jax.jit(lambda a, i: {
        "rows_0_8": a[0:8],
        "rows_1_4": a[1:4],
        "pad_20": jnp.pad(a, ((2, 2), (0, 0))),
        "pad_18": jnp.pad(a, ((1, 1), (0, 0))),
        "sort": jnp.sort(a, axis=0),
        "argsort": jnp.argsort(a, axis=0, stable=True),
        "update": jax.lax.dynamic_update_slice_in_dim(a, jnp.ones((2, 4)), i, 0),
        "concat_20": jnp.concatenate([a, a[:4]], axis=0),
        "fft_abs": jnp.abs(jnp.fft.fft(a, axis=0)),
        "set_row": a.at[2].set(5.0),
        "sorted_then_read": jnp.sort(a, axis=0)[:2].sum(axis=0),
    })
    return f(a, 3)


# bfloat16 values that round: a split contraction must give the whole one's
# result (each device's part summed in float32, rounded once).
U = np.random.RandomState(0).uniform(0, 1, (64, 32)).astype(jnp.bfloat16)
V = np.random.RandomState(1).uniform(0, 1, (64, 16)).astype(jnp.bfloat16)

# A batch of 8 symmetric positive definite 4 x 4 matrices.
SPD = np.einsum("bij,bkj->bik", ints(8, 4, 4, seed=6), ints(8, 4, 4, seed=6)) + 8 * np.eye(
    4, dtype=np.float32
)

CASES = {
    "sum_all": lambda: jnp.sum(put(X, "x", "y")),
    "sum_axis0": lambda: jax.jit(lambda a: a.sum(axis=0))(put(X, "x", "y")),
    "sum_axis1": lambda: jax.jit(lambda a: a.sum(axis=1))(put(X, "x", "y")),
    "mean": lambda: jax.jit(jnp.mean)(put(X, "x")),
    "max_axis1": lambda: jax.jit(lambda a: a.max(axis=1))(put(X, "x")),
    "dot_lhs_rows": lambda: jax.jit(jnp.dot)(put(X, "x"), put(W)),
    "dot_rhs_cols": lambda: jax.jit(jnp.dot)(put(X), put(W, None, "y")),
    "dot_both": lambda: jax.jit(jnp.dot)(put(X, "x"), put(W, None, "y")),
    "dot_contracting": lambda: jax.jit(jnp.dot)(put(X, None, "y"), put(W, "y")),
    "x_xT": lambda: jax.jit(lambda a: a @ a.T)(put(X, "x")),
    "reshape_keep": lambda: jax.jit(lambda a: a.reshape(8, 2, 2))(put(X, "x")),
    "reshape_flat": lambda: jax.jit(lambda a: a.reshape(32))(put(X, "x")),
    "mixed_unsharded": lambda: jax.jit(lambda a, b: (a * b).sum(axis=0))(
        put(X, "x"), jnp.asarray(X)
    ),
    "mixed_shardings": lambda: jax.jit(lambda a, b: a + b)(put(X, "x"), put(X, None, "y")),
    "softmax_rows": lambda: jax.jit(lambda a: jax.nn.softmax(a, axis=-1))(put(X, "x")),
    "mlp_forward": lambda: jax.jit(predict)(
        {"w1": put(mlp_params()["w1"], None, "y"), "b1": put(mlp_params()["b1"], "y"),
         "w2": put(mlp_params()["w2"], "y", None)},
        put(X, "x"),
    ),
    "out_shardings_gather": lambda: jax.jit(
        lambda a: a @ a.T, out_shardings=NamedSharding(mesh, P())
    )(put(X, "x")),
    "out_shardings_split": lambda: jax.jit(
        lambda a: a.sum(axis=0), out_shardings=NamedSharding(mesh, P("x"))
    )(put(X, None, "y")),
    "in_shardings": lambda: jax.jit(
        lambda a, b: a @ b,
        in_shardings=(NamedSharding(mesh, P("x")), NamedSharding(mesh, P())),
    )(X, W),
    "dp_step": dp_step,
    "scan_tp_step": scan_tp_step,
    "while_tp_train": while_tp_train,
    "tp_step": tp_step,
    # with_sharding_constraint inside jit: the intermediate is laid out as
    # asked, and the layout flows on to the output; under grad the
    # cotangent is constrained alike; under vmap the batch dimension stays
    # whole.
    "constraint_gathers": lambda: jax.jit(
        lambda a: jax.lax.with_sharding_constraint(a * 2, NamedSharding(mesh, P())) + 1
    )(put(X, "x")),
    "constraint_resplits": lambda: jax.jit(
        lambda a: jnp.tanh(jax.lax.with_sharding_constraint(a, NamedSharding(mesh, P(None, "y"))))
    )(put(X, "x")),
    "constraint_in_matmul": lambda: jax.jit(
        lambda a, b: jax.lax.with_sharding_constraint(a @ b, NamedSharding(mesh, P("x", "y"))).sum(axis=1)
    )(put(X, "x"), put(W)),
    "constraint_under_grad": lambda: jax.jit(jax.grad(
        lambda a: (jax.lax.with_sharding_constraint(a * a, NamedSharding(mesh, P(None, "y"))) ** 2).sum()
    ))(put(X, "x")),
    "bf16_dot_split": lambda: jax.jit(jnp.dot)(put(U[:, 0], "x"), put(U[:, 0], "x")),
    "bf16_sum_split": lambda: jax.jit(jnp.sum)(put(U, "x")),
    "bf16_matmul_split_rows": lambda: jax.jit(lambda a, b: a.T @ b)(put(U, "x"), put(V, "x")),
    # Ops that take some dimensions whole keep the split of the others
    # (each device slices, pads, sorts ... its own rows).
    "slice_cols": lambda: jax.jit(lambda a: a[:, 1:3])(put(X, "x")),
    "pad_cols": lambda: jax.jit(lambda a: jnp.pad(a, ((0, 0), (1, 2))))(put(X, "x")),
    "concat_cols": lambda: jax.jit(lambda a: jnp.concatenate([a, a * 2], axis=1))(
        put(X, "x")
    ),
    "sort_cols": lambda: jax.jit(lambda a: jnp.sort(a, axis=1))(put(X, "x")),
    "dynamic_slice_cols": lambda: jax.jit(
        lambda a, k: jax.lax.dynamic_slice_in_dim(a, k, 2, axis=1)
    )(put(X, "x"), 1),
    "take_rows_by_split_ids": lambda: jax.jit(lambda t, i: t[i])(
        put(W), put(np.array([3, 0, 1, 1, 2, 0, 3, 2], np.int32), "x")
    ),
    "scatter_add_cols": lambda: jax.jit(lambda a: a.at[:, np.array([0, 2])].add(1.0))(
        put(X, "x")
    ),
    # Batches of FFTs and decompositions stay split by batch.
    "rfft_rows": lambda: jax.jit(jnp.fft.rfft)(put(X, "x")),
    "cholesky_batch": lambda: jax.jit(jnp.linalg.cholesky)(put(SPD, "x")),
    "solve_batch": lambda: jax.jit(jnp.linalg.solve)(put(SPD, "x"), put(SPD[:, :, :2], "x")),
    # Loops and conditionals whose bodies need no communication run on each
    # device's rows (the carries stay split; a scan's ys are split after
    # their leading, iterated dimension).
    "fori_loop_rows": lambda: jax.jit(
        lambda a: jax.lax.fori_loop(0, 3, lambda i, x: x * 0.5 + i, a)
    )(put(X, "x")),
    "while_loop_rows": lambda: jax.jit(lambda a: jax.lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2 - 1), (0, a))[1]
    )(put(X, "x")),
    "scan_carry_and_ys": lambda: dict(zip(("carry", "ys"), jax.jit(lambda a: jax.lax.scan(
        lambda c, t: (c * 0.5 + t, c.sum(axis=1)), a, jnp.arange(3.0))
    )(put(X, "x")))),
    "scan_over_layers": lambda: jax.jit(lambda a, ws: jax.lax.scan(
        lambda c, w: (jnp.tanh(c @ w), None), a, ws)[0]
    )(put(X, "x"), put(np.stack([W[:, :4], W[:, :4] * 0.5]))),
    "cond_rows": lambda: jax.jit(
        lambda a, p: jax.lax.cond(p, lambda x: x * 2, lambda x: x - 1, a)
    )(put(X, "x"), True),
    # Conditionals whose branches need communication keep the weights
    # split, each branch's collectives inside it.
    "switch_tp": switch_tp,
    "cond_tp_grad": cond_tp_grad,
    # Ops along a split dimension keep its split where JAX's do.
    "along_split_rows": along_split_rows,
    "constraint_under_vmap": lambda: jax.jit(jax.vmap(
        lambda r: jax.lax.with_sharding_constraint(r * 3, NamedSharding(mesh, P("y")))
    ))(put(X, "x")),
}


def spec_of(a):
    parts = list(a.sharding.spec)
    while parts and parts[-1] is None:
        parts.pop()
    return [list(p) if isinstance(p, tuple) else p for p in parts]


def describe(out):
    if isinstance(out, dict):
        return {k: describe(v) for k, v in sorted(out.items())}
    return {"value": np.asarray(out).astype(np.float32).tolist(), "spec": spec_of(out),
            "dtype": str(np.asarray(out).dtype)}


results = {}
for name, fn in CASES.items():
    try:
        results[name] = describe(fn())
    except Exception as e:  # the comparison reports which side raised what
        results[name] = {"error": type(e).__name__, "message": str(e)[:300]}
print(json.dumps(results))
