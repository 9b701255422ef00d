"""baton.numpy's sorting functions (baton/numpy/_sorting.py) and lax.sort /
lax.argsort against numpy and jax.numpy: values with NaNs, signed zeros and
ties, stability, every dtype, eager and under bt.jit, derivatives against
JAX, vmap, and the errors."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton import lax

from _util import ALL_DTYPES

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = [pytest.mark.x64, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = ALL_DTYPES
SPECIAL = np.array(
    [1.0, np.nan, -0.0, 0.0, 1.0, -np.inf, -np.nan, 2.0, 0.0, -0.0, np.inf, 0.5],
    np.float32,
)


def sample(dtype, shape=(4, 7), seed=0):
    rng = np.random.default_rng(seed)
    d = np.dtype(dtype)
    if d == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if d.kind in "iu":
        return rng.integers(0 if d.kind == "u" else -4, 5, shape).astype(d)
    return (rng.integers(-4, 5, shape) * 0.5).astype(d)  # many ties


def same(got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_and_argsort_match_numpy(dtype, axis):
    x = sample(dtype)
    same(bnp.sort(x, axis=axis), np.sort(x, axis=axis))
    same(
        bnp.argsort(x, axis=axis),
        np.argsort(x, axis=axis, kind="stable").astype(np.int32),
    )
    same(bt.jit(lambda v: bnp.sort(v, axis=axis))(x), np.sort(x, axis=axis))


def test_specials_order_and_stability():
    x = SPECIAL
    # -0.0 == 0.0 and NaNs last, ties in their original order.
    same(bnp.argsort(x), np.argsort(x, kind="stable").astype(np.int32))
    got = np.asarray(bnp.sort(x))
    np.testing.assert_array_equal(got, np.sort(x))
    np.testing.assert_array_equal(
        np.signbit(got), np.signbit(x[np.argsort(x, kind="stable")])
    )


def test_descending_matches_jnp():
    jnp = pytest.importorskip("jax.numpy")
    for x in (SPECIAL, sample(np.int32), sample(np.float32), sample(np.bool_)):
        for axis in (-1, 0) if x.ndim > 1 else (-1,):
            want = np.asarray(jnp.argsort(x, axis=axis, descending=True, stable=True))
            same(bnp.argsort(x, axis=axis, descending=True), want)
            wv = np.asarray(jnp.sort(x, axis=axis, descending=True))
            gv = np.asarray(bnp.sort(x, axis=axis, descending=True))
            same(gv, wv)
            if gv.dtype.kind == "f":
                np.testing.assert_array_equal(np.signbit(gv), np.signbit(wv))


def test_lax_sort_and_argsort():
    x = sample(np.float32, (3, 5))
    f = bt.jit(lambda v: (lax.sort(v), lax.argsort(v, 0), lax.sort(v, 0, descending=True)))
    s, a, d = f(x)
    same(s, np.sort(x, -1))
    same(a, np.argsort(x, 0, kind="stable").astype(np.int32))
    same(d, np.sort(x, 0)[::-1])


def test_empty_and_single():
    same(bnp.sort(np.zeros((0, 3), np.float32)), np.zeros((0, 3), np.float32))
    same(bnp.argsort(np.zeros((2, 0), np.int32)), np.zeros((2, 0), np.int32))
    same(bnp.sort(np.array([3.0], np.float32)), np.array([3.0], np.float32))
    same(bnp.sort(np.float32(2.0), axis=None), np.array([2.0], np.float32))


def test_partition_and_argpartition_match_jnp():
    jnp = pytest.importorskip("jax.numpy")
    x = np.array([[3, 1, 2, 5, 4, 1], [0, 9, -1, 2, 2, 7]], np.float32)
    for kth in (0, 2, 5, -1):
        for axis in (-1, 0):
            if axis == 0 and kth not in (0, -1):
                continue
            same(bnp.partition(x, kth, axis), np.asarray(jnp.partition(x, kth, axis)))
            same(
                bnp.argpartition(x, kth, axis),
                np.asarray(jnp.argpartition(x, kth, axis)),
            )


def test_lexsort_matches_numpy():
    rng = np.random.default_rng(1)
    a, b, c = (rng.integers(0, 3, 20).astype(np.int32) for _ in range(3))
    same(bnp.lexsort((a, b)), np.lexsort((a, b)).astype(np.int32))
    same(bnp.lexsort((a, b, c)), np.lexsort((a, b, c)).astype(np.int32))
    same(bnp.lexsort(np.stack([a, b])), np.lexsort(np.stack([a, b])).astype(np.int32))
    k = rng.integers(0, 3, (2, 4, 5)).astype(np.int32)
    same(
        bnp.lexsort((k[0], k[1]), axis=0),
        np.lexsort((k[0], k[1]), axis=0).astype(np.int32),
    )
    same(
        bt.jit(lambda u, v: bnp.lexsort((u, v)))(a, b),
        np.lexsort((a, b)).astype(np.int32),
    )


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantiles_match_numpy(method):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 6))
    ref, rtol = np, 1e-12
    if method == "nearest":
        # At exactly half-way jnp takes the lower element, numpy rounds the
        # position half to even: compared with jnp (float32, x64 off there).
        ref, rtol = pytest.importorskip("jax.numpy"), 1e-6
        x = x.astype(np.float32)
    for axis in (None, 0, 1, (0, 1)):
        for q in (0.0, 0.3, 0.5, 1.0, np.array([0.1, 0.75])):
            for keepdims in (False, True):
                np.testing.assert_allclose(
                    bnp.quantile(x, q, axis=axis, method=method, keepdims=keepdims),
                    ref.quantile(x, q, axis=axis, method=method, keepdims=keepdims),
                    rtol=rtol,
                )
        np.testing.assert_allclose(
            bnp.percentile(x, 30.0, axis=axis, method=method),
            ref.percentile(x, 30.0, axis=axis, method=method),
            rtol=rtol,
        )


def test_nan_handling():
    x = np.array(
        [
            [1.0, np.nan, 3.0, 2.0],
            [4.0, 5.0, 6.0, 7.0],
            [np.nan, np.nan, np.nan, np.nan],
        ]
    )
    for axis in (None, 1, 0):
        np.testing.assert_allclose(bnp.median(x, axis=axis), np.median(x, axis=axis))
        np.testing.assert_allclose(
            bnp.nanmedian(x, axis=axis), np.nanmedian(x, axis=axis)
        )
        np.testing.assert_allclose(
            bnp.nanquantile(x, 0.3, axis=axis), np.nanquantile(x, 0.3, axis=axis)
        )
        np.testing.assert_allclose(
            bnp.nanpercentile(x, [10.0, 90.0], axis=axis),
            np.nanpercentile(x, [10.0, 90.0], axis=axis),
        )
        np.testing.assert_allclose(
            bnp.quantile(x, 0.3, axis=axis), np.quantile(x, 0.3, axis=axis)
        )


def test_median_dtypes_and_jit():
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = bnp.median(i, axis=1)
    assert np.asarray(got).dtype == np.float64  # x64 on: numpy's
    np.testing.assert_allclose(got, np.median(i, axis=1))
    f = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.asarray(bnp.median(f)).dtype == np.float32
    np.testing.assert_allclose(
        bt.jit(lambda v: bnp.median(v, axis=0))(f), np.median(f, axis=0)
    )
    np.testing.assert_allclose(
        bt.jit(lambda v, q: bnp.quantile(v, q))(f, np.float32(0.3)),
        np.quantile(f, 0.3),
        rtol=1e-6,
    )


def test_grad_of_sort_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x = np.array([[0.3, -1.2, 0.3, 2.0], [1.0, 1.0, -0.5, 0.0]], np.float32)
    w = np.arange(8, dtype=np.float32).reshape(2, 4)

    def loss(mod, desc):
        return lambda v: mod.sum(mod.sin(mod.sort(v, axis=-1, descending=desc)) * w)

    for desc in (False, True):
        g = bt.grad(loss(bnp, desc))(x)
        want = jax.grad(loss(jnp, desc))(x)
        np.testing.assert_allclose(g, want, rtol=1e-6)
    gq = bt.grad(lambda v: bnp.quantile(v, 0.3))(x)
    np.testing.assert_allclose(
        gq, jax.grad(lambda v: jnp.quantile(v, 0.3))(x), rtol=1e-6
    )
    gm = bt.grad(lambda v: bnp.median(v))(x)
    np.testing.assert_allclose(gm, jax.grad(lambda v: jnp.median(v))(x), rtol=1e-6)


def test_jvp_of_sort():
    x = np.array([3.0, 1.0, 2.0], np.float32)
    t = np.array([10.0, 20.0, 30.0], np.float32)
    y, ty = bt.jvp(lambda v: bnp.sort(v), (x,), (t,))
    np.testing.assert_array_equal(y, [1, 2, 3])
    np.testing.assert_array_equal(ty, [20, 30, 10])


def test_vmap_of_sort():
    x = sample(np.float32, (3, 4, 5), seed=3)
    for in_axes in (0, 1, 2):
        got = bt.vmap(lambda v: bnp.sort(v, axis=0), in_axes=in_axes)(x)
        want = np.stack(
            [np.sort(np.take(x, b, in_axes), axis=0) for b in range(x.shape[in_axes])]
        )
        same(got, want)
        got = bt.vmap(lambda v: bnp.argsort(v, axis=-1), in_axes=in_axes)(x)
        want = np.stack(
            [
                np.argsort(np.take(x, b, in_axes), axis=-1, kind="stable")
                for b in range(x.shape[in_axes])
            ]
        ).astype(np.int32)
        same(got, want)


def test_errors():
    with pytest.raises(np.exceptions.AxisError):
        bnp.sort(np.zeros((2, 3), np.float32), axis=2)
    with pytest.raises(np.exceptions.AxisError):
        bnp.sort(np.float32(1.0))
    with pytest.raises(ValueError):
        bnp.partition(np.zeros(4, np.float32), 4)
    with pytest.raises(TypeError):
        bnp.lexsort(())
    with pytest.raises(ValueError):
        bnp.quantile(np.zeros(4, np.float32), 0.5, method="bogus")
    with pytest.raises(NotImplementedError):
        bnp.median(np.zeros(4, np.float32), out=np.zeros(()))
    with pytest.raises(ValueError, match="sort"):
        bt.jit(lambda v: lax.sort(v))(np.float32(1.0))
