"""FFTs inside jit (bnp.fft, pocketfft) vs JAX's and numpy's.

Rows (median time per call, ratio = baton's time / JAX's): a batch of 1024
complex transforms of 1024 points (split across the pool by transform), one
real transform of 2^20 points (one pocketfft call: no parallelism), an image
fft2 of 512x512 (one transform, its passes split across the pool), and the
irfft of a batch of 4096 half spectra. numpy's numpy.fft (pocketfft too,
computed in complex128) is the baseline; results agree with it to float32
rounding.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import baton as bt
import baton.numpy as bnp

from _check import assert_close
from _context import Context
from _report import Row, time_row
from _timing import call_and_wait, interleave
from cases import Case


def _complex(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(np.complex64)


def _row(
    ctx: Context, name: str, x: np.ndarray, fn: Callable[[Any], Callable[[Any], Any]]
) -> Row:
    bt_f = bt.jit(fn(bnp))
    bt_x = bt.device_put(x)
    fns = {"baton": call_and_wait(lambda: bt_f(bt_x), bt.block_until_ready, 1)}
    jax_out = None
    if ctx.jax is not None:
        jax_f = ctx.jax.jit(fn(ctx.jnp))
        jax_x = ctx.jax.device_put(x)
        fns["jax"] = call_and_wait(lambda: jax_f(jax_x), ctx.jax.block_until_ready, 1)
        jax_out = jax_f(jax_x)
    fns["numpy"] = call_and_wait(lambda: fn(np)(x), lambda y: y, 1)
    expected = fn(np)(x)
    scale = float(np.abs(expected).max())
    assert_close(name, expected, bt_f(bt_x), jax_out, rtol=1e-4, atol=1e-5 * scale)
    s = interleave(fns, ctx.reps(30, 3), warmup=1)
    return time_row(
        name,
        s["baton"],
        s.get("jax"),
        unit="ms",
        baseline=s["numpy"],
        baseline_name="numpy.fft",
    )


def ffts(ctx: Context) -> list[Row]:
    rng = np.random.default_rng(41)
    n = ctx.pick(1024, 64)
    image = ctx.pick(512, 64)
    return [
        _row(ctx, f"fft c64[{n},1024]", _complex(rng, (n, 1024)), lambda m: m.fft.fft),
        _row(
            ctx,
            f"rfft f32[{ctx.pick(1 << 20, 1 << 12)}]",
            rng.normal(size=ctx.pick(1 << 20, 1 << 12)).astype(np.float32),
            lambda m: m.fft.rfft,
        ),
        _row(
            ctx,
            f"fft2 c64[{image},{image}]",
            _complex(rng, (image, image)),
            lambda m: m.fft.fft2,
        ),
        _row(
            ctx,
            f"irfft c64[{4 * n},257] n=512",
            _complex(rng, (4 * n, 257)),
            lambda m: lambda z: m.fft.irfft(z, n=512),
        ),
    ]


CASES = [Case("fft", ffts, "bnp.fft in jit vs JAX and numpy.fft")]
