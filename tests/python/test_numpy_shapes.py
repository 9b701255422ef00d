"""baton.numpy's reshaping, joining, splitting and take against numpy,
eager and inside jit, over every dtype."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

from _util import ALL_DTYPES as ALL
from _util import dtype_name as _name

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64


def sample(dtype, shape=(2, 3, 4)):
    return (np.arange(int(np.prod(shape))).reshape(shape) % 11).astype(dtype)


def both(fn, *args):
    eager = fn(*[bt.device_put(a) if isinstance(a, np.ndarray) else a for a in args])
    traced = bt.jit(fn)(*args)
    return eager, traced


def check(got, want):
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(
        np.asarray(got).astype(np.float64), want.astype(np.float64)
    )


CASES = [
    ("reshape", lambda m, a: m.reshape(a, (4, 6))),
    ("reshape-1", lambda m, a: m.reshape(a, (-1, 3))),
    ("ravel", lambda m, a: m.ravel(a)),
    ("transpose", lambda m, a: m.transpose(a)),
    ("transpose_axes", lambda m, a: m.transpose(a, (1, 2, 0))),
    ("swapaxes", lambda m, a: m.swapaxes(a, 0, -1)),
    ("moveaxis", lambda m, a: m.moveaxis(a, 0, -1)),
    ("moveaxis2", lambda m, a: m.moveaxis(a, (0, 1), (-1, 0))),
    ("expand_dims", lambda m, a: m.expand_dims(a, 1)),
    ("expand_dims2", lambda m, a: m.expand_dims(a, (0, -1))),
    ("squeeze", lambda m, a: m.squeeze(m.expand_dims(a, (0, 2)))),
    ("squeeze_axis", lambda m, a: m.squeeze(m.expand_dims(a, 2), axis=2)),
    ("broadcast_to", lambda m, a: m.broadcast_to(a[:, :1], (5, 2, 7, 4))),
    ("concatenate", lambda m, a: m.concatenate([a, a[:, :1]], axis=1)),
    ("concatenate-1", lambda m, a: m.concatenate([a, a], axis=-1)),
    ("concatenate_none", lambda m, a: m.concatenate([a, a[0]], axis=None)),
    ("stack", lambda m, a: m.stack([a, a, a])),
    ("stack_axis", lambda m, a: m.stack([a, a], axis=-1)),
    ("vstack", lambda m, a: m.vstack([a[0], a[1]])),
    ("hstack", lambda m, a: m.hstack([a[0], a[1]])),
    ("flip", lambda m, a: m.flip(a)),
    ("flip_axis", lambda m, a: m.flip(a, 1)),
    ("take", lambda m, a: m.take(a, [2, 0, -1], axis=1)),
    ("take_flat", lambda m, a: m.take(a, [[3, 5], [0, 23]])),
    ("take_clip", lambda m, a: m.take(a, [7, -9], axis=2, mode="clip")),
    ("take_wrap", lambda m, a: m.take(a, [7, -9], axis=2, mode="wrap")),
    ("pad", lambda m, a: m.pad(a, ((1, 0), (0, 2), (1, 1)))),
    ("pad_value", lambda m, a: m.pad(a, 1, constant_values=1)),
    ("tril", lambda m, a: m.tril(a)),
    ("triu", lambda m, a: m.triu(a, 1)),
    ("atleast_2d", lambda m, a: m.atleast_2d(a[0, 0])),
]


@pytest.mark.parametrize("dtype", ALL, ids=_name)
@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_shape_functions_match_numpy(name, fn, dtype):
    a = sample(dtype)
    want = fn(np, a)
    for got in both(lambda x: fn(bnp, x), a):
        check(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, ml_dtypes.bfloat16], ids=_name)
def test_split(dtype):
    a = sample(dtype, (6, 4))
    for args in ((3,), ([1, 4],), ([2, 100],), (2, 1), ([-1], 1)):
        want = np.split(a, *args)
        for got in both(lambda x, args=args: tuple(bnp.split(x, *args)), a):
            assert len(got) == len(want)
            for g, w in zip(got, want):
                check(g, w)


def test_concatenate_promotes():
    got = bnp.concatenate([np.ones(2, np.int8), np.ones(2, np.float16)])
    assert got.dtype == np.float16
    got = bnp.stack([np.ones(2, np.int8), np.ones(2, np.uint8)])
    assert got.dtype == np.int16


def test_take_out_of_range_fills_as_jax_and_raise_mode_raises():
    a = np.arange(5, dtype=np.float32)
    x = bt.device_put(a)
    nan = np.nan
    # jnp.take's default ('fill'): NaN / INT_MIN / True out of range.
    np.testing.assert_array_equal(np.asarray(bnp.take(x, [5, -1, -6])), [nan, 4, nan])
    got = bt.jit(lambda x, i: bnp.take(x, i))(x, np.array([-1, 7, -9]))
    np.testing.assert_array_equal(np.asarray(got), [4, nan, nan])
    ints = bt.device_put(np.arange(3, dtype=np.int32))
    assert int(bnp.take(ints, 3)) == np.iinfo(np.int32).min
    assert int(bnp.take(ints, 3, fill_value=-7)) == -7
    m = bt.device_put(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(
        np.asarray(bt.jit(lambda m, i: bnp.take(m, i, axis=1))(m, np.array([[0, 3]]))),
        [[[0, nan]], [[3, nan]]],
    )
    # numpy's behaviour on request: static indices raise, traced ones clamp.
    with pytest.raises(IndexError, match="out of bounds"):
        bnp.take(x, [5], mode="raise")
    got = bt.jit(lambda x, i: bnp.take(x, i, mode="raise"))(x, np.array([-1, 7, -9]))
    np.testing.assert_array_equal(np.asarray(got), [4, 4, 0])
    jnp = pytest.importorskip("jax.numpy")
    for idx in ([5, -1, -6], [[0, 9], [-2, 2]]):
        np.testing.assert_array_equal(
            np.asarray(bnp.take(x, idx)), np.asarray(jnp.take(a, np.asarray(idx)))
        )


def _np_take(a, idx, axis, mode):
    """numpy's take with baton's traced-index modes spelt out ('raise':
    negatives wrap, then clamp)."""
    n = a.shape[axis]
    i = idx.astype(np.int64)
    if mode == "wrap":
        return np.take(a, i % n, axis=axis)
    if mode == "clip":
        return np.take(a, np.clip(i, 0, n - 1), axis=axis)
    ok = (i >= -n) & (i < n)
    got = np.take(a, np.clip(np.where(i < 0, i + n, i), 0, n - 1), axis=axis)
    if mode != "fill":
        return got
    ok = ok.reshape((1,) * axis + idx.shape + (1,) * (a.ndim - axis - 1))
    return np.where(ok, got, np.nan)


@pytest.mark.parametrize("mode", ["fill", "raise", "clip", "wrap"])
@pytest.mark.parametrize("it", [np.int8, np.uint8, np.int16, np.uint32, np.int64])
def test_traced_take_matches_numpy_for_every_index_dtype(mode, it):
    rng = np.random.default_rng(5)
    for shape, axis in (((100,), 0), ((6, 50, 3), 1)):
        a = rng.standard_normal(shape).astype(np.float32)
        n = shape[axis]
        lo = 0 if np.dtype(it).kind == "u" else -3 * n // 2
        idx = rng.integers(lo, 3 * n // 2, (7, 11)).astype(it)
        got = bt.jit(lambda a, i, ax=axis: bnp.take(a, i, axis=ax, mode=mode))(a, idx)
        expect = _np_take(a, idx, axis, mode)
        np.testing.assert_array_equal(np.asarray(got), expect)


def test_traced_take_keeps_one_index_temporary():
    # The in-range mask is read from the raw indices inside the final select
    # and the gather clamps: the wrapped indices are the only temporary (the
    # mask and a clamped copy were two more).
    a = np.zeros(1 << 14, np.float32)
    idx = np.zeros(1 << 12, np.int32)
    f = bt.jit(lambda a, i: bnp.take(a, i))
    ma = f.lower(a, idx).compile().memory_analysis()
    assert ma.temp_size_in_bytes <= idx.nbytes
    assert ma.output_size_in_bytes == idx.size * 4


def test_reshape_returns_the_same_array_for_the_same_shape():
    x = bt.device_put(np.ones((2, 3), np.float32))
    assert bnp.reshape(x, (2, 3)) is x
    assert x.reshape(2, 3) is x


def test_shape_helpers():
    a = np.ones((2, 3))
    assert bnp.shape(a) == (2, 3) and bnp.ndim(a) == 2 and bnp.size(a) == 6
    assert bnp.broadcast_shapes((2, 1), (1, 3)) == (2, 3)
    x, y = bnp.broadcast_arrays(np.ones((2, 1)), np.ones((1, 3)))
    assert x.shape == y.shape == (2, 3)


def test_shape_errors_have_numpys_messages():
    x = bt.device_put(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="cannot reshape"):
        bnp.reshape(x, (4, 2))
    with pytest.raises(ValueError, match="one unknown"):
        bnp.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match="squeeze"):
        bnp.squeeze(x, 0)
    with pytest.raises(ValueError, match="broadcast"):
        bnp.broadcast_to(x, (3, 3))
    with pytest.raises(ValueError, match="must match"):
        bnp.concatenate([x, np.ones((3, 2))])
    with pytest.raises(ValueError, match="same shape"):
        bnp.stack([x, np.ones((3, 2))])
    with pytest.raises(ValueError, match="equal division"):
        bnp.split(x, 2, axis=1)
    with pytest.raises(ValueError, match="don't match"):
        bnp.transpose(x, (0, 0))
    with pytest.raises(np.exceptions.AxisError):
        bnp.expand_dims(x, 5)
    with pytest.raises(NotImplementedError, match="order"):
        bnp.reshape(x, (3, 2), order="F")
    with pytest.raises(NotImplementedError, match="constant"):
        bnp.pad(x, 1, mode="edge")
