"""``bt.scipy.signal``: ``convolve``, ``correlate``, ``convolve2d``,
``correlate2d`` (modes ``'full'``, ``'same'``, ``'valid'``), ``fftconvolve``
and ``detrend``, as jax.scipy.signal's.

The direct convolutions are ``bt.lax.conv_general_dilated`` with the
flipped kernel, exactly as JAX computes them (so the ``'same'`` mode's
centring, the swap of the operands when the second is larger, and the
errors are JAX's); integer and bool inputs give float32 (float64 under
x64). ``fftconvolve`` (and ``method='fft'`` of ``convolve`` and
``correlate``) multiplies ``bnp.fft.rfftn`` spectra (``fftn`` for complex
inputs) of the full output size and slices the mode's part out, as JAX;
with ``axes`` the other axes are batch axes of equal size. Every function
works eagerly (one compiled program per argument signature), under
``bt.jit`` and ``bt.vmap``, and is differentiable by ``bt.grad``.

``stft``, ``istft``, ``csd`` and ``welch`` (in ``_signal_spectral``) are
JAX's spectral helper over ``bnp.fft``: segments gathered by a host index
table, ``detrend`` per segment, windows by name (``scipy.signal.get_window``
as JAX) or array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton._lax_conv import conv_general_dilated
from baton.scipy._signal_detrend import _inexact, detrend
from baton.scipy._signal_spectral import csd, istft, stft, welch

__all__ = [
    "convolve",
    "convolve2d",
    "correlate",
    "correlate2d",
    "csd",
    "detrend",
    "fftconvolve",
    "istft",
    "stft",
    "welch",
]

_MODES = ("full", "same", "valid")


def _flip(x: Any) -> Any:
    from baton._lax_slicing import rev

    return rev(x, tuple(range(len(x.shape))))


def _convolve_nd(in1: Any, in2: Any, mode: str) -> Any:
    """JAX's ``_convolve_nd``: the n-d convolution of equal-rank operands."""
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    a, b = _inexact(in1, in2)
    if len(a.shape) != len(b.shape):
        raise ValueError("in1 and in2 must have the same number of dimensions")
    sa, sb = tuple(int(d) for d in a.shape), tuple(int(d) for d in b.shape)
    if 0 in sa or 0 in sb:
        raise ValueError(
            f"zero-size arrays not supported in convolutions, got shapes {sa} and {sb}."
        )
    no_swap = all(s1 >= s2 for s1, s2 in zip(sa, sb))
    swap = all(s1 <= s2 for s1, s2 in zip(sa, sb))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = sb
    if swap:
        a, b = b, a
    shape = tuple(int(d) for d in b.shape)
    b = _flip(b)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [
            (s - 1 - (so - 1) // 2, s - so + (so - 1) // 2)
            for s, so in zip(shape, shape_o)
        ]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    nd = len(shape)
    lhs = lax.reshape(a, (1, 1, *a.shape))
    rhs = lax.reshape(b, (1, 1, *b.shape))
    out = conv_general_dilated(lhs, rhs, (1,) * nd, padding)
    return lax.reshape(out, tuple(out.shape[2:]))


def _check_method(method: str) -> None:
    if method not in ("direct", "auto", "fft"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def _convolve(in1: Any, in2: Any, *, mode: str) -> Any:
    return _convolve_nd(in1, in2, mode)


def convolve(
    in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision: Any = None
) -> Any:
    """The n-dimensional convolution of ``in1`` and ``in2`` (equal ranks;
    one no smaller than the other in every dimension), as
    ``scipy.signal.convolve``: ``mode`` ``'full'``, ``'same'`` (centred on
    ``in1``) or ``'valid'``; ``method`` ``'direct'``/``'auto'``."""
    _check_method(method)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    return _ops.apply(_convolve, (in1, in2), (("mode", mode),))


def _correlate(in1: Any, in2: Any, *, mode: str) -> Any:
    return _convolve_nd(in1, _flip(_ops.as_tracer(in2)), mode)


def correlate(
    in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision: Any = None
) -> Any:
    """The n-dimensional cross-correlation of ``in1`` and ``in2`` (the
    convolution with ``in2`` reversed), as ``scipy.signal.correlate``."""
    _check_method(method)
    if method == "fft":
        return _ops.apply(_fftcorrelate, (in1, in2), (("mode", mode),))
    return _ops.apply(_correlate, (in1, in2), (("mode", mode),))


def _fftconvolve(in1: Any, in2: Any, *, mode: str, axes: tuple[int, ...]) -> Any:
    """JAX's fftconvolve over `axes` (the others are batch axes)."""
    from baton.numpy import fft as bfft

    a, b = _inexact(in1, in2)
    sa, sb = tuple(int(d) for d in a.shape), tuple(int(d) for d in b.shape)
    if len(sa) != len(sb):
        raise ValueError("in1 and in2 should have the same dimensionality")
    for d in range(len(sa)):
        if d not in axes and sa[d] != sb[d]:
            raise ValueError(
                f"mapped axes must have same shape; got in1.shape={sa} "
                f"in2.shape={sb} axes={axes}"
            )
    ca, cb = [sa[d] for d in axes], [sb[d] for d in axes]
    full = [x + y - 1 for x, y in zip(ca, cb)]
    if mode == "valid":
        no_swap = all(x >= y for x, y in zip(ca, cb))
        swap = all(x <= y for x, y in zip(ca, cb))
        if not (no_swap or swap):
            raise ValueError(
                "For 'valid' mode, One input must be at least as large as the "
                "other in every dimension."
            )
        if swap:
            a, b, sa, ca, cb = b, a, sb, cb, ca
    if all(x == 1 or y == 1 for x, y in zip(ca, cb)):
        conv = lax.mul(a, b)
    elif np.dtype(a.dtype).kind == "c":
        conv = bfft.ifftn(
            lax.mul(bfft.fftn(a, full, axes), bfft.fftn(b, full, axes)), full, axes
        )
    else:
        conv = bfft.irfftn(
            lax.mul(bfft.rfftn(a, full, axes), bfft.rfftn(b, full, axes)), full, axes
        )
    if mode == "full":
        out = full
    elif mode == "same":
        out = ca
    else:
        out = [x - y + 1 for x, y in zip(ca, cb)]
    start = [0] * len(conv.shape)
    limit = [int(d) for d in conv.shape]
    for d, f, o in zip(axes, full, out):
        start[d] = (f - o) // 2
        limit[d] = start[d] + o
    return lax.slice(conv, start, limit)


def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Any:
    """The convolution of ``in1`` and ``in2`` through FFTs
    (``jax.scipy.signal.fftconvolve``): ``mode`` ``'full'``, ``'same'`` or
    ``'valid'``; ``axes`` the axes convolved (default all; the others must
    have equal sizes and are batch axes)."""
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    nd = len(_ops.shape_of(in1))
    if len(_ops.shape_of(in2)) != nd:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if axes is None:
        axes = tuple(range(nd))
    else:
        if isinstance(axes, int):
            axes = (axes,)
        axes = tuple(sorted({_ops.normalize_axis(int(ax), nd) for ax in axes}))
    return _ops.apply(_fftconvolve, (in1, in2), (("axes", axes), ("mode", mode)))


def _fftcorrelate(in1: Any, in2: Any, *, mode: str) -> Any:
    b = _ops.as_tracer(in2)
    flipped = _flip(lax.conj(b) if np.dtype(b.dtype).kind == "c" else b)
    nd = len(b.shape)
    return _fftconvolve(in1, flipped, mode=mode, axes=tuple(range(nd)))


def _check_2d(in1: Any, in2: Any, boundary: str, fillvalue: Any, name: str) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(
            f"{name}() only supports boundary='fill', fillvalue=0"
        )
    if len(_ops.shape_of(in1)) != 2 or len(_ops.shape_of(in2)) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(
    in1: Any,
    in2: Any,
    mode: str = "full",
    boundary: str = "fill",
    fillvalue: float = 0,
    precision: Any = None,
) -> Any:
    """The 2-d convolution (``scipy.signal.convolve2d``; only
    ``boundary='fill'`` with ``fillvalue=0``, as in JAX)."""
    _check_2d(in1, in2, boundary, fillvalue, "convolve2d")
    return _ops.apply(_convolve, (in1, in2), (("mode", mode),))


def _correlate2d(in1: Any, in2: Any, *, mode: str) -> Any:
    a, b = _ops.as_tracer(in1), _ops.as_tracer(in2)
    sa, sb = tuple(a.shape), tuple(b.shape)
    swap = all(s1 <= s2 for s1, s2 in zip(sa, sb))
    same_shape = sa == sb
    # JAX's operand order per mode (it decides which result is flipped).
    if mode == "same":
        return _flip(_convolve_nd(_flip(a), b, mode))
    if mode == "valid":
        if swap and not same_shape:
            return _convolve_nd(_flip(b), a, mode)
        return _flip(_convolve_nd(_flip(a), b, mode))
    if swap:
        return _convolve_nd(_flip(b), a, mode)
    return _flip(_convolve_nd(_flip(a), b, mode))


def correlate2d(
    in1: Any,
    in2: Any,
    mode: str = "full",
    boundary: str = "fill",
    fillvalue: float = 0,
    precision: Any = None,
) -> Any:
    """The 2-d cross-correlation (``scipy.signal.correlate2d``; only
    ``boundary='fill'`` with ``fillvalue=0``, as in JAX)."""
    _check_2d(in1, in2, boundary, fillvalue, "correlate2d")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    return _ops.apply(_correlate2d, (in1, in2), (("mode", mode),))
