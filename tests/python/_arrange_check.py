"""Shared helpers of the baton.numpy arrangement tests
(test_numpy_arrange.py, test_numpy_index_builders.py,
test_numpy_arrange_errors.py): sample inputs, running a function eagerly and
under bt.jit, and comparing with numpy's result (dtype, shape, values)."""

import numpy as np

import baton as bt


def sample(dtype, shape=(2, 3, 4)):
    return (np.arange(int(np.prod(shape))).reshape(shape) % 7).astype(dtype)


def both(fn, *args):
    """fn on device arrays (eager) and fn of the same data traced by jit."""
    eager = fn(*[bt.device_put(a) if isinstance(a, np.ndarray) else a for a in args])
    traced = bt.jit(fn)(*args)
    return eager, traced


def check(got, want, dtype=True):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)), type(got)
        assert len(got) == len(want), (len(got), len(want))
        for g, w in zip(got, want):
            check(g, w, dtype)
        return
    want = np.asarray(want)
    if dtype:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert tuple(got.shape) == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(
        np.asarray(got).astype(np.float64), want.astype(np.float64)
    )
