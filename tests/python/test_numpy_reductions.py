"""baton.numpy's reductions against numpy over every dtype (JAX's result
dtypes: sums of small integers int32/uint32, means of integers float32,
arg-reductions int32)."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = [pytest.mark.x64, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32]
FLOATS = [F16, BF16, np.dtype(np.float32), np.dtype(np.float64)]
ALL = [np.bool_, *INTS, *FLOATS]
SHAPE = (5, 40, 33)
AXES = [None, 0, 1, 2, -1, (0, 1), (1, 2), (0, 2)]


def _name(d):
    return np.dtype(d).name


def is_float(d):
    d = np.dtype(d)
    return d.kind == "f" or d == BF16


def sample(dtype, seed, lo=-3, hi=4):
    rng = np.random.default_rng(seed)
    d = np.dtype(dtype)
    if d == np.bool_:
        return rng.integers(0, 2, SHAPE).astype(bool)
    if d.kind in "iu":
        return rng.integers(0 if d.kind == "u" else lo, hi, SHAPE).astype(d)
    return (rng.standard_normal(SHAPE) * 3).astype(d)


def jax_sum_dtype(d):
    d = np.dtype(d)
    if d in (np.dtype(np.bool_), np.dtype(np.int8), np.dtype(np.int16)):
        return np.dtype(np.int32)
    if d == np.uint8:
        return np.dtype(np.uint32)
    return d


def tol(d):
    return {F16: 2e-2, BF16: 1e-1, np.dtype(np.float32): 1e-5}.get(np.dtype(d), 1e-12)


def both(fn, a):
    return np.asarray(fn(bt.device_put(a))), np.asarray(bt.jit(fn)(a))


@pytest.mark.parametrize("dtype", ALL, ids=_name)
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum(dtype, axis, keepdims):
    a = sample(dtype, 1)
    out = jax_sum_dtype(dtype)
    want = np.sum(a.astype(np.float64), axis=axis, keepdims=keepdims)
    for got in both(lambda x: bnp.sum(x, axis=axis, keepdims=keepdims), a):
        assert got.dtype == out
        assert got.shape == want.shape
        if is_float(out):
            np.testing.assert_allclose(
                got.astype(np.float64), want, rtol=tol(out), atol=tol(out) * 30
            )
        else:
            np.testing.assert_array_equal(got, want.astype(out))


@pytest.mark.parametrize(
    "dtype", [np.int32, np.int64, np.float32, np.float64, F16], ids=_name
)
@pytest.mark.parametrize("axis", [None, 0, (0, 2)], ids=str)
def test_prod(dtype, axis):
    a = sample(dtype, 2, lo=-2, hi=3)[:, :4, :3]
    if is_float(dtype):
        a = (np.sign(a) * (1 + np.abs(a) / 10)).astype(dtype)
    # The exact product, rounded to the result dtype (a float16 product can
    # overflow to +-inf, as numpy's and JAX's do).
    want = np.prod(a.astype(np.float64), axis=axis)
    want = np.asarray(want).astype(jax_sum_dtype(dtype)).astype(np.float64)
    got = np.asarray(bnp.prod(bt.device_put(a), axis=axis))
    assert got.dtype == jax_sum_dtype(dtype)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol(dtype) * 10)


@pytest.mark.parametrize("dtype", ALL, ids=_name)
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_exact(name, dtype, axis):
    a = sample(dtype, 3, lo=-100, hi=100)
    want = getattr(np, name)(a, axis=axis)
    for got in both(lambda x: getattr(bnp, name)(x, axis=axis), a):
        assert got.dtype == a.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))


def test_max_min_propagate_nan():
    a = np.ones((3, 40), np.float32)
    a[1, 7] = np.nan
    got = np.asarray(bnp.max(bt.device_put(a), axis=1))
    np.testing.assert_array_equal(np.isnan(got), [False, True, False])
    assert np.isnan(float(bnp.min(bt.device_put(a))))


@pytest.mark.parametrize("dtype", ALL, ids=_name)
@pytest.mark.parametrize("axis", [None, 1, (0, 2)], ids=str)
@pytest.mark.parametrize("name", ["any", "all"])
def test_any_all(name, dtype, axis):
    a = sample(dtype, 4, lo=0, hi=2)
    if name == "all":
        a = (a != 0).astype(dtype) if dtype != np.bool_ else a
        a[:, :, 3:] = 1
    want = getattr(np, name)(a, axis=axis)
    for got in both(lambda x: getattr(bnp, name)(x, axis=axis), a):
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ALL, ids=_name)
@pytest.mark.parametrize("axis", [None, 0, 1, (1, 2)], ids=str)
def test_mean(dtype, axis):
    a = sample(dtype, 5)
    out = np.dtype(dtype) if is_float(dtype) else np.dtype(np.float32)
    want = np.mean(a.astype(np.float64), axis=axis)
    for got in both(lambda x: bnp.mean(x, axis=axis), a):
        assert got.dtype == out
        np.testing.assert_allclose(
            got.astype(np.float64), want, rtol=tol(out), atol=tol(out)
        )


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, *FLOATS], ids=_name)
@pytest.mark.parametrize("axis", [None, 1, (0, 2)], ids=str)
@pytest.mark.parametrize("ddof", [0, 1])
def test_var_std(dtype, axis, ddof):
    a = sample(dtype, 6)
    out = np.dtype(dtype) if is_float(dtype) else np.dtype(np.float32)
    for name in ("var", "std"):
        want = getattr(np, name)(a.astype(np.float64), axis=axis, ddof=ddof)
        got = np.asarray(getattr(bnp, name)(bt.device_put(a), axis=axis, ddof=ddof))
        assert got.dtype == out
        np.testing.assert_allclose(
            got.astype(np.float64), want, rtol=tol(out) * 4, atol=tol(out)
        )


@pytest.mark.parametrize("dtype", ALL, ids=_name)
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1], ids=str)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(name, dtype, axis):
    a = sample(dtype, 7, lo=-5, hi=5)  # many ties: the first one wins
    want = getattr(np, name)(a, axis=axis)
    for got in both(lambda x: getattr(bnp, name)(x, axis=axis), a):
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want)


def test_argmax_first_nan_wins():
    a = np.array([[1.0, np.nan, 3.0, np.nan], [4.0, 2.0, 4.0, 0.0]], np.float32)
    np.testing.assert_array_equal(
        np.asarray(bnp.argmax(bt.device_put(a), axis=1)), np.argmax(a, axis=1)
    )
    np.testing.assert_array_equal(
        np.asarray(bnp.argmin(bt.device_put(a), axis=1)), np.argmin(a, axis=1)
    )


def test_argmax_keepdims():
    a = sample(np.float32, 8)
    got = bnp.argmax(bt.device_put(a), axis=1, keepdims=True)
    np.testing.assert_array_equal(np.asarray(got), np.argmax(a, axis=1, keepdims=True))
    got = bnp.argmax(bt.device_put(a), keepdims=True)
    assert got.shape == (1, 1, 1)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 16, 17, 31, 32, 33, 100])
def test_short_reductions(n):
    a = np.arange(n, dtype=np.float32) + 1
    x = bt.device_put(a)
    assert float(bnp.sum(x)) == a.sum()
    assert float(bnp.max(x)) == n
    assert float(bnp.min(x)) == 1
    m = np.arange(3 * n, dtype=np.int32).reshape(3, n)
    np.testing.assert_array_equal(
        np.asarray(bnp.sum(bt.device_put(m), axis=1)), m.sum(axis=1)
    )
    np.testing.assert_array_equal(
        np.asarray(bnp.max(bt.device_put(m), axis=0)), m.max(axis=0)
    )


def test_sum_dtype_argument():
    a = np.full(300, 100, np.int8)
    got = bnp.sum(bt.device_put(a), dtype=np.int64)
    assert got.dtype == np.int64 and int(got) == 30000
    got = bnp.mean(bt.device_put(np.arange(64, dtype=np.int32)), dtype=np.float64)
    assert got.dtype == np.float64 and float(got) == 31.5


def test_reduction_errors():
    x = bt.device_put(np.ones((2, 3), np.float32))
    with pytest.raises(np.exceptions.AxisError):
        bnp.sum(x, axis=2)
    with pytest.raises(ValueError, match="repeated axis"):
        bnp.sum(x, axis=(0, 0))
    with pytest.raises(ValueError, match="zero-size"):
        bnp.max(bt.device_put(np.ones((0, 3), np.float32)), axis=0)
    with pytest.raises(ValueError, match="empty"):
        bnp.argmax(bt.device_put(np.ones((0,), np.float32)))
    with pytest.raises(NotImplementedError, match="out="):
        bnp.sum(x, out=np.empty(()))
    with pytest.raises(NotImplementedError, match="where="):
        bnp.sum(x, where=np.ones((2, 3), bool))
    # A reduction over an empty axis that keeps others is fine.
    assert bnp.max(bt.device_put(np.ones((0, 3), np.float32)), axis=1).shape == (0,)


def test_numpy_functions_call_baton_methods():
    """np.sum(x) on a baton Array uses its .sum method (numpy's protocol)."""
    x = bt.device_put(np.arange(40, dtype=np.float32))
    got = np.sum(x)
    assert isinstance(got, bt.Array) and float(got) == 780.0
    assert float(np.mean(x)) == 19.5


@pytest.mark.parametrize("name, wrapped", [("sum", 44), ("prod", 64)])
def test_an_explicit_small_integer_dtype_is_the_result_dtype(name, wrapped):
    # As numpy and JAX: the reduction's dtype is the one asked for, wrapping.
    x = np.array([100, 100, 100], np.int32)
    for r in (
        getattr(bnp, name)(x, dtype=np.int8),
        bt.jit(lambda v: getattr(bnp, name)(v, dtype=np.int8))(x),
    ):
        assert r.dtype == np.int8
        assert int(r) == wrapped
    assert getattr(bnp, name)(x, dtype=np.int16).dtype == np.int16
