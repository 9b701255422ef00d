"""frexp and ldexp (exact, with exact powers of two: ``lax.pow(2.0, n)``
is exact for integral n, and scaling is split into steps that never
overflow or round twice), and gcd / lcm of integers (Euclid's algorithm in
a ``lax.while_loop``: it stops when every remainder is 0, after at most
about 1.44 * bits steps)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton._control_flow import while_loop
from baton.numpy import _elementwise as _ew
from baton.numpy import _operands as _c
from baton.numpy._dtypes import finfo as _finfo

__all__ = ["frexp", "gcd", "lcm", "ldexp"]

_LN2 = math.log(2.0)

# ---- exponents (exact powers of two: lax.pow(2.0, n) is exact for integral n) ----


def _pow2(n: Any, w: np.dtype) -> Any:
    """2.0 ** n for integral float n within the normal range of w."""
    return lax.pow(lax.full((), 2.0, w), n)


def _ldexp_impl(x1: Any, x2: Any) -> Any:
    (t,), d = _c.widened(x1)
    n = _ops.as_tracer(x2)
    w = np.dtype(t.dtype)
    info = _finfo(w)
    emax, emin, mant = int(info.maxexp) - 1, int(info.minexp), int(info.nmant) + 1
    big = 2 * (emax - emin + mant) + 2
    nf = lax.astype(
        lax.maximum(
            lax.minimum(n, lax.full((), big, n.dtype)), lax.full((), -big, n.dtype)
        ),
        w,
    )
    # Scaling in steps that each keep the value normal (or exact) avoids
    # both overflow of 2**n and double rounding into the subnormals.
    for _ in range(2):
        up = lax.gt(nf, emax)
        t = lax.select(up, lax.mul(t, _pow2(float(emax), w)), t)
        nf = lax.select(up, lax.sub(nf, float(emax)), nf)
        dn = lax.lt(nf, emin)
        step = float(emin + mant)
        t = lax.select(dn, lax.mul(t, _pow2(step, w)), t)
        nf = lax.select(dn, lax.sub(nf, step), nf)
    nf = lax.maximum(lax.minimum(nf, float(emax)), float(emin))
    return _c.down(lax.mul(t, _pow2(nf, w)), d)


def ldexp(x1: Any, x2: Any, /) -> Any:
    """x1 * 2**x2 for integer x2, exact (no intermediate overflow or double
    rounding); integer x1 gives float32.

    >>> bnp.ldexp(0.75, bnp.array([1, 2]))   # [1.5, 3.]
    """
    d2 = _ops.dtype_of(x2)
    if d2 is None:
        d2 = _ops.result_dtype(x2)
    if not _ops.is_int(d2) and d2 != _c.BOOL:
        raise TypeError(
            f"ldexp: the exponent x2 must be an integer array, not {d2.name}; "
            "round it and convert it with .astype(int) first"
        )
    return _ops.apply(_ldexp_impl, (x1, x2), weak_ref=(0,))


def _frexp_impl(x: Any) -> Any:
    (t,), d = _c.widened(x)
    w = np.dtype(t.dtype)
    info = _finfo(w)
    a = lax.abs(t)
    special = lax.bitwise_or(
        lax.eq(a, 0), lax.bitwise_or(lax.ne(a, a), lax.eq(a, float("inf")))
    )
    safe = lax.select(special, lax.full((), 1, w), a)
    e = lax.add(lax.floor(lax.true_divide(lax.log(safe), _LN2)), 1)
    emax = float(int(info.maxexp) - 1)

    def scaled(e: Any) -> Any:
        # safe * 2**-e in two exact steps (2**-e alone overflows for subnormals).
        h = lax.floor(lax.true_divide(lax.neg(e), 2.0))
        h = lax.minimum(h, emax)
        return lax.mul(lax.mul(safe, _pow2(h, w)), _pow2(lax.sub(lax.neg(e), h), w))

    for _ in range(2):  # the log's rounding is off by at most one
        m = scaled(e)
        e = lax.select(
            lax.ge(m, 1), lax.add(e, 1), lax.select(lax.lt(m, 0.5), lax.sub(e, 1), e)
        )
    m = scaled(e)
    m = lax.select(lax.lt(t, 0), lax.neg(m), m)
    m = lax.select(special, t, m)
    e = lax.select(special, lax.full((), 0, w), e)
    return _c.down(m, d), lax.astype(e, np.int32)


def frexp(x: Any, /) -> tuple[Any, Any]:
    """(mantissa, exponent) with x == mantissa * 2**exponent and
    0.5 <= |mantissa| < 1 (exact, subnormals included); exponent int32;
    0, inf and NaN give themselves and 0. Integers give a float32 mantissa.

    >>> bnp.frexp(bnp.array([8.0, 0.3]))   # ([0.5, 0.6], [4, -1])
    """
    return _ops.apply(_frexp_impl, (x,))


# ---- gcd / lcm (Euclid in a while_loop: at most ~1.5 * bits steps) ----


def _integer_operands(name: str, x1: Any, x2: Any) -> np.dtype:
    d = _ops.result_dtype(x1, x2)
    if not _ops.is_int(d):
        raise TypeError(
            f"{name}: the arguments must be integers, not {d.name}; convert them "
            "with .astype(int) first"
        )
    return d


def _abs_int(t: Any) -> Any:
    if np.dtype(t.dtype).kind == "u":
        return t
    return lax.select(lax.lt(t, 0), lax.neg(t), t)


def _gcd_impl(x1: Any, x2: Any) -> Any:
    a, b = _ops.promote(x1, x2)
    a, b = _abs_int(a), _abs_int(b)
    a, b = lax.broadcast_to(a, np.broadcast_shapes(tuple(a.shape), tuple(b.shape))), b
    b = lax.broadcast_to(b, tuple(a.shape))
    zero = lax.full((), 0, a.dtype)
    one = lax.full((), 1, a.dtype)

    def cond(c: Any) -> Any:
        return lax.max(lax.ne(c[1], 0)) if c[1].shape else lax.ne(c[1], 0)

    def body(c: Any) -> Any:
        x, y = c
        nz = lax.ne(y, 0)
        r = lax.mod(x, lax.select(nz, y, one))
        return lax.select(nz, y, x), lax.select(nz, r, zero)

    return while_loop(cond, body, (a, b))[0]


def _lcm_impl(x1: Any, x2: Any) -> Any:
    a, b = _ops.promote(x1, x2)
    g = _gcd_impl(a, b)
    zero = lax.eq(g, 0)
    one = lax.full((), 1, g.dtype)
    q = _ew._floor_divide(_abs_int(a), lax.select(zero, one, g))
    return lax.select(zero, lax.full((), 0, g.dtype), lax.mul(q, _abs_int(b)))


def gcd(x1: Any, x2: Any, /) -> Any:
    """Greatest common divisor of |x1| and |x2| (integers; gcd(0, 0) = 0).

    >>> bnp.gcd(bnp.array([12, 0]), 18)   # [6, 18]
    """
    _integer_operands("gcd", x1, x2)
    return _ops.apply(_gcd_impl, (x1, x2))


def lcm(x1: Any, x2: Any, /) -> Any:
    """Least common multiple of |x1| and |x2| (integers; 0 if either is 0).

    >>> bnp.lcm(bnp.array([4, 0]), 6)   # [12, 0]
    """
    _integer_operands("lcm", x1, x2)
    return _ops.apply(_lcm_impl, (x1, x2))
