"""baton.numpy.linalg, bt.lax.linalg and bt.scipy.linalg against JAX's:
values (sign-free forms of eigenvectors and singular vectors: the
reconstructions, absolute values), batched inputs, and gradients through
the decompositions, which must match JAX's rules."""

from __future__ import annotations

import numpy as np
import pytest
from _jaxcompat import BATON, JAX, rng_floats, run_both

TOL = dict(rtol=2e-4, atol=2e-4)


def spd(seed, shape):
    m = np.random.default_rng(seed).uniform(-1, 1, shape)
    n = shape[-1]
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(np.float32)


A = spd(1, (2, 4, 4))
M = rng_floats(2, (2, 4, 4)) + 2 * np.eye(4, dtype=np.float32)
TALL = rng_floats(3, (2, 5, 3))
B = rng_floats(4, (2, 4, 2))


@pytest.mark.parametrize(
    "name",
    [
        "cholesky",
        "solve",
        "inv",
        "det",
        "slogdet",
        "eigvalsh",
        "svdvals",
        "pinv",
        "matrix_rank",
        "cond",
        "norm",
        "norm_nuc",
        "norm_2",
        "matrix_power",
    ],
)
def test_numpy_linalg_values(name):
    def build(L):
        la = L.np.linalg
        return {
            "cholesky": lambda a, m, t, b: la.cholesky(a),
            "solve": lambda a, m, t, b: la.solve(m, b),
            "inv": lambda a, m, t, b: la.inv(m),
            "det": lambda a, m, t, b: la.det(m),
            "slogdet": lambda a, m, t, b: tuple(la.slogdet(m)),
            "eigvalsh": lambda a, m, t, b: la.eigvalsh(a),
            "svdvals": lambda a, m, t, b: la.svdvals(t),
            "pinv": lambda a, m, t, b: la.pinv(t),
            "matrix_rank": lambda a, m, t, b: la.matrix_rank(t),
            "cond": lambda a, m, t, b: la.cond(m),
            "norm": lambda a, m, t, b: la.norm(t, axis=-1),
            "norm_nuc": lambda a, m, t, b: la.norm(t, "nuc", axis=(-2, -1)),
            "norm_2": lambda a, m, t, b: la.norm(t, 2, axis=(-2, -1)),
            "matrix_power": lambda a, m, t, b: la.matrix_power(m, 3),
        }[name]

    run_both(build, A, M, TALL, B, **TOL)


def test_decompositions_sign_free():
    def build(L):
        la = L.np.linalg

        def f(a, t):
            w, v = la.eigh(a)
            q, r = la.qr(t)
            u, s, vh = la.svd(t, full_matrices=False)
            return (
                w,
                abs(v),
                (v * w[..., None, :]) @ la.matrix_transpose(v),
                abs(q),
                abs(r),
                q @ r,
                s,
                abs(u),
                abs(vh),
            )

        return f

    run_both(build, A, TALL, **TOL)


def test_lax_and_scipy_linalg():
    def build(L):
        lal = L.lax.linalg
        sl = L.api.scipy.linalg

        def f(a, m, b):
            lu, piv, perm = lal.lu(m)
            x = lal.triangular_solve(lal.cholesky(a), b, left_side=True, lower=True)
            c = sl.cho_solve(sl.cho_factor(a), b)
            return (
                lu,
                piv,
                perm,
                x,
                c,
                sl.lu_solve(sl.lu_factor(m), b),
                sl.solve_triangular(m, b, lower=True),
                sl.cholesky(a),
            )

        return f

    run_both(build, A, M, B, **TOL)


@pytest.mark.parametrize(
    "name",
    ["cholesky", "solve", "det", "slogdet", "eigh", "qr", "svd", "norm_2", "inv"],
)
def test_gradients(name):
    def build(L):
        la = L.np.linalg
        w = L.np.asarray(rng_floats(9, (4, 4)))

        def loss(a, m, t):
            if name == "cholesky":
                return (la.cholesky(a) * w).sum()
            if name == "solve":
                return (la.solve(m, w) * w).sum()
            if name == "det":
                return la.det(m).sum()
            if name == "slogdet":
                return la.slogdet(m)[1].sum()
            if name == "eigh":
                ev, vec = la.eigh(a)
                return (ev * w[0]).sum() + (abs(vec) * w).sum()
            if name == "qr":
                q, r = la.qr(t)
                return (abs(q) * w[:, None, :3].sum(0)).sum() + (abs(r)).sum()
            if name == "svd":
                u, s, vh = la.svd(t, full_matrices=False)
                return s.sum() + (abs(u)).sum() * 0.1 + (abs(vh)).sum() * 0.1
            if name == "norm_2":
                return la.norm(t, 2, axis=(-2, -1)).sum()
            return (la.inv(m) * w).sum()

        return L.api.grad(loss, argnums=(0, 1, 2))

    run_both(build, A, M, TALL, rtol=2e-3, atol=2e-3)


def test_vmap_matches():
    def build(L):
        la = L.np.linalg
        return L.api.vmap(lambda a, b: (la.solve(a, b), la.det(a), la.cholesky(a)))

    run_both(build, A, B, **TOL)


def test_error_classes_match():
    for L in (BATON, JAX):
        with pytest.raises(ValueError):
            L.np.linalg.inv(np.ones((3, 4), np.float32))
        with pytest.raises(ValueError):
            L.np.linalg.solve(np.eye(3, dtype=np.float32), np.ones(4, np.float32))
