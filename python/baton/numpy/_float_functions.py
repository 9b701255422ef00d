"""Elementwise functions of real numbers on ``baton.numpy``, composed from
baton's lax primitives and existing ``baton.numpy`` functions (no new
C++): deg2rad / radians, rad2deg / degrees, fabs, isposinf / isneginf,
sinc, copysign, float_power, heaviside, hypot, logaddexp / logaddexp2,
nan_to_num, divmod, modf.

Each function runs as one compiled program eagerly (``baton._ops.apply``)
and inlines into the caller's program under ``bt.jit``. Promotion follows
jax.numpy: functions that produce floats give float32 for integer and bool
operands; float16/bfloat16 math of several steps is done in float32 and
rounded once.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton.numpy import _elementwise as _ew
from baton.numpy import _operands as _c
from baton.numpy._dtypes import finfo as _finfo

__all__: list[str] = [
    "copysign",
    "deg2rad",
    "degrees",
    "divmod",
    "fabs",
    "float_power",
    "heaviside",
    "hypot",
    "isneginf",
    "isposinf",
    "logaddexp",
    "logaddexp2",
    "modf",
    "nan_to_num",
    "rad2deg",
    "radians",
    "sinc",
]

_LN2 = math.log(2.0)

# log1p: baton's primitive where this build has it, else the composition in
# _elementwise (Goldberg's trick, exact where 1 + x rounds to 1).
_log1p = lax.log1p


# ---- elementwise ----


def _unary(name: str, impl: Any, doc: str) -> Any:
    impl.__name__ = name

    def fn(x: Any, /) -> Any:
        return _ops.apply(impl, (x,))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _binary(name: str, impl: Any, doc: str) -> Any:
    impl.__name__ = name

    def fn(x1: Any, x2: Any, /) -> Any:
        if _ops._config_values["numpy_rank_promotion"] != "allow":
            _ops.check_rank_promotion(impl.__name__, x1, x2)
        return _ops.apply(impl, (x1, x2))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _scale(factor: float) -> Any:
    def impl(x: Any) -> Any:
        (t,), d = _c.widened(x)
        return _c.down(lax.mul(t, factor), d)

    return impl


deg2rad = _unary(
    "deg2rad",
    _scale(math.pi / 180.0),
    """Degrees to radians (x * pi / 180; integers give float32).

    >>> bnp.deg2rad(180.0)   # 3.1415927
    """,
)
radians = _unary("radians", _scale(math.pi / 180.0), deg2rad.__doc__)
rad2deg = _unary(
    "rad2deg",
    _scale(180.0 / math.pi),
    """Radians to degrees (x * 180 / pi; integers give float32).

    >>> bnp.rad2deg(bnp.pi)   # 180.0
    """,
)
degrees = _unary("degrees", _scale(180.0 / math.pi), rad2deg.__doc__)


def _fabs(x: Any) -> Any:
    (t,), _ = _c.inexact(x)
    return lax.abs(t)


fabs = _unary(
    "fabs",
    _fabs,
    """|x| as a float (integers and bool give float32).

    >>> bnp.fabs(bnp.array([-2, 3]))   # [2., 3.] float32
    """,
)


def _isposinf(x: Any) -> Any:
    t = _ops.as_tracer(x)
    if not _ops.is_float(np.dtype(t.dtype)):
        return lax.full(tuple(t.shape), False)
    return lax.eq(t, float("inf"))


def _isneginf(x: Any) -> Any:
    t = _ops.as_tracer(x)
    if not _ops.is_float(np.dtype(t.dtype)):
        return lax.full(tuple(t.shape), False)
    return lax.eq(t, float("-inf"))


isposinf = _unary(
    "isposinf",
    _isposinf,
    """Whether x is +inf (bool; False for integers).

    >>> bnp.isposinf(bnp.array([bnp.inf, -bnp.inf, 1.0]))   # [True, False, False]
    """,
)
isneginf = _unary(
    "isneginf",
    _isneginf,
    """Whether x is -inf (bool; False for integers).

    >>> bnp.isneginf(bnp.array([bnp.inf, -bnp.inf, 1.0]))   # [False, True, False]
    """,
)


def _sinc(x: Any) -> Any:
    (t,), d = _c.widened(x)
    zero = lax.eq(t, 0)
    px = lax.mul(lax.select(zero, 1.0, t), math.pi)  # nonzero: finite gradients
    return _c.down(lax.select(zero, 1.0, lax.true_divide(lax.sin(px), px)), d)


sinc = _unary(
    "sinc",
    _sinc,
    """The normalized sinc, sin(pi x) / (pi x), 1 at x = 0.

    >>> bnp.sinc(bnp.array([0.0, 0.5, 1.0]))   # [1., 0.63662, ~0.]
    """,
)


def _copysign(x1: Any, x2: Any) -> Any:
    (a, b), _ = _c.inexact(x1, x2)
    mag = lax.abs(a)
    return lax.select(_ew._signbit(b), lax.neg(mag), mag)


copysign = _binary(
    "copysign",
    _copysign,
    """|x1| with the sign of x2 (-0.0 counts as negative; the sign of a NaN
    x2 is not seen, baton having no bitcast). Integers give float32.

    >>> bnp.copysign(3, -0.0)   # -3.0
    """,
)


def _float_power(x1: Any, x2: Any) -> Any:
    (a, b), d = _c.widened(x1, x2)
    return _c.down(lax.pow(a, b), d)


float_power = _binary(
    "float_power",
    _float_power,
    """x1 ** x2 in floating point (integers give float32 as in JAX, not
    numpy's float64), so negative integer powers work.

    >>> bnp.float_power(2, -1)   # 0.5
    """,
)


def _heaviside(x1: Any, x2: Any) -> Any:
    (a, b), _ = _c.inexact(x1, x2)
    r = lax.select(
        lax.lt(a, 0),
        lax.full((), 0, a.dtype),
        lax.select(lax.gt(a, 0), lax.full((), 1, a.dtype), b),
    )
    return lax.select(lax.ne(a, a), a, r)


heaviside = _binary(
    "heaviside",
    _heaviside,
    """The step function: 0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0
    (NaN where x1 is NaN). Integers give float32.

    >>> bnp.heaviside(bnp.array([-1.0, 0.0, 2.0]), 0.5)   # [0., 0.5, 1.]
    """,
)


def _hypot(x1: Any, x2: Any) -> Any:
    (a, b), d = _c.widened(x1, x2)
    a, b = lax.abs(a), lax.abs(b)
    hi, lo = lax.maximum(a, b), lax.minimum(a, b)
    zero = lax.eq(hi, 0)
    r = lax.true_divide(lo, lax.select(zero, lax.full((), 1, hi.dtype), hi))
    h = lax.mul(hi, lax.sqrt(lax.add(lax.mul(r, r), 1)))
    h = lax.select(zero, lax.full((), 0, hi.dtype), h)
    inf = lax.bitwise_or(lax.eq(a, float("inf")), lax.eq(b, float("inf")))
    return _c.down(lax.select(inf, lax.full((), float("inf"), hi.dtype), h), d)


hypot = _binary(
    "hypot",
    _hypot,
    """sqrt(x1**2 + x2**2) without overflow or underflow on the way (scaled
    by the larger magnitude); inf if either is infinite, even with NaN.

    >>> bnp.hypot(3.0, 4.0), bnp.hypot(3e30, 4e30)   # 5.0, 5e30
    """,
)


def _logaddexp_core(x1: Any, x2: Any, base2: bool) -> Any:
    (a, b), d = _c.widened(x1, x2)
    hi = lax.maximum(a, b)
    same = lax.eq(a, b)  # equal infinities: a - b would be NaN
    delta = lax.select(same, lax.full((), 0, a.dtype), lax.abs(lax.sub(a, b)))
    if base2:
        e = lax.pow(2.0, lax.neg(delta))
        r = lax.add(hi, lax.true_divide(_log1p(e), _LN2))
    else:
        r = lax.add(hi, _log1p(lax.exp(lax.neg(delta))))
    # NaN in either operand: NaN (maximum propagates it; delta would hide it).
    return _c.down(r, d)


def _logaddexp(x1: Any, x2: Any) -> Any:
    return _logaddexp_core(x1, x2, False)


def _logaddexp2(x1: Any, x2: Any) -> Any:
    return _logaddexp_core(x1, x2, True)


logaddexp = _binary(
    "logaddexp",
    _logaddexp,
    """log(exp(x1) + exp(x2)) without overflow: max + log1p(exp(-|x1 - x2|))
    (log1p by Goldberg's trick, accurate where exp(...) is tiny); -inf
    inputs give the other operand, equal infinities themselves.

    >>> bnp.logaddexp(1000.0, 1000.0)   # 1000.6931
    """,
)
logaddexp2 = _binary(
    "logaddexp2",
    _logaddexp2,
    """log2(2**x1 + 2**x2) without overflow (see :func:`logaddexp`).

    >>> bnp.logaddexp2(1.0, 1.0)   # 2.0
    """,
)


def _nan_to_num_impl(x: Any, nan: Any, posinf: Any, neginf: Any) -> Any:
    t = _ops.as_tracer(x)
    d = np.dtype(t.dtype)
    if not _ops.is_float(d):
        return t
    nan_v = _ops.as_tracer(nan, d)
    pos = _ops.as_tracer(posinf, d)
    neg = _ops.as_tracer(neginf, d)
    r = lax.select(lax.ne(t, t), nan_v, t)
    r = lax.select(lax.eq(t, float("inf")), pos, r)
    return lax.select(lax.eq(t, float("-inf")), neg, r)


def nan_to_num(
    x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None
) -> Any:
    """x with NaN replaced by ``nan``, +inf by ``posinf`` and -inf by
    ``neginf`` (default: the dtype's largest and most negative finite
    values). Integers and bool are returned unchanged.

    >>> bnp.nan_to_num(bnp.array([bnp.nan, bnp.inf, 1.0]))   # [0., 3.4e38, 1.]
    """
    d = _ops.dtype_of(x)
    if d is None:
        d = _ops.result_dtype(x)
    if _ops.is_float(d):
        info = _finfo(d)
        posinf = float(info.max) if posinf is None else posinf
        neginf = float(info.min) if neginf is None else neginf
    else:
        posinf = 0 if posinf is None else posinf
        neginf = 0 if neginf is None else neginf
    return _ops.apply(_nan_to_num_impl, (x, nan, posinf, neginf), weak_ref=(0,))


def _divmod_impl(x1: Any, x2: Any) -> Any:
    return _ew._floor_divide(x1, x2), _ew._mod(x1, x2)


def divmod(x1: Any, x2: Any, /) -> tuple[Any, Any]:
    """(x1 // x2, x1 % x2) in one call (numpy's floor division and mod).

    >>> bnp.divmod(bnp.array([7, -7]), 2)   # ([3, -4], [1, 1])
    """
    return _ops.apply(_divmod_impl, (x1, x2))


def _modf_impl(x: Any) -> Any:
    (t,), _ = _c.inexact(x)
    whole = _ew._trunc(t)  # ceil/floor keep the sign of zero results
    frac = lax.sub(t, whole)
    # inf: fraction 0 with x's sign (numpy's modf; jax.numpy gives NaN); an
    # exact zero fraction takes x's sign too (modf(-2.0) is (-0.0, -2.0)).
    zero = lax.select(
        _ew._signbit(t), lax.full((), -0.0, t.dtype), lax.full((), 0.0, t.dtype)
    )
    frac = lax.select(
        lax.bitwise_or(lax.eq(lax.abs(t), float("inf")), lax.eq(frac, 0)), zero, frac
    )
    return frac, whole


def modf(x: Any, /) -> tuple[Any, Any]:
    """(fractional part, integral part), both with x's sign; integers give
    float32. modf(+-inf) is (+-0.0, +-inf), as in numpy.

    >>> bnp.modf(bnp.array([2.5, -1.25]))   # ([0.5, -0.25], [2., -1.])
    """
    return _ops.apply(_modf_impl, (x,))
