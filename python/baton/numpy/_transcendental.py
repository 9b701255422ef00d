"""Transcendental elementwise functions of ``baton.numpy`` on baton's newer
lax primitives: log1p, expm1, tan, arctan / arctan2 (the primitives
themselves), the inverse trigonometric and hyperbolic functions, and cbrt.

On the primitives these have libm accuracy (sinh/cosh within a few ulps up
to overflow).

Promotion follows jax.numpy: functions producing floats give float32 for
integer and bool operands; float16/bfloat16 computations of several steps
run in float32 and round once. nextafter and spacing are not provided:
they need a bitcast primitive baton does not have.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from baton import _ops
from baton._baton import lax
from baton.numpy._elementwise import (
    _F32,
    _binary,
    _down,
    _float_operand,
    _unary,
)

_F64 = np.dtype(np.float64)
_LN2 = math.log(2.0)


def _export(fn: Callable[..., Any], *names: str) -> Callable[..., Any]:
    for n in names:
        globals()[n] = fn
        __all__.append(n)
    return fn


def _odd(t: Any, r: Any) -> Any:
    """f(x) from r = f(|x|) for an odd f: -r below 0, x itself at +-0 (so
    the sign of zero is kept and f'(0) = 1 comes out), NaN stays NaN."""
    return lax.select(lax.lt(t, 0), lax.neg(r), lax.select(lax.eq(t, 0), t, r))


def _eps(d: Any) -> float:
    return float(np.finfo(np.dtype(d)).eps)


__all__: list[str] = []


# ---- complex operands ----
# The inverse trigonometric and hyperbolic functions of complex z by their
# logarithmic forms, and sinh / cosh from the real functions of the parts.


def _is_complex_operand(x: Any) -> bool:
    return _ops.is_complex(np.dtype(_ops.as_tracer(x).dtype))


def _complex_sinh_cosh(z: Any, sinh: bool) -> Any:
    x, y = lax.real(z), lax.imag(z)
    sh, ch = _sinh(x), _cosh(x)
    if sinh:  # sinh(x + iy) = sinh x cos y + i cosh x sin y
        return lax.complex(lax.mul(sh, lax.cos(y)), lax.mul(ch, lax.sin(y)))
    return lax.complex(lax.mul(ch, lax.cos(y)), lax.mul(sh, lax.sin(y)))


def _complex_arcsinh(z: Any) -> Any:  # log(z + sqrt(z^2 + 1))
    return lax.log(lax.add(z, lax.sqrt(lax.add(lax.mul(z, z), 1))))


def _complex_arccosh(z: Any) -> Any:  # log(z + sqrt(z + 1) sqrt(z - 1))
    return lax.log(lax.add(z, lax.mul(lax.sqrt(lax.add(z, 1)), lax.sqrt(lax.sub(z, 1)))))


def _complex_arctanh(z: Any) -> Any:  # (log1p(z) - log1p(-z)) / 2
    return lax.mul(lax.sub(lax.log1p(z), lax.log1p(lax.neg(z))), 0.5)


def _complex_arcsin(z: Any) -> Any:  # -i asinh(i z)
    return lax.mul(_complex_arcsinh(lax.mul(z, 1j)), -1j)


def _complex_arccos(z: Any) -> Any:  # pi/2 - asin(z)
    return lax.sub(math.pi / 2, _complex_arcsin(z))


_COMPLEX_FORMS = {
    "_arcsin": _complex_arcsin,
    "_arccos": _complex_arccos,
    "_sinh": lambda z: _complex_sinh_cosh(z, True),
    "_cosh": lambda z: _complex_sinh_cosh(z, False),
    "_arcsinh": _complex_arcsinh,
    "_arccosh": _complex_arccosh,
    "_arctanh": _complex_arctanh,
}


# ---- primitives ----


def _primitive(lax_fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A one-op float function: integers and bool give float32; float16
    and bfloat16 are computed in float32 by the kernel and rounded once."""

    def impl(x: Any) -> Any:
        t = _ops.as_tracer(x)
        if not _ops.is_inexact(np.dtype(t.dtype)):
            t = lax.astype(t, _F32)
        return lax_fn(t)

    return impl


for _name, _fn, _doc, _aliases in (
    ("log1p", lax.log1p, "log(1 + x), accurate for small x.", ()),
    ("expm1", lax.expm1, "e**x - 1, accurate for small x.", ()),
    ("tan", lax.tan, "Tangent.", ()),
    ("arctan", lax.atan, "Arc tangent, in [-pi/2, pi/2].", ("atan",)),
):
    _export(_unary(_name, _primitive(_fn), _doc), _name, *_aliases)


def _inexact_pair(x1: Any, x2: Any) -> tuple[Any, Any, np.dtype]:
    d = _ops.result_dtype(x1, x2)
    if not _ops.is_float(d):
        d = _F32
    a, b = _ops.promote(x1, x2, to=d)
    return a, b, d


def _arctan2(x1: Any, x2: Any) -> Any:
    a, b, _ = _inexact_pair(x1, x2)
    return lax.atan2(a, b)


_export(
    _binary(
        "arctan2",
        _arctan2,
        "The angle of the point (x2, x1) in [-pi, pi] (C's atan2; integers "
        "give float32).",
    ),
    "arctan2",
    "atan2",
)


# ---- inverse trigonometric ----


def _arcsin(x: Any) -> Any:
    if _is_complex_operand(x):
        return _COMPLEX_FORMS["_arcsin"](_ops.as_tracer(x))
    t, d = _float_operand(x)
    # (1 - x)(1 + x) rather than 1 - x*x: exact near +-1, where the
    # angle is most sensitive to it. |x| > 1 gives sqrt(negative) = NaN.
    c = lax.sqrt(lax.mul(lax.sub(1, t), lax.add(1, t)))
    return _down(lax.atan2(t, c), d)


def _arccos(x: Any) -> Any:
    if _is_complex_operand(x):
        return _COMPLEX_FORMS["_arccos"](_ops.as_tracer(x))
    t, d = _float_operand(x)
    s = lax.sqrt(lax.mul(lax.sub(1, t), lax.add(1, t)))
    return _down(lax.atan2(s, t), d)


# ---- hyperbolic ----

# Below this |x|, sinh and cosh come from expm1 / exp directly; above it
# e**-|x| is negligible and e**|x| / 2 is formed as (e**(|x|/2) / 2) *
# e**(|x|/2), which overflows only where the result does.
_HYPERBOLIC_SPLIT = 20.0


def _half_exp(a: Any) -> Any:
    e = lax.exp(lax.mul(a, 0.5))
    return lax.mul(lax.mul(e, 0.5), e)


def _sinh(x: Any) -> Any:
    if _is_complex_operand(x):
        return _COMPLEX_FORMS["_sinh"](_ops.as_tracer(x))
    t, d = _float_operand(x)
    a = lax.abs(t)
    small = lax.lt(a, _HYPERBOLIC_SPLIT)
    a_s = lax.select(small, a, lax.full((), 0, t.dtype))  # finite gradients
    u = lax.expm1(a_s)
    # sinh = (u + u / (u + 1)) / 2 with u = e**a - 1: no cancellation.
    near = lax.mul(lax.add(u, lax.true_divide(u, lax.add(u, 1))), 0.5)
    r = lax.select(small, near, _half_exp(a))
    return _down(_odd(t, r), d)


def _cosh(x: Any) -> Any:
    if _is_complex_operand(x):
        return _COMPLEX_FORMS["_cosh"](_ops.as_tracer(x))
    t, d = _float_operand(x)
    a = lax.abs(t)
    small = lax.lt(a, _HYPERBOLIC_SPLIT)
    a_s = lax.select(small, a, lax.full((), 0, t.dtype))
    e = lax.exp(a_s)
    near = lax.add(lax.mul(e, 0.5), lax.true_divide(0.5, e))
    return _down(lax.select(small, near, _half_exp(a)), d)


def _large_threshold(dtype: Any) -> float:
    """|x| above which sqrt(x*x + 1) == |x| to working precision."""
    return 1.0 / math.sqrt(_eps(dtype))


def _arcsinh(x: Any) -> Any:
    if _is_complex_operand(x):
        return _COMPLEX_FORMS["_arcsinh"](_ops.as_tracer(x))
    t, d = _float_operand(x)
    a = lax.abs(t)
    big = lax.gt(a, _large_threshold(t.dtype))
    one = lax.full((), 1, t.dtype)
    a_s = lax.select(big, one, a)  # each branch sees finite inputs only
    a_l = lax.select(big, a, one)
    # asinh(a) = log1p(a + a^2 / (1 + sqrt(1 + a^2))), accurate near 0.
    sq = lax.mul(a_s, a_s)
    near = lax.log1p(
        lax.add(a_s, lax.true_divide(sq, lax.add(1, lax.sqrt(lax.add(sq, 1)))))
    )
    far = lax.add(lax.log(a_l), _LN2)
    return _down(_odd(t, lax.select(big, far, near)), d)


def _arccosh(x: Any) -> Any:
    if _is_complex_operand(x):
        return _COMPLEX_FORMS["_arccosh"](_ops.as_tracer(x))
    t, d = _float_operand(x)
    big = lax.gt(t, _large_threshold(t.dtype))
    two = lax.full((), 2, t.dtype)
    t_s = lax.select(big, two, t)
    t_l = lax.select(big, t, two)
    # acosh(x) = log1p((x - 1) + sqrt((x - 1)(x + 1))): accurate near 1;
    # x < 1 takes sqrt of a negative: NaN.
    xm1 = lax.sub(t_s, 1)
    near = lax.log1p(lax.add(xm1, lax.sqrt(lax.mul(xm1, lax.add(t_s, 1)))))
    far = lax.add(lax.log(t_l), _LN2)
    return _down(lax.select(big, far, near), d)


def _arctanh(x: Any) -> Any:
    if _is_complex_operand(x):
        return _COMPLEX_FORMS["_arctanh"](_ops.as_tracer(x))
    t, d = _float_operand(x)
    a = lax.abs(t)
    # atanh(a) = log1p(2a / (1 - a)) / 2 for a >= 0 (no cancellation);
    # a == 1 gives inf, a > 1 log1p(< -1) = NaN.
    r = lax.mul(lax.log1p(lax.true_divide(lax.mul(a, 2), lax.sub(1, a))), 0.5)
    return _down(_odd(t, r), d)


# ---- cbrt ----


def _cbrt(x: Any) -> Any:
    t, d = _float_operand(x)
    a = lax.abs(t)
    if t.dtype == _F64:
        r = lax.pow(a, 1.0 / 3.0)
        # One Newton step on r^3 = a fixes pow's error from 1/3's rounding;
        # skipped where r^3 would be denormal or overflow (and at 0, inf
        # and NaN), where pow's result is kept.
        finite = lax.bitwise_and(lax.gt(r, 1e-96), lax.lt(r, 1e96))
        rs = lax.select(finite, r, lax.full((), 1, _F64))
        step = lax.true_divide(
            lax.sub(lax.mul(lax.mul(rs, rs), rs), a), lax.mul(lax.mul(rs, rs), 3)
        )
        r = lax.select(finite, lax.sub(r, step), r)
    else:
        # float32 (and half floats): in float64, far below float32's ulp.
        r = lax.astype(lax.pow(lax.astype(a, _F64), 1.0 / 3.0), t.dtype)
    return _down(_odd(t, r), d)


for _name, _impl, _doc, _aliases in (
    ("arcsin", _arcsin, "Arc sine, in [-pi/2, pi/2] (NaN outside [-1, 1]).", ("asin",)),
    ("arccos", _arccos, "Arc cosine, in [0, pi] (NaN outside [-1, 1]).", ("acos",)),
    ("sinh", _sinh, "Hyperbolic sine (finite up to where it overflows).", ()),
    ("cosh", _cosh, "Hyperbolic cosine (finite up to where it overflows).", ()),
    ("arcsinh", _arcsinh, "Inverse hyperbolic sine.", ("asinh",)),
    ("arccosh", _arccosh, "Inverse hyperbolic cosine (NaN below 1).", ("acosh",)),
    (
        "arctanh",
        _arctanh,
        "Inverse hyperbolic tangent (+-inf at +-1, NaN beyond).",
        ("atanh",),
    ),
    ("cbrt", _cbrt, "Real cube root (negative for negative x).", ()),
):
    _export(_unary(_name, _impl, _doc), _name, *_aliases)

del _name, _fn, _impl, _doc, _aliases
