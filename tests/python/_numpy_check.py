"""Shared helpers of the baton.numpy math tests (test_numpy_math.py,
test_numpy_polynomials_statistics.py, test_numpy_nan_reductions_cumulative.py):
sample inputs, running a function eagerly and under bt.jit, and comparing
with numpy's result (dtype, shape, values; NaNs alike)."""

import ml_dtypes
import numpy as np

import baton as bt

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
I32 = np.dtype(np.int32)


def _name(d):
    return np.dtype(d).name


def both(fn, *args):
    eager = fn(*[bt.device_put(a) if isinstance(a, np.ndarray) else a for a in args])
    traced = bt.jit(fn)(*args)
    return eager, traced


def sample(shape, dtype, seed=0, scale=3.0, nan=0.0):
    rng = np.random.default_rng(seed)
    d = np.dtype(dtype)
    if d == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if d.kind in "iu":
        lo = 0 if d.kind == "u" else -5
        return rng.integers(lo, 6, shape).astype(d)
    a = rng.standard_normal(shape) * scale
    if nan:
        a[rng.random(shape) < nan] = np.nan
    return a.astype(d)


def check(got, want, dtype=None, rtol=1e-6, atol=1e-6):
    got = np.asarray(got)
    want = np.asarray(want)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(
            got.astype(np.float64),
            np.asarray(want, np.float64),
            rtol=rtol,
            atol=atol,
            equal_nan=True,
        )


def tol(d):
    return {F16: 3e-3, BF16: 3e-2, F32: 2e-5}.get(np.dtype(d), 1e-11)
