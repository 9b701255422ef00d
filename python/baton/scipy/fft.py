"""``bt.scipy.fft``: jax.scipy.fft's discrete cosine transforms, ``dct``,
``idct``, ``dctn`` and ``idctn`` (type 2 only, as JAX; ``norm`` None,
``'backward'`` or ``'ortho'``).

As JAX, each is computed with one complex FFT of the same length (John
Makhoul's method, 1980): the input reordered (even-indexed elements, then
the odd-indexed ones reversed), transformed, and rotated by
``exp(-i pi k / 2N)``; the inverse undoes each step. Inputs are cut or
zero-padded to ``n``/``s`` first; integers give float32 (float64 under
x64), complex inputs transform their real and imaginary parts separately.
The multi-axis forms apply the one-axis transform along each axis in turn
(the DCT is separable). Every function works eagerly, under ``bt.jit`` and
``bt.vmap``, and is differentiable.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton._config import config
from baton._lax_fft import fft as _lax_fft

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name: str, type: int, norm: Any) -> None:
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")


def _float_of(dt: np.dtype) -> np.dtype:
    if dt.kind == "f":
        return dt if dt.itemsize >= 4 else np.dtype(np.float32)
    wide = dt.itemsize == 8 and bool(config.read("enable_x64"))
    return np.dtype(np.float64 if wide else np.float32)


def _resize(x: Any, n: int | None, axis: int) -> Any:
    """x cut or zero-padded to n along axis (JAX's lax.pad with a possibly
    negative high edge)."""
    if n is None:
        return x
    high = [0] * len(x.shape)
    high[axis] = n - int(x.shape[axis])
    if high[axis] == 0:
        return x
    return lax.pad(x, 0, [0] * len(x.shape), high)


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A 1-D host array shaped to broadcast along `axis` of an ndim array."""
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return v.reshape(shape)


def _ortho_scale(n: int, dt: np.dtype) -> np.ndarray:
    """The factors 'ortho' multiplies the backward DCT by."""
    s = np.full(n, math.sqrt(1.0 / (2 * n)))
    s[0] = math.sqrt(1.0 / (4 * n))
    return s.astype(dt)


def _dct_axis(x: Any, axis: int, norm: Any) -> Any:
    """DCT-II of a real Tracer along axis (non-negative)."""
    nd = len(x.shape)
    n = int(x.shape[axis])
    # v = x[0], x[2], ..., then the odd-indexed elements reversed.
    half = (n + 1) // 2
    order = np.array(
        [2 * m if m < half else 2 * (n - 1 - m) + 1 for m in range(n)], np.int32
    )
    v = lax.take(x, order, axis)
    moved = nd - 1
    perm = [d for d in range(nd) if d != axis] + [axis]
    vt = lax.transpose(v, perm) if axis != moved else v
    spectrum = _lax_fft(vt, "fft", (n,))
    back = [perm.index(d) for d in range(nd)]
    if axis != moved:
        spectrum = lax.transpose(spectrum, back)
    real = np.dtype(spectrum.dtype).itemsize // 2
    rdt = np.dtype(np.float64 if real == 8 else np.float32)
    k = np.arange(n)
    w = np.exp(-0.5j * np.pi * k / n).astype(spectrum.dtype)
    out = lax.mul(lax.real(lax.mul(spectrum, _along(w, axis, nd))), 2.0)
    if norm == "ortho":
        out = lax.mul(out, _along(_ortho_scale(n, rdt), axis, nd))
    return out


def _idct_axis(y: Any, axis: int, norm: Any) -> Any:
    """The inverse of _dct_axis (a DCT-III) for a real Tracer."""
    nd = len(y.shape)
    n = int(y.shape[axis])
    rdt = np.dtype(y.dtype)
    cdt = np.dtype(np.complex128 if rdt.itemsize == 8 else np.complex64)
    if norm == "ortho":
        y = lax.div(y, _along(_ortho_scale(n, rdt), axis, nd))
    # V_k = (y_k - i y_{n-k}) / 2 * exp(i pi k / 2n), with y_n = 0.
    mirror = np.array([(n - k) % n for k in range(n)], np.int32)
    y_mirror = lax.take(y, mirror, axis)
    keep = np.ones(n)
    keep[0] = 0.0
    y_mirror = lax.mul(y_mirror, _along(keep.astype(rdt), axis, nd))
    z = lax.complex(y, lax.neg(y_mirror))
    w = (0.5 * np.exp(0.5j * np.pi * np.arange(n) / n)).astype(cdt)
    spectrum = lax.mul(z, _along(w, axis, nd))
    moved = nd - 1
    perm = [d for d in range(nd) if d != axis] + [axis]
    st = lax.transpose(spectrum, perm) if axis != moved else spectrum
    v = lax.real(_lax_fft(st, "ifft", (n,)))
    if axis != moved:
        v = lax.transpose(v, [perm.index(d) for d in range(nd)])
    # x[2m] = v[m], x[2m + 1] = v[n - 1 - m].
    order = np.array(
        [j // 2 if j % 2 == 0 else n - 1 - j // 2 for j in range(n)], np.int32
    )
    return lax.take(v, order, axis)


def _apply_parts(fn: Any, x: Any) -> Any:
    """fn on a real Tracer; on a complex one, on each part."""
    t = _ops.as_tracer(x)
    dt = np.dtype(t.dtype)
    if dt.kind == "c":
        return lax.complex(fn(lax.real(t)), fn(lax.imag(t)))
    return fn(lax.convert_element_type(t, _float_of(dt)))


def _dct_impl(
    x: Any, *, axes: tuple[int, ...], sizes: tuple, norm: Any, inverse: bool
) -> Any:
    def run(t: Any) -> Any:
        for ax, n in zip(axes, sizes):
            t = _resize(t, n, ax)
        for ax in axes:
            t = _idct_axis(t, ax, norm) if inverse else _dct_axis(t, ax, norm)
        return t

    return _apply_parts(run, x)


def _one_axis(name: str, x: Any, type: int, n: Any, axis: int, norm: Any) -> Any:
    _check(name, type, norm)
    nd = len(_ops.shape_of(x))
    axis = _ops.normalize_axis(operator.index(axis), nd)
    return _ops.apply(
        _dct_impl,
        (x,),
        (
            ("axes", (axis,)),
            ("inverse", name == "idct"),
            ("norm", norm),
            ("sizes", (n,)),
        ),
    )


def _many_axes(name: str, x: Any, type: int, s: Any, axes: Any, norm: Any) -> Any:
    _check(name, type, norm)
    nd = len(_ops.shape_of(x))
    if s is not None:
        try:
            s = [operator.index(v) for v in s]
        except TypeError:
            s = [operator.index(s)]
        if len(s) > nd:
            raise ValueError(
                f"s must have at most x.ndim ({nd}) elements, got {len(s)}"
            )
    if axes is None:
        axes = tuple(range(nd - len(s), nd)) if s is not None else tuple(range(nd))
    else:
        if isinstance(axes, int):
            axes = (axes,)
        axes = tuple(_ops.normalize_axis(operator.index(a), nd) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"jax.scipy.fft.{name}: repeated axes {axes}")
    sizes = tuple(s) if s is not None else (None,) * len(axes)
    if len(sizes) != len(axes):
        raise ValueError(f"jax.scipy.fft.{name}: s and axes have different lengths")
    return _ops.apply(
        _dct_impl,
        (x,),
        (
            ("axes", axes),
            ("inverse", name == "idctn"),
            ("norm", norm),
            ("sizes", sizes),
        ),
    )


def dct(
    x: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None
) -> Any:
    """The type-2 discrete cosine transform along ``axis`` (scipy.fft.dct)."""
    return _one_axis("dct", x, type, n, axis, norm)


def idct(
    x: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None
) -> Any:
    """The inverse of ``dct`` along ``axis``."""
    return _one_axis("idct", x, type, n, axis, norm)


def dctn(
    x: Any,
    type: int = 2,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """The type-2 DCT over ``axes`` (default all, or the last ``len(s)``)."""
    return _many_axes("dctn", x, type, s, axes, norm)


def idctn(
    x: Any,
    type: int = 2,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """The inverse of ``dctn``."""
    return _many_axes("idctn", x, type, s, axes, norm)
