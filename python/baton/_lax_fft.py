"""``bt.lax.fft`` and ``bt.lax.FftType``, as ``jax.lax``'s.

``fft(x, fft_type, fft_lengths)`` transforms the trailing
``len(fft_lengths)`` dimensions of ``x`` with the IR's fft op
(``baton/compiler/fft_ops.h``; pocketfft on the CPU). ``fft_type`` may be
an ``FftType``, one of the strings ``'fft' 'ifft' 'rfft' 'irfft'`` (either
case), or any enum-like object whose ``name`` is one of those (so
``jax.lax.FftType.RFFT`` works too). As JAX's ``lax.fft``, the operand is
promoted first: to its complex type for ``FFT``, ``IFFT`` and ``IRFFT``
(float64 and 64-bit integers to complex128, everything else to complex64)
and to its real floating type for ``RFFT`` (complex operands are refused);
empty ``fft_lengths`` return the promoted operand. The op itself takes 1 to
3 lengths; ``IRFFT``'s operand must end in ``fft_lengths[-1] // 2 + 1``.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax

__all__ = ["FftType", "fft"]

NOT_OPERATIONS = frozenset({"FftType"})


class FftType(enum.IntEnum):
    """Which transform ``fft`` computes (jax.lax.FftType's values)."""

    FFT = 0  # forward complex-to-complex
    IFFT = 1  # inverse complex-to-complex, scaled by 1/N
    RFFT = 2  # forward real-to-complex
    IRFFT = 3  # inverse complex-to-real, scaled by 1/N


def fft_type_of(fft_type: Any) -> FftType:
    """``fft_type`` in any of the forms ``fft`` accepts, as an ``FftType``."""
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        try:
            return FftType[fft_type.upper()]
        except KeyError:
            raise ValueError(f"Unknown FFT type '{fft_type}'") from None
    name = getattr(fft_type, "name", None)
    if isinstance(name, str) and name.upper() in FftType.__members__:
        return FftType[name.upper()]
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _wide(dt: np.dtype) -> bool:
    """64-bit types promote to the 64-bit float/complex (they exist only
    under x64, as JAX's to_inexact_dtype)."""
    return (dt.itemsize == 8 and dt.kind in "iuf") or dt == np.complex128


def fft(x: Any, fft_type: Any, fft_lengths: Sequence[int]) -> Any:
    """jax.lax.fft: the DFT of ``fft_type`` over the trailing
    ``len(fft_lengths)`` dimensions of ``x`` (see the module docstring)."""
    typ = fft_type_of(fft_type)
    lengths = tuple(int(n) for n in fft_lengths)
    t = _ops.as_tracer(x)
    dt = np.dtype(t.dtype)
    if typ == FftType.RFFT:
        if dt.kind == "c":
            raise ValueError("only real valued inputs supported for rfft")
        if dt.kind != "f":
            dt = np.dtype(np.float64 if _wide(dt) else np.float32)
        t = lax.convert_element_type(t, dt)
    else:
        t = lax.convert_element_type(
            t, np.dtype(np.complex128 if _wide(dt) else np.complex64)
        )
    if not lengths:
        return t
    return lax._fft(t, typ.name.lower(), lengths)
