"""bt.scipy.linalg's special matrices (block_diag, toeplitz, hankel, ...,
dft), expm and polar against jax.scipy.linalg: the same values (float32
rounding), shapes and dtypes, eagerly and under bt.jit where the arguments
are arrays; the same errors for bad arguments."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.scipy.linalg as jsl  # noqa: E402

import baton as bt  # noqa: E402
import baton.scipy.linalg as bsl  # noqa: E402

F32 = np.float32
RNG = np.random.default_rng(0)


def _close(b, j, **tol):
    tol = tol or dict(rtol=1e-5, atol=1e-6)
    b, j = np.asarray(b), np.asarray(j)
    assert b.shape == j.shape, (b.shape, j.shape)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    np.testing.assert_allclose(b, j, equal_nan=True, **tol)


def _both(name, *args, jit=True, tol=None, **kw):
    """name(*args, **kw) through baton (eager and, with jit, under bt.jit
    with the arrays as arguments) and JAX; values, shapes, dtypes."""
    tol = tol or {}
    want = getattr(jsl, name)(*args, **kw)
    _close(getattr(bsl, name)(*args, **kw), want, **tol)
    if jit:
        f = bt.jit(lambda *a: getattr(bsl, name)(*a, **kw))
        _close(f(*args), want, **tol)


V3 = np.array([1.0, -2.0, 3.5], F32)
V4 = np.array([0.5, 4.0, -1.0, 2.0], F32)
I3 = np.array([2, -1, 7], np.int32)
B23 = RNG.standard_normal((2, 3)).astype(F32)
B24 = RNG.standard_normal((2, 4)).astype(F32)


def test_block_diag():
    a = RNG.standard_normal((2, 2)).astype(F32)
    b = RNG.standard_normal((1, 3)).astype(F32)
    _both("block_diag", a, b, V3, F32(5.0))
    _both("block_diag", a, I3)  # promoted to float32
    _both("block_diag", I3, np.array([[1, 2]], np.int32))
    _both("block_diag", np.zeros((0, 2), F32), a)
    _close(bsl.block_diag(), jsl.block_diag())
    with pytest.raises(ValueError, match="at most 2"):
        bsl.block_diag(np.ones((1, 1, 1), F32))


@pytest.mark.parametrize("name", ["toeplitz", "hankel"])
def test_toeplitz_hankel(name):
    _both(name, V3)
    _both(name, V3, V4)
    _both(name, V4, V3)
    _both(name, I3, V4)
    _both(name, I3)
    _both(name, B23, B24)  # batched
    _both(name, B23, V4)  # batch broadcast against one row
    _both(name, V3, np.zeros((0,), F32))


def test_toeplitz_complex_default_row_is_conjugate():
    c = np.array([1 + 2j, 3 - 1j, -0.5j], np.complex64)
    _both("toeplitz", c)


def test_hankel_scalar_and_list_errors():
    with pytest.raises(ValueError, match="1-dimensional"):
        bsl.hankel(F32(1.0))
    with pytest.raises(TypeError):
        bsl.toeplitz([1.0, 2.0])
    with pytest.raises(TypeError):
        jsl.toeplitz([1.0, 2.0])


def test_circulant_fiedler():
    for x in (V3, V4, I3, B23):
        _both("circulant", x)
        _both("fiedler", x)
    _both("circulant", F32(3.0))


def test_leslie():
    _both("leslie", V3, V3[:2])
    _both("leslie", I3, V3[:2])
    _both("leslie", B23, B24[:, :2])
    with pytest.raises(ValueError, match="at least 2"):
        bsl.leslie(V3[:1], V3[:0])
    with pytest.raises(ValueError, match="one less"):
        bsl.leslie(V3, V3)


@pytest.mark.parametrize("name", ["companion", "fiedler_companion"])
def test_companions(name):
    for x in (V3, V4, I3, B24, np.array([2.0, 3.0], F32)):
        _both(name, x)
    _both(name, np.array([4.0, -1.0, 0.5, 3.0, 2.0, -6.0], F32))


def test_companion_errors():
    with pytest.raises(ValueError, match="at least 2"):
        bsl.companion(V3[:1])
    with pytest.raises(ValueError, match="nonzero length"):
        bsl.fiedler_companion(V3[:0])
    _close(bsl.fiedler_companion(V3[:1]), jsl.fiedler_companion(V3[:1]))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n", [1, 2, 5])
def test_convolution_matrix(mode, n):
    for a in (V3, I3, B24):
        want = jsl.convolution_matrix(a, n, mode)
        _close(bsl.convolution_matrix(a, n, mode), want)
        _close(bt.jit(lambda x: bsl.convolution_matrix(x, n, mode))(a), want)


def test_convolution_matrix_errors():
    with pytest.raises(ValueError, match="positive"):
        bsl.convolution_matrix(V3, 0)
    with pytest.raises(ValueError, match="mode"):
        bsl.convolution_matrix(V3, 2, "wrap")
    with pytest.raises(ValueError, match="1-dimensional"):
        bsl.convolution_matrix(F32(1.0), 2)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
def test_n_matrices(n):
    _close(bsl.hilbert(n), jsl.hilbert(n))
    _close(bsl.invhilbert(n), jsl.invhilbert(n), rtol=1e-4, atol=1e-3)
    for kind in (None, "symmetric", "lower", "upper"):
        _close(bsl.pascal(n, kind), jsl.pascal(n, kind), rtol=1e-5, atol=1e-5)
        _close(bsl.invpascal(n, kind), jsl.invpascal(n, kind), rtol=1e-5, atol=1e-5)
    if n >= 1:
        for full in (False, True):
            _close(bsl.helmert(n, full), jsl.helmert(n, full))
    for scale in (None, "sqrtn", "n"):
        _close(bsl.dft(n, scale), jsl.dft(n, scale), rtol=1e-5, atol=2e-6)


def test_n_matrices_under_jit():
    f = bt.jit(lambda x: x + bsl.hilbert(4) + bsl.pascal(4) + bsl.helmert(5)[:, :4])
    x = np.ones((4, 4), F32)
    _close(
        f(x),
        x + jsl.hilbert(4) + jsl.pascal(4) + jsl.helmert(5)[:, :4],
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize("n", [1, 2, 8, 16])
def test_hadamard(n):
    _close(bsl.hadamard(n), jsl.hadamard(n))
    _close(bsl.hadamard(n, F32), jsl.hadamard(n, F32))


def test_n_matrix_errors():
    for bad in (0, 3, 12):
        with pytest.raises(ValueError, match="power of 2"):
            bsl.hadamard(bad)
    with pytest.raises(ValueError, match="positive"):
        bsl.helmert(0)
    with pytest.raises(ValueError, match="kind"):
        bsl.pascal(3, "diagonal")
    with pytest.raises(ValueError, match="kind"):
        bsl.invpascal(3, "diagonal")
    with pytest.raises(ValueError, match="scale"):
        bsl.dft(3, "ortho")
    with pytest.raises(ValueError, match="complex"):
        bsl.dft(3, dtype=F32)
    with pytest.raises(TypeError, match="integer"):
        bsl.hilbert(2.5)


# ---- expm ----

EXPM_TOL = dict(rtol=1e-4, atol=1e-5)  # squarings amplify rounding


@pytest.mark.parametrize("scale", [0.0, 0.01, 0.3, 1.0, 3.0, 20.0])
def test_expm(scale):
    a = (np.random.default_rng(1).standard_normal((4, 4)) * scale).astype(F32)
    _both("expm", a, tol=EXPM_TOL)
    u = np.triu(a)
    _both("expm", u, upper_triangular=True, tol=EXPM_TOL)


def test_expm_batched_ints_and_overflow():
    a = (
        RNG.standard_normal((2, 3, 3, 3)) * np.array([0.1, 1, 5])[:, None, None]
    ).astype(F32)
    _both("expm", a, tol=EXPM_TOL)
    _both("expm", np.array([[0, 1], [-1, 0]], np.int32), tol=EXPM_TOL)
    big = (np.eye(3) * 1e6).astype(F32)  # more squarings than max_squarings: NaN
    _both("expm", big)
    _both("expm", big * 1e-6, max_squarings=0, tol=EXPM_TOL)


def test_expm_float64():
    jax.config.update("jax_enable_x64", True)
    bt.config.update("jax_enable_x64", True)
    try:
        rng = np.random.default_rng(2)
        for scale in (0.005, 0.1, 0.5, 1.5, 3.0, 30.0):
            a = rng.standard_normal((5, 5)) * scale
            want = jsl.expm(a)
            _close(bsl.expm(a), want, rtol=1e-11, atol=1e-13)
            _close(bt.jit(bsl.expm)(a), want, rtol=1e-11, atol=1e-13)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_expm_grad():
    a = (np.random.default_rng(3).standard_normal((3, 3)) * 0.7).astype(F32)
    w = np.random.default_rng(4).standard_normal((3, 3)).astype(F32)
    want = jax.grad(lambda x: (jsl.expm(x) * w).sum())(a)
    _close(bt.grad(lambda x: (bsl.expm(x) * w).sum())(a), want, **EXPM_TOL)


def test_expm_errors():
    with pytest.raises(ValueError, match="square"):
        bsl.expm(np.ones((2, 3), F32))
    with pytest.raises(ValueError, match="square"):
        bsl.expm(np.ones(3, F32))
    with pytest.raises(TypeError, match="float16"):
        bsl.expm(np.eye(2, dtype=np.float16))


# ---- polar ----

POLAR_TOL = dict(rtol=2e-4, atol=2e-5)  # SVD here, QDWH iterations in JAX


@pytest.mark.parametrize(
    "shape,side",
    [
        ((4, 4), "right"),
        ((5, 3), "right"),
        ((4, 4), "left"),
        ((3, 5), "left"),
        ((2, 4, 3), "right"),
    ],
)
@pytest.mark.parametrize("method", ["qdwh", "svd"])
def test_polar(shape, side, method):
    a = np.random.default_rng(5).standard_normal(shape).astype(F32)
    m, n = shape[-2:]
    jax_refuses = method == "qdwh" and not (
        (m >= n and side == "right") or (m < n and side == "left")
    )
    if jax_refuses:  # JAX's qdwh: NotImplementedError; baton's SVD does it
        with pytest.raises(NotImplementedError):
            jsl.polar(a, side, method=method)
    want = jsl.polar(a, side, method="svd" if jax_refuses else method)
    for got in (
        bsl.polar(a, side, method=method),
        bt.jit(lambda x: bsl.polar(x, side, method=method))(a),
    ):
        assert len(got) == 2
        for g, w in zip(got, want):
            _close(g, w, **POLAR_TOL)
    u, p = bsl.polar(a, side, method=method)
    rebuilt = (
        np.asarray(u) @ np.asarray(p)
        if side == "right"
        else np.asarray(p) @ np.asarray(u)
    )
    np.testing.assert_allclose(rebuilt, a, rtol=1e-4, atol=1e-5)


def test_polar_grad():
    a = np.random.default_rng(6).standard_normal((3, 3)).astype(F32)
    w = np.random.default_rng(7).standard_normal((3, 3)).astype(F32)
    want = jax.grad(lambda x: (jsl.polar(x, method="svd")[0] * w).sum())(a)
    _close(
        bt.grad(lambda x: (bsl.polar(x, method="svd")[0] * w).sum())(a),
        want,
        rtol=1e-3,
        atol=1e-4,
    )


def test_polar_errors():
    with pytest.raises(ValueError, match="2-D"):
        bsl.polar(V3)
    with pytest.raises(ValueError, match="side"):
        bsl.polar(B23, "up")
    with pytest.raises(ValueError, match="method"):
        bsl.polar(B23, method="newton")


def test_expm_frechet():
    rng = np.random.default_rng(8)
    for scale in (0.1, 1.0, 4.0):
        a = (rng.standard_normal((3, 3)) * scale).astype(F32)
        e = rng.standard_normal((3, 3)).astype(F32)
        want = jsl.expm_frechet(a, e)
        got = bsl.expm_frechet(a, e)
        for g, w in zip(got, want):
            _close(g, w, **EXPM_TOL)
        _close(bsl.expm_frechet(a, e, compute_expm=False), want[1], **EXPM_TOL)
        jitted = bt.jit(lambda x, y: bsl.expm_frechet(x, y))(a, e)
        for g, w in zip(jitted, want):
            _close(g, w, **EXPM_TOL)
    with pytest.raises(ValueError, match="same shape"):
        bsl.expm_frechet(np.eye(2, dtype=F32), np.eye(3, dtype=F32))
    with pytest.raises(ValueError, match="square"):
        bsl.expm_frechet(np.ones((2, 3), F32), np.ones((2, 3), F32))


# ---- qr_multiply ----


@pytest.mark.parametrize("ashape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("mode", ["left", "right"])
@pytest.mark.parametrize("onedim", [False, True])
def test_qr_multiply(ashape, mode, onedim):
    rng = np.random.default_rng(9)
    a = rng.standard_normal(ashape).astype(F32)
    m, n = ashape[-2:]
    k = min(m, n)
    cshape = (
        ((k,) if onedim else (k, 2)) if mode == "left" else ((m,) if onedim else (3, m))
    )
    c = rng.standard_normal(cshape).astype(F32)
    want = jsl.qr_multiply(a, c, mode)
    for got in (
        bsl.qr_multiply(a, c, mode),
        bt.jit(lambda x, y: bsl.qr_multiply(x, y, mode))(a, c),
    ):
        assert len(got) == 2
        for g, w in zip(got, want):
            _close(g, w, rtol=1e-4, atol=1e-5)
    conj = jsl.qr_multiply(a, c, mode, conjugate=True)
    _close(
        bsl.qr_multiply(a, c, mode, conjugate=True)[0], conj[0], rtol=1e-4, atol=1e-5
    )


def test_qr_multiply_ints_and_errors():
    a = np.array([[2, 1], [1, 3], [0, 1]], np.int32)
    c = np.array([1, 2], np.int32)
    for g, w in zip(bsl.qr_multiply(a, c, "left"), jsl.qr_multiply(a, c, "left")):
        _close(g, w, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="mode"):
        bsl.qr_multiply(a, c, "up")
    with pytest.raises(ValueError, match="not compatible"):
        bsl.qr_multiply(a, np.ones(3, F32), "left")
    with pytest.raises(ValueError, match="not compatible"):
        bsl.qr_multiply(a, np.ones(2, F32), "right")
    with pytest.raises(NotImplementedError, match="pivoting"):
        bsl.qr_multiply(a, c, "left", pivoting=True)


# ---- eigh_tridiagonal ----


def _tridiag(n, seed, dtype=F32):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n).astype(dtype), rng.standard_normal(n - 1).astype(
        dtype
    )


def _same_vectors(v, vj):
    """Eigenvectors agree up to sign (distinct eigenvalues)."""
    v, vj = np.asarray(v), np.asarray(vj)
    assert v.shape == vj.shape and v.dtype == vj.dtype
    np.testing.assert_allclose(np.abs(np.sum(v * vj, axis=0)), 1.0, rtol=1e-4)


@pytest.mark.parametrize("n", [2, 3, 7, 20])
def test_eigh_tridiagonal(n):
    d, e = _tridiag(n, n)
    tol = dict(rtol=1e-5, atol=2e-6)
    want = jsl.eigh_tridiagonal(d, e, eigvals_only=True)
    _close(bsl.eigh_tridiagonal(d, e, eigvals_only=True), want, **tol)
    _close(
        bt.jit(lambda a, b: bsl.eigh_tridiagonal(a, b, eigvals_only=True))(d, e),
        want,
        **tol,
    )
    w, v = bsl.eigh_tridiagonal(d, e)
    wj, vj = jsl.eigh_tridiagonal(d, e)
    _close(w, wj, **tol)
    _same_vectors(v, vj)
    lo, hi = 0, n - 1 if n < 3 else 1
    got = bsl.eigh_tridiagonal(d, e, select="i", select_range=(lo, hi))
    want = jsl.eigh_tridiagonal(d, e, select="i", select_range=(lo, hi))
    _close(got[0], want[0], **tol)
    _same_vectors(got[1], want[1])
    _close(
        bsl.eigh_tridiagonal(d, e, eigvals_only=True, tol=1e-2),
        jsl.eigh_tridiagonal(d, e, eigvals_only=True, tol=1e-2),
        rtol=0,
        atol=2e-2,
    )


def test_eigh_tridiagonal_complex_eigvals_and_small():
    rng = np.random.default_rng(10)
    d = rng.standard_normal(5).astype(np.complex64)
    e = (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex64)
    _close(
        bsl.eigh_tridiagonal(d, e, eigvals_only=True),
        jsl.eigh_tridiagonal(d, e, eigvals_only=True),
        rtol=1e-5,
        atol=2e-6,
    )
    with pytest.raises(NotImplementedError, match="complex"):
        bsl.eigh_tridiagonal(d, e)
    one, none = np.array([2.0], F32), np.zeros(0, F32)
    _close(
        bsl.eigh_tridiagonal(one, none, eigvals_only=True),
        jsl.eigh_tridiagonal(one, none, eigvals_only=True),
    )
    for g, w in zip(bsl.eigh_tridiagonal(one, none), jsl.eigh_tridiagonal(one, none)):
        _close(g, w)


def test_eigh_tridiagonal_errors():
    d, e = _tridiag(4, 0)
    with pytest.raises(TypeError, match="same dtype"):
        bsl.eigh_tridiagonal(d, e.astype(np.int32))
    with pytest.raises(TypeError, match="supported"):
        bsl.eigh_tridiagonal(d.astype(np.int32), e.astype(np.int32))
    with pytest.raises(ValueError, match="select_range"):
        bsl.eigh_tridiagonal(d, e, select="i")
    with pytest.raises(ValueError, match="empty"):
        bsl.eigh_tridiagonal(d, e, select="i", select_range=(2, 1))
    with pytest.raises(NotImplementedError):
        jsl.eigh_tridiagonal(d, e, select="v", select_range=(0.0, 1.0))
    with pytest.raises(NotImplementedError, match="select='v'"):
        bsl.eigh_tridiagonal(d, e, select="v", select_range=(0.0, 1.0))
    with pytest.raises(ValueError, match="select"):
        bsl.eigh_tridiagonal(d, e, select="x")


# ---- hessenberg ----


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (6, 6), (2, 4, 4)])
def test_hessenberg(shape):
    a = np.random.default_rng(11).standard_normal(shape).astype(F32)
    tol = dict(rtol=1e-4, atol=2e-5)
    _both("hessenberg", a, tol=tol)
    want = jsl.hessenberg(a, calc_q=True)
    for got in (
        bsl.hessenberg(a, calc_q=True),
        bt.jit(lambda x: bsl.hessenberg(x, calc_q=True))(a),
    ):
        for g, w in zip(got, want):
            _close(g, w, **tol)


def test_hessenberg_zero_columns_and_errors():
    tol = dict(rtol=1e-5, atol=1e-6)
    upper = np.triu(np.random.default_rng(12).standard_normal((5, 5))).astype(F32)
    for a in (upper, np.eye(4, dtype=F32), np.zeros((3, 3), F32)):  # nothing to zero
        for g, w in zip(bsl.hessenberg(a, calc_q=True), jsl.hessenberg(a, calc_q=True)):
            _close(g, w, **tol)
    empty = np.zeros((0, 0), F32)
    _close(bsl.hessenberg(empty), jsl.hessenberg(empty))
    with pytest.raises(ValueError, match="square"):
        bsl.hessenberg(np.ones((2, 3), F32))
    with pytest.raises(TypeError, match="complex"):
        bsl.hessenberg(np.eye(2, dtype=np.complex64))
