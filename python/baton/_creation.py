"""``bt.empty/zeros/ones/full``: new arrays on a device and memory kind."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from baton import _baton, _dtypes
from baton._baton import Array, Device
from baton._device_put import check_device as _check_device
from baton._memory_kinds import check_kind as _check_kind

_INT64_MAX = 2**63 - 1


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"shape must be an int or a sequence of ints, not {shape!r}"
        ) from None
    for i, d in enumerate(dims):
        if d < 0:
            raise ValueError(
                f"shape {dims} has a negative dimension ({d} at position {i})"
            )
        if d > _INT64_MAX:
            raise ValueError(
                f"shape {dims} is too large: dimension {d} at position {i} "
                "does not fit in 64 bits"
            )
    # The size limit (elements and bytes within 64 bits) is checked once, in
    # C++ (Shape::Check), for every way a shape enters baton.
    return dims


def _args(shape: Any, dtype: Any, device: Any, memory_kind: Any):
    _check_device(device)
    _check_kind(memory_kind)
    d = _dtypes.canonicalize(dtype)
    return _shape(shape), d, ("device" if memory_kind is None else memory_kind)


def empty(
    shape: Any,
    dtype: Any = np.float32,
    *,
    device: Device | None = None,
    memory_kind: str | None = None,
) -> Array:
    """An array whose contents are unspecified (nothing is written)."""
    dims, d, kind = _args(shape, dtype, device, memory_kind)
    return _baton._empty(dims, d.name, device, kind)


def full(
    shape: Any,
    fill_value: Any,
    dtype: Any = None,
    *,
    device: Device | None = None,
    memory_kind: str | None = None,
) -> Array:
    """An array with every element ``fill_value`` (broadcast if it is an
    array). ``dtype=None`` takes the fill value's dtype (Python scalars:
    bool / int32 / float32)."""
    if dtype is None:
        if _dtypes.is_python_scalar(fill_value):
            dtype = _dtypes.python_scalar_dtype(fill_value)
        else:
            dtype = np.asarray(fill_value).dtype
    dims, d, kind = _args(shape, dtype, device, memory_kind)
    if _dtypes.is_python_scalar(fill_value):
        value = _dtypes.python_scalar_to_numpy(fill_value, d)
    else:
        value = np.asarray(fill_value).astype(d, copy=False)
    if value.ndim == 0:
        return _baton._full(dims, d.name, value.tobytes(), device, kind)
    try:
        np.broadcast_shapes(value.shape, dims)
    except ValueError:
        raise ValueError(
            f"full: fill value of shape {value.shape} cannot be broadcast to {dims}"
        ) from None
    return fill_from_host(dims, d, device, kind, lambda: np.broadcast_to(value, dims))


def fill_from_host(
    dims: tuple[int, ...], d: np.dtype, device: Any, kind: str, make: Any
) -> Array:
    """An array of dims / d whose values ``make()`` computes on the host.
    The device buffer is allocated first, so a request over the memory
    limit raises ResourceExhaustedError before any host memory is used."""
    out = _baton._empty(dims, d.name, device, kind)
    values = np.ascontiguousarray(make(), dtype=d)
    if values.shape != dims:  # the caller's size estimate was off: no overwrite
        del out
        return _baton._put_numpy(values, d.name, device, kind, False)
    return _baton._put_numpy_into(values, d.name, out)


def zeros(
    shape: Any,
    dtype: Any = np.float32,
    *,
    device: Device | None = None,
    memory_kind: str | None = None,
) -> Array:
    """An array of zeros."""
    return full(shape, 0, dtype, device=device, memory_kind=memory_kind)


def ones(
    shape: Any,
    dtype: Any = np.float32,
    *,
    device: Device | None = None,
    memory_kind: str | None = None,
) -> Array:
    """An array of ones."""
    return full(shape, 1, dtype, device=device, memory_kind=memory_kind)
