"""16-bit floats (bfloat16, float16) on 4 Mi elements (smoke: 64 Ki): what a
mixed-precision program does on the CPU besides its float32 work.

arith: ((x * 2 + 1) * x - 0.5) / 3, each operation rounded to the 16-bit
type (as JAX does); widen: x.astype(float32); narrow: a float32 array
.astype(the 16-bit type); matmul: a 256x256 product (XLA:CPU and baton both
multiply in float32 and round the result). Each output is checked against
numpy (ml_dtypes) and baton's against JAX's, then both are timed in
interleaved repetitions; the ratio is baton's median time over JAX's. Each
output is freed outside the clock.
"""

from __future__ import annotations

from typing import Any, Callable

import ml_dtypes
import numpy as np

import baton as bt
import baton.numpy as bnp

from _check import assert_close
from _context import Context
from _report import Row, time_row
from _timing import interleave, op_then_release
from cases import Case

DTYPES = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}


def _drop(y: Any) -> None:
    """Free an output now (outside the clock)."""
    y.delete()


def _compare(
    ctx: Context,
    label: str,
    make_fn: Callable,
    args: list[np.ndarray],
    expected: np.ndarray,
    rtol: float,
    atol: float,
    target: str,
) -> Row:
    """Check both libraries' `make_fn(numpy-like module)(*args)` against
    `expected`, then time them interleaved: a row of baton's time over JAX's."""
    bt_f = bt.jit(make_fn(bnp))
    bt_args = [bt.device_put(a) for a in args]
    fns = {"baton": op_then_release(lambda: bt_f(*bt_args).block_until_ready(), _drop)}
    jax_out = None
    if ctx.jax is not None:
        jax_f = ctx.jax.jit(make_fn(ctx.jnp))
        jax_args = [ctx.jax.device_put(a) for a in args]
        fns["jax"] = op_then_release(
            lambda: jax_f(*jax_args).block_until_ready(), _drop
        )
        jax_out = np.asarray(jax_f(*jax_args)).astype(np.float32)
    got = np.asarray(bt_f(*bt_args)).astype(np.float32)
    assert_close(label, expected.astype(np.float32), got, jax_out, rtol=rtol, atol=atol)
    s = interleave(fns, ctx.reps(30, 5), warmup=2)
    unit = "ms" if s["baton"].median > 1e7 else "µs"
    return time_row(label, s["baton"], s.get("jax"), target, unit)


def _elementwise(ctx: Context) -> list[Row]:
    """arith, widen and narrow for each 16-bit type."""
    n = ctx.pick(1 << 22, 1 << 16)
    size = f"2^{n.bit_length() - 1}"
    x32 = np.random.default_rng(11).uniform(-2, 2, n).astype(np.float32)
    rows = []
    for name, dt in DTYPES.items():
        x = x32.astype(dt)

        def arith(v):
            # Rounded after every operation, as the 16-bit program is.
            r = lambda a: np.asarray(a, np.float32).astype(dt)  # noqa: E731
            return r((r(r(r(v * r(2.0)) + r(1.0)) * v) - r(0.5)) / r(3.0))

        rows.append(
            _compare(
                ctx,
                f"{name} arith {size}",
                lambda m: lambda v: ((v * 2 + 1) * v - 0.5) / 3,
                [x],
                arith(x),
                rtol=1e-2,
                atol=1e-2,
                target="<= 1.0",
            )
        )
        rows.append(
            _compare(
                ctx,
                f"{name} widen {size}",
                lambda m: lambda v: v.astype(m.float32),
                [x],
                x.astype(np.float32),
                rtol=0.0,
                atol=0.0,
                target="<= 1.0",
            )
        )
        rows.append(
            _compare(
                ctx,
                f"{name} narrow {size}",
                lambda m, dt=dt: lambda v: v.astype(dt),
                [x32],
                x32.astype(dt),
                rtol=0.0,
                atol=0.0,
                target="<= 1.0",
            )
        )
    return rows


def _matmul(ctx: Context) -> list[Row]:
    """A 256x256 product for each 16-bit type (smoke: 64x64)."""
    side = ctx.pick(256, 64)
    rng = np.random.default_rng(12)
    rows = []
    for name, dt in DTYPES.items():
        a = rng.uniform(-1, 1, (side, side)).astype(dt)
        b = rng.uniform(-1, 1, (side, side)).astype(dt)
        expected = (a.astype(np.float64) @ b.astype(np.float64)).astype(dt)
        rows.append(
            _compare(
                ctx,
                f"{name} matmul {side}x{side}",
                lambda m: lambda p, q: p @ q,
                [a, b],
                expected,
                rtol=2e-2,
                atol=0.25,
                target="<= 1.1",
            )
        )
    return rows


CASES = [
    Case(
        "half_elementwise",
        _elementwise,
        "bfloat16/float16 arithmetic, widening and narrowing on 4 Mi elements",
    ),
    Case("half_matmul", _matmul, "bfloat16/float16 256x256 matmul"),
]
