"""``stft``, ``istft``, ``csd`` and ``welch`` of ``bt.scipy.signal``:
JAX's ``_spectral_helper`` algorithm composed from ``bnp`` (segments by a
gather of a host-built index table, ``detrend`` per segment, the window
product, ``bnp.fft.rfft``/``fft``; ``istft``'s overlap-add is a scatter-add
with the same kind of table).

Segment lengths, overlaps, FFT lengths, axes and the window are static (they
set shapes); the data may be traced, so each function works under
``bt.jit`` with those as closure constants or static arguments. Window
names other than ``'hann'`` (and tuples such as ``('tukey', 0.25)``) are
computed by ``scipy.signal.get_window``, as JAX does (scipy is optional:
without it only ``'hann'`` and array windows work).
"""

from __future__ import annotations

import operator
import warnings
from typing import Any, Callable

import numpy as np

from baton._config import config
from baton.scipy._signal_detrend import detrend

__all__ = ["csd", "istft", "stft", "welch"]

_BOUNDARIES = ("even", "odd", "constant", "zeros", None)


def _bnp() -> Any:
    import baton.numpy as bnp

    return bnp


def _static_int(value: Any, what: str) -> int:
    """``value`` as a Python int; a traced value is refused (it sets shapes)."""
    try:
        return operator.index(value)
    except TypeError:
        pass
    try:
        return int(value)
    except Exception:
        raise TypeError(
            f"{what} must be a static integer (it sets the result's shape), "
            f"got {type(value).__name__}"
        ) from None


def _inexact(x: Any) -> Any:
    """``x`` as an array of an inexact dtype (JAX's
    ``promote_dtypes_inexact``: integers and bools become float32, float64
    for 64-bit integers when x64 is on)."""
    bnp = _bnp()
    x = bnp.asarray(x)
    dt = np.dtype(x.dtype)
    if not np.issubdtype(dt, np.inexact):
        wide = bool(config.read("enable_x64")) and dt.itemsize == 8
        x = x.astype(np.float64 if wide else np.float32)
    return x


def _complex_dtype(dt: Any) -> np.dtype:
    dt = np.dtype(dt)
    if dt.kind == "c":
        return dt
    return np.dtype(np.complex128 if dt == np.float64 else np.complex64)


def _host_window(window: Any, n: int) -> np.ndarray:
    """A window named by a string or tuple, on the host in float64:
    ``'hann'`` directly (JAX's formula), the others by scipy's
    ``get_window``."""
    if isinstance(window, str) and window == "hann":
        if n == 1:
            return np.ones(1)
        return np.sin(np.linspace(0, np.pi, n, endpoint=False)) ** 2
    try:
        from scipy.signal import get_window
    except ImportError as err:  # pragma: no cover - scipy is installed in CI
        raise ImportError(f"scipy must be available to use window={window!r}") from err
    return np.asarray(get_window(window, n), dtype=np.float64)


def _triage_segments(
    window: Any, nperseg: int | None, input_length: int, dtype: Any
) -> tuple[Any, int]:
    """The window as an array of ``dtype`` and the segment length (JAX's and
    scipy's ``_triage_segments``): a named window takes ``nperseg`` (the
    input length when None, clamped to it with a warning); an array window
    sets ``nperseg`` (which must then match)."""
    bnp = _bnp()
    if isinstance(window, (str, tuple)):
        n = input_length if nperseg is None else int(nperseg)
        if n > input_length:
            warnings.warn(
                f"nperseg={n} is greater than input_length={input_length}, "
                f"using nperseg={input_length}",
                stacklevel=3,
            )
            n = input_length
        return bnp.asarray(_host_window(window, n).astype(dtype)), n
    win = bnp.asarray(window, dtype=dtype)
    size = int(np.prod(win.shape)) if win.shape else 1
    n = size if nperseg is None else int(nperseg)
    if len(win.shape) != 1:
        raise ValueError("window must be 1-D")
    if input_length < size:
        raise ValueError("window is longer than input signal")
    if n != size:
        raise ValueError(
            "value specified for nperseg is different from length of window"
        )
    return win, n


def _extend(x: Any, n: int, boundary: str) -> Any:
    """``x`` extended by ``n`` points at both ends of its last axis:
    ``'even'`` reflects (numpy's ``'reflect'``), ``'odd'`` reflects about the
    end values, ``'constant'`` repeats the edges, ``'zeros'`` pads zeros."""
    bnp = _bnp()
    if n < 1 and boundary != "odd":
        return x
    length = int(x.shape[-1])
    if boundary == "zeros":
        widths = [(0, 0)] * (len(x.shape) - 1) + [(n, n)]
        return bnp.pad(x, widths)
    if boundary == "odd":
        if n < 1:
            return x
        if n > length - 1:
            raise ValueError(
                f"The extension length n ({n}) is too big. "
                f"It must not exceed x.shape[axis]-1, which is {length - 1}."
            )
        left = 2 * x[..., 0:1] - x[..., np.arange(n, 0, -1)]
        right = (
            2 * x[..., length - 1 : length]
            - x[..., np.arange(length - 2, length - 2 - n, -1)]
        )
        return bnp.concatenate([left, x, right], axis=-1)
    if boundary == "constant":
        idx = np.concatenate(
            [np.zeros(n, np.int64), np.arange(length), np.full(n, length - 1)]
        )
        return x[..., idx]
    # 'even': numpy's 'reflect' (the edge is not repeated), any n.
    period = 2 * (length - 1)
    pos = np.arange(-n, length + n)
    if period == 0:
        idx = np.zeros_like(pos)
    else:
        pos = np.abs(pos) % period
        idx = np.where(pos < length, pos, period - pos)
    return x[..., idx]


def _segments(x: Any, nperseg: int, noverlap: int) -> Any:
    """The overlapping segments of the last axis: ``(..., nseg, nperseg)``."""
    length = int(x.shape[-1])
    step = nperseg - noverlap
    starts = np.arange(0, length - nperseg + 1, step, dtype=np.int64)
    idx = starts[:, None] + np.arange(nperseg, dtype=np.int64)[None, :]
    return x[..., idx]


def _fft_helper(
    x: Any,
    win: Any,
    detrend_func: Callable[[Any], Any],
    nperseg: int,
    noverlap: int,
    nfft: int,
    sides: str,
) -> Any:
    """The windowed FFTs of ``x``'s segments along its last axis."""
    bnp = _bnp()
    result = detrend_func(_segments(x, nperseg, noverlap))
    if np.dtype(win.dtype).kind == "c":
        result = result.astype(_complex_dtype(result.dtype))
    result = win * result
    if sides == "twosided":
        return bnp.fft.fft(result, n=nfft)
    return bnp.fft.rfft(bnp.real(result), n=nfft)


def _spectral_helper(
    x: Any,
    y: Any,
    fs: Any = 1.0,
    window: Any = "hann",
    nperseg: Any = None,
    noverlap: Any = None,
    nfft: Any = None,
    detrend_type: Any = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    mode: str = "psd",
    boundary: str | None = None,
    padded: bool = False,
) -> tuple[Any, Any, Any]:
    """JAX's ``_spectral_helper``: ``(freqs, times, result)`` with the
    frequency axis of ``result`` where ``axis`` was and the segments last
    (``y=None``: the auto-spectrum)."""
    bnp = _bnp()
    if mode not in ("psd", "stft"):
        raise ValueError(
            f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')"
        )
    if boundary not in _BOUNDARIES:
        raise ValueError(
            f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARIES)}"
        )
    axis = _static_int(axis, "axis")
    x = _inexact(x)
    nd = len(x.shape)
    if not -nd <= axis < max(nd, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd}")
    axis = axis % max(nd, 1)

    def drop(shape: tuple) -> tuple:
        return tuple(int(d) for i, d in enumerate(shape) if i != axis)

    if y is None:
        outershape = drop(x.shape)
        yarr = None
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        yarr = _inexact(y)
        common = np.result_type(np.dtype(x.dtype), np.dtype(yarr.dtype))
        x, yarr = x.astype(common), yarr.astype(common)
        if len(x.shape) != len(yarr.shape):
            raise ValueError(
                "two-arguments must have the same rank "
                f"({len(x.shape)} vs {len(yarr.shape)})."
            )
        try:
            outershape = tuple(np.broadcast_shapes(drop(x.shape), drop(yarr.shape)))
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err

    result_dtype = _complex_dtype(x.dtype)
    freq_dtype = np.finfo(result_dtype).dtype

    nperseg_int = None
    if nperseg is not None:
        nperseg_int = _static_int(nperseg, "nperseg")
        if nperseg_int < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg_int = _triage_segments(
        window, nperseg_int, input_length=int(x.shape[axis]), dtype=x.dtype
    )
    noverlap_int = (
        nperseg_int // 2 if noverlap is None else _static_int(noverlap, "noverlap")
    )
    nfft_int = nperseg_int if nfft is None else _static_int(nfft, "nfft")

    size_x = int(np.prod(x.shape))
    if y is None and size_x == 0:
        shape = tuple(int(d) for d in x.shape)
        return (
            bnp.zeros(shape, freq_dtype),
            bnp.zeros(shape, freq_dtype),
            bnp.zeros(shape, result_dtype),
        )
    if y is not None and (size_x == 0 or int(np.prod(yarr.shape)) == 0):
        n = min(int(x.shape[axis]), int(yarr.shape[axis]))
        shape = (*outershape[:axis], n, *outershape[axis:])
        return (
            bnp.zeros(shape, freq_dtype),
            bnp.zeros(shape, freq_dtype),
            bnp.zeros(shape, result_dtype),
        )

    x = bnp.moveaxis(x, axis, -1)
    if yarr is not None and len(yarr.shape) > 1:
        yarr = bnp.moveaxis(yarr, axis, -1)
    if yarr is not None and int(x.shape[-1]) != int(yarr.shape[-1]):
        lx, ly = int(x.shape[-1]), int(yarr.shape[-1])
        if lx < ly:
            x = bnp.pad(x, [(0, 0)] * (len(x.shape) - 1) + [(0, ly - lx)])
        else:
            yarr = bnp.pad(yarr, [(0, 0)] * (len(yarr.shape) - 1) + [(0, lx - ly)])

    if nfft_int < nperseg_int:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int

    if boundary is not None:
        x = _extend(x, nperseg_int // 2, boundary)
        if yarr is not None:
            yarr = _extend(yarr, nperseg_int // 2, boundary)

    if padded:
        nadd = (-(int(x.shape[-1]) - nperseg_int) % nstep) % nperseg_int
        x = bnp.pad(x, [(0, 0)] * (len(x.shape) - 1) + [(0, nadd)])
        if yarr is not None:
            yarr = bnp.pad(yarr, [(0, 0)] * (len(yarr.shape) - 1) + [(0, nadd)])

    if isinstance(detrend_type, str):

        def detrend_func(d: Any) -> Any:
            return detrend(d, type=detrend_type, axis=-1)

    elif callable(detrend_type):
        if axis != -1:
            # JAX's wrapper (axis is non-negative here, so it always applies).
            def detrend_func(d: Any) -> Any:
                d = bnp.moveaxis(d, axis, -1)
                d = detrend_type(d)
                return bnp.moveaxis(d, -1, axis)

        else:  # pragma: no cover - axis is normalised above
            detrend_func = detrend_type
    elif not detrend_type:

        def detrend_func(d: Any) -> Any:
            return d

    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")

    if scaling == "density":
        scale = 1.0 / (fs * bnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / bnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = bnp.sqrt(scale)
    scale = bnp.asarray(scale).astype(_complex_dtype(bnp.asarray(scale).dtype))

    complex_in = np.dtype(x.dtype).kind == "c" or (
        yarr is not None and np.dtype(yarr.dtype).kind == "c"
    )
    if return_onesided:
        sides = "onesided"
        if complex_in:
            sides = "twosided"
            warnings.warn(
                "Input data is complex, switching to return_onesided=False",
                stacklevel=3,
            )
    else:
        sides = "twosided"

    if sides == "twosided":
        freqs = bnp.fft.fftfreq(nfft_int, dtype=freq_dtype) * fs
    else:
        freqs = bnp.fft.rfftfreq(nfft_int, dtype=freq_dtype) * fs
    freqs = bnp.asarray(freqs).astype(freq_dtype)

    result = _fft_helper(
        x, win, detrend_func, nperseg_int, noverlap_int, nfft_int, sides
    )
    if yarr is not None:
        result_y = _fft_helper(
            yarr, win, detrend_func, nperseg_int, noverlap_int, nfft_int, sides
        )
        result = bnp.conj(result) * result_y
    elif mode == "psd":
        result = bnp.conj(result) * result

    result = result * scale
    if sides == "onesided" and mode == "psd":
        nfreq = int(result.shape[-1])
        factor = np.full(nfreq, 2.0, dtype=freq_dtype)
        factor[0] = 1.0
        if nfft_int % 2 == 0:
            factor[-1] = 1.0
        result = result * bnp.asarray(factor)

    times = np.arange(
        nperseg_int / 2, int(x.shape[-1]) - nperseg_int / 2 + 1, nstep, dtype=np.float64
    )
    if boundary is not None:
        times = times - nperseg_int / 2
    time = bnp.asarray(times.astype(freq_dtype)) / fs
    time = bnp.asarray(time).astype(freq_dtype)

    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = bnp.real(result)
    result = bnp.moveaxis(result, -1, axis)
    return freqs, time, result


def stft(
    x: Any,
    fs: Any = 1.0,
    window: Any = "hann",
    nperseg: int = 256,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: Any = False,
    return_onesided: bool = True,
    boundary: str | None = "zeros",
    padded: bool = True,
    axis: int = -1,
) -> tuple[Any, Any, Any]:
    """The short-time Fourier transform of ``x`` along ``axis``
    (``jax.scipy.signal.stft``): ``(f, t, Zxx)`` with ``Zxx`` complex, its
    frequency axis at ``axis`` and its segment axis last.

    ``window``: a name or tuple (``scipy.signal.get_window``) or a 1-D
    array; ``nperseg`` points per segment (clamped to the signal length),
    ``noverlap`` (default ``nperseg // 2``), ``nfft`` (default ``nperseg``);
    ``detrend``: False, ``'constant'``, ``'linear'`` or a callable;
    ``boundary``: ``'zeros'``, ``'even'``, ``'odd'``, ``'constant'`` or
    None; ``padded`` zero-pads to a whole number of segments. The spectrum
    is scaled by ``1 / sum(window)``."""
    return _spectral_helper(
        x,
        None,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        scaling="spectrum",
        axis=axis,
        mode="stft",
        boundary=boundary,
        padded=padded,
    )


def _median_bias(n: int) -> float:
    """The median's bias relative to the mean of ``n`` periodograms."""
    ii_2 = np.arange(2.0, n, 2)
    return float(1 + np.sum(1.0 / (ii_2 + 1) - 1.0 / ii_2))


def csd(
    x: Any,
    y: Any,
    fs: Any = 1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: Any = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
) -> tuple[Any, Any]:
    """The cross power spectral density of ``x`` and ``y`` by Welch's
    method (``jax.scipy.signal.csd``): ``(f, Pxy)``, the periodograms of the
    windowed, detrended segments averaged by ``average`` (``'mean'`` or
    ``'median'``, the latter corrected for its bias). ``scaling``
    ``'density'`` (per unit of ``fs``) or ``'spectrum'``. ``y=None`` gives
    the power spectral density of ``x`` (real); otherwise ``Pxy`` is
    complex. The other arguments are ``stft``'s."""
    bnp = _bnp()
    if average not in ("mean", "median"):
        raise ValueError(f'average must be "median" or "mean", got {average}')
    freqs, _, pxy = _spectral_helper(
        x,
        y,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        scaling,
        axis,
        mode="psd",
    )
    if y is not None:
        pxy = pxy + 0j
    shape = tuple(int(d) for d in pxy.shape)
    if len(shape) >= 2 and int(np.prod(shape)) > 0:
        if shape[-1] > 1:
            if average == "median":
                bias = _median_bias(shape[-1])
                if np.dtype(pxy.dtype).kind == "c":
                    re = bnp.median(bnp.real(pxy), axis=-1)
                    im = bnp.median(bnp.imag(pxy), axis=-1)
                    pxy = re + 1j * im
                else:
                    pxy = bnp.median(pxy, axis=-1)
                pxy = pxy / bnp.asarray(bias).astype(pxy.dtype)
            else:
                pxy = bnp.mean(pxy, axis=-1)
        else:
            pxy = bnp.reshape(pxy, shape[:-1])
    return freqs, pxy


def welch(
    x: Any,
    fs: Any = 1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: Any = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
) -> tuple[Any, Any]:
    """The power spectral density of ``x`` by Welch's method
    (``jax.scipy.signal.welch``): ``(f, Pxx)``, real; the arguments are
    ``csd``'s."""
    bnp = _bnp()
    freqs, pxx = csd(
        x,
        None,
        fs=fs,
        window=window,
        nperseg=nperseg,
        noverlap=noverlap,
        nfft=nfft,
        detrend=detrend,
        return_onesided=return_onesided,
        scaling=scaling,
        axis=axis,
        average=average,
    )
    return freqs, bnp.real(pxx)


def _overlap_add(frames: Any, step: int) -> Any:
    """``(..., nframes, length)`` frames summed at offsets ``step`` apart:
    ``(..., step * (nframes - 1) + length)``."""
    bnp = _bnp()
    *batch, nframes, length = (int(d) for d in frames.shape)
    out = step * (nframes - 1) + length
    idx = (np.arange(nframes)[:, None] * step + np.arange(length)[None, :]).ravel()
    flat = bnp.reshape(frames, (*batch, nframes * length))
    return bnp.zeros((*batch, out), frames.dtype).at[..., idx].add(flat)


def istft(
    Zxx: Any,
    fs: Any = 1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    input_onesided: bool = True,
    boundary: bool = True,
    time_axis: int = -1,
    freq_axis: int = -2,
) -> tuple[Any, Any]:
    """The inverse short-time Fourier transform (``jax.scipy.signal.istft``):
    ``(t, x)`` from an STFT ``Zxx`` whose frequencies lie along
    ``freq_axis`` and segments along ``time_axis``, by inverse FFTs
    (``irfft`` when ``input_onesided``), the window and a normalised
    overlap-add. ``nperseg`` defaults from ``Zxx``'s frequency axis,
    ``noverlap`` to ``nperseg // 2``; ``boundary=True`` strips the
    ``nperseg // 2`` points ``stft`` added at each end."""
    bnp = _bnp()
    z = bnp.asarray(Zxx)
    nd = len(z.shape)
    if nd < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = _static_int(freq_axis, "freq_axis")
    time_axis = _static_int(time_axis, "time_axis")
    for name, ax in (("freq_axis", freq_axis), ("time_axis", time_axis)):
        if not -nd <= ax < nd:
            raise ValueError(
                f"{name} {ax} is out of bounds for array of dimension {nd}"
            )
    freq_axis, time_axis = freq_axis % nd, time_axis % nd
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    z = z.astype(_complex_dtype(_inexact(z).dtype))

    nfreq = int(z.shape[freq_axis])
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg_int = _static_int(nperseg or n_default, "nperseg")
    if nperseg_int < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default
        if input_onesided and nperseg_int == n_default + 1:
            nfft_int += 1
    else:
        nfft_int = _static_int(nfft, "nfft")
    if nfft_int < nperseg_int:
        raise ValueError(
            f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg_int})."
        )
    noverlap_int = _static_int(noverlap or nperseg_int // 2, "noverlap")
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int

    if time_axis != nd - 1 or freq_axis != nd - 2:
        outer = tuple(i for i in range(nd) if i not in (time_axis, freq_axis))
        z = bnp.transpose(z, (*outer, freq_axis, time_axis))

    # As JAX: the inverse FFT takes the caller's nfft (None: its default).
    ifunc = bnp.fft.irfft if input_onesided else bnp.fft.ifft
    xsubs = ifunc(z, n=nfft, axis=-2)[..., :nperseg_int, :]

    if isinstance(window, (str, tuple)):
        win = bnp.asarray(_host_window(window, nperseg_int).astype(xsubs.dtype))
    else:
        win = bnp.asarray(window)
        if len(win.shape) != 1:
            raise ValueError("window must be 1-D")
        if int(win.shape[0]) != nperseg_int:
            raise ValueError(f"window must have length of {nperseg_int}")
    xsubs = xsubs * bnp.sum(win)

    wcol = bnp.reshape(win, (nperseg_int, 1))
    x = _overlap_add(bnp.swapaxes(xsubs * wcol, -2, -1), nstep)
    nseg = int(xsubs.shape[-1])
    wsq = bnp.broadcast_to(
        bnp.reshape(win * win, (1, nperseg_int)), (nseg, nperseg_int)
    )
    norm = _overlap_add(wsq, nstep)

    if boundary:
        h = nperseg_int // 2
        x = x[..., h:-h]
        norm = norm[..., h:-h]
    x = x / bnp.where(norm > 1e-10, norm, 1.0)

    if len(x.shape) > 1 and time_axis != nd - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = bnp.moveaxis(x, -1, time_axis)

    tdt = np.finfo(np.dtype(x.dtype)).dtype
    time = bnp.arange(int(x.shape[0]), dtype=tdt) / fs
    return bnp.asarray(time).astype(tdt), x
