"""``bt.lax.linalg``: jax.lax.linalg's decompositions, computed by LAPACK.

``cholesky``, ``triangular_solve``, ``lu``, ``qr``, ``eigh``, ``svd`` and ``schur``
with JAX's names, defaults and result orders. Inputs are float32 or
float64 (float16/bfloat16 are computed in float32 and cast back; other
dtypes raise TypeError), batched over their leading dimensions. They run
eagerly or traced, and are differentiable as ``_linalg_core`` describes.
"""

from __future__ import annotations

from typing import Any

from baton import _linalg_core as core
from baton import _ops

__all__ = ["cholesky", "eigh", "lu", "qr", "schur", "svd", "triangular_solve"]


def _run(impl: Any, args: tuple, **static: Any) -> Any:
    return _ops.apply(impl, args, tuple(sorted(static.items())))


def _prep(x: Any, what: str, square: bool) -> tuple[Any, Any]:
    """(compute dtype, result dtype) after checking x's shape and dtype."""
    core.check_matrix(
        _ops.shape_of(x), what, "x" if what != "triangular_solve" else "a", square
    )
    d = _ops.dtype_of(x)
    d = _ops.result_dtype(x) if d is None else d
    return core.float_dtype(d, what), core.result_dtype(d)


def _cholesky(x: Any, *, dt: Any, rt: Any, symmetrize_input: bool) -> Any:
    a = core.operand(x, dt)
    if symmetrize_input:
        a = core.symmetrize(a)
    return core.cast_back(core.cholesky_lower(a), rt)


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor L of x = L L^T (x [..., n, n], symmetric
    positive definite; with symmetrize_input, (x + x^T) / 2 is factored,
    else x's lower triangle is read). Not positive definite: NaNs."""
    dt, rt = _prep(x, "cholesky", True)
    return _run(_cholesky, (x,), dt=dt, rt=rt, symmetrize_input=symmetrize_input)


def _triangular_solve(a, b, *, dt, rt, left_side, lower, transpose_a, unit_diagonal):
    ta, tb = core.operand(a, dt), core.operand(b, dt)
    x = core.triangular_solve(
        ta,
        tb,
        left_side=left_side,
        lower=lower,
        transpose_a=transpose_a,
        unit_diagonal=unit_diagonal,
    )
    return core.cast_back(x, rt)


def triangular_solve(
    a: Any,
    b: Any,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
) -> Any:
    """x with op(a) x = b (left_side) or x op(a) = b, op(a) = a^T if
    transpose_a (conjugate_a has no effect on real matrices); only the
    ``lower`` (else upper) triangle of a is read, and not its diagonal with
    unit_diagonal. a is [..., n, n], b [..., n, k] (left) or [..., k, n];
    batch dimensions broadcast."""
    del conjugate_a
    sa, sb = _ops.shape_of(a), _ops.shape_of(b)
    dt, rt = _prep(a, "triangular_solve", True)
    core.check_matrix(sb, "triangular_solve", "b")
    n = sa[-1]
    along = sb[-2] if left_side else sb[-1]
    if along != n:
        side = "rows" if left_side else "columns"
        raise ValueError(
            f"triangular_solve: b of shape {sb} must have {n} {side} to match a of "
            f"shape {sa} (left_side={left_side})"
        )
    db, rb = _prep(b, "triangular_solve", False)
    dt = _ops.promote_types(dt, db)
    rt = _ops.promote_types(rt, rb)
    return _run(
        _triangular_solve,
        (a, b),
        dt=dt,
        rt=rt,
        left_side=left_side,
        lower=lower,
        transpose_a=transpose_a,
        unit_diagonal=unit_diagonal,
    )


def _lu(x: Any, *, dt: Any, rt: Any) -> Any:
    lu, perm = core.lu_raw(core.operand(x, dt))
    return core.cast_back(lu, rt), core.lu_pivots(perm), perm


def lu(x: Any) -> tuple[Any, Any, Any]:
    """(lu, pivots, permutation) of x [..., n, n] with partial pivoting:
    lu packs L (unit diagonal, below) and U (on and above the diagonal);
    pivots (int32) are LAPACK's row swaps, 0-based; permutation (int32)
    gives x[..., permutation, :] = L @ U. Not differentiable."""
    dt, rt = _prep(x, "lu", True)
    return _run(_lu, (x,), dt=dt, rt=rt)


def _qr(x: Any, *, dt: Any, rt: Any, full_matrices: bool) -> Any:
    a = core.operand(x, dt)
    m, n = a.shape[-2:]
    q, r = core.qr_fn(full_matrices, m, n)(a)
    return core.cast_back(q, rt), core.cast_back(r, rt)


def qr(x: Any, *, full_matrices: bool = True) -> tuple[Any, Any]:
    """(q, r) with x = q r, x [..., m, n]: q with orthonormal columns, r
    upper triangular; full_matrices: q [m, m], r [m, n], else with
    k = min(m, n) q [m, k], r [k, n]. Differentiable for m >= n (reduced,
    or square)."""
    dt, rt = _prep(x, "qr", False)
    return _run(_qr, (x,), dt=dt, rt=rt, full_matrices=full_matrices)


def _eigh(x: Any, *, dt: Any, rt: Any, lower: bool, symmetrize_input: bool) -> Any:
    a = core.operand(x, dt)
    if symmetrize_input:
        a = core.symmetrize(a)
    v, w = core.eigh_fn(lower)(a)
    return core.cast_back(v, rt), core.cast_back(w, rt)


def eigh(
    x: Any,
    *,
    lower: bool = True,
    symmetrize_input: bool = True,
    sort_eigenvalues: bool = True,
) -> tuple[Any, Any]:
    """(v, w) of symmetric x [..., n, n]: eigenvectors in the columns of v,
    eigenvalues w ascending, x = v diag(w) v^T. With symmetrize_input
    (x + x^T) / 2 is decomposed, else x's ``lower`` (upper) triangle is
    read. Eigenvalues are always sorted."""
    del sort_eigenvalues
    dt, rt = _prep(x, "eigh", True)
    return _run(
        _eigh, (x,), dt=dt, rt=rt, lower=lower, symmetrize_input=symmetrize_input
    )


def _svd(x: Any, *, dt: Any, rt: Any, full_matrices: bool, compute_uv: bool) -> Any:
    a = core.operand(x, dt)
    if not compute_uv:
        return core.cast_back(core.singular_values(a), rt)
    u, s, vt = core.svd(a, full_matrices)
    return core.cast_back(u, rt), core.cast_back(s, rt), core.cast_back(vt, rt)


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """(u, s, vh) with x = u[..., :k] diag(s) vh[..., :k, :], x [..., m, n],
    s descending; full_matrices: u [m, m], vh [n, n], else k columns/rows;
    compute_uv=False: s alone. Differentiable except for full matrices of
    a non-square x."""
    dt, rt = _prep(x, "svd", False)
    return _run(
        _svd, (x,), dt=dt, rt=rt, full_matrices=full_matrices, compute_uv=compute_uv
    )


def _schur(x: Any, *, dt: Any, rt: Any, compute_schur_vectors: bool) -> Any:
    t, z = core.schur_raw(core.operand(x, dt))
    if not compute_schur_vectors:
        return core.cast_back(t, rt)
    return core.cast_back(t, rt), core.cast_back(z, rt)


def schur(
    x: Any,
    *,
    compute_schur_vectors: bool = True,
    sort_eig_vals: bool = False,
    select_callable: Any = None,
) -> Any:
    """(t, vs): the real Schur form x = vs t vs^T of x [..., n, n] (LAPACK's
    gees): t quasi-upper-triangular, with a 2x2 diagonal block for each
    complex eigenvalue pair, vs orthogonal. compute_schur_vectors=False:
    t alone. Real (float32/float64) input only; eigenvalues are not sorted
    (sort_eig_vals / select_callable raise). Not differentiable, as JAX's.

    >>> t, vs = bt.lax.linalg.schur(bnp.array([[0., 1.], [-2., 3.]]))
    >>> bnp.allclose(vs @ t @ vs.T, bnp.array([[0., 1.], [-2., 3.]]))
    Array(True, dtype=bool)
    """
    if sort_eig_vals or select_callable is not None:
        raise NotImplementedError(
            "schur: sort_eig_vals and select_callable are not supported; "
            "sort the eigenvalues of t's diagonal blocks yourself"
        )
    dt, rt = _prep(x, "schur", True)
    return _run(_schur, (x,), dt=dt, rt=rt, compute_schur_vectors=compute_schur_vectors)
