"""baton's dtypes as numpy dtypes (bfloat16 from ml_dtypes).

Python scalars follow JAX's default: ``bool`` -> bool, ``int`` -> int32,
``float`` -> float32, ``complex`` -> complex64 (weakly typed).

64-bit types follow JAX's x64 switch (``bt.config.update("enable_x64",
...)``, or ``BATON_ENABLE_X64=0/1`` before import). With it off (JAX's
default) numpy data of float64, int64, uint64 or complex128 becomes float32, int32,
uint32 or complex64 as it enters baton (``device_put``, operands, jit arguments,
constants a trace captures) and a requested 64-bit ``dtype=`` gives the
32-bit type with a ``UserWarning`` -- so memory is what a JAX user expects.
With it on, numpy data keeps its dtype (baton has float64, int64 and
complex128; not uint64).
"""

from __future__ import annotations

import warnings
from typing import Any

import ml_dtypes
import numpy as np

from baton import _baton

bfloat16 = np.dtype(ml_dtypes.bfloat16)

# Every dtype baton supports, by name ("float32", "bfloat16", ...).
SUPPORTED: dict[str, np.dtype] = {d.name: d for d in _baton._numpy_dtypes}

_NAMES_64 = ("float64", "int64", "uint64", "complex128")

_PYTHON_TYPES: dict[type, np.dtype] = {
    bool: np.dtype(np.bool_),
    int: np.dtype(np.int32),
    float: np.dtype(np.float32),
    complex: np.dtype(np.complex64),
}


_64_TO_32: dict[np.dtype, np.dtype] = {
    np.dtype(np.float64): np.dtype(np.float32),
    np.dtype(np.int64): np.dtype(np.int32),
    np.dtype(np.uint64): np.dtype(np.uint32),
    np.dtype(np.complex128): np.dtype(np.complex64),
}
# What host data of each dtype becomes now: the 64-bit -> 32-bit map with
# x64 off, empty with x64 on (set_x64 keeps it current; read it, never
# assign it).
NARROW: dict[np.dtype, np.dtype] = dict(_64_TO_32)


def set_x64(enabled: bool) -> None:
    """Turns 64-bit types on or off here and in the C++ bindings (bt.config
    calls this; use ``bt.config.update("enable_x64", ...)``)."""
    NARROW.clear()
    if not enabled:
        NARROW.update(_64_TO_32)
    _baton._set_enable_x64(bool(enabled))


def x64_enabled() -> bool:
    return not NARROW


def canonical(d: np.dtype) -> np.dtype:
    """The dtype host data of dtype ``d`` becomes (32-bit for 64-bit with x64
    off; ``d`` itself otherwise)."""
    return NARROW.get(d, d)


def narrow_host(a: np.ndarray) -> np.ndarray:
    """``a`` as baton takes it in: a float32/int32/uint32 copy of 64-bit data
    with x64 off, else ``a`` itself (no copy)."""
    n = NARROW.get(a.dtype)
    return a if n is None else a.astype(n)


def _unsupported(what: Any) -> TypeError:
    return TypeError(
        f"baton does not support dtype {what}; supported dtypes: {', '.join(SUPPORTED)}"
    )


def canonicalize(dtype: Any) -> np.dtype:
    """The numpy dtype for a user's ``dtype=`` argument (TypeError if baton
    lacks it). Python's ``bool``/``int``/``float`` mean bool/int32/float32.
    With x64 off a 64-bit request gives the 32-bit type and a UserWarning
    (as JAX)."""
    if isinstance(dtype, type) and dtype in _PYTHON_TYPES:
        return _PYTHON_TYPES[dtype]
    if isinstance(dtype, str) and dtype in SUPPORTED and dtype not in _NAMES_64:
        return SUPPORTED[dtype]
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{dtype!r} is not a dtype") from None
    narrow = NARROW.get(d)
    if narrow is not None:
        warnings.warn(
            f"explicitly requested dtype {d.name} is not available, and will be "
            f"truncated to dtype {narrow.name}: 64-bit types are off. To enable "
            'them, call bt.config.update("enable_x64", True) or set '
            "BATON_ENABLE_X64=1 before importing baton",
            UserWarning,
            stacklevel=3,
        )
        return narrow
    if d.name not in SUPPORTED or SUPPORTED[d.name] != d:
        raise _unsupported(d)
    return d


def name_of(dtype: np.dtype) -> str:
    """baton's name for a numpy dtype; TypeError for dtypes baton lacks
    (object, complex256, uint16, uint64, strings, structured, ...)."""
    name = dtype.name
    if name not in SUPPORTED or SUPPORTED[name] != dtype:
        if dtype == np.dtype(object):
            raise TypeError(
                "baton arrays cannot hold Python objects (numpy dtype=object); "
                "convert the data to a numeric numpy array first"
            )
        raise _unsupported(dtype)
    return name


def python_scalar_dtype(value: Any) -> np.dtype:
    """The dtype a Python scalar becomes (weakly typed: bool, int32, float32,
    complex64)."""
    if isinstance(value, bool):
        return _PYTHON_TYPES[bool]
    if isinstance(value, int):
        return _PYTHON_TYPES[int]
    if isinstance(value, float):
        return _PYTHON_TYPES[float]
    if isinstance(value, complex):
        return _PYTHON_TYPES[complex]
    raise TypeError(f"{type(value).__name__} is not a Python scalar")


def is_python_scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex))


def python_scalar_to_numpy(value: Any, dtype: np.dtype | None = None) -> np.ndarray:
    """A 0-d numpy array for a Python scalar; ``dtype`` defaults to the weak
    type. An int that does not fit raises OverflowError."""
    d = python_scalar_dtype(value) if dtype is None else dtype
    if isinstance(value, int) and not isinstance(value, bool) and d.kind in "iu":
        info = np.iinfo(d)
        if not info.min <= value <= info.max:
            raise OverflowError(
                f"Python int {value} does not fit in {d.name}; pass a numpy array "
                f"with an explicit dtype (e.g. np.int64) instead"
            )
    return np.asarray(value, dtype=d)


class extended(np.generic):
    """Abstract scalar type of dtypes that are not numpy's (``issubdtype``
    only; nothing is an instance of it)."""


class prng_key(extended):
    """Abstract scalar type of typed PRNG keys (``bt.random.key``):
    ``issubdtype(key.dtype, prng_key)`` is True for them."""


extended.__module__ = prng_key.__module__ = "baton.dtypes"


def _is_key_dtype(d: Any) -> bool:
    return isinstance(d, str) and d.startswith("key<")


_ABSTRACT = (
    np.generic,
    np.number,
    np.integer,
    np.signedinteger,
    np.unsignedinteger,
    np.inexact,
    np.floating,
    np.complexfloating,
    np.flexible,
    np.character,
)


def issubdtype(a: Any, b: Any) -> bool:
    """Whether dtype ``a`` is ``b`` or a kind of it (``b`` may be an abstract
    type such as ``np.floating``, ``np.integer``, ``prng_key``; key dtypes
    are ``prng_key``s, bfloat16 is floating). ``bt.dtypes.issubdtype`` and
    ``bnp.issubdtype``.

    Example: ``issubdtype(np.dtype(bfloat16), np.floating)`` is True."""
    if _is_key_dtype(a):
        return isinstance(b, type) and issubclass(prng_key, b)
    if isinstance(b, type) and issubclass(b, extended):
        return isinstance(a, type) and issubclass(a, b)
    if isinstance(a, type) and issubclass(a, extended):
        return isinstance(b, type) and issubclass(a, b)
    if isinstance(a, type) and issubclass(a, np.generic) and a in _ABSTRACT:
        # numpy's abstract types (np.floating ...) have no dtype
        if isinstance(b, type):
            return bool(issubclass(a, b))
        return bool(np.issubdtype(a, b))
    d = np.dtype(a)
    if d == bfloat16 and isinstance(b, type) and b in (
        np.floating,
        np.inexact,
        np.number,
        np.generic,
    ):
        return True
    return bool(np.issubdtype(d, b))
