"""bt.scipy.linalg's functions on the complex Schur form (rsf2csf,
schur(output="complex"), sqrtm, funm, solve_sylvester) against
jax.scipy.linalg's: values to float32 (float64) rounding, dtypes, shapes,
eagerly and under bt.jit, batched where JAX's are, and the errors.

rsf2csf is checked on JAX's own real Schur forms, so both rotate the same
blocks (the real form itself is not unique between LAPACK builds).
schur(output="complex") is rsf2csf of baton's real form where JAX runs
complex LAPACK: a different but equally valid form, so it is checked by
what defines it (z t z^H = a, z unitary, t upper triangular, t's diagonal
the eigenvalues JAX's t has). sqrtm, funm and solve_sylvester depend on
the matrix alone and are compared value for value; sqrtm only where no
eigenvalue is real and negative (there the root's sign on the imaginary
axis follows rounding in JAX, see test_sqrtm_negative_eigenvalue)."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402

import baton as bt  # noqa: E402
import baton.numpy as bnp  # noqa: E402
import baton.scipy.linalg as bsl  # noqa: E402

F32 = np.float32


def _close(b, j, rtol=2e-5):
    """Same shape and dtype; values within rtol of the largest entry."""
    b, j = np.asarray(b), np.asarray(j)
    assert b.shape == j.shape, (b.shape, j.shape)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    finite = np.abs(j[np.isfinite(j)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    np.testing.assert_allclose(b, j, rtol=0, atol=rtol * scale, equal_nan=True)


def _normal(seed, shape, dtype=F32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _same_eigenvalues(x, y, atol):
    """x and y hold the same values (each of y matched to its own x)."""
    left = list(np.asarray(x))
    for v in np.asarray(y):
        i = int(np.argmin([abs(u - v) for u in left]))
        assert abs(left[i] - v) < atol, (x, y)
        left.pop(i)


def _has_complex_pair(a):
    return np.any(np.abs(np.linalg.eigvals(np.asarray(a, np.float64)).imag) > 1e-3)


@pytest.fixture
def x64():
    jax.config.update("jax_enable_x64", True)
    bt.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", False)
    bt.config.update("jax_enable_x64", False)


# ---- rsf2csf ----


@pytest.mark.parametrize(
    "n,seed", [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4), (7, 5), (9, 6), (12, 7)]
)
def test_rsf2csf_matches_jax(n, seed):
    a = _normal(seed, (n, n))
    t, z = (np.asarray(x) for x in jsl.schur(a))
    want_t, want_z = jsl.rsf2csf(t, z)
    got_t, got_z = bsl.rsf2csf(t, z)
    _close(got_t, want_t)
    _close(got_z, want_z)
    jt, jz = bt.jit(bsl.rsf2csf)(t, z)
    _close(jt, want_t)
    _close(jz, want_z)
    got_t = np.asarray(got_t)
    assert np.all(np.tril(got_t, -1) == 0)
    np.testing.assert_allclose(
        np.asarray(got_z) @ got_t @ np.asarray(got_z).conj().T, a, atol=2e-5 * n
    )


def test_rsf2csf_rotation_blocks():
    # a block for each of +-2i, 1 +- 3i and the real eigenvalue 0.5
    d = np.zeros((5, 5), F32)
    d[0:2, 0:2] = [[0, -2], [2, 0]]
    d[2, 2] = 0.5
    d[3:5, 3:5] = [[1, 3], [-3, 1]]
    q, _ = np.linalg.qr(_normal(8, (5, 5), np.float64))
    a = (q @ d @ q.T).astype(F32)
    t, z = (np.asarray(x) for x in jsl.schur(a))
    assert np.count_nonzero(np.diagonal(t, -1)) == 2
    _close(bsl.rsf2csf(t, z)[0], jsl.rsf2csf(t, z)[0])
    _close(bsl.rsf2csf(t, z)[1], jsl.rsf2csf(t, z)[1])
    # each pair's eigenvalue with positive imaginary part comes first, as JAX's
    diag = np.diagonal(np.asarray(bsl.rsf2csf(t, z)[0]))
    for i in np.nonzero(np.diagonal(t, -1))[0]:
        assert diag[i].imag > 1 and diag[i + 1].imag < -1


def test_rsf2csf_general_blocks():
    """Blocks that are not in LAPACK's standard form (a != d, real
    eigenvalues, b == 0): the same rotations as JAX's, which takes the
    eigenvalue complex geev lists first."""
    rng = np.random.default_rng(9)
    for k in range(30):
        t = np.triu(
            rng.standard_normal((4, 4)) * rng.choice([0.01, 1, 100], (4, 4))
        ).astype(F32)
        t[1, 0] = rng.standard_normal()  # an arbitrary 2x2 block on rows 0, 1
        t[3, 2] = rng.standard_normal() * 3  # and one on rows 2, 3
        if k % 5 == 0:
            t[2, 3] = 0.0  # lower triangular block: geev swaps its eigenvalues
        if k % 3 == 0:
            t[3, 3] = t[2, 2]
        z = np.linalg.qr(rng.standard_normal((4, 4)))[0].astype(F32)
        want = jsl.rsf2csf(t, z)
        got = bsl.rsf2csf(t, z)
        _close(got[0], want[0], 1e-5)
        _close(got[1], want[1], 1e-5)


def test_rsf2csf_batched_broadcast_and_dtypes():
    a = _normal(10, (3, 6, 6))
    t, z = (np.asarray(x) for x in jax.vmap(jsl.schur)(a))
    for got, want in zip(bsl.rsf2csf(t, z), jsl.rsf2csf(t, z)):
        _close(got, want)
    for got, want in zip(bsl.rsf2csf(t, z[0]), jsl.rsf2csf(t, z[0])):  # z broadcast
        _close(got, want)
    for got, want in zip(bt.jit(bsl.rsf2csf)(t, z), jsl.rsf2csf(t, z)):
        _close(got, want)
    # integers and float16 become complex64, as JAX's promote_dtypes_complex
    ti = np.array([[2, 1], [-3, 2]], np.int32)
    zi = np.eye(2, dtype=np.int32)
    for got, want in zip(bsl.rsf2csf(ti, zi), jsl.rsf2csf(ti, zi)):
        _close(got, want)
    th = t[0, :2, :2].astype(np.float16)
    for got, want in zip(bsl.rsf2csf(th, zi), jsl.rsf2csf(th, zi)):
        _close(got, want, 1e-3)
    one = np.array([[3.0]], F32)
    for got, want in zip(bsl.rsf2csf(one, one), jsl.rsf2csf(one, one)):
        _close(got, want)


def test_rsf2csf_float64(x64):
    a = _normal(11, (8, 8), np.float64)
    t, z = (np.asarray(x) for x in jsl.schur(a))
    assert _has_complex_pair(a)
    for got, want in zip(bsl.rsf2csf(t, z), jsl.rsf2csf(t, z)):
        assert np.asarray(got).dtype == np.complex128
        _close(got, want, 1e-12)


def test_rsf2csf_errors():
    sq, rect = np.eye(3, dtype=F32), np.ones((2, 3), F32)
    for args in [
        (rect, sq),
        (sq, rect),
        (np.ones(3, F32), sq),
        (sq, np.eye(2, dtype=F32)),
    ]:
        with pytest.raises(ValueError) as want:
            jsl.rsf2csf(*args)
        with pytest.raises(ValueError) as got:
            bsl.rsf2csf(*args)
        assert str(got.value) == str(want.value)


# ---- schur(output="complex") ----


@pytest.mark.parametrize("n,seed", [(1, 0), (2, 12), (3, 13), (5, 14), (8, 15)])
def test_schur_complex(n, seed):
    a = _normal(seed, (n, n))
    t, z = (np.asarray(x) for x in bsl.schur(a, output="complex"))
    tj = np.asarray(jsl.schur(a, output="complex")[0])
    assert t.dtype == z.dtype == tj.dtype == np.complex64
    assert t.shape == z.shape == (n, n)
    np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=1e-5 * n)
    np.testing.assert_allclose(z.conj().T @ z, np.eye(n), atol=1e-5 * n)
    assert np.all(np.tril(t, -1) == 0)
    _same_eigenvalues(np.diag(t), np.diag(tj), 1e-5)
    # it is rsf2csf of the real form (funm's route in JAX and SciPy)
    tr, zr = bsl.schur(a)
    for got, want in zip(bsl.rsf2csf(tr, zr), (t, z)):
        np.testing.assert_array_equal(np.asarray(got), want)
    for got, want in zip(bt.jit(lambda x: bsl.schur(x, output="complex"))(a), (t, z)):
        _close(got, want, 1e-6)


def test_schur_complex_batched_ints_and_refusals():
    a = _normal(16, (2, 4, 4))
    t, z = (np.asarray(x) for x in bsl.schur(a, output="complex"))
    assert t.shape == (2, 4, 4) and t.dtype == np.complex64
    np.testing.assert_allclose(z @ t @ np.conj(np.swapaxes(z, -1, -2)), a, atol=1e-5)
    ai = np.array([[1, 2], [-3, 1]], np.int32)  # JAX's complex schur takes integers
    t, z = (np.asarray(x) for x in bsl.schur(ai, output="complex"))
    assert t.dtype == np.asarray(jsl.schur(ai, output="complex")[0]).dtype
    _same_eigenvalues(np.diag(t), [1 - np.sqrt(6) * 1j, 1 + np.sqrt(6) * 1j], 1e-5)
    with pytest.raises(NotImplementedError, match="complex LAPACK"):
        bsl.schur(a.astype(np.complex64), output="complex")
    with pytest.raises(ValueError, match="square"):
        bsl.schur(np.ones((2, 3), F32), output="complex")


# ---- sqrtm ----


def _no_negative_real_eigenvalues(seed, n):
    """A random matrix (with complex eigenvalue pairs) shifted so that every
    eigenvalue has a positive real part."""
    a = _normal(seed, (n, n))
    shift = max(0.0, -np.linalg.eigvals(a.astype(np.float64)).real.min()) + 0.5
    return (a + shift * np.eye(n)).astype(F32)


@pytest.mark.parametrize(
    "n,seed", [(1, 0), (2, 17), (3, 18), (5, 19), (8, 20), (12, 21)]
)
def test_sqrtm_matches_jax(n, seed):
    a = _no_negative_real_eigenvalues(seed, n)
    want = jsl.sqrtm(a)
    _close(bsl.sqrtm(a), want)
    _close(bt.jit(bsl.sqrtm)(a), want)
    r = np.asarray(bsl.sqrtm(a))
    np.testing.assert_allclose(r @ r, a, atol=1e-4 * max(1, np.abs(a).max()))


def test_sqrtm_complex_pairs_and_spd():
    a = _no_negative_real_eigenvalues(22, 6)
    assert _has_complex_pair(a)
    _close(bsl.sqrtm(a), jsl.sqrtm(a))
    m = _normal(23, (6, 6))
    spd = (m @ m.T + 0.5 * np.eye(6)).astype(F32)
    want = jsl.sqrtm(spd)
    _close(bsl.sqrtm(spd), want)
    r = np.asarray(bsl.sqrtm(spd))
    assert np.abs(r.imag).max() < 1e-4  # the symmetric positive definite root
    np.testing.assert_allclose(r.real, r.real.T, atol=1e-4)
    np.testing.assert_allclose(r.real @ r.real, spd, atol=1e-4 * np.abs(spd).max())


def test_sqrtm_funm_under_vmap():
    a = np.stack([_no_negative_real_eigenvalues(s, 5) for s in (42, 43, 44)])
    _close(bt.vmap(bsl.sqrtm)(a), jax.vmap(jsl.sqrtm)(a))
    _close(
        bt.vmap(lambda x: bsl.funm(x, bnp.exp))(a),
        jax.vmap(lambda x: jsl.funm(x, jnp.exp))(a),
    )


def test_sqrtm_dtypes(x64):
    a = _no_negative_real_eigenvalues(24, 7).astype(np.float64)
    got, want = bsl.sqrtm(a), jsl.sqrtm(a)
    assert np.asarray(got).dtype == np.complex128
    _close(got, want, 1e-12)
    ai = np.array([[4, 1], [0, 9]], np.int64)
    _close(bsl.sqrtm(ai), jsl.sqrtm(ai), 1e-12)


def test_sqrtm_int_and_float16():
    ai = np.array([[4, 1], [2, 9]], np.int32)
    _close(bsl.sqrtm(ai), jsl.sqrtm(ai))
    ah = np.array([[4, 1], [2, 9]], np.float16)
    _close(bsl.sqrtm(ah), jsl.sqrtm(ah))  # complex64, as JAX's


def test_sqrtm_negative_eigenvalue():
    """JAX's example: eigenvalue -2. Its root is +-i sqrt(2), the sign set by
    the rounding of the eigenvalue's zero imaginary part (in JAX's complex
    LAPACK; baton's is +0, so +i sqrt(2)); both are square roots."""
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 2.0], [3.0, 2.0, 1.0]], F32)
    r = np.asarray(bsl.sqrtm(a))
    assert r.dtype == np.complex64
    np.testing.assert_allclose(r @ r, a, atol=1e-5)
    w = np.linalg.eigvals(r.astype(np.complex128))
    assert np.all(w.real >= -1e-5)  # principal: no eigenvalue left of the axis
    want = np.asarray(jsl.sqrtm(a))
    assert np.allclose(r, want, atol=1e-5) or np.allclose(r, want.conj(), atol=1e-5)


def test_sqrtm_errors():
    a = np.eye(3, dtype=F32)
    for arg, kw in [
        (np.ones((2, 3), F32), {}),
        (np.ones((2, 3, 3), F32), {}),
        (np.ones(3, F32), {}),
        (a, {"blocksize": 2}),
    ]:
        with pytest.raises(Exception) as want:
            jsl.sqrtm(arg, **kw)
        with pytest.raises(want.type):
            bsl.sqrtm(arg, **kw)
    with pytest.raises(NotImplementedError, match="complex"):
        bsl.sqrtm(a.astype(np.complex64))


# ---- funm ----


@pytest.mark.parametrize(
    "n,seed", [(1, 0), (2, 25), (3, 26), (5, 27), (8, 28), (12, 29)]
)
def test_funm_exp_matches_jax_and_expm(n, seed):
    a = _normal(seed, (n, n))
    want = jsl.funm(a, jnp.exp)
    got = bsl.funm(a, bnp.exp)
    _close(got, want)
    _close(bt.jit(lambda x: bsl.funm(x, bnp.exp))(a), want)
    np.testing.assert_allclose(
        np.asarray(got), np.asarray(bsl.expm(a)), rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize("n,seed", [(2, 30), (4, 31), (6, 32), (9, 33)])
def test_funm_sin_cos_and_error_estimate(n, seed):
    a = _normal(seed, (n, n))
    _close(bsl.funm(a, bnp.sin), jsl.funm(a, jnp.sin))
    _close(bsl.funm(a, np.sin), jsl.funm(a, np.sin))  # a numpy ufunc works too

    def f_b(x):
        return bnp.sin(x) + 2 * bnp.cos(x)

    def f_j(x):
        return jnp.sin(x) + 2 * jnp.cos(x)

    got, err = bsl.funm(a, f_b, disp=False)
    want, werr = jsl.funm(a, f_j, disp=False)
    _close(got, want)
    assert np.asarray(err).dtype == np.asarray(werr).dtype == np.float32
    np.testing.assert_allclose(float(err), float(werr), rtol=1e-4)
    jgot, jerr = bt.jit(lambda x: bsl.funm(x, f_b, disp=False))(a)
    _close(jgot, want)
    np.testing.assert_allclose(float(jerr), float(werr), rtol=1e-4)


def test_funm_complex_pairs_and_real_function():
    a = _normal(34, (6, 6))
    assert _has_complex_pair(a)
    _close(bsl.funm(a, lambda x: x * x), jsl.funm(a, lambda x: x * x))
    np.testing.assert_allclose(
        np.asarray(bsl.funm(a, lambda x: x * x)), a @ a, atol=1e-4
    )
    # a real-valued func result becomes complex, as JAX's astype
    _close(bsl.funm(a, bnp.abs), jsl.funm(a, jnp.abs))
    # repeated eigenvalues: den == 0 is not divided, err from eps / |t_00|
    d = np.diag([2.0, 2.0, 3.0]).astype(F32)
    for got, want in zip(
        bsl.funm(d, bnp.exp, disp=False), jsl.funm(d, jnp.exp, disp=False)
    ):
        _close(got, want)


def test_funm_float64(x64):
    a = _normal(35, (7, 7), np.float64)
    got, err = bsl.funm(a, bnp.exp, disp=False)
    want, werr = jsl.funm(a, jnp.exp, disp=False)
    assert (
        np.asarray(got).dtype == np.complex128 and np.asarray(err).dtype == np.float64
    )
    _close(got, want, 1e-12)
    np.testing.assert_allclose(float(err), float(werr), rtol=1e-8)


def test_funm_errors():
    for arg in [np.ones((2, 3), F32), np.ones((2, 3, 3), F32), np.ones(3, F32)]:
        with pytest.raises(ValueError, match="expected square array_like input"):
            jsl.funm(arg, jnp.exp)
        with pytest.raises(ValueError, match="expected square array_like input"):
            bsl.funm(arg, bnp.exp)
    for arg in [np.eye(2, dtype=np.int32), np.eye(2, dtype=np.float16)]:
        with pytest.raises(Exception) as want:
            jsl.funm(arg, jnp.exp)
        with pytest.raises(want.type):
            bsl.funm(arg, bnp.exp)
    with pytest.raises(NotImplementedError, match="complex"):
        bsl.funm(np.eye(2, dtype=np.complex64), bnp.exp)


# ---- solve_sylvester ----


@pytest.mark.parametrize(
    "m,n,seed", [(1, 1, 0), (2, 3, 36), (4, 4, 37), (5, 2, 38), (7, 9, 39)]
)
def test_solve_sylvester_matches_jax(m, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, m)).astype(F32)
    b = rng.standard_normal((n, n)).astype(F32)
    c = rng.standard_normal((m, n)).astype(F32)
    want = jsl.solve_sylvester(a, b, c)
    got = bsl.solve_sylvester(a, b, c)
    _close(got, want, 5e-5)
    _close(bt.jit(bsl.solve_sylvester)(a, b, c), want, 5e-5)
    x = np.asarray(got, np.float64)
    np.testing.assert_allclose(a @ x + x @ b, c, atol=1e-4 * max(1, np.abs(x).max()))


def test_solve_sylvester_variants():
    rng = np.random.default_rng(40)
    a = rng.standard_normal((2, 4, 4)).astype(F32)
    b = rng.standard_normal((3, 3)).astype(F32)
    c = rng.standard_normal((4, 3)).astype(F32)
    _close(bsl.solve_sylvester(a, b, c), jsl.solve_sylvester(a, b, c), 5e-5)  # batched
    cc = (c + 1j * rng.standard_normal((4, 3))).astype(np.complex64)
    _close(bsl.solve_sylvester(a[0], b, cc), jsl.solve_sylvester(a[0], b, cc), 5e-5)
    # method="eigen": the same unique solution (computed by the Schur method)
    _close(
        bsl.solve_sylvester(a[0], b, c, method="eigen"),
        jsl.solve_sylvester(a[0], b, c, method="eigen"),
        1e-4,
    )
    # JAX's docstring example, integers promoted to float32
    ai, bi, ci = (
        np.array([[1, 2], [3, 4]]),
        np.array([[5, 6], [7, 8]]),
        np.array([[6, 8], [10, 12]]),
    )
    _close(bsl.solve_sylvester(ai, bi, ci), jsl.solve_sylvester(ai, bi, ci))
    # an eigenvalue of a plus one of b is zero: NaNs
    s = np.array([[4.0, 1.0], [1.0, 3.0]], F32)
    _close(bsl.solve_sylvester(s, -s, s), jsl.solve_sylvester(s, -s, s))
    assert np.isnan(np.asarray(bsl.solve_sylvester(s, -s, s))).all()
    # tol decides how close to zero counts
    _close(
        bsl.solve_sylvester(s, 2.5 - s, s, tol=10.0),
        jsl.solve_sylvester(s, 2.5 - s, s, tol=10.0),
    )


def test_solve_sylvester_float64(x64):
    rng = np.random.default_rng(41)
    a, b, c = (
        rng.standard_normal((6, 6)),
        rng.standard_normal((4, 4)),
        rng.standard_normal((6, 4)),
    )
    got, want = bsl.solve_sylvester(a, b, c), jsl.solve_sylvester(a, b, c)
    assert np.asarray(got).dtype == np.float64
    _close(got, want, 1e-11)


def test_solve_sylvester_errors():
    a, c = np.eye(2, dtype=F32), np.ones((2, 3), F32)
    with pytest.raises(ValueError, match="Incompatible shapes") as want:
        jsl.solve_sylvester(a, a, c)
    with pytest.raises(ValueError) as got:
        bsl.solve_sylvester(a, a, c)
    assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="Unrecognized method"):
        jsl.solve_sylvester(a, a, a, method="lu")
    with pytest.raises(ValueError, match="Unrecognized method"):
        bsl.solve_sylvester(a, a, a, method="lu")
    h = a.astype(np.float16)
    with pytest.raises(NotImplementedError):
        jsl.solve_sylvester(h, h, h)
    with pytest.raises(NotImplementedError):
        bsl.solve_sylvester(h, h, h)
    with pytest.raises(NotImplementedError, match="complex"):
        bsl.solve_sylvester(a.astype(np.complex64), a, a)
