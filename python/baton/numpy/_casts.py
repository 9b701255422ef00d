"""dtype casts and queries (``astype``, ``isdtype``) and the accessors of
complex numbers (``real``, ``imag``, ``conj``, ``angle``); on real operands
``real`` and ``conj`` give the value, ``imag`` zeros and ``angle`` 0 or pi,
as numpy's."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from baton import _ops
from baton._baton import lax
from baton._jit import device_put
from baton.numpy import _creation
from baton.numpy import _operands as _c

_BOOL = np.dtype(np.bool_)

__all__ = [
    "angle",
    "astype",
    "conj",
    "conjugate",
    "imag",
    "isdtype",
    "real",
]


# ---- dtype casts and complex accessors ----


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (an array of that dtype is returned as is
    unless ``copy=True``)."""
    if dtype is None:
        raise TypeError("astype: `dtype` must be a dtype, not None")
    out = _creation.asarray(x, dtype=dtype, copy=copy)
    if device is not None:
        out = device_put(out, device)
    return out


def _real_impl(x: Any) -> Any:
    return lax.real(_ops.as_tracer(x))


def real(val: Any, /) -> Any:
    """The real part (float32 for complex64; ``val`` itself for real data).

    >>> bnp.real(bnp.asarray([1 + 2j]))   # [1.]
    """
    return _ops.apply(_real_impl, (val,))


def _conj_impl(x: Any) -> Any:
    return lax.conj(_ops.as_tracer(x))


def conj(x: Any, /) -> Any:
    """The complex conjugate (``x`` itself for real data).

    >>> bnp.conj(bnp.asarray([1 + 2j]))   # [1.-2.j]
    """
    return _ops.apply(_conj_impl, (x,))


conjugate = conj


def _imag_impl(x: Any) -> Any:
    return lax.imag(_ops.as_tracer(x))


def imag(val: Any, /) -> Any:
    """The imaginary part (float32 for complex64; zeros of ``val``'s shape
    and dtype for real data).

    >>> bnp.imag(bnp.asarray([1 + 2j]))   # [2.]
    """
    return _ops.apply(_imag_impl, (val,))


def _angle_impl(z: Any, *, deg: bool) -> Any:
    t0 = _ops.as_tracer(z)
    if _ops.is_complex(np.dtype(t0.dtype)):
        out = lax.atan2(lax.imag(t0), lax.real(t0))
        if deg:
            out = lax.mul(out, lax.full((), 180.0 / math.pi, np.dtype(out.dtype)))
        return out
    t, d = _c.inexact(z)
    t = t[0]
    out = lax.atan2(lax.full(tuple(t.shape), 0, np.dtype(t.dtype)), t)
    if deg:
        out = lax.mul(out, lax.full((), 180.0 / math.pi, np.dtype(out.dtype)))
    return _c.down(out, d)


def angle(z: Any, deg: bool = False) -> Any:
    """The argument of ``z``: atan2(imag, real) for complex data; for real
    data 0 for x >= +0, pi for x < 0 and -0.0, NaN for NaN (in degrees with
    ``deg=True``); integers and bool give float32."""
    return _ops.apply(_angle_impl, (z,), (("deg", bool(deg)),))


# ---- dtype queries ----

_KINDS: dict[str, Callable[[np.dtype], bool]] = {
    "bool": lambda d: d == _BOOL,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: _ops.is_float(d),
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d != _BOOL,
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, one of 'bool', 'signed
    integer', 'unsigned integer', 'integral', 'real floating', 'complex
    floating', 'numeric', or a tuple of these."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"isdtype: `dtype` must be a dtype, not {dtype!r}") from None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            test = _KINDS.get(k)
            if test is None:
                raise ValueError(
                    f"isdtype: unknown kind {k!r}; use one of {sorted(_KINDS)} or "
                    "a dtype"
                )
            if test(d):
                return True
        else:
            try:
                kd = np.dtype(k)
            except TypeError:
                raise TypeError(
                    f"isdtype: `kind` entries must be dtypes or kind names, not {k!r}"
                ) from None
            if kd == d:
                return True
    return False
