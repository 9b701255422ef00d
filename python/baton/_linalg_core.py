"""The decompositions behind ``bt.lax.linalg``, ``baton.numpy.linalg`` and
``bt.scipy.linalg``, as functions of Tracers (they run inside a trace;
the public modules run them eagerly through ``_ops.apply``).

Each decomposition is the IR's linalg op (``op_attrs.h`` LinalgAttrs,
computed by LAPACK) with its packed result sliced apart here. Only the
triangular solve has C++ derivative rules; every other derivative is a
``custom_jvp`` rule below (linear in the tangents and built from matmul,
triangular solves and elementwise ops, so reverse mode linearizes it as
JAX does): cholesky, eigh, qr (reduced, m >= n), svd (reduced, or singular
values only), and the LU-based solve, det and slogdet. Cases without a
rule (full-matrix qr/svd of a non-square matrix, qr of a wide matrix, lu
itself) use the raw op, whose derivative raises baton's "no derivative
rule" error. Derivatives of derivatives are not supported (a rule's primal
computation is the raw op).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from baton import _dtypes, _ops
from baton._baton import lax
from baton._custom import custom_jvp

Tracer = lax.Tracer
_I32 = np.dtype(np.int32)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


# ---- dtypes ----


def float_dtype(d: Any, what: str) -> np.dtype:
    """The dtype a linalg function computes in for an operand of dtype d:
    float32/float64 as they are, 16-bit floats in float32 (the result is
    cast back), integers and bool in the default float (float64 with x64
    on, as jnp); TypeError for anything else."""
    d = np.dtype(d)
    if d in (_F32, _F64):
        return d
    if d == np.float16 or d == _dtypes.bfloat16:
        return _F32
    if d.kind in "biu":
        return _F64 if _dtypes.x64_enabled() else _F32
    raise TypeError(
        f"{what}: unsupported dtype {d}; baton's linear algebra takes float32 or "
        "float64 (16-bit floats are computed in float32, integers in the default "
        "float type; complex numbers are not supported)"
    )


def result_dtype(d: Any) -> np.dtype:
    """The dtype of a result computed from an operand of dtype d (16-bit
    floats come back in their own dtype, like jnp)."""
    d = np.dtype(d)
    if d == np.float16 or d == _dtypes.bfloat16:
        return d
    return float_dtype(d, "linalg")


def operand(x: Any, dtype: np.dtype) -> Any:
    """x as a Tracer of the compute dtype."""
    return _ops.as_tracer(x, dtype)


def cast_back(x: Any, d: np.dtype) -> Any:
    return x if x.dtype == d else lax.astype(x, d)


def check_matrix(shape: tuple[int, ...], what: str, name: str = "a", square=False):
    """ValueError unless shape is [..., m, n] (square: m == n)."""
    if len(shape) < 2:
        raise ValueError(
            f"{what}: {name} must have at least two dimensions (a matrix, or a "
            f"batch of them in its leading dimensions), got shape {shape}"
        )
    if square and shape[-1] != shape[-2]:
        raise ValueError(
            f"{what}: {name} must be square in its last two dimensions, got shape "
            f"{shape}"
        )


# ---- matrix helpers (Tracers) ----


def mT(x: Any) -> Any:
    """x with its last two dimensions swapped."""
    r = x.ndim
    return lax.transpose(x, (*range(r - 2), r - 1, r - 2))


def eye(n: int, dtype: Any) -> Any:
    return lax.astype(
        lax.eq(lax.iota(_I32, (n, n), 0), lax.iota(_I32, (n, n), 1)), dtype
    )


def tri_mask(n: int, m: int, k: int = 0) -> Any:
    """bool [n, m]: True on and below diagonal k."""
    return lax.ge(lax.add(lax.iota(_I32, (n, m), 0), k), lax.iota(_I32, (n, m), 1))


def tril(x: Any, k: int = 0) -> Any:
    return lax.where(tri_mask(x.shape[-2], x.shape[-1], k), x, lax.full((), 0, x.dtype))


def triu(x: Any, k: int = 0) -> Any:
    keep = lax.bitwise_not(tri_mask(x.shape[-2], x.shape[-1], k - 1))
    return lax.where(keep, x, lax.full((), 0, x.dtype))


def diagonal(x: Any) -> Any:
    """The main diagonal of the last two dimensions, [..., min(m, n)]."""
    m, n = x.shape[-2:]
    k = min(m, n)
    sq = lax.slice(x, (0,) * x.ndim, (*x.shape[:-2], k, k))
    return lax.sum(lax.mul(sq, eye(k, x.dtype)), (x.ndim - 1,))


def diag_embed(v: Any) -> Any:
    """[..., k] -> [..., k, k] with v on the diagonal."""
    k = v.shape[-1]
    return lax.mul(lax.reshape(v, (*v.shape, 1)), eye(k, v.dtype))


def matmul(a: Any, b: Any) -> Any:
    return lax.matmul(a, b)


def last(x: Any, start: int, stop: int) -> Any:
    """x[..., start:stop]."""
    return lax.slice(x, (0,) * (x.ndim - 1) + (start,), (*x.shape[:-1], stop))


def symmetrize(x: Any) -> Any:
    return lax.mul(lax.add(x, mT(x)), 0.5)


def broadcast_batch(a: Any, b: Any) -> tuple[Any, Any]:
    """a [..., n, n] and b [..., p, q] with their batch dimensions broadcast."""
    batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    if tuple(a.shape[:-2]) != batch:
        a = lax.broadcast_to(a, (*batch, *a.shape[-2:]))
    if tuple(b.shape[:-2]) != batch:
        b = lax.broadcast_to(b, (*batch, *b.shape[-2:]))
    return a, b


# ---- the raw op, unpacked ----


def _op(kind: str, a: Any, b: Any = None, **flags: Any) -> Any:
    return lax._linalg(kind, a, b, **flags)


def triangular_solve(a, b, *, left_side, lower, transpose_a=False, unit_diagonal=False):
    """x with op(a) x = b (left_side) or x op(a) = b; batch dimensions of a
    and b broadcast. Differentiable (C++ rules)."""
    a, b = broadcast_batch(a, b)
    return _op(
        "triangular_solve",
        a,
        b,
        left_side=left_side,
        lower=lower,
        transpose_a=transpose_a,
        unit_diagonal=unit_diagonal,
    )


def lu_raw(a: Any) -> tuple[Any, Any]:
    """(packed L\\U [..., n, n], permutation int32 [..., n]) with
    a[..., perm, :] = L U."""
    n = a.shape[-1]
    p = _op("lu", a)
    lu = last(p, 0, n)
    perm = lax.astype(lax.reshape(last(p, n, n + 1), a.shape[:-1]), _I32)
    return lu, perm


def permutation_matrix(perm: Any, dtype: Any) -> Any:
    """P [..., n, n] with (P x)[i] = x[perm[i]]."""
    n = perm.shape[-1]
    cols = lax.iota(_I32, (*perm.shape, n), perm.ndim)
    rows = lax.reshape(perm, (*perm.shape, 1))
    return lax.astype(lax.eq(lax.broadcast_to(rows, cols.shape), cols), dtype)


def qr_raw(a: Any, full_matrices: bool) -> tuple[Any, Any]:
    m, n = a.shape[-2:]
    c = m if full_matrices else min(m, n)
    p = _op("qr", a, full_matrices=full_matrices)
    batch = tuple(a.shape[:-2])
    q = lax.reshape(last(p, 0, m * c), (*batch, m, c))
    r = lax.reshape(last(p, m * c, m * c + c * n), (*batch, c, n))
    return q, r


def eigh_raw(a: Any, lower: bool) -> tuple[Any, Any]:
    """(eigenvectors [..., n, n] in columns, eigenvalues ascending [..., n])."""
    n = a.shape[-1]
    p = _op("eigh", a, lower=lower)
    return last(p, 0, n), lax.reshape(last(p, n, n + 1), a.shape[:-1])


def svd_raw(a: Any, full_matrices: bool) -> tuple[Any, Any, Any]:
    m, n = a.shape[-2:]
    k = min(m, n)
    uc, vr = (m, n) if full_matrices else (k, k)
    p = _op("svd", a, full_matrices=full_matrices)
    batch = tuple(a.shape[:-2])
    u = lax.reshape(last(p, 0, m * uc), (*batch, m, uc))
    s = last(p, m * uc, m * uc + k)
    vt = lax.reshape(last(p, m * uc + k, m * uc + k + vr * n), (*batch, vr, n))
    return u, s, vt


def schur_raw(a: Any) -> tuple[Any, Any]:
    """(t, z) of the real Schur form a = z t z^T: t quasi-upper-triangular
    (a 2x2 diagonal block per complex eigenvalue pair), z orthogonal.
    No derivative rule (JAX's schur has none either)."""
    n = a.shape[-1]
    p = _op("schur", a)
    return last(p, 0, n), last(p, n, 2 * n)


# ---- decompositions with derivative rules ----


@custom_jvp
def cholesky_lower(a: Any) -> Any:
    """L of a = L L^T (a symmetric; its lower triangle is read)."""
    return _op("cholesky", a, lower=True)


@cholesky_lower.defjvp
def _cholesky_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a,), (da,) = primals, tangents
    L = cholesky_lower(a)
    # dL = L phi(L^-1 dA L^-T), phi: the lower triangle with half its diagonal.
    tmp = triangular_solve(L, da, left_side=True, lower=True)
    x = triangular_solve(L, tmp, left_side=False, lower=True, transpose_a=True)
    n = a.shape[-1]
    half = lax.mul(eye(n, a.dtype), 0.5)
    phi = lax.sub(tril(x), lax.mul(x, half))
    return L, matmul(L, phi)


@functools.cache
def eigh_fn(lower: bool) -> Any:
    """eigh(a) -> (v, w) of symmetric a (its `lower` triangle), with its
    derivative rule."""

    def eigh(a: Any) -> tuple[Any, Any]:
        return eigh_raw(a, lower)

    eigh.__qualname__ = "eigh"
    eigh = custom_jvp(eigh)

    @eigh.defjvp
    def _jvp(primals: tuple, tangents: tuple) -> tuple:
        (a,), (da,) = primals, tangents
        v, w = eigh(a)
        n = a.shape[-1]
        e = eye(n, a.dtype)
        vt_da_v = matmul(matmul(mT(v), da), v)
        dw = diagonal(vt_da_v)
        wr = lax.reshape(w, (*w.shape[:-1], 1, n))
        wc = lax.reshape(w, (*w.shape[:-1], n, 1))
        # F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it.
        f = lax.sub(lax.true_divide(1.0, lax.add(e, lax.sub(wr, wc))), e)
        dv = matmul(v, lax.mul(f, vt_da_v))
        return (v, w), (dv, dw)

    return eigh


@functools.cache
def qr_fn(full_matrices: bool, m: int, n: int) -> Any:
    """qr(a) -> (q, r); with a derivative rule where JAX has one (m >= n,
    reduced or square)."""
    if m < n or (full_matrices and m != n):
        return lambda a: qr_raw(a, full_matrices)

    def qr(a: Any) -> tuple[Any, Any]:
        return qr_raw(a, full_matrices)

    qr.__qualname__ = "qr"
    qr = custom_jvp(qr)

    @qr.defjvp
    def _jvp(primals: tuple, tangents: tuple) -> tuple:
        (a,), (da,) = primals, tangents
        q, r = qr(a)
        dx_rinv = triangular_solve(r, da, left_side=False, lower=False)
        qt_dx_rinv = matmul(mT(q), dx_rinv)
        low = tril(qt_dx_rinv, -1)
        do = lax.sub(low, mT(low))  # skew-symmetric
        dq = lax.add(matmul(q, lax.sub(do, qt_dx_rinv)), dx_rinv)
        dr = matmul(lax.sub(qt_dx_rinv, do), r)
        return (q, r), (dq, dr)

    return qr


def _svd_tangents(a, da, u, s, vt, compute_uv):
    """JAX's svd_jvp_rule for real, reduced factors."""
    m, n = a.shape[-2:]
    v = mT(vt)
    ds_mat = matmul(matmul(mT(u), da), v)
    ds = diagonal(ds_mat)
    if not compute_uv:
        return ds
    k = s.shape[-1]
    s_dim = lax.reshape(s, (*s.shape[:-1], 1, k))
    s_col = mT(s_dim)
    e = eye(k, a.dtype)
    s_diffs = lax.mul(lax.add(s_dim, s_col), lax.sub(s_dim, s_col))
    f = lax.sub(lax.true_divide(1.0, lax.add(s_diffs, e)), e)
    dss = lax.mul(s_dim, ds_mat)
    sds = lax.mul(s_col, ds_mat)
    du = matmul(u, lax.mul(f, lax.add(dss, mT(dss))))
    dv = matmul(v, lax.mul(f, lax.add(sds, mT(sds))))
    if m > n:
        dav = matmul(da, v)
        du = lax.add(du, lax.true_divide(lax.sub(dav, matmul(u, matmul(mT(u), dav))), s_dim))
    if n > m:
        dahu = matmul(mT(da), u)
        dv = lax.add(dv, lax.true_divide(lax.sub(dahu, matmul(v, matmul(vt, dahu))), s_dim))
    return ds, du, mT(dv)


@custom_jvp
def svd_reduced(a: Any) -> tuple[Any, Any, Any]:
    """(u, s, vt), reduced, with its derivative rule."""
    return svd_raw(a, False)


@svd_reduced.defjvp
def _svd_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a,), (da,) = primals, tangents
    u, s, vt = svd_reduced(a)
    ds, du, dvt = _svd_tangents(a, da, u, s, vt, True)
    return (u, s, vt), (du, ds, dvt)


@custom_jvp
def singular_values(a: Any) -> Any:
    """s (descending) with its derivative rule."""
    return svd_raw(a, False)[1]


@singular_values.defjvp
def _singular_values_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a,), (da,) = primals, tangents
    u, s, vt = svd_raw(a, False)
    return s, _svd_tangents(a, da, u, s, vt, False)


def svd(a: Any, full_matrices: bool) -> tuple[Any, Any, Any]:
    """(u, s, vt); differentiable unless full_matrices on a non-square a."""
    m, n = a.shape[-2:]
    if full_matrices and m != n:
        return svd_raw(a, True)
    return svd_reduced(a)


# ---- LU-based solve, det, slogdet ----


def _lu_solve_raw(lu: Any, perm: Any, b: Any) -> Any:
    """x with a x = b from a's packed factors (b [..., n, k])."""
    pb = matmul(permutation_matrix(perm, b.dtype), b)
    y = triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu, y, left_side=True, lower=False)


@custom_jvp
def solve(a: Any, b: Any) -> Any:
    """x with a x = b (a [..., n, n], b [..., n, k], equal batch dims)."""
    lu, perm = lu_raw(a)
    return _lu_solve_raw(lu, perm, b)


@solve.defjvp
def _solve_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a, b), (da, db) = primals, tangents
    lu, perm = lu_raw(a)
    x = _lu_solve_raw(lu, perm, b)
    return x, _lu_solve_raw(lu, perm, lax.sub(db, matmul(da, x)))


def _parity(perm: Any, dtype: Any) -> Any:
    """(-1)^(number of inversions of perm): the permutation's sign."""
    n = perm.shape[-1]
    pi = lax.reshape(perm, (*perm.shape, 1))
    pj = lax.reshape(perm, (*perm.shape[:-1], 1, n))
    upper = lax.lt(lax.iota(_I32, (n, n), 0), lax.iota(_I32, (n, n), 1))
    inv = lax.bitwise_and(lax.gt(pi, pj), upper)
    count = lax.sum(lax.astype(inv, _I32), (perm.ndim - 1, perm.ndim))
    odd = lax.eq(lax.rem(count, 2), 1)
    return lax.where(odd, lax.full((), -1, dtype), lax.full((), 1, dtype))


def _trace_solve(a: Any, da: Any) -> Any:
    """tr(a^-1 da)."""
    return lax.sum(diagonal(solve(a, da)), (a.ndim - 2,))


@custom_jvp
def det(a: Any) -> Any:
    """det(a) from its LU factors."""
    lu, perm = lu_raw(a)
    return lax.mul(_parity(perm, a.dtype), lax.prod(diagonal(lu), (a.ndim - 2,)))


@det.defjvp
def _det_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a,), (da,) = primals, tangents
    d = det(a)
    return d, lax.mul(d, _trace_solve(a, da))


@custom_jvp
def slogdet(a: Any) -> tuple[Any, Any]:
    """(sign, log|det a|) from its LU factors."""
    lu, perm = lu_raw(a)
    diag = diagonal(lu)
    r = a.ndim - 2
    sign = lax.mul(_parity(perm, a.dtype), lax.prod(lax.sign(diag), (r,)))
    return sign, lax.sum(lax.log(lax.abs(diag)), (r,))


@slogdet.defjvp
def _slogdet_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a,), (da,) = primals, tangents
    sign, logdet = slogdet(a)
    return (sign, logdet), (lax.mul(sign, 0.0), _trace_solve(a, da))


def lu_pivots(perm: Any) -> Any:
    """LAPACK-style pivots (row i was swapped with row piv[i], in order)
    of the permutation perm [..., n] (int32)."""
    from baton._control_flow import fori_loop

    n = perm.shape[-1]
    idx = lax.iota(_I32, perm.shape, perm.ndim - 1)

    def body(i, carry):
        cur, piv = carry  # cur: the rows in their current order
        at_i = lax.eq(idx, i)
        want = lax.sum(lax.where(at_i, perm, 0), (perm.ndim - 1,), keepdims=True)
        pos_mask = lax.eq(cur, want)
        pos = lax.sum(lax.where(pos_mask, idx, 0), (perm.ndim - 1,), keepdims=True)
        cur_i = lax.sum(lax.where(at_i, cur, 0), (perm.ndim - 1,), keepdims=True)
        cur = lax.where(at_i, want, lax.where(pos_mask, cur_i, cur))
        piv = lax.where(at_i, pos, piv)
        return cur, piv

    _, piv = fori_loop(0, n, body, (idx, lax.mul(idx, 0)))
    return piv
