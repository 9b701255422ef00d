"""``baton.numpy.linalg``: jax.numpy.linalg on LAPACK (``bt.lax.linalg``).

Decompositions and solves: cholesky, qr, svd, svdvals, eigh, eigvalsh,
solve, inv, det, slogdet, lstsq, pinv, matrix_rank, cond, matrix_power;
norms: norm, vector_norm, matrix_norm; and the array-API helpers
trace, diagonal, matrix_transpose, outer, cross, vecdot, matmul,
tensordot, multi_dot. Everything is batched over leading dimensions
([..., m, n]), runs eagerly or under ``bt.jit``/``vmap``, and is
differentiable (``_linalg_core`` lists the exceptions). float16/bfloat16
inputs are computed in float32 and cast back; integers and bool in the
default float type; complex is unsupported (TypeError). Bad shapes raise
ValueError naming the argument. Not provided: eig, eigvals (complex
results), tensorinv, tensorsolve.
"""

from __future__ import annotations

import operator
from collections import namedtuple
from typing import Any

import numpy as np

from baton import _linalg_core as core
from baton import _ops
from baton._baton import lax
from baton.numpy import _casts, _creation, _elementwise, _linalg, _reductions, _shapes

__all__ = [
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


def _run(impl: Any, args: tuple, **static: Any) -> Any:
    return _ops.apply(impl, args, tuple(sorted(static.items())))


def _types(what: str, *xs: Any) -> tuple[np.dtype, np.dtype]:
    """(compute dtype, result dtype) of the operands together."""
    ds = [_ops.dtype_of(x) for x in xs]
    d = _ops.result_dtype(*xs) if None in ds else ds[0]
    for e in ds[1:]:
        d = _ops.promote_types(d, e)
    return core.float_dtype(d, f"linalg.{what}"), core.result_dtype(d)


def _matrix(x: Any, what: str, name: str = "a", square: bool = False) -> tuple:
    shape = _ops.shape_of(x)
    core.check_matrix(shape, f"linalg.{what}", name, square)
    return shape


# ---- decompositions ----


def _cholesky(a, *, dt, rt, upper, symmetrize_input):
    x = core.operand(a, dt)
    if symmetrize_input:
        x = core.symmetrize(x)
    L = core.cholesky_lower(x)
    return core.cast_back(core.mT(L) if upper else L, rt)


def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """The Cholesky factor of a [..., n, n] (symmetric positive definite):
    L with a = L L^T, or U = L^T with ``upper``. Not positive definite:
    NaNs."""
    _matrix(a, "cholesky", square=True)
    dt, rt = _types("cholesky", a)
    return _run(
        _cholesky, (a,), dt=dt, rt=rt, upper=upper, symmetrize_input=symmetrize_input
    )


def _qr(a, *, dt, rt, mode):
    x = core.operand(a, dt)
    m, n = x.shape[-2:]
    q, r = core.qr_fn(mode == "complete", m, n)(x)
    if mode == "r":
        return core.cast_back(r, rt)
    return core.cast_back(q, rt), core.cast_back(r, rt)


def qr(a: Any, mode: str = "reduced") -> Any:
    """QR of a [..., m, n]: (Q, R) with a = Q R; mode "reduced" (k =
    min(m, n) columns of Q), "complete" (Q m x m, R m x n) or "r" (R
    alone, reduced)."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(
            f"linalg.qr: unsupported mode {mode!r}; use 'reduced', 'complete' or 'r'"
        )
    _matrix(a, "qr")
    dt, rt = _types("qr", a)
    out = _run(_qr, (a,), dt=dt, rt=rt, mode=mode)
    return out if mode == "r" else QRResult(*out)


def _svd(a, *, dt, rt, full_matrices, compute_uv):
    x = core.operand(a, dt)
    if not compute_uv:
        return core.cast_back(core.singular_values(x), rt)
    u, s, vt = core.svd(x, full_matrices)
    return tuple(core.cast_back(t, rt) for t in (u, s, vt))


def svd(
    a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
) -> Any:
    """SVD of a [..., m, n]: (U, S, Vh) with a = U[..., :k] diag(S)
    Vh[..., :k, :], S descending; compute_uv=False: S alone. ``hermitian``
    is accepted and ignored (the general algorithm is used)."""
    del hermitian
    _matrix(a, "svd")
    dt, rt = _types("svd", a)
    out = _run(
        _svd, (a,), dt=dt, rt=rt, full_matrices=full_matrices, compute_uv=compute_uv
    )
    return SVDResult(*out) if compute_uv else out


def svdvals(x: Any, /) -> Any:
    """The singular values of x [..., m, n], descending."""
    return svd(x, compute_uv=False)


def _eigh(a, *, dt, rt, lower, symmetrize_input):
    x = core.operand(a, dt)
    if symmetrize_input:
        x = core.symmetrize(x)
    v, w = core.eigh_fn(lower)(x)
    return core.cast_back(w, rt), core.cast_back(v, rt)


def _uplo(UPLO: Any, what: str) -> bool:
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"linalg.{what}: UPLO must be 'L' or 'U', got {UPLO!r}")


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> Any:
    """(eigenvalues ascending, eigenvectors in columns) of symmetric a
    [..., n, n]; UPLO "L"/"U" picks the triangle read when not
    symmetrize_input."""
    lower = _uplo(UPLO, "eigh")
    _matrix(a, "eigh", square=True)
    dt, rt = _types("eigh", a)
    return EighResult(
        *_run(_eigh, (a,), dt=dt, rt=rt, lower=lower, symmetrize_input=symmetrize_input)
    )


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:
    """The eigenvalues of symmetric a [..., n, n], ascending."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


# ---- solves, inverses, determinants ----


def _solve(a, b, *, dt, rt, vector):
    x, y = core.operand(a, dt), core.operand(b, dt)
    if vector:
        y = lax.reshape(y, (*y.shape, 1))
    x, y = core.broadcast_batch(x, y)
    out = core.solve(x, y)
    if vector:
        out = lax.reshape(out, out.shape[:-1])
    return core.cast_back(out, rt)


def solve(a: Any, b: Any) -> Any:
    """x with a x = b: a [..., n, n]; b [n] (a vector) or [..., n, k]
    (batch dimensions broadcast). Singular a: NaNs or infinities."""
    sa = _matrix(a, "solve", square=True)
    sb = _ops.shape_of(b)
    if len(sb) == 0:
        raise ValueError(
            f"linalg.solve: b must be a vector or a batch of matrices, got shape {sb}"
        )
    vector = len(sb) == 1
    n = sa[-1]
    if (sb[0] if vector else sb[-2]) != n:
        raise ValueError(
            f"linalg.solve: b of shape {sb} does not match a of shape {sa}: b needs "
            f"{n} rows (its {'only' if vector else 'second-to-last'} dimension)"
        )
    try:
        np.broadcast_shapes(sa[:-2], sb[:-2] if not vector else ())
    except ValueError:
        raise ValueError(
            f"linalg.solve: batch dimensions of a {sa} and b {sb} do not broadcast"
        ) from None
    dt, rt = _types("solve", a, b)
    return _run(_solve, (a, b), dt=dt, rt=rt, vector=vector)


def _inv(a, *, dt, rt):
    x = core.operand(a, dt)
    n = x.shape[-1]
    e = lax.broadcast_to(core.eye(n, dt), x.shape)
    return core.cast_back(core.solve(x, e), rt)


def inv(a: Any) -> Any:
    """The inverse of a [..., n, n] (singular: NaNs or infinities)."""
    _matrix(a, "inv", square=True)
    dt, rt = _types("inv", a)
    return _run(_inv, (a,), dt=dt, rt=rt)


def _det(a, *, dt, rt):
    return core.cast_back(core.det(core.operand(a, dt)), rt)


def det(a: Any) -> Any:
    """The determinant of a [..., n, n], from its LU factors."""
    _matrix(a, "det", square=True)
    dt, rt = _types("det", a)
    return _run(_det, (a,), dt=dt, rt=rt)


def _slogdet(a, *, dt, rt):
    s, ld = core.slogdet(core.operand(a, dt))
    return core.cast_back(s, rt), core.cast_back(ld, rt)


def slogdet(a: Any, *, method: str | None = None) -> Any:
    """(sign, logabsdet) of det(a), a [..., n, n]: sign 0 and logabsdet
    -inf for a singular a."""
    if method not in (None, "lu"):
        raise ValueError(f"linalg.slogdet: unsupported method {method!r}; use 'lu'")
    _matrix(a, "slogdet", square=True)
    dt, rt = _types("slogdet", a)
    return SlogdetResult(*_run(_slogdet, (a,), dt=dt, rt=rt))


def _eps(dt: np.dtype) -> float:
    return float(np.finfo(dt).eps)


def _pinv(a, *, dt, rt, rtol):
    x = core.operand(a, dt)
    m, n = x.shape[-2:]
    if min(m, n) == 0:
        return core.cast_back(lax.full((*x.shape[:-2], n, m), 0, dt), rt)
    u, s, vt = core.svd(x, False)
    r = 10.0 * max(m, n) * _eps(dt) if rtol is None else rtol
    cutoff = lax.mul(lax.max(s, (s.ndim - 1,), keepdims=True), r)
    keep = lax.gt(s, cutoff)
    s_inv = lax.where(keep, lax.true_divide(1.0, lax.where(keep, s, 1.0)), 0.0)
    vs = lax.mul(
        core.mT(vt), lax.reshape(s_inv, (*s_inv.shape[:-1], 1, s_inv.shape[-1]))
    )
    return core.cast_back(core.matmul(vs, core.mT(u)), rt)


def pinv(
    a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None
) -> Any:
    """The Moore-Penrose pseudo-inverse of a [..., m, n] by SVD: singular
    values at most rtol * max(s) (default 10 * max(m, n) * eps, as jnp)
    are dropped."""
    del hermitian
    if rcond is not None:
        if rtol is not None:
            raise ValueError("linalg.pinv: only one of rtol and rcond may be specified")
        rtol = rcond
    _matrix(a, "pinv")
    dt, rt = _types("pinv", a)
    return _run(_pinv, (a,), dt=dt, rt=rt, rtol=None if rtol is None else float(rtol))


def _matrix_rank(a, *, dt, tol):
    s = core.singular_values(core.operand(a, dt))
    m, n = a.shape[-2:]
    smax = lax.max(s, (s.ndim - 1,), keepdims=True)
    cut = lax.mul(smax, max(m, n) * _eps(dt)) if tol is None else tol
    return lax.sum(lax.astype(lax.gt(s, cut), np.int32), (s.ndim - 1,))


def matrix_rank(
    M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None
) -> Any:
    """The number of singular values of M [..., m, n] above rtol (default
    max(s) * max(m, n) * eps); a vector: 1 unless all zero."""
    del hermitian
    if tol is not None:
        if rtol is not None:
            raise ValueError(
                "linalg.matrix_rank: only one of tol or rtol may be specified"
            )
        rtol = tol
    if len(_ops.shape_of(M)) < 2:
        return _casts.astype(_reductions.any(_elementwise.not_equal(M, 0)), np.int32)
    dt, _ = _types("matrix_rank", M)
    return _run(_matrix_rank, (M,), dt=dt, tol=None if rtol is None else float(rtol))


def _lstsq(a, b, *, dt, rt, rcond, vector):
    x, y = core.operand(a, dt), core.operand(b, dt)
    if vector:
        y = lax.reshape(y, (y.shape[0], 1))
    m, n = x.shape
    u, s, vt = core.svd(x, False)
    r = _eps(dt) * max(m, n) if rcond is None else rcond
    first = lax.slice(s, (0,), (1,))
    keep = lax.bitwise_and(lax.gt(s, 0.0), lax.ge(s, lax.mul(first, r)))
    rank = lax.sum(lax.astype(keep, np.int32))
    s_inv = lax.where(keep, lax.true_divide(1.0, lax.where(keep, s, 1.0)), 0.0)
    utb = lax.mul(lax.reshape(s_inv, (s_inv.shape[0], 1)), core.matmul(core.mT(u), y))
    sol = core.matmul(core.mT(vt), utb)
    res = lax.sub(y, core.matmul(x, sol))
    resid = lax.sum(lax.mul(res, res), (0,))
    if vector:
        sol = lax.reshape(sol, (n,))
    return (
        core.cast_back(sol, rt),
        core.cast_back(resid, rt),
        rank,
        core.cast_back(s, rt),
    )


def lstsq(a: Any, b: Any, rcond: Any = None, *, numpy_resid: bool = False) -> tuple:
    """(x, residuals, rank, s): the least-squares solution of a x = b by
    SVD (a [m, n], b [m] or [m, k]); singular values below rcond * s[0]
    (default eps * max(m, n)) are dropped; residuals are the squared
    2-norms of b - a x per column (numpy_resid: empty unless a has full
    column rank and m > n, which needs concrete values)."""
    sa, sb = _ops.shape_of(a), _ops.shape_of(b)
    if len(sa) != 2:
        raise ValueError(f"linalg.lstsq: a must be two-dimensional, got shape {sa}")
    if len(sb) not in (1, 2):
        raise ValueError(
            f"linalg.lstsq: b must be one- or two-dimensional, got shape {sb}"
        )
    if sa[0] != sb[0]:
        raise ValueError(
            f"linalg.lstsq: a {sa} and b {sb} must have the same number "
            "of rows (leading dimension)"
        )
    dt, rt = _types("lstsq", a, b)
    out = _run(
        _lstsq,
        (a, b),
        dt=dt,
        rt=rt,
        vector=len(sb) == 1,
        rcond=None if rcond is None else float(rcond),
    )
    if numpy_resid:
        rank = int(np.asarray(out[2]))
        if rank < sa[1] or sa[0] <= sa[1]:
            out = (out[0], _creation.zeros((0,), rt), out[2], out[3])
    return out


def matrix_power(a: Any, n: int) -> Any:
    """a [..., m, m] raised to the integer power n (by repeated squaring;
    negative n: of inv(a))."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(
            f"linalg.matrix_power: n must be an integer, got {type(n).__name__}"
        ) from None
    _matrix(a, "matrix_power", square=True)
    if n == 0:
        shape = _ops.shape_of(a)
        return _shapes.broadcast_to(
            _creation.eye(shape[-1], dtype=_creation.asarray(a).dtype), shape
        )
    x = inv(a) if n < 0 else a
    n = abs(n)
    result = None
    while n:
        if n & 1:
            result = x if result is None else _linalg.matmul(result, x)
        n >>= 1
        if n:
            x = _linalg.matmul(x, x)
    return result


def multi_dot(arrays: Any, *, precision: Any = None) -> Any:
    """The product of a sequence of arrays (first and last may be vectors),
    left to right."""
    del precision
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("linalg.multi_dot: expects at least two arrays")
    out = arrays[0]
    for x in arrays[1:]:
        out = _linalg.matmul(out, x)
    return out


def cond(x: Any, p: Any = None) -> Any:
    """The condition number of x [..., m, n] in norm p (None or 2: the
    ratio of largest to smallest singular value; -2 its inverse; other p:
    norm(x, p) * norm(inv(x), p), square x)."""
    _matrix(x, "cond")
    if p is None or p in (2, -2):
        s = svdvals(x)
        hi, lo = _reductions.max(s, axis=-1), _reductions.min(s, axis=-1)
        return _elementwise.divide(lo, hi) if p == -2 else _elementwise.divide(hi, lo)
    _matrix(x, "cond", "x", square=True)
    return _elementwise.multiply(
        norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1))
    )


# ---- norms and the array-API helpers: baton/numpy/_linalg_norms.py ----

from baton.numpy._linalg_norms import (  # noqa: E402
    cross,
    diagonal,
    matmul,
    matrix_norm,
    matrix_transpose,
    norm,
    outer,
    tensordot,
    trace,
    vecdot,
    vector_norm,
)
