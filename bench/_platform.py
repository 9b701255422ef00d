"""``run.py --platform cuda|sim``: baton on an accelerator against JAX, each
library in a process of its own, merged into one table.

The parent imports neither library. It starts three processes
(``_platform_child.py``), each for the whole run:
  baton   ``BATON_PLATFORMS=<platform>,cpu``: baton on cuda:0 or sim:0;
  jax     ``JAX_PLATFORMS=cuda`` (sim: ``cpu``, "JAX on cpu: no GPU"),
          ``XLA_PYTHON_CLIENT_PREALLOCATE=false``;
  torch   the GPU baselines (``_torch_child.py``), when torch has CUDA.
It asks baton's and JAX's process to run each selected case in turn,
alternating which goes first, then merges their rows (`merge_rows`: baton's
value from baton's process, JAX's from JAX's, the ratio recomputed),
compares the values each computed (`compare_values`: every value a case
checked against its reference, saved by both processes; whole arrays up to
4M elements, a strided sample above) and asks torch's process for the
baselines the rows name (`attach_baseline`). A case not written for this
(``Case.on_device`` false) is a row "skipped on <platform>: why". A process
that dies or hangs fails its case and is started again for the next. The
JSON is rewritten after every case (``"complete": false`` until the end), so
a run cut short keeps what it measured.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable

import numpy as np

from _check import compare
from _report import NS_PER, Row, judge, ratio

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
RUN_PY = os.path.join(BENCH_DIR, "run.py")
HELLO_TIMEOUT_S = 600  # importing a library and starting its device
CASE_TIMEOUT_S = 1800  # one case in one process
LIBS = ("baton", "jax")


def progress(message: str) -> None:
    """A progress line on stderr, as Context.progress writes them."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def child_env(lib: str, platform: str) -> dict[str, str]:
    """The environment of `lib`'s process on `platform`."""
    env = dict(os.environ)
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    if lib == "baton":
        env["BATON_PLATFORMS"] = f"{platform},cpu"
    elif lib == "jax":
        env["BATON_PLATFORMS"] = "cpu"  # the case modules import baton
        env["JAX_PLATFORMS"] = "cuda" if platform == "cuda" else "cpu"
    return env


class Child:
    """One library's process: started with its hello read (``self.hello``,
    ``{"ok": false, "why": ...}`` when it could not start), then asked one
    request at a time."""

    def __init__(self, lib: str, argv: list[str], env: dict[str, str]) -> None:
        """Start the process and wait for its hello."""
        self.lib = lib
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.hello = self._reply(HELLO_TIMEOUT_S, "starting")
        if not self.hello.get("ok"):
            self.hello.setdefault("why", self.hello.get("error", "?"))
            self.close()

    def _read(self) -> None:
        """Forward the process's stdout lines to the queue; None at its end."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _reply(self, timeout: float, doing: str) -> dict[str, Any]:
        """The next JSON line, or ``{"error": ...}`` when the process ends or
        says nothing for `timeout` seconds (then it is killed)."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.proc.kill()
            self.proc.wait()
            return {
                "error": f"{self.lib} process: no answer in {timeout:.0f} s "
                f"while {doing} (killed)"
            }
        if line is None:
            rc = self.proc.wait()
            return {
                "error": f"{self.lib} process exited with status {rc} while "
                f"{doing} (its stderr is above)"
            }
        return json.loads(line)

    @property
    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.proc.poll() is None

    def ask(
        self, request: dict[str, Any], timeout: float, doing: str
    ) -> dict[str, Any]:
        """Send one request, return its reply (or ``{"error": ...}``)."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except OSError:
            return self._reply(1, doing)
        return self._reply(timeout, doing)

    def close(self) -> None:
        """Ask the process to quit; kill it if it does not within 30 s."""
        if self.alive:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write('{"quit": true}\n')
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def _convert(value: float | None, unit: str, to: str) -> float | None:
    """A value in `unit` expressed in `to` (time units convert; others must
    be equal)."""
    if value is None or unit == to:
        return value
    if unit in NS_PER and to in NS_PER:
        return value * NS_PER[unit] / NS_PER[to]
    raise ValueError(f"cannot express {unit} in {to}")


def merge_rows(baton_rows: list[Row], jax_rows: list[Row]) -> list[Row]:
    """One library's rows and the other's, as one process running both would
    have made them: rows matched by name (baton's order, then any row only
    JAX's process made), JAX's value and best in the unit of baton's row,
    ``time/JAX`` ratios recomputed; extra figures of JAX's row that differ
    from baton's (its plan of calls and repetitions) under ``extra["jax"]``."""
    jax_by_case = {r.case: r for r in jax_rows}
    merged = []
    for b in baton_rows:
        row = dataclasses.replace(b, best=dict(b.best), extra=dict(b.extra))
        j = jax_by_case.pop(b.case, None)
        if j is not None:
            row.jax = _convert(j.jax, j.unit, row.unit)
            row.best["jax"] = _convert(j.best.get("jax"), j.unit, row.unit)
            if row.ratio_of == "time/JAX":
                row.ratio = ratio(row.baton, row.jax)
            differ = {k: v for k, v in j.extra.items() if row.extra.get(k) != v}
            if differ:
                row.extra["jax"] = differ
        merged.append(row)
    merged.extend(jax_by_case.values())
    return merged


def compare_values(
    baton_values: list[dict[str, Any]], jax_values: list[dict[str, Any]]
) -> tuple[int, list[str]]:
    """Compare the values both processes saved under the same name (the n-th
    of a name with the n-th), each to twice the tolerance it was checked to
    against its reference, as ``_check.assert_close`` compares the two
    libraries: (how many pairs were compared, a message per mismatch)."""

    def keyed(records: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
        seen: dict[str, int] = {}
        out = {}
        for r in records:
            k = seen.get(r["what"], 0)
            seen[r["what"]] = k + 1
            out[(r["what"], k)] = r
        return out

    b, j = keyed(baton_values), keyed(jax_values)
    compared, errors = 0, []
    for key, rb in b.items():
        rj = j.get(key)
        if rj is None:
            continue
        what = key[0] if key[1] == 0 else f"{key[0]} (#{key[1] + 1})"
        compared += 1
        if rb["shape"] != rj["shape"] or rb["dtype"] != rj["dtype"]:
            errors.append(
                f"{what}: baton returned {rb['dtype']}{rb['shape']}, "
                f"jax {rj['dtype']}{rj['shape']}"
            )
            continue
        vb, vj = np.load(rb["file"]), np.load(rj["file"])
        rule = rb["rule"]
        sample = "" if rb["stride"] == 1 else f" (every {rb['stride']}th element)"
        try:
            if "norm_rtol" in rule:
                diff = float(np.linalg.norm(vb.astype(np.float64) - vj))
                norm = float(np.linalg.norm(vj.astype(np.float64)))
                err = diff / norm if norm else diff
                if not err <= 2 * rule["norm_rtol"]:
                    raise AssertionError(
                        f"{what}: baton and jax differ by {err:.3g} of the norm{sample}"
                    )
            else:
                compare(
                    f"{what}: baton and jax differ{sample}",
                    vb,
                    vj,
                    2 * rule["rtol"],
                    2 * rule["atol"],
                )
        except AssertionError as e:
            errors.append(" ".join(str(e).split())[:300])
    return compared, errors


def attach_baseline(row: Row, result: dict[str, Any]) -> None:
    """Put a torch baseline (`result`: ``{"ns": [...], "name": ...}`` or
    ``{"missing": why}``) into the row that asked for it
    (``extra["baseline_spec"]``): its median and best time in the row's unit
    in the baseline column, and the throughputs in ``extra``: the
    baseline's, baton's and JAX's (GB/s of the bytes each moves, a copy
    counting read + write; or GFLOP/s) and ``of_baseline``, baton's over the
    baseline's."""
    spec = row.extra["baseline_spec"]
    if "ns" not in result:
        row.extra["baseline_missing"] = result.get("missing", "not measured")
        return
    ns = sorted(result["ns"])
    median = float(np.median(ns))
    row.baseline = median / NS_PER[row.unit]
    row.baseline_name = result["name"]
    row.best["baseline"] = ns[0] / NS_PER[row.unit]
    if spec["kind"] == "matmul":
        unit, work, base_work = "gflops", row.extra["flop"], 2 * spec["side"] ** 3
    else:
        factor = 2 if spec["kind"] == "d2d" else 1  # a copy reads and writes
        unit, work, base_work = "gbps", row.extra["bytes"], factor * spec["nbytes"]
    base_rate = base_work / median
    row.extra[f"baseline_{unit}"] = base_rate
    for lib in LIBS:
        value = getattr(row, lib)
        rate = None if not value else work / (value * NS_PER[row.unit])
        row.extra[f"{lib}_{unit}"] = rate
    row.extra["of_baseline"] = ratio(row.extra[f"baton_{unit}"], base_rate)


class Platform:
    """The processes of one --platform run and what they said."""

    def __init__(self, args: Any, values_dir: str) -> None:
        """Start baton's process, then JAX's (unless --no-jax) and torch's."""
        self.args, self.values_dir = args, values_dir
        self.children: dict[str, Child | None] = {}
        self.hellos: dict[str, dict[str, Any]] = {}
        for lib in ("baton", "jax", "torch"):
            if lib == "jax" and args.no_jax:
                self.hellos[lib] = {"ok": False, "why": "disabled by --no-jax"}
                self.children[lib] = None
                continue
            self.start(lib)
            if lib == "baton" and not self.hellos["baton"].get("ok"):
                break
        # The libraries measured: those whose process started (a process that
        # dies later is started again, and its cases fail if it cannot be).
        self.libs = [lib for lib in LIBS if self.hellos.get(lib, {}).get("ok")]

    def argv(self, lib: str) -> list[str]:
        """The command line of `lib`'s process."""
        a = self.args
        argv = [sys.executable, RUN_PY, "--child", "platform", "--lib", lib]
        argv += ["--platform", a.platform, "--values-dir", self.values_dir]
        argv += ["--smoke"] * a.smoke + ["--sweep"] * a.sweep
        if a.repeat is not None:
            argv += ["--repeat", str(a.repeat)]
        return argv

    def start(self, lib: str) -> None:
        """(Re)start `lib`'s process; keep it only if its hello says ok."""
        progress(f"starting {lib}'s process")
        child = Child(lib, self.argv(lib), child_env(lib, self.args.platform))
        self.hellos[lib] = child.hello
        self.children[lib] = child if child.hello.get("ok") else None

    def ask(self, lib: str, request: dict[str, Any], doing: str) -> dict[str, Any]:
        """`lib`'s reply to `request`; its process started again first if it
        died on an earlier request (``{"error": ...}`` if it cannot be)."""
        child = self.children.get(lib)
        if child is not None and not child.alive:
            progress(f"{lib}'s process had exited (status {child.proc.returncode})")
            self.start(lib)
            child = self.children[lib]
            if child is None:
                return {
                    "error": f"{lib} process: could not restart "
                    f"({self.hellos[lib].get('why')})"
                }
        if child is None:
            return {"error": f"{lib} process: not running"}
        return child.ask(request, CASE_TIMEOUT_S, doing)

    def close(self) -> None:
        """End every process."""
        for child in self.children.values():
            if child is not None:
                child.close()


def _rows_of(reply: dict[str, Any]) -> list[Row]:
    """The rows of a case's reply."""
    return [Row(**r) for r in reply.get("rows", [])]


def run_case(
    platform: Platform, case: dict[str, Any], jax_first: bool, judged: bool
) -> tuple[list[Row], list[str]]:
    """One case in baton's and JAX's processes (JAX's first if `jax_first`),
    merged, compared, its baselines attached: (rows, failure messages)."""
    name = case["name"]
    replies = {}
    for lib in reversed(platform.libs) if jax_first else platform.libs:
        replies[lib] = platform.ask(lib, {"case": name}, f"running {name}")
    failures = []
    for lib, reply in replies.items():
        if "error" in reply:
            failures.append(f"{name}: error: {reply['error']}")
        elif reply.get("failure"):
            f = reply["failure"]
            failures.append(f"{name}: {f['kind']} in {lib}'s process: {f['message']}")
    baton = replies["baton"]
    jax = replies.get("jax", {})
    rows = merge_rows(_rows_of(baton), _rows_of(jax))
    compared, errors = compare_values(baton.get("values", []), jax.get("values", []))
    failures += [f"{name}: correctness: {e}" for e in errors]
    for reply in replies.values():
        for r in reply.get("values", []):
            try:
                os.remove(r["file"])
            except OSError:
                pass
    if compared:
        progress(f"    {compared} values compared, baton's against JAX's")
    for row in rows:
        if "baseline_spec" not in row.extra:
            continue
        torch = platform.children.get("torch")
        if torch is None:
            result = {"missing": platform.hellos["torch"].get("why", "no torch")}
        else:
            result = platform.ask(
                "torch",
                {"baseline": row.extra["baseline_spec"]},
                f"a baseline of {name}",
            )
            if "error" in result:
                result = {"missing": result["error"]}
        attach_baseline(row, result)
    if failures:
        kind = "correctness" if all(": correctness" in f for f in failures) else "error"
        rows.append(Row(case=name, unit="", baton=None, note=f"FAILED {kind}"))
    for row in rows:
        if not judged:
            row.met = None
        elif row.met is None:
            row.met = judge(row.ratio, row.target)
    return rows, failures


def skipped_row(name: str, platform: str, why: str) -> Row:
    """The row of a case that does not run on `platform`."""
    return Row(case=name, unit="", baton=None, note=f"skipped on {platform}: {why}")


def where(device: dict[str, Any]) -> str:
    """A device as the header names it: "cuda:0 (NVIDIA H100 ...)", "cpu:0"."""
    kind = device["kind"]
    return device["name"] + ("" if kind == device["platform"] else f" ({kind})")


def jax_note(platform: str, hellos: dict[str, dict[str, Any]]) -> str:
    """Where JAX ran, for the header and the JSON."""
    h = hellos.get("jax", {})
    if not h.get("ok"):
        return f"JAX: n/a ({h.get('why', '?')})"
    if platform == "sim":
        return f"JAX on cpu: no GPU ({where(h['device'])})"
    return f"JAX on {where(h['device'])}"


def header(platform: str, hellos: dict[str, dict[str, Any]]) -> str:
    """The line that says where each library ran (stdout, above the table)."""
    torch = hellos.get("torch", {})
    base = (
        f"torch {torch['versions']['torch']} on {where(torch['device'])}"
        if torch.get("ok")
        else f"n/a ({torch.get('why', '?')})"
    )
    return (
        f"platform {platform}: baton on {where(hellos['baton']['device'])}; "
        f"{jax_note(platform, hellos)}; baselines: {base}"
    )


def run_platform(args: Any, report: Callable[..., int]) -> int:
    """The whole --platform run: start the processes, run the cases, print
    and write the results through `report` (run.py's); the exit status (1 if
    a case failed)."""
    values_dir = tempfile.mkdtemp(prefix="baton-bench-values-")
    # A `timeout` (tools/gpu_check.sh) sends SIGTERM to the whole process
    # group: exit through the finally blocks, which end the processes and
    # remove the saved values (the JSON so far is already written).
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        platform = Platform(args, values_dir)
        try:
            return _run(args, platform, report)
        finally:
            platform.close()
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(values_dir, ignore_errors=True)


def _run(args: Any, platform: Platform, report: Callable[..., int]) -> int:
    """run_platform's body, with the processes started."""
    from _baselines import blas_name
    from _report import machine_info, write_json, write_run_json

    hellos = platform.hellos
    if not hellos["baton"].get("ok"):
        why = f"baton cannot run on {args.platform}: {hellos['baton'].get('why')}"
        print(why)
        write_json(
            args.json,
            machine_info(blas_name(), {}),
            [],
            platform=args.platform,
            complete=True,
            failures=[why],
        )
        return 1
    listed = hellos["baton"]["cases"]
    cases = listed
    if args.cases:
        pattern = re.compile(args.cases)
        cases = [
            c
            for c in listed
            if pattern.search(c["name"]) or pattern.fullmatch(c["group"])
        ]
    if not cases:
        for c in listed:
            print(f"{c['name']:28s} {c['about']}")
        return 2
    versions = {**hellos["baton"]["versions"]}
    if hellos["jax"].get("ok"):
        versions.update(hellos["jax"]["versions"])
    machine = machine_info(blas_name(), versions)
    head = header(args.platform, hellos)
    progress(
        f"{'smoke' if args.smoke else 'full'} {'sweep' if args.sweep else 'run'}, "
        f"{len(cases)} cases, {machine['cpu_model']} x{machine['nproc']}, "
        f"baton {machine['baton']}, jax {machine['jax'] or 'n/a'}; {head}"
    )
    torch = hellos["torch"]
    meta = {
        "platform": args.platform,
        "devices": {lib: h["device"] for lib, h in hellos.items() if h.get("ok")},
        "jax_note": jax_note(args.platform, hellos),
        "jax_matmul_precision": hellos["jax"].get("matmul_precision"),
        "baselines": torch["versions"] if torch.get("ok") else None,
        "baselines_missing": None if torch.get("ok") else torch.get("why"),
    }
    judged = not args.smoke
    jax_missing = None if hellos["jax"].get("ok") else hellos["jax"].get("why")
    rows: list[Row] = []
    failures: list[str] = []
    start = time.perf_counter()
    for n, case in enumerate(cases, 1):
        progress(f"({n}/{len(cases)}) {case['name']}: {case['about']}")
        t0 = time.perf_counter()
        if not case["on_device"]:
            from cases import OFF_DEVICE

            rows.append(skipped_row(case["name"], args.platform, OFF_DEVICE))
            continue
        got, failed = run_case(platform, case, jax_first=n % 2 == 0, judged=judged)
        rows += got
        failures += failed
        for f in failed:
            progress(f"FAILED {f}")
        progress(f"    done in {time.perf_counter() - t0:.1f} s")
        write_run_json(
            args,
            machine,
            rows,
            complete=False,
            meta=meta,
            jax_missing=jax_missing,
            failures=failures,
        )
    wall = time.perf_counter() - start
    return report(
        args,
        machine,
        rows,
        failures,
        wall,
        len(cases),
        jax_missing,
        head=head,
        meta={**meta, "complete": True},
        plot_title=(
            f"size sweep on {args.platform}: baton {machine['baton']} on "
            f"{where(hellos['baton']['device'])} / jax {machine['jax']}, "
            f"{jax_note(args.platform, hellos)}: time (median; below 1: baton "
            f"faster)\n{machine['cpu_model']} x{machine['nproc']}, "
            f"{time.strftime('%Y-%m-%d')}"
        ),
    )
