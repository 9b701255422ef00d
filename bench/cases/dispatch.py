"""Cost of calling a jitted function from Python (after JAX's api_benchmark:
jit_trivial / jit_simple / jit_simple_many_args, each in a ``_dispatch``
form and a form that waits for every result).

dispatch: a batch of calls back to back, the last result synced after the
clock stops (the device queue runs meanwhile). call+wait: every call is
followed by ``block_until_ready()``. Reported per call.

Ported to ``--platform``: in a process of one library only that library's
calls are made and timed.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, Callable

import numpy as np

import baton as bt

from _check import assert_close
from _context import Context
from _report import Row, time_row
from _timing import call_and_wait, dispatch_batch, interleave
from cases import Case

DISPATCH_TARGET = "<= 0.5"  # DESIGN section 4: at most half of JAX's time


def _bt_sync(y: Any) -> Any:
    """Wait for a baton result (array or pytree)."""
    return bt.block_until_ready(y)


def _time_both(
    ctx: Context,
    name: str,
    bt_call: Callable[[], Any] | None,
    jax_call: Callable[[], Any] | None,
    calls: int,
    reps: int,
    target: str,
) -> list[Row]:
    """Dispatch-only and call+wait rows for one call, baton vs JAX interleaved
    (either may be None: not measured in this process)."""
    rows = []
    for mode, make in (("dispatch", dispatch_batch), ("call+wait", call_and_wait)):
        fns = {}
        if bt_call is not None:
            fns["baton"] = make(bt_call, _bt_sync, calls)
        if jax_call is not None:
            fns["jax"] = make(jax_call, ctx.jax.block_until_ready, calls)
        s = interleave(fns, reps, warmup=2)
        rows.append(time_row(f"{name} {mode}", s.get("baton"), s.get("jax"), target))
    return rows


def _small_call(ctx: Context, name: str, fn: Callable, inputs: list[np.ndarray]):
    """Rows for `fn(*inputs)` jitted in both libraries; results checked."""
    expected = fn(*inputs)
    bt_out = bt_call = jax_out = jax_call = None
    if ctx.with_baton:
        bt_args = [bt.device_put(a) for a in inputs]
        bt_f = bt.jit(fn)
        bt_out = bt_f(*bt_args)
        bt_call = functools.partial(bt_f, *bt_args)
    if ctx.jax is not None:
        jax_args = [ctx.jax.device_put(a) for a in inputs]
        jax_f = ctx.jax.jit(fn)
        jax_out = jax_f(*jax_args)
        jax_call = functools.partial(jax_f, *jax_args)
    assert_close(name, np.asarray(expected, np.float32), bt_out, jax_out)
    calls = ctx.pick(100, 20)
    reps = ctx.reps(200, 10)
    return _time_both(ctx, name, bt_call, jax_call, calls, reps, DISPATCH_TARGET)


def jit_trivial(ctx: Context) -> list[Row]:
    """f(x) = x + 1 on float32[4]."""
    return _small_call(
        ctx, "jit_trivial x+1 f32[4]", lambda x: x + 1, [np.arange(4, dtype=np.float32)]
    )


def jit_simple(ctx: Context) -> list[Row]:
    """f(x, y) = (x * y + 1).sum() on two float32[16]."""
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    y = np.linspace(0, 2, 16, dtype=np.float32)
    return _small_call(
        ctx, "jit_simple (x*y+1).sum() f32[16]", lambda x, y: (x * y + 1).sum(), [x, y]
    )


def _many_args(ctx: Context, n: int) -> list[Row]:
    """f(xs) = xs[0] + ... + xs[n-1] over a list of n float32 scalars."""
    name = f"jit_many_args {n} x f32[]"
    values = [np.float32(i) for i in range(n)]

    def total(xs: list) -> Any:
        """The sum of the list, left to right."""
        return functools.reduce(operator.add, xs)

    bt_out = bt_call = jax_out = jax_call = None
    if ctx.with_baton:
        bt_args = [bt.device_put(v) for v in values]
        bt_f = bt.jit(total)
        bt_out = bt_f(bt_args)
        bt_call = functools.partial(bt_f, bt_args)
    if ctx.jax is not None:
        jax_args = [ctx.jax.device_put(v) for v in values]
        jax_f = ctx.jax.jit(total)
        jax_out = jax_f(jax_args)
        jax_call = functools.partial(jax_f, jax_args)
    assert_close(name, np.float32(n * (n - 1) // 2), bt_out, jax_out)
    calls = ctx.pick(max(2, 2000 // n), 2)
    reps = ctx.reps(50, 3)
    return _time_both(ctx, name, bt_call, jax_call, calls, reps, "-")


CASES = [
    Case(
        "jit_trivial",
        jit_trivial,
        "x + 1 on f32[4]: dispatch and call+wait",
        on_device=True,
    ),
    Case(
        "jit_simple",
        jit_simple,
        "(x*y+1).sum() on f32[16]: dispatch, call+wait",
        on_device=True,
    ),
    Case(
        "jit_many_args_100",
        lambda ctx: _many_args(ctx, 100),
        "sum of a list of 100 f32 scalars",
        on_device=True,
    ),
    Case(
        "jit_many_args_1000",
        lambda ctx: _many_args(ctx, 1000),
        "sum of a list of 1000 f32 scalars",
        on_device=True,
    ),
]
