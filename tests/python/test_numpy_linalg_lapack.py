"""baton.numpy.linalg, bt.lax.linalg and bt.scipy.linalg (LAPACK):
values against numpy eagerly and under bt.jit, batched shapes, vmap,
derivatives against central differences (float64), dtypes, and the error
messages and classes of bad input."""

from __future__ import annotations

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

LA = bnp.linalg
RNG = np.random.default_rng(0)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def spd(*shape, seed=0):
    m = np.random.default_rng(seed).uniform(-1, 1, shape)
    n = shape[-1]
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(np.float32)


def both(fn, *args, **kw):
    """fn eagerly and under bt.jit, as numpy arrays (trees kept)."""
    eager = bt.tree.map(np.asarray, fn(*args, **kw))
    jitted = bt.tree.map(np.asarray, bt.jit(lambda *a: fn(*a, **kw))(*args))
    return eager, jitted


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


# ---- values against numpy, eager and jitted, batched ----

SHAPES_SQ = [(4, 4), (3, 5, 5), (2, 3, 3, 3)]


@pytest.mark.parametrize("shape", SHAPES_SQ)
def test_cholesky(shape):
    a = spd(*shape)
    for got in both(LA.cholesky, a):
        close(got, np.linalg.cholesky(a))
    for got in both(LA.cholesky, a, upper=True):
        close(got, np.swapaxes(np.linalg.cholesky(a), -1, -2))


def test_cholesky_not_positive_definite_is_nan():
    a = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
    assert np.isnan(np.asarray(LA.cholesky(a))).all()


@pytest.mark.parametrize("batch", [(3,), (1 << 40,)])
def test_decompositions_of_empty_matrices(batch, capfd):
    # n = 0: nothing is handed to LAPACK (which rejects lda = 0 by printing
    # a message per matrix), and a batch of any length costs nothing.
    a = np.zeros(batch + (0, 0), np.float32)
    for got in both(LA.cholesky, a):
        assert got.shape == a.shape
    for got in both(LA.eigh, a):
        assert got[0].shape == batch + (0,) and got[1].shape == a.shape
    out, err = capfd.readouterr()
    assert "illegal value" not in out + err


@pytest.mark.parametrize("shape", SHAPES_SQ)
def test_solve_inv_det_slogdet(shape):
    a = rand(*shape) + 3 * np.eye(shape[-1], dtype=np.float32)
    b = rand(*shape[:-1], 2, seed=1)
    for got in both(LA.solve, a, b):
        close(got, np.linalg.solve(a, b))
    v = rand(shape[-1], seed=2)
    for got in both(LA.solve, a, v):
        close(got, np.linalg.solve(a, v[..., None])[..., 0])
    for got in both(LA.inv, a):
        close(got, np.linalg.inv(a))
    for got in both(LA.det, a):
        close(got, np.linalg.det(a), 1e-3)
    for sign, logdet in both(LA.slogdet, a):
        ws, wl = np.linalg.slogdet(a)
        close(sign, ws)
        close(logdet, wl)
    r = LA.slogdet(a)
    assert r.sign.shape == shape[:-2] and r.logabsdet.shape == shape[:-2]


def test_det_sign_of_permutation_and_singular():
    p = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], np.float32)
    close(LA.det(p), 1.0)
    close(LA.det(p[[1, 0, 2]]), -1.0)
    s = np.array([[1, 2], [2, 4]], np.float32)
    sign, logdet = LA.slogdet(s)
    assert float(sign) == 0 and float(logdet) == -np.inf


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3)])
def test_qr(shape):
    a = rand(*shape)
    for mode in ("reduced", "complete"):
        for q, r in both(LA.qr, a, mode=mode):
            wq, wr = np.linalg.qr(a, mode=mode)
            assert q.shape == wq.shape and r.shape == wr.shape
            close(q @ r, a)
            k = q.shape[-1]
            close(
                np.swapaxes(q, -1, -2) @ q,
                np.broadcast_to(np.eye(k), (*q.shape[:-2], k, k)),
            )
            close(np.abs(r), np.abs(wr))  # equal up to signs of rows
    r = LA.qr(a, mode="r")
    close(np.abs(np.asarray(r)), np.abs(np.linalg.qr(a, mode="r")))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3)])
def test_svd(shape):
    a = rand(*shape)
    for full in (False, True):
        for u, s, vh in both(LA.svd, a, full_matrices=full):
            wu, ws, wvh = np.linalg.svd(a, full_matrices=full)
            assert u.shape == wu.shape and vh.shape == wvh.shape
            close(s, ws)
            k = s.shape[-1]
            close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a)
    for got in both(LA.svdvals, a):
        close(got, np.linalg.svd(a, compute_uv=False))


@pytest.mark.parametrize("shape", SHAPES_SQ)
def test_eigh(shape):
    a = rand(*shape)
    a = a + np.swapaxes(a, -1, -2)
    for w, v in both(LA.eigh, a):
        close(w, np.linalg.eigvalsh(a))
        close((v * w[..., None, :]) @ np.swapaxes(v, -1, -2), a)
    close(LA.eigvalsh(a), np.linalg.eigvalsh(a))
    # UPLO: only that triangle is read (without symmetrizing).
    lower = np.tril(a)
    close(
        LA.eigh(lower, "L", symmetrize_input=False).eigenvalues, np.linalg.eigvalsh(a)
    )
    close(LA.eigh(np.triu(a), "U", symmetrize_input=False)[0], np.linalg.eigvalsh(a))


def test_pinv_lstsq_rank_cond_power_multidot():
    a = rand(5, 3)
    for got in both(LA.pinv, a):
        close(got, np.linalg.pinv(a))
    b = rand(5, 2, seed=3)
    x, resid, rank, s = LA.lstsq(a, b)
    wx, wres, wrank, ws = np.linalg.lstsq(a, b, rcond=None)
    close(x, wx)
    close(resid, wres)
    assert int(rank) == wrank
    close(s, ws)
    close(LA.lstsq(a, b[:, 0])[0], wx[:, 0])
    deficient = np.array([[1, 2], [2, 4], [3, 6]], np.float32)
    assert int(LA.matrix_rank(deficient)) == 1
    assert int(LA.matrix_rank(np.eye(4, dtype=np.float32))) == 4
    np.testing.assert_array_equal(
        LA.matrix_rank(np.stack([np.eye(3), np.zeros((3, 3))]).astype(np.float32)),
        [3, 0],
    )
    sq = rand(4, 4) + 2 * np.eye(4, dtype=np.float32)
    close(LA.cond(sq), np.linalg.cond(sq), 1e-3)
    close(LA.cond(sq, "fro"), np.linalg.cond(sq, "fro"), 1e-3)
    for n in (0, 1, 3, -2):
        close(LA.matrix_power(sq, n), np.linalg.matrix_power(sq, n), 1e-3)
    mats = [rand(2, 3), rand(3, 4, seed=1), rand(4, seed=2)]
    close(LA.multi_dot(mats), np.linalg.multi_dot(mats))


@pytest.mark.parametrize(
    "ord,axis",
    [
        (None, None),
        (None, 1),
        (1, 0),
        (np.inf, 1),
        (-np.inf, 0),
        (0, 1),
        (3, 1),
        ("fro", (0, 1)),
        ("nuc", (0, 1)),
        (1, (0, 1)),
        (-1, (1, 0)),
        (2, (0, 1)),
        (-2, (0, 1)),
        (np.inf, (0, 1)),
        (-np.inf, (0, 1)),
        (2, None),
        ("nuc", None),
    ],
)
def test_norm(ord, axis):
    x = rand(4, 3)
    for keepdims in (False, True):
        for got in both(LA.norm, x, ord=ord, axis=axis, keepdims=keepdims):
            close(got, np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims))


def test_norm_batched_and_vector():
    x = rand(2, 3, 4)
    close(LA.norm(x), np.linalg.norm(x))
    close(LA.norm(x, axis=-1), np.linalg.norm(x, axis=-1))
    close(LA.norm(x, 2, axis=(1, 2)), np.linalg.norm(x, 2, axis=(1, 2)))
    close(LA.matrix_norm(x, ord="nuc"), np.linalg.matrix_norm(x, ord="nuc"))
    close(LA.vector_norm(x, ord=1), np.linalg.vector_norm(x, ord=1))
    close(LA.norm(rand(5), 3), np.linalg.norm(rand(5), 3))


def test_array_api_helpers():
    x = rand(2, 3, 3)
    close(LA.trace(x), np.linalg.trace(x))
    close(LA.diagonal(x, offset=1), np.linalg.diagonal(x, offset=1))
    close(LA.matrix_transpose(x), np.swapaxes(x, -1, -2))
    close(LA.outer(rand(3), rand(2, seed=1)), np.outer(rand(3), rand(2, seed=1)))
    close(LA.cross(rand(3), rand(3, seed=1)), np.cross(rand(3), rand(3, seed=1)))
    close(LA.vecdot(x, x), np.sum(x * x, -1))


# ---- dtypes ----


def test_dtypes():
    a = spd(3, 3)
    assert LA.cholesky(a.astype(np.float16)).dtype == np.float16
    close(
        np.asarray(LA.cholesky(a.astype(np.float16))).astype(np.float32),
        np.linalg.cholesky(a),
        1e-2,
    )
    assert LA.det(bnp.asarray(a, bnp.bfloat16)).dtype == bnp.bfloat16
    i = np.array([[2, 1], [1, 3]], np.int32)
    assert LA.inv(i).dtype == np.float32
    close(LA.inv(i), np.linalg.inv(i))
    assert LA.norm(np.array([3, 4], np.int32)).dtype == np.float32
    with pytest.raises(TypeError, match="complex"):
        LA.svd(np.ones((2, 2), np.complex64))


@pytest.mark.x64
def test_float64_and_x64_default_float():
    a = spd(4, 4).astype(np.float64)
    assert LA.cholesky(a).dtype == np.float64
    close(LA.cholesky(a), np.linalg.cholesky(a), 1e-12)
    assert LA.det(np.eye(2, dtype=np.int32) * 2).dtype == np.float64


# ---- errors ----


def test_errors():
    with pytest.raises(
        ValueError,
        match=r"linalg.solve: a must be square in its last two dimensions, "
        r"got shape \(3, 4\)",
    ):
        LA.solve(np.ones((3, 4), np.float32), np.ones(3, np.float32))
    with pytest.raises(ValueError, match="b of shape"):
        LA.solve(np.eye(3, dtype=np.float32), np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match="at least two dimensions"):
        LA.inv(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="square"):
        LA.cholesky(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="square"):
        LA.eigh(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="mode"):
        LA.qr(np.ones((2, 2), np.float32), mode="raw")
    with pytest.raises(ValueError, match="UPLO"):
        LA.eigh(np.eye(2, dtype=np.float32), "X")
    with pytest.raises(ValueError, match="improper number of dimensions"):
        LA.norm(np.ones((2, 2, 2), np.float32), ord=2)
    with pytest.raises(ValueError, match="invalid ord"):
        LA.norm(np.ones((2, 2), np.float32), ord="bad", axis=(0, 1))
    with pytest.raises(TypeError, match="integer"):
        LA.matrix_power(np.eye(2, dtype=np.float32), 1.5)
    with pytest.raises(ValueError, match="triangular_solve: b of shape"):
        bt.lax.linalg.triangular_solve(
            np.eye(3, dtype=np.float32), np.ones((2, 2), np.float32), left_side=True
        )


def test_decomposition_without_rule_raises_clearly():
    # Full-matrix SVD of a non-square matrix has no derivative (as in JAX).
    f = lambda a: LA.svd(a, full_matrices=True)[0].sum()  # noqa: E731
    with pytest.raises(NotImplementedError, match="svd"):
        bt.grad(f)(rand(4, 3))


# ---- transformations ----


def test_vmap():
    a = spd(3, 4, 4)
    b = rand(3, 4, seed=1)
    close(bt.vmap(LA.solve)(a, b), np.linalg.solve(a, b[..., None])[..., 0])
    close(bt.vmap(LA.cholesky)(a), np.linalg.cholesky(a))
    close(bt.vmap(LA.det)(a), np.linalg.det(a), 1e-3)
    close(bt.vmap(lambda x: LA.eigh(x)[0])(a), np.linalg.eigvalsh(a))
    close(
        bt.vmap(LA.svdvals, in_axes=1)(np.moveaxis(a, 0, 1)),
        np.linalg.svd(a, compute_uv=False),
    )
    close(bt.vmap(LA.solve, in_axes=(None, 0))(a[0], b), np.linalg.solve(a[0], b.T).T)


def _fd_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (float(f(x + e)) - float(f(x - e))) / (2 * h)
    return g


def _check_grad(f, x, tol=1e-5):
    got = np.asarray(bt.grad(f)(x))
    want = _fd_grad(lambda y: np.asarray(f(y)), x)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # Forward mode agrees with reverse mode.
    t = np.random.default_rng(9).normal(size=x.shape)
    _, jv = bt.jvp(f, (x,), (t,))
    np.testing.assert_allclose(float(jv), float(np.sum(got * t)), rtol=tol, atol=tol)


def _spd64(n, seed=0):
    return spd(n, n, seed=seed).astype(np.float64)


W = np.random.default_rng(5).normal(size=(4, 4))


@pytest.mark.x64
@pytest.mark.parametrize(
    "name,f,x",
    [
        ("cholesky", lambda a: bnp.sum(LA.cholesky(a) * W), _spd64(4)),
        ("solve", lambda a: bnp.sum(LA.solve(a, W) * W), _spd64(4)),
        ("inv", lambda a: bnp.sum(LA.inv(a) * W), _spd64(4)),
        ("det", lambda a: LA.det(a), _spd64(4) / 3),
        ("slogdet", lambda a: LA.slogdet(a)[1], _spd64(4)),
        ("eigvalsh", lambda a: bnp.sum(LA.eigvalsh(a) * W[0]), _spd64(4)),
        ("eigh_vectors", lambda a: bnp.sum(bnp.abs(LA.eigh(a)[1]) * W), _spd64(4)),
        (
            "qr",
            lambda a: (
                bnp.sum(LA.qr(a)[0] * W[:, :3]) + bnp.sum(LA.qr(a)[1] * W[:3, :3])
            ),
            np.random.default_rng(1).normal(size=(4, 3)),
        ),
        (
            "svdvals",
            lambda a: bnp.sum(LA.svdvals(a) * W[0, :3]),
            np.random.default_rng(2).normal(size=(4, 3)),
        ),
        (
            "svd_u",
            lambda a: bnp.sum(bnp.abs(LA.svd(a, full_matrices=False)[0]) * W[:, :3]),
            np.random.default_rng(3).normal(size=(4, 3)),
        ),
        (
            "svd_wide",
            lambda a: bnp.sum(bnp.abs(LA.svd(a, full_matrices=False)[2]) * W[:3, :]),
            np.random.default_rng(4).normal(size=(3, 4)),
        ),
        (
            "norm_fro",
            lambda a: LA.norm(a),
            np.random.default_rng(5).normal(size=(3, 3)),
        ),
        (
            "norm_2",
            lambda a: LA.norm(a, 2),
            np.random.default_rng(6).normal(size=(3, 3)),
        ),
        (
            "norm_nuc",
            lambda a: LA.norm(a, "nuc"),
            np.random.default_rng(7).normal(size=(3, 3)),
        ),
        (
            "pinv",
            lambda a: bnp.sum(LA.pinv(a) * W[:3, :]),
            np.random.default_rng(8).normal(size=(4, 3)),
        ),
        (
            "triangular_solve",
            lambda a: bnp.sum(
                bt.lax.linalg.triangular_solve(
                    a + 4 * np.eye(4), W, left_side=True, lower=True
                )
                * W
            ),
            np.random.default_rng(9).normal(size=(4, 4)),
        ),
    ],
)
def test_gradients_match_finite_differences(name, f, x):
    _check_grad(f, x)


@pytest.mark.x64
def test_gradient_under_jit_and_vmap():
    xs = np.stack([_spd64(3, s) for s in range(3)])
    g = bt.jit(bt.vmap(bt.grad(lambda a: LA.slogdet(a)[1])))(xs)
    close(g, np.linalg.inv(xs).transpose(0, 2, 1), 1e-8)


# ---- bt.lax.linalg and bt.scipy.linalg ----


def test_lax_linalg():
    L = bt.lax.linalg
    a = spd(2, 4, 4)
    close(L.cholesky(a), np.linalg.cholesky(a))
    lu, piv, perm = L.lu(rand(4, 4) + np.eye(4, dtype=np.float32))
    m = rand(4, 4) + np.eye(4, dtype=np.float32)
    lu, piv, perm = L.lu(m)
    lu = np.asarray(lu)
    low = np.tril(lu, -1) + np.eye(4)
    close(low @ np.triu(lu), m[np.asarray(perm)])
    import scipy.linalg as sl

    close(piv, sl.lu_factor(m)[1])
    q, r = L.qr(rand(5, 3))
    assert q.shape == (5, 5) and r.shape == (5, 3)
    v, w = L.eigh(a)
    close(w, np.linalg.eigvalsh(a))
    close((np.asarray(v) * np.asarray(w)[..., None, :]) @ np.swapaxes(v, -1, -2), a)
    u, s, vh = L.svd(rand(3, 5))
    close(s, np.linalg.svd(rand(3, 5), compute_uv=False))
    assert u.shape == (3, 3) and vh.shape == (5, 5)
    x = L.triangular_solve(np.tril(a[0]), rand(3, 4), left_side=False, lower=True)
    close(np.asarray(x) @ np.tril(a[0]), rand(3, 4))


def test_scipy_linalg():
    import scipy.linalg as sl

    S = bt.scipy.linalg
    a = spd(4, 4)
    b = rand(4, 2, seed=1)
    close(S.cholesky(a), sl.cholesky(a))
    close(S.cholesky(a, lower=True), sl.cholesky(a, lower=True))
    for lower in (False, True):
        close(S.cho_solve(S.cho_factor(a, lower), b), np.linalg.solve(a, b))
    close(
        S.solve_triangular(np.tril(a), b, lower=True),
        sl.solve_triangular(np.tril(a), b, lower=True),
    )
    close(
        S.solve_triangular(np.triu(a), b[:, 0], trans=1),
        sl.solve_triangular(np.triu(a), b[:, 0], trans=1),
    )
    m = rand(4, 4) + np.eye(4, dtype=np.float32)
    lu_piv = S.lu_factor(m)
    want = sl.lu_factor(m)
    close(lu_piv[0], want[0])
    np.testing.assert_array_equal(np.asarray(lu_piv[1]), want[1])
    close(S.lu_solve(lu_piv, b), np.linalg.solve(m, b))
    close(S.lu_solve(lu_piv, b, trans=1), np.linalg.solve(m.T, b))
    p, lo, up = S.lu(m)
    close(np.asarray(p) @ np.asarray(lo) @ np.asarray(up), m)
    close(S.solve(m, b), np.linalg.solve(m, b))
    close(S.solve(a, b[:, 0], assume_a="pos"), np.linalg.solve(a, b[:, 0]))
    close(S.inv(m), np.linalg.inv(m))
    close(S.det(m), np.linalg.det(m), 1e-3)
    close(S.eigh(a, eigvals_only=True), sl.eigh(a, eigvals_only=True))
    q, r = S.qr(rand(5, 3))
    assert q.shape == (5, 5)
    (r,) = S.qr(rand(5, 3), mode="r")
    assert r.shape == (5, 3)
    close(S.svd(rand(5, 3), compute_uv=False), sl.svd(rand(5, 3), compute_uv=False))
