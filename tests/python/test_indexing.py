"""x[key]: numpy's semantics for static indices (eager and inside jit),
JAX's for traced ones (negative indices wrap, then reads clamp)."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton import _ops

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64

A = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)

KEYS = [
    0,
    -1,
    2,
    (1, 2),
    (1, -2, 4),
    (slice(None), 2),
    (Ellipsis, 1),
    (Ellipsis, -1, slice(None)),
    (None, 1),
    (1, None, slice(1, 3)),
    slice(1, None),
    slice(None, None, -1),
    (slice(None), slice(None, None, -2)),
    (slice(3, 0, -2), 1),
    (slice(None), slice(None), slice(4, None, -3)),
    (slice(1, 2), slice(None, None, 3), -2),
    slice(10, 20),
    slice(-10, 2),
    slice(2, 1),
    (slice(None), slice(None), None),
    (Ellipsis, None),
    (None, Ellipsis, None),
    ([0, 2],),
    [2, 0, 2, -1],
    np.array([1, -1]),
    (slice(None), [1, 1, 3]),
    ([0, 2], [1, 3]),
    (0, slice(None), [1, 2]),
    ([0, 1], None, [0, 1]),
    (slice(None), [0, 1], None, [0, 1]),
    (None, [0, 1], [0, 1]),
    (np.array([[0], [2]]), slice(1, 3), np.array([0, 4])),
    (Ellipsis, [-1, 0]),
    ([2, -3], slice(None, None, -1), [[0], [1]]),
    ([],),
    (np.array([[1, 2]]),),
    (np.array([True, False, True]),),
    (1, np.array([True, False, True, True])),
    (np.ones((3, 4), bool),),
    (np.array([[True, False, False, True]] * 3), slice(2, 4)),
    (),
    Ellipsis,
]


def _key_id(k):
    return repr(k).replace(" ", "")[:40]


@pytest.mark.parametrize("key", KEYS, ids=_key_id)
def test_static_indexing_matches_numpy(key):
    x = bt.device_put(A)
    want = A[key]
    got = x[key]
    assert isinstance(got, bt.Array)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)
    traced = bt.jit(lambda x: x[key])(x)
    assert traced.shape == want.shape
    np.testing.assert_array_equal(np.asarray(traced), want)


@pytest.mark.parametrize(
    "dtype",
    [
        np.bool_,
        np.int8,
        np.uint8,
        np.int32,
        np.int64,
        np.uint32,
        np.float16,
        bnp.bfloat16,
        np.float64,
    ],
)
def test_indexing_every_dtype(dtype):
    a = (np.arange(24).reshape(4, 6) % 7).astype(dtype)
    x = bt.device_put(a)
    for key in [(1, slice(None, None, 2)), ([3, 0], -1), (slice(None), [5, 0, 5])]:
        got = x[key]
        assert got.dtype == a.dtype
        np.testing.assert_array_equal(np.asarray(got), a[key])


def test_out_of_range_static_integer_raises_index_error():
    x = bt.device_put(A)
    for key in (3, -4, (0, 4), (0, 0, 5), (Ellipsis, -6)):
        with pytest.raises(IndexError, match="out of bounds"):
            x[key]
        with pytest.raises(IndexError, match="out of bounds"):
            bt.jit(lambda x, key=key: x[key])(x)
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 3]]
    with pytest.raises(IndexError, match="out of bounds"):
        x[:, np.array([-5])]


def test_bad_keys():
    x = bt.device_put(A)
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(IndexError, match="valid indices"):
        x[1.0]
    with pytest.raises(IndexError, match="valid indices"):
        x[np.array([0.5])]
    with pytest.raises(IndexError, match="valid indices"):
        x["a"]
    with pytest.raises(IndexError, match="boolean index"):
        x[np.array([True, False])]
    with pytest.raises(NotImplementedError, match="boolean scalar"):
        x[True]


def test_slices_clip():
    x = bt.device_put(A)
    np.testing.assert_array_equal(np.asarray(x[1:100]), A[1:100])
    np.testing.assert_array_equal(np.asarray(x[-100:100:2]), A[-100:100:2])
    assert x[5:].shape == (0, 4, 5)


# ---- traced indices: negative wrap, reads clamp ----


@pytest.mark.parametrize("i", [0, 2, 9, -1, -10, 10, 11, 1000, -11, -1000])
def test_traced_scalar_index_wraps_then_clamps(i):
    a = np.arange(10, dtype=np.float32) * 10
    f = bt.jit(lambda x, i: x[i])
    want = a[min(max(i + 10 if i < 0 else i, 0), 9)]
    assert float(f(bt.device_put(a), np.int32(i))) == want


def test_traced_index_array_clamps_per_axis():
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.array([0, 5, -1, -7])
    j = np.array([3, 1, 9, -1])
    got = bt.jit(lambda y, i, j: y[i, j])(bt.device_put(b), i, j)
    ii = np.clip(np.where(i < 0, i + 3, i), 0, 2)
    jj = np.clip(np.where(j < 0, j + 4, j), 0, 3)
    np.testing.assert_array_equal(np.asarray(got), b[ii, jj])


def test_traced_scalar_with_slices():
    b = np.arange(20, dtype=np.float32).reshape(4, 5)
    y = bt.device_put(b)
    f = bt.jit(lambda y, i: y[i, 1:4])
    np.testing.assert_array_equal(np.asarray(f(y, np.int32(2))), b[2, 1:4])
    np.testing.assert_array_equal(np.asarray(f(y, np.int32(-1))), b[3, 1:4])
    np.testing.assert_array_equal(np.asarray(f(y, np.int32(17))), b[3, 1:4])
    g = bt.jit(lambda y, i: y[::-1, i])
    np.testing.assert_array_equal(np.asarray(g(y, np.int32(-2))), b[::-1, 3])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int64, np.uint32])
def test_traced_index_dtypes(dtype):
    a = np.arange(300, dtype=np.float32)
    f = bt.jit(lambda x, i: x[i])
    idx = np.array([0, 5, 100], dtype)
    np.testing.assert_array_equal(np.asarray(f(bt.device_put(a), idx)), a[idx])
    if np.dtype(dtype).kind == "i":
        assert float(f(bt.device_put(a), np.array(-1, dtype))) == 299


def test_baton_array_indices_are_dynamic():
    """A baton Array index is not looked at: JAX's semantics (clamping)."""
    a = np.arange(5, dtype=np.float32)
    x = bt.device_put(a)
    got = x[bt.device_put(np.array([1, -1, 20]))]
    np.testing.assert_array_equal(np.asarray(got), [1, 4, 4])


def test_concrete_boolean_array_mask_outside_jit():
    a = np.arange(6, dtype=np.float32)
    x = bt.device_put(a)
    np.testing.assert_array_equal(np.asarray(x[x > 2]), a[a > 2])


def test_traced_boolean_mask_is_not_supported():
    x = bt.device_put(np.arange(6, dtype=np.float32))
    with pytest.raises(NotImplementedError, match=r"bnp\.where"):
        bt.jit(lambda x: x[x > 2])(x)


def test_traced_slice_bounds_are_refused():
    x = bt.device_put(np.arange(6, dtype=np.float32))
    with pytest.raises(IndexError, match="dynamic_slice"):
        bt.jit(lambda x, i: x[i : i + 2])(x, np.int32(1))


def test_static_index_loop_compiles_once():
    a = np.arange(7 * 11 * 3, dtype=np.float32).reshape(7, 11, 3)  # a fresh shape
    x = bt.device_put(a)
    n = _ops.eager_cache_size()
    for i in range(7):
        for j in range(-11, 11):
            np.testing.assert_array_equal(np.asarray(x[i, j]), a[i, j])
    assert _ops.eager_cache_size() == n + 1
    x[1:3]
    x[0:2]  # same size: the start is an argument
    x[5:]
    assert _ops.eager_cache_size() == n + 2


def test_getitem_keeps_the_source():
    x = bt.device_put(A)
    x[1]
    x[[0, 1]]
    assert not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), A)


def test_at_get_is_getitem():
    x = bt.device_put(A)
    np.testing.assert_array_equal(np.asarray(x.at[1, ::2].get()), A[1, ::2])
