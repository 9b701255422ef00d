"""Training steps with gradients (issue 9): a 4-layer MLP, a small
transformer block and a small CNN (issue 41), each `jit(value_and_grad(loss))` + SGD with the params
donated, baton vs JAX on the same inputs.

Per model: time per synced step (interleaved), and peak memory. baton's
runtime peak is `memory_stats()["peak_bytes_in_use"]` over the steps; JAX on
the CPU keeps no device statistics, so the compared figure is each library's
compiled peak, argument + output - alias + temp bytes from
`memory_analysis()` (the same formula for both). Final params are checked
against JAX's (float32 rounding; 1e-4 for the transformer, whose softmax and
layer norms sum in orders that differ between the libraries).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import baton as bt
import baton.numpy as bnp

from _check import assert_close
from _context import Context
from _report import Row, ratio, time_row
from _timing import interleave, now_ns
from cases import Case

MiB = 1 << 20
LR = 0.01


# Models, written once for both libraries: `np_` is baton.numpy or jax.numpy,
# `api` baton or jax.


def _log_softmax(np_, api, logits):
    m = api.lax.stop_gradient(np_.max(logits, axis=-1, keepdims=True))
    return logits - m - np_.log(np_.sum(np_.exp(logits - m), axis=-1, keepdims=True))


def mlp_loss(np_, api):
    def loss(params, batch):
        x, y = batch
        h = x
        for w, b in params[:-1]:
            h = np_.tanh(h @ w + b)
        w, b = params[-1]
        return -np_.mean(np_.sum(_log_softmax(np_, api, h @ w + b) * y, axis=1))

    return loss


def mlp_init(dims: tuple, batch: int, seed: int = 0) -> tuple[list, tuple]:
    rng = np.random.default_rng(seed)
    params = [
        (
            (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
            np.zeros(n, np.float32),
        )
        for m, n in zip(dims[:-1], dims[1:])
    ]
    x = rng.standard_normal((batch, dims[0])).astype(np.float32)
    y = np.eye(dims[-1], dtype=np.float32)[rng.integers(0, dims[-1], batch)]
    return params, (x, y)


def transformer_loss(np_, api, heads: int):
    def layer_norm(x, g):
        mu = np_.mean(x, axis=-1, keepdims=True)
        var = np_.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return (x - mu) * api.lax.rsqrt(var + 1e-5) * g

    def loss(params, batch):
        x, target = batch
        b, t, d = x.shape
        dh = d // heads
        h = layer_norm(x, params["ln1"])
        qkv = h @ params["wqkv"]  # (b, t, 3d)
        q = qkv[:, :, :d].reshape(b, t, heads, dh).transpose(0, 2, 1, 3)
        k = qkv[:, :, d : 2 * d].reshape(b, t, heads, dh).transpose(0, 2, 1, 3)
        v = qkv[:, :, 2 * d :].reshape(b, t, heads, dh).transpose(0, 2, 1, 3)
        # A Python float (weakly typed in both libraries). A numpy float64
        # scalar would make baton compute attention in float64: baton keeps
        # 64-bit inputs until x64-off defaults land (issue 11).
        s = np_.matmul(q, k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(dh))
        causal = np.tril(np.ones((t, t), bool))
        s = np_.where(causal, s, -1e9)
        p = np_.exp(_log_softmax(np_, api, s))
        a = np_.matmul(p, v).transpose(0, 2, 1, 3).reshape(b, t, d)
        x = x + a @ params["wo"]
        h = layer_norm(x, params["ln2"])
        u = h @ params["w1"]
        u = 0.5 * u * (1 + np_.tanh(0.7978845608 * (u + 0.044715 * u**3)))  # gelu
        x = x + u @ params["w2"]
        return np_.mean((x - target) ** 2)

    return loss


def transformer_init(batch: int, seq: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)

    def w(m, n):
        return (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)

    params = {
        "ln1": np.ones(d, np.float32),
        "wqkv": w(d, 3 * d),
        "wo": w(d, d),
        "ln2": np.ones(d, np.float32),
        "w1": w(d, 4 * d),
        "w2": w(4 * d, d),
    }
    x = rng.standard_normal((batch, seq, d)).astype(np.float32)
    target = rng.standard_normal((batch, seq, d)).astype(np.float32)
    return params, (x, target)


def cnn_loss(np_, api):
    """Two 3x3 conv layers (NHWC, SAME), 2x2 max pooling after each, a dense
    head, softmax cross-entropy (issue 41's CNN step)."""

    def conv(x, w, b):
        y = api.lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        return np_.maximum(y + b, 0.0)

    def pool(x):
        return api.lax.reduce_window(
            x, -np_.inf, api.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"
        )

    def loss(params, batch):
        x, y = batch
        h = pool(conv(x, *params["conv1"]))
        h = pool(conv(h, *params["conv2"]))
        h = h.reshape(h.shape[0], -1)
        w, b = params["dense"]
        return -np_.mean(np_.sum(_log_softmax(np_, api, h @ w + b) * y, axis=1))

    return loss


def cnn_init(batch: int, side: int, c1: int, c2: int, classes: int = 10, seed: int = 0):
    rng = np.random.default_rng(seed)

    def w(*shape):
        fan_in = int(np.prod(shape[:-1]))
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    flat = (side // 4) * (side // 4) * c2
    params = {
        "conv1": (w(3, 3, 1, c1), np.zeros(c1, np.float32)),
        "conv2": (w(3, 3, c1, c2), np.zeros(c2, np.float32)),
        "dense": (w(flat, classes), np.zeros(classes, np.float32)),
    }
    x = rng.standard_normal((batch, side, side, 1)).astype(np.float32)
    y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, batch)]
    return params, (x, y)


def sgd_step(api, loss):
    def step(params, batch):
        value, grads = api.value_and_grad(loss)(params, batch)
        new = api.tree.map(lambda p, g: p - LR * g, params, grads)
        return value, new

    return step


class StepLoop:
    """`value, params = f(params, batch)` for one library; `sample()` times
    a synced step (owns its params)."""

    def __init__(self, f: Any, params: Any, batch: Any, sync: Any) -> None:
        self.f, self.params, self.batch, self.sync = f, params, batch, sync
        self.steps = 0

    def sample(self) -> float:
        t0 = now_ns()
        _value, self.params = self.f(self.params, self.batch)
        self.sync(self.params)
        self.steps += 1
        return now_ns() - t0


def _compiled_peak(ma: Any) -> int:
    """argument + output - alias + temp: what the step holds at its peak."""
    return (
        ma.argument_size_in_bytes
        + ma.output_size_in_bytes
        - ma.alias_size_in_bytes
        + ma.temp_size_in_bytes
    )


def _leaves(tree: Any) -> list:
    return [np.asarray(x) for x in bt.tree.leaves(tree)]


def _run(ctx: Context, name: str, loss_of, init: tuple, rtol: float, atol: float):
    host_params, host_batch = init
    bt_step = bt.jit(sgd_step(bt, loss_of(bnp, bt)), donate_argnums=0)
    bt_params, bt_batch = bt.device_put(host_params), bt.device_put(host_batch)
    bt.block_until_ready((bt_params, bt_batch))
    bt_ma = bt_step.lower(bt_params, bt_batch).compile().memory_analysis()
    before = bt.memory_stats()["bytes_in_use"]
    bt.reset_peak_memory_stats()
    loops = {"baton": StepLoop(bt_step, bt_params, bt_batch, bt.block_until_ready)}
    del bt_params, bt_batch
    jax_ma = None
    if ctx.jax is not None:
        jax, jnp = ctx.jax, ctx.jnp
        jax_step = jax.jit(sgd_step(jax, loss_of(jnp, jax)), donate_argnums=0)
        j_params, j_batch = jax.device_put((host_params, host_batch))
        jax_ma = jax_step.lower(j_params, j_batch).compile().memory_analysis()
        loops["jax"] = StepLoop(jax_step, j_params, j_batch, jax.block_until_ready)
    s = interleave({k: v.sample for k, v in loops.items()}, ctx.reps(20, 3), warmup=2)
    peak = bt.memory_stats()["peak_bytes_in_use"]
    if "jax" in loops:
        # Same number of steps from the same start: the same params.
        assert loops["jax"].steps == loops["baton"].steps
        for n, (b, j) in enumerate(
            zip(_leaves(loops["baton"].params), _leaves(loops["jax"].params))
        ):
            assert_close(f"{name} param {n}", j, b, rtol=rtol, atol=atol)
    for loop in loops.values():
        del loop.params, loop.batch
    bt_peak = _compiled_peak(bt_ma)
    jax_peak = None if jax_ma is None else _compiled_peak(jax_ma)
    return [
        time_row(f"{name} time/step", s["baton"], s.get("jax"), "<= 1.0", unit="ms"),
        Row(
            case=f"{name} peak (compiled: arg+out-alias+temp)",
            unit="MiB",
            baton=bt_peak / MiB,
            jax=None if jax_peak is None else jax_peak / MiB,
            ratio=ratio(bt_peak, jax_peak),
            ratio_of="peak/JAX",
            target="<= 1.0",
            extra={
                "baton_memory_stats_peak_bytes": peak,
                "baton_bytes_in_use_before": before,
                "baton_temp_bytes": bt_ma.temp_size_in_bytes,
                "baton_alias_bytes": bt_ma.alias_size_in_bytes,
                "jax_temp_bytes": None if jax_ma is None else jax_ma.temp_size_in_bytes,
                "jax_alias_bytes": None
                if jax_ma is None
                else jax_ma.alias_size_in_bytes,
            },
            note=f"baton memory_stats peak {peak / MiB:.1f} MiB "
            f"(params+batch {before / MiB:.1f} MiB)",
        ),
    ]


def mlp_step(ctx: Context) -> list[Row]:
    """4-layer tanh MLP, softmax cross-entropy, SGD, donated params."""
    dims = ctx.pick((784, 1024, 1024, 1024, 10), (32, 64, 64, 64, 10))
    batch = ctx.pick(128, 16)
    name = f"mlp {'x'.join(map(str, dims))} b{batch}"
    return _run(ctx, name, mlp_loss, mlp_init(dims, batch), rtol=1e-5, atol=1e-6)


def transformer_step(ctx: Context) -> list[Row]:
    """One pre-LN transformer block (causal attention + GELU MLP), MSE."""
    batch, seq, d, heads = ctx.pick((8, 128, 256, 4), (2, 8, 16, 2))
    name = f"transformer b{batch} t{seq} d{d} h{heads}"
    return _run(
        ctx,
        name,
        lambda np_, api: transformer_loss(np_, api, heads),
        transformer_init(batch, seq, d),
        rtol=1e-4,
        atol=1e-5,
    )


def cnn_step(ctx: Context) -> list[Row]:
    """Two conv layers + max pooling + dense head, SGD, donated params."""
    batch, side, c1, c2 = ctx.pick((64, 28, 16, 32), (4, 8, 4, 8))
    name = f"cnn {side}x{side} c{c1},{c2} b{batch}"
    # atol: after 20+ steps the ReLU + max-pool ties and the two libraries'
    # convolution summation orders leave ~1e-5 differences in small weights.
    return _run(ctx, name, cnn_loss, cnn_init(batch, side, c1, c2), rtol=1e-4, atol=5e-5)


CASES = [
    Case(
        "mlp_step",
        mlp_step,
        "4-layer MLP jit(value_and_grad)+SGD, donated: time, compiled peak",
    ),
    Case(
        "transformer_step",
        transformer_step,
        "transformer block jit(value_and_grad)+SGD, donated: time, compiled peak",
    ),
    Case(
        "cnn_step",
        cnn_step,
        "2 conv + pool + dense jit(value_and_grad)+SGD, donated: time, compiled peak",
    ),
]
