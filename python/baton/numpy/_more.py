"""More of ``jax.numpy``: file helpers (``save``, ``savez``, ``load``),
``sort_complex``,
``mask_indices``, ``packbits`` / ``unpackbits``, and the set operations
(``unique`` and its array-API forms, ``union1d``, ``intersect1d``,
``setdiff1d``, ``setxor1d``). ``i0``, ``kaiser``, ``nextafter`` and
``spacing`` stand on bt.lax's and bt.scipy's functions, a layer above
baton.numpy: ``baton._numpy_special`` defines them and adds them here.

The set operations have data-dependent output sizes: without ``size=``
they need concrete operands (an eager call; inside ``bt.jit`` they raise,
as in JAX), with ``size=`` they work traced, padding with ``fill_value``
(default: the smallest result value) exactly as JAX pads.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, NamedTuple

import numpy as np

from types import SimpleNamespace

from baton.numpy import (
    _along_axis,
    _casts,
    _creation,
    _cumulative,
    _dtypes,
    _elementwise,
    _nonzero,
    _reductions,
    _shapes,
    _sorting,
)
from baton import _ops
from baton._baton import lax
from baton.errors import ConcretizationTypeError

# The baton.numpy functions used here, by their public names (this module
# is part of baton.numpy, so it takes them from their own modules).
bnp = SimpleNamespace(
    **{n: getattr(_creation, n) for n in ("asarray", "ones", "zeros", "arange", "full", "array")},
    **{n: getattr(_dtypes, n) for n in (
        "issubdtype", "inexact", "complexfloating", "complex64", "complex128",
        "float64", "uint8", "uint32", "int32", "result_type", "bool_", "integer",
        "bfloat16",
    )},
    **{n: getattr(_sorting, n) for n in ("sort", "argsort", "lexsort")},
    nonzero=_nonzero.nonzero,
    **{n: getattr(_shapes, n) for n in ("moveaxis", "pad", "ravel", "concatenate")},
    sum=_reductions.sum,
    any=_reductions.any,
    isnan=_elementwise.isnan,
    where=_elementwise.where,
    cumsum=_cumulative.cumsum,
    diff=_cumulative.diff,
    real=_casts.real,
    imag=_casts.imag,
    take_along_axis=_along_axis.take_along_axis,
)

__all__ = [
    "intersect1d",
    "load",
    "mask_indices",
    "packbits",
    "save",
    "savez",
    "setdiff1d",
    "setxor1d",
    "sort_complex",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "unpackbits",
]

# numpy's own writers, as in JAX (jnp.save is np.save): baton Arrays
# convert through __array__.
save = np.save
savez = np.savez


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """``np.load``, with an array result as a baton Array (``.npz``
    archives come back as numpy's NpzFile, as in JAX). bfloat16 data that
    numpy saved as 2-byte void is read back as bfloat16."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == np.dtype("V2"):
            out = out.view(bnp.bfloat16)
        return bnp.asarray(out)
    return out


def sort_complex(a: Any) -> Any:
    """``a`` sorted along its last axis (real part first, then imaginary),
    as a complex array."""
    a = bnp.asarray(a)
    d = a.dtype if bnp.issubdtype(a.dtype, bnp.complexfloating) else (
        bnp.complex128 if a.dtype == bnp.float64 else bnp.complex64
    )
    a = a.astype(d)
    if a.ndim == 0:
        return a
    order = bnp.lexsort((bnp.imag(a), bnp.real(a)), axis=-1)
    return bnp.take_along_axis(a, order, axis=-1)


def mask_indices(
    n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *, size: int | None = None
) -> tuple[Any, Any]:
    """The (row, column) indices where ``mask_func(ones((n, n)), k)`` is
    nonzero (``size=`` pads as ``nonzero`` does)."""
    n = operator.index(n)
    return bnp.nonzero(mask_func(bnp.ones((n, n)), k), size=size)


# ---- bits ----


def _bit_weights(bitorder: str, what: str) -> np.ndarray:
    if bitorder == "big":
        return np.array([128, 64, 32, 16, 8, 4, 2, 1], np.uint8)
    if bitorder == "little":
        return np.array([1, 2, 4, 8, 16, 32, 64, 128], np.uint8)
    raise ValueError(f"{what}: bitorder must be 'big' or 'little', not {bitorder!r}")


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """The elements of integer or bool ``a`` (nonzero is 1) packed 8 to a
    uint8 along ``axis`` (the flattened array for None), the last byte
    padded with zeros."""
    a = bnp.asarray(a)
    if not (bnp.issubdtype(a.dtype, bnp.integer) or a.dtype == bnp.bool_):
        raise TypeError(
            f"packbits: expected an integer or bool array, got {a.dtype}"
        )
    weights = _bit_weights(bitorder, "packbits")
    if axis is None:
        a = a.ravel()
        axis = 0
    axis = _ops.normalize_axis(axis, a.ndim)
    bits = bnp.moveaxis(a != 0, axis, -1).astype(bnp.uint8)
    n = bits.shape[-1]
    pad = (-n) % 8
    if pad:
        bits = bnp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, pad)])
    bits = bits.reshape(bits.shape[:-1] + ((n + pad) // 8, 8))
    packed = bnp.sum(bits * weights, axis=-1, dtype=bnp.uint32).astype(bnp.uint8)
    return bnp.moveaxis(packed, -1, axis)


def unpackbits(
    a: Any, axis: int | None = None, count: int | None = None, bitorder: str = "big"
) -> Any:
    """The bits of uint8 ``a`` as a uint8 array of 0s and 1s, 8 per byte
    along ``axis`` (the flattened array for None); ``count`` keeps that
    many (negative: drops that many from the end; more than there are pads
    with zeros)."""
    a = bnp.asarray(a)
    if a.dtype != bnp.uint8:
        raise TypeError(f"unpackbits: expected a uint8 array, got {a.dtype}")
    weights = _bit_weights(bitorder, "unpackbits")
    if axis is None:
        a = a.ravel()
        axis = 0
    axis = _ops.normalize_axis(axis, a.ndim)
    m = bnp.moveaxis(a, axis, -1)
    bits = ((m[..., None] & weights) != 0).astype(bnp.uint8)
    bits = bits.reshape(bits.shape[:-2] + (bits.shape[-2] * 8,))
    if count is not None:
        count = operator.index(count)
        n = bits.shape[-1]
        keep = count if count >= 0 else max(n + count, 0)
        if keep > n:
            bits = bnp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, keep - n)])
        else:
            bits = bits[..., :keep]
    return bnp.moveaxis(bits, -1, axis)


# ---- unique and the set operations ----


def _concrete(x: Any, what: str) -> None:
    if isinstance(x, lax.Tracer):
        raise ConcretizationTypeError(
            f"{what}: the result's size depends on the values of a traced array; "
            "pass size= (and fill_value=) to use it under bt.jit"
        )


def _sorted_mask(ar: Any, equal_nan: bool) -> tuple[Any, Any, Any]:
    """``ar`` (axis 0 leading) sorted lexicographically by rows, the mask of
    the rows that start a new value, and the sorting permutation."""
    n = ar.shape[0]
    rest = int(np.prod(ar.shape[1:], dtype=np.int64))
    if rest == 0:
        perm = bnp.zeros(min(n, 1), bnp.int32)
        n = min(n, 1)
    elif ar.ndim == 1:
        perm = bnp.argsort(ar, stable=True)
    else:
        rows = ar.reshape(n, rest)
        perm = bnp.lexsort(rows.T[::-1])
    aux = ar[perm]
    if aux.size:
        if bnp.issubdtype(aux.dtype, bnp.inexact) and equal_nan:
            diff = (aux[1:] != aux[:-1]) & ~(bnp.isnan(aux[1:]) & bnp.isnan(aux[:-1]))
        else:
            diff = aux[1:] != aux[:-1]
        if aux.ndim > 1:
            diff = bnp.any(diff, axis=tuple(range(1, aux.ndim)))
        mask = bnp.concatenate([bnp.ones(1, bool), diff])
    else:
        mask = bnp.zeros(n, bool)
    return aux, mask, perm


def _unique(
    ar: Any,
    axis: int,
    return_index: bool,
    return_inverse: bool,
    return_counts: bool,
    equal_nan: bool,
    size: int | None,
    fill_value: Any,
) -> tuple[Any, ...]:
    if ar.shape[axis] == 0 and size and fill_value is None:
        raise ValueError(
            "jnp.unique: for zero-sized input with nonzero size argument, "
            "fill_value must be specified"
        )
    moved = bnp.moveaxis(ar, axis, 0)
    aux, mask, perm = _sorted_mask(moved, equal_nan)
    if size is None:
        ind = bnp.nonzero(mask)[0]
    else:
        ind = bnp.nonzero(mask, size=size)[0]
    result = aux[ind] if aux.size else aux
    if size is not None and fill_value is not None:
        fill = bnp.asarray(fill_value).astype(result.dtype)
        if result.shape[0]:
            valid = bnp.arange(size) < bnp.sum(mask)
            valid = valid.reshape((size,) + (1,) * (result.ndim - 1))
            result = bnp.where(valid, result, fill)
        else:
            result = bnp.full((size,) + tuple(result.shape[1:]), fill, result.dtype)
    out: list[Any] = [bnp.moveaxis(result, 0, axis)]
    if return_index:
        out.append(perm[ind] if aux.size else perm)
    if return_inverse:
        if aux.size:
            inv = bnp.zeros(mask.shape, bnp.int32).at[perm].set(
                bnp.cumsum(mask).astype(bnp.int32) - 1
            )
        else:
            inv = bnp.zeros(ar.shape[axis], bnp.int32)
        out.append(inv)
    if return_counts:
        if aux.size:
            if size is None:
                idx = bnp.concatenate([bnp.nonzero(mask)[0], bnp.array([mask.size])])
            else:
                idx = bnp.nonzero(mask, size=size + 1)[0]
                idx = idx.at[1:].set(bnp.where(idx[1:] != 0, idx[1:], mask.size))
            out.append(bnp.diff(idx).astype(bnp.int32))
        elif ar.shape[axis]:
            out.append(bnp.full((1,), ar.shape[axis], bnp.int32))
        else:
            out.append(bnp.zeros(0, bnp.int32))
    return tuple(out)


def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
    size: int | None = None,
    fill_value: Any = None,
    sorted: bool = True,  # noqa: A002 -- JAX's name; unused, as in JAX
) -> Any:
    """The sorted unique values of ``ar`` (flattened, or the unique slices
    along ``axis``), and optionally the index of each one's first
    occurrence, the inverse indices that rebuild ``ar``, and the counts.
    ``size``/``fill_value`` fix the output length (see the module
    docstring); ``equal_nan`` treats NaNs as one value."""
    del sorted
    arr = bnp.asarray(ar)
    if size is None:
        _concrete(arr, "unique")
    else:
        size = operator.index(size)
    shape = tuple(arr.shape)
    if axis is None:
        arr = arr.ravel()
        ax = 0
    else:
        ax = _ops.normalize_axis(axis, arr.ndim)
    out = _unique(
        arr, ax, return_index, return_inverse, return_counts, equal_nan, size,
        fill_value,
    )
    if return_inverse and axis is None:
        i = 1 + int(return_index)
        out = out[:i] + (out[i].reshape(shape if arr.ndim else ()),) + out[i + 1:]
    return out[0] if len(out) == 1 else out


class _UniqueAll(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class _UniqueCounts(NamedTuple):
    values: Any
    counts: Any


class _UniqueInverse(NamedTuple):
    values: Any
    inverse_indices: Any


def unique_all(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> _UniqueAll:
    """The array API's ``unique_all``: (values, indices, inverse_indices,
    counts), NaNs distinct, inverse indices of ``x``'s shape."""
    v, i, inv, c = unique(
        x, True, True, True, equal_nan=False, size=size, fill_value=fill_value
    )
    return _UniqueAll(v, i, inv, c)


def unique_counts(
    x: Any, /, *, size: int | None = None, fill_value: Any = None
) -> _UniqueCounts:
    """The array API's ``unique_counts``: (values, counts)."""
    v, c = unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueCounts(v, c)


def unique_inverse(
    x: Any, /, *, size: int | None = None, fill_value: Any = None
) -> _UniqueInverse:
    """The array API's ``unique_inverse``: (values, inverse_indices)."""
    v, inv = unique(
        x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value
    )
    return _UniqueInverse(v, inv)


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The array API's ``unique_values``: the sorted unique values."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def union1d(
    ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None
) -> Any:
    """The sorted unique values found in either array (flattened)."""
    a = bnp.concatenate([bnp.ravel(bnp.asarray(ar1)), bnp.ravel(bnp.asarray(ar2))])
    return unique(a, size=size, fill_value=fill_value)


def _in1d(a: Any, b: Any, invert: bool) -> Any:
    """Whether each element of 1-D ``a`` is in 1-D ``b`` (by comparing every
    pair; fine for the sizes set operations meet)."""
    if b.size == 0:
        hit = bnp.zeros(a.shape, bool)
    else:
        hit = bnp.any(a[:, None] == b[None, :], axis=1)
    return ~hit if invert else hit


def setdiff1d(
    ar1: Any,
    ar2: Any,
    assume_unique: bool = False,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    """The sorted unique values of ``ar1`` that are not in ``ar2``
    (``assume_unique``: ``ar1`` is not deduplicated, nor sorted)."""
    a = bnp.ravel(bnp.asarray(ar1))
    b = bnp.ravel(bnp.asarray(ar2))
    if size is None:
        _concrete(a, "setdiff1d")
        _concrete(b, "setdiff1d")
    else:
        size = operator.index(size)
    fill = bnp.asarray(0 if fill_value is None else fill_value).astype(a.dtype)
    if a.size == 0:
        return bnp.full(size or 0, fill, a.dtype)
    if not assume_unique:
        a = unique(a, size=size and a.size)
    keep = _in1d(a, b, invert=True)
    if size is None:
        return a[keep]
    if not assume_unique:
        n_unique = a.size + 1 - bnp.sum(a == a[0])
        keep = bnp.where(bnp.arange(a.size) < n_unique, keep, False)
    picked = a[bnp.nonzero(keep, size=size)[0]]
    return bnp.where(bnp.arange(size) < bnp.sum(keep), picked, fill)


def intersect1d(
    ar1: Any,
    ar2: Any,
    assume_unique: bool = False,
    return_indices: bool = False,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    """The sorted values found in both arrays (flattened); with
    ``return_indices`` also where each first occurs in each array. Without
    ``size`` only (concrete operands)."""
    a = bnp.ravel(bnp.asarray(ar1))
    b = bnp.ravel(bnp.asarray(ar2))
    d = bnp.result_type(a, b)
    a, b = a.astype(d), b.astype(d)
    if size is not None:
        raise NotImplementedError(
            "intersect1d(size=...) is not supported; call it on concrete arrays "
            "without size"
        )
    _concrete(a, "intersect1d")
    _concrete(b, "intersect1d")
    vals, ia, ib = _intersect_core(a, b, assume_unique)
    if return_indices:
        return vals, ia, ib
    return vals


def _intersect_core(a: Any, b: Any, assume_unique: bool) -> tuple[Any, Any, Any]:
    if assume_unique:
        ua, ia = a, bnp.arange(a.size)
        ub, ib = b, bnp.arange(b.size)
    else:
        ua, ia = unique(a, return_index=True)
        ub, ib = unique(b, return_index=True)
    aux = bnp.concatenate([ua, ub])
    order = bnp.argsort(aux, stable=True)
    aux = aux[order]
    if aux.size < 2:
        empty = bnp.zeros(0, bnp.int32)
        return aux[:0], empty, empty
    mask = aux[1:] == aux[:-1]
    vals = aux[:-1][mask]
    ia_out = ia[order[:-1][mask]]
    ib_out = ib[order[1:][mask] - ua.size]
    return vals, ia_out, ib_out


def setxor1d(
    ar1: Any,
    ar2: Any,
    assume_unique: bool = False,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    """The sorted values found in exactly one of the arrays (flattened)."""
    a = bnp.ravel(bnp.asarray(ar1))
    b = bnp.ravel(bnp.asarray(ar2))
    d = bnp.result_type(a, b)
    a, b = a.astype(d), b.astype(d)
    if size is not None:
        raise NotImplementedError(
            "setxor1d(size=...) is not supported; call it on concrete arrays "
            "without size"
        )
    _concrete(a, "setxor1d")
    _concrete(b, "setxor1d")
    if not assume_unique:
        a, b = unique(a), unique(b)
    aux = bnp.concatenate([a, b])
    if aux.size == 0:
        return aux
    aux = bnp.sort(aux)
    flag = bnp.concatenate([bnp.ones(1, bool), aux[1:] != aux[:-1], bnp.ones(1, bool)])
    return aux[flag[1:] & flag[:-1]]
