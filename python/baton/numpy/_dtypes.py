"""dtype names of ``baton.numpy``: numpy dtypes (bfloat16 from ml_dtypes),
JAX's promotion rules and type information."""

from __future__ import annotations

import builtins
from typing import Any

import ml_dtypes
import numpy as np

from baton import _dtypes, _ops

__all__ = [
    "ComplexWarning",
    "bfloat16",
    "bool",
    "bool_",
    "cdouble",
    "character",
    "complex_",
    "csingle",
    "double",
    "euler_gamma",
    "flexible",
    "float_",
    "int_",
    "object_",
    "single",
    "can_cast",
    "complex64",
    "complex128",
    "complexfloating",
    "dtype",
    "e",
    "finfo",
    "float16",
    "float32",
    "float64",
    "floating",
    "generic",
    "iinfo",
    "inexact",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "integer",
    "issubdtype",
    "nan",
    "newaxis",
    "number",
    "pi",
    "promote_types",
    "result_type",
    "signedinteger",
    "uint8",
    "uint32",
    "unsignedinteger",
]

bool_ = np.bool_
int8 = np.int8
int16 = np.int16
int32 = np.int32
int64 = np.int64
uint8 = np.uint8
uint32 = np.uint32
float16 = np.float16
bfloat16 = ml_dtypes.bfloat16
float32 = np.float32
float64 = np.float64
# numpy's abstract scalar types, for issubdtype.
generic = np.generic
number = np.number
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating
complex64 = np.complex64
complex128 = np.complex128
# JAX's (and numpy's) other names of the same types: the C names and the
# default-width aliases (64-bit, which x64 off makes 32-bit as data enters).
_builtin_bool = builtins.bool
bool = np.bool_  # noqa: A001 -- jnp.bool
single = np.float32
double = np.float64
float_ = np.float64
int_ = np.int64
csingle = np.complex64
cdouble = np.complex128
complex_ = np.complex128
# numpy's abstract types that JAX re-exports (for issubdtype): no baton
# array has them.
character = np.character
flexible = np.flexible
object_ = np.object_
ComplexWarning = np.exceptions.ComplexWarning
euler_gamma = float(np.euler_gamma)

dtype = np.dtype
newaxis = None
pi = np.pi
e = np.e
inf = np.inf
nan = np.nan


def _canonical(x: Any) -> np.dtype:
    """A dtype argument, an array or a scalar as baton's dtype."""
    if isinstance(x, (np.dtype, type, str)):
        return _dtypes.canonicalize(x)
    d = _ops.dtype_of(x)
    return _ops.weak_dtype(x, None) if d is None else d


def promote_types(type1: Any, type2: Any) -> np.dtype:
    """The dtype two dtypes promote to (JAX's rules: integers with floats
    give the float, float16 with bfloat16 gives float32)."""
    return _ops.promote_types(_dtypes.canonicalize(type1), _dtypes.canonicalize(type2))


def result_type(*args: Any) -> np.dtype:
    """The dtype of an operation on ``args`` (arrays, dtypes or scalars;
    Python scalars are weakly typed)."""
    vals = [a if _ops.is_scalar(a) else np.empty((), _canonical(a)) for a in args]
    return _ops.result_dtype(*vals)


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """numpy's issubdtype; bfloat16 counts as a floating type, and key
    dtypes as ``bt.dtypes.prng_key`` (``bt.dtypes.issubdtype``, as
    ``jnp.issubdtype`` is ``jax.dtypes.issubdtype``).

    Example: ``bnp.issubdtype(bt.random.key(0).dtype, bt.dtypes.prng_key)``
    is True; ``bnp.issubdtype(bnp.int16, bnp.signedinteger)`` is True."""
    return _builtin_bool(_dtypes.issubdtype(arg1, arg2))


def finfo(dtype: Any) -> Any:
    """Machine limits of a floating dtype (bfloat16 included)."""
    return ml_dtypes.finfo(dtype)


def iinfo(dtype: Any) -> Any:
    """Machine limits of an integer dtype."""
    return np.iinfo(dtype)


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """Whether values of ``from_`` convert to ``to`` without loss (numpy's
    rule; bfloat16 via ml_dtypes)."""
    return _builtin_bool(np.can_cast(_canonical(from_), _canonical(to), casting))
