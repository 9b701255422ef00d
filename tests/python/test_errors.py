"""Errors of DESIGN section 3 that do not need jit."""

import copy

import numpy as np
import pytest

import baton as bt
from baton import _baton

from _util import floats, in_use


def test_exception_hierarchy():
    assert issubclass(bt.DeletedArrayError, RuntimeError)
    assert issubclass(bt.DonationError, ValueError)
    assert issubclass(bt.ResourceExhaustedError, MemoryError)
    assert issubclass(bt.DonationWarning, Warning)
    assert bt.DeletedArrayError.__module__ == "baton"


def test_deleted_array_message_says_how_and_what():
    x = bt.device_put(floats(3))
    x.delete()
    with pytest.raises(bt.DeletedArrayError, match=r"float32\(3,\).*deleted"):
        x.block_until_ready()
    y = bt.device_put(floats(3))
    bt.donate(y)
    with pytest.raises(
        bt.DeletedArrayError, match=r"float32\(3,\).*donated to a donate\(\) marker"
    ):
        y.is_ready()


def test_deleted_arrays_keep_metadata_and_say_so():
    x = bt.device_put(floats(3), memory_kind="pinned_host")
    x.delete()
    x.delete()  # idempotent
    assert x.is_deleted()
    assert (x.shape, x.dtype, x.nbytes, x.memory_kind) == (
        (3,),
        np.float32,
        12,
        "pinned_host",
    )
    assert (
        repr(x)
        == "Array(<deleted>, shape=(3,), dtype=float32, memory_kind=pinned_host)"
    )
    y = bt.device_put(floats(3))
    bt.donate(y)
    assert "deleted" in repr(y) and "donated" in repr(y)


@pytest.mark.parametrize(
    "use",
    [
        lambda x: x.is_ready(),
        lambda x: x.block_until_ready(),
        lambda x: np.asarray(x),
        lambda x: memoryview(x),
        lambda x: x.item(),
        lambda x: x.tolist(),
        lambda x: float(x),
        lambda x: x.copy(),
        lambda x: copy.deepcopy(x),
        lambda x: bt.device_put(x),
        lambda x: bt.device_get(x),
        lambda x: x.__dlpack__(),
        lambda x: x.__dlpack_device__(),
        lambda x: x.host_view().__enter__(),
        lambda x: bt.block_until_ready([x]),
    ],
)
def test_every_use_of_a_deleted_array_raises(use):
    x = bt.device_put(floats(1))
    x.delete()
    with pytest.raises(bt.DeletedArrayError):
        use(x)


def test_delete_frees_now(no_gc):
    x = bt.device_put(floats(1 << 14))
    # On an accelerator device_put's copy is asynchronous: until it lands,
    # deleting x leaves its storage to the copy, which frees it when done.
    x.block_until_ready()
    before = in_use()
    x.delete()
    assert in_use() == before - (1 << 16)


def test_resource_exhausted_lists_largest_arrays_and_changes_nothing():
    big = bt.device_put(np.zeros((512, 1024), np.float32))  # 2 MiB
    before = bt.memory_stats()
    bt.set_memory_limit(before["bytes_in_use"] + (1 << 20))
    with pytest.raises(bt.ResourceExhaustedError) as e:
        bt.device_put(np.zeros((1024, 1024), np.float32))
    assert isinstance(e.value, MemoryError)
    assert "float32(512, 1024)" in str(e.value)  # names the largest live array
    after = bt.memory_stats()
    assert after["bytes_in_use"] == before["bytes_in_use"]
    assert after["num_allocs"] == before["num_allocs"]
    bt.set_memory_limit(None)
    bt.device_put(np.zeros((1024, 1024), np.float32))
    del big


def test_invalid_arguments_from_cpp_are_value_errors():
    with pytest.raises(ValueError, match="negative"):
        _baton._empty([-1], "float32", None, "device")
    with pytest.raises(ValueError, match="memory kind"):
        bt.memory_stats(memory_kind="hbm")
    with pytest.raises(ValueError):
        bt.set_memory_limit(-5)
