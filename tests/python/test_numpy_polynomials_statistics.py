"""baton.numpy's polynomials, convolution, searchsorted/digitize/interp,
bincount/histogram and cov/corrcoef against numpy (and jax.numpy where they
differ), eagerly and under bt.jit."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton.errors import ConcretizationTypeError

from _numpy_check import BF16, F16, F32, F64, I32, _name, both, check, sample, tol  # noqa: F401

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = [pytest.mark.x64, pytest.mark.filterwarnings("ignore::RuntimeWarning")]


# ---- polynomials ----


@pytest.mark.parametrize("dtype", [np.int32, F32, F64], ids=_name)
@pytest.mark.parametrize("deg", [0, 1, 4, 40])
def test_polyval(dtype, deg):
    p = sample((deg + 1,), dtype, 18, scale=0.3)
    x = sample((3, 4), dtype, 19, scale=0.3)
    if np.dtype(dtype).kind == "i":
        x = np.clip(x, -1, 1)  # int32 Horner: exact while it does not overflow
        want = np.polyval(p.astype(np.int64), x.astype(np.int64)).astype(dtype)
    else:
        want = np.polyval(p.astype(np.float64), x.astype(np.float64))
    for got in both(bnp.polyval, p, x):
        check(got, want, dtype, rtol=1e-5, atol=1e-5)
    check(
        bnp.polyval(np.zeros((0,), np.float32), np.ones(2, np.float32)),
        np.zeros(2),
        F32,
    )
    check(bnp.polyval(np.array([1, 2], np.int32), 2.5), 4.5, F32)


def test_poly_add_sub_mul():
    jnp = pytest.importorskip("jax.numpy")
    a = np.array([1, 2, 3], np.int32)
    b = np.array([4, 5], np.int32)
    for name in ("polyadd", "polysub", "polymul"):
        want = getattr(jnp, name)(a, b)
        for got in both(getattr(bnp, name), a, b):
            check(got, np.asarray(want), want.dtype)
        want = getattr(np, name)(b.astype(F32), a.astype(F32))
        check(getattr(bnp, name)(b.astype(F32), a.astype(F32)), want, F32)
    check(
        bnp.polymul(
            np.array([0.0, 0.0, 1.0, 2.0], np.float32),
            np.array([0.0, 3.0], np.float32),
            trim_leading_zeros=True,
        ),
        [3.0, 6.0],
        F32,
    )
    with pytest.raises(ValueError, match="1-D array of coefficients"):
        bnp.polyadd(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ConcretizationTypeError):
        bt.jit(lambda x: bnp.polymul(x, x, trim_leading_zeros=True))(
            np.ones(2, np.float32)
        )


@pytest.mark.parametrize("m", [0, 1, 2, 5])
def test_polyder_polyint(m):
    jnp = pytest.importorskip("jax.numpy")
    p = np.array([3.0, -1.0, 2.0, 0.5], np.float32)
    want = jnp.polyder(p, m)
    for got in both(lambda x: bnp.polyder(x, m), p):
        check(got, np.asarray(want), F32)
    want = np.polyint(p.astype(np.float64), m)
    for got in both(lambda x: bnp.polyint(x, m), p):
        check(got, want, F32)
    if m:
        k = np.arange(1.0, m + 1, dtype=np.float32)
        want = np.polyint(p.astype(np.float64), m, k=list(k))
        for got in both(lambda x, c: bnp.polyint(x, m, k=c), p, k):
            check(got, want, F32, rtol=1e-6)
        check(
            bnp.polyint(p, m, k=2.0),
            np.polyint(p.astype(np.float64), m, k=[2.0] * m),
            F32,
        )
    check(bnp.polyder(np.array([1, 2, 3], np.int32)), [2, 2], F32)
    with pytest.raises(ValueError, match="non-negative"):
        bnp.polyder(p, -1)
    with pytest.raises(ValueError, match="k must be a scalar or have m = 2"):
        bnp.polyint(p, 2, k=np.ones(3))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize(
    "n,m", [(1, 1), (5, 3), (3, 5), (6, 2), (2, 7), (4, 4), (9, 1)]
)
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolve_correlate(name, mode, n, m):
    a = sample((n,), F32, 20 + n)
    v = sample((m,), F32, 30 + m)
    want = getattr(np, name)(a.astype(np.float64), v.astype(np.float64), mode)
    for got in both(lambda x, y: getattr(bnp, name)(x, y, mode), a, v):
        check(got, want, F32, rtol=1e-5, atol=1e-5)


def test_convolve_dtypes_large_and_errors():
    jnp = pytest.importorskip("jax.numpy")
    a = np.array([1, 2, 3], np.int32)
    want = jnp.convolve(a, a)
    check(bnp.convolve(a, a), np.asarray(want), want.dtype)
    check(
        bnp.correlate(a.astype(F16), a.astype(F16), "full"),
        np.correlate(a, a, "full"),
        F16,
    )
    big = sample((5000,), F32, 40)
    k = sample((1000,), F32, 41)  # beyond the gather limit: the fori_loop path
    check(
        bnp.convolve(big, k, "valid"),
        np.convolve(big.astype(np.float64), k, "valid"),
        F32,
        rtol=1e-4,
        atol=1e-3,
    )
    with pytest.raises(ValueError, match="mode must be"):
        bnp.convolve(a, a, "middle")
    with pytest.raises(ValueError, match="must not be empty"):
        bnp.convolve(np.zeros((0,)), a)
    with pytest.raises(ValueError, match="must be 1-D"):
        bnp.correlate(np.ones((2, 2)), a)


# ---- searchsorted / digitize / interp ----


@pytest.mark.parametrize("dtype", [np.int32, F16, F32, F64], ids=_name)
@pytest.mark.parametrize("n", [0, 1, 2, 7, 64, 100])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(dtype, n, side):
    rng = np.random.default_rng(n)
    a = np.sort(rng.integers(-10, 10, n)).astype(dtype)
    v = rng.integers(-12, 12, (3, 5)).astype(dtype)
    want = np.searchsorted(a, v, side=side)
    for got in both(lambda x, y: bnp.searchsorted(x, y, side=side), a, v):
        check(got, want, I32)


def test_searchsorted_nan_sorter_and_errors():
    a = np.array([1.0, 2.0, 2.0, np.nan, np.nan], np.float32)
    v = np.array([np.nan, 2.0, 5.0, -np.inf, np.inf], np.float32)
    for side in ("left", "right"):
        check(bnp.searchsorted(a, v, side=side), np.searchsorted(a, v, side=side), I32)
    u = np.array([3.0, 1.0, 2.0], np.float32)
    s = np.argsort(u).astype(np.int32)
    for got in both(lambda x, y: bnp.searchsorted(x, 2.5, sorter=y), u, s):
        check(got, np.searchsorted(u, 2.5, sorter=s), I32)
    with pytest.raises(ValueError, match="side must be"):
        bnp.searchsorted(u, 1.0, side="middle")
    with pytest.raises(ValueError, match="a must be 1-D"):
        bnp.searchsorted(np.ones((2, 2)), 1.0)


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("rising", [True, False])
def test_digitize(right, rising):
    bins = np.array([-1.0, 0.0, 0.5, 2.0, 2.0, 3.0], np.float32)
    if not rising:
        bins = bins[::-1].copy()
    x = np.array([-2, -1, 0, 0.25, 0.5, 2.0, 2.5, 3, 4, np.nan], np.float32)
    want = np.digitize(x, bins, right=right)
    for got in both(lambda a, b: bnp.digitize(a, b, right=right), x, bins):
        check(got, want, I32)
    with pytest.raises(ValueError, match="bins must be 1-D"):
        bnp.digitize(x, np.ones((2, 2)))


@pytest.mark.parametrize("dtype", [np.int32, F32, F64], ids=_name)
def test_interp(dtype):
    xp = np.array([0, 1, 2, 4, 7], dtype)
    fp = np.array([3, -1, 2, 2, 10], dtype)
    x = np.array([-1, 0, 0.5, 1, 3, 6.9, 7, 9, np.nan]).astype(
        dtype if np.dtype(dtype).kind == "f" else F32
    )
    out = F32 if np.dtype(dtype).kind == "i" else np.dtype(dtype)
    want = np.interp(x, xp, fp)
    for got in both(bnp.interp, x, xp, fp):
        check(got, want, out, rtol=1e-6)
    want = np.interp(x, xp, fp, left=-5, right=5)
    for got in both(lambda a, b, c: bnp.interp(a, b, c, left=-5, right=5), x, xp, fp):
        check(got, want, out, rtol=1e-6)
    xq = np.array([-180, -190, -170, 190, 350, 0, 10, 5], np.float32)
    xpp = np.array([190, -190, 350, -350], np.float32)
    fpp = np.array([5, 10, 3, 4], np.float32)
    want = np.interp(xq, xpp, fpp, period=360)
    for got in both(lambda a, b, c: bnp.interp(a, b, c, period=360), xq, xpp, fpp):
        check(got, want, F32, rtol=1e-5, atol=1e-5)


def test_interp_errors():
    with pytest.raises(ValueError, match="same length"):
        bnp.interp(1.0, np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="period must be a non-zero"):
        bnp.interp(1.0, np.ones(3), np.ones(3), period=0)
    check(
        bnp.interp(
            np.float32(5), np.array([1.0], np.float32), np.array([2.0], np.float32)
        ),
        2.0,
        F32,
    )


# ---- bincount / histogram ----


def test_bincount():
    x = np.array([0, 1, 1, 3, 2, 1, 7], np.int32)
    w = np.linspace(0, 1, 7).astype(np.float32)
    check(bnp.bincount(x), np.bincount(x), I32)
    check(bnp.bincount(x, minlength=10), np.bincount(x, minlength=10), I32)
    check(bnp.bincount(x, weights=w), np.bincount(x, weights=w), F32)
    check(bnp.bincount(np.zeros((0,), np.int32)), np.zeros((0,), np.int32), I32)
    check(
        bnp.bincount(x.astype(np.uint8), weights=x),
        np.bincount(x, weights=x).astype(I32),
        I32,
    )
    for got in both(lambda a, b: bnp.bincount(a, b, length=5), x, w):
        check(got, np.bincount(x, weights=w)[:5], F32)
    for got in both(
        lambda a: bnp.bincount(a, length=3), np.array([-1, 0, 5, 2], np.int32)
    ):
        check(got, [2, 0, 1], I32)  # JAX: negatives count as 0, >= length dropped
    with pytest.raises(ValueError, match="no negative elements"):
        bnp.bincount(np.array([-1, 2], np.int32))
    with pytest.raises(TypeError, match="integer dtype"):
        bnp.bincount(np.array([1.5]))
    with pytest.raises(ValueError, match="must be 1-D"):
        bnp.bincount(np.ones((2, 2), np.int32))
    with pytest.raises(ConcretizationTypeError, match="length"):
        bt.jit(lambda a: bnp.bincount(a))(x)


@pytest.mark.parametrize("dtype", [np.int32, F32, F64], ids=_name)
@pytest.mark.parametrize("bins", [1, 3, 10])
def test_histogram(dtype, bins):
    a = sample((50,), dtype, 50)
    out = F32 if np.dtype(dtype).kind == "i" else np.dtype(dtype)
    wc, we = np.histogram(a, bins=bins)
    for c, e in both(lambda x: bnp.histogram(x, bins=bins), a):
        check(e, we, out, rtol=1e-6, atol=1e-6)
        check(c, wc, out)
    check(bnp.histogram_bin_edges(a, bins=bins), we, out, rtol=1e-6, atol=1e-6)
    wc, we = np.histogram(a, bins=bins, range=(-2, 2), density=True)
    for c, e in both(
        lambda x: bnp.histogram(x, bins=bins, range=(-2, 2), density=True), a
    ):
        check(c, wc, out, rtol=1e-5, atol=1e-6)
        check(e, we, out, rtol=1e-6, atol=1e-6)
    w = np.abs(sample((50,), F32, 51))
    edges = np.array([-3.0, -1.0, 0.0, 0.5, 4.0], np.float32)
    wc, we = np.histogram(a, bins=edges, weights=w)
    for c, e in both(lambda x, y, z: bnp.histogram(x, bins=y, weights=z), a, edges, w):
        check(c, wc, F32, rtol=1e-5, atol=1e-5)
        check(e, we, None)


def test_histogram_edge_cases_and_errors():
    c, e = bnp.histogram(np.array([1.0, 1.0, 1.0], np.float32), bins=2)
    check(c, [0.0, 3.0], F32)
    check(e, [0.5, 1.0, 1.5], F32)
    c, e = bnp.histogram(np.zeros((0,), np.float32), bins=2)
    check(c, [0.0, 0.0], F32)
    check(e, [0.0, 0.5, 1.0], F32)
    with pytest.raises(ValueError, match="bins must be positive"):
        bnp.histogram(np.ones(3), bins=0)
    with pytest.raises(ValueError, match="max must be larger than min"):
        bnp.histogram(np.ones(3), bins=2, range=(2, 1))
    with pytest.raises(NotImplementedError, match="binning rule"):
        bnp.histogram(np.ones(3), bins="auto")
    with pytest.raises(ValueError, match="weights must have a's shape"):
        bnp.histogram(np.ones(3), weights=np.ones(2))


# ---- cov / corrcoef ----


@pytest.mark.parametrize("dtype", [np.int32, F32, F64], ids=_name)
@pytest.mark.parametrize("rowvar", [True, False])
def test_cov_corrcoef(dtype, rowvar):
    m = sample((3, 8) if rowvar else (8, 3), dtype, 60)
    y = sample((2, 8) if rowvar else (8, 2), dtype, 61)
    out = F32 if np.dtype(dtype).kind == "i" else np.dtype(dtype)
    t = tol(out) * 10
    mf, yf = m.astype(np.float64), y.astype(np.float64)
    for got in both(lambda a: bnp.cov(a, rowvar=rowvar), m):
        check(got, np.cov(mf, rowvar=rowvar), out, rtol=t, atol=t)
    for got in both(lambda a, b: bnp.cov(a, b, rowvar=rowvar, bias=True), m, y):
        check(got, np.cov(mf, yf, rowvar=rowvar, bias=True), out, rtol=t, atol=t)
    for got in both(lambda a: bnp.corrcoef(a, rowvar=rowvar), m):
        check(got, np.corrcoef(mf, rowvar=rowvar), out, rtol=t, atol=t)
    for got in both(lambda a, b: bnp.corrcoef(a, b, rowvar=rowvar), m, y):
        check(got, np.corrcoef(mf, yf, rowvar=rowvar), out, rtol=t, atol=t)


def test_cov_weights_and_vectors():
    x = sample((3, 6), F32, 62)
    fw = np.array([1, 2, 1, 3, 1, 1], np.int32)
    aw = np.array([0.5, 1.0, 2.0, 1.0, 0.2, 1.0], np.float32)
    xf = x.astype(np.float64)
    for ddof in (None, 0, 2):
        for f, a in ((fw, None), (None, aw), (fw, aw)):
            want = np.cov(xf, ddof=ddof, fweights=f, aweights=a)
            check(
                bnp.cov(x, ddof=ddof, fweights=f, aweights=a),
                want,
                F32,
                rtol=1e-5,
                atol=1e-5,
            )
    for got in both(lambda a, b, c: bnp.cov(a, fweights=b, aweights=c), x, fw, aw):
        check(got, np.cov(xf, fweights=fw, aweights=aw), F32, rtol=1e-5, atol=1e-5)
    v = np.array([1.0, 2.0, 4.0], np.float32)
    check(bnp.cov(v), np.cov(v), F32)
    check(bnp.corrcoef(v), 1.0, F32)
    check(bnp.corrcoef(v, v[::-1].copy()), np.corrcoef(v, v[::-1]), F32, rtol=1e-6)
    with pytest.raises(TypeError, match="fweights must be integers"):
        bnp.cov(x, fweights=aw)
    with pytest.raises(ValueError, match="has 5 values for 6 observations"):
        bnp.cov(x, aweights=np.ones(5))
    with pytest.raises(ValueError, match="same number of observations"):
        bnp.cov(x, np.ones((2, 5)))
    with pytest.raises(ValueError, match="1-D or 2-D"):
        bnp.cov(np.ones((2, 2, 2)))
