"""Polynomials as coefficient vectors, highest power first (polyval,
polyadd, polysub, polymul, polyder, polyint) and 1-D convolve / correlate.

As in jax.numpy, convolve, correlate, polymul, polyder and polyint give
floats (integers -> float32); polyval, polyadd and polysub keep the
promoted dtype.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton._control_flow import fori_loop, scan
from baton.numpy import _operands as _c

__all__ = [
    "convolve",
    "correlate",
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
]

# Up to this many elements, the sliding windows are gathered into a matrix
# and contracted in one dot; beyond, a fori_loop over the shorter operand
# adds one shifted copy per step (O(n) memory).
_GATHER_LIMIT = 1 << 22


def _full_conv(long: Any, short: Any) -> Any:
    """full[i] = sum_k short[k] * long[i - k], for i in [0, L + S - 1)."""
    L, S = long.shape[0], short.shape[0]
    n = L + S - 1
    p = lax.pad(long, lax.full((), 0, long.dtype), [S - 1], [S - 1])
    if n * S <= _GATHER_LIMIT:
        i = lax.iota(np.int32, (n, S), 0)
        k = lax.iota(np.int32, (n, S), 1)
        windows = lax.gather(p, lax.add(i, lax.sub(S - 1, k)), 0)
        return lax.dot_general(windows, short, (((1,), (0,)), ((), ())))

    def body(k: Any, acc: Any) -> Any:
        seg = lax.dynamic_slice(p, [lax.sub(S - 1, k)], [n])
        return lax.add(acc, lax.mul(seg, lax.dynamic_slice(short, [k], [1])))

    return fori_loop(0, S, body, lax.full((n,), 0, long.dtype))


def _conv_impl(a: Any, v: Any, *, mode: str, flip: bool) -> Any:
    d = _c.inexact_dtype(a, v)
    w = _c.work_dtype(d)
    x, y = lax.astype(_ops.as_tracer(a), w), lax.astype(_ops.as_tracer(v), w)
    n, m = x.shape[0], y.shape[0]
    if flip:
        y = lax.gather(y, lax.sub(m - 1, lax.iota(np.int32, (m,), 0)), 0)
    long, short = (x, y) if n >= m else (y, x)
    full = _full_conv(long, short)
    L, S = max(n, m), min(n, m)
    if mode == "full":
        r = full
    elif mode == "valid":
        r = lax.slice(full, [S - 1], [L])
    else:
        off = S // 2 if (flip and n < m) else (S - 1) // 2
        r = lax.slice(full, [off], [off + L])
    return _c.down(r, d)


def _conv(name: str, a: Any, v: Any, mode: str, flip: bool) -> Any:
    if mode not in ("full", "same", "valid"):
        raise ValueError(
            f"{name}: mode must be 'full', 'same' or 'valid', not {mode!r}"
        )
    sa, sv = _ops.shape_of(a), _ops.shape_of(v)
    if len(sa) != 1 or len(sv) != 1:
        raise ValueError(
            f"{name}: a and v must be 1-D arrays, got shapes {sa} and {sv}"
        )
    if sa[0] == 0 or sv[0] == 0:
        raise ValueError(f"{name}: a and v must not be empty (shapes {sa} and {sv})")
    return _ops.apply(_conv_impl, (a, v), (("mode", mode), ("flip", flip)))


def convolve(
    a: Any,
    v: Any,
    mode: str = "full",
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The discrete linear convolution of two 1-D arrays; ``mode`` 'full'
    (length n + m - 1), 'same' (max(n, m), centred) or 'valid' (only full
    overlaps). Integers give float32.

    >>> bnp.convolve(bnp.array([1.0, 2.0, 3.0]), bnp.array([0.0, 1.0, 0.5]))
    Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    return _conv("convolve", a, v, mode, False)


def correlate(
    a: Any,
    v: Any,
    mode: str = "valid",
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The cross-correlation of two 1-D arrays, c[k] = sum_n a[n + k] * v[n]
    (numpy's modes and offsets; default 'valid').

    >>> bnp.correlate(bnp.array([1.0, 2.0, 3.0]), bnp.array([0.0, 1.0, 0.5]))   # [3.5]
    """
    return _conv("correlate", a, v, mode, True)


# ---- polynomials ----


def _coeffs(name: str, p: Any, what: str = "p") -> int:
    s = _ops.shape_of(p)
    if len(s) != 1:
        raise ValueError(
            f"{name}: {what} must be a 1-D array of coefficients, got shape {s}"
        )
    return s[0]


def _polyval_impl(p: Any, x: Any) -> Any:
    d = _ops.result_dtype(p, x)
    c = _ops.as_tracer(p, d)
    t = _ops.as_tracer(x, d)
    n = c.shape[0]
    shape = tuple(t.shape)
    if n == 0:
        return lax.full(shape, 0, d)
    y = (
        lax.broadcast_to(lax.slice(c, [0], [1]), shape)
        if shape
        else lax.reshape(lax.slice(c, [0], [1]), ())
    )
    if n <= 32:
        for i in range(1, n):
            y = lax.add(lax.mul(y, t), lax.reshape(lax.slice(c, [i], [i + 1]), ()))
        return y

    def step(acc: Any, ci: Any) -> Any:
        return lax.add(lax.mul(acc, t), ci), None

    return scan(step, y, lax.slice(c, [1], [n]))[0]


def polyval(p: Any, x: Any) -> Any:
    """The polynomial with coefficients ``p`` (highest power first) at x, by
    Horner's rule (unrolled up to 32 terms, else a ``lax.scan``).

    >>> bnp.polyval(bnp.array([1, 0, -1]), 3)   # 8
    """
    _coeffs("polyval", p)
    return _ops.apply(_polyval_impl, (p, x))


def _polyaddsub_impl(a1: Any, a2: Any, *, sub: bool) -> Any:
    a, b = _ops.promote(a1, a2)
    n, m = a.shape[0], b.shape[0]
    size = max(n, m)
    z = lax.full((), 0, a.dtype)
    a = lax.pad(a, z, [size - n], [0])
    b = lax.pad(b, z, [size - m], [0])
    return lax.sub(a, b) if sub else lax.add(a, b)


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials (the shorter padded with leading zeros).

    >>> bnp.polyadd(bnp.array([1, 2]), bnp.array([1, 2, 3]))   # [1, 3, 5]
    """
    _coeffs("polyadd", a1, "a1"), _coeffs("polyadd", a2, "a2")
    return _ops.apply(_polyaddsub_impl, (a1, a2), (("sub", False),))


def polysub(a1: Any, a2: Any) -> Any:
    """The difference a1 - a2 of two polynomials.

    >>> bnp.polysub(bnp.array([1, 2, 3]), bnp.array([1, 2]))   # [1, 1, 1]
    """
    _coeffs("polysub", a1, "a1"), _coeffs("polysub", a2, "a2")
    if _ops.result_dtype(a1, a2) == _c.BOOL:
        raise TypeError("polysub: not defined for bool coefficients")
    return _ops.apply(_polyaddsub_impl, (a1, a2), (("sub", True),))


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials (the convolution of their
    coefficients; floats). ``trim_leading_zeros`` drops leading zero
    coefficients first (this needs concrete values: not under ``bt.jit``).

    >>> bnp.polymul(bnp.array([1.0, 2.0]), bnp.array([1.0, 2.0, 3.0]))   # [1, 4, 7, 6]
    """
    _coeffs("polymul", a1, "a1"), _coeffs("polymul", a2, "a2")
    if trim_leading_zeros:
        ops = []
        for v in (a1, a2):
            h = _c.concrete(v, "polymul", "trim_leading_zeros")
            nz = np.flatnonzero(h)
            ops.append(v[int(nz[0]) :] if nz.size and nz[0] else v)
        a1, a2 = ops
    z1, z2 = _ops.shape_of(a1)[0], _ops.shape_of(a2)[0]
    if z1 == 0 or z2 == 0:
        from baton.numpy import _creation

        return _creation.zeros(
            (max(z1 + z2 - 1, 0),) if z1 and z2 else (0,), _c.inexact_dtype(a1, a2)
        )
    return _ops.apply(_conv_impl, (a1, a2), (("mode", "full"), ("flip", False)))


def _polyder_impl(p: Any, *, m: int) -> Any:
    d = _c.inexact_dtype(p)
    c = _ops.as_tracer(p, d)
    for _ in range(m):
        n = c.shape[0]
        if n <= 1:
            return lax.full((0,), 0, d)
        powers = lax.sub(float(n - 1), lax.iota(d, (n - 1,), 0))
        c = lax.mul(lax.slice(c, [0], [n - 1]), powers)
    return c


def polyder(p: Any, m: int = 1) -> Any:
    """The m-th derivative of polynomial p (floats).

    >>> bnp.polyder(bnp.array([1.0, 2.0, 3.0]))   # [2., 2.]
    """
    _coeffs("polyder", p)
    m = operator.index(m)
    if m < 0:
        raise ValueError(
            f"polyder: order of derivative m must be non-negative, got {m}"
        )
    return _ops.apply(_polyder_impl, (p,), (("m", m),))


def _polyint_impl(p: Any, k: Any, *, m: int) -> Any:
    d = _c.inexact_dtype(p, k)
    c = _ops.as_tracer(p, d)
    kk = _ops.as_tracer(k, d)
    kk = lax.broadcast_to(kk, (m,)) if not kk.shape else kk
    for j in range(m):
        n = c.shape[0]
        powers = lax.sub(float(n), lax.iota(d, (n,), 0))
        c = (
            lax.concatenate(
                [lax.true_divide(c, powers), lax.slice(kk, [j], [j + 1])], 0
            )
            if n
            else lax.slice(kk, [j], [j + 1])
        )
    return c


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The m-th antiderivative of polynomial p; ``k`` gives the integration
    constants (a scalar for all, or m values, the first for the first
    integration; default 0). Floats.

    >>> bnp.polyint(bnp.array([3.0, 2.0]), k=5.0)   # [1.5, 2., 5.]
    """
    _coeffs("polyint", p)
    m = operator.index(m)
    if m < 0:
        raise ValueError(f"polyint: order of integral m must be non-negative, got {m}")
    if m == 0:
        return _ops.apply(_polyder_impl, (p,), (("m", 0),))
    if k is None:
        k = 0.0
    ks = _ops.shape_of(k)
    if ks and ks != (m,):
        raise ValueError(
            f"polyint: k must be a scalar or have m = {m} values, got shape {ks}"
        )
    return _ops.apply(_polyint_impl, (p, k), (("m", m),), weak_ref=(0,))


# ---- poly, polydiv ----


def _poly_impl(r: Any) -> Any:
    t, d = _c.inexact(r)
    t = t[0]
    wd = np.dtype(t.dtype)
    if t.shape[0] == 0:
        return lax.full((), 1, d)  # no roots: the constant 1 (0-d, as numpy)
    c = lax.full((1,), 1, wd)
    for i in range(t.shape[0]):
        ri = lax.reshape(lax.slice(t, (i,), (i + 1,)), ())
        k = c.shape[0]
        shifted = lax.mul(lax.broadcast_to(ri, (k + 1,)), lax.pad(c, 0, [1], [0]))
        c = lax.sub(lax.pad(c, 0, [0], [1]), shifted)
    return _c.down(c, d)


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients (highest power first, leading 1) of the polynomial
    whose roots are the 1-D ``seq_of_zeros`` (floats)."""
    nd = _c.ndim_of(seq_of_zeros)
    if nd == 2:
        raise NotImplementedError(
            "poly: a 2-D input (a matrix's characteristic polynomial) needs "
            "complex eigenvalues, which baton does not have; pass the roots"
        )
    if nd != 1:
        raise ValueError(f"poly: `seq_of_zeros` must be 1-D, not {nd}-D")
    return _ops.apply(_poly_impl, (seq_of_zeros,))


def _polydiv_impl(u: Any, v: Any) -> Any:
    (a, b), d = _c.inexact(u, v)
    wd = np.dtype(a.dtype)
    m, n = a.shape[0], b.shape[0]
    lead = lax.reshape(lax.slice(b, (0,), (1,)), ())
    qs = []
    for k in range(max(m - n + 1, 0)):
        q = lax.true_divide(lax.reshape(lax.slice(a, (k,), (k + 1,)), ()), lead)
        qs.append(lax.reshape(q, (1,)))
        a = lax.sub(
            a, lax.mul(lax.broadcast_to(q, (m,)), lax.pad(b, 0, [k], [m - n - k]))
        )
    q = lax.concatenate(qs, 0) if qs else lax.full((1,), 0, wd)
    return _c.down(q, d), _c.down(a, d)


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """The quotient and remainder of polynomial division ``u / v`` (1-D
    coefficients, highest power first; floats). ``trim_leading_zeros`` drops
    the remainder's leading zeros (needs concrete values: not under jit)."""
    for nm, x in (("u", u), ("v", v)):
        if _c.ndim_of(x) != 1:
            raise ValueError(
                f"polydiv: `{nm}` must be 1-D coefficients, not {_c.ndim_of(x)}-D"
            )
    if _ops.shape_of(v)[0] == 0:
        raise ValueError("polydiv: `v` must have at least one coefficient")
    q, r = _ops.apply(_polydiv_impl, (u, v))
    if trim_leading_zeros:
        h = _c.concrete(r, "polydiv", "trim_leading_zeros")
        nz = np.flatnonzero(h)
        r = r[int(nz[0]) :] if nz.size else r[-1:]
    return q, r
