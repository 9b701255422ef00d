"""baton vs JAX, side by side, in one run: the single benchmark entry point.

    python3 bench/run.py [--smoke] [--sweep] [--cases REGEX] [--repeat N]
                         [--json PATH] [--plot PATH] [--no-jax] [--list]
                         [--platform {cpu,cuda,sim}]
    bash tools/run_bench.sh [same options]      # installs jax (+ matplotlib) first

Runs every case (bench/cases/) for baton and for JAX in the same process,
checks that both libraries compute the same values, prints a table to stdout
(case | baton | JAX | baseline | ratio | target | met) and writes JSON.
Progress goes to stderr. ``--smoke`` uses tiny sizes and few repetitions
(CI: every case and every check still runs; no target is judged). The exit
status is non-zero when a correctness check fails or a case raises; missed
targets are reported, never fatal (the machines are shared and noisy).
Without JAX the JAX column reads "n/a".

``--sweep`` runs the size sweep (bench/cases/sweep.py) instead of the default
cases: a few operations at sizes from 2^10 elements up, each a row; after the
table it prints a compact one (a line per case, a column per size, the
ratio baton/JAX) and plots the ratios into a PNG beside the JSON (``--plot``).
A default case measured across sizes (sharded_dp_step: hidden width x batch)
gets the same compact table after the main one, without a plot.

``--platform cuda`` (or ``sim``, baton's simulated accelerator) runs baton on
that device and JAX on its CUDA plugin (for sim: on the CPU), each in a
process of its own, with torch's copies and matmul as baselines, and merges
them into the same table and JSON (``_platform.py``).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
import time
import traceback

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
if BENCH_DIR not in sys.path:
    sys.path.insert(0, BENCH_DIR)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (the --child options are internal)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--smoke",
        action="store_true",
        help="tiny sizes, few repetitions, no targets judged (CI)",
    )
    p.add_argument(
        "--sweep",
        action="store_true",
        help="run the size sweep (bench/cases/sweep.py) instead of the default cases",
    )
    p.add_argument(
        "--cases",
        default=None,
        metavar="REGEX",
        help="run only cases whose name matches (re.search)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=None,
        metavar="N",
        help="timed repetitions per measurement (default: per case)",
    )
    p.add_argument(
        "--json",
        default=os.path.join(BENCH_DIR, "results.json"),
        metavar="PATH",
        help="where to write the results (JSON)",
    )
    p.add_argument(
        "--plot",
        default=None,
        metavar="PATH",
        help="where --sweep writes its plot (PNG; default: the --json path with .png)",
    )
    p.add_argument(
        "--no-jax",
        action="store_true",
        help="run without JAX even when it is installed",
    )
    p.add_argument(
        "--platform",
        choices=["cpu", "cuda", "sim"],
        default="cpu",
        help="where baton runs: cpu (both libraries in this process), cuda or sim "
        "(baton's simulated accelerator): each library in a process of its own, "
        "JAX on its CUDA plugin (sim: on the CPU), torch's baselines",
    )
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument(
        "--child", choices=["train", "sharded", "platform"], help=argparse.SUPPRESS
    )
    p.add_argument("--lib", choices=["baton", "jax", "torch"], help=argparse.SUPPRESS)
    p.add_argument("--values-dir", help=argparse.SUPPRESS)
    p.add_argument("--donate", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--mib", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--steps", type=int, default=5, help=argparse.SUPPRESS)
    p.add_argument("--batch", type=int, default=512, help=argparse.SUPPRESS)
    p.add_argument("--width", type=int, default=512, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.repeat is not None and args.repeat < 1:
        p.error("--repeat must be >= 1")
    return args


def run_cases(ctx, cases, judged: bool) -> tuple[list, list[str]]:
    """Run each case, catching failures so that the others still run; return
    (rows, failure messages)."""
    from _report import Row, judge, rss_line

    rows, failures = [], []
    for n, case in enumerate(cases, 1):
        ctx.progress(f"({n}/{len(cases)}) {case.name}: {case.about}")
        t0 = time.perf_counter()
        try:
            got = case.run(ctx)
        except Exception as e:  # a wrong answer or a library error
            kind = "correctness" if isinstance(e, AssertionError) else "error"
            traceback.print_exc(file=sys.stderr)  # the full message
            short = " ".join(str(e).split())[:300]  # one line for the summary
            failures.append(f"{case.name}: {kind}: {type(e).__name__}: {short}")
            ctx.progress(f"FAILED {case.name} ({kind}, see the traceback above)")
            got = [Row(case=case.name, unit="", baton=None, note=f"FAILED {kind}")]
        for row in got:
            if not judged:
                row.met = None
            elif row.met is None:
                row.met = judge(row.ratio, row.target)
        rows.extend(got)
        gc.collect()
        ctx.progress(f"    done in {time.perf_counter() - t0:.1f} s; {rss_line()}")
    return rows, failures


def progress(message: str) -> None:
    """A progress line on stderr (as Context.progress)."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def _plot_title(machine: dict) -> str:
    """The sweep plot's title: what is drawn, on which machine, how loaded."""
    return (
        f"size sweep: baton {machine['baton']} / jax {machine['jax']} time "
        f"(median; below 1: baton faster)\n{machine['cpu_model']} "
        f"x{machine['nproc']}, {time.strftime('%Y-%m-%d')}, load average "
        f"{(machine.get('loadavg_at_start') or ['?'])[0]:.3} at start"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the selected cases, print the table, write the JSON; return the
    exit status (1 if any check failed)."""
    args = parse_args(argv)
    if args.child == "train":  # a fresh process: import only the library
        from _train_child import child_main

        child_main(args.lib, args.donate, args.mib, args.steps)
        return 0
    if args.child == "sharded":  # a fresh process with 4 devices
        from _sharded_child import child_main as sharded_main

        sharded_main(args.lib, args.batch, args.width)
        return 0
    if args.child == "platform":  # one library's process of a --platform run
        from _platform_child import child_main as platform_main

        platform_main(
            args.lib,
            args.platform,
            args.smoke,
            args.sweep,
            args.repeat,
            args.values_dir,
        )
        return 0
    if args.platform != "cpu" and not args.list:  # a process per library
        from _platform import run_platform

        return run_platform(args, report)

    from _context import Context, load_jax

    jax, jnp, why_no_jax = load_jax(args.no_jax)

    from _baselines import blas_name
    from _report import machine_info
    from cases import all_cases, sweep_cases

    chosen = sweep_cases() if args.sweep else all_cases()
    cases = chosen
    if args.cases:
        pattern = re.compile(args.cases)
        cases = [c for c in cases if c.selected(pattern)]
    if args.list or not cases:
        for c in all_cases() if args.list else chosen:
            print(f"{c.name:28s} {c.about}")
        if args.list:
            for c in sweep_cases(args.platform):
                print(f"{c.name:28s} {c.about} (--sweep)")
        return 0 if args.list else 2
    ctx = Context(smoke=args.smoke, repeat=args.repeat, jax=jax, jnp=jnp)
    machine = machine_info(blas_name())
    ctx.progress(
        f"{'smoke' if args.smoke else 'full'} {'sweep' if args.sweep else 'run'}, "
        f"{len(cases)} cases, "
        f"{machine['cpu_model']} x{machine['nproc']}, baton {machine['baton']}, "
        f"jax {machine['jax'] if jax else 'n/a (' + why_no_jax + ')'}, "
        f"numpy {machine['numpy']} ({machine['numpy_blas']}); "
        f"baton's BLAS: {machine['baton_blas']}"
    )
    start = time.perf_counter()
    rows, failures = run_cases(ctx, cases, judged=not args.smoke)
    wall = time.perf_counter() - start
    return report(
        args,
        machine,
        rows,
        failures,
        wall,
        len(cases),
        why_no_jax,
        _plot_title(machine),
    )


def report(
    args: argparse.Namespace,
    machine: dict,
    rows: list,
    failures: list[str],
    wall: float,
    n_cases: int,
    why_no_jax: str | None,
    plot_title: str,
    head: str | None = None,
    meta: dict | None = None,
) -> int:
    """Print the tables (`head` above them: a --platform run's devices), write
    the JSON (with `meta`: a --platform run's fields) and the sweep's plot;
    return the exit status (1 if any case failed)."""
    from _report import (
        baseline_table,
        sweep_table,
        table,
        write_run_json,
        write_sweep_plot,
    )

    try:
        machine["loadavg_at_end"] = list(os.getloadavg())
    except OSError:
        pass
    if head:
        print(head + "\n")
    print(table(rows, judged=not args.smoke))
    if args.sweep or any("size" in r.extra for r in rows):  # e.g. sharded_dp_step
        print("\n" + sweep_table(rows, judged=not args.smoke))
    against = baseline_table(rows) if meta else None  # --platform's torch baselines
    if against:
        print("\n" + against)
    print(
        f"\n{'smoke' if args.smoke else 'full'} {'sweep' if args.sweep else 'run'}: "
        f"{n_cases} cases in {wall:.1f} s; ratio 'time/JAX': baton's time / "
        f"JAX's (lower is better); 'of X': baton's throughput / X's (higher is "
        f"better)"
    )
    write_run_json(
        args,
        machine,
        rows,
        wall_s=wall,
        meta=meta,
        jax_missing=why_no_jax,
        failures=failures,
    )
    progress(f"wrote {args.json}")
    if args.sweep:
        plot = args.plot or os.path.splitext(args.json)[0] + ".png"
        try:  # the plot never fails the run
            progress(write_sweep_plot(rows, plot, plot_title))
        except Exception as e:
            progress(f"no plot: {type(e).__name__}: {e}")
    if failures:
        print(f"\n{len(failures)} case(s) FAILED:", *failures, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
