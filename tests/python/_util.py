"""Helpers shared by the Python tests."""

import os
import subprocess
import sys
import zlib

import ml_dtypes
import numpy as np

import baton as bt

# Every dtype baton supports, as numpy dtypes (for parametrize).
ALL_DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint32,
    np.float16,
    ml_dtypes.bfloat16,
    np.float32,
    np.float64,
]


def seeded_rng(*key):
    """A numpy Generator seeded by `key` (any repr-able values): the same
    draws in every process. Seeded by crc32, not hash(): str hashes change
    from process to process, and so did the inputs (a failure could not be
    reproduced)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def dtype_name(d):
    """A test id for dtype d ("float32", "bfloat16", ...)."""
    return np.dtype(d).name


def in_use(kind="device", device=None):
    return bt.memory_stats(device, kind)["bytes_in_use"]


def num_allocs(kind="device", device=None):
    return bt.memory_stats(device, kind)["num_allocs"]


def default_platform():
    """The platform BATON_PLATFORMS (default "cpu,cuda") makes the default:
    the first listed that has devices ("cpu" unless a run asks otherwise)."""
    listed = os.environ.get("BATON_PLATFORMS", "cpu,cuda").split(",")
    return next(p for p in listed if p not in bt._baton._unavailable_platforms)


def data_ptr(x):
    """Address of x's storage (a device address on an accelerator)."""
    return x.unsafe_buffer_pointer()


def floats(n, start=0.0):
    """n float32 values (n * 4 bytes; use multiples of 64 for exact stats)."""
    return np.arange(start, start + n, dtype=np.float32)


def run_with_two_devices(code):
    """Runs Python `code` in a fresh process with two devices of the default
    platform (BATON_NUM_CPU_DEVICES / BATON_NUM_SIM_DEVICES are read at
    start-up); asserts it exits 0 and prints "ok"."""
    env = dict(os.environ, BATON_NUM_CPU_DEVICES="2", BATON_NUM_SIM_DEVICES="2")
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "ok" in out.stdout
