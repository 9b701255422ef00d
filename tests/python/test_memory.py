"""memory_stats, limits, live_arrays, deterministic release (R1, R8, R9)."""

import numpy as np

import baton as bt

from _util import floats, in_use

KEYS = {
    "bytes_in_use",
    "peak_bytes_in_use",
    "num_allocs",
    "largest_alloc_size",
    "bytes_limit",
    "bytes_reserved",
}


def test_stats_are_dicts_of_ints_per_kind():
    for kind in ("device", "pinned_host", "unpinned_host"):
        s = bt.memory_stats(memory_kind=kind)
        assert set(s) == KEYS and all(type(v) is int for v in s.values())
    assert bt.memory_stats(bt.devices()[0]) == bt.memory_stats()


def test_release_is_deterministic_without_gc(no_gc):
    before = in_use()
    x = bt.device_put(floats(1 << 16))
    y = bt.device_put(x, memory_kind="device")  # a copy reading x
    assert in_use() == before + 2 * (1 << 18)
    del x  # freed once the copy has read it; no gc involved
    y.block_until_ready()
    assert in_use() == before + (1 << 18)
    del y
    assert in_use() == before


def test_peak_and_reset():
    bt.reset_peak_memory_stats()
    base = bt.memory_stats()
    x = bt.device_put(floats(1 << 16))
    del x
    s = bt.memory_stats()
    assert s["peak_bytes_in_use"] >= base["bytes_in_use"] + (1 << 18)
    assert s["largest_alloc_size"] >= 1 << 18
    bt.reset_peak_memory_stats()
    assert bt.memory_stats()["peak_bytes_in_use"] == bt.memory_stats()["bytes_in_use"]


def test_set_memory_limit_per_kind():
    bt.set_memory_limit(1 << 20, memory_kind="unpinned_host")
    assert bt.memory_stats(memory_kind="unpinned_host")["bytes_limit"] == 1 << 20
    assert bt.memory_stats()["bytes_limit"] != 1 << 20
    try:
        bt.device_put(np.zeros(1 << 19, np.float32), memory_kind="unpinned_host")
        raise AssertionError("limit not enforced")
    except bt.ResourceExhaustedError:
        pass
    bt.device_put(np.zeros(1 << 19, np.float32))  # other kinds unaffected
    bt.set_memory_limit(None, memory_kind="unpinned_host")
    bt.device_put(np.zeros(1 << 19, np.float32), memory_kind="unpinned_host")


def test_live_arrays_returns_the_users_objects():
    x = bt.device_put(floats(4))
    p = bt.device_put(floats(4), memory_kind="pinned_host")
    d = bt.device_put(floats(4))
    d.delete()
    live = bt.live_arrays()
    assert any(a is x for a in live) and any(a is p for a in live)
    assert not any(a._id == d._id for a in live)
    assert all(isinstance(a, bt.Array) and not a.is_deleted() for a in live)
