"""Samplers built on the key's bits: uniform, normal, truncated_normal,
bernoulli, randint.

Each follows JAX's algorithm step for step (jax/_src/random, version
pinned in bench/requirements.txt), so a key gives JAX's values: the float
conversion keeps the top ``nmant`` bits as the mantissa of a number in
[1, 2) and subtracts 1 (computed here as ``mantissa * 2**-nmant``, the same
number, since baton has no bit casts); bfloat16 (7 mantissa bits) draws 8
random bits, float16 16, float32 32. Scaling to [minval, maxval) is one
fused multiply-add in float32 (``_float_ops.fma32``), a multiply and an add
each rounded in float16/bfloat16, as XLA does on CPU.

Every public function validates its static arguments here, then runs one
implementation through ``_ops.apply``: eagerly (compiled once per shape and
dtype), or inline while tracing.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from baton import _dtypes, _ops
from baton._baton import lax
from baton.numpy._shapes import broadcast_shapes
from baton.random import _float_ops, _keys, _threefry

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_BF16 = _dtypes.bfloat16
_I32 = np.dtype(np.int32)
_I64 = np.dtype(np.int64)
_U32 = np.dtype(np.uint32)
_FLOATS = (_BF16, _F16, _F32, _F64)


def _x64() -> bool:
    return bool(_keys._x64())


def float_dtype(dtype: Any, name: str) -> np.dtype:
    """A sampler's float ``dtype=`` (default float32, float64 with x64)."""
    if dtype is None:
        return _F64 if _x64() else _F32
    d = _dtypes.canonicalize(dtype)
    if d not in _FLOATS:
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {d}")
    return d


def _check_param_shapes(name: str, shape: tuple[int, ...], *params: Any) -> None:
    shapes = [_ops.shape_of(p) for p in params]
    try:
        result = tuple(broadcast_shapes(shape, *shapes))
    except ValueError:
        result = None
    if result != shape:
        raise ValueError(
            f"{name} parameter shapes {shapes} must be broadcast-compatible with the "
            f"shape argument {shape}, and broadcasting them must give that shape "
            f"(got {result})"
        )


def _host_or_traced(value: Any, dtype: np.dtype) -> Any:
    """A parameter as an operand of dtype: host data is converted now (one
    rounding from the Python float, as JAX does); arrays stay as they are
    and are converted inside the program."""
    if _ops.is_scalar(value) or isinstance(
        value, (list, tuple, np.ndarray, np.generic)
    ):
        return np.asarray(value, dtype)
    return value


# ---- floats in [0, 1) from bits ----


def unit_floats(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """JAX's uniform [0, 1) floats of dtype for a single key's data."""
    nmant = int(ml_dtypes.finfo(dtype).nmant)
    if dtype == _F64:
        # 64 random bits: high word from the first output word (JAX's
        # (hi << 32 | lo) >> 12 is hi * 2**20 + (lo >> 12), exact in float64).
        hi, lo = _keys.random_words(data, shape)
        m = lax.add(
            lax.mul(lax.astype(hi, _F64), 2.0**20),
            lax.astype(_threefry.shift_right(lo, 12), _F64),
        )
        return lax.mul(m, 2.0**-52)
    width = 8 if nmant < 8 else dtype.itemsize * 8
    b = _keys.random_bits(data, width, shape)
    m = _threefry.shift_right(b, width - nmant)
    # m < 2**23: the float32 scaling is exact, and so is the narrowing.
    return lax.astype(lax.mul(lax.astype(m, _F32), 2.0**-nmant), dtype)


def uniform_core(
    data: Any, lo: Any, hi: Any, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    """JAX's ``_uniform``: floats in [lo, hi) (lax values of dtype)."""
    f = unit_floats(data, shape, dtype)
    span = lax.sub(hi, lo)
    if dtype == _F32:
        r = _float_ops.fma32(f, span, lo)
    else:
        r = lax.add(lax.mul(f, span), lo)
    return lax.broadcast_to(lax.maximum(lo, r), shape)


def _uniform_impl(
    data: Any, lo: Any, hi: Any, *, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    return uniform_core(
        data, lax.astype(lo, dtype), lax.astype(hi, dtype), shape, dtype
    )


def uniform(
    key: Any, shape: Any = (), dtype: Any = None, minval: Any = 0.0, maxval: Any = 1.0
) -> Any:
    """Uniform floats in [minval, maxval) of ``shape`` and float ``dtype``
    (float32 by default); minval and maxval broadcast to ``shape``."""
    data, _ = _keys.single_key(key, "uniform")
    shape = _keys.canonical_shape(shape, "uniform")
    d = float_dtype(dtype, "uniform")
    _check_param_shapes("uniform", shape, minval, maxval)
    args = (data, _host_or_traced(minval, d), _host_or_traced(maxval, d))
    return _ops.apply(_uniform_impl, args, (("shape", shape), ("dtype", d)))


# ---- normal and truncated normal ----


def _erf_inv(x: Any, dtype: np.dtype) -> Any:
    if dtype == _F64:
        raise NotImplementedError(
            "normal/truncated_normal: float64 needs XLA's float64 erf_inv, which "
            "baton does not implement yet; draw float32 and convert"
        )
    return lax.astype(_float_ops.erf_inv32(lax.astype(x, _F32)), dtype)


def _erf(x: Any, dtype: np.dtype) -> Any:
    if dtype == _F64:
        raise NotImplementedError(
            "truncated_normal: float64 needs a float64 erf, which baton does not "
            "implement yet; draw float32 and convert"
        )
    return lax.astype(_float_ops.erf32(lax.astype(x, _F32)), dtype)


def _normal_impl(data: Any, *, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    if dtype.kind == "c":
        # As JAX: real and imaginary parts from the two halves of
        # split(key), each of variance 1/2.
        real = np.dtype(np.float32) if dtype == np.complex64 else np.dtype(np.float64)
        keys = _keys._split_impl(data, shape=(2,))
        re, im = (
            _normal_impl(
                lax.reshape(lax.slice(keys, (i, 0), (i + 1, 2)), (2,)),
                shape=shape,
                dtype=real,
            )
            for i in range(2)
        )
        return lax.div(lax.complex(re, im), lax.full((), np.sqrt(2), dtype))
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = uniform_core(
        data, lax.constant(lo), lax.constant(np.array(1.0, dtype)), shape, dtype
    )
    return lax.mul(np.array(np.sqrt(2), dtype), _erf_inv(u, dtype))


def normal(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard normal floats: ``sqrt(2) * erf_inv(u)`` for u uniform in
    (-1, 1), as JAX computes them (XLA's erf_inv: JAX's values). A complex
    ``dtype`` draws the real and imaginary parts from ``split(key)``, each
    of variance 1/2 (JAX's)."""
    data, _ = _keys.single_key(key, "normal")
    shape = _keys.canonical_shape(shape, "normal")
    if dtype is not None and _dtypes.canonicalize(dtype).kind == "c":
        d = _dtypes.canonicalize(dtype)
    else:
        d = float_dtype(dtype, "normal")
    return _ops.apply(_normal_impl, (data,), (("shape", shape), ("dtype", d)))


def _next_after(x: Any, upward: bool, dtype: np.dtype) -> Any:
    if dtype == _F32:
        return _float_ops.next_after(x, upward)
    # 16-bit floats: the neighbour from float32 (exact there, and the
    # same construction as next_after with the narrow type's precision).
    info = ml_dtypes.finfo(dtype)
    sign = 1.0 if upward else -1.0
    x32 = lax.astype(x, _F32)
    step = lax.maximum(
        lax.mul(lax.abs(x32), 1.25 * 2.0 ** -(int(info.nmant) + 1)),
        float(info.smallest_subnormal),
    )
    r = lax.astype(lax.add(x32, lax.mul(step, sign)), dtype)
    edge = -np.inf if upward else np.inf
    return lax.select(lax.eq(x, edge), lax.full((), -sign * float(info.max), dtype), r)


def _truncated_normal_impl(
    data: Any, lower: Any, upper: Any, *, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.astype(lower, dtype)
    upper = lax.astype(upper, dtype)
    # XLA rewrites x / constant as x * (1 / constant), the reciprocal
    # rounded to dtype; the rounding differs from a true division.
    inv_sqrt2 = np.array(1.0, dtype) / sqrt2
    a = _erf(lax.mul(lower, inv_sqrt2), dtype)
    b = _erf(lax.mul(upper, inv_sqrt2), dtype)
    u = uniform_core(data, a, b, shape, dtype)
    out = lax.mul(sqrt2, _erf_inv(u, dtype))
    # The open interval (lower, upper), as JAX clips.
    out = lax.maximum(out, _next_after(lower, True, dtype))
    return lax.minimum(out, _next_after(upper, False, dtype))


def truncated_normal(
    key: Any, lower: Any, upper: Any, shape: Any = None, dtype: Any = None
) -> Any:
    """Standard normal floats truncated to (lower, upper); ``shape``
    defaults to the broadcast shape of lower and upper."""
    data, _ = _keys.single_key(key, "truncated_normal")
    d = float_dtype(dtype, "truncated_normal")
    if shape is None:
        shape = tuple(broadcast_shapes(_ops.shape_of(lower), _ops.shape_of(upper)))
    else:
        shape = _keys.canonical_shape(shape, "truncated_normal")
        _check_param_shapes("truncated_normal", shape, lower, upper)
    args = (data, _host_or_traced(lower, d), _host_or_traced(upper, d))
    return _ops.apply(_truncated_normal_impl, args, (("shape", shape), ("dtype", d)))


# ---- bernoulli ----


def _bernoulli_impl(data: Any, p: Any, *, shape: tuple[int, ...]) -> Any:
    d = np.dtype(p.dtype)
    u = uniform_core(data, lax.zeros((), d), lax.full((), 1.0, d), shape, d)
    return lax.lt(u, p)


def bernoulli(key: Any, p: Any = 0.5, shape: Any = None) -> Any:
    """Booleans that are True with probability p (a float or float array,
    broadcast to ``shape``; ``shape`` defaults to p's shape)."""
    data, _ = _keys.single_key(key, "bernoulli")
    pd = _ops.dtype_of(p)
    if pd is None:  # a Python scalar
        if not isinstance(p, float):
            raise TypeError(
                f"bernoulli probability `p` must have a floating dtype, got "
                f"{type(p).__name__}; pass e.g. 0.5, not 1"
            )
        pd = _F64 if _x64() else _F32
    if pd not in _FLOATS:
        raise TypeError(
            f"bernoulli probability `p` must have a floating dtype, got {pd}."
        )
    if shape is None:
        shape = _ops.shape_of(p)
    else:
        shape = _keys.canonical_shape(shape, "bernoulli")
        _check_param_shapes("bernoulli", shape, p)
    return _ops.apply(
        _bernoulli_impl, (data, _host_or_traced(p, pd)), (("shape", shape),)
    )


# ---- randint ----


def _urem(x: Any, s: Any) -> Any:
    """x % s for uint32, with XLA's x % 0 == x (baton's rem has no defined
    result for a zero divisor)."""
    zero = lax.eq(s, 0)
    safe = lax.select(zero, lax.full((), 1, _U32), s)
    return lax.select(zero, x, lax.rem(x, safe))


def _randint_impl(
    data: Any, minval: Any, maxval: Any, *, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    """JAX's ``_randint`` for a 32-bit dtype (int32 or uint32). minval and
    maxval arrive as integers of any width and are handled in int64, where
    JAX's clipping to the dtype's range gives the same values."""
    info = np.iinfo(dtype)
    lo = lax.astype(minval, _I64)
    hi = lax.astype(maxval, _I64)
    out_of_range = lax.gt(hi, int(info.max))
    lo = lax.minimum(lax.maximum(lo, int(info.min)), int(info.max))
    hi = lax.minimum(lax.maximum(hi, int(info.min)), int(info.max))
    k = _keys._split_impl(data, shape=(2,))
    higher = _keys.random_bits(
        lax.reshape(lax.slice(k, (0, 0), (1, 2)), (2,)), 32, shape
    )
    lower = _keys.random_bits(
        lax.reshape(lax.slice(k, (1, 0), (2, 2)), (2,)), 32, shape
    )
    # maxval - minval in the dtype, seen as unsigned: the int64 difference
    # taken modulo 2**32.
    span = lax.astype(lax.sub(hi, lo), _U32)
    empty = lax.le(hi, lo)
    span = lax.select(empty, lax.full((), 1, _U32), span)
    # maxval beyond the dtype: the range includes the dtype's maximum.
    span = lax.select(
        lax.bitwise_and(out_of_range, lax.bitwise_not(empty)), lax.add(span, 1), span
    )
    # (higher * 2**32 + lower) % span, with 2**32 % span from (2**16 % span)**2.
    multiplier = _urem(lax.full((), 1 << 16, _U32), span)
    multiplier = _urem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(_urem(higher, span), multiplier), _urem(lower, span))
    offset = _urem(offset, span)
    result = lax.add(lax.astype(lo, dtype), lax.astype(offset, dtype))
    return lax.broadcast_to(result, shape)


def _int_operand(value: Any, name: str) -> Any:
    """minval / maxval as integer operands: Python ints as int32 (as JAX
    without x64; OverflowError beyond), floats truncated to int32."""
    if _ops.is_scalar(value) or isinstance(value, (list, tuple)):
        a = np.asarray(value)
        if a.dtype.kind in "iub":
            if a.size and (a.min() < -(2**31) or a.max() >= 2**31) and not _x64():
                raise OverflowError(
                    f"randint: {name}={value!r} does not fit in int32; pass a numpy "
                    "integer array of a wider dtype"
                )
            return a.astype(_I64 if _x64() else _I32)
        return a.astype(_I32)
    d = _ops.dtype_of(value)
    if d is not None and d.kind not in "iub":
        if isinstance(value, (np.ndarray, np.generic)):
            return np.asarray(value).astype(_I32)
        return _ops.apply(_astype_impl, (value,), (("dtype", _I32),))
    return value


def randint(key: Any, shape: Any, minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Uniform integers in [minval, maxval) of ``shape`` and integer
    ``dtype`` (int32 by default), with JAX's algorithm (a remainder of 64
    random bits; 8- and 16-bit dtypes sample in int32). int64/uint64
    results are not supported (baton has no uint64 for the 128-bit step)."""
    data, _ = _keys.single_key(key, "randint")
    shape = _keys.canonical_shape(shape, "randint")
    d = _I32 if dtype is None else _dtypes.canonicalize(dtype)
    if d.kind not in "iu":
        raise TypeError(f"randint only accepts integer dtypes, got {d}")
    if d.itemsize == 8:
        raise TypeError(
            f"randint: {d.name} needs 64-bit unsigned arithmetic, which baton lacks; "
            "use int32 or uint32"
        )
    _check_param_shapes("randint", shape, minval, maxval)
    lo, hi = _int_operand(minval, "minval"), _int_operand(maxval, "maxval")
    sample = d
    if d.itemsize < 4:
        # JAX samples narrow types in int32, with bounds clipped to the type
        # (maxval one above its maximum).
        info = np.iinfo(d)
        lo = _clip_int(lo, int(info.min), int(info.max))
        hi = _clip_int(hi, int(info.min), int(info.max) + 1)
        sample = _I32
    out = _ops.apply(
        _randint_impl, (data, lo, hi), (("shape", shape), ("dtype", sample))
    )
    if sample != d:
        out = _ops.apply(_astype_impl, (out,), (("dtype", d),))
    return out


def _astype_impl(x: Any, *, dtype: np.dtype) -> Any:
    return lax.astype(x, dtype)


def _clip_impl(x: Any, *, lo: int, hi: int) -> Any:
    return lax.minimum(lax.maximum(lax.astype(x, _I32), lo), hi)


def _clip_int(x: Any, lo: int, hi: int) -> Any:
    return _ops.apply(_clip_impl, (x,), (("lo", lo), ("hi", hi)))
