"""baton.numpy's creation functions and dtype names: numpy's values,
JAX's default dtypes, snapshots of numpy data, traced forms inside jit."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

from _util import ALL_DTYPES as ALL
from _util import dtype_name as _name
from _util import in_use

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64


def check(got, want):
    assert isinstance(got, bt.Array)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(
        np.asarray(got).astype(np.float64), want.astype(np.float64)
    )


def test_dtype_names():
    assert bnp.float32 is np.float32 and bnp.int8 is np.int8 and bnp.bool_ is np.bool_
    assert np.dtype(bnp.bfloat16) == np.dtype(ml_dtypes.bfloat16)
    assert bnp.ndarray is bt.Array
    assert bnp.newaxis is None
    assert bnp.promote_types(bnp.int8, bnp.uint8) == np.int16
    assert bnp.promote_types("bfloat16", "float16") == np.float32
    assert bnp.result_type(bnp.zeros(2, bnp.bfloat16), 1.0) == ml_dtypes.bfloat16
    assert bnp.result_type(np.int32, 1.0) == np.float32
    assert bnp.issubdtype(bnp.bfloat16, bnp.floating)
    assert bnp.finfo(bnp.bfloat16).bits == 16
    assert bnp.iinfo(bnp.int8).max == 127


@pytest.mark.parametrize("dtype", ALL, ids=_name)
def test_array_snapshots_numpy_data(dtype):
    a = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    x = bnp.array(a)
    y = bnp.asarray(a)
    a[0, 0] = 2  # later changes never reach the baton arrays
    want = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    check(x, want)
    check(y, want)


def test_python_data_follows_jax_defaults():
    check(bnp.array([1, 2, 3]), np.array([1, 2, 3], np.int32))
    check(bnp.array([1.5, 2]), np.array([1.5, 2], np.float32))
    check(bnp.array([[True], [False]]), np.array([[True], [False]]))
    check(bnp.array(3), np.array(3, np.int32))
    check(bnp.array(2.5), np.array(2.5, np.float32))
    check(bnp.array([1, 2], dtype=bnp.bfloat16), np.array([1, 2], ml_dtypes.bfloat16))
    check(bnp.array(np.float64(1.5)), np.array(1.5, np.float64))  # numpy: strong
    check(bnp.array([1, 2], ndmin=3), np.array([1, 2], np.int32).reshape(1, 1, 2))


def test_asarray_of_a_baton_array_returns_it():
    x = bt.device_put(np.arange(3, dtype=np.float32))
    assert bnp.asarray(x) is x
    assert bnp.asarray(x, dtype=np.float32) is x
    y = bnp.asarray(x, dtype=np.int32)
    check(y, np.arange(3, dtype=np.int32))
    z = bnp.array(x)  # array() copies
    assert z is not x
    check(z, np.arange(3, dtype=np.float32))
    x.delete()
    assert not z.is_deleted()


def test_array_of_a_list_of_arrays_stacks():
    x = bt.device_put(np.ones(2, np.float32))
    check(bnp.array([x, x * 2]), np.array([[1, 1], [2, 2]], np.float32))


@pytest.mark.parametrize("dtype", ALL, ids=_name)
def test_fills(dtype):
    check(bnp.zeros((2, 3), dtype), np.zeros((2, 3), dtype))
    check(bnp.ones(4, dtype), np.ones(4, dtype))
    check(bnp.full((2, 2), 1, dtype), np.full((2, 2), 1, dtype))
    assert bnp.empty((3,), dtype).shape == (3,)
    like = np.zeros((3, 1), dtype)
    check(bnp.zeros_like(like), np.zeros_like(like))
    check(bnp.ones_like(bt.device_put(like)), np.ones_like(like))
    check(bnp.full_like(like, 1), np.full_like(like, 1))
    assert bnp.empty_like(like).shape == (3, 1)


def test_fill_defaults():
    assert bnp.zeros(3).dtype == np.float32
    assert bnp.full(3, 7).dtype == np.int32
    assert bnp.full(3, 7.5).dtype == np.float32
    assert bnp.full(3, True).dtype == np.bool_
    check(
        bnp.full((2, 3), np.array([1, 2, 3], np.int8)),
        np.full((2, 3), np.array([1, 2, 3], np.int8)),
    )
    check(
        bnp.zeros_like(bt.device_put(np.ones(2, np.int8)), dtype=np.float16),
        np.zeros(2, np.float16),
    )
    check(bnp.ones_like(np.ones(2, np.int8), shape=(3, 1)), np.ones((3, 1), np.int8))


@pytest.mark.parametrize(
    "args, dtype",
    [
        ((5,), None),
        ((2, 10), None),
        ((10, 2, -3), None),
        ((0, 1, 0.1), None),
        ((1.5, 4), None),
        ((5,), np.float16),
        ((3, 40, 7), np.int8),
        ((0, 7), ml_dtypes.bfloat16),
        ((5, 2), None),
    ],
)
def test_arange(args, dtype):
    want = np.arange(*args, dtype=np.float64 if dtype is None else None)
    if dtype is None:
        is_int = all(isinstance(a, int) for a in args)
        want = want.astype(np.int32 if is_int else np.float32)
    else:
        want = np.arange(*args).astype(dtype)
    check(bnp.arange(*args, dtype=dtype), want)
    traced = bt.jit(lambda: bnp.arange(*args, dtype=dtype))()
    np.testing.assert_array_equal(
        np.asarray(traced).astype(np.float64), want.astype(np.float64)
    )


def test_linspace_eye_identity():
    check(bnp.linspace(0, 1, 11), np.linspace(0, 1, 11).astype(np.float32))
    check(
        bnp.linspace(2, 3, 4, endpoint=False),
        np.linspace(2, 3, 4, endpoint=False).astype(np.float32),
    )
    check(bnp.linspace(0, 10, 5, dtype=np.float64), np.linspace(0, 10, 5))
    check(bnp.eye(3), np.eye(3, dtype=np.float32))
    check(bnp.eye(3, 4, k=1, dtype=np.int8), np.eye(3, 4, 1, dtype=np.int8))
    check(
        bnp.identity(2, dtype=ml_dtypes.bfloat16),
        np.identity(2, dtype=ml_dtypes.bfloat16),
    )
    traced = bt.jit(lambda: bnp.eye(3, 5, k=-1))()
    np.testing.assert_array_equal(
        np.asarray(traced), np.eye(3, 5, -1, dtype=np.float32)
    )


def test_creation_inside_jit_makes_no_device_arrays():
    """Fills inside a trace are program values (broadcast scalars, iotas),
    never device buffers captured as hidden arguments or big constants."""

    @bt.jit
    def f(x):
        return (
            x
            + bnp.zeros(x.shape)
            + bnp.ones_like(x)
            + bnp.full(x.shape, 2.0)
            + bnp.arange(x.shape[0])
        )

    x = bt.device_put(np.zeros(1 << 16, np.float32))
    m = f.lower(x).compile().memory_analysis()
    assert m.constant_size_in_bytes < 64
    np.testing.assert_array_equal(
        np.asarray(f(x)), 3 + np.arange(1 << 16, dtype=np.float32)
    )


def test_creation_costs_only_the_array(no_gc):
    base = in_use()
    x = bnp.zeros((1 << 18,), np.float32).block_until_ready()
    assert in_use() - base == x.nbytes
    del x
    assert in_use() == base


def test_bad_creation_arguments():
    with pytest.raises(TypeError, match="complex256"):
        bnp.zeros(3, np.clongdouble)
    with pytest.raises(ValueError, match="negative"):
        bnp.zeros((-1, 2))
    with pytest.raises(TypeError):
        bnp.zeros("abc")
    with pytest.raises(TypeError, match="objects"):
        bnp.array([object()])
    with pytest.raises(ValueError):
        bnp.array([[1, 2], [3]])
    with pytest.raises(ValueError, match="zero"):
        bnp.arange(0, 5, 0)
    with pytest.raises(OverflowError):
        bnp.array([2**40])
    with pytest.raises(TypeError, match="static"):
        bt.jit(lambda n: bnp.arange(n))(5)
