"""Distributions JAX builds on gamma draws: ``beta``, ``dirichlet``,
``chisquare``, ``f``, ``t``, ``generalized_normal`` and ``ball``.

Each splits its key and combines gamma / log-gamma, normal, uniform and
sign draws exactly as ``jax.random`` does (same splits, same order, same
shapes), so the draws are JAX's (``_gamma``); what is computed from them
uses baton's exp, pow and sqrt, within a few float32 ulp of XLA's.

The gamma draws go through ``_gamma.sample``, so every one of these is
differentiable in its parameters as JAX's are (implicit reparameterisation
of the gamma draws); the arithmetic around them is small ``_ops.apply``
programs of lax ops, which carry their own derivatives.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton.random import _gamma, _gumbel, _keys, _samplers

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def split_data(data: Any, num: int) -> list[Any]:
    """``split(key, num)`` of one key's data, as a list of key data."""
    keys = _keys._split_impl(data, shape=(num,))
    return [lax.reshape(lax.slice(keys, (i, 0), (i + 1, 2)), (2,)) for i in range(num)]


def _param(value: Any, d: np.dtype) -> Any:
    return _samplers._host_or_traced(value, d)


def _check_float(value: Any, name: str, arg: str) -> None:
    """JAX's safe-cast check for a real parameter: complex values cannot
    become a float draw's parameter (baton has no complex dtype, so only a
    Python complex can get here)."""
    if isinstance(value, complex):
        raise TypeError(
            f"In arguments to {name}, cannot safely cast argument `{arg}` of type "
            f"complex to a float dtype"
        )


def _weak_float() -> np.dtype:
    return _F64 if _samplers._x64() else _F32


# ---- beta ----


def _split_keys(data: Any, num: int) -> list[Any]:
    """``split(key, num)`` of one key's data, as separate key data."""
    keys = _keys.split(data, num)
    return [keys[i] for i in range(num)]


def _beta_post(log_a: Any, log_b: Any, *, dtype: np.dtype) -> Any:
    """G_a / (G_a + G_b) from the two log-gamma draws, scaled by their
    maximum so neither underflows (JAX's computation)."""
    log_max = lax.maximum(log_a, log_b)
    ga = _gamma.flush(_gumbel.exp(lax.sub(log_a, log_max), dtype), dtype)
    gb = _gamma.flush(_gumbel.exp(lax.sub(log_b, log_max), dtype), dtype)
    return _gamma.flush(lax.div(ga, lax.add(ga, gb)), dtype)


def beta(
    key: Any,
    a: Any,
    b: Any,
    shape: Any = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Beta(a, b) draws, as ``G_a / (G_a + G_b)`` of two gamma draws
    computed in log space (JAX's method); ``shape`` defaults to the
    broadcast shape of ``a`` and ``b``."""
    data, _ = _keys.single_key(key, "beta")
    d = _samplers.float_dtype(dtype, "beta")
    _check_float(a, "beta", "a")
    _check_float(b, "beta", "b")
    s = _gamma._gamma_shape("beta", shape, a, b)
    key_a, key_b = _split_keys(data, 2)
    log_a = _gamma.sample(key_a, a, s, d, True)
    log_b = _gamma.sample(key_b, b, s, d, True)
    return _ops.apply(_beta_post, (log_a, log_b), (("dtype", d),))


# ---- dirichlet ----


def _softmax_post(log_g: Any, *, dtype: np.dtype) -> Any:
    """softmax over the last axis, as jax.nn.softmax computes it (XLA
    divides by the broadcast sum as a multiply by its reciprocal)."""
    m = lax.max(log_g, -1, True)
    e = _gamma.flush(_gumbel.exp(lax.sub(log_g, m), dtype), dtype)
    inv = lax.div(lax.full((), 1.0, dtype), lax.sum(e, -1, True))
    return _gamma.flush(lax.mul(e, inv), dtype)


def dirichlet(
    key: Any,
    alpha: Any,
    shape: Any = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Dirichlet draws of concentration ``alpha`` (shape ``(..., n)``): the
    softmax of n log-gamma draws. The result has shape ``shape + (n,)``
    (``shape`` defaults to ``alpha.shape[:-1]``)."""
    data, _ = _keys.single_key(key, "dirichlet")
    d = _samplers.float_dtype(dtype, "dirichlet")
    ashape = _ops.shape_of(alpha)
    if len(ashape) < 1:
        raise ValueError(
            f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {len(ashape)}"
        )
    if shape is None:
        s = tuple(ashape[:-1])
    else:
        s = _keys.canonical_shape(shape, "dirichlet")
        _samplers._check_param_shapes("dirichlet", s, np.empty(ashape[:-1]))
    log_g = _gamma.sample(data, alpha, (*s, ashape[-1]), d, True)
    return _ops.apply(_softmax_post, (log_g,), (("dtype", d),))


# ---- chisquare, f, t ----


def _half_impl(df: Any, *, dtype: np.dtype) -> Any:
    return lax.div(lax.astype(df, dtype), lax.full((), 2.0, dtype))


def _half(df: Any, dtype: np.dtype) -> Any:
    """df / 2 in dtype (df converted first, as JAX does)."""
    return _ops.apply(_half_impl, (_param(df, dtype),), (("dtype", dtype),))


def _chisquare_post(log_g: Any, *, dtype: np.dtype) -> Any:
    g = _gamma.flush(_gumbel.exp(log_g, dtype), dtype)
    return _gamma.flush(lax.mul(g, lax.full((), 2.0, dtype)), dtype)


def _chisquare_draw(data: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    log_g = _gamma.sample(data, _half(df, dtype), shape, dtype, True)
    return _ops.apply(_chisquare_post, (log_g,), (("dtype", dtype),))


def chisquare(
    key: Any, df: Any, shape: Any = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Chi-square draws with ``df`` degrees of freedom: ``2 exp(loggamma(
    df / 2))``; ``shape`` defaults to ``df``'s shape."""
    data, _ = _keys.single_key(key, "chisquare")
    d = _samplers.float_dtype(dtype, "chisquare")
    _check_float(df, "chisquare", "df")
    s = _gamma._gamma_shape("chisquare", shape, df)
    return _chisquare_draw(data, df, s, d)


def _f_post(
    chi_num: Any, chi_den: Any, dfnum: Any, dfden: Any, *, dtype: np.dtype
) -> Any:
    dfnum = lax.astype(dfnum, dtype)
    dfden = lax.astype(dfden, dtype)
    # (chi_num / dfnum) / (chi_den / dfden), as XLA's algebraic simplifier
    # rewrites it: (chi_num * dfden) / (dfnum * chi_den).
    num = _gamma.flush(lax.mul(chi_num, dfden), dtype)
    den = _gamma.flush(lax.mul(dfnum, chi_den), dtype)
    return _gamma.flush(lax.div(num, den), dtype)


def f(
    key: Any,
    dfnum: Any,
    dfden: Any,
    shape: Any = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """F-distribution draws: ``(X1 / dfnum) / (X2 / dfden)`` of two
    chi-square draws; ``shape`` defaults to the parameters' broadcast
    shape."""
    data, _ = _keys.single_key(key, "f")
    d = _samplers.float_dtype(dtype, "f")
    _check_float(dfnum, "f", "dfnum")
    _check_float(dfden, "f", "dfden")
    s = _gamma._gamma_shape("f", shape, dfnum, dfden)
    key_dfd, key_dfn = _split_keys(data, 2)
    chi_num = _chisquare_draw(key_dfn, dfnum, s, d)
    chi_den = _chisquare_draw(key_dfd, dfden, s, d)
    args = (chi_num, chi_den, _param(dfnum, d), _param(dfden, d))
    return _ops.apply(_f_post, args, (("dtype", d),))


def _t_post(n: Any, half: Any, g: Any, *, dtype: np.dtype) -> Any:
    return lax.mul(n, lax.sqrt(_gamma.flush(lax.div(half, g), dtype)))


def t(
    key: Any, df: Any, shape: Any = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Student's t draws with ``df`` degrees of freedom: ``n sqrt((df/2) /
    g)`` for n normal and g gamma(df/2); ``shape`` defaults to ``df``'s
    shape."""
    data, _ = _keys.single_key(key, "t")
    d = _samplers.float_dtype(dtype, "t")
    _check_float(df, "t", "df")
    s = _gamma._gamma_shape("t", shape, df)
    key_n, key_g = _split_keys(data, 2)
    n = _samplers.normal(key_n, s, d)
    half = _half(df, d)
    g = _gamma.sample(key_g, half, s, d, False)
    return _ops.apply(_t_post, (n, half, g), (("dtype", d),))


# ---- generalized normal and the Lp ball ----


def _rademacher_core(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """JAX's rademacher: bernoulli(key, 0.5) (a float32 uniform below 0.5,
    float64 with x64) as 2 b - 1."""
    pd = _weak_float()
    u = _samplers.uniform_core(
        data, lax.zeros((), pd), lax.full((), 1.0, pd), shape, pd
    )
    b = lax.astype(lax.lt(u, 0.5), np.dtype(np.int32))
    return lax.astype(lax.sub(lax.mul(b, 2), 1), dtype)


def _inv_impl(p: Any) -> Any:
    # 1 / p in p's own (weak, float32) type, as JAX divides the traced p.
    return lax.div(lax.full((), 1.0, np.dtype(p.dtype)), p)


def _gn_post(g: Any, r: Any, inv_p: Any, *, dtype: np.dtype) -> Any:
    return lax.mul(r, _gamma.flush(lax.pow(g, lax.astype(inv_p, dtype)), dtype))


def _rademacher_impl(data: Any, *, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return _rademacher_core(data, shape, dtype)


def _generalized_normal_draw(
    data: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    key_g, key_r = _split_keys(data, 2)
    inv_p = _ops.apply(_inv_impl, (p,))
    g = _gamma.sample(key_g, inv_p, shape, dtype, False)
    r = _ops.apply(_rademacher_impl, (key_r,), (("shape", shape), ("dtype", dtype)))
    return _ops.apply(_gn_post, (g, r, inv_p), (("dtype", dtype),))


def _shape_param(value: Any, name: str) -> Any:
    """The scalar ``p`` of generalized_normal / ball, as JAX takes it: a
    float (weakly typed: float32, float64 with x64) or a scalar array."""
    _check_float(value, name, "p")
    if _ops.is_scalar(value) or isinstance(value, (np.ndarray, np.generic)):
        a = np.asarray(value)
        if a.shape != ():
            raise TypeError(f"{name}: p must be a scalar, got shape {a.shape}")
        dt = a.dtype if a.dtype.kind == "f" and not _ops.is_scalar(value) else None
        return a.astype(dt or _weak_float())
    if tuple(value.shape) != ():
        raise TypeError(f"{name}: p must be a scalar, got shape {tuple(value.shape)}")
    if not _ops.is_float(np.dtype(value.dtype)):
        return _ops.apply(_to_float, (value,), (("dtype", _weak_float()),))
    return value


def _to_float(x: Any, *, dtype: np.dtype) -> Any:
    return lax.astype(x, dtype)


def generalized_normal(
    key: Any, p: Any, shape: Any = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Generalized normal draws, density proportional to ``exp(-|x|**p)``:
    a random sign times ``gamma(1/p) ** (1/p)``."""
    data, _ = _keys.single_key(key, "generalized_normal")
    s = _keys.canonical_shape(shape, "generalized_normal")
    d = _samplers.float_dtype(dtype, "generalized_normal")
    pv = _shape_param(p, "generalized_normal")
    return _generalized_normal_draw(data, pv, s, d)


def _ball_post(g: Any, u: Any, p: Any, *, dtype: np.dtype) -> Any:
    e = lax.neg(_gumbel._log1p(lax.neg(u), dtype))
    pd = lax.astype(p, dtype)
    inv_p = lax.astype(lax.div(lax.full((), 1.0, np.dtype(p.dtype)), p), dtype)
    norm = lax.pow(lax.add(lax.sum(lax.pow(lax.abs(g), pd), -1), e), inv_p)
    # XLA divides by the broadcast norm as a multiply by its reciprocal.
    inv = lax.div(lax.full((), 1.0, dtype), lax.reshape(norm, (*tuple(e.shape), 1)))
    return _gamma.flush(lax.mul(g, inv), dtype)


def ball(
    key: Any,
    d: int,
    p: Any = 2,
    shape: Any = (),
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Points drawn uniformly from the unit Lp ball in ``d`` dimensions
    (result shape ``shape + (d,)``): generalized normal coordinates scaled
    by their p-norm plus an exponential draw (Barthe et al.)."""
    data, _ = _keys.single_key(key, "ball")
    s = _keys.canonical_shape(shape, "ball")
    dt = _samplers.float_dtype(dtype, "ball")
    try:
        dim = operator.index(d)
    except TypeError:
        raise TypeError(
            f"ball: d must be a non-negative Python int (the dimension), got "
            f"{type(d).__name__}"
        ) from None
    if dim < 0:
        raise ValueError(f"ball: d must be non-negative, got {dim}")
    pv = _shape_param(p, "ball")
    k1, k2 = _split_keys(data, 2)
    g = _generalized_normal_draw(k1, pv, (*s, dim), dt)
    u = _samplers.uniform(k2, s, dt)
    return _ops.apply(_ball_post, (g, u, pv), (("dtype", dt),))
