"""Tests of sharded arrays and shard_map on 4 CPU devices of one process.

They run in their own pytest process started with BATON_NUM_CPU_DEVICES=4
(tools/run_tests.sh), since the device count is read at import. Every test
starts with no live arrays and its work finished.
"""

import gc
import os

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
