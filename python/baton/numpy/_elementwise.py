"""Elementwise math and comparisons of ``baton.numpy``.

Each function has one implementation on ``bt.lax`` (so it works on Tracers
inside ``bt.jit``); on baton Arrays, numpy data and scalars outside a trace
it runs eagerly, compiled once per signature (``baton._ops.apply``).
Promotion follows jax.numpy: Python scalars are weakly typed, integers with
floats give the float type, true division and transcendental functions of
integers give float32. Operations made of several steps (floor_divide, mod,
log1p, expm1, ...) compute float16 and bfloat16 in float32 and round once,
as numpy does.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from baton import _ops
from baton._baton import lax

_F32 = np.dtype(np.float32)
_BOOL = np.dtype(np.bool_)

__all__: list[str] = [
    "bitwise_invert",
]


def _export(fn: Callable[..., Any], *names: str) -> Callable[..., Any]:
    for n in names:
        globals()[n] = fn
        __all__.append(n)
    return fn


def _is_half(d: np.dtype) -> bool:
    return d.itemsize == 2 and _ops.is_float(d)


def _upcast(*xs: Any) -> tuple[list[Any], np.dtype]:
    """The operands promoted together (weak scalars included); half floats
    computed in float32. Returns them and the dtype to round back to."""
    d = _ops.result_dtype(*xs)
    ts = _ops.promote(*xs, to=d)
    if _is_half(d):
        ts = [lax.astype(t, _F32) for t in ts]
    return ts, d


def _down(t: Any, d: np.dtype) -> Any:
    return t if t.dtype == d else lax.astype(t, d)


def _float_operand(x: Any) -> tuple[Any, np.dtype]:
    """x as a float Tracer computed at >= float32; and the result dtype
    (integers and bool give float32, as in JAX)."""
    t = _ops.as_tracer(x)
    d = np.dtype(t.dtype)
    if not _ops.is_inexact(d):
        return lax.astype(t, _F32), _F32
    return (lax.astype(t, _F32) if _is_half(d) else t), d


# ---- binary ----


def _binary(
    name: str, lax_fn: Callable[[Any, Any], Any], doc: str
) -> Callable[..., Any]:
    def impl(x1: Any, x2: Any) -> Any:
        return lax_fn(x1, x2)

    impl.__name__ = name

    def fn(x1: Any, x2: Any, /) -> Any:
        if _ops._config_values["numpy_rank_promotion"] != "allow":
            _ops.check_rank_promotion(impl.__name__, x1, x2)
        return _ops.apply(impl, (x1, x2))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn._impl = impl  # type: ignore[attr-defined]
    return fn


def _refusing_bool(
    name: str, lax_fn: Callable[..., Any], instead: str
) -> Callable[..., Any]:
    """lax_fn, but a TypeError (as numpy and JAX raise) when the promoted
    operands are bool, saying what to use instead."""

    def checked(*xs: Any) -> Any:
        ts = _ops.promote(*xs) if len(xs) > 1 else (_ops.as_tracer(xs[0]),)
        if ts[0].dtype == _BOOL:
            raise TypeError(
                f"{name}: not defined for bool operands (numpy and JAX refuse "
                f"it too); use {instead}, or convert to an integer dtype first"
            )
        return lax_fn(*ts)

    return checked


_export(_binary("add", lax.add, "x1 + x2, elementwise."), "add")
_export(
    _binary(
        "subtract",
        _refusing_bool("subtract", lax.sub, "logical_xor (the ^ operator)"),
        "x1 - x2, elementwise.",
    ),
    "subtract",
)
_export(_binary("multiply", lax.mul, "x1 * x2, elementwise."), "multiply")
_export(
    _binary(
        "true_divide",
        lax.true_divide,
        "x1 / x2 (true division: integer operands give float32, as in JAX).",
    ),
    "divide",
    "true_divide",
)
_export(
    _binary(
        "power",
        lax.pow,
        "x1 ** x2. Integers to negative integer powers give 0 (unless the base is "
        "1 or -1) rather than numpy's error.",
    ),
    "power",
    "pow",
)
_export(
    _binary("maximum", lax.maximum, "Elementwise maximum (propagates NaN)."), "maximum"
)
_export(
    _binary("minimum", lax.minimum, "Elementwise minimum (propagates NaN)."), "minimum"
)
_export(_binary("equal", lax.eq, "x1 == x2 (bool)."), "equal")
_export(_binary("not_equal", lax.ne, "x1 != x2 (bool)."), "not_equal")
_export(_binary("less", lax.lt, "x1 < x2 (bool)."), "less")
_export(_binary("less_equal", lax.le, "x1 <= x2 (bool)."), "less_equal")
_export(_binary("greater", lax.gt, "x1 > x2 (bool)."), "greater")
_export(_binary("greater_equal", lax.ge, "x1 >= x2 (bool)."), "greater_equal")


def _check_integral(name: str, *ts: Any) -> None:
    for t in ts:
        if t.dtype.kind not in "biu":
            raise TypeError(
                f"{name}: only integer and bool operands are supported, not "
                f"{np.dtype(t.dtype).name}"
            )


def _bitwise_and(x1: Any, x2: Any) -> Any:
    a, b = _ops.promote(x1, x2)
    _check_integral("bitwise_and", a)
    return lax.bitwise_and(a, b)


def _bitwise_or(x1: Any, x2: Any) -> Any:
    a, b = _ops.promote(x1, x2)
    _check_integral("bitwise_or", a)
    return lax.bitwise_or(a, b)


for _name, _impl, _doc in (
    ("bitwise_and", _bitwise_and, "x1 & x2: bitwise for integers, logical for bool."),
    ("bitwise_or", _bitwise_or, "x1 | x2: bitwise for integers, logical for bool."),
):
    _export(_binary(_name, _impl, _doc), _name)


def _logical(name: str, combine: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def impl(x1: Any, x2: Any) -> Any:
        a, b = _ops.as_tracer(x1), _ops.as_tracer(x2)
        a = a if a.dtype == _BOOL else lax.ne(a, 0)
        b = b if b.dtype == _BOOL else lax.ne(b, 0)
        return combine(a, b)

    impl.__name__ = name
    return _binary(name, impl, f"{name.replace('_', ' ')} of the truth values (bool).")


_export(_logical("logical_and", lax.bitwise_and), "logical_and")
_export(_logical("logical_or", lax.bitwise_or), "logical_or")
_export(_logical("logical_xor", lax.ne), "logical_xor")


def _floor_divide(x1: Any, x2: Any) -> Any:
    d = _ops.result_dtype(x1, x2)
    a, b = _ops.promote(x1, x2, to=d)
    if d == _BOOL:
        a, b = lax.astype(a, np.int32), lax.astype(b, np.int32)
        return lax.astype(_floor_divide(a, b), _BOOL)
    if d.itemsize == 8:
        q = _int64_floor_divide(a, b)
        return lax.select(lax.eq(b, 0), lax.full((), 0, d), q)
    if _ops.is_int(d):
        # (a - mod(a, b)) is a multiple of b: its quotient is exact in float64
        # (all these integers are below 2**53); numpy gives 0 for x // 0.
        m = lax.mod(a, b)
        f64 = np.float64
        q = lax.true_divide(
            lax.sub(lax.astype(a, f64), lax.astype(m, f64)), lax.astype(b, f64)
        )
        # Through int64, which wraps to d as numpy does: INT_MIN // -1 is
        # INT_MIN (a float -> int conversion would saturate to INT_MAX).
        q = lax.astype(lax.astype(lax.round(q), np.int64), d)
        return lax.select(lax.eq(b, 0), lax.full((), 0, d), q)
    return _down(_float_divmod(a, b, d)[0], d)


def _int64_floor_divide(a: Any, b: Any) -> Any:
    """Exact int64 floor division (no integer-division primitive): a
    float64 estimate refined with exact integer remainders. Exact unless
    |a| is within 2**10 of 2**63."""
    f64 = np.float64
    d = np.dtype(np.int64)
    bf = lax.astype(b, f64)
    safe_b = lax.select(lax.eq(b, 0), lax.full((), 1, d), b)
    q = lax.astype(lax.true_divide(lax.astype(a, f64), bf), f64)
    q = lax.astype(lax.select(lax.eq(bf, 0), lax.full((), 0.0, f64), q), d)
    r = lax.sub(a, lax.mul(q, safe_b))
    q = lax.add(
        q,
        lax.astype(
            lax.round(lax.true_divide(lax.astype(r, f64), lax.astype(safe_b, f64))), d
        ),
    )
    for _ in range(2):
        r = lax.sub(a, lax.mul(q, safe_b))
        neg_b = lax.lt(safe_b, 0)
        # Too far toward zero (|r| >= |b| with b's sign): one more.
        over = lax.bitwise_and(lax.ne(r, 0), lax.eq(lax.lt(r, 0), neg_b))
        over = lax.bitwise_and(over, lax.ge(lax.abs(r), lax.abs(safe_b)))
        q = lax.select(over, lax.add(q, 1), q)
        r = lax.sub(a, lax.mul(q, safe_b))
        # The remainder must have b's sign (floor): one less.
        under = lax.bitwise_and(lax.ne(r, 0), lax.ne(lax.lt(r, 0), neg_b))
        q = lax.select(under, lax.sub(q, 1), q)
    return q


def _float_divmod(a: Any, b: Any, d: np.dtype) -> tuple[Any, Any]:
    """numpy's npy_divmod for floats (computed in >= float32)."""
    if _is_half(d):
        a, b = lax.astype(a, _F32), lax.astype(b, _F32)
    mod = lax.rem(a, b)
    div = lax.true_divide(lax.sub(a, mod), b)
    fix = lax.bitwise_and(lax.ne(mod, 0), lax.ne(lax.lt(b, 0), lax.lt(mod, 0)))
    mod = lax.select(fix, lax.add(mod, b), mod)
    div = lax.select(fix, lax.sub(div, 1), div)
    floordiv = lax.floor(div)
    floordiv = lax.select(
        lax.gt(lax.sub(div, floordiv), 0.5), lax.add(floordiv, 1), floordiv
    )
    # numpy: a zero quotient takes the sign of a / b; division by zero gives a / b.
    true = lax.true_divide(a, b)
    floordiv = lax.select(
        lax.eq(div, 0), lax.mul(lax.abs(floordiv), lax.sign(true)), floordiv
    )
    floordiv = lax.select(lax.eq(b, 0), true, floordiv)
    return floordiv, mod


def _mod(x1: Any, x2: Any) -> Any:
    d = _ops.result_dtype(x1, x2)
    a, b = _ops.promote(x1, x2, to=d)
    if d == _BOOL:
        return lax.astype(_mod(lax.astype(a, np.int32), lax.astype(b, np.int32)), _BOOL)
    if _ops.is_int(d):
        # numpy gives 0 for x % 0.
        return lax.select(lax.eq(b, 0), lax.full((), 0, d), lax.mod(a, b))
    return _down(_float_divmod(a, b, d)[1], d)


def _fmod(x1: Any, x2: Any) -> Any:
    d = _ops.result_dtype(x1, x2)
    a, b = _ops.promote(x1, x2, to=d)
    if _ops.is_int(d) or d == _BOOL:
        if d == _BOOL:
            a, b = lax.astype(a, np.int32), lax.astype(b, np.int32)
        r = lax.select(lax.eq(b, 0), lax.full((), 0, a.dtype), lax.rem(a, b))
        return _down(r, d)
    return lax.rem(a, b)


_export(
    _binary("floor_divide", _floor_divide, "x1 // x2 (numpy's floor division)."),
    "floor_divide",
)
_export(
    _binary("remainder", _mod, "x1 % x2: the remainder has x2's sign (numpy's mod)."),
    "mod",
    "remainder",
)
_export(_binary("fmod", _fmod, "C's fmod: the remainder has x1's sign."), "fmod")


def _fmax(x1: Any, x2: Any) -> Any:
    a, b = _ops.promote(x1, x2)
    m = lax.maximum(a, b)
    if _ops.is_float(np.dtype(a.dtype)):
        m = lax.select(lax.ne(a, a), b, lax.select(lax.ne(b, b), a, m))
    return m


def _fmin(x1: Any, x2: Any) -> Any:
    a, b = _ops.promote(x1, x2)
    m = lax.minimum(a, b)
    if _ops.is_float(np.dtype(a.dtype)):
        m = lax.select(lax.ne(a, a), b, lax.select(lax.ne(b, b), a, m))
    return m


_export(
    _binary("fmax", _fmax, "Elementwise maximum ignoring NaN (numpy's fmax)."), "fmax"
)
_export(
    _binary("fmin", _fmin, "Elementwise minimum ignoring NaN (numpy's fmin)."), "fmin"
)


# ---- unary ----


def _unary(name: str, impl: Callable[[Any], Any], doc: str) -> Callable[..., Any]:
    impl.__name__ = name

    def fn(x: Any, /) -> Any:
        return _ops.apply(impl, (x,))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn._impl = impl  # type: ignore[attr-defined]
    return fn


def _lax_unary(lax_fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def impl(x: Any) -> Any:
        return lax_fn(x)

    return impl


for _name, _fn, _doc, _aliases in (
    (
        "negative",
        _refusing_bool("negative", lax.neg, "logical_not (the ~ operator)"),
        "-x.",
        (),
    ),
    (
        "sign",
        _refusing_bool("sign", lax.sign, "the array itself"),
        "-1, 0 or 1 (NaN stays NaN).",
        (),
    ),
    ("exp", lax.exp, "e**x (integers give float32).", ()),
    ("log", lax.log, "Natural logarithm (integers give float32).", ()),
    ("sqrt", lax.sqrt, "Square root (integers give float32).", ()),
    ("rsqrt", lax.rsqrt, "1 / sqrt(x) (integers give float32).", ()),
    ("tanh", lax.tanh, "Hyperbolic tangent.", ()),
    ("sin", lax.sin, "Sine.", ()),
    ("cos", lax.cos, "Cosine.", ()),
    ("sigmoid", lax.logistic, "1 / (1 + e**-x) (jax.nn.sigmoid).", ()),
    ("rint", lax.round, "Round half to even (integers give float32).", ()),
):
    _export(_unary(_name, _lax_unary(_fn), _doc), _name, *_aliases)


def _absolute(x: Any) -> Any:
    t = _ops.as_tracer(x)
    if t.dtype == _BOOL:
        return t  # |x| of a bool is x (numpy, JAX)
    return lax.abs(t)


_export(_unary("absolute", _absolute, "|x| (bool: x itself)."), "absolute", "abs")


def _rounding(lax_fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """floor / ceil: integers and bool are returned unchanged, with their
    dtype (jax.numpy since 0.4.31, numpy 2)."""

    def impl(x: Any) -> Any:
        t = _ops.as_tracer(x)
        if not _ops.is_float(np.dtype(t.dtype)):
            return t
        return lax_fn(t)

    return impl


for _name, _fn, _doc in (
    ("floor", lax.floor, "Round down (integers and bool keep their dtype)."),
    ("ceil", lax.ceil, "Round up (integers and bool keep their dtype)."),
):
    _export(_unary(_name, _rounding(_fn), _doc), _name)


def _positive(x: Any) -> Any:
    return _ops.as_tracer(x)


def _bitwise_not(x: Any) -> Any:
    t = _ops.as_tracer(x)
    _check_integral("invert", t)
    return lax.bitwise_not(t)


def _logical_not(x: Any) -> Any:
    t = _ops.as_tracer(x)
    return lax.bitwise_not(t if t.dtype == _BOOL else lax.ne(t, 0))


def _square(x: Any) -> Any:
    t = _ops.as_tracer(x)
    return lax.mul(t, t)


def _reciprocal(x: Any) -> Any:
    t = _ops.as_tracer(x)
    if _ops.is_float(np.dtype(t.dtype)):
        return lax.true_divide(1, t)
    return lax.pow(t, -1)  # integers: 0 unless |x| == 1, like numpy


def _trunc(x: Any) -> Any:
    t = _ops.as_tracer(x)
    if not _ops.is_float(np.dtype(t.dtype)):
        return t
    return lax.select(lax.lt(t, 0), lax.ceil(t), lax.floor(t))


def _log2(x: Any) -> Any:
    t, d = _float_operand(x)
    return _down(lax.true_divide(lax.log(t), float(np.log(2.0))), d)


def _log10(x: Any) -> Any:
    t, d = _float_operand(x)
    return _down(lax.true_divide(lax.log(t), float(np.log(10.0))), d)


def _exp2(x: Any) -> Any:
    t, d = _float_operand(x)
    return _down(lax.pow(2.0, t), d)


def _isnan(x: Any) -> Any:
    t = _ops.as_tracer(x)
    if not _ops.is_float(np.dtype(t.dtype)):
        return lax.full(t.shape, False)
    return lax.ne(t, t)


def _isinf(x: Any) -> Any:
    t = _ops.as_tracer(x)
    if not _ops.is_float(np.dtype(t.dtype)):
        return lax.full(t.shape, False)
    return lax.eq(lax.abs(t), float("inf"))


def _isfinite(x: Any) -> Any:
    t = _ops.as_tracer(x)
    if not _ops.is_float(np.dtype(t.dtype)):
        return lax.full(t.shape, True)
    return lax.lt(lax.abs(t), float("inf"))


def _signbit(x: Any) -> Any:
    t = _ops.as_tracer(x)
    if t.dtype.kind == "u" or t.dtype == _BOOL:
        return lax.full(t.shape, False)
    if not _ops.is_float(np.dtype(t.dtype)):
        return lax.lt(t, 0)
    # -0.0 and negative NaN are not told apart here (no bitcast primitive).
    return lax.bitwise_or(lax.lt(t, 0), lax.lt(lax.true_divide(1, t), 0))


for _name, _impl, _doc, _aliases in (
    ("positive", _positive, "+x (x itself).", ()),
    (
        "invert",
        _bitwise_not,
        "~x: bitwise not for integers, logical not for bool.",
        ("bitwise_not",),
    ),
    ("logical_not", _logical_not, "not x (bool).", ()),
    ("square", _square, "x * x.", ()),
    ("reciprocal", _reciprocal, "1 / x (integers: 0 unless |x| == 1, like numpy).", ()),
    ("trunc", _trunc, "Round toward zero.", ("fix",)),
    ("log2", _log2, "Base-2 logarithm.", ()),
    ("log10", _log10, "Base-10 logarithm.", ()),
    ("exp2", _exp2, "2**x.", ()),
    ("isnan", _isnan, "Whether x is NaN (bool).", ()),
    ("isinf", _isinf, "Whether x is +-inf (bool).", ()),
    ("isfinite", _isfinite, "Whether x is neither inf nor NaN (bool).", ()),
    ("signbit", _signbit, "Whether x is negative (-0.0 included).", ()),
):
    _export(_unary(_name, _impl, _doc), _name, *_aliases)


def _round_impl(x: Any, *, decimals: int) -> Any:
    t = _ops.as_tracer(x)
    d = np.dtype(t.dtype)
    if not _ops.is_float(d):
        if decimals >= 0:
            return t
        f = float(10 ** (-decimals))
        w = lax.astype(t, np.float64)
        return lax.astype(lax.mul(lax.round(lax.true_divide(w, f)), f), d)
    if decimals == 0:
        return lax.round(t)
    w = lax.astype(t, _F32) if _is_half(d) else t
    f = float(10.0**decimals)
    return _down(lax.true_divide(lax.round(lax.mul(w, f)), f), d)


def round(a: Any, decimals: int = 0, out: None = None) -> Any:
    """Round half to even to ``decimals`` places (numpy's round/around)."""
    if out is not None:
        raise NotImplementedError("round: out= is not supported (arrays are immutable)")
    return _ops.apply(_round_impl, (a,), (("decimals", int(decimals)),))


around = round
__all__ += ["around", "round"]


def _clip_impl(a: Any, *bounds: Any, lo: bool, hi: bool) -> Any:
    d = _ops.result_dtype(a, *bounds)
    t = _ops.as_tracer(a, d)
    rest = list(bounds)
    if lo:
        t = lax.maximum(t, _ops.as_tracer(rest.pop(0), d))
    if hi:
        t = lax.minimum(t, _ops.as_tracer(rest.pop(0), d))
    return t


_clip_impl.op_name = "clip"  # type: ignore[attr-defined]


def clip(
    a: Any, a_min: Any = None, a_max: Any = None, *, min: Any = None, max: Any = None
) -> Any:
    """``a`` limited to [a_min, a_max] (either may be None)."""
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    if lo is None and hi is None:
        return _ops.apply(_positive, (a,))
    bounds = tuple(b for b in (lo, hi) if b is not None)
    static = (("lo", lo is not None), ("hi", hi is not None))
    return _ops.apply(_clip_impl, (a, *bounds), static)


__all__.append("clip")


def _where_impl(condition: Any, x: Any, y: Any) -> Any:
    return lax.select(condition, x, y)


def where(condition: Any, x: Any = None, y: Any = None, /) -> Any:
    """``x`` where ``condition`` (nonzero is true), else ``y``; the three
    broadcast together and x, y promote. The one-argument form (nonzero) is
    not supported: its result shape depends on values."""
    if x is None or y is None:
        if x is None and y is None:
            raise NotImplementedError(
                "where(condition) with one argument (numpy's nonzero) is not "
                "supported: the result's shape depends on the values"
            )
        raise ValueError("where: either both or neither of x and y must be given")
    return _ops.apply(_where_impl, (condition, x, y), weak_ref=(1, 2))


__all__.append("where")


def bitwise_invert(x: Any, /) -> Any:
    """Bitwise NOT of integers, logical NOT of bool (alias of ``invert``)."""
    return invert(x)  # noqa: F821 -- bound by the loop above
