"""numpy conversion with bound view lifetimes (DESIGN R7, seed 004)."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt

from _util import data_ptr, floats, in_use

# np.asarray gives a zero-copy view of `device` memory only where the host
# addresses it (the CPU); of the host kinds on every platform.
DEVICE = pytest.param("device", marks=pytest.mark.host_addressable_device)
KINDS = (DEVICE, "pinned_host", "unpinned_host")
VIEWABLE_KINDS = pytest.mark.parametrize("kind", [DEVICE, "pinned_host"])


@pytest.mark.parametrize("kind", KINDS)
def test_asarray_is_zero_copy_and_read_only(kind):
    x = bt.device_put(floats(1024), memory_kind=kind)
    before = in_use(kind)
    a = np.asarray(x)
    assert in_use(kind) == before  # nothing allocated
    assert not a.flags.writeable
    assert not a.flags.owndata
    np.testing.assert_array_equal(a, floats(1024))
    with pytest.raises(ValueError):
        a[0] = 1.0
    with pytest.raises(ValueError):
        a.flags.writeable = True


def test_two_views_share_memory():
    x = bt.device_put(floats(256), memory_kind="pinned_host")
    a, b = np.asarray(x), np.asarray(x)
    assert a is not b  # nothing cached on the array
    assert np.shares_memory(a, b)
    assert a.ctypes.data == b.ctypes.data


@VIEWABLE_KINDS
def test_hold_lives_exactly_as_long_as_the_view(kind, no_gc):
    x = bt.device_put(floats(256), memory_kind=kind)
    assert x._external_references == 0
    a = np.asarray(x)
    assert x._external_references == 1
    b = a[10:20]  # a view of the view keeps the hold
    del a
    assert x._external_references == 1
    del b
    assert x._external_references == 0  # released by refcount, no gc


@VIEWABLE_KINDS
def test_view_blocks_donation_until_it_dies(kind, no_gc):
    x = bt.device_put(floats(256), memory_kind=kind)
    a = np.asarray(x)
    with pytest.raises(bt.DonationError, match="view"):
        bt.donate(x)
    assert not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), floats(256))
    del a
    d = bt.donate(x)
    assert x.is_deleted()
    del d


def test_nothing_cached_after_np_array_copy(no_gc):
    x = bt.device_put(floats(256))
    c = np.array(x)  # a copy
    assert x._external_references == 0  # the temporary view died at once
    c[0] = 42.0  # the copy is the caller's
    assert float(np.asarray(x)[0]) == 0.0
    bt.donate(x)


def test_asarray_copy_true_owns_its_memory(no_gc):
    x = bt.device_put(floats(256))
    a = np.asarray(x, copy=True)
    assert a.flags.writeable and a.flags.owndata
    assert x._external_references == 0
    assert not np.shares_memory(a, np.asarray(x))


def test_asarray_with_dtype_converts_and_releases(no_gc):
    x = bt.device_put(floats(8))
    a = np.asarray(x, dtype=np.float64)
    assert a.dtype == np.float64
    np.testing.assert_array_equal(a, floats(8))
    assert x._external_references == 0


@VIEWABLE_KINDS
def test_delete_with_live_view_keeps_storage_until_view_dies(kind, no_gc):
    n = 1 << 16  # 256 KiB
    x = bt.device_put(floats(n), memory_kind=kind)
    base = in_use(kind)
    a = np.asarray(x)
    x.delete()
    assert x.is_deleted()
    assert in_use(kind) == base  # the view keeps the storage
    np.testing.assert_array_equal(a, floats(n))  # still valid memory
    del a
    assert in_use(kind) == base - n * 4


@VIEWABLE_KINDS
@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
def test_half_types_round_trip(dtype, kind, no_gc):
    h = np.array([0.5, -1.25, 3.0, 65504 if dtype == np.float16 else 1e30], dtype=dtype)
    x = bt.device_put(h, memory_kind=kind)
    assert x.dtype == np.dtype(dtype)
    a = np.asarray(x)
    assert a.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(a.astype(np.float32), h.astype(np.float32))
    assert np.shares_memory(a, np.asarray(x))
    assert x._external_references >= 1
    del a
    assert x._external_references == 0
    bt.donate(x)


@VIEWABLE_KINDS
def test_memoryview_follows_the_same_hold_rules(kind, no_gc):
    x = bt.device_put(floats(64).reshape(8, 8), memory_kind=kind)
    m = memoryview(x)
    assert m.readonly and m.format == "f" and m.shape == (8, 8)
    assert m.nbytes == x.nbytes
    assert x._external_references == 1
    with pytest.raises(bt.DonationError):
        bt.donate(x)
    m.release()
    assert x._external_references == 0
    m2 = memoryview(x)
    del m2
    assert x._external_references == 0


def test_memoryview_of_bfloat16_is_refused_clearly():
    x = bt.device_put(np.zeros(4, ml_dtypes.bfloat16))
    with pytest.raises(BufferError, match="bfloat16"):
        memoryview(x)
    assert x._external_references == 0


def test_read_only_host_view_context_manager(no_gc):
    x = bt.device_put(floats(64), memory_kind="pinned_host")
    with x.host_view() as a:
        assert not a.flags.writeable
        assert x._external_references == 1
        np.testing.assert_array_equal(a, floats(64))
    assert x._external_references == 0
    bt.donate(x)


@pytest.mark.parametrize("kind", ["pinned_host", "unpinned_host"])
def test_writable_host_view_writes_in_place(kind, no_gc):
    x = bt.zeros((16, 16), memory_kind=kind)
    ptr = data_ptr(x)
    before = in_use(kind)
    with x.host_view(writable=True) as a:
        assert a.flags.writeable
        assert a.ctypes.data == ptr  # the array's own storage
        a[:] = 7.0
    assert in_use(kind) == before
    assert not a.flags.writeable  # made read-only on exit
    np.testing.assert_array_equal(np.asarray(x), np.full((16, 16), 7.0, np.float32))


def test_writable_view_of_device_memory_is_refused():
    x = bt.zeros((4,))
    with pytest.raises(ValueError, match="pinned_host"):
        with x.host_view(writable=True):
            pass
    assert x._external_references == 0 and not x.is_deleted()


def test_writable_view_is_exclusive_and_computations_wait(no_gc):
    x = bt.zeros((1024,), memory_kind="pinned_host")
    r = np.asarray(x)
    with pytest.raises(BufferError, match="exclusive"):
        with x.host_view(writable=True):
            pass
    del r
    with x.host_view(writable=True) as a:
        with pytest.raises(BufferError):
            np.asarray(x)
        with pytest.raises(bt.DonationError):
            bt.donate(x)
        y = bt.device_put(x, memory_kind="device")  # enqueued now
        assert not y.is_ready()  # waits for the view's release
        a[:] = 3.0
    y.block_until_ready()
    np.testing.assert_array_equal(np.asarray(y), np.full(1024, 3.0, np.float32))


def test_writable_view_of_borrowed_memory_is_refused():
    h = np.zeros(64, np.float32)
    x = bt.device_put(h, memory_kind="pinned_host", may_alias=True)
    assert x._is_borrowed
    with pytest.raises(ValueError, match="borrows"):
        with x.host_view(writable=True):
            pass


def test_released_view_stays_memory_safe(no_gc):
    x = bt.device_put(floats(1 << 14), memory_kind="pinned_host")
    base = in_use("pinned_host")
    with x.host_view(writable=True) as a:
        pass
    assert x._external_references == 0
    x.delete()
    # `a` outlived its block: it keeps the storage (no dangling pointer)...
    assert in_use("pinned_host") == base
    assert a.sum() == floats(1 << 14).sum()
    del a
    assert in_use("pinned_host") == base - (1 << 16)


def test_scalar_conversions():
    assert bt.device_put(np.float32(2.5)).item() == 2.5
    assert float(bt.device_put(np.array([2.5], np.float32))) == 2.5
    assert int(bt.device_put(np.array([[7]], np.int32))) == 7
    assert bool(bt.device_put(True)) is True
    assert bt.device_put(np.array([[1, 2], [3, 4]], np.int32)).tolist() == [
        [1, 2],
        [3, 4],
    ]
    bf = bt.device_put(np.array([1.5, 2.0], ml_dtypes.bfloat16)).tolist()
    assert bf == [1.5, 2.0] and all(type(v) is float for v in bf)
    with pytest.raises(TypeError):
        float(bt.zeros((2,)))
    with pytest.raises(ValueError):
        bool(bt.zeros((2,)))
    assert [10, 20, 30][bt.device_put(np.int32(1))] == 20
    with pytest.raises(TypeError):
        [1][bt.device_put(1.0)]
    assert f"{bt.device_put(np.float32(1.25)):.1f}" == "1.2"
