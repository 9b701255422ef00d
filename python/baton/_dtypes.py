"""baton's dtypes as numpy dtypes (bfloat16 from ml_dtypes).

Python scalars follow JAX's default (64-bit types disabled): ``bool`` ->
bool, ``int`` -> int32, ``float`` -> float32. numpy arrays and scalars keep
their dtype (baton has float64 and int64).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from baton import _baton

bfloat16 = np.dtype(ml_dtypes.bfloat16)

# Every dtype baton supports, by name ("float32", "bfloat16", ...).
SUPPORTED: dict[str, np.dtype] = {d.name: d for d in _baton._numpy_dtypes}

_PYTHON_TYPES: dict[type, np.dtype] = {
    bool: np.dtype(np.bool_),
    int: np.dtype(np.int32),
    float: np.dtype(np.float32),
}


def _unsupported(what: Any) -> TypeError:
    return TypeError(
        f"baton does not support dtype {what}; supported dtypes: {', '.join(SUPPORTED)}"
    )


def canonicalize(dtype: Any) -> np.dtype:
    """The numpy dtype for a user's ``dtype=`` argument (TypeError if baton
    lacks it). Python's ``bool``/``int``/``float`` mean bool/int32/float32."""
    if isinstance(dtype, type) and dtype in _PYTHON_TYPES:
        return _PYTHON_TYPES[dtype]
    if isinstance(dtype, str) and dtype in SUPPORTED:
        return SUPPORTED[dtype]
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{dtype!r} is not a dtype") from None
    if d.name not in SUPPORTED or SUPPORTED[d.name] != d:
        raise _unsupported(d)
    return d


def name_of(dtype: np.dtype) -> str:
    """baton's name for a numpy dtype; TypeError for dtypes baton lacks
    (object, complex, uint16, uint64, strings, structured, ...)."""
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
    """The dtype a Python scalar becomes (weakly typed: bool, int32, float32)."""
    if isinstance(value, bool):
        return _PYTHON_TYPES[bool]
    if isinstance(value, int):
        return _PYTHON_TYPES[int]
    if isinstance(value, float):
        return _PYTHON_TYPES[float]
    if isinstance(value, complex):
        raise TypeError("baton does not support complex numbers")
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
