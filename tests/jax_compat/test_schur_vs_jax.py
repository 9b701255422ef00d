"""The Schur decomposition (bt.lax.linalg.schur, bt.scipy.linalg.schur)
against JAX's. The real Schur form is not unique (signs of z's columns, the
orientation of each 2x2 block, and the order LAPACK finds eigenvalues in
may differ between LAPACK builds), so the checks are what defines it:
z t z^T = a, z orthogonal, t quasi-upper-triangular, and t's eigenvalues
those of JAX's t; batched, under jit and vmap; the refusals."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402

import baton as bt  # noqa: E402
import baton.scipy.linalg as bsl  # noqa: E402

F32 = np.float32


def _eigvals(t):
    return np.sort_complex(np.linalg.eigvals(np.asarray(t, np.float64)))


def _check_form(a, t, z, atol):
    t, z = np.asarray(t, np.float64), np.asarray(z, np.float64)
    n = a.shape[-1]
    np.testing.assert_allclose(z @ t @ np.swapaxes(z, -1, -2), a, atol=atol)
    np.testing.assert_allclose(
        np.swapaxes(z, -1, -2) @ z, np.broadcast_to(np.eye(n), z.shape), atol=atol
    )
    assert np.all(np.tril(t, -2) == 0)
    sub = np.diagonal(t, offset=-1, axis1=-2, axis2=-1)
    assert not np.any((sub[..., 1:] != 0) & (sub[..., :-1] != 0)), (
        "overlapping 2x2 blocks"
    )


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_schur_matches_jax(n):
    a = np.random.default_rng(n).standard_normal((n, n)).astype(F32)
    t, z = bsl.schur(a)
    tj, zj = jsl.schur(a)
    _check_form(a, t, z, 1e-4)
    _check_form(a, tj, zj, 1e-4)  # the same checks hold for JAX's
    np.testing.assert_allclose(_eigvals(t), _eigvals(tj), atol=1e-4)
    np.testing.assert_allclose(_eigvals(t), _eigvals(a), atol=1e-4)


def test_lax_schur_batched_jit_vmap():
    a = np.random.default_rng(3).standard_normal((4, 6, 6)).astype(F32)
    t, z = bt.lax.linalg.schur(a)
    assert t.shape == z.shape == (4, 6, 6) and t.dtype == np.float32
    _check_form(a, t, z, 1e-4)
    tj, _ = jax.lax.linalg.schur(jnp.asarray(a))
    for i in range(4):
        np.testing.assert_allclose(_eigvals(t[i]), _eigvals(tj[i]), atol=1e-4)
    tt = bt.jit(lambda x: bt.lax.linalg.schur(x, compute_schur_vectors=False))(a)
    np.testing.assert_array_equal(np.asarray(tt), np.asarray(t))
    tv, zv = bt.vmap(bt.lax.linalg.schur)(a)
    np.testing.assert_array_equal(np.asarray(tv), np.asarray(t))
    np.testing.assert_array_equal(np.asarray(zv), np.asarray(z))


def test_schur_complex_eigenvalues_give_blocks():
    rot = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]], F32)
    q, _ = np.linalg.qr(np.random.default_rng(4).standard_normal((3, 3)))
    a = (q @ rot @ q.T).astype(F32)
    t, z = bsl.schur(a)
    _check_form(a, t, z, 1e-5)
    assert np.count_nonzero(np.diagonal(np.asarray(t), -1)) == 1  # one +-2i block
    np.testing.assert_allclose(_eigvals(t), [-2j, 2j, 3.0], atol=1e-5)


def test_schur_nan_and_refusals():
    t, z = bsl.schur(np.full((3, 3), np.nan, F32))
    assert np.isnan(np.asarray(t)).all() and np.isnan(np.asarray(z)).all()
    with pytest.raises(ValueError, match="square"):
        bsl.schur(np.ones((2, 3), F32))
    with pytest.raises(ValueError, match="output"):
        bsl.schur(np.eye(2, dtype=F32), output="upper")
    with pytest.raises(NotImplementedError, match="sort"):
        bt.lax.linalg.schur(np.eye(2, dtype=F32), sort_eig_vals=True)
    with pytest.raises(NotImplementedError, match="schur"):  # JAX has no rule either
        bt.grad(lambda x: bt.lax.linalg.schur(x)[0].sum())(np.eye(2, dtype=F32))
