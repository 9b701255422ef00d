"""Seed 004: lifetime of host values of an array; writable pinned views.

Written as the seed's authors would write it on baton, with the garbage
collector off: every release below happens by reference counting alone.
"""

import io

import ml_dtypes
import numpy as np
import pytest

import baton as bt

from _util import data_ptr

SHAPE = (256, 1024)  # 1 MiB of float32


def save_host_array(arr, sink):
    a = np.asarray(arr)
    np.save(sink, a)


def test_pinned_host_overwrite_loop_200_iterations(no_gc):
    x = bt.device_put(np.ones(SHAPE, np.float32))
    x_pinned = bt.device_put(x, memory_kind="pinned_host")
    x_pinned.block_until_ready()
    pinned = bt.memory_stats(memory_kind="pinned_host")["bytes_in_use"]
    ptr = data_ptr(x_pinned)
    sink = io.BytesIO()
    for i in range(200):
        x = bt.device_put(np.full(SHAPE, i, np.float32), into=x)  # new weights
        x_pinned = bt.device_put(x, memory_kind="pinned_host", into=x_pinned)
        sink.seek(0)
        save_host_array(x_pinned, sink)
        assert bt.memory_stats(memory_kind="pinned_host")["bytes_in_use"] == pinned
    assert data_ptr(x_pinned) == ptr  # the same pinned buffer all along
    sink.seek(0)
    np.testing.assert_array_equal(np.load(sink), np.full(SHAPE, 199, np.float32))


def test_pinned_host_donation_loop_200_iterations(no_gc):
    weight = bt.device_put(np.zeros(SHAPE, np.float32))
    on_host = bt.device_put(weight, memory_kind="pinned_host")
    on_host.block_until_ready()
    pinned = bt.memory_stats(memory_kind="pinned_host")["bytes_in_use"]
    device = bt.memory_stats()["bytes_in_use"]
    device_allocs = bt.memory_stats()["num_allocs"]
    sink = io.BytesIO()
    for _ in range(200):
        weight = bt.device_put(bt.donate(weight))  # donated: storage reused
        old_host = bt.donate(on_host)  # the previous host copy is given up
        on_host = bt.device_put(weight, memory_kind="pinned_host")
        del old_host  # ...and freed at once (no view holds it)
        sink.seek(0)
        save_host_array(on_host, sink)
        assert bt.memory_stats(memory_kind="pinned_host")["bytes_in_use"] == pinned
        assert bt.memory_stats()["bytes_in_use"] == device
    assert bt.memory_stats()["num_allocs"] == device_allocs  # never reallocated


def test_bfloat16_scalar_repro(no_gc):
    d_tensor = bt.device_put(np.array(0, dtype=ml_dtypes.bfloat16))
    h_tensor = bt.device_put(d_tensor, memory_kind="pinned_host")
    np.array(h_tensor)  # used to leave a hold behind
    np.asarray(h_tensor)
    assert h_tensor._external_references == 0
    h_tensor, d_tensor = (
        bt.device_put(bt.donate(d_tensor), memory_kind="pinned_host"),
        bt.device_put(bt.donate(h_tensor), memory_kind="device"),
    )
    assert h_tensor.memory_kind == "pinned_host"
    assert float(d_tensor) == 0.0 and d_tensor.dtype == ml_dtypes.bfloat16


def test_bfloat16_live_view_blocks_then_releases(no_gc):
    h = bt.device_put(
        np.array(1.5, dtype=ml_dtypes.bfloat16), memory_kind="pinned_host"
    )
    a = np.asarray(h)
    with pytest.raises(bt.DonationError, match=r"np\.asarray"):
        bt.donate(h)
    assert not h.is_deleted()
    del a
    bt.donate(h)
    assert h.is_deleted()


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_writable_pinned_view_as_checkpoint_target(tmp_path, dtype, no_gc):
    values = (np.arange(np.prod(SHAPE)) % 251).astype(dtype).reshape(SHAPE)
    path = tmp_path / "ckpt.bin"
    values.tofile(path)

    target = bt.empty(SHAPE, dtype, memory_kind="pinned_host")
    pinned = bt.memory_stats(memory_kind="pinned_host")["bytes_in_use"]
    ptr = data_ptr(target)
    with target.host_view(writable=True) as buf, open(path, "rb") as f:
        assert f.readinto(buf) == target.nbytes  # straight into pinned memory
    assert bt.memory_stats(memory_kind="pinned_host")["bytes_in_use"] == pinned
    assert data_ptr(target) == ptr
    on_device = bt.device_put(target, memory_kind="device")
    np.testing.assert_array_equal(bt.device_get(on_device), values)
    bt.donate(target)  # the view is gone: donation works


def test_writable_pinned_view_filled_with_copyto(no_gc):
    target = bt.empty((1024,), np.float32, memory_kind="pinned_host")
    with target.host_view(writable=True) as buf:
        np.copyto(buf, np.arange(1024, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(target), np.arange(1024, dtype=np.float32))


def test_seed_004_jitted_copy_to_pinned_with_donation_200_iterations(no_gc):
    """The thread's repro on baton: a jitted device -> pinned_host copy with both
    arguments donated, np.asarray + np.save of the pinned result every
    iteration. The views die with their numpy objects, so donation keeps
    working and pinned memory stays flat."""

    def copy_weight_to_pinned_host(w, w_on_host_donate):
        w_on_host = bt.device_put(w, memory_kind="pinned_host")
        return w, w_on_host

    copy_jitted = bt.jit(copy_weight_to_pinned_host, donate_argnums=(0, 1))
    weight = bt.device_put(np.arange(1 << 18, dtype=np.float32))
    weight_on_pinned_host = bt.device_put(
        np.zeros(1 << 18, np.float32), memory_kind="pinned_host"
    )
    analysis = copy_jitted.lower(weight, weight_on_pinned_host).compile().memory_analysis()
    assert analysis.alias_size_in_bytes == 2 * (1 << 20)  # both outputs reuse inputs
    # A host -> device copy stages through pinned memory until it is done (on
    # the simulated device); count from when both uploads have finished.
    weight.block_until_ready()
    weight_on_pinned_host.block_until_ready()
    pinned_before = bt.memory_stats(memory_kind="pinned_host")["bytes_in_use"]
    sink = io.BytesIO()
    for _ in range(200):
        weight, weight_on_pinned_host = copy_jitted(weight, weight_on_pinned_host)
        a = np.asarray(weight_on_pinned_host)
        np.save(sink, a)
        sink.seek(0)
        del a
        assert (
            bt.memory_stats(memory_kind="pinned_host")["bytes_in_use"] == pinned_before
        )
    np.testing.assert_array_equal(
        np.asarray(weight_on_pinned_host), np.arange(1 << 18, dtype=np.float32)
    )
