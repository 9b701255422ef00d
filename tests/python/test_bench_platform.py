"""The plumbing of ``bench/run.py --platform``: how the parent merges the rows
of baton's and JAX's processes, compares the values they saved and attaches
torch's baselines (bench/_platform.py), and how a process saves its values
(bench/_platform_child.py). Pure functions on made-up rows; no benchmark runs.
"""

import os
import re
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.insert(0, os.path.abspath(BENCH))

from _platform import (  # noqa: E402
    attach_baseline,
    child_env,
    compare_values,
    merge_rows,
    skipped_row,
)
from _platform_child import ValueRecorder  # noqa: E402
from _report import Row, baseline_table, table  # noqa: E402


def _row(name, unit, baton=None, jax=None, **extra):
    return Row(
        case=name,
        unit=unit,
        baton=baton,
        jax=jax,
        ratio_of="time/JAX",
        target="<= 1.0",
        best={"baton": baton, "jax": jax, "baseline": None},
        extra=dict(extra),
    )


def test_merge_takes_each_library_from_its_process_and_converts_units():
    baton = [
        _row("sweep a*2+1 2^28", "ms", baton=12.0, calls_per_sample=1, reps=5),
        _row("only baton", "µs", baton=3.0),
    ]
    jax = [
        _row("sweep a*2+1 2^28", "µs", jax=8000.0, calls_per_sample=2, reps=5),
        _row("only jax", "µs", jax=5.0),
    ]
    merged = merge_rows(baton, jax)
    assert [r.case for r in merged] == ["sweep a*2+1 2^28", "only baton", "only jax"]
    first = merged[0]
    assert first.unit == "ms"
    assert first.baton == 12.0
    assert first.jax == pytest.approx(8.0)  # 8000 µs in the baton row's ms
    assert first.best["jax"] == pytest.approx(8.0)
    assert first.ratio == pytest.approx(1.5)
    assert first.extra["calls_per_sample"] == 1  # baton's plan
    assert first.extra["jax"] == {"calls_per_sample": 2}  # what differs
    assert merged[1].jax is None and merged[1].ratio is None
    assert merged[2].jax == 5.0 and merged[2].baton is None
    assert baton[0].jax is None  # the inputs are left as they were


def test_merge_keeps_ratios_that_are_not_time_over_jax():
    b = Row(case="x", unit="GB/s", baton=10.0, ratio=0.5, ratio_of="of memcpy")
    j = Row(case="x", unit="GB/s", baton=None, jax=20.0)
    (row,) = merge_rows([b], [j])
    assert row.jax == 20.0
    assert row.ratio == 0.5


def test_merge_refuses_units_it_cannot_convert():
    with pytest.raises(ValueError):
        merge_rows([_row("x", "µs", baton=1.0)], [_row("x", "GB/s", jax=1.0)])


def _save(tmp_path, name, values, rule, what="v", stride=1):
    arr = np.asarray(values, np.float32)
    path = str(tmp_path / f"{name}.npy")
    np.save(path, arr)
    return {
        "what": what,
        "file": path,
        "rule": rule,
        "shape": list(arr.shape),
        "dtype": str(arr.dtype),
        "stride": stride,
    }


def test_compare_values_within_twice_the_tolerance(tmp_path):
    rule = {"rtol": 1e-6, "atol": 0.0}
    b = [_save(tmp_path, "b", [1.0, 2.0], rule)]
    j = [_save(tmp_path, "j", [1.0, 2.0 * (1 + 1.5e-6)], rule)]
    assert compare_values(b, j) == (1, [])
    j = [_save(tmp_path, "j2", [1.0, 2.0 * (1 + 3e-6)], rule)]
    compared, errors = compare_values(b, j)
    assert compared == 1 and len(errors) == 1
    assert "v: baton and jax differ" in errors[0]


def test_compare_values_exact_norm_shape_and_unmatched(tmp_path):
    exact = {"rtol": 0.0, "atol": 0.0}
    b = [
        _save(tmp_path, "b0", [1, 2, 3], exact, what="take"),
        _save(tmp_path, "b1", [1, 2, 3], exact, what="take"),  # a second "take"
        _save(tmp_path, "b2", np.ones((2, 2)), {"norm_rtol": 1e-3}, what="mm"),
        _save(tmp_path, "b3", [1, 2], exact, what="shape"),
        _save(tmp_path, "b4", [7], exact, what="baton only"),
    ]
    j = [
        _save(tmp_path, "j0", [1, 2, 3], exact, what="take"),
        _save(tmp_path, "j1", [1, 2, 4], exact, what="take"),
        _save(tmp_path, "j2", np.ones((2, 2)) * (1 + 1e-3), {"norm_rtol": 1e-3}, "mm"),
        _save(tmp_path, "j3", [1, 2, 3], exact, what="shape"),
    ]
    compared, errors = compare_values(b, j)
    assert compared == 4
    assert len(errors) == 2
    assert errors[0].startswith("take (#2): baton and jax differ: element 2 is")
    assert errors[1] == "shape: baton returned float32[2], jax float32[3]"
    j[2] = _save(tmp_path, "j5", np.ones((2, 2)) * 1.01, {"norm_rtol": 1e-3}, "mm")
    _, errors = compare_values(b, j)
    assert any(e.startswith("mm: baton and jax differ by 0.0099") for e in errors)


def test_attach_copy_baseline_gives_bandwidths():
    n = 1 << 20
    row = _row(
        "sweep a*2+1 2^20",
        "µs",
        baton=10.0,
        jax=20.0,
        baseline_spec={"kind": "d2d", "nbytes": 4 * n},
        bytes=8 * n,
    )
    attach_baseline(row, {"ns": [8000.0, 9000.0, 10000.0], "name": "torch D2D copy"})
    assert row.baseline == pytest.approx(9.0)  # the median, in µs
    assert row.best["baseline"] == pytest.approx(8.0)
    assert row.baseline_name == "torch D2D copy"
    # a copy of 4n bytes reads and writes 8n bytes in 9 µs
    assert row.extra["baseline_gbps"] == pytest.approx(8 * n / 9000)
    assert row.extra["baton_gbps"] == pytest.approx(8 * n / 10000)
    assert row.extra["jax_gbps"] == pytest.approx(8 * n / 20000)
    assert row.extra["of_baseline"] == pytest.approx(0.9)


def test_attach_matmul_baseline_and_a_missing_one():
    row = _row(
        "sweep matmul 1024x1024",
        "ms",
        baton=2.0,
        baseline_spec={"kind": "matmul", "side": 1024},
        flop=2 * 1024**3,
    )
    attach_baseline(row, {"ns": [1e6], "name": "torch.matmul"})
    assert row.baseline == pytest.approx(1.0)
    assert row.extra["baseline_gflops"] == pytest.approx(2 * 1024**3 / 1e6)
    assert row.extra["of_baseline"] == pytest.approx(0.5)
    assert row.extra["jax_gflops"] is None

    missing = _row(
        "sweep tanh(a) 2^10",
        "µs",
        baton=1.0,
        baseline_spec={"kind": "d2d", "nbytes": 4096},
        bytes=8192,
    )
    attach_baseline(missing, {"missing": "torch is not importable"})
    assert missing.baseline is None
    assert missing.extra["baseline_missing"] == "torch is not importable"
    line = table([missing], judged=False).splitlines()[2]
    assert line.split(" | ")[3].strip() == "n/a"
    assert baseline_table([missing]) == "torch baselines: n/a (torch is not importable)"


def test_baseline_table_cells():
    rows = []
    for n, of in ((1 << 10, 0.25), (1 << 12, None)):
        r = _row(
            f"sweep a*2+1 {n}",
            "µs",
            baton=1.0,
            case="a*2+1",
            size=n,
            axis="elements",
            baseline_spec={"kind": "d2d", "nbytes": 4 * n},
            bytes=8 * n,
        )
        if of is not None:
            r.baseline, r.baseline_name = 1.0, "torch D2D copy"
            r.extra["of_baseline"] = of
        rows.append(r)
    lines = baseline_table(rows).splitlines()
    assert lines[2].split() == [
        "case",
        "(elements)",
        "|",
        "2^10",
        "|",
        "2^12",
        "|",
        "baseline",
    ]
    assert lines[4].replace(" ", "") == "a*2+1|0.25|n/a|torchD2Dcopy"


def test_skipped_rows_say_why_in_the_table():
    row = skipped_row("train_step", "cuda", "runs both libraries in one process")
    assert row.note == "skipped on cuda: runs both libraries in one process"
    line = table([row], judged=True).splitlines()[2]
    assert "skipped on cuda: runs both libraries in one process" in line


def test_child_environments():
    baton = child_env("baton", "cuda")
    assert baton["BATON_PLATFORMS"] == "cuda,cpu"
    jax = child_env("jax", "cuda")
    assert jax["JAX_PLATFORMS"] == "cuda"
    assert jax["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    assert jax["BATON_PLATFORMS"] == "cpu"
    assert child_env("jax", "sim")["JAX_PLATFORMS"] == "cpu"
    assert child_env("baton", "sim")["BATON_PLATFORMS"] == "sim,cpu"


def test_recorder_saves_small_values_whole_and_large_ones_sampled(
    tmp_path, monkeypatch
):
    import _platform_child

    monkeypatch.setattr(_platform_child, "FULL_MAX", 8)
    monkeypatch.setattr(_platform_child, "SAMPLE", 4)
    rec = ValueRecorder(str(tmp_path), "baton")
    rec("small", np.arange(6, dtype=np.float32).reshape(2, 3), {"rtol": 0, "atol": 0})
    rec("large", np.arange(10, dtype=np.float32), {"norm_rtol": 1e-5})
    rec("scalar", np.float32(3), {"rtol": 1e-6, "atol": 0})
    small, large, scalar = rec.take()
    assert rec.take() == []
    assert small["shape"] == [2, 3] and small["stride"] == 1
    np.testing.assert_array_equal(np.load(small["file"]), np.arange(6).reshape(2, 3))
    assert large["shape"] == [10] and large["stride"] == 3
    np.testing.assert_array_equal(np.load(large["file"]), [0, 3, 6, 9])
    assert large["rule"] == {"norm_rtol": 1e-5}
    assert scalar["shape"] == [] and float(np.load(scalar["file"])) == 3.0


def test_cases_option_matches_a_name_or_a_whole_group():
    from cases import Case

    def run(ctx):
        return []

    run.__module__ = "cases.dispatch"
    case = Case("jit_trivial", run, "x + 1", on_device=True)
    assert case.group == "dispatch"
    assert case.selected(re.compile("dispatch"))  # the group, whole
    assert case.selected(re.compile("trivial"))  # part of the name
    assert case.selected(re.compile("^jit_trivial$|matmul"))
    assert not case.selected(re.compile("patch"))  # part of the group only
