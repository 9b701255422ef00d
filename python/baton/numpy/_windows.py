"""Window functions: bartlett, blackman, hamming, hanning (float32 arrays of
``M`` points, computed on the host as numpy does, then put on the device)."""

from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from baton import _ops
from baton._baton import Array, lax
from baton.numpy import _creation

Tracer = lax.Tracer

__all__ = [
    "bartlett",
    "blackman",
    "hamming",
    "hanning",
]


# ---- window functions ----


def _window_len(name: str, M: Any) -> int:
    if isinstance(M, (Tracer, Array)) or isinstance(M, bool):
        if isinstance(M, bool):
            raise TypeError(f"{name}: `M` must be an int, not bool")
        raise TypeError(
            f"{name}: `M` (the window length) must be a static Python int; it "
            "sets the result's shape"
        )
    try:
        return operator.index(M)
    except TypeError:
        raise TypeError(f"{name}: `M` must be an int, not {type(M).__name__}") from None


def _window(name: str, M: Any, f: Callable[[np.ndarray, int], np.ndarray]) -> Any:
    m = _window_len(name, M)
    if m <= 0:
        w = np.zeros((0,), np.float32)
    elif m == 1:
        w = np.ones((1,), np.float32)
    else:
        w = f(np.arange(m, dtype=np.float32), m).astype(np.float32)
    if _ops._is_tracing():
        return lax.constant(w)
    return _creation.asarray(w)


def _f32(v: Any) -> np.float32:
    return np.float32(v)


def _cos_term(n: np.ndarray, m: int, k: int) -> np.ndarray:
    # float32 arithmetic throughout, as JAX computes the window.
    return np.cos(_f32(2 * k * math.pi) * n / _f32(m - 1), dtype=np.float32)


def bartlett(M: int) -> Any:
    """The Bartlett (triangular) window of length ``M`` (float32)."""

    def f(n: np.ndarray, m: int) -> np.ndarray:
        h = _f32((m - 1) / 2)
        return _f32(1) - np.abs(n - h) / h

    return _window("bartlett", M, f)


def blackman(M: int) -> Any:
    """The Blackman window of length ``M`` (float32)."""

    def f(n: np.ndarray, m: int) -> np.ndarray:
        return (
            _f32(0.42)
            - _f32(0.5) * _cos_term(n, m, 1)
            + _f32(0.08) * _cos_term(n, m, 2)
        )

    return _window("blackman", M, f)


def hamming(M: int) -> Any:
    """The Hamming window of length ``M`` (float32)."""
    return _window(
        "hamming", M, lambda n, m: _f32(0.54) - _f32(0.46) * _cos_term(n, m, 1)
    )


def hanning(M: int) -> Any:
    """The Hann window of length ``M`` (float32)."""
    return _window(
        "hanning", M, lambda n, m: _f32(0.5) - _f32(0.5) * _cos_term(n, m, 1)
    )
