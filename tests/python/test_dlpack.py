"""DLPack: Array.__dlpack__ / __dlpack_device__ and bt.from_dlpack."""

import sys

import ml_dtypes
import numpy as np
import pytest

import baton as bt

from _util import floats, in_use

# The CPU device, whose `device` memory is host memory on every platform:
# from_dlpack borrows host memory only into memory the host can address (on
# the CPU platform, the default device).
CPU = bt.devices("cpu")[0]


def test_dlpack_device():
    assert bt.device_put(floats(4)).__dlpack_device__() == (1, 0)
    assert bt.zeros((2,), memory_kind="pinned_host").__dlpack_device__() == (1, 0)


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("device", marks=pytest.mark.host_addressable_device),
        "pinned_host",
        "unpinned_host",
    ],
)
def test_np_from_dlpack_is_zero_copy_and_holds(kind, no_gc):
    x = bt.device_put(floats(256), memory_kind=kind)
    n = np.from_dlpack(x)
    assert np.shares_memory(n, np.asarray(x))
    assert not n.flags.writeable  # flagged read-only
    np.testing.assert_array_equal(n, floats(256))
    assert x._external_references == 1
    del n
    assert x._external_references == 0


def test_capsule_names_follow_max_version(no_gc):
    x = bt.device_put(floats(4))
    assert '"dltensor"' in repr(x.__dlpack__())
    assert '"dltensor_versioned"' in repr(x.__dlpack__(max_version=(1, 0)))
    # Unconsumed capsules release their hold when they die.
    assert x._external_references == 0


def test_copy_export_holds_nothing(no_gc):
    x = bt.device_put(floats(16))
    n = np.from_dlpack(x, copy=True)
    assert x._external_references == 0
    assert not np.shares_memory(n, np.asarray(x))
    np.testing.assert_array_equal(n, floats(16))


def test_export_arguments():
    x = bt.device_put(floats(4))
    with pytest.raises(BufferError):
        x.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 0))
    assert x.__dlpack__(dl_device=(1, 0)) is not None


@pytest.mark.parametrize(
    "dtype",
    [
        np.bool_,
        np.int8,
        np.int64,
        np.uint8,
        np.uint32,
        np.float16,
        np.float32,
        np.float64,
    ],
)
def test_round_trips(dtype, no_gc):
    h = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
    x = bt.from_dlpack(h, device=CPU)
    assert x.dtype == np.dtype(dtype) and x.shape == (3, 4)
    back = np.from_dlpack(x)
    np.testing.assert_array_equal(back, h)
    assert np.shares_memory(back, h)  # numpy -> baton -> numpy, never copied


def test_from_dlpack_borrow_is_not_counted(no_gc):
    h = floats(1 << 14)
    refs = sys.getrefcount(h)
    before = in_use(device=CPU)
    x = bt.from_dlpack(h, device=CPU)
    assert x._is_borrowed and in_use(device=CPU) == before
    assert np.shares_memory(np.asarray(x), h)
    assert sys.getrefcount(h) > refs  # the producer keeps it alive
    del x
    assert sys.getrefcount(h) == refs
    assert in_use(device=CPU) == before


def test_from_dlpack_copies_when_it_must(no_gc):
    h = np.arange(24, dtype=np.float32).reshape(4, 6)
    before = in_use()
    strided = bt.from_dlpack(h[:, ::2])
    assert not strided._is_borrowed and in_use() > before
    np.testing.assert_array_equal(np.asarray(strided), h[:, ::2])
    copied = bt.from_dlpack(h, copy=True)
    assert not copied._is_borrowed
    assert not np.shares_memory(np.asarray(copied), h)
    with pytest.raises(BufferError):
        bt.from_dlpack(h[:, ::2], copy=False)


def test_from_dlpack_of_baton_array_and_bad_input():
    x = bt.device_put(floats(4))
    assert bt.from_dlpack(x) is x
    y = bt.from_dlpack(x, copy=True)
    assert y is not x and not np.shares_memory(np.asarray(x), np.asarray(y))
    with pytest.raises(TypeError):
        bt.from_dlpack([1, 2, 3])


def test_bfloat16_exports_with_dlpack_code():
    x = bt.device_put(np.ones(3, ml_dtypes.bfloat16))
    cap = x.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    assert bt.from_dlpack(cap).dtype == ml_dtypes.bfloat16


def test_dlpack_of_deleted_array_raises():
    x = bt.device_put(floats(4))
    x.delete()
    with pytest.raises(bt.DeletedArrayError):
        x.__dlpack__()
    with pytest.raises(bt.DeletedArrayError):
        np.from_dlpack(x)


class _FakeAcceleratorTensor:
    """A producer on a non-host device that can export host copies."""

    def __init__(self, values):
        self.values = values
        self.requests = []

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA

    def __dlpack__(self, **kwargs):
        self.requests.append(kwargs)
        assert kwargs.get("dl_device") == (1, 0) and kwargs.get("copy") is True
        return self.values.copy().__dlpack__(max_version=(1, 0))


def test_from_dlpack_of_device_memory_asks_for_a_host_copy():
    t = _FakeAcceleratorTensor(floats(8))
    x = bt.from_dlpack(t)
    np.testing.assert_array_equal(np.asarray(x), floats(8))
    assert t.requests
    with pytest.raises(BufferError):
        bt.from_dlpack(t, copy=False)
