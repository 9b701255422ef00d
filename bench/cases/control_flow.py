"""Control flow inside jit: loops that never leave the compiled program
(``bt.lax`` vs ``jax.lax``, the same code for both).

fori:    ``lax.fori_loop(0, 1000, lambda i, x: x * 0.99 + 0.01, x)`` over 1K
         and 64K float32 (smoke: 50 steps over 256 and 4K);
rnn:     ``lax.scan`` of ``h = tanh(W @ h + x_t)``, T = 100 steps, n = 64
         (smoke: T = 10, n = 16), returning the last h and every h;
cumsum:  ``lax.scan`` cumulative sum over the rows of a (1000, 256) float32
         array (smoke: (50, 16)), returning the total and every partial sum.

Each is timed per call with its results synced (interleaved repetitions,
outputs freed outside the clock): ratio = baton's time / JAX's. A second row
gives each library's compiled temporaries (``memory_analysis()
.temp_size_in_bytes``): what the loop needs besides its arguments and
outputs (for baton, the loop's scratch: spare carry buffers and the regions'
temporaries). Results are checked against a sequential numpy float32 loop
and against JAX.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import baton as bt
import baton.numpy as bnp

from _check import assert_close
from _context import Context
from _report import Row, ratio, time_row
from _timing import interleave, op_then_release
from cases import Case


def _drop(out: Any) -> None:
    """Free every array of an output (outside the clock)."""
    for leaf in bt.tree.leaves(out):
        leaf.delete()


def _temp_bytes(jitted: Any, args: tuple) -> int | None:
    """The compiled call's temporaries, or None if the library does not say."""
    try:
        ma = jitted.lower(*args).compile().memory_analysis()
    except Exception:  # a figure, not a check
        return None
    return None if ma is None else int(ma.temp_size_in_bytes)


def _measure(
    ctx: Context,
    name: str,
    make_fn: Callable[[Any, Any], Callable],
    host_args: tuple,
    reference: Any,
    rtol: float,
    atol: float,
    extra: dict[str, Any],
) -> list[Row]:
    """Jit `make_fn(lax, numpy module)` in both libraries, check the results
    against `reference` (a tuple of arrays), time a synced call and report
    the compiled temporaries."""
    bt_f = bt.jit(make_fn(bt.lax, bnp))
    bt_args = tuple(bt.device_put(a) for a in host_args)
    bt.block_until_ready(bt_args)
    fns = {
        "baton": op_then_release(lambda: bt.block_until_ready(bt_f(*bt_args)), _drop)
    }
    bt_out = bt_f(*bt_args)
    jax_out = [None] * len(reference)
    jax_temp = None
    if ctx.jax is not None:
        jax = ctx.jax
        jax_f = jax.jit(make_fn(jax.lax, ctx.jnp))
        jax_args = tuple(jax.device_put(a) for a in host_args)
        fns["jax"] = op_then_release(
            lambda: jax.block_until_ready(jax_f(*jax_args)), _drop
        )
        jax_out = list(jax_f(*jax_args))
        jax_temp = _temp_bytes(jax_f, jax_args)
    for n, (ref, b, j) in enumerate(zip(reference, bt_out, jax_out)):
        assert_close(f"{name} output {n}", ref, b, j, rtol=rtol, atol=atol)
    del bt_out, jax_out
    bt_temp = _temp_bytes(bt_f, bt_args)
    s = interleave(fns, ctx.reps(20, 3), warmup=2)
    row = time_row(f"{name} time/call", s["baton"], s.get("jax"))
    best = row.best
    row.extra = {
        **extra,
        "best_ratio": ratio(best["baton"], best["jax"]),
    }
    if row.ratio is not None and best["jax"] is not None:
        row.note = f"best-of ratio {best['baton'] / best['jax']:.2f}"
    temp = Row(
        case=f"{name} temp bytes",
        unit="B",
        baton=None if bt_temp is None else float(bt_temp),
        jax=None if jax_temp is None else float(jax_temp),
        ratio=ratio(bt_temp, jax_temp),
        ratio_of="temp/JAX",
        extra={"baton_temp_bytes": bt_temp, "jax_temp_bytes": jax_temp},
    )
    return [row, temp]


def fori(ctx: Context) -> list[Row]:
    """x = x * 0.99 + 0.01, 1000 times, over 1K and 64K float32."""
    steps = ctx.pick(1000, 50)
    rows = []
    for n in ctx.pick((1024, 65536), (256, 4096)):
        x = np.random.default_rng(1).uniform(-1, 1, n).astype(np.float32)

        def make_fn(lax: Any, np_: Any) -> Callable:
            """The loop with one library's lax."""
            return lambda x0: (
                lax.fori_loop(0, steps, lambda i, v: v * 0.99 + 0.01, x0),
            )

        ref = x.copy()
        for _ in range(steps):
            ref = ref * np.float32(0.99) + np.float32(0.01)
        label = f"{n // 1024}K" if n >= 1024 else str(n)
        rows += _measure(
            ctx,
            f"fori_loop {steps} x*0.99+0.01 f32[{label}]",
            make_fn,
            (x,),
            (ref,),
            rtol=1e-5,
            atol=1e-6,
            extra={"steps": steps, "elements": n},
        )
    return rows


def rnn(ctx: Context) -> list[Row]:
    """h = tanh(W @ h + x_t) over T steps (lax.scan)."""
    steps, n = ctx.pick((100, 64), (10, 16))
    rng = np.random.default_rng(2)
    w = (rng.standard_normal((n, n)) * (0.9 / np.sqrt(n))).astype(np.float32)
    xs = rng.standard_normal((steps, n)).astype(np.float32)
    h0 = np.zeros(n, np.float32)

    def make_fn(lax: Any, np_: Any) -> Callable:
        """The scan with one library's lax and numpy."""

        def f(h0: Any, xs: Any, w: Any) -> Any:
            def step(h: Any, x: Any) -> tuple:
                h = np_.tanh(w @ h + x)
                return h, h

            return lax.scan(step, h0, xs)

        return f

    h, hs = h0.copy(), []
    for t in range(steps):
        h = np.tanh(w @ h + xs[t])
        hs.append(h)
    return _measure(
        ctx,
        f"scan rnn tanh(W@h+x) T={steps} n={n}",
        make_fn,
        (h0, xs, w),
        (h, np.stack(hs)),
        rtol=1e-4,
        atol=1e-5,
        extra={"steps": steps, "n": n},
    )


def cumsum(ctx: Context) -> list[Row]:
    """Cumulative sum over the rows of a (T, n) array (lax.scan)."""
    steps, n = ctx.pick((1000, 256), (50, 16))
    xs = np.random.default_rng(3).standard_normal((steps, n)).astype(np.float32)

    def make_fn(lax: Any, np_: Any) -> Callable:
        """The scan with one library's lax and numpy."""

        def f(xs: Any) -> Any:
            def step(c: Any, x: Any) -> tuple:
                c = c + x
                return c, c

            return lax.scan(step, np_.zeros(xs.shape[1:], xs.dtype), xs)

        return f

    partial = np.cumsum(xs, axis=0, dtype=np.float32)
    return _measure(
        ctx,
        f"scan cumsum f32[{steps},{n}]",
        make_fn,
        (xs,),
        (partial[-1], partial),
        rtol=1e-5,
        atol=1e-4,
        extra={"steps": steps, "n": n},
    )


CASES = [
    Case(
        "control_flow_fori",
        fori,
        "fori_loop of 1000 x*0.99+0.01 steps on 1K and 64K f32 (smoke: 50 steps)",
    ),
    Case(
        "control_flow_rnn",
        rnn,
        "scan h=tanh(W@h+x_t), T=100, n=64 (smoke: T=10, n=16)",
    ),
    Case(
        "control_flow_cumsum",
        cumsum,
        "scan cumulative sum over f32[1000,256] (smoke: [50,16])",
    ),
]
