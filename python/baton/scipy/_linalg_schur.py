"""jax.scipy.linalg's functions built on the complex Schur form: rsf2csf,
the complex Schur form itself (``schur(a, output="complex")``), sqrtm,
funm and solve_sylvester, composed from baton ops (complex elementwise
ops and matmuls) on the real Schur form of LAPACK's gees.

baton has no complex LAPACK, so the complex Schur form of a real matrix
is rsf2csf of its real Schur form (as funm's in JAX and SciPy); JAX's
``schur(a, output="complex")`` runs complex gees instead, an equally valid
but different form (the eigenvalues in another order on the diagonal, the
columns of z with other phases). sqrtm, funm and solve_sylvester are
functions of the matrix alone, so they agree with JAX's to rounding.

rsf2csf rotates each 2x2 block of the real form by the eigenvalue of the
block that JAX takes: the first one complex LAPACK's geev lists. For a
2x2 block geev's QR iteration deflates the Wilkinson shift (zlahqr's: the
eigenvalue nearer the lower diagonal entry, for a complex pair of a real
block the one with negative imaginary part) to the bottom, so the first
is the other one; ``_first_eigenvalue_gap`` computes it from the block's
entries with zlahqr's formula. A lower triangular block (b == 0) has its
eigenvalues swapped by geev's balancing: the first is then d.

The triangular recurrences (the square root's, Parlett's, the Sylvester
equation's) are JAX's, evaluated one superdiagonal (or anti-diagonal) at
a time: every entry of one depends only on earlier ones, so each step is
a few matmuls over the whole matrix and programs grow linearly with n.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from baton import _dtypes


def _bnp() -> Any:
    import baton.numpy as bnp

    return bnp


def _complex_of(d: Any) -> np.dtype:
    """The complex dtype whose parts hold d (JAX's to_complex_dtype after
    promote_dtypes_complex: integers and bool via the default float,
    16-bit floats to complex64)."""
    d = np.dtype(d)
    if d.kind == "c":
        return d
    if d == np.float64 or (d.kind in "biu" and _dtypes.x64_enabled()):
        return np.dtype(np.complex128)
    return np.dtype(np.complex64)


def _real_float(a: Any, what: str) -> Any:
    """a as float32/float64 for LAPACK's real gees: integers and bool in the
    default float type, 16-bit floats in float32; complex refused."""
    bnp = _bnp()
    a = bnp.asarray(a)
    if bnp.issubdtype(a.dtype, bnp.complexfloating):
        raise NotImplementedError(
            f"{what}: complex input is not supported: it needs the complex "
            "Schur form of a complex matrix (complex LAPACK), which baton does "
            "not have; real float32/float64 matrices are supported"
        )
    d = np.dtype(a.dtype)
    if d in (np.float32, np.float64):
        return a
    if d.kind in "biu":
        return a.astype(np.float64 if _dtypes.x64_enabled() else np.float32)
    return a.astype(np.float32)  # float16 / bfloat16


def _check_square(a: Any, what: str) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"{what}: expected a (batched) square matrix, got shape {a.shape}"
        )


# ---- rsf2csf ----


def _first_eigenvalue_gap(a: Any, b: Any, c: Any, d: Any) -> Any:
    """mu = w0 - d for the block [[a, b], [c, d]] (complex scalars), w0 the
    eigenvalue complex geev lists first: the one zlahqr's Wilkinson shift
    is not. The shift is d - b c / (x + y), x = (a - d) / 2,
    y = sqrt(x^2 + b c) with the sign that makes Re(conj(x) y) >= 0 (ties,
    as a real block's complex pair, keep Im(y) >= 0: the principal root of
    a negative number with a +0 imaginary part, which is what LAPACK
    gets); w0 = a + d - shift, so mu = 2 x + b c / (x + y). b == 0: geev's
    balancing lists d first, mu = 0."""
    bnp = _bnp()
    x = (a - d) / 2
    bc = b * c
    y = bnp.sqrt(x * x + bc)
    p = bnp.real(bnp.conj(x) * y)
    flip = (p < 0) | ((p == 0) & (bnp.imag(y) < 0))
    y = bnp.where(flip, -y, y)
    xy = x + y
    safe = bnp.where(xy == 0, 1, xy)
    mu = bnp.where(xy == 0, 2 * x, 2 * x + bc / safe)
    return bnp.where(b == 0, bnp.zeros_like(mu), mu)


def _rsf2csf2(t: Any, z: Any) -> tuple:
    """JAX's rsf2csf of one (n, n) pair (complex already): for m = n-1
    down to 1, a block whose subdiagonal entry is not negligible
    (|c| > eps (|a| + |d|)) is rotated by the Givens rotation
    G = [[conj(cs), s], [-s, cs]], (cs, s) = (mu, c) / |(mu, c)|, on rows
    m-1, m (columns m-1 on), columns m-1, m (rows up to m) and z's columns
    m-1, m; t[m, m-1] becomes 0."""
    bnp = _bnp()
    n = t.shape[-1]
    eps = float(np.finfo(np.dtype(t.dtype)).eps)
    for m in range(n - 1, 0, -1):
        a, b, c, d = t[m - 1, m - 1], t[m - 1, m], t[m, m - 1], t[m, m]
        rotate = bnp.abs(c) > eps * (bnp.abs(a) + bnp.abs(d))
        mu = _first_eigenvalue_gap(a, b, c, d)
        r = bnp.sqrt(bnp.abs(mu) ** 2 + bnp.abs(c) ** 2).astype(t.dtype)
        r = bnp.where(rotate, r, 1)
        cs, s = mu / r, c / r
        g = bnp.stack([bnp.stack([bnp.conj(cs), s]), bnp.stack([-s, cs])])
        gh = bnp.conj(g).T
        rows = g @ t[m - 1 : m + 1, m - 1 :]
        new = t.at[m - 1 : m + 1, m - 1 :].set(rows)
        cols = new[: m + 1, m - 1 : m + 1] @ gh
        new = new.at[: m + 1, m - 1 : m + 1].set(cols)
        zn = z.at[:, m - 1 : m + 1].set(z[:, m - 1 : m + 1] @ gh)
        t = bnp.where(rotate, new, t)
        z = bnp.where(rotate, zn, z)
        t = t.at[m, m - 1].set(0)
    return t, z


def rsf2csf(t: Any, z: Any, check_finite: bool = True) -> tuple:
    """The complex Schur form (t, z) (t upper triangular, z unitary,
    z t z^H unchanged) from a real Schur form t, z of [..., n, n] (batch
    dimensions broadcast), as JAX computes it: each 2x2 block rotated by
    the eigenvalue complex LAPACK's geev lists first (for a block of a
    real Schur form, the one with positive imaginary part). The result is
    complex64 (complex128 for float64 input). ``check_finite`` is unused.

    >>> t, z = bt.scipy.linalg.schur(bnp.array([[0., 2.], [-2., 0.]]))
    >>> tc, zc = bt.scipy.linalg.rsf2csf(t, z)
    >>> bnp.round(bnp.diag(tc).imag, 3)
    Array([ 2., -2.], dtype=float32)
    """
    del check_finite
    bnp = _bnp()
    t, z = bnp.asarray(t), bnp.asarray(z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(
            f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}"
        )
    dt = _complex_of(bnp.result_type(t.dtype, z.dtype))
    t, z = t.astype(dt), z.astype(dt)
    batch = np.broadcast_shapes(t.shape[:-2], z.shape[:-2])
    n = t.shape[-1]
    t = bnp.broadcast_to(t, (*batch, n, n))
    z = bnp.broadcast_to(z, (*batch, n, n))
    if n <= 1:
        return t, z
    if batch:
        return bnp.vectorize(_rsf2csf2, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)
    return _rsf2csf2(t, z)


def complex_schur(a: Any, what: str = "scipy.linalg.schur") -> tuple:
    """(t, z) with a = z t z^H, t upper triangular and z unitary, for a
    real [..., n, n]: rsf2csf of LAPACK's real Schur form (a's dtype
    checked and converted as ``_real_float``)."""
    from baton import lax_linalg

    bnp = _bnp()
    a = bnp.asarray(a)
    _check_square(a, what)
    a = _real_float(a, what)
    t, z = lax_linalg.schur(a)
    return rsf2csf(t, z)


# ---- sqrtm ----


def _sqrtm_triu(t: Any) -> Any:
    """The upper triangular square root u of the upper triangular t
    (Bjorck and Hammarling's recurrence, as JAX's: u_ii = sqrt(t_ii),
    u_ij = (t_ij - s) / (u_ii + u_jj) with s = sum_{i<k<j} u_ik u_kj, and
    0 where t_ij == s), one superdiagonal at a time."""
    bnp = _bnp()
    n = t.shape[-1]
    root = bnp.sqrt(bnp.diagonal(t))
    u = bnp.diag(root)
    for p in range(1, n):
        strict = bnp.triu(u, 1)
        s = bnp.diagonal(strict @ strict, offset=p)
        tij = bnp.diagonal(t, offset=p)
        val = bnp.where(tij == s, 0, (tij - s) / (root[: n - p] + root[p:]))
        u = u + bnp.diag(val, k=p)
    return u


def sqrtm(a: Any, blocksize: int = 1) -> Any:
    """The principal square root of the (n, n) matrix a (a = r @ r), as
    JAX's: complex Schur form, the upper triangular root of t (Bjorck and
    Hammarling), then z sqrt(t) z^H. Complex64 (complex128 for float64
    input); real input only (integers via the default float). An
    eigenvalue on the negative real axis has its root on the imaginary
    axis with a sign set by rounding (JAX's as well).

    >>> r = bt.scipy.linalg.sqrtm(bnp.array([[4., 1.], [0., 9.]]))
    >>> bnp.allclose(r @ r, bnp.array([[4., 1.], [0., 9.]]))
    Array(True, dtype=bool)
    """
    bnp = _bnp()
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    a = bnp.asarray(a)
    if a.ndim < 2:
        raise TypeError(
            f"scipy.linalg.sqrtm: input must have rank at least 2, got shape {a.shape}"
        )
    _check_square(a, "scipy.linalg.sqrtm")
    if a.ndim > 2:
        raise ValueError(
            "scipy.linalg.sqrtm: expected one (n, n) matrix (JAX's sqrtm is not "
            f"batched), got shape {a.shape}"
        )
    t, z = complex_schur(a, "scipy.linalg.sqrtm")
    return z @ _sqrtm_triu(t) @ bnp.conj(z).T


# ---- funm ----


def _parlett(f: Any, t: Any) -> tuple:
    """Golub and Van Loan's algorithm 11.1.1 (JAX's): f upper triangular
    with f(t_ii) on its diagonal; for each superdiagonal p,
    f_ij = (t_ij (f_jj - f_ii) + sum_{i<k<j} (t_ik f_kj - f_ik t_kj)) / den,
    den = t_jj - t_ii (not divided where den == 0). Also the least |den|
    (starting from |t_00|, as JAX)."""
    bnp = _bnp()
    n = t.shape[-1]
    diag_t = bnp.diagonal(t)
    diag_f = bnp.diagonal(f)
    minden = bnp.abs(t[0, 0])
    ts = bnp.triu(t, 1)
    for p in range(1, n):
        fs = bnp.triu(f, 1)
        val = bnp.diagonal(ts @ fs - fs @ ts, offset=p)
        s = bnp.diagonal(t, offset=p) * (diag_f[p:] - diag_f[: n - p]) + val
        den = diag_t[p:] - diag_t[: n - p]
        s = bnp.where(den != 0, s / bnp.where(den != 0, den, 1), s)
        f = f + bnp.diag(s, k=p)
        minden = bnp.minimum(minden, bnp.min(bnp.abs(den)))
    return f, minden


def funm(a: Any, func: Callable, disp: bool = True) -> Any:
    """func(a) for an (n, n) real matrix a, as JAX's: the complex Schur
    form (rsf2csf of the real one), func on its diagonal, Parlett's
    recurrence for the rest (Golub and Van Loan 11.1.1), then z f z^H.
    ``func`` maps a complex vector to one (``bnp.exp``, ``bnp.sin``, ...).
    The result is complex. ``disp=False``: (f, err) with JAX's error
    estimate, min(1, max(eps, eps / min|t_jj - t_ii| * ||triu(t, 1)||_1))
    (inf where f has an infinity).

    >>> a = bnp.array([[1., 2.], [3., 4.]])
    >>> bnp.allclose(bt.scipy.linalg.funm(a, bnp.exp),
    ...              bt.scipy.linalg.expm(a), rtol=1e-4)
    Array(True, dtype=bool)
    """
    bnp = _bnp()
    a = bnp.asarray(a)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    if not bnp.issubdtype(a.dtype, bnp.inexact):
        raise TypeError(
            f"scipy.linalg.funm: dtype {a.dtype} is not supported (schur, as "
            "JAX's, takes floating types)"
        )
    if np.dtype(a.dtype) not in (np.float32, np.float64) and not bnp.issubdtype(
        a.dtype, bnp.complexfloating
    ):
        raise NotImplementedError(
            f"scipy.linalg.funm: Unsupported dtype {a.dtype} (as JAX's schur: "
            "float32 and float64)"
        )
    t, z = complex_schur(a, "scipy.linalg.funm")
    f = bnp.diag(bnp.asarray(func(bnp.diagonal(t))).astype(t.dtype))
    f, minden = _parlett(f, t)
    f = z @ f @ bnp.conj(z).T
    if disp:
        return f
    tol = float(np.finfo(np.float32 if t.dtype == np.complex64 else np.float64).eps)
    rt = minden.dtype
    minden = bnp.where(minden == 0.0, bnp.asarray(tol, rt), minden)
    est = bnp.minimum(
        1, bnp.maximum(tol, (tol / minden) * bnp.linalg.norm(bnp.triu(t, 1), 1))
    ).astype(rt)
    err = bnp.where(bnp.any(bnp.isinf(f)), bnp.asarray(np.inf, rt), est)
    return f, err


# ---- solve_sylvester ----


def _sylvester2(a: Any, b: Any, c: Any, *, tol: float, real: bool) -> Any:
    """X with a X + X b = c (JAX's Bartels-Stewart): a = u r u^H,
    b^H = v s v^H (complex Schur forms), r y + y s^H = u^H c v solved for
    y from the bottom-right corner, x = u y v^H; NaNs where an eigenvalue
    of a plus one of b is within tol of 0."""
    bnp = _bnp()
    m, n = c.shape[-2:]
    r, u = complex_schur(a, "scipy.linalg.solve_sylvester")
    s, v = complex_schur(b.T, "scipy.linalg.solve_sylvester")
    sh = bnp.conj(s).T
    f = bnp.conj(u).T @ c.astype(r.dtype) @ v
    # y_ij = (f_ij - sum_{k>i} r_ik y_kj - sum_{k>j} y_ik sh_kj) /
    # (r_ii + sh_jj): every term lies on a later anti-diagonal i + j, so
    # the anti-diagonals are solved one at a time, last first.
    rs, ss = bnp.triu(r, 1), bnp.tril(sh, -1)
    den = bnp.diagonal(r)[:, None] + bnp.diagonal(sh)[None, :]
    anti = np.add.outer(np.arange(m), np.arange(n))
    y = bnp.zeros((m, n), r.dtype)
    for k in range(m + n - 2, -1, -1):
        val = (f - (rs @ y + y @ ss)) / den
        y = bnp.where(anti == k, val, y)
    x = u @ y @ bnp.conj(v).T
    if real:
        x = bnp.real(x)
    eig_sum = bnp.diagonal(r)[:, None] + bnp.diagonal(s)[None, :]
    singular = bnp.any(bnp.abs(eig_sum) < tol)
    return bnp.where(singular, bnp.full_like(x, np.nan), x)


def solve_sylvester(
    a: Any, b: Any, c: Any, *, method: str = "schur", tol: float = 1e-8
) -> Any:
    """X with a X + X b = c for a [..., m, m], b [..., n, n] and
    c [..., m, n] (batch dimensions broadcast), by JAX's Bartels-Stewart
    algorithm on the complex Schur forms of a and b^H; NaNs where an
    eigenvalue of a plus one of b is within ``tol`` of zero (JAX's test).
    a and b real (no complex LAPACK), c real or complex; the result has
    the promoted dtype of a, b, c. ``method="eigen"`` (JAX: eigenvectors)
    gives the same, unique, solution by the Schur method.

    >>> a = bnp.array([[1., 2.], [3., 4.]]); b = bnp.array([[5., 6.], [7., 8.]])
    >>> x = bt.scipy.linalg.solve_sylvester(a, b, bnp.array([[6., 8.], [10., 12.]]))
    >>> bnp.allclose(x, bnp.eye(2), atol=1e-5)
    Array(True, dtype=bool)
    """
    bnp = _bnp()
    a, b, c = bnp.asarray(a), bnp.asarray(b), bnp.asarray(c)
    dt = bnp.result_type(a.dtype, b.dtype, c.dtype)
    if not bnp.issubdtype(dt, bnp.inexact):
        dt = bnp.result_type(dt, float)
    m, n = c.shape[-2:] if c.ndim >= 2 else (None, None)
    if c.ndim < 2 or a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(
            "Incompatible shapes for Sylvester equation:\n"
            f"A: {a.shape}\nB: {b.shape}\nC: {c.shape}"
        )
    if method not in ("schur", "eigen"):
        raise ValueError(
            f"Unrecognized method {method}. The two valid methods are either "
            '"schur" or "eigen".'
        )
    for x in (a, b):
        if bnp.issubdtype(x.dtype, bnp.complexfloating):
            raise NotImplementedError(
                "scipy.linalg.solve_sylvester: complex a or b is not supported "
                "(their complex Schur forms need complex LAPACK); c may be complex"
            )
    real_dt = {"complex64": np.float32, "complex128": np.float64}.get(str(dt), dt)
    real_dt = np.dtype(real_dt)
    if real_dt not in (np.float32, np.float64):
        raise NotImplementedError(
            f"scipy.linalg.solve_sylvester: Unsupported dtype {dt} (as JAX's "
            "schur: float32 and float64)"
        )
    a, b, c = a.astype(real_dt), b.astype(real_dt), c.astype(dt)
    real = not bnp.issubdtype(dt, bnp.complexfloating)
    f = functools.partial(_sylvester2, tol=tol, real=real)
    if a.ndim > 2 or b.ndim > 2 or c.ndim > 2:
        return bnp.vectorize(f, signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)
    return f(a, b, c)
