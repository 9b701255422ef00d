"""The Array class: metadata, repr, copies, Python protocols."""

import copy
import pickle
import weakref

import ml_dtypes
import numpy as np
import pytest

import baton as bt

from _util import floats, in_use


def test_metadata():
    x = bt.device_put(np.zeros((2, 3, 4), np.int16), memory_kind="pinned_host")
    assert x.shape == (2, 3, 4) and x.ndim == 3 and x.size == 24
    assert x.dtype == np.int16 and x.itemsize == 2 and x.nbytes == 48
    assert x.memory_kind == "pinned_host" and x.device == bt.devices()[0]
    assert len(x) == 2
    with pytest.raises(TypeError):
        len(bt.device_put(1.0))


def test_repr_shows_values_like_jax():
    assert repr(bt.device_put(np.array([1, 2, 3], np.float32))) == (
        "Array([1., 2., 3.], dtype=float32)"
    )
    assert repr(bt.device_put(np.int32(7))) == "Array(7, dtype=int32)"
    assert repr(bt.zeros((2,), memory_kind="unpinned_host")) == (
        "Array([0., 0.], dtype=float32, memory_kind=unpinned_host)"
    )
    r = repr(bt.device_put(np.array([0.5], ml_dtypes.bfloat16)))
    assert "0.5" in r and "bfloat16" in r
    big = repr(bt.zeros((100, 100)))
    assert "..." in big  # summarized
    assert "Array" in str(bt.zeros((2,))) or str(bt.zeros((2,))) == "[0. 0.]"


def test_repr_releases_its_view(no_gc):
    x = bt.device_put(floats(4))
    repr(x)
    assert x._external_references == 0


def test_copy_is_independent(no_gc):
    x = bt.device_put(floats(1024))
    before = in_use()
    for make in (lambda: x.copy(), lambda: copy.copy(x), lambda: copy.deepcopy(x)):
        y = make().block_until_ready()
        assert y is not x and y._id != x._id
        assert not np.shares_memory(np.asarray(x), np.asarray(y))
        assert in_use() == before + 4096
        np.testing.assert_array_equal(np.asarray(y), floats(1024))
        del y


def test_readiness_and_block_until_ready_returns_self():
    x = bt.zeros((1 << 16,))
    assert x.block_until_ready() is x
    assert x.is_ready()


def test_weakref_and_unhashable():
    x = bt.zeros((2,))
    r = weakref.ref(x)
    assert r() is x
    with pytest.raises(TypeError):
        hash(x)


def test_pickle_round_trip():
    x = bt.device_put(
        np.arange(6, dtype=np.int32).reshape(2, 3), memory_kind="pinned_host"
    )
    y = pickle.loads(pickle.dumps(x))
    assert y.memory_kind == "pinned_host"
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


def test_methods_can_be_attached_later():
    from baton import _array_methods

    _array_methods.attach("_test_double_size", property(lambda self: 2 * self.size))
    try:
        assert bt.zeros((3,))._test_double_size == 6
    finally:
        delattr(bt.Array, "_test_double_size")
