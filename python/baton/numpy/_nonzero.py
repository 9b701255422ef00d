"""The indices of nonzero entries: nonzero, flatnonzero, argwhere.

Their result shape depends on values, so they run on concrete data eagerly
and need ``size=`` under ``bt.jit`` (else ``ConcretizationTypeError``), as in
JAX."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import Array, lax
from baton.errors import ConcretizationTypeError
from baton.numpy import _creation, _elementwise, _shapes
from baton.numpy import _operands as _c

Tracer = lax.Tracer
_I32 = np.dtype(np.int32)
_BOOL = np.dtype(np.bool_)

__all__ = [
    "argwhere",
    "flatnonzero",
    "nonzero",
]


# ---- nonzero, flatnonzero, argwhere ----


def _nonzero_impl(a: Any, *fills: Any, size: int) -> Any:
    from baton.numpy._selection import _nonzero_sized

    t = _ops.as_tracer(a)
    shape = tuple(t.shape)
    n = int(np.prod(shape, dtype=np.int64))
    m = t if t.dtype == _BOOL else lax.ne(t, lax.full(shape, 0, np.dtype(t.dtype)))
    pos = _nonzero_sized(lax.reshape(m, (n,)), size)
    missing = lax.eq(pos, lax.full((size,), n, _I32))
    out = []
    stride = n
    for k, s in enumerate(shape):
        stride //= s
        # No integer-division primitive: floor_divide's exact composition.
        c = _elementwise.remainder(_elementwise.floor_divide(pos, max(stride, 1)), s)
        f = lax.broadcast_to(_ops.as_tracer(fills[k], _I32), (size,))
        out.append(lax.select(missing, f, c))
    return tuple(out)


def _nonzero(name: str, a: Any, size: Any, fill_value: Any) -> tuple[Any, ...]:
    nd = _c.ndim_of(a)
    if nd == 0:
        raise ValueError(
            f"{name}: not defined for 0-d arrays; use bnp.atleast_1d(a) first"
        )
    if size is None:
        if fill_value is not None:
            raise ValueError(f"{name}: `fill_value` needs `size=`")
        if isinstance(a, Tracer):
            raise ConcretizationTypeError(
                f"{name}: `a` is a traced value inside a jit, but the result's "
                "shape depends on its values; pass a static `size=` (and "
                "optionally `fill_value=`), or call it outside jit"
            )
        h = np.asarray(a) if isinstance(a, Array) else _ops.host_array(a)
        return tuple(_creation.asarray(i.astype(np.int32)) for i in np.nonzero(h))
    try:
        size = operator.index(size)
    except TypeError:
        raise TypeError(
            f"{name}: `size` must be a static int, not {type(size).__name__}"
        ) from None
    if size < 0:
        raise ValueError(f"{name}: `size` must be >= 0, not {size}")
    if fill_value is None:
        fills: tuple[Any, ...] = (0,) * nd
    elif isinstance(fill_value, (tuple, list)):
        if len(fill_value) != nd:
            raise ValueError(
                f"{name}: `fill_value` has {len(fill_value)} entries; a tuple "
                f"needs one per dimension of `a` ({nd})"
            )
        fills = tuple(fill_value)
    else:
        if _c.ndim_of(fill_value) != 0:
            raise ValueError(
                f"{name}: `fill_value` must be a scalar or a tuple of scalars"
            )
        fills = (fill_value,) * nd
    return _ops.apply(_nonzero_impl, (a, *fills), (("size", size),), weak_ref=(0,))


def nonzero(
    a: Any, *, size: int | None = None, fill_value: Any = None
) -> tuple[Any, ...]:
    """The indices of ``a``'s nonzero entries, one int32 array per dimension.
    ``size=`` fixes their length (padded with ``fill_value``, default 0), as
    needed under ``bt.jit``."""
    return _nonzero("nonzero", a, size, fill_value)


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the nonzero entries of ``ravel(a)`` (see ``nonzero``
    for ``size=`` / ``fill_value=``)."""
    return _nonzero("flatnonzero", _shapes.ravel(a), size, fill_value)[0]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of ``a``'s nonzero entries as an (N, a.ndim) int32 array
    (see ``nonzero`` for ``size=`` / ``fill_value=``)."""
    nd = _c.ndim_of(a)
    idx = _nonzero("argwhere", _shapes.atleast_1d(a), size, fill_value)
    out = _shapes.stack(idx, axis=1)
    return out[:, :0] if nd == 0 else out
