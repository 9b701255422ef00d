"""``bt.dtypes``: ``jax.dtypes``' names over baton's dtypes.

    from baton import dtypes
    dtypes.canonicalize_dtype("float64")   # float32 unless x64 is on
    dtypes.issubdtype(dtypes.bfloat16, np.floating)   # True

What each name does, as in JAX:

- ``canonicalize_dtype(dtype)``: the dtype baton stores for a requested
  one: with 64-bit types off (the default) float64 / int64 / uint64 /
  complex128 give float32 / int32 / uint32 / complex64; Python ``bool``,
  ``int``, ``float``, ``complex`` give bool / int32 / float32 / complex64
  (their 64-bit forms with x64 on). No warning (``dtype=`` arguments warn).
- ``issubdtype(a, b)``: numpy's, with bfloat16 a floating type and typed
  PRNG keys (``bt.random.key``; dtype ``key<fry>``) a ``prng_key``.
- ``result_type(*args, return_weak_type_flag=False)``: JAX's promotion
  (Python scalars weakly typed).
- ``finfo`` / ``iinfo`` (ml_dtypes', bfloat16 included), ``bfloat16``,
  ``float0`` (the dtype JAX gives the gradients of integer inputs: baton
  never produces it -- it gives zeros of the input's own dtype -- but code
  may compare against it), ``extended`` / ``prng_key`` (abstract scalar
  types for ``issubdtype``), ``scalar_type_of``, ``itemsize_bits``,
  ``TypePromotionError``.
"""

from __future__ import annotations

from typing import Any

from baton import errors as _errors

import ml_dtypes
import numpy as np

from baton import _dtypes

__all__ = [
    "TypePromotionError",
    "bfloat16",
    "canonicalize_dtype",
    "extended",
    "finfo",
    "float0",
    "iinfo",
    "issubdtype",
    "itemsize_bits",
    "prng_key",
    "result_type",
    "scalar_type_of",
]

bfloat16 = ml_dtypes.bfloat16
finfo = ml_dtypes.finfo
iinfo = ml_dtypes.iinfo

# A zero-size structured dtype: JAX's type of the tangent / cotangent of an
# integer or bool value. baton has no arrays of it.
float0 = np.dtype([("float0", np.void, 0)])


# Defined in baton._dtypes, where jnp.issubdtype's twin needs them too.
extended = _dtypes.extended
prng_key = _dtypes.prng_key


TypePromotionError = _errors.TypePromotionError


_PY_SCALARS_32 = {
    bool: np.dtype(np.bool_),
    int: np.dtype(np.int32),
    float: np.dtype(np.float32),
    complex: np.dtype(np.complex64),
}
_PY_SCALARS_64 = {
    bool: np.dtype(np.bool_),
    int: np.dtype(np.int64),
    float: np.dtype(np.float64),
    complex: np.dtype(np.complex128),
}
_WIDE_TO_NARROW = {
    np.dtype(np.float64): np.dtype(np.float32),
    np.dtype(np.int64): np.dtype(np.int32),
    np.dtype(np.uint64): np.dtype(np.uint32),
    np.dtype(np.complex128): np.dtype(np.complex64),
}


def _is_key_dtype(d: Any) -> bool:
    return isinstance(d, str) and d.startswith("key<")


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> Any:
    """The dtype baton uses for ``dtype`` (see the module doc); numpy
    dtypes baton cannot store still canonicalize, as in JAX."""
    if _is_key_dtype(dtype):
        if allow_extended_dtype:
            return dtype
        raise ValueError(
            f"canonicalize_dtype: {dtype} is a PRNG key type, not a numpy dtype; "
            "pass allow_extended_dtype=True"
        )
    x64 = _dtypes.x64_enabled()
    if isinstance(dtype, type) and dtype in _PY_SCALARS_32:
        return (_PY_SCALARS_64 if x64 else _PY_SCALARS_32)[dtype]
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"canonicalize_dtype: {dtype!r} is not a dtype") from None
    return d if x64 else _WIDE_TO_NARROW.get(d, d)


def issubdtype(a: Any, b: Any) -> bool:
    """Whether dtype ``a`` is ``b`` or a kind of it (``b`` may be an abstract
    type such as ``np.floating``, ``np.integer``, ``prng_key``).

    Example: ``bt.dtypes.issubdtype(bt.random.key(0).dtype,
    bt.dtypes.prng_key)`` is True."""
    return _dtypes.issubdtype(a, b)


# Kinds in promotion order. A weakly typed operand (a Python int / float /
# complex, or that type) decides the result's kind only when its kind is
# above every strongly typed operand's; the result is then weak.
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}
_PY_ZERO = {bool: False, int: 0, float: 0.0, complex: 0j}
_PY_RANK = {int: 1, float: 2, complex: 3}


def _weak_rank(x: Any) -> int | None:
    """The kind rank of a weakly typed operand; None for a strong one."""
    if isinstance(x, type):
        return _PY_RANK.get(x)
    if type(x) in _PY_RANK:  # Python bools are strong bools
        return _PY_RANK[type(x)]
    if getattr(x, "weak_type", False):
        return _KIND_RANK.get(np.dtype(x.dtype).kind, 2)
    return None


def _strong_rank(x: Any) -> int:
    if isinstance(x, bool):
        return 0
    if isinstance(x, (np.dtype, str, type)):
        d = canonicalize_dtype(x)
    else:
        d = np.dtype(x.dtype)
    return _KIND_RANK.get(d.kind, 2)


def _as_operand(a: Any) -> Any:
    """An argument as baton.numpy.result_type promotes it: Python's scalar
    types as (weak) Python scalars, dtypes and numpy data canonicalized."""
    if isinstance(a, type) and a in _PY_ZERO:
        return _PY_ZERO[a]
    if isinstance(a, (np.dtype, str, type)):
        return canonicalize_dtype(a)
    if isinstance(a, (np.ndarray, np.generic)):
        return np.empty((), canonicalize_dtype(a.dtype))
    return a


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The dtype an operation on ``args`` gives (arrays, dtypes, scalars)
    by JAX's promotion rules; with ``return_weak_type_flag=True``, the pair
    ``(dtype, weak)``: whether the result is weakly typed (a Python int /
    float / complex decided its kind)."""
    from baton.numpy import _dtypes as _np_dtypes

    if not args:
        raise ValueError("result_type: at least one argument is required")
    d = np.dtype(_np_dtypes.result_type(*(_as_operand(a) for a in args)))
    if not return_weak_type_flag:
        return d
    ranks = [(_weak_rank(a), a) for a in args]
    weak = [r for r, _ in ranks if r is not None]
    strong = max((_strong_rank(a) for r, a in ranks if r is None), default=-1)
    return d, bool(weak) and max(weak) > strong


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool, int, float, complex) of ``x``'s
    dtype."""
    d = np.dtype(x) if isinstance(x, (np.dtype, type, str)) else _dtype_of(x)
    if d == np.dtype(np.bool_):
        return bool
    if issubdtype(d, np.integer):
        return int
    if issubdtype(d, np.floating):
        return float
    if issubdtype(d, np.complexfloating):
        return complex
    raise TypeError(f"scalar_type_of: no Python scalar type for dtype {d}")


def _dtype_of(x: Any) -> np.dtype:
    if isinstance(x, (bool, int, float, complex)):
        return canonicalize_dtype(type(x))
    return np.dtype(x.dtype)


def itemsize_bits(dtype: Any) -> int:
    """The size of one element of ``dtype``, in bits."""
    d = np.dtype(dtype)
    if d == np.dtype(np.bool_):
        return 8
    return d.itemsize * 8
