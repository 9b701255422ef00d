"""What seeing memory costs (DESIGN 5.5, issue 12 acceptance 5).

Each case times the same calls with nothing recording and with a recording
on, interleaved in one run; the ratio is the recording's time over the time
with nothing recording, and the row's note gives the cost it adds per
allocation (every call here makes one allocation, or two for device_put's
snapshot + result). With nothing recording, a call pays one relaxed atomic
load per recording site, plus the always-on capture of its Python stack
(bench/allocation_stacks.py measures that); the dispatch cases
(bench/cases/dispatch.py) check the total against JAX in the same run.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

import baton as bt
from baton import _baton

from _context import Context
from _report import Row, ratio
from _timing import call_and_wait, interleave
from cases import Case

_P = _baton._profiler


def _while(start: Callable[[], Any], stop: Callable[[Any], Any], sample):
    """A sample function that runs `sample` with a recording on."""

    def recorded() -> float:
        """One batch with the recording on; ns per call."""
        handle = start()
        try:
            return sample()
        finally:
            stop(handle)

    return recorded


def _history_on() -> None:
    _P.set_history(True, 100_000)


def _history_off(_: Any) -> None:
    _P.set_history(False, 0)


def _trace_on() -> int:
    return _P.start_recording("trace")


def _rows(ctx: Context, name: str, call: Callable[[], Any], allocs: int):
    """Rows: `call` with history on and with a trace on, against nothing."""
    calls = ctx.pick(200, 10)
    reps = ctx.reps(60, 3)
    base = call_and_wait(call, bt.block_until_ready, calls)
    s = interleave(
        {
            "off": base,
            "history": _while(_history_on, _history_off, base),
            "trace": _while(_trace_on, _P.stop_recording, base),
        },
        reps,
        warmup=2,
    )
    rows = []
    for mode in ("history", "trace"):
        on, off = s[mode].median * 1e-3, s["off"].median * 1e-3
        rows.append(
            Row(
                case=f"{name} with {mode} on",
                unit="µs",
                baton=on,
                baseline=off,
                baseline_name="nothing recording",
                ratio=ratio(on, off),
                ratio_of="time/off",
                note=f"+{(on - off) / allocs:.2f} µs per allocation",
            )
        )
    return rows


def device_put_small(ctx: Context) -> list[Row]:
    """bt.device_put of a float32[16] numpy array (one allocation)."""
    x = np.arange(16, dtype=np.float32)
    return _rows(ctx, "device_put f32[16]", functools.partial(bt.device_put, x), 1)


def jit_call(ctx: Context) -> list[Row]:
    """A jitted x + 1 on float32[4] (one output allocation)."""
    f = bt.jit(lambda v: v + 1)
    x = bt.device_put(np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(f(x)), np.arange(1, 5))
    return _rows(ctx, "jit_trivial call+wait", functools.partial(f, x), 1)


CASES = [
    Case("profiler_device_put", device_put_small, "recording cost per device_put"),
    Case("profiler_jit_call", jit_call, "recording cost per jitted call"),
]
