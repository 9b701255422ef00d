"""Distributions that JAX samples as a fixed transform of ``uniform``,
``normal`` or ``bernoulli`` draws: ``exponential``, ``laplace``,
``logistic``, ``cauchy``, ``pareto``, ``weibull_min``, ``rayleigh``,
``lognormal``, ``geometric``, ``rademacher``, ``maxwell``,
``double_sided_maxwell``, ``wald``, ``triangular`` (and ``clone``).

The draws are JAX's bit for bit (``_samplers``), and the logarithms are
XLA's float32 ones (``_float_ops.log32`` / ``log1p32`` through
``_gumbel.log`` / ``_log1p``), so exponential, laplace and logistic give
JAX's values bit for bit in float32; the others use baton's tan, pow,
sqrt, exp and norm and agree to a few ulp.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from baton import _ops
from baton._baton import lax
from baton.random import _float_ops, _gumbel, _keys, _samplers

_I32 = np.dtype(np.int32)


def _bnp() -> Any:
    import baton.numpy as bnp

    return bnp


def _shape(shape: Any, name: str) -> tuple[int, ...]:
    return _keys.canonical_shape(shape, name)


def _log1p(x: Any, d: np.dtype) -> Any:
    return _gumbel._log1p(x, d)


# ---- location-free transforms of one uniform draw ----


def _exponential_impl(u: Any, *, dtype: np.dtype) -> Any:
    return lax.neg(_log1p(lax.neg(u), dtype))


def exponential(
    key: Any, shape: Any = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Standard exponential draws ``-log1p(-u)``, u uniform in [0, 1)."""
    d = _samplers.float_dtype(dtype, "exponential")
    u = _samplers.uniform(key, _shape(shape, "exponential"), d)
    return _ops.apply(_exponential_impl, (u,), (("dtype", d),))


def _laplace_impl(u: Any, *, dtype: np.dtype) -> Any:
    return lax.mul(lax.sign(u), _log1p(lax.neg(lax.abs(u)), dtype))


def laplace(
    key: Any, shape: Any = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Standard Laplace draws ``sign(u) * log1p(-|u|)``, u uniform in
    (-1, 1)."""
    d = _samplers.float_dtype(dtype, "laplace")
    lo = -1.0 + float(ml_dtypes.finfo(d).epsneg)
    u = _samplers.uniform(key, _shape(shape, "laplace"), d, minval=lo, maxval=1.0)
    return _ops.apply(_laplace_impl, (u,), (("dtype", d),))


def _logistic_impl(u: Any, *, dtype: np.dtype) -> Any:
    return lax.sub(_gumbel.log(u, dtype), _log1p(lax.neg(u), dtype))


def logistic(
    key: Any, shape: Any = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Standard logistic draws ``log(u) - log1p(-u)``, u uniform in
    [tiny, 1)."""
    d = _samplers.float_dtype(dtype, "logistic")
    tiny = float(ml_dtypes.finfo(d).tiny)
    u = _samplers.uniform(key, _shape(shape, "logistic"), d, minval=tiny, maxval=1.0)
    return _ops.apply(_logistic_impl, (u,), (("dtype", d),))


def _cauchy_impl(u: Any) -> Any:
    return lax.tan(lax.mul(lax.sub(u, 0.5), np.pi))


def cauchy(
    key: Any, shape: Any = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Standard Cauchy draws ``tan(pi (u - 1/2))``, u uniform in [eps, 1)."""
    d = _samplers.float_dtype(dtype, "cauchy")
    eps = float(ml_dtypes.finfo(d).eps)
    u = _samplers.uniform(key, _shape(shape, "cauchy"), d, minval=eps, maxval=1.0)
    return _ops.apply(_cauchy_impl, (u,))


# ---- parametrised transforms ----


def _default_shape(shape: Any, name: str, *params: Any) -> tuple[int, ...]:
    if shape is None:
        return tuple(_bnp().broadcast_shapes(*(_ops.shape_of(p) for p in params)))
    return _shape(shape, name)


def _pareto_impl(e: Any, b: Any) -> Any:
    d = np.dtype(e.dtype)
    return _gumbel.exp(lax.div(e, lax.astype(b, d)), d)


def pareto(
    key: Any, b: Any, shape: Any = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Pareto draws of shape parameter ``b``: ``exp(e / b)`` for e standard
    exponential."""
    d = _samplers.float_dtype(dtype, "pareto")
    s = _default_shape(shape, "pareto", b)
    e = exponential(key, s, d)
    return _ops.apply(_pareto_impl, (e, _samplers._host_or_traced(b, d)))


def _weibull_impl(u: Any, scale: Any, concentration: Any) -> Any:
    bnp = _bnp()
    d = np.dtype(u.dtype)
    x = lax.neg(_log1p(lax.neg(u), d))
    return bnp.power(x, 1.0 / lax.astype(concentration, d)) * lax.astype(scale, d)


def weibull_min(
    key: Any, scale: Any, concentration: Any, shape: Any = (), dtype: Any = None
) -> Any:
    """Weibull draws ``(-log1p(-u))**(1/concentration) * scale``."""
    d = _samplers.float_dtype(dtype, "weibull_min")
    u = _samplers.uniform(key, _shape(shape, "weibull_min"), d)
    return _ops.apply(
        _weibull_impl,
        (
            u,
            _samplers._host_or_traced(scale, d),
            _samplers._host_or_traced(concentration, d),
        ),
    )


def _rayleigh_impl(u: Any, scale: Any) -> Any:
    d = np.dtype(u.dtype)
    log_u = _gumbel.log(u, d)
    s = lax.broadcast_to(lax.astype(scale, d), tuple(u.shape))
    return lax.mul(s, lax.sqrt(lax.mul(log_u, -2.0)))


def rayleigh(
    key: Any,
    scale: Any,
    shape: Any = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Rayleigh draws ``scale * sqrt(-2 log u)``."""
    d = _samplers.float_dtype(dtype, "rayleigh")
    s = _default_shape(shape, "rayleigh", scale)
    u = _samplers.uniform(key, s, d)
    return _ops.apply(_rayleigh_impl, (u, _samplers._host_or_traced(scale, d)))


def _lognormal_impl(n: Any, sigma: Any) -> Any:
    d = np.dtype(n.dtype)
    return _gumbel.exp(lax.mul(n, lax.astype(sigma, d)), d)


def lognormal(
    key: Any,
    sigma: Any = 1.0,
    shape: Any = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Log-normal draws ``exp(sigma * n)`` for n standard normal."""
    d = _samplers.float_dtype(dtype, "lognormal")
    s = _default_shape(shape, "lognormal", sigma)
    n = _samplers.normal(key, s, d)
    return _ops.apply(_lognormal_impl, (n, _samplers._host_or_traced(sigma, d)))


def _geometric_impl(u: Any, p: Any, *, dtype: np.dtype) -> Any:
    d = np.dtype(u.dtype)
    u = lax.select(lax.eq(u, 0.0), lax.full((), 1.0, d), u)
    log_u = _gumbel.log(u, d)
    log_q = _log1p(lax.neg(lax.astype(p, d)), d)
    g = lax.add(lax.floor(lax.div(log_u, lax.broadcast_to(log_q, tuple(u.shape)))), 1.0)
    return lax.astype(g, dtype)


def geometric(
    key: Any, p: Any, shape: Any = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Geometric draws (trials to the first success, probability ``p``):
    ``floor(log u / log1p(-p)) + 1``, as integers (int32)."""
    pd = _ops.dtype_of(p)
    fd = (
        pd
        if pd is not None and _ops.is_float(pd)
        else _samplers.float_dtype(None, "geometric")
    )
    s = _default_shape(shape, "geometric", p)
    u = _samplers.uniform(key, s, fd)
    d = _I32 if dtype is None else np.dtype(dtype)
    return _ops.apply(
        _geometric_impl, (u, _samplers._host_or_traced(p, fd)), (("dtype", d),)
    )


def _wald_impl(
    v: Any, z: Any, mean: Any, *, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    mean = lax.broadcast_to(lax.astype(mean, dtype), shape)
    y = lax.mul(v, v)
    y_sq = lax.mul(y, y)
    mean_sq = lax.mul(mean, mean)
    half_mean = lax.mul(mean, 0.5)
    base = lax.add(mean, lax.mul(lax.mul(mean_sq, y), 0.5))
    if dtype == np.dtype(np.float32):
        # XLA contracts 4 mean y + mean**2 y**2 and the final subtraction
        # into fused multiply-adds on CPU.
        inner = _float_ops.fma32(lax.mul(mean, 4.0), y, lax.mul(mean_sq, y_sq))
        x = _float_ops.fma32(lax.neg(half_mean), lax.sqrt(inner), base)
    else:
        inner = lax.add(lax.mul(lax.mul(mean, 4.0), y), lax.mul(mean_sq, y_sq))
        x = lax.sub(base, lax.mul(half_mean, lax.sqrt(inner)))
    return lax.select(
        lax.le(z, lax.div(mean, lax.add(mean, x))), x, lax.div(mean_sq, x)
    )


def wald(
    key: Any,
    mean: Any,
    shape: Any = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Wald (inverse Gaussian) draws of ``mean`` > 0 with unit shape, by
    Michael, Schucany and Haas's transform of a normal and a uniform draw
    (keys split as JAX does); ``shape`` defaults to ``mean``'s shape."""
    from baton.random._keys import split

    d = _samplers.float_dtype(dtype, "wald")
    s = _default_shape(shape, "wald", mean)
    if shape is not None:
        _samplers._check_param_shapes("wald", s, mean)
    k1, k2 = split(key)
    v = _samplers.normal(k1, s, d)
    z = _samplers.uniform(k2, s, d)
    return _ops.apply(
        _wald_impl,
        (v, z, _samplers._host_or_traced(mean, d)),
        (("shape", s), ("dtype", d)),
    )


def _triangular_impl(
    u: Any, left: Any, mode: Any, right: Any, *, shape: tuple[int, ...]
) -> Any:
    d = np.dtype(u.dtype)
    left, mode, right = (
        lax.broadcast_to(lax.astype(p, d), shape) for p in (left, mode, right)
    )
    width = lax.sub(right, left)
    fc = lax.div(lax.sub(mode, left), width)
    out1 = lax.add(left, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(mode, left))))
    out2 = lax.sub(
        right,
        lax.sqrt(lax.mul(lax.mul(lax.sub(1.0, u), width), lax.sub(right, mode))),
    )
    return lax.select(lax.lt(u, fc), out1, out2)


def triangular(
    key: Any,
    left: Any,
    mode: Any,
    right: Any,
    shape: Any = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Triangular draws on [left, right] peaking at ``mode``, by inverting
    the distribution function at a uniform draw; ``shape`` defaults to the
    parameters' broadcast shape."""
    d = _samplers.float_dtype(dtype, "triangular")
    s = _default_shape(shape, "triangular", left, mode, right)
    if shape is not None:
        _samplers._check_param_shapes("triangular", s, left, mode, right)
    u = _samplers.uniform(key, s, d)
    params = tuple(_samplers._host_or_traced(p, d) for p in (left, mode, right))
    return _ops.apply(_triangular_impl, (u, *params), (("shape", s),))


# ---- sign and norm draws ----


def _rademacher_impl(b: Any, *, dtype: np.dtype) -> Any:
    return lax.astype(lax.sub(lax.mul(lax.astype(b, dtype), 2), 1), dtype)


def rademacher(
    key: Any, shape: Any = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Random signs, -1 or 1 with equal probability (int32 by default)."""
    s = _shape(shape, "rademacher")
    b = _samplers.bernoulli(key, 0.5, s)
    d = _I32 if dtype is None else np.dtype(dtype)
    return _ops.apply(_rademacher_impl, (b,), (("dtype", d),))


def _maxwell_impl(n: Any) -> Any:
    return lax.sqrt(lax.sum(lax.mul(n, n), -1))


def maxwell(
    key: Any, shape: Any = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Maxwell draws: the length of a 3-vector of standard normals."""
    d = _samplers.float_dtype(dtype, "maxwell")
    n = _samplers.normal(key, (*_shape(shape, "maxwell"), 3), d)
    return _ops.apply(_maxwell_impl, (n,))


def _dsm_impl(m: Any, sign: Any, loc: Any, scale: Any) -> Any:
    d = np.dtype(m.dtype)
    return lax.add(lax.mul(lax.mul(sign, m), lax.astype(scale, d)), lax.astype(loc, d))


def double_sided_maxwell(
    key: Any, loc: Any, scale: Any, shape: Any = (), dtype: Any = None
) -> Any:
    """Symmetric Maxwell draws: a Maxwell draw times a random sign, scaled
    by ``scale`` and moved by ``loc`` (result shape: ``shape`` followed by
    the parameters' broadcast shape)."""
    from baton.random._keys import split

    d = _samplers.float_dtype(dtype, "double_sided_maxwell")
    params = tuple(_bnp().broadcast_shapes(_ops.shape_of(loc), _ops.shape_of(scale)))
    s = _shape(shape, "double_sided_maxwell") or params
    s = s + params
    k_maxwell, k_sign = split(key)
    m = maxwell(k_maxwell, s, d)
    sign = rademacher(k_sign, s, d)
    return _ops.apply(
        _dsm_impl,
        (
            m,
            sign,
            _samplers._host_or_traced(loc, d),
            _samplers._host_or_traced(scale, d),
        ),
    )


def clone(key: Any) -> Any:
    """The key itself (JAX's key-reuse checking does not exist in baton)."""
    return key


__all__ = [
    "cauchy",
    "clone",
    "double_sided_maxwell",
    "exponential",
    "geometric",
    "laplace",
    "logistic",
    "lognormal",
    "maxwell",
    "pareto",
    "rademacher",
    "rayleigh",
    "triangular",
    "wald",
    "weibull_min",
]
