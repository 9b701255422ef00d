"""``bt.scipy.linalg``: jax.scipy.linalg's common functions, on the same
LAPACK op as ``bt.lax.linalg`` and ``baton.numpy.linalg`` (batched over
leading dimensions; float32/float64, 16-bit floats computed in float32).

solve_triangular, cholesky, cho_factor, cho_solve, lu, lu_factor,
lu_solve, solve (assume_a "gen", "sym" or "pos"), inv, det, eigh, qr, svd.
SciPy's conventions: cholesky and cho_factor give the upper factor unless
``lower``; pivots are LAPACK's (0-based); qr's default mode is "full".
``overwrite_*`` and ``check_finite`` are accepted and ignored.

Special matrices, as JAX builds them (batched over leading axes where
JAX's are; lists refused as JAX does): block_diag, toeplitz, hankel,
circulant, companion, convolution_matrix, fiedler, fiedler_companion,
leslie (from arrays), hadamard, helmert, hilbert, invhilbert, pascal,
invpascal and dft (complex) (from a size). expm: JAX's scaling and
squaring with Pade approximants; expm_frechet its jvp. polar: from the SVD.
qr_multiply: from qr's full Q. eigh_tridiagonal: JAX's bisection.
hessenberg: LAPACK's Householder reduction, composed. schur: LAPACK's
real Schur form, and output="complex" from it by rsf2csf.

On the complex Schur form (``_linalg_schur``, composed from complex baton
ops; real input, as there is no complex LAPACK): rsf2csf (JAX's rotations,
each 2x2 block by the eigenvalue complex geev lists first), sqrtm (Bjorck
and Hammarling's recurrence; not batched, as JAX's), funm (Parlett's
recurrence, with JAX's error estimate for disp=False) and solve_sylvester
(Bartels-Stewart; batched; c may be complex).
"""

from __future__ import annotations

import functools
from typing import Any

from baton import _linalg_core as core
from baton import _ops
from baton._baton import lax
from baton.numpy import linalg as _np_linalg
from baton.scipy import _linalg_schur
from baton.scipy._linalg_schur import funm, rsf2csf, solve_sylvester, sqrtm

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "circulant",
    "companion",
    "convolution_matrix",
    "det",
    "dft",
    "eigh",
    "eigh_tridiagonal",
    "expm",
    "expm_frechet",
    "fiedler",
    "fiedler_companion",
    "funm",
    "hadamard",
    "hankel",
    "helmert",
    "hessenberg",
    "hilbert",
    "inv",
    "invhilbert",
    "invpascal",
    "leslie",
    "lu",
    "lu_factor",
    "lu_solve",
    "pascal",
    "polar",
    "qr",
    "qr_multiply",
    "rsf2csf",
    "schur",
    "solve",
    "solve_sylvester",
    "solve_triangular",
    "sqrtm",
    "svd",
    "toeplitz",
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
        return _solve_pos(a, b, lower, _vector(sa, b))
    if _vector(sa, b):
        _as_matrix(b, sa[-1], "solve", True)
        return _np_linalg.solve(a, _expand(b))[..., 0]
    return _np_linalg.solve(a, b)


def _solve_pos(a: Any, b: Any, lower: bool, vector: bool) -> Any:
    """solve's "pos" case as JAX's: Cholesky of a's ``lower`` (else upper)
    triangle for the value, differentiated implicitly through
    ``custom_linear_solve`` with the whole of a (a x = b), so a's
    cotangent is the general solve's, -lam x^T, in both triangles."""
    import baton.numpy as bnp
    from baton import lax as blax

    factors = cho_factor(blax.stop_gradient(a), lower)

    def matvec(x: Any) -> Any:
        if vector:
            return bnp.matmul(a, bnp.expand_dims(x, -1))[..., 0]
        return bnp.matmul(a, x)

    return blax.custom_linear_solve(
        matvec, b, solve=lambda _, x: cho_solve(factors, x), symmetric=True
    )


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
    """(w ascending, v) of symmetric a [..., n, n]; as JAX's, a is
    symmetrized ((a + a^H) / 2) before LAPACK reads its ``lower`` (else
    upper) triangle; eigvals_only: w. The generalized problem (b) is not
    supported (NotImplementedError, as JAX's).

    >>> w = bt.scipy.linalg.eigh(bnp.array([[2., 1.], [1., 2.]]),
    ...                          eigvals_only=True)
    >>> w
    Array([1., 3.], dtype=float32)
    """
    if b is not None or eigvals is not None:
        raise NotImplementedError(
            "scipy.linalg.eigh: only the standard problem "
            "(b=None, eigvals=None) is supported"
        )
    # As JAX's (lax.linalg.eigh's default): a is symmetrized first, so
    # ``lower`` picks the LAPACK triangle of (a + a^H) / 2.
    w, v = _np_linalg.eigh(a, "L" if lower else "U", symmetrize_input=True)
    return w if eigvals_only else (w, v)


def schur(a: Any, output: str = "real") -> tuple:
    """(t, z) with a = z t z^H for a [..., n, n] (LAPACK's gees): output
    "real" gives the real Schur form, t quasi-upper-triangular with a 2x2
    diagonal block per complex eigenvalue pair and z orthogonal; "complex"
    the complex Schur form (t upper triangular, z unitary; complex64, or
    complex128 from float64) as rsf2csf of the real one. JAX runs complex
    gees there: an equally valid form whose diagonal may list the
    eigenvalues in another order (and z's columns other phases). Real
    input only (complex input needs complex LAPACK: NotImplementedError).

    >>> a = bnp.array([[0., 1.], [-2., 3.]])
    >>> t, z = bt.scipy.linalg.schur(a)
    >>> bnp.allclose(z @ t @ z.T, a, atol=1e-5)
    Array(True, dtype=bool)
    >>> tc, zc = bt.scipy.linalg.schur(a, output="complex")
    >>> bnp.allclose(zc @ tc @ zc.conj().T, a, atol=1e-5)
    Array(True, dtype=bool)
    """
    from baton import lax_linalg

    if output not in ("real", "complex"):
        raise ValueError(
            f"scipy.linalg.schur: output must be 'real' or 'complex', got {output!r}"
        )
    if output == "complex":
        return _linalg_schur.complex_schur(a)
    return lax_linalg.schur(a)


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


# ---- special matrices (JAX's constructions; batched over leading axes
# where JAX's are) ----


def _bnp() -> Any:
    import baton.numpy as bnp

    return bnp


def _inexact(x: Any) -> Any:
    """x as an array of an inexact type (integers and bools become the
    default float type), as JAX's promote_args_inexact."""
    bnp = _bnp()
    x = bnp.asarray(x)
    if not bnp.issubdtype(x.dtype, bnp.inexact):
        x = x.astype(bnp.result_type(x.dtype, float))
    return x


def block_diag(*arrs: Any) -> Any:
    """The block-diagonal matrix with ``arrs`` (each of at most 2
    dimensions; scalars and vectors are one row) on its diagonal, in their
    common dtype. No arguments: a (1, 0) float array."""
    bnp = _bnp()
    if len(arrs) == 0:
        arrs = (bnp.zeros((1, 0)),)
    arrs = tuple(bnp.asarray(a) for a in arrs)
    for i, a in enumerate(arrs):
        if a.ndim > 2:
            raise ValueError(
                "scipy.linalg.block_diag: arguments must have at most 2 "
                f"dimensions, got shape {a.shape} at argument {i}"
            )
    dt = bnp.result_type(*arrs)
    mats = [bnp.atleast_2d(a).astype(dt) for a in arrs]
    total = sum(m.shape[1] for m in mats)
    out, col = [], 0
    for m in mats:
        cols = m.shape[1]
        out.append(bnp.pad(m, ((0, 0), (col, total - cols - col))))
        col += cols
    return bnp.concatenate(out, axis=0)


def _check_arrays(what: str, *xs: Any) -> None:
    """Lists and tuples are refused, as JAX's check_arraylike does."""
    for x in xs:
        if isinstance(x, (list, tuple)):
            raise TypeError(
                f"scipy.linalg.{what}: expected arrays, got a {type(x).__name__} "
                "(convert it with baton.numpy.asarray)"
            )


def _toeplitz1(c: Any, r: Any) -> Any:
    bnp = _bnp()
    m, n = c.shape[0], r.shape[0]
    dt = bnp.result_type(c, r)
    if m == 0 or n == 0:
        return bnp.empty((m, n), dtype=dt)
    elems = bnp.concatenate((c[::-1].astype(dt), r[1:].astype(dt)))
    idx = (m - 1) - bnp.arange(m)[:, None] + bnp.arange(n)[None, :]
    return elems[idx]


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix with first column ``c`` and first row ``r``
    (``r[0]`` ignored; default ``conj(c)``), [..., len(c), len(r)]: batched
    over the leading axes of c and r."""
    _check_arrays("toeplitz", c, r)
    bnp = _bnp()
    c = bnp.asarray(c)
    r = bnp.conjugate(c) if r is None else bnp.asarray(r)
    c, r = bnp.atleast_1d(c), bnp.atleast_1d(r)
    return bnp.vectorize(_toeplitz1, signature="(m),(n)->(m,n)")(c, r)


def _hankel1(c: Any, r: Any) -> Any:
    bnp = _bnp()
    m, n = c.shape[0], r.shape[0]
    dt = bnp.result_type(c, r)
    if m == 0 or n == 0:
        return bnp.empty((m, n), dtype=dt)
    v = bnp.concatenate((c.astype(dt), r[1:].astype(dt)))
    return v[bnp.arange(m)[:, None] + bnp.arange(n)[None, :]]


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix with first column ``c`` and last row ``r``
    (``r[0]`` ignored; default zeros), [..., len(c), len(r)]: batched over
    leading axes."""
    _check_arrays("hankel", c, r)
    bnp = _bnp()
    c = bnp.asarray(c)
    r = bnp.zeros_like(c) if r is None else bnp.asarray(r)
    if c.ndim == 0:
        raise ValueError(
            "scipy.linalg.hankel: c must be at least 1-dimensional, got a scalar"
        )
    if r.ndim == 0:
        raise ValueError(
            "scipy.linalg.hankel: r must be at least 1-dimensional, got a scalar"
        )
    return bnp.vectorize(_hankel1, signature="(m),(n)->(m,n)")(c, r)


def _circulant1(c: Any) -> Any:
    bnp = _bnp()
    n = c.shape[0]
    return c[(bnp.arange(n)[:, None] - bnp.arange(n)[None, :]) % n]


def circulant(c: Any) -> Any:
    """The circulant matrix with first column ``c``: out[i, j] =
    c[(i - j) % n], batched over leading axes."""
    _check_arrays("circulant", c)
    bnp = _bnp()
    c = bnp.atleast_1d(bnp.asarray(c))
    return bnp.vectorize(_circulant1, signature="(n)->(n,n)")(c)


def _leslie1(f: Any, s: Any) -> Any:
    bnp = _bnp()
    dt = bnp.result_type(f, s)
    return bnp.diag(s.astype(dt), k=-1).at[0].set(f.astype(dt))


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix: fecundities ``f`` [..., n] (n >= 2) in the first
    row, survival rates ``s`` [..., n - 1] below the diagonal."""
    _check_arrays("leslie", f, s)
    bnp = _bnp()
    f, s = bnp.atleast_1d(bnp.asarray(f)), bnp.atleast_1d(bnp.asarray(s))
    if f.shape[-1] < 2:
        raise ValueError(
            "scipy.linalg.leslie: the length of f along the last axis must be "
            f"at least 2; got shape {f.shape}"
        )
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError(
            "scipy.linalg.leslie: the length of s along the last axis must be one "
            f"less than that of f; got f shape {f.shape} and s shape {s.shape}"
        )
    return bnp.vectorize(_leslie1, signature="(n),(m)->(n,n)")(f, s)


def _companion1(a: Any) -> Any:
    bnp = _bnp()
    first = -a[1:] / a[0]
    m = a.shape[0] - 1
    return bnp.eye(m, m, k=-1, dtype=first.dtype).at[0].set(first)


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients ``a``
    [..., n] (n >= 2, highest degree first): first row ``-a[1:] / a[0]``,
    ones below the diagonal. Integers become the default float type."""
    _check_arrays("companion", a)
    a = _bnp().atleast_1d(_inexact(a))
    if a.shape[-1] < 2:
        raise ValueError(
            "scipy.linalg.companion: the length of a along the last axis must "
            f"be at least 2; got shape {a.shape}"
        )
    return _bnp().vectorize(_companion1, signature="(n)->(m,m)")(a)


def fiedler(a: Any) -> Any:
    """The symmetric Fiedler matrix ``|a[i] - a[j]|`` of ``a`` [..., n]."""
    _check_arrays("fiedler", a)
    bnp = _bnp()
    a = bnp.atleast_1d(bnp.asarray(a))
    return bnp.abs(a[..., None] - a[..., None, :])


def _fiedler_companion1(a: Any) -> Any:
    bnp = _bnp()
    n = a.shape[0] - 1
    if n == 0:
        return bnp.empty((0, 0), dtype=a.dtype)
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    i = bnp.arange(n)[:, None]
    j = bnp.arange(n)[None, :]
    super_val = -a[bnp.minimum(i + 2, n)]
    sub_val = -a[bnp.minimum(i + 1, n)]
    even, odd = i % 2 == 0, i % 2 == 1
    one = bnp.array(1, dtype=a.dtype)
    zero = bnp.array(0, dtype=a.dtype)
    conditions = [
        (i == 0) & (j == 0),
        (i == 1) & (j == 0),
        (j == i + 1) & even,
        (j == i + 2) & even,
        (j == i - 1) & even & (i >= 2),
        (j == i - 2) & odd & (i >= 3),
    ]
    choices = [
        bnp.broadcast_to(-a[1], (n, n)),
        bnp.broadcast_to(one, (n, n)),
        bnp.broadcast_to(super_val, (n, n)),
        bnp.broadcast_to(one, (n, n)),
        bnp.broadcast_to(sub_val, (n, n)),
        bnp.broadcast_to(one, (n, n)),
    ]
    return bnp.select(conditions, choices, default=zero)


def fiedler_companion(a: Any) -> Any:
    """The Fiedler companion matrix (pentadiagonal, the same eigenvalues as
    :func:`companion`) of the coefficients ``a`` [..., n], n >= 1."""
    _check_arrays("fiedler_companion", a)
    a = _bnp().atleast_1d(_inexact(a))
    if a.shape[-1] == 0:
        raise ValueError(
            "scipy.linalg.fiedler_companion: the last axis of a must have "
            f"nonzero length; got shape {a.shape}"
        )
    return _bnp().vectorize(_fiedler_companion1, signature="(n)->(m,m)")(a)


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The Toeplitz matrix A with ``A @ v == convolve(a, v, mode)`` for v of
    length ``n``; mode "full", "valid" or "same". Batched over a's leading
    axes."""
    import operator

    bnp = _bnp()
    n = operator.index(n)
    if n <= 0:
        raise ValueError(
            f"scipy.linalg.convolution_matrix: n must be a positive integer; got {n}"
        )
    _check_arrays("convolution_matrix", a)
    a = bnp.asarray(a)
    if a.ndim == 0:
        raise ValueError(
            "scipy.linalg.convolution_matrix: a must be at least 1-dimensional, "
            "got a scalar"
        )
    m = a.shape[-1]
    if m < 1:
        raise ValueError(
            "scipy.linalg.convolution_matrix: len(a) must be at least 1; got "
            f"shape {a.shape}"
        )
    if mode not in ("full", "valid", "same"):
        raise ValueError(
            "scipy.linalg.convolution_matrix: mode must be one of 'full', "
            f"'valid', 'same'; got {mode!r}"
        )
    widths = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    az = bnp.pad(a, widths)
    raz = bnp.pad(bnp.flip(a, axis=-1), widths)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb, te = trim // 2, trim - trim // 2
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    col0 = az[..., tb : length - te]
    row0 = raz[..., length - n - tb : length - tb]
    return toeplitz(col0, row0)


def _count(n: Any, what: str) -> int:
    import operator

    try:
        return operator.index(n)
    except TypeError:
        raise TypeError(
            f"scipy.linalg.{what}: n must be an integer, got {n!r}"
        ) from None


def hilbert(n: int) -> Any:
    """The n x n Hilbert matrix 1 / (i + j + 1), in the default float
    type."""
    bnp = _bnp()
    n = _count(n, "hilbert")
    a = bnp.arange(n, dtype=float)[:, None]
    return 1 / (a + a.T + 1)


def invhilbert(n: int) -> Any:
    """The inverse of :func:`hilbert` (n), from its closed form in binomial
    coefficients (float: exact only while they fit the float type)."""
    from baton.scipy.special import comb

    bnp = _bnp()
    n = _count(n, "invhilbert")
    a = bnp.arange(n, dtype=float)
    i, j = a[:, None], a[None, :]
    s = i + j
    return (
        (-1.0) ** s
        * (s + 1.0)
        * comb(n + i, n - j - 1)
        * comb(n + j, n - i - 1)
        * comb(s, i) ** 2
    )


def _binom(n: Any, k: Any) -> Any:
    from baton.scipy.special import gammaln

    bnp = _bnp()
    return bnp.exp(gammaln(n + 1.0) - gammaln(n - k + 1.0) - gammaln(k + 1.0))


_PASCAL_KINDS = ("symmetric", "lower", "upper")


def _pascal_kind(kind: Any, what: str) -> str:
    kind = "symmetric" if kind is None else kind
    if kind not in _PASCAL_KINDS:
        raise ValueError(
            f"scipy.linalg.{what}: kind must be one of {list(_PASCAL_KINDS)}; "
            f"got {kind!r}"
        )
    return kind


def pascal(n: int, kind: str | None = None) -> Any:
    """The n x n Pascal matrix (binomial coefficients): kind "symmetric"
    (default), "lower" or "upper"; float32, as JAX."""
    bnp = _bnp()
    kind = _pascal_kind(kind, "pascal")
    a = bnp.arange(_count(n, "pascal"), dtype=bnp.float32)
    low = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return low
    if kind == "upper":
        return low.T
    return bnp.dot(low, low.T)


def invpascal(n: int, kind: str | None = None) -> Any:
    """The inverse of :func:`pascal` (n, kind), in the default float
    type."""
    bnp = _bnp()
    kind = _pascal_kind(kind, "invpascal")
    a = bnp.arange(_count(n, "invpascal"), dtype=float)
    i, j = a[:, None], a[None, :]
    low = ((-1.0) ** (i - j)) * _binom(i, j)
    if kind == "lower":
        return low
    if kind == "upper":
        return low.T
    return bnp.dot(low.T, low)


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix: (n - 1) x n orthonormal rows orthogonal to the
    ones vector; ``full`` adds the row 1 / sqrt(n) first (n x n)."""
    bnp = _bnp()
    n = _count(n, "helmert")
    if n < 1:
        raise ValueError(f"scipy.linalg.helmert: n must be a positive integer; got {n}")
    i = bnp.arange(n - 1)[:, None]
    j = bnp.arange(n)[None, :]
    k = (i + 1).astype(float)
    denom = bnp.sqrt(k * (k + 1))
    h = bnp.where(
        j <= i, 1.0 / denom, bnp.where(j == i + 1, -k / denom, bnp.zeros_like(denom))
    )
    if full:
        first = bnp.full(
            (1, n), 1.0 / bnp.sqrt(bnp.asarray(n, dtype=h.dtype)), dtype=h.dtype
        )
        h = bnp.concatenate([first, h], axis=0)
    return h


def hadamard(n: int, dtype: Any = int) -> Any:
    """The n x n Hadamard matrix (Sylvester's construction; n a power of 2)
    of ``dtype``."""
    import math

    bnp = _bnp()
    n = _count(n, "hadamard")
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(
            f"scipy.linalg.hadamard: n must be a positive power of 2; got {n}"
        )
    h = bnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = bnp.block([[h, h], [h, -h]])
    return h


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The n x n discrete Fourier transform matrix exp(-2 pi i j k / n),
    divided by sqrt(n) (``scale="sqrtn"``) or n (``"n"``); complex64 (or
    ``dtype``, complex)."""
    import numpy as np

    bnp = _bnp()
    n = _count(n, "dft")
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(
            f"scipy.linalg.dft: scale must be None, 'sqrtn', or 'n'; got {scale!r}"
        )
    if dtype is None:
        dtype = bnp.result_type(complex)
    elif not bnp.issubdtype(dtype, bnp.complexfloating):
        raise ValueError(
            "scipy.linalg.dft: dtype must be a complex floating-point type; "
            f"got {dtype}"
        )
    a = bnp.arange(n, dtype=dtype)
    w = bnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        w = w / bnp.sqrt(bnp.asarray(n, dtype=dtype))
    elif scale == "n":
        w = w / n
    return w


# ---- matrix functions ----

# Pade numerator coefficients b_0..b_m of exp (Higham 2005, table 2.3).
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (
        17643225600.0,
        8821612800.0,
        2075673600.0,
        302702400.0,
        30270240.0,
        2162160.0,
        110880.0,
        3960.0,
        90.0,
        1.0,
    ),
    13: (
        64764752532480000.0,
        32382376266240000.0,
        7771770303897600.0,
        1187353796428800.0,
        129060195264000.0,
        10559470521600.0,
        670442572800.0,
        33522128640.0,
        1323241920.0,
        40840800.0,
        960960.0,
        16380.0,
        182.0,
        1.0,
    ),
}

# Per float type: the largest 1-norm the scaled matrix may keep (theta_13 or
# theta_7), the 1-norm bounds that pick the lowest Pade order that is exact
# to the type's rounding, and those orders (as JAX's expm).
_EXPM_CONSTANTS = {
    "float64": (
        5.371920351148152,
        (
            1.495585217958292e-2,
            2.539398330063230e-1,
            9.504178996162932e-1,
            2.097847961257068,
        ),
        (3, 5, 7, 9, 13),
    ),
    "float32": (
        3.925724783138660,
        (4.258730016922831e-1, 1.880152677804762),
        (3, 5, 7),
    ),
}


def _pade(order: int) -> Any:
    """(U, V) of the [order/order] Pade approximant of exp at A: exp(A) ~
    (V - U)^-1 (V + U), U the odd part, V the even part."""
    b = _PADE[order]

    def uv(a: Any) -> tuple:
        bnp = _bnp()
        ident = bnp.eye(a.shape[0], dtype=a.dtype)
        a2 = a @ a
        if order == 13:
            a4 = a2 @ a2
            a6 = a4 @ a2
            u = a @ (
                a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
                + b[7] * a6
                + b[5] * a4
                + b[3] * a2
                + b[1] * ident
            )
            v = (
                a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2)
                + b[6] * a6
                + b[4] * a4
                + b[2] * a2
                + b[0] * ident
            )
            return u, v
        # A^0, A^2, A^4 = A^2 A^2, A^6 = A^4 A^2, A^8 = A^6 A^2 (JAX's
        # products, so the roundings agree).
        powers = [ident, a2]
        while len(powers) <= order // 2:
            powers.append(powers[-1] @ a2)
        odd = sum(b[2 * k + 1] * powers[k] for k in range(1, order // 2 + 1))
        u = a @ (odd + b[1] * ident)
        even = sum(b[2 * k] * powers[k] for k in range(1, order // 2 + 1))
        v = even + b[0] * ident
        return u, v

    return uv


def _expm2(a: Any, *, upper_triangular: bool, max_squarings: int) -> Any:
    from baton import lax as blax

    bnp = _bnp()
    maxnorm, conds, orders = _EXPM_CONSTANTS[str(a.dtype)]
    norm1 = bnp.linalg.norm(a, 1)
    n_sq = bnp.maximum(0, bnp.floor(bnp.log2(norm1 / maxnorm)))
    a = a / 2 ** n_sq.astype(a.dtype)
    idx = bnp.digitize(norm1, bnp.array(conds, dtype=norm1.dtype))
    u, v = blax.switch(idx, [_pade(o) for o in orders], a)
    p, q = u + v, -u + v

    def nan(args: tuple) -> Any:
        return bnp.full_like(args[0], float("nan"))

    def compute(args: tuple) -> Any:
        _, p, q = args
        r = solve_triangular(q, p) if upper_triangular else _np_linalg.solve(q, p)

        def step(c: Any, i: Any) -> tuple:
            return blax.cond(i < n_sq, lambda x: x @ x, lambda x: x, c), None

        r, _ = blax.scan(step, r, bnp.arange(max_squarings, dtype=n_sq.dtype))
        return r

    return blax.cond(n_sq > max_squarings, nan, compute, (a, p, q))


def expm(a: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """The matrix exponential of a [..., n, n], as JAX computes it: scaling
    by 2^-s so the 1-norm is small, the lowest Pade approximant exact to the
    float type's rounding (orders 3/5/7 in float32, 3/5/7/9/13 in float64),
    then s squarings; NaN where s would exceed ``max_squarings``.
    ``upper_triangular``: a is upper triangular (a triangular solve).
    Integers become the default float type; float32 and float64 (16-bit
    floats and complex are refused: no complex LAPACK)."""
    bnp = _bnp()
    a = _inexact(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            "scipy.linalg.expm: expected a (batched) square matrix, got shape "
            f"{a.shape}"
        )
    if str(a.dtype) not in _EXPM_CONSTANTS:
        raise TypeError(
            f"scipy.linalg.expm: a.dtype={a.dtype} is not supported (float32 "
            "and float64; complex would need complex LAPACK)"
        )
    f = functools.partial(
        _expm2, upper_triangular=upper_triangular, max_squarings=max_squarings
    )
    if a.ndim > 2:
        return bnp.vectorize(f, signature="(n,n)->(n,n)")(a)
    return f(a)


def _polar2(a: Any, *, side: str) -> tuple:
    u, s, vh = _np_linalg.svd(a, full_matrices=False)
    unitary = u @ vh
    if side == "right":
        posdef = (vh.T * s[None, :]) @ vh
    else:
        posdef = (u * s[None, :]) @ u.T
    return unitary, posdef


def polar(
    a: Any,
    side: str = "right",
    *,
    method: str = "qdwh",
    eps: float | None = None,
    max_iterations: int | None = None,
) -> tuple:
    """The polar decomposition of a [..., m, n]: (u, p) with a = u p
    (``side="right"``, p n x n) or a = p u (``"left"``, p m x m), u with
    orthonormal columns (rows if n > m), p positive semidefinite.

    Computed from baton's SVD (u = U V^H, p = V S V^H or U S U^H) for both
    ``method="svd"`` and ``"qdwh"`` (JAX's QR-based Halley iteration, which
    converges to the same factors: the decomposition is unique for a of
    full rank); ``eps`` and ``max_iterations`` (qdwh's) are accepted and
    unused, and baton does not refuse the shapes JAX's qdwh does."""
    del eps, max_iterations
    bnp = _bnp()
    a = _inexact(a)
    if a.ndim < 2:
        raise ValueError("scipy.linalg.polar: the input a must be at least a 2-D array")
    if side not in ("right", "left"):
        raise ValueError("scipy.linalg.polar: side must be either 'right' or 'left'")
    if method not in ("qdwh", "svd"):
        raise ValueError(
            f"scipy.linalg.polar: unknown polar decomposition method {method!r}"
        )
    sig = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return bnp.vectorize(functools.partial(_polar2, side=side), signature=sig)(a)


def expm_frechet(
    a: Any, e: Any, *, method: str | None = None, compute_expm: bool = True
) -> Any:
    """The Frechet derivative of :func:`expm` at a [..., n, n] in the
    direction e (a's shape): (expm(a), L(a, e)), or L(a, e) without
    ``compute_expm``. As JAX: the forward derivative (``bt.jvp``) of expm;
    ``method`` is accepted and unused."""
    from baton._autodiff import jvp

    del method
    bnp = _bnp()
    a, e = _inexact(a), _inexact(e)
    for name, x in (("a", a), ("e", e)):
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            raise ValueError(
                f"scipy.linalg.expm_frechet: expected {name} to be a (batched) "
                f"square matrix, got shape {x.shape}"
            )
    if a.shape != e.shape:
        raise ValueError(
            "scipy.linalg.expm_frechet: expected a and e of the same shape, got "
            f"{a.shape} and {e.shape}"
        )
    e = e.astype(bnp.result_type(a, e))
    a = a.astype(e.dtype)
    value, deriv = jvp(expm, (a,), (e,))
    return (value, deriv) if compute_expm else deriv


def qr_multiply(
    a: Any,
    c: Any,
    mode: str = "right",
    pivoting: bool = False,
    conjugate: bool = False,
    overwrite_a: bool = False,
    overwrite_c: bool = False,
) -> tuple:
    """(Q c or c Q, r) for the QR factorization of a [..., m, n], k =
    min(m, n): mode "left": Q @ c (c [..., k, p] or [k], padded with zero
    rows to Q's m columns); "right": (c @ Q)[..., :k] (c [..., p, m] or
    [m]); r is [..., k, n]. Batched (broadcast batch axes). Real
    arrays: ``conjugate`` (conj(Q)) changes nothing. Pivoting is not
    supported (baton has no pivoted QR op)."""
    del overwrite_a, overwrite_c, conjugate
    bnp = _bnp()
    if pivoting:
        raise NotImplementedError("scipy.linalg.qr_multiply: pivoting is not supported")
    if mode not in ("right", "left"):
        raise ValueError(
            f"scipy.linalg.qr_multiply: mode must be 'right' or 'left', got {mode!r}"
        )
    a, c = _inexact(a), _inexact(c)
    dt = bnp.result_type(a, c)
    a, c = a.astype(dt), c.astype(dt)
    if a.ndim < 2:
        raise ValueError(
            f"scipy.linalg.qr_multiply: a must be a matrix, got shape {a.shape}"
        )
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(
            "scipy.linalg.qr_multiply: shapes are not compatible for Q @ c: a has "
            f"shape {tuple(a.shape)} so Q has {k} columns, but c has "
            f"{c.shape[-2]} rows (expected {k})"
        )
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(
            "scipy.linalg.qr_multiply: shapes are not compatible for c @ Q: a has "
            f"shape {tuple(a.shape)} so Q has {m} rows, but c has "
            f"{c.shape[-1]} columns (expected {m})"
        )
    batch = bnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = bnp.broadcast_to(a, batch + a.shape[-2:])
    c = bnp.broadcast_to(c, batch + c.shape[-2:])
    q, r = qr(a)
    if mode == "left":
        if m > n:
            pad = [(0, 0)] * (c.ndim - 2) + [(0, m - k), (0, 0)]
            c = bnp.pad(c, pad)
        out = q @ c
    else:
        out = (c @ q)[..., :k]
    if onedim:
        out = out.ravel()
    return out, bnp.triu(r[..., :k, :])


def _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, x):
    """For each shift in x: how many eigenvalues of the tridiagonal matrix
    (diagonal alpha, squared off-diagonal beta_sq) lie below it (the
    negative pivots of the LDL^T factorization of T - x, kept away from
    zero by pivmin), as LAPACK's and JAX's bisection count them."""
    from baton import lax as blax

    bnp = _bnp()
    q = alpha[0] - x
    count = bnp.where(q < 0, 1, 0).astype(bnp.int32)
    q = bnp.where(alpha[0] == x, alpha0_perturbation, q)

    def step(i, qc):
        q, count = qc
        q = alpha[i] - beta_sq[i - 1] / q - x
        below = q <= pivmin
        count = bnp.where(below, count + 1, count)
        q = bnp.where(below, bnp.minimum(q, -pivmin), q)
        return q, count

    _, count = blax.fori_loop(1, alpha.shape[0], step, (q, count))
    return count


def eigh_tridiagonal(
    d: Any,
    e: Any,
    *,
    eigvals_only: bool = False,
    select: str = "a",
    select_range: tuple | None = None,
    tol: float | None = None,
    key: Any = None,
) -> Any:
    """The eigenvalues (ascending) of the symmetric (Hermitian) tridiagonal
    matrix with diagonal d [n] and off-diagonal e [n - 1], and unless
    ``eigvals_only`` its eigenvectors (columns).

    Eigenvalues: JAX's parallel bisection on Sturm counts (Gershgorin
    bounds, its pivot floor and tolerance ``max(tol, eps * |T|)``); all of
    them (``select="a"``) or those of indices select_range[0] ..
    select_range[1] (``"i"``; ``"v"`` is not implemented, as in JAX).
    Eigenvectors (real d and e only): from baton's eigh of the dense
    matrix (JAX runs inverse iteration from random vectors drawn with
    ``key``: the same vectors up to sign for distinct eigenvalues); ``key``
    is accepted and unused."""
    import numpy as np

    from baton import lax as blax

    del key
    bnp = _bnp()
    alpha, beta = bnp.asarray(d), bnp.asarray(e)
    if alpha.dtype != beta.dtype:
        raise TypeError(
            "scipy.linalg.eigh_tridiagonal: diagonal and off-diagonal values must "
            f"have the same dtype, got {alpha.dtype} and {beta.dtype}"
        )
    if str(alpha.dtype) not in ("float32", "float64", "complex64", "complex128"):
        raise TypeError(
            "scipy.linalg.eigh_tridiagonal: only float32, float64, complex64 and "
            f"complex128 inputs are supported, got {alpha.dtype}"
        )
    if alpha.ndim != 1 or beta.ndim != 1:
        raise ValueError(
            "scipy.linalg.eigh_tridiagonal: d and e must be vectors, got shapes "
            f"{alpha.shape} and {beta.shape}"
        )
    cplx = bnp.issubdtype(alpha.dtype, bnp.complexfloating)
    if cplx and not eigvals_only:
        raise NotImplementedError(
            "scipy.linalg.eigh_tridiagonal: eigenvectors of a complex matrix need "
            "complex LAPACK, which baton does not have; use eigvals_only=True"
        )
    n = alpha.shape[0]
    if n <= 1:
        w = bnp.real(alpha)
        return w if eigvals_only else (w, bnp.eye(n, dtype=alpha.dtype))
    if beta.shape[0] != n - 1:
        raise ValueError(
            "scipy.linalg.eigh_tridiagonal: e must have one element fewer than d, "
            f"got shapes {alpha.shape} and {beta.shape}"
        )
    if cplx:
        alpha = bnp.real(alpha)
        beta_sq = bnp.real(beta * bnp.conj(beta))
        beta_abs = bnp.sqrt(beta_sq)
    else:
        beta_abs = bnp.abs(beta)
        beta_sq = bnp.square(beta)

    if select == "a":
        targets = bnp.arange(n, dtype=bnp.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError(
                "scipy.linalg.eigh_tridiagonal: for select='i', select_range must "
                "be specified"
            )
        if select_range[0] > select_range[1]:
            raise ValueError(
                "scipy.linalg.eigh_tridiagonal: empty index range in select_range"
            )
        targets = bnp.arange(select_range[0], select_range[1] + 1, dtype=bnp.int32)
    elif select == "v":
        raise NotImplementedError(
            "scipy.linalg.eigh_tridiagonal: select='v' is not implemented (its "
            "output size depends on the values; JAX does not have it either)"
        )
    else:
        raise ValueError(
            "scipy.linalg.eigh_tridiagonal: select must be one of 'a', 'i', 'v', "
            f"got {select!r}"
        )

    # Gershgorin bounds of the spectrum.
    row_sums = bnp.concatenate(
        [beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]], axis=0
    )
    est_max = bnp.max(alpha + row_sums)
    est_min = bnp.min(alpha - row_sums)
    t_norm = bnp.maximum(bnp.abs(est_min), bnp.abs(est_max))

    finfo = np.finfo(np.dtype(str(alpha.dtype)))
    one = np.ones([], dtype=finfo.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * bnp.maximum(1, bnp.max(beta_sq))
    alpha0_perturbation = bnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = bnp.maximum(tol, abs_tol)
    max_it = finfo.nmant + 1  # bits of the mantissa, plus one

    fudge = 2.1  # the starting interval: Gershgorin's, a little wider
    slack = bnp.asarray(n, alpha.dtype) * fudge * finfo.eps * t_norm
    shape = targets.shape
    lower = bnp.broadcast_to(est_min - slack - 2 * fudge * pivmin, shape)
    upper = bnp.broadcast_to(est_max + slack + fudge * pivmin, shape)
    mid = 0.5 * (upper + lower)
    pivmin = bnp.broadcast_to(pivmin, shape)
    alpha0_perturbation = bnp.broadcast_to(alpha0_perturbation, shape)

    def cond(state):
        i, lower, _, upper = state
        return bnp.logical_and(i < max_it, abs_tol < bnp.max(upper - lower))

    def body(state):
        i, lower, mid, upper = state
        counts = _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = bnp.where(counts <= targets, mid, lower)
        upper = bnp.where(counts > targets, mid, upper)
        return i + 1, lower, 0.5 * (lower + upper), upper

    _, _, mid, _ = blax.while_loop(cond, body, (0, lower, mid, upper))
    if eigvals_only:
        return mid
    t = bnp.diag(alpha) + bnp.diag(beta, 1) + bnp.diag(beta, -1)
    _, v = _np_linalg.eigh(t)
    return mid, v[:, targets]


def _hessenberg2(a: Any, *, calc_q: bool) -> Any:
    """LAPACK's gehd2: for each column k, the Householder reflector H_k =
    I - tau u u^T (u[k + 1] = 1, dlarfg's sign convention) that zeros
    a[k + 2:, k], applied on both sides; q = H_0 H_1 ... ."""
    bnp = _bnp()
    n = a.shape[-1]
    q = bnp.eye(n, dtype=a.dtype)
    for k in range(n - 2):
        alpha = a[k + 1, k]
        x = a[k + 2 :, k]
        xnorm = bnp.sqrt(bnp.sum(x * x))
        nonzero = xnorm != 0
        beta = -bnp.copysign(bnp.hypot(alpha, xnorm), alpha)
        safe = bnp.where(nonzero, alpha - beta, 1)
        tau = bnp.where(nonzero, (beta - alpha) / bnp.where(nonzero, beta, 1), 0)
        u = bnp.concatenate(
            [bnp.zeros(k + 1, dtype=a.dtype), bnp.ones(1, dtype=a.dtype), x / safe]
        )
        a = a - tau * bnp.outer(u, u @ a)
        a = a - tau * bnp.outer(a @ u, u)
        if calc_q:
            q = q - tau * bnp.outer(q @ u, u)
    h = bnp.triu(a, -1)
    return (h, q) if calc_q else h


def hessenberg(
    a: Any,
    *,
    calc_q: bool = False,
    overwrite_a: bool = False,
    check_finite: bool = True,
) -> Any:
    """The upper Hessenberg form h of a [..., n, n] (zeros below the first
    subdiagonal), and with ``calc_q`` the orthogonal q with a = q h q^T.
    LAPACK's Householder reduction (its reflectors and signs, so h and q
    are JAX's), composed from baton ops; real float32/float64 (integers
    become the default float type; complex needs complex LAPACK in JAX)."""
    del overwrite_a, check_finite
    bnp = _bnp()
    a = _inexact(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            "scipy.linalg.hessenberg: expected a (batched) square matrix, got "
            f"shape {a.shape}"
        )
    if bnp.issubdtype(a.dtype, bnp.complexfloating):
        raise TypeError(
            "scipy.linalg.hessenberg: complex matrices are not supported (float32 "
            "and float64)"
        )
    if a.shape[-1] == 0:
        z = bnp.zeros_like(a)
        return (z, z) if calc_q else z
    sig = "(n,n)->(n,n),(n,n)" if calc_q else "(n,n)->(n,n)"
    return bnp.vectorize(functools.partial(_hessenberg2, calc_q=calc_q), signature=sig)(
        a
    )
