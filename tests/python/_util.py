"""Helpers shared by the Python tests."""

import numpy as np

import baton as bt


def in_use(kind="device", device=None):
    return bt.memory_stats(device, kind)["bytes_in_use"]


def num_allocs(kind="device", device=None):
    return bt.memory_stats(device, kind)["num_allocs"]


def data_ptr(x):
    """Address of x's storage (takes and drops a host view)."""
    a = np.asarray(x)
    return a.__array_interface__["data"][0]


def floats(n, start=0.0):
    """n float32 values (n * 4 bytes; use multiples of 64 for exact stats)."""
    return np.arange(start, start + n, dtype=np.float32)
