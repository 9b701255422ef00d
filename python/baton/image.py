"""``bt.image``: JAX's ``jax.image``: ``resize`` and ``scale_and_translate``.

The same resampling as JAX (``jax/_src/image/scale.py``): every spatial
axis (one whose size changes) is contracted with a weight matrix of shape
(input size, output size) whose entries are a kernel -- triangle for
"linear", Keys' cubic (a = -0.5) for "cubic", OpenCV's cubic (a = -0.75,
edges repeated) for "cubic-pytorch" without antialiasing, Lanczos of
radius 3 or 5, the overlap of pixel intervals for "area" -- evaluated at
the distance between an output pixel's centre mapped back into the input
and each input pixel's centre, stretched by the downsampling factor when
``antialias`` is on, and normalized so each output pixel's weights sum to
1; an output pixel whose centre maps outside the input is 0. "nearest"
takes input pixel ``floor((i + 0.5) * in / out)``. Integer images give
float32 (``resize`` "nearest" keeps the dtype). ``precision`` is accepted:
baton's float32 contractions are always full float32 (JAX's HIGHEST).

``resize`` knows every size, so its weights are computed once on the host
(in float32, as JAX computes them) and enter the program as constants;
``scale_and_translate`` takes ``scale`` and ``translation`` as arrays
(traced values too) and computes its weights with ``baton.numpy``.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from baton import numpy as bnp

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """Image resize method (JAX's names and values)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a string names ("bilinear" is LINEAR, ...)."""
        names = {
            "nearest": ResizeMethod.NEAREST,
            "linear": ResizeMethod.LINEAR,
            "bilinear": ResizeMethod.LINEAR,
            "trilinear": ResizeMethod.LINEAR,
            "triangle": ResizeMethod.LINEAR,
            "lanczos3": ResizeMethod.LANCZOS3,
            "lanczos5": ResizeMethod.LANCZOS5,
            "cubic": ResizeMethod.CUBIC,
            "bicubic": ResizeMethod.CUBIC,
            "tricubic": ResizeMethod.CUBIC,
            "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
            "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
            "area": ResizeMethod.AREA,
        }
        try:
            return names[s]
        except KeyError:
            raise ValueError(f'Unknown resize method "{s}"') from None


# ---- kernels, written against a numpy-like namespace xp (numpy or bnp) ----


def _lanczos(radius: float) -> Callable[[Any, Any], Any]:
    def kernel(xp: Any, x: Any) -> Any:
        y = radius * xp.sin(np.pi * x) * xp.sin(np.pi * x / radius)
        safe = xp.where(x != 0, np.pi**2 * x**2, 1)
        out = xp.where(x > 1e-3, y / safe, 1)
        return xp.where(x > radius, 0.0, out)

    return kernel


def _keys_cubic(xp: Any, x: Any) -> Any:
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = xp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return xp.where(x >= 2.0, 0.0, out)


def _opencv_cubic(xp: Any, x: Any) -> Any:
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = xp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return xp.where(x >= 2.0, 0.0, out)


def _triangle(xp: Any, x: Any) -> Any:
    return xp.maximum(0, 1 - xp.abs(x))


_AREA = "area"

_KERNELS: dict[ResizeMethod, tuple[int, Any]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}

_TINY = 1000.0 * float(np.finfo(np.float32).eps)


def _normalize(xp: Any, weights: Any) -> Any:
    total = xp.sum(weights, axis=0, keepdims=True)
    safe = xp.where(total != 0, total, 1)
    return xp.where(xp.abs(total) > _TINY, weights / safe, 0)


def _weights(
    xp: Any,
    dtype: Any,
    in_size: int,
    out_size: int,
    scale: Any,
    translation: Any,
    kernel: Any,
    antialias: bool,
    edge_padding: bool,
    radius: int,
) -> Any:
    """The (in_size, out_size) weight matrix of one axis."""
    inv_scale = 1.0 / scale
    kernel_scale = xp.maximum(inv_scale, 1.0) if antialias else 1.0
    out_idx = xp.arange(out_size, dtype=dtype)
    sample = (out_idx + 0.5) * inv_scale - translation * inv_scale - 0.5
    k = radius if edge_padding else 0
    expanded = xp.arange(-k, in_size + k, dtype=dtype)
    if kernel is _AREA:
        left_out = out_idx * inv_scale - translation * inv_scale
        right_out = left_out + inv_scale
        left_in = xp.arange(in_size, dtype=dtype)
        right_in = left_in + 1.0
        weights = xp.maximum(
            0.0,
            xp.minimum(right_out[None, :], right_in[:, None])
            - xp.maximum(left_out[None, :], left_in[:, None]),
        )
    else:
        x = xp.abs(sample[None, :] - expanded[:, None]) / kernel_scale
        weights = kernel(xp, x)
    if edge_padding:
        # Weights of pixels beyond the edge move onto the edge pixels.
        clamped = np.clip(np.arange(-k, in_size + k), 0, in_size - 1)
        rows = np.repeat(clamped, out_size)
        cols = np.tile(np.arange(out_size), clamped.shape[0])
        mat = xp.zeros((in_size, out_size), dtype=dtype)
        flat = weights.reshape(-1)
        if xp is np:
            np.add.at(mat, (rows, cols), flat)
        else:
            mat = mat.at[(rows, cols)].add(flat)
        return _normalize(xp, mat)
    weights = _normalize(xp, weights)
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return xp.where(inside[None, :], weights, 0)


def _contract(x: Any, axis: int, w: Any) -> Any:
    out = bnp.tensordot(x, w, axes=([axis], [0]))
    return bnp.moveaxis(out, -1, axis)


def _inexact(x: Any) -> Any:
    x = bnp.asarray(x)
    if not bnp.issubdtype(x.dtype, bnp.inexact):
        x = x.astype(bnp.float32)
    return x


def _shape(shape: Any, image: Any, what: str) -> tuple[int, ...]:
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{what}: shape must be a sequence of ints, not {shape!r}") from None
    if len(shape) != image.ndim:
        raise ValueError(
            "shape must have length equal to the number of dimensions of x; "
            f" {shape} vs {tuple(image.shape)}"
        )
    return shape


def _method(method: Any) -> ResizeMethod:
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"method must be a str or ResizeMethod, not {method!r}")
    return method


def _resize_nearest(x: Any, shape: tuple[int, ...]) -> Any:
    for d, (m, n) in enumerate(zip(x.shape, shape)):
        if m == n:
            continue
        offsets = (np.arange(n, dtype=np.float32) + 0.5) * np.float32(m) / np.float32(n)
        idx = np.floor(offsets.astype(np.float32)).astype(np.int32)
        x = bnp.take(x, idx, axis=d)
    return x


def resize(
    image: Any,
    shape: Sequence[int],
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = None,
) -> Any:
    """``image`` resampled to ``shape`` (every axis; an axis whose size
    stays is left alone) with ``method``: "nearest", "linear" ("bilinear",
    "trilinear", "triangle"), "cubic" ("bicubic", "tricubic"),
    "cubic-pytorch", "lanczos3", "lanczos5", "area", or a
    :class:`ResizeMethod`. ``antialias`` widens the kernel when
    downsampling. Works under ``bt.jit`` and ``bt.grad``."""
    del precision  # float32 contractions are always full precision
    image = bnp.asarray(image)
    shape = _shape(shape, image, "resize")
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    x = _inexact(image)
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    for d, (m, n) in enumerate(zip(image.shape, shape)):
        if m == n:
            continue
        scale = np.float32(1.0 if n == 0 else n / m)
        w = _weights(
            np, np.float32, m, n, scale, np.float32(0.0), kernel, bool(antialias),
            edge_padding, radius,
        )
        x = _contract(x, d, np.asarray(w, np.float32).astype(x.dtype))
    return x


def scale_and_translate(
    image: Any,
    shape: Sequence[int],
    spatial_dims: Sequence[int],
    scale: Any,
    translation: Any,
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = None,
) -> Any:
    """``image`` resampled to ``shape``: along ``spatial_dims[k]`` the input
    location ``y`` maps to ``y * scale[k] + translation[k]`` (pixel centres
    at half-integers), output pixels sampled through the inverse map with
    ``method`` (any but "nearest", as in JAX); outside the input gives 0.
    ``scale`` and ``translation`` may be traced (differentiable)."""
    del precision
    image = bnp.asarray(image)
    shape = _shape(shape, image, "scale_and_translate")
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError(
            "Nearest neighbor resampling is not currently supported for "
            "scale_and_translate."
        )
    dims = [int(d) for d in spatial_dims]
    scale = bnp.asarray(scale)
    translation = bnp.asarray(translation)
    if scale.shape != (len(dims),) or translation.shape != (len(dims),):
        raise ValueError(
            f"scale_and_translate: scale and translation must have shape "
            f"({len(dims)},) (one per spatial dim), not {tuple(scale.shape)} and "
            f"{tuple(translation.shape)}"
        )
    x = _inexact(image)
    if not dims:
        return x
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    dtype = bnp.result_type(scale.dtype, translation.dtype, bnp.float32)
    scale = scale.astype(dtype)
    translation = translation.astype(dtype)
    in_shape = tuple(x.shape)
    out = x
    for i, d in enumerate(dims):
        d = d % x.ndim
        if edge_padding and antialias:
            raise NotImplementedError  # unreachable: antialias switched method
        w = _weights(
            bnp, dtype, in_shape[d], shape[d], scale[i], translation[i], kernel,
            bool(antialias), edge_padding, radius,
        )
        out = _contract(out, d, w.astype(x.dtype))
    return out

