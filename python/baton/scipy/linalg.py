"""``bt.scipy.linalg``: jax.scipy.linalg's common functions, on the same
LAPACK op as ``bt.lax.linalg`` and ``baton.numpy.linalg`` (batched over
leading dimensions; float32/float64, 16-bit floats computed in float32).

solve_triangular, cholesky, cho_factor, cho_solve, lu, lu_factor,
lu_solve, solve (assume_a "gen", "sym" or "pos"), inv, det, eigh, qr, svd.
SciPy's conventions: cholesky and cho_factor give the upper factor unless
``lower``; pivots are LAPACK's (0-based); qr's default mode is "full".
``overwrite_*`` and ``check_finite`` are accepted and ignored.
"""

from __future__ import annotations

from typing import Any

from baton import _linalg_core as core
from baton import _ops
from baton._baton import lax
from baton.numpy import linalg as _np_linalg

__all__ = [
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "eigh",
    "inv",
    "lu",
    "lu_factor",
    "lu_solve",
    "qr",
    "solve",
    "solve_triangular",
    "svd",
]

_TRANS = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}


def _run(impl: Any, args: tuple, **static: Any) -> Any:
    return _ops.apply(impl, args, tuple(sorted(static.items())))


def _types(what: str, *xs: Any) -> tuple:
    return _np_linalg._types(what, *xs)


def _square(a: Any, what: str) -> tuple:
    s = _ops.shape_of(a)
    core.check_matrix(s, f"scipy.linalg.{what}", "a", square=True)
    return s


def _as_matrix(b: Any, n: int, what: str, vector: bool) -> None:
    sb = _ops.shape_of(b)
    rows = sb[-1] if vector else (sb[-2] if len(sb) >= 2 else None)
    if rows != n:
        raise ValueError(
            f"scipy.linalg.{what}: b of shape {sb} does not match a: it needs {n} rows"
        )


def _vector(a_shape: tuple, b: Any) -> bool:
    return len(_ops.shape_of(b)) == len(a_shape) - 1


# ---- triangular and Cholesky ----


def _to_columns(y: Any, vector: bool) -> Any:
    """A right-hand side as the matrix the solves take: a vector b[..., n]
    becomes one column b[..., n, 1]."""
    return lax.reshape(y, (*y.shape, 1)) if vector else y


def _from_columns(out: Any, vector: bool, rt: Any) -> Any:
    """A solve's result back in the right-hand side's form and dtype."""
    if vector:
        out = lax.reshape(out, out.shape[:-1])
    return core.cast_back(out, rt)


def _solve_tri(a, b, *, dt, rt, trans, lower, unit_diagonal, vector):
    x, y = core.operand(a, dt), core.operand(b, dt)
    y = _to_columns(y, vector)
    out = core.triangular_solve(
        x,
        y,
        left_side=True,
        lower=lower,
        transpose_a=trans,
        unit_diagonal=unit_diagonal,
    )
    return _from_columns(out, vector, rt)


def solve_triangular(
    a: Any,
    b: Any,
    trans: Any = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    debug: Any = None,
    check_finite: bool = True,
) -> Any:
    """x with op(a) x = b for triangular a [..., n, n] (its ``lower``, else
    upper, triangle; trans 0/"N": a, 1/"T" or 2/"C": a^T); b [..., n] or
    [..., n, k]."""
    del overwrite_b, debug, check_finite
    if trans not in _TRANS:
        raise ValueError(
            f"scipy.linalg.solve_triangular: trans must be 0, 1, 2, 'N', "
            f"'T' or 'C', got {trans!r}"
        )
    sa = _square(a, "solve_triangular")
    vector = _vector(sa, b)
    _as_matrix(b, sa[-1], "solve_triangular", vector)
    dt, rt = _types("solve_triangular", a, b)
    return _run(
        _solve_tri,
        (a, b),
        dt=dt,
        rt=rt,
        trans=_TRANS[trans],
        lower=lower,
        unit_diagonal=unit_diagonal,
        vector=vector,
    )


def _cholesky(a, *, dt, rt, lower):
    x = core.operand(a, dt)
    L = core.cholesky_lower(x if lower else core.mT(x))
    return core.cast_back(L if lower else core.mT(L), rt)


def cholesky(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """The Cholesky factor of a [..., n, n]: upper U (a = U^T U, from a's
    upper triangle) or, with ``lower``, L (a = L L^T, from its lower
    triangle)."""
    del overwrite_a, check_finite
    _square(a, "cholesky")
    dt, rt = _types("cholesky", a)
    return _run(_cholesky, (a,), dt=dt, rt=rt, lower=lower)


def cho_factor(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Any, bool]:
    """(c, lower): cholesky(a, lower) for cho_solve (the other triangle of c
    is zero)."""
    return cholesky(a, lower), lower


def _cho_solve(c, b, *, dt, rt, lower, vector):
    x, y = core.operand(c, dt), core.operand(b, dt)
    y = _to_columns(y, vector)
    # lower: a = L L^T; upper: a = U^T U.
    z = core.triangular_solve(x, y, left_side=True, lower=lower, transpose_a=not lower)
    out = core.triangular_solve(x, z, left_side=True, lower=lower, transpose_a=lower)
    return _from_columns(out, vector, rt)


def cho_solve(
    c_and_lower: tuple[Any, bool],
    b: Any,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Any:
    """x with a x = b from cho_factor(a)'s (c, lower)."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    sc = _square(c, "cho_solve")
    vector = _vector(sc, b)
    _as_matrix(b, sc[-1], "cho_solve", vector)
    dt, rt = _types("cho_solve", c, b)
    return _run(_cho_solve, (c, b), dt=dt, rt=rt, lower=bool(lower), vector=vector)


# ---- LU ----


def _lu_factor(a, *, dt, rt):
    lu, perm = core.lu_raw(core.operand(a, dt))
    return core.cast_back(lu, rt), core.lu_pivots(perm)


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple:
    """(lu, piv) of a [..., n, n]: L (unit diagonal, below) and U packed,
    and LAPACK's pivots (row i was swapped with row piv[i], 0-based)."""
    del overwrite_a, check_finite
    _square(a, "lu_factor")
    dt, rt = _types("lu_factor", a)
    return _run(_lu_factor, (a,), dt=dt, rt=rt)


def _pivots_to_permutation(piv: Any) -> Any:
    """The row order the swaps in piv [..., n] give (int32)."""
    from baton._control_flow import fori_loop

    n = piv.shape[-1]
    idx = lax.iota(core._I32, piv.shape, piv.ndim - 1)
    r = (piv.ndim - 1,)

    def body(i, perm):
        at_i = lax.eq(idx, i)
        j = lax.sum(lax.where(at_i, piv, 0), r, keepdims=True)
        at_j = lax.eq(idx, j)
        pi = lax.sum(lax.where(at_i, perm, 0), r, keepdims=True)
        pj = lax.sum(lax.where(at_j, perm, 0), r, keepdims=True)
        return lax.where(at_i, pj, lax.where(at_j, pi, perm))

    return fori_loop(0, n, body, idx)


def _lu_solve(lu, piv, b, *, dt, rt, trans, vector):
    f, y = core.operand(lu, dt), core.operand(b, dt)
    y = _to_columns(y, vector)
    f, y = core.broadcast_batch(f, y)
    p = core.permutation_matrix(_pivots_to_permutation(lax.astype(piv, core._I32)), dt)
    if not trans:  # P a = L U
        z = core.triangular_solve(
            f, core.matmul(p, y), left_side=True, lower=True, unit_diagonal=True
        )
        out = core.triangular_solve(f, z, left_side=True, lower=False)
    else:  # a^T = U^T L^T P
        z = core.triangular_solve(f, y, left_side=True, lower=False, transpose_a=True)
        w = core.triangular_solve(
            f, z, left_side=True, lower=True, transpose_a=True, unit_diagonal=True
        )
        out = core.matmul(core.mT(p), w)
    return _from_columns(out, vector, rt)


def lu_solve(
    lu_and_piv: tuple[Any, Any],
    b: Any,
    trans: int = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Any:
    """x with a x = b (trans 0) or a^T x = b (trans 1 or 2) from
    lu_factor(a)'s (lu, piv)."""
    del overwrite_b, check_finite
    if trans not in _TRANS:
        raise ValueError(
            f"scipy.linalg.lu_solve: trans must be 0, 1 or 2, got {trans!r}"
        )
    lu_, piv = lu_and_piv
    s = _square(lu_, "lu_solve")
    vector = _vector(s, b)
    _as_matrix(b, s[-1], "lu_solve", vector)
    dt, rt = _types("lu_solve", lu_, b)
    return _run(
        _lu_solve, (lu_, piv, b), dt=dt, rt=rt, trans=_TRANS[trans], vector=vector
    )


def _lu(a, *, dt, rt, permute_l):
    lu, perm = core.lu_raw(core.operand(a, dt))
    n = lu.shape[-1]
    lower = lax.add(core.tril(lu, -1), core.eye(n, dt))
    upper = core.triu(lu)
    p = core.mT(core.permutation_matrix(perm, dt))  # a = p l u
    if permute_l:
        return core.cast_back(core.matmul(p, lower), rt), core.cast_back(upper, rt)
    return tuple(core.cast_back(t, rt) for t in (p, lower, upper))


def lu(
    a: Any,
    permute_l: bool = False,
    overwrite_a: bool = False,
    check_finite: bool = True,
) -> tuple:
    """(p, l, u) with a = p @ l @ u for square a [..., n, n] (p a
    permutation matrix, l unit lower, u upper); permute_l: (p @ l, u)."""
    del overwrite_a, check_finite
    _square(a, "lu")
    dt, rt = _types("lu", a)
    return _run(_lu, (a,), dt=dt, rt=rt, permute_l=permute_l)


# ---- general ----


def solve(
    a: Any,
    b: Any,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    debug: bool = False,
    check_finite: bool = True,
    assume_a: str = "gen",
) -> Any:
    """x with a x = b; assume_a "gen" or "sym" (LU) or "pos" (Cholesky, of
    a's ``lower``, else upper, triangle). b [..., n] or [..., n, k]."""
    del overwrite_a, overwrite_b, debug, check_finite
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(
            f"scipy.linalg.solve: unsupported assume_a {assume_a!r}; use "
            "'gen', 'sym' or 'pos'"
        )
    sa = _square(a, "solve")
    if assume_a == "pos":
        return cho_solve(cho_factor(a, lower), b)
    if _vector(sa, b):
        _as_matrix(b, sa[-1], "solve", True)
        return _np_linalg.solve(a, _expand(b))[..., 0]
    return _np_linalg.solve(a, b)


def _expand(b: Any) -> Any:
    import baton.numpy as bnp

    return bnp.expand_dims(b, -1)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The inverse of a [..., n, n]."""
    return _np_linalg.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant of a [..., n, n]."""
    return _np_linalg.det(a)


def eigh(
    a: Any,
    b: Any = None,
    lower: bool = True,
    eigvals_only: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    turbo: bool = True,
    eigvals: Any = None,
    type: int = 1,
    check_finite: bool = True,
) -> Any:
    """(w ascending, v) of symmetric a [..., n, n] from its ``lower`` (else
    upper) triangle; eigvals_only: w. The generalized problem (b) is not
    supported."""
    if b is not None or eigvals is not None:
        raise NotImplementedError(
            "scipy.linalg.eigh: only the standard problem "
            "(b=None, eigvals=None) is supported"
        )
    w, v = _np_linalg.eigh(a, "L" if lower else "U", symmetrize_input=False)
    return w if eigvals_only else (w, v)


def qr(
    a: Any,
    overwrite_a: bool = False,
    lwork: Any = None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
) -> tuple:
    """(q, r) of a [..., m, n]: mode "full" (q m x m), "economic" (k =
    min(m, n) columns) or "r" ((r,), full). Pivoting is not supported."""
    if pivoting:
        raise NotImplementedError("scipy.linalg.qr: pivoting is not supported")
    if mode not in ("full", "economic", "r"):
        raise ValueError(
            f"scipy.linalg.qr: unsupported mode {mode!r}; use 'full', 'economic' or 'r'"
        )
    q, r = _np_linalg.qr(a, "reduced" if mode == "economic" else "complete")
    return (r,) if mode == "r" else (q, r)


def svd(
    a: Any,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
) -> Any:
    """(u, s, vh) of a [..., m, n] (s descending), or s."""
    out = _np_linalg.svd(a, full_matrices, compute_uv)
    return tuple(out) if compute_uv else out
