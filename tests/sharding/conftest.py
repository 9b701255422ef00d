"""Tests of sharded arrays and shard_map on 4 CPU devices of one process.

They run in their own pytest process started with BATON_NUM_CPU_DEVICES=4
(tools/run_tests.sh), since the device count is read at import. Every test
starts with no live arrays and its work finished.
"""

import gc
import json
import os
import subprocess
import sys

import pytest

import baton as bt

N = 4


def pytest_configure(config):
    if int(os.environ.get("BATON_NUM_CPU_DEVICES", "1")) != N:
        raise pytest.UsageError(
            f"tests/sharding needs BATON_NUM_CPU_DEVICES={N} (see tools/run_tests.sh)"
        )


@pytest.fixture(autouse=True)
def _clean():
    # The previous test's cyclic garbage and queued work (and the frees they
    # hold back) finish before this test starts: a test that reads
    # bytes_in_use must not see them land mid-test.
    gc.collect()
    bt.effects_barrier()
    yield
    gc.collect()
    bt.effects_barrier()
    for d in bt.devices():
        bt.reset_peak_memory_stats(d)


def in_use(device=None):
    """bytes_in_use of each device (or one)."""
    if device is not None:
        return bt.memory_stats(device)["bytes_in_use"]
    return [bt.memory_stats(d)["bytes_in_use"] for d in bt.devices()]


def run_cases_on_8_devices(script, on_baton):
    """What a cases script written for JAX prints (one JSON object), run in
    a process of its own on 8 CPU devices: as it is with JAX, or unchanged
    on baton (``python -m baton.as_jax``, which imports baton -- and reads
    the device count from the environment -- before the script runs)."""
    args = ["-m", "baton.as_jax", script] if on_baton else [script]
    env = dict(os.environ, BATON_NUM_CPU_DEVICES="8")
    out = subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])
