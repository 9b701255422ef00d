"""A data-parallel training step on 4 CPU devices (issue 37): jit of an MLP
step whose batch is split over the mesh and whose parameters are
replicated, partitioned by each library (baton: compiler/spmd_partitioner.h
and jit/spmd_executable.h; JAX: XLA's SPMD partitioner), each in a fresh
process (``run.py --child sharded``: the device count is read at import).
Checks that both end at the same loss and parameters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from _context import Context
from _report import Row, time_row
from _timing import Samples
from cases import Case

RUN_PY = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "run.py"
)


def _child(lib: str, batch: int, width: int, steps: int) -> dict[str, Any]:
    args = [sys.executable, RUN_PY, "--child", "sharded", "--lib", lib,
            "--batch", str(batch), "--width", str(width), "--steps", str(steps)]
    env = {k: v for k, v in os.environ.items() if k != "BATON_NUM_CPU_DEVICES"}
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"child {' '.join(args[1:])} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def sharded_dp_step(ctx: Context) -> list[Row]:
    """Time per data-parallel step on 4 devices, baton and JAX."""
    batch, width = ctx.pick(512, 32), ctx.pick(512, 16)
    steps = ctx.reps(30, 3)
    b = _child("baton", batch, width, steps)
    j = _child("jax", batch, width, steps) if ctx.jax is not None else None
    if j is not None:
        assert abs(b["loss"] - j["loss"]) <= 1e-4 * max(1.0, abs(j["loss"])), (b, j)
        assert abs(b["checksum"] - j["checksum"]) <= 1e-4 * abs(j["checksum"]), (b, j)
    return [
        time_row(
            f"sharded DP step 4 devices (MLP 784-{width}-{width}-10, batch {batch})",
            Samples(b["ns"]),
            None if j is None else Samples(j["ns"]),
            "<= 1.0",
            unit="ms",
        )
    ]


CASES = [
    Case(
        "sharded_dp_step",
        sharded_dp_step,
        "data-parallel MLP training step on 4 CPU devices, partitioned by jit",
    )
]
