"""Square float32 matmul inside jit vs the BLAS called directly.

The baseline is numpy's matmul into a preallocated ``out=`` (numpy's wheel
calls its bundled BLAS; which one is in the machine info). 2x2 is JAX's
jit_small_matmul: a latency figure (µs per call, vs JAX); 256 and 1024 report
GFLOP/s = 2 n^3 / time, vs the BLAS. Each output is freed between calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import baton as bt

from _baselines import blas_matmul
from _check import assert_close
from _context import Context
from _report import Row, rate, ratio, time_row
from _timing import call_and_wait, interleave
from cases import Case


def _matmul(ctx: Context, n: int, full_n: int) -> list[Row]:
    """Rows for one size `n` (named after its full-run size `full_n`)."""
    rng = np.random.default_rng(n)
    a = rng.uniform(size=(n, n)).astype(np.float32)
    b = rng.uniform(size=(n, n)).astype(np.float32)
    out = np.empty((n, n), np.float32)
    name = f"matmul {n}x{n} f32"
    bt_f = bt.jit(lambda a, b: a @ b)
    bt_a, bt_b = bt.device_put(a), bt.device_put(b)
    per = max(1, (1 << 24) // (n**3 + 50_000))  # calls per sample: ~ms each
    fns = {"baton": call_and_wait(lambda: bt_f(bt_a, bt_b), bt.block_until_ready, per)}
    jax_out = None
    if ctx.jax is not None:
        jax = ctx.jax
        jax_f = jax.jit(lambda a, b: a @ b)
        jax_a, jax_b = jax.device_put(a), jax.device_put(b)
        fns["jax"] = call_and_wait(
            lambda: jax_f(jax_a, jax_b), jax.block_until_ready, per
        )
        jax_out = jax_f(jax_a, jax_b)
    fns["blas"] = call_and_wait(lambda: blas_matmul(a, b, out), lambda y: y, per)
    expected = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    assert_close(name, expected, bt_f(bt_a, bt_b), jax_out, rtol=2e-5, atol=1e-6)
    assert_close(
        name + " (BLAS)", expected, blas_matmul(a, b, out), rtol=2e-5, atol=1e-6
    )
    # Blocks of samples per library (5 rounds) with a pause before each:
    # OpenBLAS workers (numpy's and baton's are separate pools) spin ~0.1 s
    # after a GEMM and would otherwise steal the 2 cores from the next sample.
    reps = ctx.reps(20 if n > 256 else 50, 3)
    s = interleave(
        fns, reps, warmup=1, block=max(1, reps // 5), settle_s=ctx.pick(0.3, 0.0)
    )
    if full_n <= 2:
        return [
            time_row(
                name,
                s["baton"],
                s.get("jax"),
                baseline=s["blas"],
                baseline_name="numpy matmul",
            )
        ]
    flop = 2.0 * n**3
    baton, jaxv, blas = (rate(flop, s.get(k)) for k in ("baton", "jax", "blas"))
    return [
        Row(
            case=name,
            unit="GFLOP/s",
            baton=baton,
            jax=jaxv,
            baseline=blas,
            baseline_name="BLAS (numpy)",
            ratio=ratio(baton, blas),
            ratio_of="of BLAS",
            target=">= 0.9" if full_n >= 1024 else "-",
            best={k: rate(flop, s.get(k), True) for k in ("baton", "jax", "blas")},
            extra={"time_ratio_vs_jax": ratio(jaxv, baton) if jaxv else None},
        )
    ]


def _case(full_n: int, smoke_n: int) -> Any:
    """A case function for one size."""
    return lambda ctx: _matmul(ctx, ctx.pick(full_n, smoke_n), full_n)


CASES = [
    Case("matmul_2", _case(2, 2), "2x2 matmul latency (JAX's jit_small_matmul)"),
    Case("matmul_256", _case(256, 64), "256x256 matmul GFLOP/s vs BLAS"),
    Case("matmul_1024", _case(1024, 128), "1024x1024 matmul GFLOP/s vs BLAS"),
]
