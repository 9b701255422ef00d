"""``baton.numpy.fft`` (``bnp.fft``): jax.numpy.fft on baton arrays.

    import baton.numpy as bnp

    spectrum = bnp.fft.rfft(signal)                  # float32 -> complex64
    smooth = bnp.fft.irfft(spectrum * window, n=signal.shape[-1])

``fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft
ihfft`` take numpy's ``n``/``s`` (each transformed axis is cut or
zero-padded to that length first; for the inverse real transforms it is
the *output* length), ``axis``/``axes`` (any axes: they are moved to the
end, transformed, and moved back) and ``norm`` (``'backward'`` (default:
inverse transforms scaled by 1/N), ``'ortho'`` (both by 1/sqrt(N)),
``'forward'`` (forward transforms by 1/N)), with jax.numpy.fft's errors
and dtypes: integers, bools and float32 give complex64 (real outputs
float32), float64 and 64-bit integers (under x64) complex128; rfft of a
complex array is refused. ``fftfreq``, ``rfftfreq``, ``fftshift`` and
``ifftshift`` are as jax.numpy.fft's.

Every transform is the IR's fft op (``bt.lax.fft``; pocketfft on the
CPU): one op for up to three axes, more axes in groups of three. The
functions work eagerly (one compiled program per argument signature),
under ``bt.jit`` and ``bt.vmap``, and are differentiable (``bt.grad``,
``bt.jvp``, ``bt.vjp`` with JAX's conventions for complex values).
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
from baton._lax_fft import FftType
from baton._lax_fft import fft as _lax_fft

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_NORMS = ("backward", "ortho", "forward")


def _moveaxis(x: Any, src: Sequence[int], dst: Sequence[int]) -> Any:
    """x with axes ``src`` moved to positions ``dst`` (numpy moveaxis)."""
    nd = len(x.shape)
    order = [d for d in range(nd) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    if order == list(range(nd)):
        return x
    return lax.transpose(x, order)


def _transform(x: Any, typ: FftType, lengths: tuple[int, ...]) -> Any:
    """The fft op over the trailing len(lengths) axes; more than three
    axes in groups of three (the op takes at most three), the real
    transform on the last group."""
    k = len(lengths)
    if k <= 3:
        return _lax_fft(x, typ, lengths)
    nd = len(x.shape)
    lead = tuple(range(nd - k, nd - 3))
    # The leading axes' complex transform runs with them moved to the end.
    moved = tuple(range(nd - len(lead), nd))
    inner = FftType.IFFT if typ in (FftType.IFFT, FftType.IRFFT) else FftType.FFT
    if typ in (FftType.FFT, FftType.RFFT):
        x = _lax_fft(x, typ, lengths[-3:])
        x = _moveaxis(x, lead, moved)
        x = _transform(x, inner, lengths[:-3])
        return _moveaxis(x, moved, lead)
    x = _moveaxis(x, lead, moved)
    x = _transform(x, inner, lengths[:-3])
    x = _moveaxis(x, moved, lead)
    return _lax_fft(x, typ, lengths[-3:])


def _fit(x: Any, shape: Sequence[int]) -> Any:
    """x cut or zero-padded (at the end) to ``shape``."""
    cur = tuple(int(d) for d in x.shape)
    if any(s < c for s, c in zip(shape, cur)):
        x = lax.slice(x, [0] * len(cur), [min(s, c) for s, c in zip(shape, cur)])
        cur = tuple(min(s, c) for s, c in zip(shape, cur))
    if any(s > c for s, c in zip(shape, cur)):
        x = lax.pad(x, 0, [0] * len(cur), [max(0, s - c) for s, c in zip(shape, cur)])
    return x


def _core_impl(
    a: Any,
    *,
    name: str,
    typ: FftType,
    s: tuple[int, ...] | None,
    axes: tuple[int, ...] | None,
    norm: str | None,
) -> Any:
    nd = len(a.shape)
    if axes is None:
        axes_n = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
        moved = None
    else:
        axes_n = axes
        moved = tuple(range(nd - len(axes), nd))
        a = _moveaxis(a, axes_n, moved)
        axes_n = moved
    if s is not None:
        in_s = [int(d) for d in a.shape]
        for ax, n in zip(axes_n, s):
            in_s[ax] = n
        if typ == FftType.IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        # Promote before padding so the zeros have the transform's type.
        a = _promote(a, typ)
        a = _fit(a, in_s)
        lengths = tuple(s)
    elif typ == FftType.IRFFT:
        lengths = tuple(int(a.shape[ax]) for ax in axes_n[:-1])
        if axes_n:
            lengths += (max(0, 2 * (int(a.shape[axes_n[-1]]) - 1)),)
    else:
        lengths = tuple(int(a.shape[ax]) for ax in axes_n)
    if any(n <= 0 for n in lengths):
        raise ValueError(
            f"jax.numpy.fft.{name}: every transform length must be positive, "
            f"got {list(lengths)}"
        )
    out = _transform(a, typ, lengths)
    if norm is not None and norm != "backward":
        total = float(math.prod(lengths))
        inverse = name.startswith("i")
        if norm == "ortho":
            factor = math.sqrt(total) if inverse else 1.0 / math.sqrt(total)
        else:  # forward
            factor = total if inverse else 1.0 / total
        out = lax.mul(out, factor)
    if moved is not None:
        out = _moveaxis(out, moved, axes)
    return out


def _promote(a: Any, typ: FftType) -> Any:
    """The operand's dtype as lax.fft promotes it (so padding happens in it)."""
    dt = np.dtype(a.dtype)
    wide = (dt.itemsize == 8 and dt.kind in "iuf") or dt == np.complex128
    if typ == FftType.RFFT:
        if dt.kind == "c":
            raise ValueError("only real valued inputs supported for rfft")
        target = dt if dt.kind == "f" else np.dtype(np.float64 if wide else np.float32)
    else:
        target = np.dtype(np.complex128 if wide else np.complex64)
    return lax.convert_element_type(a, target)


def _core(
    name: str,
    typ: FftType,
    a: Any,
    s: Sequence[int] | None,
    axes: Sequence[int] | None,
    norm: str | None,
) -> Any:
    """Checks the static arguments as jax.numpy.fft does, then runs the
    transform (eagerly: one cached program per signature)."""
    full = f"jax.numpy.fft.{name}"
    if norm is not None and norm not in _NORMS:
        raise ValueError(
            f'Invalid norm value {norm}; should be "backward","ortho" or "forward".'
        )
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    nd = len(_ops.shape_of(a))
    if axes is not None:
        axes = tuple(operator.index(ax) for ax in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{full} does not support repeated axes. Got axes {axes}.")
        for ax in axes:
            if not -nd <= ax < nd:
                raise ValueError(
                    f"{full}: axis {ax} is out of bounds for an array of dimension {nd}"
                )
        axes = tuple(ax % nd for ax in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{full} does not support repeated axes. Got axes {axes}.")
    elif s is not None and len(s) > nd:
        raise ValueError(f"{full}: s {list(s)} has more entries than a has dimensions")
    return _ops.apply(
        _core_impl,
        (a,),
        (("axes", axes), ("name", name), ("norm", norm), ("s", s), ("typ", typ)),
    )


def _check_1d(name: str, axis: Any) -> None:
    if isinstance(axis, (list, tuple)):
        full = f"jax.numpy.fft.{name}"
        raise ValueError(
            f"{full} does not support multiple axes. Please use {full}n. "
            f"Got axis = {axis!r}."
        )


def _core_1d(
    name: str, typ: FftType, a: Any, n: int | None, axis: int | None, norm: str | None
) -> Any:
    _check_1d(name, axis)
    return _core(
        name,
        typ,
        a,
        None if n is None else [n],
        None if axis is None else [axis],
        norm,
    )


def _core_2d(
    name: str, typ: FftType, a: Any, s: Any, axes: Sequence[int], norm: str | None
) -> Any:
    if len(axes) != 2:
        raise ValueError(
            f"jax.numpy.fft.{name} only supports 2 axes. Got axes = {axes!r}."
        )
    return _core(name, typ, a, s, axes, norm)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The 1-D discrete Fourier transform along ``axis`` (jnp.fft.fft)."""
    return _core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The 1-D inverse DFT along ``axis`` (jnp.fft.ifft)."""
    return _core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The DFT of real input: ``n // 2 + 1`` bins along ``axis``."""
    return _core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of ``rfft``: ``n`` real values along ``axis`` (default
    ``2 * (m - 1)`` for ``m`` input bins)."""
    return _core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The DFT of a Hermitian-symmetric signal given by its first half:
    real output of length ``n`` (default ``2 * (m - 1)``)."""
    _check_1d("hfft", axis)
    length = None
    if n is None:
        length = (int(_ops.shape_of(a)[axis]) - 1) * 2
    else:
        length = n
    return _ops.apply(
        _hfft_impl, (a,), (("axis", axis), ("n", n), ("nn", length), ("norm", norm))
    )


def _hfft_impl(a: Any, *, n: Any, axis: int, norm: Any, nn: int) -> Any:
    t = _ops.as_tracer(a)
    conj_a = lax.conj(t)
    out = _core_impl(
        _promote(conj_a, FftType.IRFFT),
        name="hfft",
        typ=FftType.IRFFT,
        s=None if n is None else (n,),
        axes=(axis % len(t.shape),),
        norm=norm,
    )
    return lax.mul(out, float(nn))


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of ``hfft``: ``n // 2 + 1`` complex bins."""
    _check_1d("ihfft", axis)
    nn = int(_ops.shape_of(a)[axis]) if n is None else n
    return _ops.apply(
        _ihfft_impl, (a,), (("axis", axis), ("n", n), ("nn", nn), ("norm", norm))
    )


def _ihfft_impl(a: Any, *, n: Any, axis: int, norm: Any, nn: int) -> Any:
    t = _ops.as_tracer(a)
    out = _core_impl(
        t,
        name="ihfft",
        typ=FftType.RFFT,
        s=None if n is None else (n,),
        axes=(axis % len(t.shape),),
        norm=norm,
    )
    return lax.mul(lax.conj(out), 1.0 / nn)


def fft2(
    a: Any, s: Any = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    """The 2-D DFT over ``axes`` (default the last two)."""
    return _core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(
    a: Any, s: Any = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    """The 2-D inverse DFT over ``axes``."""
    return _core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(
    a: Any, s: Any = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    """The 2-D DFT of real input (the last axis halved)."""
    return _core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(
    a: Any, s: Any = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    """The inverse of ``rfft2``."""
    return _core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def fftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None) -> Any:
    """The N-D DFT over ``axes`` (default all, or the last ``len(s)``)."""
    return _core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None) -> Any:
    """The N-D inverse DFT."""
    return _core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None) -> Any:
    """The N-D DFT of real input (the last axis halved)."""
    return _core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None) -> Any:
    """The inverse of ``rfftn``."""
    return _core("irfftn", FftType.IRFFT, a, s, axes, norm)


def _freq_dtype(dtype: Any) -> np.dtype:
    if dtype is not None:
        return np.dtype(dtype)
    return np.dtype(np.float64 if config.read("enable_x64") else np.float32)


def _check_freq_args(name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(
            f"The n argument of jax.numpy.fft.{name} only takes an int. "
            f"Got n = {list(n)}."
        )
    if isinstance(d, (list, tuple)):
        raise ValueError(
            f"The d argument of jax.numpy.fft.{name} only takes a single value. "
            f"Got d = {list(d)}."
        )


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an ``n``-point DFT with spacing ``d``:
    ``[0, 1, ..., n//2 - 1 (or n//2), -(n//2), ..., -1] / (d * n)``."""
    _check_freq_args("fftfreq", n, d)
    n = operator.index(n)
    out = _ops.apply(_fftfreq_impl, (d,), (("dtype", _freq_dtype(dtype)), ("n", n)))
    return _on_device(out, device)


def _work_dtype(dtype: np.dtype) -> np.dtype:
    """The real floating type frequencies are computed in (float32 for
    complex64 and 32-bit or narrower types, float64 for 64-bit ones)."""
    size = dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize
    return np.dtype(np.float64 if size == 8 else np.float32)


def _fftfreq_impl(d: Any, *, n: int, dtype: np.dtype) -> Any:
    work = _work_dtype(dtype)
    k = np.array([(i + n // 2) % n - n // 2 for i in range(n)], dtype=work)
    t = lax.convert_element_type(_ops.as_tracer(d), work)
    out = lax.div(_ops.as_tracer(k), lax.mul(t, float(n)))
    return lax.convert_element_type(out, dtype)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of ``rfft``: ``[0, 1, ..., n//2] / (d * n)``."""
    _check_freq_args("rfftfreq", n, d)
    n = operator.index(n)
    out = _ops.apply(_rfftfreq_impl, (d,), (("dtype", _freq_dtype(dtype)), ("n", n)))
    return _on_device(out, device)


def _rfftfreq_impl(d: Any, *, n: int, dtype: np.dtype) -> Any:
    # As JAX: k / (d * n) with both in `dtype`, so an integer dtype
    # truncates d * n and gives the true quotient in floats.
    if dtype.kind in "fc":
        k = np.arange(0, n // 2 + 1, dtype=dtype)
        t = lax.convert_element_type(_ops.as_tracer(d), dtype)
        return lax.div(_ops.as_tracer(k), lax.mul(t, float(n)))
    work = _work_dtype(dtype)
    k = np.arange(0, n // 2 + 1, dtype=work)
    dn = lax.mul(lax.convert_element_type(_ops.as_tracer(d), work), float(n))
    dn = lax.convert_element_type(lax.convert_element_type(dn, dtype), work)
    return lax.div(_ops.as_tracer(k), dn)


def _on_device(x: Any, device: Any) -> Any:
    if device is None:
        return x
    from baton._device_put import device_put

    return device_put(x, device)


def _shifts(shape: tuple[int, ...], axes: Any, sign: int) -> tuple[Any, Any]:
    if axes is None:
        axes = tuple(range(len(shape)))
        return [sign * (n // 2) for n in shape], axes
    if isinstance(axes, int):
        return sign * (shape[axes] // 2), axes
    return [sign * (shape[ax] // 2) for ax in axes], tuple(axes)


def fftshift(x: Any, axes: Any = None) -> Any:
    """Moves the zero-frequency bin to the centre (jnp.fft.fftshift)."""
    from baton.numpy._rearranging import roll

    shift, axes = _shifts(tuple(int(d) for d in _ops.shape_of(x)), axes, 1)
    return roll(x, shift, axes)


def ifftshift(x: Any, axes: Any = None) -> Any:
    """The inverse of ``fftshift``."""
    from baton.numpy._rearranging import roll

    shift, axes = _shifts(tuple(int(d) for d in _ops.shape_of(x)), axes, -1)
    return roll(x, shift, axes)
