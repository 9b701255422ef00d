"""Result rows, the tables printed to stdout, the JSON file, machine info and
the size sweep's plot.

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


def target_bound(target: str) -> float | None:
    """The X of a target written "<= X" or ">= X" (None for any other form)."""
    parts = target.split()
    if len(parts) < 2 or parts[0] not in ("<=", ">="):
        return None
    return float(parts[1])


def judge(value: float | None, target: str) -> bool | None:
    """Whether `value` meets a target written "<= X" or ">= X" (None: no
    value or a target that is not of that form)."""
    bound = target_bound(target)
    if value is None or bound is None:
        return None
    return value <= bound if target.split()[0] == "<=" else value >= bound


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


def _sweep_groups(rows: list[Row]) -> dict[str, dict[str, dict[int, Row]]]:
    """The sweep's rows by axis ("elements", "side"), then case, then size, in
    the order they ran (rows without ``extra["case"]`` are left out)."""
    groups: dict[str, dict[str, dict[int, Row]]] = {}
    for r in rows:
        if "case" in r.extra and "size" in r.extra:
            axis = r.extra.get("axis", "elements")
            groups.setdefault(axis, {}).setdefault(r.extra["case"], {})
            groups[axis][r.extra["case"]][r.extra["size"]] = r
    return groups


def _size_label(n: int, axis: str) -> str:
    """'2^20' for a power-of-two element count; the side itself for a matrix."""
    k = n.bit_length() - 1
    return f"2^{k}" if axis == "elements" and n == 1 << k else str(n)


def sweep_table(rows: list[Row], judged: bool) -> str:
    """The size sweep as one line per case and one column per size, cells the
    ratio baton/JAX ("*" where a judged cell misses its target, "-" where the
    case has no such size); one block per axis (elements, matrix side), then
    the cases that failed."""
    out = [
        "size sweep: baton's median time / JAX's (lower is better"
        + ("; * over the target)" if judged else "; smoke: not judged)")
    ]
    for axis, cases in _sweep_groups(rows).items():
        sizes = sorted({n for per_size in cases.values() for n in per_size})
        lines = [[f"case ({axis})", *(_size_label(n, axis) for n in sizes), "target"]]
        for case, per_size in cases.items():
            cells = []
            for n in sizes:
                r = per_size.get(n)
                if r is None:
                    cells.append("-")
                elif r.ratio is None:
                    cells.append("n/a")
                else:
                    over = judged and judge(r.ratio, r.target) is False
                    cells.append(f"{r.ratio:.2f}{'*' if over else ''}")
            target = next(iter(per_size.values())).target
            lines.append([case, *cells, target])
        widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
        out.append("")
        for n, line in enumerate(lines):
            first, *rest = line
            out.append(
                " | ".join(
                    [first.ljust(widths[0])]
                    + [c.rjust(w) for c, w in zip(rest, widths[1:])]
                ).rstrip()
            )
            if n == 0:
                out.append("-+-".join("-" * w for w in widths))
    failed = [r.case for r in rows if r.note.startswith("FAILED")]
    if failed:
        out += ["", "FAILED (see the traceback on stderr): " + ", ".join(failed)]
    return "\n".join(out)


def write_sweep_plot(rows: list[Row], path: str, title: str = "") -> str:
    """Plot the size sweep into the PNG `path`: x = size (log2; elements, or
    the matrix side in a second panel), y = baton's time / JAX's (log), one
    line per case, a line at 1.0 (and at any other target). Return what was
    done, for the log; matplotlib missing or no ratio to draw is said, never
    raised."""
    groups = _sweep_groups(rows)
    if not any(
        r.ratio is not None
        for cases in groups.values()
        for per_size in cases.values()
        for r in per_size.values()
    ):
        return "no plot: no ratio to draw (no JAX, or every case failed)"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FixedLocator, NullLocator
    except ImportError as e:
        return f"no plot: matplotlib is not importable ({e})"
    widths = [3 if axis == "elements" else 2 for axis in groups]
    fig, axes = plt.subplots(
        1,
        len(groups),
        figsize=(5 * len(groups) + 2, 5),
        squeeze=False,
        gridspec_kw={"width_ratios": widths},
    )
    for ax, (axis, cases) in zip(axes[0], groups.items()):
        sizes, ratios, targets = set(), [], set()
        for case, per_size in cases.items():
            points = [(n, r.ratio) for n, r in sorted(per_size.items()) if r.ratio]
            if not points:
                continue
            xs, ys = zip(*points)
            sizes.update(xs)
            ratios.extend(ys)
            ax.plot(xs, ys, marker="o", markersize=4, label=case)
            targets.update(target_bound(r.target) for r in per_size.values())
        ax.axhline(1.0, color="black", linewidth=1)
        for t in sorted(targets - {None, 1.0}):
            ax.axhline(t, color="grey", linewidth=1, linestyle="--")
            ax.annotate(
                f"target {t:g}",
                (1, t),
                xycoords=("axes fraction", "data"),
                ha="right",
                va="bottom",
                fontsize=8,
                color="grey",
            )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ticks = sorted(sizes)
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels(
            [
                f"$2^{{{n.bit_length() - 1}}}$" if axis == "elements" else str(n)
                for n in ticks
            ],
            fontsize=9,
        )
        lo, hi = min([*ratios, 1.0]), max([*ratios, 1.0])
        yticks = [
            v
            for v in (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10, 20, 50)
            if lo / 1.5 <= v <= hi * 1.5
        ]
        ax.yaxis.set_major_locator(FixedLocator(yticks))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_yticklabels([f"{v:g}" for v in yticks])
        ax.set_ylim(lo / 1.25, hi * 1.25)
        ax.set_xlabel(
            "float32 elements" if axis == "elements" else "matrix side (n x n)"
        )
        ax.set_ylabel("baton time / JAX time (median)")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title or "size sweep: baton / JAX (below 1: baton is faster)")
    fig.tight_layout()
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"wrote {path}"


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
        "baton_blas": _baton_blas(),
    }


def _baton_blas() -> str:
    """The BLAS kernel baton's OpenBLAS chose for this CPU, and whether it
    fits (bt.print_environment_info() says the same)."""
    try:
        from baton import _baton

        info = _baton.blas_info()
    except Exception as e:  # an older baton without blas_info
        return f"unknown ({type(e).__name__})"
    version = info["config"].split(" ")[1] if info["config"] else "?"
    fit = "" if info["kernel_fits_cpu"] else ", DOES NOT FIT the CPU"
    return f"OpenBLAS {version} {info['corename']} kernels on {info['cpu_isa']}{fit}"


def write_json(path: str, machine: dict[str, Any], rows: list[Row], **extra) -> None:
    """Write {"machine": ..., "results": [row, ...], **extra} to `path`."""
    doc = {"machine": machine, **extra, "results": [asdict(r) for r in rows]}
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
