"""Summarizes a pytest JUnit XML report of optax's tests run on baton
(tools/run_optax_tests.sh): per file passed / failed / skipped, the pass
rate, the failing cases with the first line of their error, and whether
the rate reaches the threshold (exit status 1 if not).

The pass rate is passed / (cases - skipped), where a file's cases are the
larger of what baton collected and what the real JAX collects
(collected_under_jax.txt): a case baton never ran counts as failed.
"""

from __future__ import annotations

import argparse
import collections
import sys
import xml.etree.ElementTree as ET


def _file_of(classname: str, name: str) -> str:
    """``optax._src.alias_test.AliasTest`` -> ``optax/_src/alias_test.py``."""
    for dotted in (classname, name):
        parts = dotted.split(".")
        if "optax" in parts:  # a rootdir above the wheel's folder
            parts = parts[parts.index("optax") :]
        for i in range(len(parts), 0, -1):
            if parts[i - 1].endswith("_test"):
                return "/".join(parts[:i]) + ".py"
    return classname or name


def _first_line(element: ET.Element) -> str:
    text = (element.get("message") or element.text or "").strip()
    return text.splitlines()[0][:240] if text else element.tag


def read(junit: str) -> dict[str, dict[str, list]]:
    """{file: {"passed": [...], "failed": [(case, why)], "skipped": [...]}}."""
    out: dict[str, dict[str, list]] = collections.defaultdict(
        lambda: {"passed": [], "failed": [], "skipped": []}
    )
    for case in ET.parse(junit).getroot().iter("testcase"):
        cls, name = case.get("classname", ""), case.get("name", "")
        f = _file_of(cls, name)
        ident = f"{cls.rsplit('.', 1)[-1]}::{name}" if cls else name
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is not None:
            out[f]["failed"].append((ident, _first_line(bad)))
        elif case.find("skipped") is not None:
            out[f]["skipped"].append(ident)
        else:
            out[f]["passed"].append(ident)
    return out


def read_expected(path: str) -> dict[str, int]:
    want = {}
    with open(path) as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip()
            if line:
                f, n = line.split()
                want[f] = int(n)
    return want


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--junit", required=True)
    p.add_argument("--expected", required=True)
    p.add_argument("--min-pass-rate", type=float, required=True, help="percent")
    p.add_argument("--summary", help="also write the report here")
    args = p.parse_args(argv)

    got = read(args.junit)
    want = read_expected(args.expected)
    lines = [
        f"{'file':40s} {'passed':>7s} {'failed':>7s} {'skipped':>8s} {'cases':>6s}"
    ]
    tot_pass = tot_fail = tot_skip = tot_cases = 0
    failures: list[str] = []
    for f in sorted(set(want) | set(got)):
        r = got[f]
        ran = len(r["passed"]) + len(r["failed"]) + len(r["skipped"])
        # A collection error is one "failed" entry standing for the file.
        cases = max(ran, want.get(f, 0))
        npass, nskip = len(r["passed"]), len(r["skipped"])
        nfail = cases - npass - nskip
        tot_pass += npass
        tot_fail += nfail
        tot_skip += nskip
        tot_cases += cases
        lines.append(f"{f:40s} {npass:7d} {nfail:7d} {nskip:8d} {cases:6d}")
        for ident, why in r["failed"]:
            failures.append(f"{f}::{ident}: {why}")
        if ran < want.get(f, 0) and not r["failed"]:
            failures.append(f"{f}: {want[f] - ran} case(s) not collected")
    counted = tot_cases - tot_skip
    rate = 100.0 * tot_pass / counted if counted else 0.0
    lines.append(
        f"{'total':40s} {tot_pass:7d} {tot_fail:7d} {tot_skip:8d} {tot_cases:6d}"
    )
    lines.append("")
    lines.append("failing cases:")
    lines.extend("  " + f for f in failures)
    lines.append("")
    verdict = "ok" if rate >= args.min_pass_rate else "BELOW THRESHOLD"
    lines.append(
        f"optax on baton: pass rate {rate:.1f}% ({tot_pass} of {counted} cases "
        f"that are not skipped); threshold {args.min_pass_rate:.1f}%: {verdict}"
    )
    report = "\n".join(lines)
    if args.summary:
        with open(args.summary, "w") as fh:
            fh.write(report + "\n")
    print(report)
    return 0 if rate >= args.min_pass_rate else 1


if __name__ == "__main__":
    sys.exit(main())
