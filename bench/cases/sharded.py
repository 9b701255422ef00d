"""A data-parallel training step on 4 CPU devices (issue 37): jit of an MLP
step whose batch is split over the mesh and whose parameters are
replicated, partitioned by each library (baton: compiler/spmd_partitioner.h
and jit/spmd_executable.h; JAX: XLA's SPMD partitioner), each in a fresh
process (``run.py --child sharded``: the device count is read at import).

Measured across sizes in one run: the MLP 784-W-W-10 for every hidden width
W in WIDTHS and every global batch B in BATCHES (B/4 rows per device), a
row per (W, B), each point a fresh process per library, both started and
warmed up, then their steps taken in turns (`ROUNDS` blocks each, the order
alternating: drift on a shared machine hits both alike).
W = B = 512 is the case's original single point (its row keeps its name).
Each point runs `_steps(W, B)` timed steps (30 to 200: more where a step is
short), the same for both libraries, and checks that both end at the same
loss and parameters. Rows carry ``extra = {"case", "size", "axis"}`` so that
run.py prints the compact table (a line per width, a column per batch).
Smoke: 784-16-16-10 at batch 32 and 64, 3 steps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from _context import Context
from _report import Row, time_row
from _timing import interleave
from cases import Case

RUN_PY = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "run.py"
)

WIDTHS = (128, 512, 1024)  # hidden width of both hidden layers
BATCHES = (128, 512, 2048)  # global batch, split over the 4 devices
SMOKE_POINTS = ((16, 32), (16, 64))  # (width, batch)
STEP_FLOP_BUDGET = 60e9  # flop of one library's timed steps, before clamping
MIN_STEPS, MAX_STEPS = 30, 200
ROUNDS = 10  # blocks of steps per library, taken in turns


def _points(ctx: Context) -> list[tuple[int, int]]:
    """The (width, batch) points of this run, by width, then batch."""
    return ctx.pick([(w, b) for w in WIDTHS for b in BATCHES], list(SMOKE_POINTS))


def _steps(width: int, batch: int) -> int:
    """Timed steps at a point: about STEP_FLOP_BUDGET flop in all (a step
    is 6 flop per weight per example: 2 forward, 4 for the two backward
    GEMMs), at least MIN_STEPS (a stable median) and at most MAX_STEPS."""
    flop = 6 * batch * (784 * width + width * width + width * 10)
    return max(MIN_STEPS, min(MAX_STEPS, int(STEP_FLOP_BUDGET / flop)))


class _Child:
    """One library's process (``run.py --child sharded``): compiled and
    warmed up when made; `step()` runs one timed step there and returns
    its time (ns); `finish()` ends it and returns its final loss and
    parameters' checksum."""

    def __init__(self, lib: str, batch: int, width: int) -> None:
        self.args = [sys.executable, RUN_PY, "--child", "sharded", "--lib", lib,
                     "--batch", str(batch), "--width", str(width)]
        env = {k: v for k, v in os.environ.items() if k != "BATON_NUM_CPU_DEVICES"}
        self.proc = subprocess.Popen(self.args, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)
        self._expect("ready")

    def _line(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            self.proc.kill()
            err = self.proc.stderr.read()[-3000:]
            raise RuntimeError(f"child {' '.join(self.args[1:])} failed:\n{err}")
        return line.strip()

    def _expect(self, want: str) -> None:
        # Libraries may print notices first; the protocol's line comes last.
        while (line := self._line()) != want:
            pass

    def step(self) -> float:
        self.proc.stdin.write("step\n")
        self.proc.stdin.flush()
        return float(self._line())

    def finish(self) -> dict[str, Any]:
        out, err = self.proc.communicate("end\n", timeout=600)
        if self.proc.returncode != 0:
            raise RuntimeError(f"child {' '.join(self.args[1:])} failed:\n{err[-3000:]}")
        return json.loads(out.strip().splitlines()[-1])

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def _assert_same(what: str, b: dict[str, Any], j: dict[str, Any]) -> None:
    """Both libraries ended at the same loss and parameters' checksum."""
    for key in ("loss", "checksum"):
        scale = max(1.0, abs(j[key])) if key == "loss" else abs(j[key])
        assert abs(b[key] - j[key]) <= 1e-4 * scale, (
            f"{what}: {key} baton {b[key]!r}, jax {j[key]!r}"
        )


def sharded_dp_step(ctx: Context) -> list[Row]:
    """Time per data-parallel step on 4 devices, baton and JAX, at each size."""
    rows = []
    for width, batch in _points(ctx):
        steps = ctx.reps(_steps(width, batch), 3)
        what = f"sharded DP step 4 devices (MLP 784-{width}-{width}-10, batch {batch})"
        # Both processes compiled and warmed up, then their steps in turns
        # (ROUNDS blocks each, the order alternating) so that drift on a
        # shared machine hits both alike.
        libs = ["baton"] + (["jax"] if ctx.jax is not None else [])
        children: dict[str, _Child] = {}
        try:
            for lib in libs:
                children[lib] = _Child(lib, batch, width)
            timed = interleave({lib: c.step for lib, c in children.items()}, steps,
                               warmup=0, block=max(1, -(-steps // ROUNDS)))
            final = {lib: c.finish() for lib, c in children.items()}
        finally:
            for c in children.values():
                c.kill()
        if "jax" in final:
            _assert_same(what, final["baton"], final["jax"])
        row = time_row(
            what,
            timed["baton"],
            timed.get("jax"),
            "<= 1.0",
            unit="ms",
        )
        row.extra = {
            "case": f"sharded DP MLP 784-{width}-{width}-10",
            "size": batch,
            "axis": "batch",
            "width": width,
            "steps": steps,
        }
        rows.append(row)
        ratio = "n/a" if row.ratio is None else f"{row.ratio:.2f} time/JAX"
        ctx.progress(f"    width {width}, batch {batch}: {steps} steps, {ratio}")
    return rows


CASES = [
    Case(
        "sharded_dp_step",
        sharded_dp_step,
        "data-parallel MLP training step on 4 CPU devices, partitioned by jit, "
        "across hidden widths and batch sizes",
    )
]
