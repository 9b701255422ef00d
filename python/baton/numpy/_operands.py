"""How ``baton.numpy``'s math modules take their operands (not public):
the inexact and working dtypes (float32 for integers, float32 math for
float16/bfloat16), ``dtype=`` and ``out=`` arguments, concrete values for
functions that need them on the host, and ``ndim``."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _dtypes, _ops
from baton._baton import Array, lax

Tracer = lax.Tracer

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
I32 = np.dtype(np.int32)
BOOL = np.dtype(np.bool_)


def is_half(d: np.dtype) -> bool:
    return d.itemsize == 2 and _ops.is_float(d)


def inexact_dtype(*xs: Any) -> np.dtype:
    """The promoted dtype of the operands, integers and bool as float32
    (JAX's promote_args_inexact)."""
    d = _ops.result_dtype(*xs)
    return d if _ops.is_float(d) else F32


def work_dtype(d: np.dtype) -> np.dtype:
    """The dtype a multi-step float computation of result dtype d runs in:
    float16 and bfloat16 in float32 (rounded once at the end)."""
    return F32 if is_half(d) else d


def inexact(*xs: Any) -> tuple[list[Any], np.dtype]:
    """The operands as Tracers of their inexact promoted dtype (half floats
    widened to float32); and the dtype to round the result to."""
    d = inexact_dtype(*xs)
    return [_ops.as_tracer(x, d) for x in xs], d


def widened(*xs: Any) -> tuple[list[Any], np.dtype]:
    """As :func:`inexact`, with float16/bfloat16 computed in float32."""
    ts, d = inexact(*xs)
    w = work_dtype(d)
    return [t if t.dtype == w else lax.astype(t, w) for t in ts], d


def down(t: Any, d: np.dtype) -> Any:
    return t if t.dtype == d else lax.astype(t, d)


def dtype_arg(dtype: Any) -> np.dtype | None:
    return None if dtype is None else _dtypes.canonicalize(dtype)


def no_out(name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(
            f"{name}: out= is not supported (arrays are immutable)"
        )


def is_traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def concrete(x: Any, name: str, what: str) -> np.ndarray:
    """x's values on the host; ConcretizationTypeError for a Tracer."""
    if isinstance(x, Tracer):
        from baton.errors import ConcretizationTypeError

        raise ConcretizationTypeError(
            f"{name}: {what} depends on the values of a traced array, which are "
            "not known while tracing; pass it explicitly as a static Python value"
        )
    if isinstance(x, Array):
        return np.asarray(x)
    return _ops.host_array(x)


def sum_dtype(d: np.dtype) -> np.dtype:
    """jnp.sum's result dtype for input dtype d (small integers widened)."""
    if d == BOOL or d in (np.dtype(np.int8), np.dtype(np.int16)):
        return I32
    if d == np.dtype(np.uint8):
        return np.dtype(np.uint32)
    return d


def ndim_of(x: Any) -> int:
    return len(_ops.shape_of(x))
