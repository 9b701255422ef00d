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
NS_PER = {"µs": 1e3, "ms": 1e6, "s": 1e9}  # nanoseconds per time unit


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
        elif "baseline_missing" in r.extra:  # wanted, not measured (JSON: why)
            base = "n/a"
        rat = "n/a" if r.ratio is None else f"{r.ratio:.2f} {r.ratio_of}".strip()
        if r.note.startswith(("FAILED", "skipped")):
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


def _grid(lines: list[list[str]]) -> list[str]:
    """A compact table's lines: the first column left-aligned, the others
    right-aligned, a rule under the head."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
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
    return out


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
        out.append("")
        out.extend(_grid(lines))
    failed = [r.case for r in rows if r.note.startswith("FAILED")]
    if failed:
        out += ["", "FAILED (see the traceback on stderr): " + ", ".join(failed)]
    return "\n".join(out)


def baseline_table(rows: list[Row]) -> str | None:
    """The size sweep on an accelerator, against the torch baselines: a line
    per case, a column per size, cells baton's throughput over the
    baseline's (``extra["of_baseline"]``: bytes moved per second over torch's
    copy, GFLOP/s over torch.matmul's); "n/a" where the baseline is missing.
    None when no row asked for a baseline."""
    out = [
        "size sweep: baton's throughput / the torch baseline's (higher is "
        "better; elementwise: bytes moved / time over the device-to-device "
        "copy's, device_put: over the pinned host-to-device copy's, matmul: "
        "over torch.matmul's GFLOP/s)"
    ]
    wanted = [r for r in rows if "baseline_spec" in r.extra]
    if not wanted:
        return None
    missing = [
        r.extra.get("baseline_missing", "not measured")
        for r in wanted
        if r.baseline is None
    ]
    if len(missing) == len(wanted):  # one line instead of cells of n/a
        return f"torch baselines: n/a ({missing[0]})"
    for axis, cases in _sweep_groups(rows).items():
        sizes = sorted({n for per_size in cases.values() for n in per_size})
        lines = [[f"case ({axis})", *(_size_label(n, axis) for n in sizes), "baseline"]]
        for case, per_size in cases.items():
            asking = [r for r in per_size.values() if "baseline_spec" in r.extra]
            if not asking:
                continue
            cells = []
            for n in sizes:
                r = per_size.get(n)
                value = None if r is None else r.extra.get("of_baseline")
                if r is None:
                    cells.append("-")
                elif value is None:
                    cells.append("n/a")
                else:  # two digits that say something below 0.1 too
                    cells.append(f"{value:.2f}" if value >= 0.1 else f"{value:.2g}")
            names = {r.baseline_name for r in asking if r.baseline_name}
            lines.append([case, *cells, ", ".join(sorted(names)) or "n/a"])
        if len(lines) > 1:
            out.append("")
            out.extend(_grid(lines))
    return "\n".join(out)


# The y axis's ticks (log scale), those within the data's range.
_YTICKS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7)
_YTICKS += (1, 1.5, 2, 3, 5, 10, 20, 50)


def _plot_panel(
    ax: Any,
    axis: str,
    cases: dict[str, dict[int, Row]],
    value: Any,
    ylabel: str,
    targets: bool = True,
) -> None:
    """One panel of the sweep's plot: `value(row)` against size (log-log), a
    line per case, a line at 1.0 and (with `targets`) at each other target."""
    from matplotlib.ticker import FixedLocator, NullLocator

    sizes, ratios, bounds = set(), [], set()
    for case, per_size in cases.items():
        points = [(n, value(r)) for n, r in sorted(per_size.items()) if value(r)]
        if not points:
            continue
        xs, ys = zip(*points)
        sizes.update(xs)
        ratios.extend(ys)
        ax.plot(xs, ys, marker="o", markersize=4, label=case)
        if targets:
            bounds.update(target_bound(r.target) for r in per_size.values())
    ax.axhline(1.0, color="black", linewidth=1)
    for t in sorted(bounds - {None, 1.0}):
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
    yticks = [v for v in _YTICKS if lo / 1.5 <= v <= hi * 1.5]
    ax.yaxis.set_major_locator(FixedLocator(yticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_yticklabels([f"{v:g}" for v in yticks])
    ax.set_ylim(lo / 1.25, hi * 1.25)
    ax.set_xlabel("float32 elements" if axis == "elements" else "matrix side (n x n)")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)
    if ratios:
        ax.legend(fontsize=8)


def write_sweep_plot(rows: list[Row], path: str, title: str = "") -> str:
    """Plot the size sweep into the PNG `path`: x = size (log2; elements, or
    the matrix side in a second panel), y = baton's time / JAX's (log), one
    line per case, a line at 1.0 (and at any other target); on an
    accelerator with torch's baselines a second row of panels, baton's
    throughput over the baseline's. Return what was done, for the log;
    matplotlib missing or no ratio to draw is said, never raised."""
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
    except ImportError as e:
        return f"no plot: matplotlib is not importable ({e})"
    against = any(
        "of_baseline" in r.extra
        for cases in groups.values()
        for per_size in cases.values()
        for r in per_size.values()
    )
    widths = [3 if axis == "elements" else 2 for axis in groups]
    fig, axes = plt.subplots(
        2 if against else 1,
        len(groups),
        figsize=(5 * len(groups) + 2, 10 if against else 5),
        squeeze=False,
        gridspec_kw={"width_ratios": widths},
    )
    for ax, (axis, cases) in zip(axes[0], groups.items()):
        _plot_panel(
            ax, axis, cases, lambda r: r.ratio, "baton time / JAX time (median)"
        )
    if against:  # --platform: baton's throughput over torch's (higher: better)
        for ax, (axis, cases) in zip(axes[1], groups.items()):
            _plot_panel(
                ax,
                axis,
                cases,
                lambda r: r.extra.get("of_baseline"),
                "baton throughput / torch baseline's",
                targets=False,
            )
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


def machine_info(blas: str, versions: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the figures depend on: CPU, core count, load, library versions
    (baton, jax, jaxlib, baton_blas from `versions` when given: a --platform
    run's parent imports neither library, its children report them)."""
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
    if versions is None:
        versions = {
            "baton": _version("baton"),
            "jax": _version("jax"),
            "jaxlib": _version("jaxlib"),
            "baton_blas": _baton_blas(),
        }
    return {
        "cpu_model": _cpu_model(),
        "nproc": os.cpu_count(),
        "loadavg_at_start": load,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "baton": versions.get("baton"),
        "jax": versions.get("jax"),
        "jaxlib": versions.get("jaxlib"),
        "numpy": np.__version__,
        "numpy_blas": blas,
        "baton_blas": versions.get("baton_blas"),
    }


def rss_line() -> str:
    """This process's resident memory now and at its peak (for the log)."""
    try:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return (
            f"RSS {int(fields['VmRSS'].split()[0]) >> 10} MiB, "
            f"peak {int(fields['VmHWM'].split()[0]) >> 10} MiB"
        )
    except (OSError, KeyError, ValueError):
        return "RSS unknown"


def _baton_blas() -> str:
    """The BLAS kernel baton's OpenBLAS chose for this CPU, whether it fits,
    and how long its workers poll after a call (bt.print_environment_info()
    says the same)."""
    try:
        from baton import _baton, _blas_environment

        info = _baton.blas_info()
        spin = f", workers poll 2^{_blas_environment.poll_log2_cycles()} cycles"
    except Exception as e:  # an older baton without blas_info
        return f"unknown ({type(e).__name__})"
    version = info["config"].split(" ")[1] if info["config"] else "?"
    fit = "" if info["kernel_fits_cpu"] else ", DOES NOT FIT the CPU"
    return (
        f"OpenBLAS {version} {info['corename']} kernels on {info['cpu_isa']}"
        f"{fit}{spin}"
    )


def write_run_json(
    args: Any,
    machine: dict[str, Any],
    rows: list[Row],
    *,
    failures: list,
    jax_missing: Any,
    meta: dict[str, Any] | None = None,
    **extra,
) -> None:
    """`write_json` of one run of bench/run.py to ``args.json``: its mode
    (smoke or full), whether it swept, ``extra`` (``complete=False`` while
    cases remain, ``wall_s`` at the end), the platform's ``meta``, why JAX
    was missing and the failures."""
    write_json(
        args.json,
        machine,
        rows,
        mode="smoke" if args.smoke else "full",
        sweep=args.sweep,
        **extra,
        **(meta or {}),
        jax_missing=jax_missing,
        failures=failures,
    )


def write_json(path: str, machine: dict[str, Any], rows: list[Row], **extra) -> None:
    """Write {"machine": ..., "results": [row, ...], **extra} to `path`."""
    doc = {"machine": machine, **extra, "results": [asdict(r) for r in rows]}
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
