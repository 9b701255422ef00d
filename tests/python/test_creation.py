"""bt.empty / zeros / ones / full."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt

from _util import in_use


@pytest.mark.parametrize("kind", ["device", "pinned_host", "unpinned_host"])
def test_zeros_ones_full(kind):
    before = in_use(kind)
    z = bt.zeros((4, 64), memory_kind=kind)
    assert z.dtype == np.float32 and z.memory_kind == kind
    assert in_use(kind) == before + 1024
    np.testing.assert_array_equal(np.asarray(z), np.zeros((4, 64)))
    np.testing.assert_array_equal(
        np.asarray(bt.ones(3, np.int64, memory_kind=kind)), [1, 1, 1]
    )
    f = bt.full((2, 2), 2.5, ml_dtypes.bfloat16, memory_kind=kind)
    assert f.dtype == ml_dtypes.bfloat16 and f.tolist() == [[2.5, 2.5], [2.5, 2.5]]


def test_dtype_defaults_and_python_types():
    assert bt.full((2,), 3).dtype == np.int32
    assert bt.full((2,), 3.0).dtype == np.float32
    assert bt.full((2,), True).dtype == np.bool_
    assert bt.zeros(2, dtype=int).dtype == np.int32
    assert bt.zeros(2, dtype="bfloat16").dtype == ml_dtypes.bfloat16
    assert bt.ones((), bool).item() is True
    assert bt.empty((3, 5)).shape == (3, 5)


def test_full_broadcasts_array_fill_values():
    x = bt.full((2, 3), np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(np.asarray(x), [[1, 2, 3], [1, 2, 3]])
    with pytest.raises(ValueError):
        bt.full((2, 3), np.array([1, 2], np.float32))


def test_bad_arguments():
    with pytest.raises(ValueError):
        bt.zeros((-1, 2))
    with pytest.raises(TypeError):
        bt.zeros((2.5,))
    with pytest.raises(TypeError):
        bt.zeros((2,), dtype=np.uint16)
    with pytest.raises(TypeError):
        bt.zeros((2,), device="cpu")
    with pytest.raises(ValueError):
        bt.zeros((2,), memory_kind="hbm")
