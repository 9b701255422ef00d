"""A training step ``params - lr * grads`` over a pytree of 8 float32 arrays
(256 MiB of params; smoke: 1 MiB), jitted, with and without donating params.

In this process: time per step (synced, baton and JAX interleaved) and baton's
peak device memory from ``memory_stats`` against what the step needs (params
+ grads + temporaries; the update is elementwise, so temporaries are ~0 when
params are donated). In a fresh process per library and donation mode
(``run.py --child train``): peak RSS growth over the RSS after setup, the one
memory figure both libraries have on the CPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import numpy as np

import baton as bt

from _check import assert_close
from _context import Context
from _report import Row, ratio, time_row
from _timing import interleave, now_ns
from _train_child import N_ARRAYS, step
from cases import Case

MiB = 1 << 20
RUN_PY = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "run.py"
)


def _host_params(total_bytes: int, seed: int) -> list[np.ndarray]:
    """N_ARRAYS float32 arrays totalling `total_bytes`."""
    rng = np.random.default_rng(seed)
    n = total_bytes // (4 * N_ARRAYS)
    return [rng.standard_normal(n).astype(np.float32) for _ in range(N_ARRAYS)]


class TrainLoop:
    """`params = f(params, grads)` for one library; `sample()` times a synced
    step (owns its params)."""

    def __init__(self, f: Any, params: list, grads: list, sync: Any) -> None:
        """Keep the jitted step and the arrays."""
        self.f, self.params, self.grads, self.sync = f, params, grads, sync
        self.steps = 0

    def sample(self) -> float:
        """One step, synced; ns."""
        t0 = now_ns()
        self.params = self.f(self.params, self.grads)
        self.sync(self.params)
        self.steps += 1
        return now_ns() - t0


def train_step(ctx: Context) -> list[Row]:
    """Time per step and baton's peak memory, undonated and donated."""
    total = ctx.pick(256 * MiB, MiB)
    host_p, host_g = _host_params(total, 1), _host_params(total, 2)
    rows = []
    for donate in (0, 1):
        name = f"train {total // MiB} MiB donate={donate}"
        argnums = (0,) if donate else ()
        bt_f = bt.jit(step, donate_argnums=argnums)
        bt_p, bt_g = bt.device_put(host_p), bt.device_put(host_g)
        temps = bt_f.lower(bt_p, bt_g).compile().memory_analysis().temp_size_in_bytes
        bt.block_until_ready((bt_p, bt_g))
        before = bt.memory_stats()["bytes_in_use"]
        bt.reset_peak_memory_stats()
        loops = {"baton": TrainLoop(bt_f, bt_p, bt_g, bt.block_until_ready)}
        del bt_p, bt_g
        if ctx.jax is not None:
            jax = ctx.jax
            loops["jax"] = TrainLoop(
                jax.jit(step, donate_argnums=argnums),
                jax.device_put(host_p),
                jax.device_put(host_g),
                jax.block_until_ready,
            )
        s = interleave(
            {k: v.sample for k, v in loops.items()}, ctx.reps(10, 3), warmup=1
        )
        peak = bt.memory_stats()["peak_bytes_in_use"]
        expected = [p.copy() for p in host_p]
        for _ in range(loops["baton"].steps):
            expected = step(expected, host_g)
        jax_p = np.stack(loops["jax"].params) if "jax" in loops else None
        assert_close(
            name,
            np.stack(expected),
            np.stack(loops["baton"].params),
            jax_p,
            rtol=1e-5,
            atol=1e-6,
        )
        del jax_p
        for loop in loops.values():
            del loop.params, loop.grads
        needed = before + (0 if donate else total) + temps
        rows.append(
            time_row(f"{name} time/step", s["baton"], s.get("jax"), "<= 1.0", unit="ms")
        )
        rows.append(
            Row(
                case=f"{name} peak (memory_stats)",
                unit="MiB",
                baton=(peak - before) / MiB,
                baseline=total / MiB,
                baseline_name="params",
                ratio=ratio(peak, needed),
                ratio_of="of needed",
                target="<= 1.05" if donate else "-",
                extra={
                    "peak_bytes_in_use": peak,
                    "bytes_in_use_before": before,
                    "temp_bytes": temps,
                    "needed_bytes": needed,
                    "growth_over_params": (peak - before) / total,
                },
                note="baton = peak growth over params+grads; needed = params+grads"
                + ("" if donate else "+new params")
                + "+temps",
            )
        )
    return rows


def _child(lib: str, donate: int, mib: int, steps: int) -> dict[str, Any]:
    """Run one library's training loop in a fresh process (the `--child train`
    side) and return its RSS figures in MiB."""
    args = [
        sys.executable,
        RUN_PY,
        "--child",
        "train",
        "--lib",
        lib,
        "--donate",
        str(donate),
        "--mib",
        str(mib),
        "--steps",
        str(steps),
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"child {' '.join(args[1:])} failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if not result["ok"]:
        raise AssertionError(f"child {lib} donate={donate}: {result['error']}")
    return result


def train_rss(ctx: Context) -> list[Row]:
    """Peak RSS growth of the training loop in fresh processes, both libraries."""
    mib = ctx.pick(256, 1)
    steps = ctx.reps(5, 3)
    rows = []
    for donate in (0, 1):
        b = _child("baton", donate, mib, steps)
        j = _child("jax", donate, mib, steps) if ctx.jax is not None else None
        jg = None if j is None else j["growth_mib"]
        slack = 1 + 0.01 * mib  # noise allowance: 1 MiB + 1% of params
        rows.append(
            Row(
                case=f"train {mib} MiB donate={donate} RSS growth (fresh process)",
                unit="MiB",
                baton=b["growth_mib"],
                jax=jg,
                baseline=float(mib),
                baseline_name="params",
                ratio=ratio(b["growth_mib"], jg),
                ratio_of="growth/JAX",
                target="<= JAX+1%",
                met=None if jg is None else b["growth_mib"] <= jg + slack,
                extra={"baton": b, "jax": j},
            )
        )
    return rows


CASES = [
    Case(
        "train_step",
        train_step,
        "params - lr*grads, 8 arrays of 256 MiB total: time, baton peak memory",
    ),
    Case(
        "train_rss",
        train_rss,
        "the same step in fresh processes: peak RSS growth, baton vs JAX",
    ),
]
