"""``bt.dlpack``: JAX's ``jax.dlpack``: ``from_dlpack`` (the same function
as ``bt.from_dlpack``) and ``is_supported_dtype``."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton._dlpack import from_dlpack
from baton._dtypes import bfloat16

__all__ = ["from_dlpack", "is_supported_dtype"]

_SUPPORTED = frozenset(
    np.dtype(t)
    for t in (
        np.bool_, np.int8, np.int16, np.int32, np.int64,
        np.uint8, np.uint16, np.uint32, np.uint64,
        np.float16, np.float32, np.float64, np.complex64, np.complex128,
    )
) | {np.dtype(bfloat16)}


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of ``dtype`` can be exchanged through DLPack (JAX's
    set: bool, the integers, float16/32/64, bfloat16, complex64/128)."""
    return np.dtype(dtype) in _SUPPORTED
