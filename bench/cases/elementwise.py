"""Elementwise chains inside jit on 64 MiB of float32 (smoke: 256 KiB).

arith: ((x * 2 + 1) * x - 0.5) / 3; transcendental: tanh(exp(x) * 2 + 1);
sum of squares: sum(x * x), a fused reduction (reads x, writes one number);
x in [-2, 2]. Achieved GB/s = (bytes read + bytes written) / time, compared
with the memory bandwidth measured in the same run: the best memcpy (1 or N
threads) of a buffer of the same size, counting read + write bytes. Each
output is freed between repetitions, outside the clock.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import baton as bt
import baton.numpy as bnp

from _baselines import MemcpyResult, measure_memcpy
from _check import assert_close
from _context import Context
from _report import Row, rate, ratio
from _timing import interleave, op_then_release
from cases import Case

MiB = 1 << 20


def bandwidth(ctx: Context, nbytes: int) -> MemcpyResult:
    """The best memcpy of `nbytes` (cached per size for the run)."""
    key = f"memcpy {nbytes}"
    if key not in ctx.shared:
        ctx.shared[key] = measure_memcpy(
            np.ones(nbytes // 4, np.float32), ctx.reps(10, 3)
        )
    return ctx.shared[key]


def _drop(y: Any) -> None:
    """Free an output now (outside the clock)."""
    y.delete()


def _chain(
    ctx: Context,
    name: str,
    make_fn: Callable,
    rtol: float,
    atol: float,
    target_of_bandwidth: bool,
    writes: bool = True,
) -> list[Row]:
    """Time `make_fn(numpy-like module)` in both libraries on the same input,
    check the outputs against numpy, and report GB/s."""
    nbytes = ctx.pick(64 * MiB, 256 * 1024)
    x = np.random.default_rng(7).uniform(-2, 2, nbytes // 4).astype(np.float32)
    label = f"{name} {nbytes // MiB if nbytes >= MiB else nbytes // 1024}"
    label += " MiB" if nbytes >= MiB else " KiB"
    bt_f, bt_x = bt.jit(make_fn(bnp)), bt.device_put(x)
    fns = {"baton": op_then_release(lambda: bt_f(bt_x).block_until_ready(), _drop)}
    jax_out = None
    if ctx.jax is not None:
        jax_f, jax_x = ctx.jax.jit(make_fn(ctx.jnp)), ctx.jax.device_put(x)
        fns["jax"] = op_then_release(lambda: jax_f(jax_x).block_until_ready(), _drop)
        jax_out = jax_f(jax_x)
    expected = make_fn(np)(x.astype(np.float64)).astype(np.float32)
    assert_close(label, expected, bt_f(bt_x), jax_out, rtol=rtol, atol=atol)
    del jax_out
    s = interleave(fns, ctx.reps(20, 5), warmup=2)
    bw = bandwidth(ctx, nbytes)
    traffic = (2 if writes else 1) * nbytes  # read x (and write the output)
    baton, jaxv = rate(traffic, s["baton"]), rate(traffic, s.get("jax"))
    common = dict(
        unit="GB/s",
        baton=baton,
        jax=jaxv,
        baseline=bw.gbps(2),
        baseline_name=f"{bw.label} r+w",
        best={
            "baton": rate(traffic, s["baton"], True),
            "jax": rate(traffic, s.get("jax"), True),
            "baseline": bw.gbps(2, best=True),
        },
    )
    of_bw = Row(
        case=f"{label} vs bandwidth",
        ratio=ratio(baton, bw.gbps(2)),
        ratio_of="of bandwidth",
        target=">= 0.7" if target_of_bandwidth else "-",
        **common,
    )
    vs_jax = Row(
        case=f"{label} vs JAX",
        ratio=ratio(jaxv, baton),
        ratio_of="time/JAX",
        target="-" if target_of_bandwidth else "<= 1.0",
        **common,
    )
    return [of_bw, vs_jax]


def arith(ctx: Context) -> list[Row]:
    """((x * 2 + 1) * x - 0.5) / 3."""
    return _chain(
        ctx,
        "elementwise arith",
        lambda m: lambda x: ((x * 2 + 1) * x - 0.5) / 3,
        rtol=1e-5,
        atol=1e-6,
        target_of_bandwidth=True,
    )


def transcendental(ctx: Context) -> list[Row]:
    """tanh(exp(x) * 2 + 1)."""
    return _chain(
        ctx,
        "elementwise tanh(exp)",
        lambda m: lambda x: m.tanh(m.exp(x) * 2 + 1),
        rtol=1e-5,
        atol=1e-6,
        target_of_bandwidth=False,
    )


def sum_of_squares(ctx: Context) -> list[Row]:
    """sum(x * x): the squares are never materialized (a fused reduction)."""
    return _chain(
        ctx,
        "sum(x*x)",
        lambda m: lambda x: m.sum(x * x),
        rtol=1e-5,
        atol=0.0,
        target_of_bandwidth=True,
        writes=False,
    )


CASES = [
    Case("elementwise_arith", arith, "((x*2+1)*x-0.5)/3 on 64 MiB vs bandwidth"),
    Case(
        "elementwise_transcendental",
        transcendental,
        "tanh(exp(x)*2+1) on 64 MiB vs JAX and bandwidth",
    ),
    Case("sum_of_squares", sum_of_squares, "sum(x*x) on 64 MiB vs bandwidth and JAX"),
]
