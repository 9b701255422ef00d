"""BATON_PLATFORMS: which platforms baton uses, in what order; and the
accelerator memory tests on the simulated platform (a device whose memory the
host cannot touch: any direct access faults), run in a fresh interpreter."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import baton as bt

HERE = Path(__file__).parent


def run(code_or_args, platforms, **kw):
    env = dict(os.environ, BATON_PLATFORMS=platforms)
    args = code_or_args if isinstance(code_or_args, list) else ["-c", code_or_args]
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=600, **kw
    )


def test_default_is_the_cpu():
    assert bt.default_backend() == "cpu"
    assert all(d.platform == "cpu" for d in bt.devices())


def test_unavailable_backend_says_why():
    if bt.devices("cpu") and "cuda" in bt._baton._unavailable_platforms:
        with pytest.raises(RuntimeError, match="backend 'cuda' is not available"):
            bt.devices("cuda")
    with pytest.raises(RuntimeError, match="not available"):
        bt.devices("tpu")


def test_simulated_platform_first():
    r = run(
        "import baton as bt; d = bt.devices(); "
        "print(bt.default_backend(), len(d), d[0], bt.devices('cpu')[0], "
        "bt.device_put(1.0).device)",
        "sim,cpu",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["sim", "1", "sim:0", "cpu:0", "sim:0"]


def test_unknown_platform_fails_the_import_clearly():
    r = run("import baton", "cpu,tpu")
    assert r.returncode != 0
    assert "unknown platform 'tpu'" in r.stderr


def test_no_listed_platform_with_devices_fails_clearly():
    if "cuda" not in bt._baton._unavailable_platforms:
        pytest.skip("a CUDA device is visible")
    r = run("import baton", "cuda")
    assert r.returncode != 0
    assert "no listed platform has a device" in r.stderr
    assert "Add 'cpu'" in r.stderr


def test_accelerator_memory_contract_on_the_simulated_platform():
    r = run(
        ["-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE / "test_accelerator_memory.py")],
        "sim,cpu",
        cwd=HERE.parent.parent,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "skipped" not in r.stdout, r.stdout[-2000:]
