"""Distributions JAX builds on gamma draws: ``beta``, ``dirichlet``,
``chisquare``, ``f``, ``t``, ``generalized_normal`` and ``ball``.

Each splits its key and combines gamma / log-gamma, normal, uniform and
sign draws exactly as ``jax.random`` does (same splits, same order, same
shapes), so the draws are JAX's (``_gamma``); what is computed from them
uses baton's exp, pow and sqrt, within a few float32 ulp of XLA's.
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


def _beta_impl(
    data: Any, a: Any, b: Any, *, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    key_a, key_b = split_data(data, 2)
    log_a = _gamma.gamma_core(key_a, a, shape, dtype, True)
    log_b = _gamma.gamma_core(key_b, b, shape, dtype, True)
    log_max = lax.maximum(log_a, log_b)
    ga = _gamma.flush(lax.exp(lax.sub(log_a, log_max)), dtype)
    gb = _gamma.flush(lax.exp(lax.sub(log_b, log_max)), dtype)
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
    static = (("shape", s), ("dtype", d))
    return _ops.apply(_beta_impl, (data, _param(a, d), _param(b, d)), static)


# ---- dirichlet ----


def _dirichlet_impl(
    data: Any, alpha: Any, *, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    k = alpha.shape[-1]
    log_g = _gamma.gamma_core(data, alpha, (*shape, k), dtype, True)
    # softmax over the last axis, as jax.nn.softmax computes it.
    m = lax.max(log_g, -1, True)
    e = _gamma.flush(lax.exp(lax.sub(log_g, m)), dtype)
    # XLA divides by the broadcast sum as a multiply by its reciprocal.
    inv = lax.div(lax.full((), 1.0, dtype), lax.sum(e, -1, True))
    return _gamma.flush(lax.mul(e, inv), dtype)


def dirichlet(
    key: Any, alpha: Any, shape: Any = None, dtype: Any = None, *, out_sharding: Any = None
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
    static = (("shape", s), ("dtype", d))
    return _ops.apply(_dirichlet_impl, (data, _param(alpha, d)), static)


# ---- chisquare, f, t ----


def _chisquare_core(
    data: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    half = lax.div(lax.astype(df, dtype), lax.full((), 2.0, dtype))
    log_g = _gamma.gamma_core(data, half, shape, dtype, True)
    g = _gamma.flush(lax.exp(log_g), dtype)
    return _gamma.flush(lax.mul(g, lax.full((), 2.0, dtype)), dtype)


def _chisquare_impl(
    data: Any, df: Any, *, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    return _chisquare_core(data, df, shape, dtype)


def chisquare(
    key: Any, df: Any, shape: Any = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Chi-square draws with ``df`` degrees of freedom: ``2 exp(loggamma(
    df / 2))``; ``shape`` defaults to ``df``'s shape."""
    data, _ = _keys.single_key(key, "chisquare")
    d = _samplers.float_dtype(dtype, "chisquare")
    _check_float(df, "chisquare", "df")
    s = _gamma._gamma_shape("chisquare", shape, df)
    static = (("shape", s), ("dtype", d))
    return _ops.apply(_chisquare_impl, (data, _param(df, d)), static)


def _f_impl(
    data: Any, dfnum: Any, dfden: Any, *, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    dfnum = lax.astype(dfnum, dtype)
    dfden = lax.astype(dfden, dtype)
    key_dfd, key_dfn = split_data(data, 2)
    chi_num = _chisquare_core(key_dfn, dfnum, shape, dtype)
    chi_den = _chisquare_core(key_dfd, dfden, shape, dtype)
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
    static = (("shape", s), ("dtype", d))
    return _ops.apply(_f_impl, (data, _param(dfnum, d), _param(dfden, d)), static)


def _t_impl(data: Any, df: Any, *, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    key_n, key_g = split_data(data, 2)
    n = _samplers._normal_impl(key_n, shape=shape, dtype=dtype)
    half = lax.div(lax.astype(df, dtype), lax.full((), 2.0, dtype))
    g = _gamma.gamma_core(key_g, half, shape, dtype, False)
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
    static = (("shape", s), ("dtype", d))
    return _ops.apply(_t_impl, (data, _param(df, d)), static)


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


def _generalized_normal_core(
    data: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    key_g, key_r = split_data(data, 2)
    # 1 / p in p's own (weak, float32) type, as JAX divides the traced p.
    inv_p = lax.div(lax.full((), 1.0, np.dtype(p.dtype)), p)
    g = _gamma.gamma_core(key_g, inv_p, shape, dtype, False)
    r = _rademacher_core(key_r, shape, dtype)
    return lax.mul(r, _gamma.flush(lax.pow(g, lax.astype(inv_p, dtype)), dtype))


def _generalized_normal_impl(
    data: Any, p: Any, *, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    return _generalized_normal_core(data, p, shape, dtype)


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
    static = (("shape", s), ("dtype", d))
    pv = _shape_param(p, "generalized_normal")
    return _ops.apply(_generalized_normal_impl, (data, pv), static)


def _ball_impl(
    data: Any, p: Any, *, d: int, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    k1, k2 = split_data(data, 2)
    g = _generalized_normal_core(k1, p, (*shape, d), dtype)
    u = _samplers.uniform_core(
        k2, lax.zeros((), dtype), lax.full((), 1.0, dtype), shape, dtype
    )
    e = lax.neg(_gumbel._log1p(lax.neg(u), dtype))
    pd = lax.astype(p, dtype)
    inv_p = lax.astype(lax.div(lax.full((), 1.0, np.dtype(p.dtype)), p), dtype)
    norm = lax.pow(lax.add(lax.sum(lax.pow(lax.abs(g), pd), -1), e), inv_p)
    # XLA divides by the broadcast norm as a multiply by its reciprocal.
    inv = lax.div(lax.full((), 1.0, dtype), lax.reshape(norm, (*shape, 1)))
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
    static = (("d", dim), ("shape", s), ("dtype", dt))
    return _ops.apply(_ball_impl, (data, pv), static)
