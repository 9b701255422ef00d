"""Comparisons of whole arrays (isclose, allclose, array_equal,
array_equiv) and type predicates (isreal, iscomplex, isrealobj,
iscomplexobj, isscalar, iterable)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops
from baton._baton import Array, lax
from baton.numpy import _operands as _c

Tracer = lax.Tracer

_I32 = np.dtype(np.int32)
_BOOL = np.dtype(np.bool_)

__all__ = [
    "allclose",
    "array_equal",
    "array_equiv",
    "isclose",
    "iscomplex",
    "iscomplexobj",
    "isin",
    "isreal",
    "isrealobj",
    "isscalar",
    "iterable",
]

# ---- comparisons of whole arrays ----


def _isclose_impl(a: Any, b: Any, rtol: Any, atol: Any, *, equal_nan: bool) -> Any:
    d = _ops.result_dtype(a, b)
    if not _ops.is_float(d):
        # Integers and bool: numpy's test, in float32 (exact for small values).
        d = _c.F32
    x, y = _ops.as_tracer(a, d), _ops.as_tracer(b, d)
    w = _c.work_dtype(d)
    x, y = lax.astype(x, w), lax.astype(y, w)
    rt, at = lax.astype(_ops.as_tracer(rtol), w), lax.astype(_ops.as_tracer(atol), w)
    close = lax.le(lax.abs(lax.sub(x, y)), lax.add(at, lax.mul(rt, lax.abs(y))))
    inf = lax.bitwise_or(
        lax.eq(lax.abs(x), float("inf")), lax.eq(lax.abs(y), float("inf"))
    )
    close = lax.select(inf, lax.eq(x, y), close)
    if equal_nan:
        close = lax.bitwise_or(close, lax.bitwise_and(lax.ne(x, x), lax.ne(y, y)))
    return close


def isclose(
    a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False
) -> Any:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (bool); infinities are
    close only to themselves, NaN only with ``equal_nan``.

    >>> bnp.isclose(bnp.array([1.0, 2.0]), [1.0 + 1e-7, 2.1])   # [True, False]
    """
    return _ops.apply(
        _isclose_impl,
        (a, b, rtol, atol),
        (("equal_nan", bool(equal_nan)),),
        weak_ref=(0, 1),
    )


def _allclose_impl(a: Any, b: Any, rtol: Any, atol: Any, *, equal_nan: bool) -> Any:
    return lax.min(_isclose_impl(a, b, rtol, atol, equal_nan=equal_nan))


def allclose(
    a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False
) -> Any:
    """Whether every element of ``a`` is close to ``b`` (a 0-d bool array;
    see :func:`isclose`).

    >>> bool(bnp.allclose(bnp.ones(3), 1.0))   # True
    """
    return _ops.apply(
        _allclose_impl,
        (a, b, rtol, atol),
        (("equal_nan", bool(equal_nan)),),
        weak_ref=(0, 1),
    )


def _false() -> Any:
    from baton.numpy import _creation

    return _creation.asarray(False)


def _equal_impl(a: Any, b: Any, *, equal_nan: bool) -> Any:
    x, y = _ops.promote(a, b)
    eq = lax.eq(x, y)
    if equal_nan and _ops.is_float(np.dtype(x.dtype)):
        eq = lax.bitwise_or(eq, lax.bitwise_and(lax.ne(x, x), lax.ne(y, y)))
    return lax.min(eq) if eq.shape else eq


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Whether the two arrays have the same shape and elements (a 0-d bool
    array; NaN equals NaN only with ``equal_nan``).

    >>> bool(bnp.array_equal(bnp.arange(3), [0, 1, 2]))   # True
    """
    if _ops.shape_of(a1) != _ops.shape_of(a2):
        return _false()
    return _ops.apply(_equal_impl, (a1, a2), (("equal_nan", bool(equal_nan)),))


def array_equiv(a1: Any, a2: Any) -> Any:
    """Whether the two arrays broadcast together and are equal everywhere
    (a 0-d bool array).

    >>> bool(bnp.array_equiv([1, 2], [[1, 2], [1, 2]]))   # True
    """
    try:
        np.broadcast_shapes(_ops.shape_of(a1), _ops.shape_of(a2))
    except ValueError:
        return _false()
    return _ops.apply(_equal_impl, (a1, a2), (("equal_nan", False),))


# ---- type predicates ----


def _imag_is_zero_impl(x: Any, *, zero: bool) -> Any:
    t = _ops.as_tracer(x)
    if not _ops.is_complex(np.dtype(t.dtype)):
        return lax.full(tuple(t.shape), zero)
    im = lax.imag(t)
    return lax.eq(im, 0) if zero else lax.ne(im, 0)


def isreal(x: Any) -> Any:
    """Whether each element's imaginary part is zero (all True for real
    data).

    >>> bnp.isreal(bnp.asarray([1 + 0j, 1j]))   # [True, False]
    """
    return _ops.apply(_imag_is_zero_impl, (x,), (("zero", True),))


def iscomplex(x: Any) -> Any:
    """Whether each element's imaginary part is nonzero (all False for real
    data).

    >>> bnp.iscomplex(bnp.asarray([1 + 0j, 1j]))   # [False, True]
    """
    return _ops.apply(_imag_is_zero_impl, (x,), (("zero", False),))


def isrealobj(x: Any) -> bool:
    """Whether x's type is not complex (a Python bool).

    >>> bnp.isrealobj(bnp.ones(2))   # True
    """
    return not iscomplexobj(x)


def iscomplexobj(x: Any) -> bool:
    """Whether x has a complex dtype (a Python bool).

    >>> bnp.iscomplexobj(1.0)   # False
    """
    if x is None:
        return False
    if isinstance(x, np.dtype) or (isinstance(x, type) and issubclass(x, np.generic)):
        return np.dtype(x).kind == "c"  # a dtype or scalar type, as JAX's
    d = getattr(x, "dtype", None)
    if d is not None:
        try:
            return np.dtype(d).kind == "c"
        except TypeError:
            return False
    if isinstance(x, complex):
        return True
    try:
        return np.asarray(x).dtype.kind == "c"
    except (TypeError, ValueError):
        return False


def isscalar(element: Any) -> bool:
    """Whether ``element`` is a scalar: a Python or numpy scalar, or an
    array (baton, numpy, Tracer) with no dimensions (as jnp.isscalar).

    >>> bnp.isscalar(3.0), bnp.isscalar(bnp.ones(())), bnp.isscalar([1])
    (True, True, False)
    """
    if isinstance(element, (Array, Tracer, np.ndarray)):
        return len(element.shape) == 0
    return bool(np.isscalar(element))


def iterable(y: Any) -> bool:
    """Whether ``iter(y)`` works (a 0-d array is not iterable).

    >>> bnp.iterable([1, 2]), bnp.iterable(2)   # True, False
    """
    if isinstance(y, (Array, Tracer, np.ndarray)):
        return len(y.shape) > 0
    try:
        iter(y)
    except TypeError:
        return False
    return True


def _isin_impl(element: Any, test: Any, *, invert: bool) -> Any:
    e, t = _ops.promote(element, test)
    shape = tuple(e.shape)
    k = int(np.prod(t.shape, dtype=np.int64))
    if k == 0:
        return lax.full(shape, bool(invert), _BOOL)
    e2 = lax.broadcast_in_dim(e, (*shape, k), tuple(range(len(shape))))
    t2 = lax.broadcast_in_dim(lax.reshape(t, (k,)), (*shape, k), (len(shape),))
    hit = lax.eq(e2, t2)
    found = lax.ne(
        lax.sum(lax.astype(hit, _I32), (len(shape),)), lax.full(shape, 0, _I32)
    )
    return lax.bitwise_not(found) if invert else found


def isin(
    element: Any,
    test_elements: Any,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    method: str = "auto",
) -> Any:
    """Whether each entry of ``element`` occurs in ``test_elements`` (bool,
    ``element``'s shape); ``invert=True`` gives the negation."""
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(
            f"isin: `method` must be 'auto', 'compare_all', 'binary_search' or "
            f"'sort', not {method!r}"
        )
    return _ops.apply(_isin_impl, (element, test_elements), (("invert", bool(invert)),))
