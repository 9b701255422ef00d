"""The main job (examples/train_and_serve.py, README's first command), run
with few steps: it trains, checkpoints into pinned memory, swaps the trained
parameters into a serving copy while requests are in flight, and writes the
profiler's artefacts. These tests check what it returns and leaves behind.

The job runs once for the module (about two seconds); its memory figures
were taken by the job itself after block_until_ready, from memory_stats.
"""

import contextlib
import gzip
import io
import json
import os
import sys

import numpy as np
import pytest

import baton as bt

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
if EXAMPLES not in sys.path:
    sys.path.insert(0, EXAMPLES)

import train_and_serve  # noqa: E402 -- examples/train_and_serve.py

KINDS = ("device", "pinned_host", "unpinned_host")
# 100 steps: the progress bar then waits for every second step only, so
# dispatch runs ahead of the device as it does in the full job.
STEPS = 100


def in_use():
    return {k: bt.memory_stats(memory_kind=k)["bytes_in_use"] for k in KINDS}


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    out = tmp_path_factory.mktemp("main_job")
    bt.clear_caches()
    before = in_use()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        figures = train_and_serve.main(
            ["--steps", str(STEPS), "--out", str(out), "--no-progress"],
            enforce=False,
        )
    # Everything the job made is gone once it returns: the compiled
    # programs' constants are in the caches, which clear_caches drops.
    bt.clear_caches()
    return {
        "figures": figures,
        "printed": printed.getvalue(),
        "before": before,
        "after": in_use(),
    }


def check(job, name):
    [result] = [r for r in job["figures"]["checks"] if r["name"] == name]
    return result


def mlp(params, x):
    """The job's model, in numpy, written again here."""
    h = x
    for layer in params[:-1]:
        h = np.tanh(h @ layer["w"] + layer["b"])
    return h @ params[-1]["w"] + params[-1]["b"]


def test_loss_decreases(job):
    f = job["figures"]
    assert f["steps"] == STEPS
    assert f["last_loss"] < 0.5 * f["first_loss"], (f["first_loss"], f["last_loss"])
    drawn = [loss for _, loss in f["losses"]]
    assert drawn[-1] == f["last_loss"] and min(drawn) < drawn[0]
    assert check(job, "loss")["ok"]


def test_donated_step_reuses_parameters_and_adam_state(job):
    f = job["figures"]
    assert f["step_analysis"]["alias"] == f["param_bytes"] + f["state_bytes"]
    assert f["state_bytes"] == 2 * f["param_bytes"] + 4  # two moments, a count
    train = f["phases"]["train"]["device"]
    assert train["in_use"] == train["start"]  # flat over all steps
    # never a second copy of parameters + optimizer state
    grown = train["peak_growth"]
    assert grown < f["step_analysis"]["temp"] * 2 + f["param_bytes"], grown


def test_training_peak_is_one_step_of_temporaries(job):
    f = job["figures"]
    assert check(job, "train_peak")["ok"], check(job, "train_peak")["detail"]
    assert f["train_peak_growth"] <= f["train_step_extra"] + train_and_serve.GRANULE


def test_pinned_checkpoint_equals_the_trained_parameters(job, tmp_path):
    f = job["figures"]
    trained = bt.tree.leaves(f["trained_params"])
    assert len(f["checkpoint_values"]) == len(trained) == 6
    for c, t in zip(f["checkpoint_values"], trained):
        assert c.dtype == t.dtype and c.shape == t.shape
        np.testing.assert_array_equal(c, t)
    # the file written from the pinned buffers holds the same bytes
    raw = open(f["artefacts"]["checkpoint"], "rb").read()
    assert raw == b"".join(t.tobytes() for t in trained)
    assert f["checkpoint_equal"] and f["landing_equal"]
    # checkpoints and the load went into buffers allocated once, in setup
    for phase in ("train", "load"):
        pinned = f["phases"][phase]["pinned_host"]
        assert pinned["peak"] == pinned["start"] == pinned["in_use"], phase
    assert f["phases"]["setup"]["pinned_host"]["in_use"] >= 2 * f["param_bytes"]


def test_answers_switch_to_the_trained_model_at_the_swap(job):
    f = job["figures"]
    for before, old in zip(f["answers_before"], f["old_model_answers"]):
        np.testing.assert_allclose(before, old, rtol=1e-4, atol=1e-4)
    for after, direct, q in zip(f["answers_after"], f["direct_answers"], f["queries"]):
        np.testing.assert_array_equal(after, direct)  # predict(trained params)
        np.testing.assert_allclose(
            after, mlp(f["trained_params"], q), rtol=1e-4, atol=1e-4
        )
    changed = max(
        np.max(np.abs(a - b)) for a, b in zip(f["answers_before"], f["answers_after"])
    )
    assert changed > 1e-3
    for name in ("answers_before", "answers_after", "answers_changed"):
        assert check(job, name)["ok"], name


def test_swap_costs_no_second_copy(job):
    f = job["figures"]
    assert f["device_after_swap"] == f["device_before_swap"]
    swap = f["phases"]["swap"]
    assert swap["device"]["peak_growth"] < f["param_bytes"], swap["device"]
    assert f["requests_bytes"] < f["param_bytes"]
    # staging, in pinned_host, stays within the bounded pool
    assert swap["pinned_host"]["peak_growth"] <= train_and_serve.STAGING_BOUND
    assert swap["unpinned_host"]["peak_growth"] == 0
    for name in ("swap_in_place", "swap_peak", "staging_bounded"):
        assert check(job, name)["ok"], name


def test_every_other_check_passes(job):
    failed = [
        r["name"]
        for r in job["figures"]["checks"]
        if not r["ok"] and r["name"] != "train_peak"
    ]
    assert failed == []
    assert "contract checks" in job["printed"] and "memory per phase" in job["printed"]


def test_profiler_artefacts(job):
    paths = job["figures"]["artefacts"]
    for what in ("checkpoint", "trace", "memory_profile", "memory_viewer"):
        assert os.path.getsize(paths[what]) > 0, what
        assert paths[what] in job["printed"]
    trace = json.load(open(paths["trace"]))
    steps = [
        e
        for e in trace["traceEvents"]
        if e.get("ph") == "X" and e.get("name", "").endswith("train_step")
    ]
    assert len(steps) == STEPS
    assert any(
        e.get("ph") == "X" and e.get("name") == "predict" for e in trace["traceEvents"]
    )
    assert len(gzip.decompress(open(paths["memory_profile"], "rb").read())) > 0
    page = open(paths["memory_viewer"]).read()
    assert page.lstrip().startswith("<!DOCTYPE html>") and "pinned_host" in page


def test_the_job_leaves_no_memory_behind(job):
    assert job["after"] == job["before"]


def test_contract_violation_exits_with_the_failed_checks(monkeypatch, tmp_path):
    real = train_and_serve.run

    def broken(args, paths):
        figures = real(args, paths)
        figures["checks"].append(
            {"name": "x", "ok": False, "claim": "a broken promise", "detail": "42"}
        )
        return figures

    monkeypatch.setattr(train_and_serve, "run", broken)
    with contextlib.redirect_stdout(io.StringIO()):
        with pytest.raises(SystemExit, match="a broken promise: 42"):
            train_and_serve.main(
                ["--steps", "2", "--out", str(tmp_path), "--no-progress"]
            )
