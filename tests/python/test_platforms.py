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


def run(code_or_args, platforms, extra_env=None, **kw):
    env = dict(os.environ, BATON_PLATFORMS=platforms, **(extra_env or {}))
    args = code_or_args if isinstance(code_or_args, list) else ["-c", code_or_args]
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=600, **kw
    )


def test_default_is_the_cpu():
    # The default is what an interpreter without BATON_PLATFORMS gets (this
    # run may set it, e.g. to run the suite on the simulated device).
    if "BATON_PLATFORMS" not in os.environ:
        assert bt.default_backend() == "cpu"
        assert all(d.platform == "cpu" for d in bt.devices())
    env = {k: v for k, v in os.environ.items() if k != "BATON_PLATFORMS"}
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import baton as bt; print(bt.default_backend(), "
            "all(d.platform == 'cpu' for d in bt.devices()))",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["cpu", "True"]


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


@pytest.mark.parametrize("slow_seed", [None, "7"], ids=["sim", "sim_slow"])
def test_accelerator_memory_contract_on_the_simulated_platform(slow_seed):
    # BATON_SIM_SLOW=<seed>: slow-device mode (random delays before every
    # device operation, freed device memory poisoned), where a missing
    # dependency between streams shows up as wrong values.
    r = run(
        ["-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE / "test_accelerator_memory.py")],
        "sim,cpu",
        extra_env={"BATON_SIM_SLOW": slow_seed} if slow_seed else None,
        cwd=HERE.parent.parent,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "skipped" not in r.stdout, r.stdout[-2000:]


def test_slow_simulated_device_still_runs_ahead():
    # In slow-device mode a copy out of device memory returns before the
    # device has done it; block_until_ready waits for it. 32 MiB, so that the
    # copy itself (besides the mode's random delay of up to 2 ms) outlasts a
    # descheduled caller on a loaded 2-core machine.
    r = run(
        "import numpy as np, baton as bt\n"
        "x = bt.device_put(np.arange(1 << 23, dtype=np.float32))\n"
        "x.block_until_ready()\n"
        "y = bt.device_put(x, memory_kind='pinned_host')\n"
        "print(y.is_ready())\n"
        "y.block_until_ready()\n"
        "print(y.is_ready(), float(np.asarray(y)[-1]))\n",
        "sim,cpu",
        extra_env={"BATON_SIM_SLOW": "3"},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["False", "True", "8388607.0"], r.stdout
