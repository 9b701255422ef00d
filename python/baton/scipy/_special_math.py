"""erf, erfc, erfinv and gammaln as compositions of baton's ops.

baton has no erf kernel, so these are the float32 approximations XLA and
Eigen use, evaluated with baton.numpy operations (so jit, vmap and grad see
ordinary ops). Measured against Python's ``math`` module in float32
(tests/python/test_scipy_special.py checks these bounds):

- ``erf``: ``x * P(x^2) / Q(x^2)`` on ``[-4, 4]`` (Eigen's
  ``generic_fast_erf_float``), clamped outside; absolute error < 1e-6.
- ``erfc``: ``1 - erf(x)`` for ``|x| < 1``; else Cephes' ``erfcf``:
  ``exp(-x^2) / |x| * P(1/x^2)`` (two ranges split at 2), ``2 - erfc(-x)``
  for negative ``x``; relative error < 1e-5 where erfc(x) > 1e-30.
- ``erfinv``: Giles' single-precision approximation ("Approximating the
  erfinv function", GPU Computing Gems, 2011); ``erf(erfinv(y))`` is within
  1e-6 of ``y``; ``+-inf`` at ``+-1``, NaN outside ``[-1, 1]``.
- ``gammaln``: ``log|Gamma(x)|`` by Lanczos' approximation (g = 7, 9
  terms), with the reflection formula below 0.5 (``sin(pi x)`` taken at
  the distance to the nearest integer); error < 1e-5, relative where
  ``|gammaln(x)| > 1``, absolute elsewhere (measured on (-10, 40), outside
  1e-3 of the poles).

Accuracy is float32's for every dtype: float64 inputs (with x64 enabled)
are computed with these same float32 coefficients. Integer inputs compute
in float32; float16 / bfloat16 compute in float32 and round back. erf,
erfc and erfinv carry their exact derivatives (``bt.custom_jvp``); gammaln's
derivative is that of the Lanczos sum (an approximation of digamma with
about the same relative error).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton import _ops
from baton._custom import custom_jvp

__all__ = ["erf", "erfc", "erfinv", "gammaln"]

# Eigen's generic_fast_erf_float: numerator (odd, highest power first, in
# x^2) and denominator (even) coefficients.
_ERF_P = (
    -2.72614225801306e-10,
    2.77068142495902e-08,
    -2.10102402082508e-06,
    -5.69250639462346e-05,
    -7.34990630326855e-04,
    -2.95459980854025e-03,
    -1.60960333262415e-02,
)
_ERF_Q = (
    -1.45660718464996e-05,
    -2.13374055278905e-04,
    -1.68282697438203e-03,
    -7.37332916720468e-03,
    -1.42647390514189e-02,
)
# Cephes erfcf, in 1/x^2: for 1 <= |x| < 2, and for |x| >= 2.
_ERFC_P = (
    2.326819970068386e-2,
    -1.387039388740657e-1,
    3.687424674597105e-1,
    -5.824733027278666e-1,
    6.210004621745983e-1,
    -4.944515323274145e-1,
    3.404879937665872e-1,
    -2.741127028184656e-1,
    5.638259427386472e-1,
)
_ERFC_R = (
    -1.047766399936249e1,
    1.297719955372516e1,
    -7.495518717768503e0,
    2.921019019210786e0,
    -1.015265279202700e0,
    4.218463358204948e-1,
    -2.820767439740514e-1,
    5.641895067754075e-1,
)
# Giles' erfinv: w = -log(1 - x^2); w < 5 uses w - 2.5, else sqrt(w) - 3.
_ERFINV_SMALL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_ERFINV_LARGE = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)
# Lanczos (g = 7, n = 9), as in XLA's Lgamma.
_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (
    676.520368121885098567009190444019,
    -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,
    -176.61502916214059906584551354,
    12.507343278686904814458936853,
    -0.13857109526572011689554707,
    9.984369578019570859563e-6,
    1.50563273514931155834e-7,
)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_PI = math.log(math.pi)


def _bnp() -> Any:
    import baton.numpy as bnp  # baton.numpy imports nothing from here

    return bnp


def _horner(coefficients: tuple[float, ...], y: Any) -> Any:
    p = y * 0.0 + coefficients[0]
    for c in coefficients[1:]:
        p = p * y + c
    return p


def _erf_f32(x: Any) -> Any:
    bnp = _bnp()
    x = bnp.clip(x, -4.0, 4.0)
    x2 = x * x
    return x * _horner(_ERF_P, x2) / _horner(_ERF_Q, x2)


def _erfc_f32(x: Any) -> Any:
    bnp = _bnp()
    a = bnp.abs(x)
    big = a >= 1.0
    safe_a = bnp.where(big, a, 1.0)  # keeps 1/a finite where unused
    q = 1.0 / safe_a
    y = q * q
    poly = bnp.where(safe_a < 2.0, _horner(_ERFC_P, y), _horner(_ERFC_R, y))
    tail = bnp.exp(-safe_a * safe_a) * q * poly
    tail = bnp.where(x < 0, 2.0 - tail, tail)
    return bnp.where(big, tail, 1.0 - _erf_f32(x))


def _erfinv_f32(x: Any) -> Any:
    bnp = _bnp()
    w = -bnp.log1p(-x * x)
    small = w < 5.0
    p = bnp.where(
        small,
        _horner(_ERFINV_SMALL, w - 2.5),
        _horner(_ERFINV_LARGE, bnp.sqrt(bnp.maximum(w, 5.0)) - 3.0),
    )
    return bnp.where(bnp.abs(x) == 1.0, x * np.inf, p * x)


def _lanczos_lgamma(x: Any) -> Any:
    """log Gamma(x) for x >= 0.5."""
    bnp = _bnp()
    z = x - 1.0
    acc = z * 0.0 + _LANCZOS_BASE
    for i, c in enumerate(_LANCZOS):
        acc = acc + c / (z + float(i + 1))
    half_g = _LANCZOS_G + 0.5
    t = z + half_g
    log_t = math.log(half_g) + bnp.log1p(z / half_g)
    return _LOG_SQRT_2PI + (z + 0.5) * log_t - t + bnp.log(acc)


def _gammaln_f32(x: Any) -> Any:
    bnp = _bnp()
    reflect = x < 0.5
    direct = _lanczos_lgamma(bnp.where(reflect, 1.0 - x, x))
    # |sin(pi x)| = sin(pi r) with r = the distance to the nearest integer
    # (exact in floating point), so it stays accurate next to the poles.
    frac = x - bnp.floor(x)
    r = bnp.where(frac > 0.5, 1.0 - frac, frac)
    s = bnp.where(reflect, bnp.sin(math.pi * r), 1.0)
    return bnp.where(reflect, _LOG_PI - bnp.log(s) - direct, direct)


# ---- exact derivatives ----


@custom_jvp
def _erf(x: Any) -> Any:
    return _erf_f32(x)


@_erf.defjvp
def _erf_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return _erf(x), t * (_TWO_OVER_SQRT_PI * _bnp().exp(-x * x))


@custom_jvp
def _erfc(x: Any) -> Any:
    return _erfc_f32(x)


@_erfc.defjvp
def _erfc_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return _erfc(x), t * (-_TWO_OVER_SQRT_PI * _bnp().exp(-x * x))


@custom_jvp
def _erfinv(x: Any) -> Any:
    return _erfinv_f32(x)


@_erfinv.defjvp
def _erfinv_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    y = _erfinv(x)
    return y, t * (_SQRT_PI_OVER_TWO * _bnp().exp(y * y))


# ---- dtype handling and the public functions ----


def _in_float32(fn: Any, x: Any) -> Any:
    """``fn`` computed in float32 (or float64), returned in x's float dtype
    (integers give float32)."""
    t = _ops.as_tracer(x)
    d = np.dtype(t.dtype)
    if d == np.float32 or d == np.float64:
        return fn(t)
    out = fn(t.astype(np.float32))
    return out.astype(d) if _ops.is_float(d) else out


def _erf_impl(x: Any) -> Any:
    return _in_float32(_erf, x)


def _erfc_impl(x: Any) -> Any:
    return _in_float32(_erfc, x)


def _erfinv_impl(x: Any) -> Any:
    return _in_float32(_erfinv, x)


def _gammaln_impl(x: Any) -> Any:
    return _in_float32(_gammaln_f32, x)


def erf(x: Any) -> Any:
    """The error function, ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``
    (absolute error < 1e-6; see the module docstring)."""
    return _ops.apply(_erf_impl, (x,))


def erfc(x: Any) -> Any:
    """``1 - erf(x)``, accurate in relative terms for large ``x``."""
    return _ops.apply(_erfc_impl, (x,))


def erfinv(x: Any) -> Any:
    """The inverse of :func:`erf` on ``[-1, 1]`` (``+-inf`` at ``+-1``,
    NaN outside)."""
    return _ops.apply(_erfinv_impl, (x,))


def gammaln(x: Any) -> Any:
    """``log|Gamma(x)|`` (``inf`` at 0 and the negative integers)."""
    return _ops.apply(_gammaln_impl, (x,))
