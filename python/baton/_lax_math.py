"""``bt.lax``'s elementwise math, reductions and cumulative operations that
are compositions of other baton operations (``jax.lax``'s names and
signatures): ``sinh``, ``erf``, ``lgamma``, ``square``, ``integer_pow``,
``nextafter``, ``population_count``, ``reduce_sum``, ``argmax``, ``cumsum``,
``cumlogsumexp``, ...

Unlike the ``baton.numpy`` functions they are built on, the reductions and
cumulative operations keep the operand's dtype (``lax.reduce_sum`` of int8
is int8), as in JAX. Every function takes Tracers or concrete operands;
``baton.lax`` wraps them to run compiled when called outside a trace.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import baton.numpy as bnp
from baton import _ops
from baton._baton import lax
from baton._config import config as _config
from baton.random import _float_ops, _samplers
from baton.scipy import special

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _t(x: Any) -> Any:
    return _ops.as_tracer(x)


# ---- elementwise ----


def _from_numpy(name: str, doc: str) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        return getattr(bnp, name)(x)

    fn.__doc__ = doc
    fn.__name__ = fn.__qualname__ = f"numpy_{name}"
    return fn


acos = _from_numpy("arccos", "Elementwise arc cosine, in [0, pi].")
asin = _from_numpy("arcsin", "Elementwise arc sine, in [-pi/2, pi/2].")
acosh = _from_numpy("arccosh", "Elementwise inverse hyperbolic cosine.")
asinh = _from_numpy("arcsinh", "Elementwise inverse hyperbolic sine.")
atanh = _from_numpy("arctanh", "Elementwise inverse hyperbolic tangent.")
cosh = _from_numpy("cosh", "Elementwise hyperbolic cosine.")
sinh = _from_numpy("sinh", "Elementwise hyperbolic sine.")
exp2 = _from_numpy("exp2", "Elementwise ``2 ** x``.")
square = _from_numpy("square", "Elementwise ``x * x``.")
is_finite = _from_numpy("isfinite", "True where x is neither infinite nor NaN.")


def cbrt(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise real cube root (``accuracy`` is accepted and ignored)."""
    return bnp.cbrt(x)


def reciprocal(x: Any) -> Any:
    """Elementwise ``1 / x``."""
    t = _t(x)
    return lax.div(lax.full((), 1, t.dtype), t)


def erf(x: Any) -> Any:
    """The error function (baton.scipy.special's approximation)."""
    return special.erf(x)


def erfc(x: Any) -> Any:
    """The complementary error function ``1 - erf(x)``."""
    return special.erfc(x)


def erf_inv(x: Any) -> Any:
    """The inverse error function on [-1, 1]."""
    return special.erfinv(x)


def lgamma(x: Any) -> Any:
    """``log|Gamma(x)|`` (baton.scipy.special.gammaln)."""
    return special.gammaln(x)


def digamma(x: Any) -> Any:
    """The digamma function, the derivative of ``lgamma``."""
    return special.digamma(x)


def integer_pow(x: Any, y: int) -> Any:
    """``x ** y`` for a static Python int ``y``, by repeated squaring (as
    JAX multiplies); a negative ``y`` gives ``1 / x ** -y``."""
    t = _t(x)
    n = abs(int(y))
    acc = None
    base = t
    while n > 0:
        if n & 1:
            acc = base if acc is None else lax.mul(acc, base)
        n >>= 1
        if n:
            base = lax.mul(base, base)
    if acc is None:
        acc = lax.full(tuple(t.shape), 1, t.dtype)
    if y < 0:
        acc = lax.div(lax.full((), 1, t.dtype), acc)
    return acc


def nextafter(x1: Any, x2: Any) -> Any:
    """The next float after x1 in the direction of x2 (float32 and 16-bit
    floats; float64 raises NotImplementedError)."""
    a, b = _ops.promote(x1, x2)
    d = np.dtype(a.dtype)
    if d == _F64 or not _ops.is_float(d):
        raise NotImplementedError(f"nextafter: {d} is not supported (float32/16 only)")
    if d == _F32:
        up, down = _float_ops.next_after(a, True), _float_ops.next_after(a, False)
    else:
        up, down = _samplers._next_after(a, True, d), _samplers._next_after(a, False, d)
    r = lax.select(lax.lt(a, b), up, down)
    r = lax.select(lax.eq(a, b), b, r)
    nan = lax.bitwise_or(lax.ne(a, a), lax.ne(b, b))
    return lax.select(nan, lax.full((), np.nan, d), r)


_U32 = np.dtype(np.uint32)


def _popcount32(v: Any) -> Any:
    """Set bits of each uint32 (the SWAR reduction)."""

    def shr(a: Any, k: int) -> Any:
        return lax.shift_right_logical(a, lax.full((), k, _U32))

    def c(k: int) -> Any:
        return lax.full((), k, _U32)

    v = lax.sub(v, lax.bitwise_and(shr(v, 1), c(0x55555555)))
    v = lax.add(
        lax.bitwise_and(v, c(0x33333333)), lax.bitwise_and(shr(v, 2), c(0x33333333))
    )
    v = lax.bitwise_and(lax.add(v, shr(v, 4)), c(0x0F0F0F0F))
    return shr(lax.mul(v, c(0x01010101)), 24)


def population_count(x: Any) -> Any:
    """The number of set bits of each integer (two's complement for
    negative ones), in x's dtype."""
    t = _t(x)
    d = np.dtype(t.dtype)
    if d == np.dtype(bool):
        return t
    bits = d.itemsize * 8
    if bits == 64:
        hi = lax.astype(lax.shift_right_logical(t, lax.full((), 32, d)), _U32)
        n = lax.add(_popcount32(hi), _popcount32(lax.astype(t, _U32)))
    else:
        u = lax.astype(t, _U32)
        if bits < 32:
            u = lax.bitwise_and(u, lax.full((), (1 << bits) - 1, _U32))
        n = _popcount32(u)
    return lax.astype(n, d)


def clz(x: Any) -> Any:
    """The number of leading zero bits of each integer, in x's dtype."""
    t = _t(x)
    d = np.dtype(t.dtype)
    bits = d.itemsize * 8
    s = t
    shift = 1
    while shift < bits:
        s = lax.bitwise_or(s, lax.shift_right_logical(s, lax.full((), shift, d)))
        shift *= 2
    return lax.sub(lax.full((), bits, d), population_count(s))


# ---- reductions ----


def _axes(operand: Any, axes: Any) -> tuple[int, ...]:
    nd = len(_ops.shape_of(operand))
    return tuple(sorted(_ops.normalize_axis(a, nd) for a in axes))


def _keep_dtype(r: Any, d: np.dtype) -> Any:
    return r if np.dtype(r.dtype) == d else lax.astype(r, d)


_HALF = (np.dtype(np.float16), np.dtype(bnp.bfloat16))
_SHORT = {np.dtype(np.float16): "f16", np.dtype(bnp.bfloat16): "bf16"}


def reduce_sum(operand: Any, axes: Any, *, out_sharding: Any = None) -> Any:
    """The sum over ``axes`` (a sequence), in the operand's dtype."""
    t = _t(operand)
    if not _config.read("allow_f16_reductions") and np.dtype(t.dtype) in _HALF:
        raise ValueError(
            f"reduce_sum on operand {_SHORT[np.dtype(t.dtype)]}{list(t.shape)} is not "
            "allowed when jax_allow_f16_reductions=False."
        )
    return _keep_dtype(lax.sum(t, _axes(t, axes)), np.dtype(t.dtype))


def reduce_prod(operand: Any, axes: Any) -> Any:
    """The product over ``axes``, in the operand's dtype."""
    t = _t(operand)
    return _keep_dtype(lax.prod(t, _axes(t, axes)), np.dtype(t.dtype))


def reduce_max(operand: Any, axes: Any) -> Any:
    """The maximum over ``axes``."""
    t = _t(operand)
    return lax.max(t, _axes(t, axes))


def reduce_min(operand: Any, axes: Any) -> Any:
    """The minimum over ``axes``."""
    t = _t(operand)
    return lax.min(t, _axes(t, axes))


def _fold(t: Any, axes: tuple[int, ...], op: Callable, identity: Any) -> Any:
    """t reduced over axes by the associative op, pairwise (a tree)."""
    for ax in sorted(axes, reverse=True):
        while t.shape[ax] > 1:
            n = t.shape[ax]
            if n % 2:
                pad = [0] * len(t.shape)
                hi = list(pad)
                hi[ax] = 1
                t = lax.pad(t, lax.full((), identity, t.dtype), pad, hi)
                n += 1
            lo, mid, end = [0] * len(t.shape), list(t.shape), list(t.shape)
            mid[ax] = n // 2
            start = [0] * len(t.shape)
            start[ax] = n // 2
            t = op(lax.slice(t, lo, mid), lax.slice(t, start, end))
        shape = tuple(t.shape)
        if shape[ax] == 0:
            shape = (*shape[:ax], 1, *shape[ax + 1 :])
            t = lax.full(shape, identity, t.dtype)
        t = lax.reshape(t, shape[:ax] + shape[ax + 1 :])
    return t


def _all_ones(d: np.dtype) -> Any:
    return (
        True if d == np.dtype(bool) else (-1 if d.kind == "i" else int(np.iinfo(d).max))
    )


def reduce_and(operand: Any, axes: Any) -> Any:
    """Bitwise (logical, for bool) and over ``axes``."""
    t = _t(operand)
    return _fold(t, _axes(t, axes), lax.bitwise_and, _all_ones(np.dtype(t.dtype)))


def reduce_or(operand: Any, axes: Any) -> Any:
    """Bitwise (logical, for bool) or over ``axes``."""
    t = _t(operand)
    zero = False if np.dtype(t.dtype) == np.dtype(bool) else 0
    return _fold(t, _axes(t, axes), lax.bitwise_or, zero)


def reduce_xor(operand: Any, axes: Any) -> Any:
    """Bitwise (logical, for bool) exclusive or over ``axes``."""
    t = _t(operand)
    zero = False if np.dtype(t.dtype) == np.dtype(bool) else 0
    return _fold(t, _axes(t, axes), lax.bitwise_xor, zero)


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    """Index of the maximum along ``axis`` (the first of equal ones; NaN
    counts as the maximum), as ``index_dtype``."""
    return lax.astype(bnp.argmax(operand, axis=int(axis)), np.dtype(index_dtype))


def argmin(operand: Any, axis: int, index_dtype: Any) -> Any:
    """Index of the minimum along ``axis`` (the first of equal ones; NaN
    counts as the minimum), as ``index_dtype``."""
    return lax.astype(bnp.argmin(operand, axis=int(axis)), np.dtype(index_dtype))


# ---- cumulative ----


def _lowest(d: np.dtype) -> Any:
    if _ops.is_float(d):
        return -np.inf
    return False if d == np.dtype(bool) else int(np.iinfo(d).min)


def _highest(d: np.dtype) -> Any:
    if _ops.is_float(d):
        return np.inf
    return True if d == np.dtype(bool) else int(np.iinfo(d).max)


def _rev1(t: Any, axis: int) -> Any:
    return bnp.flip(t, axis=axis)


def _scan(operand: Any, axis: int, reverse: bool, op: Callable, identity: Any) -> Any:
    """Inclusive prefix combination along axis (Hillis-Steele doubling)."""
    t = _t(operand)
    nd = len(t.shape)
    ax = _ops.normalize_axis(axis, nd)
    if reverse:
        t = _rev1(t, ax)
    n = t.shape[ax]
    k = 1
    fill = lax.full((), identity, t.dtype)
    while k < n:
        low, high = [0] * nd, [0] * nd
        low[ax], high[ax] = k, -k
        t = op(t, lax.pad(t, fill, low, high))
        k *= 2
    return _rev1(t, ax) if reverse else t


def cumsum(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Inclusive cumulative sum along ``axis`` (from the end if
    ``reverse``), in the operand's dtype."""
    return _scan(operand, axis, reverse, lax.add, 0)


def cumprod(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Inclusive cumulative product along ``axis``, in the operand's dtype."""
    return _scan(operand, axis, reverse, lax.mul, 1)


def cummax(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Inclusive cumulative maximum along ``axis``."""
    t = _t(operand)
    return _scan(t, axis, reverse, lax.maximum, _lowest(np.dtype(t.dtype)))


def cummin(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Inclusive cumulative minimum along ``axis``."""
    t = _t(operand)
    return _scan(t, axis, reverse, lax.minimum, _highest(np.dtype(t.dtype)))


def _logaddexp(a: Any, b: Any) -> Any:
    return bnp.logaddexp(a, b)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Inclusive cumulative ``log(sum(exp(x)))`` along ``axis``, computed
    stably."""
    return _scan(operand, axis, reverse, _logaddexp, -np.inf)


# ---- bitwise logic: TypeError for non-integer operands, as JAX ----


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "b"
    if isinstance(v, int):
        return "i"
    if isinstance(v, float):
        return "f"
    if isinstance(v, complex):
        return "c"
    dt = getattr(v, "dtype", None)
    return np.dtype(dt if dt is not None else np.asarray(v).dtype).kind


def _check_logical(name: str, *operands: Any) -> None:
    kinds = [_kind(v) for v in operands]
    if any(k not in "biu" for k in kinds):
        dts = " and ".join(
            str(getattr(v, "dtype", type(v).__name__)) for v in operands
        )
        raise TypeError(f"{name}: needs integer or bool operands, got {dts}")


def bitwise_not(x: Any) -> Any:
    """Elementwise NOT of bool or integer ``x`` (TypeError otherwise).

    >>> bt.lax.bitwise_not(bnp.array([0, 5], dtype=bnp.uint8))
    Array([255, 250], dtype=uint8)
    """
    _check_logical("bitwise_not", x)
    return lax.bitwise_not(x)


def bitwise_and(x: Any, y: Any) -> Any:
    """Elementwise AND of bool or integer operands (TypeError otherwise).

    >>> bt.lax.bitwise_and(bnp.array([6]), bnp.array([3]))
    Array([2], dtype=int32)
    """
    _check_logical("bitwise_and", x, y)
    return lax.bitwise_and(x, y)


def bitwise_or(x: Any, y: Any) -> Any:
    """Elementwise OR of bool or integer operands (TypeError otherwise).

    >>> bt.lax.bitwise_or(bnp.array([6]), bnp.array([3]))
    Array([7], dtype=int32)
    """
    _check_logical("bitwise_or", x, y)
    return lax.bitwise_or(x, y)


# ---- complex parts, with JAX's dtype rules ----


def _kind_error(name: str, dtype: np.dtype, accepted: str) -> TypeError:
    return TypeError(
        f"{name} does not accept dtype {dtype}. Accepted dtypes are {accepted}."
    )


def real(x: Any) -> Any:
    """The real part of complex ``x`` (float32 for complex64); as JAX's,
    real input raises TypeError (``bnp.real`` takes any).

    >>> bt.lax.real(bnp.array([1 + 2j]))
    Array([1.], dtype=float32)
    """
    t = _ops.as_tracer(x)
    if np.dtype(t.dtype).kind != "c":
        raise _kind_error("real", np.dtype(t.dtype), "subtypes of complexfloating")
    return lax.real(t)


def imag(x: Any) -> Any:
    """The imaginary part of complex ``x``; as JAX's, real input raises
    TypeError (``bnp.imag`` takes any).

    >>> bt.lax.imag(bnp.array([1 + 2j]))
    Array([2.], dtype=float32)
    """
    t = _ops.as_tracer(x)
    if np.dtype(t.dtype).kind != "c":
        raise _kind_error("imag", np.dtype(t.dtype), "subtypes of complexfloating")
    return lax.imag(t)


def conj(x: Any) -> Any:
    """The complex conjugate; as JAX's, a float32 (float64) ``x`` gives
    complex64 (complex128), other real dtypes raise TypeError
    (``bnp.conj`` keeps real input real).

    >>> bt.lax.conj(bnp.array([1 + 2j]))
    Array([1.-2.j], dtype=complex64)
    >>> bt.lax.conj(bnp.array([1.0]))
    Array([1.+0.j], dtype=complex64)
    """
    t = _ops.as_tracer(x)
    dt = np.dtype(t.dtype)
    if dt.kind == "c":
        return lax.conj(t)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise _kind_error("conj", dt, "subtypes of float32, complexfloating, float64")
    return lax.complex(t, lax.full(tuple(t.shape), 0, np.dtype(t.dtype)))


__all__ = [
    "acos",
    "acosh",
    "argmax",
    "argmin",
    "asin",
    "asinh",
    "atanh",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "cbrt",
    "clz",
    "conj",
    "cosh",
    "cumlogsumexp",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "digamma",
    "erf",
    "erf_inv",
    "erfc",
    "exp2",
    "imag",
    "integer_pow",
    "is_finite",
    "lgamma",
    "nextafter",
    "population_count",
    "real",
    "reciprocal",
    "reduce_and",
    "reduce_max",
    "reduce_min",
    "reduce_or",
    "reduce_prod",
    "reduce_sum",
    "reduce_xor",
    "sinh",
    "square",
]

# JAX's dtype rules (TypeError) for the C++ bindings of these names.
OVERRIDES = frozenset(
    {"bitwise_and", "bitwise_not", "bitwise_or", "conj", "imag", "real"}
)
