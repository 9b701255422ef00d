"""In-place update loops with donation: ``state = f(state, update, i)``.

Two forms, both with ``donate_argnums=0`` in both libraries:
  dus:     f writes `update` (1/256 of the state) at offset i*k with
           ``lax.dynamic_update_slice`` on a 1-D state;
  at_set:  f writes one row with ``state.at[i].set(row)`` on a 2-D state.
Each step is timed with its result synced (median per step). baton's peak
device memory over the loop (``memory_stats``) is compared with what the loop
needs: the live state and update plus the compiled step's temporaries
(``memory_analysis().temp_size_in_bytes``); JAX's CPU backend has no memory
statistics, so its column is n/a (see the train case for RSS of both).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import baton as bt

from _check import assert_close
from _context import Context
from _report import Row, ratio, time_row
from _timing import interleave, now_ns
from cases import Case

MiB = 1 << 20


class UpdateLoop:
    """A running `state = step(state, update, i % positions)` loop for one
    library, whose `sample()` times one synced step (owns its state)."""

    def __init__(
        self,
        step: Callable,
        state: Any,
        update: Any,
        positions: int,
        sync: Callable[[Any], Any],
    ) -> None:
        """Keep the step, the state and update arrays, and the position count."""
        self.step, self.state, self.update = step, state, update
        self.positions, self.sync, self.calls = positions, sync, 0

    def sample(self) -> float:
        """One step, synced; ns."""
        i = self.calls % self.positions
        self.calls += 1
        t0 = now_ns()
        self.state = self.step(self.state, self.update, i)
        self.sync(self.state)
        return now_ns() - t0


def _run(
    ctx: Context,
    name: str,
    make_fn: Callable,
    state0: np.ndarray,
    update: np.ndarray,
    positions: int,
    replay: Callable,
) -> list[Row]:
    """Time the donated loop in both libraries (the step is `make_fn(lax)` with
    each library's lax), check the final states against a numpy replay, and
    measure baton's peak device memory."""
    bt_step = bt.jit(make_fn(bt.lax), donate_argnums=0)
    bt_state, bt_update = bt.device_put(state0), bt.device_put(update)
    temps = bt_step.lower(bt_state, bt_update, 0).compile().memory_analysis()
    bt.block_until_ready((bt_state, bt_update))
    before = bt.memory_stats()["bytes_in_use"]
    bt.reset_peak_memory_stats()
    loops = {
        "baton": UpdateLoop(
            bt_step, bt_state, bt_update, positions, bt.block_until_ready
        )
    }
    del bt_state
    if ctx.jax is not None:
        jax = ctx.jax
        loops["jax"] = UpdateLoop(
            jax.jit(make_fn(jax.lax), donate_argnums=0),
            jax.device_put(state0),
            jax.device_put(update),
            positions,
            jax.block_until_ready,
        )
    s = interleave({k: v.sample for k, v in loops.items()}, ctx.reps(64, 8), warmup=2)
    peak = bt.memory_stats()["peak_bytes_in_use"]
    calls = loops["baton"].calls
    expected = replay(state0.copy(), update, [i % positions for i in range(calls)])
    jax_state = loops["jax"].state if "jax" in loops else None
    assert_close(name, expected, loops["baton"].state, jax_state, rtol=0)
    needed = before + temps.temp_size_in_bytes
    rows = [
        time_row(f"{name} time/step", s["baton"], s.get("jax"), "<= 1.0"),
        Row(
            case=f"{name} peak",
            unit="MiB",
            baton=peak / MiB,
            baseline=needed / MiB,
            baseline_name="state+update+temps",
            ratio=ratio(peak, needed),
            ratio_of="of needed",
            target="<= 1.05",
            extra={
                "temp_bytes": temps.temp_size_in_bytes,
                "bytes_in_use_before": before,
                "peak_bytes_in_use": peak,
            },
        ),
    ]
    for loop in loops.values():
        del loop.state
    return rows


def inplace_dus(ctx: Context) -> list[Row]:
    """1-D state, `lax.dynamic_update_slice(state, update, (i * k,))`."""
    nbytes = ctx.pick(256 * MiB, MiB)
    n = nbytes // 4
    k = n // 256
    rng = np.random.default_rng(5)
    state0 = rng.standard_normal(n).astype(np.float32)
    update = rng.standard_normal(k).astype(np.float32)

    def make_fn(lax: Any) -> Callable:
        """The step with one library's lax."""
        return lambda state, update, i: lax.dynamic_update_slice(
            state, update, (i * k,)
        )

    def replay(state: np.ndarray, upd: np.ndarray, idx: list[int]) -> np.ndarray:
        """The same updates in numpy."""
        for i in idx:
            state[i * k : (i + 1) * k] = upd
        return state

    return _run(
        ctx, f"inplace dus {nbytes // MiB} MiB", make_fn, state0, update, 256, replay
    )


def inplace_at_set(ctx: Context) -> list[Row]:
    """2-D state (rows x 4096 float32), `state.at[i].set(row)`."""
    nbytes = ctx.pick(256 * MiB, MiB)
    cols = 4096
    rows = nbytes // (4 * cols)
    rng = np.random.default_rng(6)
    state0 = rng.standard_normal((rows, cols)).astype(np.float32)
    row = rng.standard_normal(cols).astype(np.float32)

    def make_fn(lax: Any) -> Callable:
        """The step (the same code for both libraries)."""
        return lambda state, row, i: state.at[i].set(row)

    def replay(state: np.ndarray, r: np.ndarray, idx: list[int]) -> np.ndarray:
        """The same updates in numpy."""
        for i in idx:
            state[i] = r
        return state

    return _run(
        ctx,
        f"inplace at[i].set {nbytes // MiB} MiB",
        make_fn,
        state0,
        row,
        rows,
        replay,
    )


CASES = [
    Case(
        "inplace_dus",
        inplace_dus,
        "donated dynamic_update_slice loop on 256 MiB (smoke: 1 MiB)",
    ),
    Case(
        "inplace_at_set",
        inplace_at_set,
        "donated .at[i].set(row) loop on 256 MiB (smoke: 1 MiB)",
    ),
]
