"""Result rows, the table printed to stdout, the JSON file and machine info.

A `Row` is one measured figure for baton next to JAX's and/or a native
baseline, with the ratio that is judged against a target. Values are stored
in the row's unit (µs, GB/s, GFLOP/s, MiB); `ratio_of` says what the ratio
divides (e.g. "time/JAX": baton's time over JAX's, lower is better; "of
memcpy": baton's throughput over memcpy's, higher is better).
"""

from __future__ import annotations

import json
import os
import platform
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from _timing import Samples

TIME_UNIT = "µs"


@dataclass
class Row:
    """One line of the table and one object of the JSON results."""

    case: str
    unit: str
    baton: float | None
    jax: float | None = None
    baseline: float | None = None
    baseline_name: str | None = None
    ratio: float | None = None
    ratio_of: str = ""
    target: str = "-"
    met: bool | None = None
    best: dict[str, float | None] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    note: str = ""


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is missing or b is 0."""
    if a is None or b is None or b == 0:
        return None
    return a / b


def time_row(
    case: str,
    baton: Samples,
    jax: Samples | None,
    target: str = "-",
    unit: str = TIME_UNIT,
    baseline: Samples | None = None,
    baseline_name: str | None = None,
) -> Row:
    """A row of times (median ns in, `unit` out), ratio = baton's time / JAX's."""
    scale = {"µs": 1e-3, "ms": 1e-6, "s": 1e-9}[unit]

    def conv(s: Samples | None, best: bool = False) -> float | None:
        """Median (or best) of `s` in the row's unit."""
        return None if s is None else (s.best if best else s.median) * scale

    return Row(
        case=case,
        unit=unit,
        baton=conv(baton),
        jax=conv(jax),
        baseline=conv(baseline),
        baseline_name=baseline_name,
        ratio=ratio(conv(baton), conv(jax)),
        ratio_of="time/JAX",
        target=target,
        best={
            "baton": conv(baton, True),
            "jax": conv(jax, True),
            "baseline": conv(baseline, True),
        },
    )


def rate(work: float, s: Samples | None, best: bool = False) -> float | None:
    """`work` units per ns of the median (or best) sample (bytes/ns = GB/s,
    flop/ns = GFLOP/s)."""
    if s is None:
        return None
    return work / (s.best if best else s.median)


def judge(value: float | None, target: str) -> bool | None:
    """Whether `value` meets a target written "<= X" or ">= X" (None: no
    value or a target that is not of that form)."""
    if value is None:
        return None
    parts = target.split()
    if len(parts) < 2 or parts[0] not in ("<=", ">="):
        return None
    bound = float(parts[1])
    return value <= bound if parts[0] == "<=" else value >= bound


def fmt_value(value: float | None, unit: str) -> str:
    """A value with its unit, e.g. '4.12 µs', '10.3 GB/s'; 'n/a' when missing."""
    if value is None:
        return "n/a"
    if unit in (TIME_UNIT, "ms"):
        digits = 2 if value < 100 else 1 if value < 10000 else 0
    elif unit == "MiB":
        digits = 1
    else:
        digits = 2 if value < 10 else 1
    return f"{value:.{digits}f} {unit}"


def fmt_met(row: Row, judged: bool) -> str:
    """'yes' / 'NO' / '-' (no target or no value) / 'smoke' (not judged)."""
    if row.note.startswith("FAILED"):
        return "FAILED"
    if not judged and row.target != "-":
        return "smoke"
    if row.met is None:
        return "-"
    return "yes" if row.met else "NO"


def table(rows: list[Row], judged: bool) -> str:
    """The results as an aligned text table: case | baton | JAX | baseline |
    ratio | target | met."""
    head = ["case", "baton", "JAX", "baseline", "ratio", "target", "met"]
    lines = [head]
    for r in rows:
        base = ""
        if r.baseline is not None:
            base = f"{fmt_value(r.baseline, r.unit)} {r.baseline_name or ''}".strip()
        rat = "n/a" if r.ratio is None else f"{r.ratio:.2f} {r.ratio_of}".strip()
        if r.note.startswith("FAILED"):
            rat = r.note
        lines.append(
            [
                r.case,
                fmt_value(r.baton, r.unit),
                fmt_value(r.jax, r.unit),
                base or "-",
                rat,
                r.target,
                fmt_met(r, judged),
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = []
    for n, line in enumerate(lines):
        out.append(" | ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
        if n == 0:
            out.append("-+-".join("-" * w for w in widths))
    return "\n".join(out)


def _cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (or platform's guess)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(module: str) -> str | None:
    """A module's __version__, or None when it cannot be imported."""
    try:
        return __import__(module).__version__
    except Exception:
        return None


def machine_info(blas: str) -> dict[str, Any]:
    """What the figures depend on: CPU, core count, load, library versions."""
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
    return {
        "cpu_model": _cpu_model(),
        "nproc": os.cpu_count(),
        "loadavg_at_start": load,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "baton": _version("baton"),
        "jax": _version("jax"),
        "jaxlib": _version("jaxlib"),
        "numpy": np.__version__,
        "numpy_blas": blas,
    }


def write_json(path: str, machine: dict[str, Any], rows: list[Row], **extra) -> None:
    """Write {"machine": ..., "results": [row, ...], **extra} to `path`."""
    doc = {"machine": machine, **extra, "results": [asdict(r) for r in rows]}
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
