"""Counting distributions: ``poisson``, ``binomial`` and ``multinomial``,
as JAX samples them.

- ``poisson``: Knuth's product of uniforms for rates below 10, Hormann's
  transformed rejection (PTRS) above; both loops run on the whole array
  with the same key, and each element takes the result of its own method
  (JAX's ``_poisson``).
- ``binomial``: inversion (a sum of geometric draws) where ``n q <= 10``,
  BTRS (Hormann's transformed rejection) elsewhere, for ``q = min(p, 1 -
  p)``; the same structure (TensorFlow's and JAX's).
- ``multinomial``: one binomial per category, conditioned on what the
  earlier categories left (JAX's scan, unrolled here: the categories are
  few and known when tracing).

The loops are ``bt.lax.while_loop`` over whole arrays, splitting the loop
key each step exactly as JAX does, so every element consumes JAX's random
bits in JAX's order; the uniform draws and logarithms are JAX's bit for
bit (``_samplers``, ``_float_ops``). The accept tests of the rejection
steps also use a log-gamma (poisson) and divisions and square roots that
XLA may round an ulp apart; a decision could in principle flip where a test
value lands within an ulp of its bound, which the tests have not seen
happen.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _dtypes, _ops
from baton._baton import lax
from baton.random import _float_ops, _gamma, _gamma_family, _gumbel, _keys, _samplers

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_I32 = np.dtype(np.int32)
_BOOL = np.dtype(np.bool_)


def _split2(key: Any) -> tuple[Any, Any]:
    a, b = _gamma_family.split_data(key, 2)
    return a, b


def _unit(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """``uniform(key, shape, dtype)`` in [0, 1)."""
    return _samplers.uniform_core(
        key, lax.zeros((), dtype), lax.full((), 1.0, dtype), shape, dtype
    )


def _log(x: Any, dtype: np.dtype) -> Any:
    return _gumbel.log(x, dtype)


def _fma(a: Any, b: Any, c: Any) -> Any:
    """a * b + c as XLA's CPU code computes it: one rounding in float32."""
    d = np.dtype(a.dtype) if hasattr(a, "dtype") else np.dtype(c.dtype)
    if d == _F32:
        return _float_ops.fma32(
            a,
            np.float32(b) if isinstance(b, float) else b,
            np.float32(c) if isinstance(c, float) else c,
        )
    return lax.add(lax.mul(a, b), c)


def _isnan(x: Any) -> Any:
    return lax.ne(x, x)


# XLA's lgamma: the Lanczos approximation (g = 7, nine coefficients) with
# log(t) as log(g + 1/2) + log1p(z / (g + 1/2)).
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


def _lgamma(x: Any) -> Any:
    """log Gamma(x) of float32 x as XLA computes it on CPU for x >= 1/2
    (the Lanczos sum, divisions by the constant g + 1/2 as multiplies by its
    float32 reciprocal, the final multiply-add fused), so that PTRS's
    accept test -- a small difference of numbers near k log(lam) -- gives
    JAX's decisions. Below 1/2 (only negative k, which PTRS rejects whatever
    the test says) baton's lgamma."""
    from baton._lax_math import lgamma

    f32 = np.float32
    z = lax.sub(x, 1.0)
    acc = lax.full((), f32(_LANCZOS_BASE), _F32)
    for i, c in enumerate(_LANCZOS):
        acc = lax.add(acc, lax.div(f32(c), lax.add(lax.add(z, f32(i)), 1.0)))
    gh = f32(_LANCZOS_G + 0.5)
    t = lax.add(z, gh)
    log_t = lax.add(
        _float_ops.log1p32(lax.mul(z, f32(1) / gh)), f32(np.log(_LANCZOS_G + 0.5))
    )
    inner = lax.sub(lax.add(z, 0.5), lax.div(t, log_t))
    log_sqrt_2pi = f32((np.log(2.0) + np.log(np.pi)) / 2)
    log_y = lax.add(_float_ops.fma32(inner, log_t, log_sqrt_2pi), _float_ops.log32(acc))
    log_y = lax.select(lax.eq(x, np.float32(np.inf)), x, log_y)
    return lax.select(lax.lt(x, 0.5), lgamma(x), log_y)


# ---- poisson ----


def _poisson_knuth(
    key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype, max_iters: int
) -> Any:
    from baton._control_flow import while_loop

    neg_lam = lax.neg(lam)

    def cond(carry: Any) -> Any:
        i, _, _, log_prod = carry
        return lax.bitwise_and(
            _gamma.any_true(lax.gt(log_prod, neg_lam)), lax.lt(i, max_iters)
        )

    def body(carry: Any) -> Any:
        i, k, rng, log_prod = carry
        rng, sub = _split2(rng)
        k = lax.select(lax.gt(log_prod, neg_lam), lax.add(k, lax.full((), 1, dtype)), k)
        u = _unit(sub, shape, _F32)
        return lax.add(i, 1), k, rng, lax.add(log_prod, _log(u, _F32))

    init = (
        lax.zeros((), _I32),
        lax.zeros(shape, dtype),
        key,
        lax.zeros(shape, _F32),
    )
    k = while_loop(cond, body, init)[1]
    return lax.sub(k, lax.full((), 1, dtype))


def _poisson_rejection(
    key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype, max_iters: int
) -> Any:
    from baton._control_flow import while_loop

    f = np.dtype(lam.dtype)
    log_lam = _log(lam, f)
    # Every add of a product is a fused multiply-add in XLA's CPU code
    # (_fma); an accept decision that differs changes which iteration's k
    # is kept last, so these roundings matter.
    b = _fma(lax.sqrt(lam), 2.53, 0.931)
    a = _fma(b, 0.02483, -0.059)
    inv_alpha = lax.add(lax.div(1.1328, lax.sub(b, 3.4)), 1.1239)
    v_r = lax.sub(0.9277, lax.div(3.6224, lax.sub(b, 2.0)))

    def cond(carry: Any) -> Any:
        i, _, accepted, _ = carry
        return lax.bitwise_and(
            _gamma.any_true(lax.bitwise_not(accepted)), lax.lt(i, max_iters)
        )

    def body(carry: Any) -> Any:
        i, k_out, accepted, rng = carry
        rng, sub0, sub1 = _gamma_family.split_data(rng, 3)
        u = lax.sub(_unit(sub0, shape, f), 0.5)
        v = _unit(sub1, shape, f)
        us = lax.sub(0.5, lax.abs(u))
        k = lax.floor(
            lax.add(_fma(lax.add(lax.div(lax.mul(a, 2.0), us), b), u, lam), 0.43)
        )
        s = _log(
            lax.div(lax.mul(v, inv_alpha), lax.add(lax.div(a, lax.mul(us, us)), b)), f
        )
        tt = lax.sub(_fma(k, log_lam, lax.neg(lam)), _lgamma(lax.add(k, 1.0)))
        accept1 = lax.bitwise_and(lax.ge(us, 0.07), lax.le(v, v_r))
        reject = lax.bitwise_or(
            lax.lt(k, 0.0), lax.bitwise_and(lax.lt(us, 0.013), lax.gt(v, us))
        )
        accept = lax.bitwise_or(
            accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(s, tt))
        )
        k_out = lax.select(accept, k, k_out)
        return lax.add(i, 1), k_out, lax.bitwise_or(accepted, accept), rng

    init = (
        lax.zeros((), _I32),
        lax.full(shape, -1.0, f),
        lax.full(shape, False, _BOOL),
        key,
    )
    k = while_loop(cond, body, init)[1]
    return lax.astype(k, dtype)


def _poisson_impl(
    data: Any, lam: Any, *, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    lam = lax.broadcast_to(lax.astype(lam, _F32), shape)
    use_knuth = lax.bitwise_or(_isnan(lam), lax.lt(lam, 10.0))
    lam_knuth = lax.select(use_knuth, lam, lax.zeros(shape, _F32))
    lam_rejection = lax.select(use_knuth, lax.full(shape, 1e5, _F32), lam)
    max_iters = int(np.iinfo(dtype).max)
    max_iters = min(max_iters, int(np.iinfo(_I32).max))  # the int32 counter's
    result = lax.select(
        use_knuth,
        _poisson_knuth(data, lam_knuth, shape, dtype, max_iters),
        _poisson_rejection(data, lam_rejection, shape, dtype, max_iters),
    )
    return lax.select(lax.eq(lam, 0.0), lax.zeros(shape, dtype), result)


def _int_dtype(dtype: Any, name: str) -> np.dtype:
    if dtype is None:
        return np.dtype(np.int64) if _samplers._x64() else _I32
    d = _dtypes.canonicalize(dtype)
    if d.kind not in "iu":
        raise ValueError(f"{name}: dtype must be an integer dtype, got {d}")
    return d


def poisson(
    key: Any,
    lam: Any,
    shape: Any = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Poisson draws of rate ``lam`` >= 0 (computed in float32), as integers
    of ``dtype`` (int32 by default); ``shape`` defaults to ``lam``'s shape
    and ``lam`` must broadcast to it."""
    data, _ = _keys.single_key(key, "poisson")
    d = _int_dtype(dtype, "poisson")
    if shape is None:
        s = _ops.shape_of(lam)
    else:
        s = _keys.canonical_shape(shape, "poisson")
        _broadcast_to_check("poisson", _ops.shape_of(lam), s)
    static = (("shape", s), ("dtype", d))
    return _ops.apply(
        _poisson_impl, (data, _samplers._host_or_traced(lam, _F32)), static
    )


def _broadcast_to_check(
    name: str, src: tuple[int, ...], shape: tuple[int, ...]
) -> None:
    ok = len(src) <= len(shape) and all(
        a in (1, b) for a, b in zip(src[::-1], shape[::-1])
    )
    if not ok:
        raise ValueError(
            f"{name}: incompatible shapes for broadcasting: parameter shape {src} "
            f"cannot be broadcast to the shape argument {shape}"
        )


# ---- binomial ----


_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_approx_tail(k: Any) -> Any:
    """The tail of Stirling's series of log(k!) (a table up to 9)."""
    f = np.dtype(k.dtype)
    use_table = lax.le(k, 9.0)
    k = lax.minimum(lax.maximum(k, 0.0), 9.0)
    kp1 = lax.add(k, 1.0)
    kp1sq = lax.mul(kp1, kp1)
    approx = lax.div(
        lax.sub(
            1.0 / 12, lax.div(lax.sub(1.0 / 360, lax.div(1.0 / 1260, kp1sq)), kp1sq)
        ),
        kp1,
    )
    idx = lax.astype(lax.floor(k), _I32)
    table = lax.full(tuple(k.shape), np.array(_STIRLING_TAIL[0], f), f)
    for i, v in enumerate(_STIRLING_TAIL[1:], 1):
        table = lax.select(lax.eq(idx, i), lax.full((), np.array(v, f), f), table)
    return lax.select(use_table, table, approx)


def _binomial_inversion(
    key: Any, count: Any, prob: Any, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    from baton._control_flow import while_loop

    f = np.dtype(prob.dtype)
    log1mp = _gumbel._log1p(lax.neg(prob), f)

    def cond(carry: Any) -> Any:
        return _gamma.any_true(lax.le(carry[1], count))

    def body(carry: Any) -> Any:
        num_geom, geom_sum, rng = carry
        sub, rng = _split2(rng)
        num_geom = lax.select(lax.le(geom_sum, count), lax.add(num_geom, 1.0), num_geom)
        u = _unit(sub, shape, f)
        geom = lax.ceil(lax.div(_log(u, f), log1mp))
        return num_geom, lax.add(geom_sum, geom), rng

    init = (lax.zeros(shape, f), lax.zeros(shape, f), key)
    k = while_loop(cond, body, init)[0]
    return lax.astype(lax.sub(k, 1.0), dtype)


def _btrs(
    key: Any, count: Any, prob: Any, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    from baton._control_flow import while_loop

    f = np.dtype(prob.dtype)
    one_m_p = lax.sub(1.0, prob)
    stddev = lax.sqrt(lax.mul(lax.mul(count, prob), one_m_p))
    b = _fma(stddev, 2.53, 1.15)
    a = _fma(prob, 0.01, _fma(b, 0.0248, -0.0873))
    c = _fma(count, prob, 0.5)
    v_r = lax.sub(0.92, lax.div(4.2, b))
    r = lax.div(prob, one_m_p)
    alpha = lax.mul(lax.add(lax.div(5.1, b), 2.83), stddev)
    m = lax.floor(lax.mul(lax.add(count, 1.0), prob))
    tail_m = lax.add(_stirling_approx_tail(m), _stirling_approx_tail(lax.sub(count, m)))
    head_factor = lax.add(m, 0.5)
    head_log = _log(
        lax.div(lax.add(m, 1.0), lax.mul(r, lax.add(lax.sub(count, m), 1.0))), f
    )

    def cond(carry: Any) -> Any:
        return _gamma.any_true(lax.bitwise_not(carry[1]))

    def body(carry: Any) -> Any:
        k_out, accepted, rng = carry
        rng, sub0, sub1 = _gamma_family.split_data(rng, 3)
        u = _unit(sub0, shape, f)
        v = _unit(sub1, shape, f)
        u = lax.sub(u, 0.5)
        us = lax.sub(0.5, lax.abs(u))
        accept1 = lax.bitwise_and(lax.ge(us, 0.07), lax.le(v, v_r))
        k = lax.floor(_fma(lax.add(lax.div(lax.mul(a, 2.0), us), b), u, c))
        reject = lax.bitwise_or(lax.lt(k, 0.0), lax.gt(k, count))
        v = _log(lax.div(lax.mul(v, alpha), lax.add(lax.div(a, lax.mul(us, us)), b)), f)
        cmk1 = lax.add(lax.sub(count, k), 1.0)
        # head + (count + 1) log(..) + (k + 1/2) log(..): the first sum of
        # two products fuses the first, the next add the second product.
        ub = _fma(
            head_factor,
            head_log,
            lax.mul(
                lax.add(count, 1.0),
                _log(lax.div(lax.add(lax.sub(count, m), 1.0), cmk1), f),
            ),
        )
        ub = _fma(
            lax.add(k, 0.5), _log(lax.div(lax.mul(r, cmk1), lax.add(k, 1.0)), f), ub
        )
        ub = lax.sub(
            lax.sub(lax.add(ub, tail_m), _stirling_approx_tail(k)),
            _stirling_approx_tail(lax.sub(count, k)),
        )
        accept = lax.bitwise_or(
            accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(v, ub))
        )
        return lax.select(accept, k, k_out), lax.bitwise_or(accepted, accept), rng

    init = (lax.full(shape, -1.0, f), lax.full(shape, False, _BOOL), key)
    k = while_loop(cond, body, init)[0]
    return lax.astype(k, dtype)


def binomial_core(
    key: Any, count: Any, prob: Any, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    """JAX's ``_binomial`` on lax values (prob already of a float dtype)."""
    f = np.dtype(prob.dtype)
    count = lax.broadcast_to(lax.astype(count, f), shape)
    prob = lax.broadcast_to(prob, shape)
    p_lt_half = lax.lt(prob, 0.5)
    q = lax.select(p_lt_half, prob, lax.sub(1.0, prob))
    count_nan_or_neg = lax.bitwise_or(_isnan(count), lax.lt(count, 0.0))
    count_inf = lax.eq(lax.abs(count), np.inf)
    q_is_nan = _isnan(q)
    q_l_0 = lax.lt(q, 0.0)
    q = lax.select(lax.bitwise_or(q_is_nan, q_l_0), lax.full(shape, 0.01, f), q)
    use_inversion = lax.bitwise_or(count_nan_or_neg, lax.le(lax.mul(count, q), 10.0))
    count = lax.floor(count)
    count_inv = lax.select(use_inversion, count, lax.zeros(shape, f))
    count_btrs = lax.select(use_inversion, lax.full(shape, 1e4, f), count)
    q_btrs = lax.select(use_inversion, lax.full(shape, 0.5, f), q)
    samples = lax.select(
        use_inversion,
        _binomial_inversion(key, count_inv, q, shape, dtype),
        _btrs(key, count_btrs, q_btrs, shape, dtype),
    )
    invalid = lax.bitwise_or(lax.bitwise_or(q_l_0, q_is_nan), count_nan_or_neg)
    samples = lax.select(invalid, lax.full(shape, np.nan, dtype), samples)
    samples = lax.select(
        lax.bitwise_and(count_inf, lax.bitwise_not(invalid)),
        lax.full(shape, np.inf, dtype),
        samples,
    )
    keep = lax.bitwise_or(
        lax.bitwise_or(p_lt_half, count_nan_or_neg), lax.bitwise_or(q_is_nan, count_inf)
    )
    return lax.select(keep, samples, lax.sub(lax.astype(count, dtype), samples))


def _binomial_impl(
    data: Any, n: Any, p: Any, *, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    return binomial_core(data, n, p, shape, dtype)


def _inexact(value: Any, name: str, arg: str) -> Any:
    """A parameter promoted to an inexact dtype as JAX's
    ``promote_dtypes_inexact`` does: Python numbers, host data and integer
    or bool arrays become float32 (float64 with x64); float arrays keep
    their dtype (host float64 data becomes float32 without x64)."""
    if isinstance(value, complex):
        raise TypeError(f"{name}: `{arg}` must be real, got a complex number")
    weak = _F64 if _samplers._x64() else _F32
    if _ops.is_scalar(value) or isinstance(
        value, (list, tuple, np.ndarray, np.generic)
    ):
        a = np.asarray(value)
        if a.dtype.kind not in "biuf" and a.dtype != _dtypes.bfloat16:
            raise TypeError(f"{name}: `{arg}` must be a real number or array")
        if a.dtype in (np.dtype(np.float16), _dtypes.bfloat16):
            return a
        return a.astype(weak)
    if not _ops.is_float(np.dtype(value.dtype)):
        return _ops.apply(_gamma_family._to_float, (value,), (("dtype", weak),))
    return value


def _host(value: Any) -> Any:
    if _ops.is_scalar(value) or isinstance(value, (list, tuple)):
        return np.asarray(value)
    return value


def binomial(key: Any, n: Any, p: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Binomial draws: successes in ``n`` trials of probability ``p``, as
    floats of ``dtype`` (float32 by default). Inversion where ``n
    min(p, 1-p) <= 10``, BTRS elsewhere; NaN for a negative or NaN ``n`` or
    a NaN or out-of-range ``p``, inf for infinite ``n``."""
    data, _ = _keys.single_key(key, "binomial")
    d = _samplers.float_dtype(dtype, "binomial")
    if shape is None:
        from baton.numpy._shapes import broadcast_shapes

        s = tuple(broadcast_shapes(_ops.shape_of(n), _ops.shape_of(p)))
    else:
        s = _keys.canonical_shape(shape, "binomial")
        _samplers._check_param_shapes("binomial", s, n, p)
    pv = _inexact(p, "binomial", "p")
    static = (("shape", s), ("dtype", d))
    return _ops.apply(_binomial_impl, (data, _host(n), pv), static)


# ---- multinomial ----


def _multinomial_impl(
    data: Any, n: Any, p: Any, *, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    f = np.dtype(p.dtype)
    k = shape[-1]
    batch = shape[:-1]
    n = lax.broadcast_to(lax.astype(n, f), batch)
    p = lax.broadcast_to(p, shape)
    cols = [
        lax.reshape(lax.slice(p, (0,) * len(batch) + (i,), (*batch, i + 1)), batch)
        for i in range(k)
    ]
    # The reverse cumulative sum of the probabilities, then each category's
    # share of what is left.
    remaining = [None] * k
    acc = None
    for i in range(k - 1, -1, -1):
        acc = cols[i] if acc is None else lax.add(cols[i], acc)
        remaining[i] = acc
    keys = _gamma_family.split_data(data, k) if k else []
    remainder = n
    counts = []
    for i in range(k):
        rem = remaining[i]
        ratio = lax.div(
            cols[i], lax.select(lax.eq(rem, 0.0), lax.full(batch, 1.0, f), rem)
        )
        ratio = lax.minimum(lax.maximum(ratio, 0.0), 1.0)
        count = binomial_core(keys[i], remainder, ratio, batch, f)
        remainder = lax.sub(remainder, count)
        counts.append(lax.reshape(count, (*batch, 1)))
    if not counts:
        return lax.zeros(shape, dtype)
    return lax.astype(lax.concatenate(counts, len(batch)), dtype)


def multinomial(
    key: Any,
    n: Any,
    p: Any,
    *,
    shape: Any = None,
    dtype: Any = None,
    unroll: Any = 1,
) -> Any:
    """Multinomial counts of ``n`` trials over the categories of ``p``'s
    last axis (result shape ``shape``, which includes that axis; default
    ``p.shape``), one binomial draw per category on what the earlier ones
    left, as ``dtype`` (float32 by default; integer dtypes too). ``unroll`` is
    accepted for JAX's signature; the categories are always unrolled."""
    data, _ = _keys.single_key(key, "multinomial")
    # The counts are computed in floats and converted at the end: any
    # numeric dtype (JAX's astype), float32 by default.
    d = (
        _samplers.float_dtype(None, "multinomial")
        if dtype is None
        else _dtypes.canonicalize(dtype)
    )
    pv = _inexact(p, "multinomial", "p")
    nv = _host(n)
    pshape = _ops.shape_of(p)
    if len(pshape) < 1:
        raise ValueError(
            "multinomial: p must have at least one dimension (the categories)"
        )
    s = pshape if shape is None else _keys.canonical_shape(shape, "multinomial")
    if not s:
        raise ValueError("multinomial: shape must include the categories' axis")
    _broadcast_to_check("multinomial", pshape, s)
    _broadcast_to_check("multinomial", _ops.shape_of(n), s[:-1])
    static = (("shape", s), ("dtype", d))
    return _ops.apply(_multinomial_impl, (data, nv, pv), static)
