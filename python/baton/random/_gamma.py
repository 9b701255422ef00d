"""``gamma`` and ``loggamma`` (Marsaglia and Tsang's method), as JAX draws
them, and the batched-key pieces they stand on.

JAX samples gamma element by element: the key is split into one key per
element, and each element runs ``_gamma_one`` -- an outer rejection loop
whose body splits its key three ways and runs an inner loop drawing
normals until ``v = 1 + x c`` is positive, then one uniform -- under
``vmap`` (its CPU lowering). A vmapped ``while_loop`` runs the body on
every element while any is still looping and keeps the new state only
where that element's own condition holds, so each element sees exactly the
draws it would see alone. This module does the same with arrays of key
words (``k0``, ``k1`` of shape (n,)): every element's keys are split with
the Threefry counters JAX uses, the scalar draws are ``_keys``' bits of
counter (0, 0), and the loops are ``bt.lax.while_loop`` over the whole
batch with per-element ``select``.

Rounding: float32 results are JAX's up to a few ulp, and bit for bit for
most elements. ``1 + x c`` and
``1 - 0.0331 X**2`` are fused multiply-adds there (XLA contracts them on
CPU), so they are here (``_float_ops.fma32``); logarithms are XLA's
(``_float_ops.log32``/``log1p32``). The one difference is
``c = 1 / (3 sqrt(d))``: XLA computes it with the processor's approximate
reciprocal square root (an estimate from a hardware table refined by a
Newton step, so it differs between CPU models, and is off the correctly
rounded value by up to 2 ulp for about a third of ``d``), which cannot be
reproduced; baton takes the correctly rounded value. Where the two ``c`` differ
the draw moves by an ulp or so (an accept/reject decision that flips is
possible in principle, about as likely as a float32 tie). ``gamma`` for
``a < 1`` also multiplies by ``u ** (1/a)`` (baton's ``pow``).
"""

from __future__ import annotations

import functools
from typing import Any

import ml_dtypes
import numpy as np

from baton import _ops
from baton._baton import lax
from baton.random import _float_ops, _gumbel, _keys, _samplers, _threefry

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_U32 = np.dtype(np.uint32)
_I32 = np.dtype(np.int32)


# ---- batched keys: (k0, k1) word arrays, one key per element ----


def bsplit(k0: Any, k1: Any, num: int) -> list[tuple[Any, Any]]:
    """``split(key, num)`` of every key of the batch: new key i of each is
    the cipher's output on counter (0, i)."""
    zero = lax.zeros((), _U32)
    return [
        _threefry.threefry2x32(k0, k1, zero, lax.full((), i, _U32)) for i in range(num)
    ]


def bunit(k0: Any, k1: Any, dtype: np.dtype) -> Any:
    """``uniform(key, (), dtype)`` in [0, 1) for every key of the batch
    (JAX's mantissa construction, as ``_samplers.unit_floats``)."""
    zero = lax.zeros((), _U32)
    y0, y1 = _threefry.threefry2x32(k0, k1, zero, zero)
    if dtype == _F64:
        m = lax.add(
            lax.mul(lax.astype(y0, _F64), 2.0**20),
            lax.astype(_threefry.shift_right(y1, 12), _F64),
        )
        return lax.mul(m, 2.0**-52)
    nmant = int(ml_dtypes.finfo(dtype).nmant)
    width = 8 if nmant < 8 else dtype.itemsize * 8
    b = _threefry.xor(y0, y1)
    if width < 32:
        b = lax.bitwise_and(b, (1 << width) - 1)
    m = _threefry.shift_right(b, width - nmant)
    return lax.astype(lax.mul(lax.astype(m, _F32), 2.0**-nmant), dtype)


def scale_unit(f: Any, lo: Any, hi: Any, dtype: np.dtype) -> Any:
    """Unit floats f moved to [lo, hi) as JAX's ``_uniform`` does (one
    fused multiply-add in float32)."""
    span = lax.sub(hi, lo)
    if dtype == _F32:
        r = _float_ops.fma32(f, span, lo)
    else:
        r = lax.add(lax.mul(f, span), lo)
    return lax.maximum(lo, r)


def bnormal(k0: Any, k1: Any, dtype: np.dtype) -> Any:
    """``normal(key, (), dtype)`` for every key of the batch."""
    lo = lax.constant(np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype)))
    u = scale_unit(bunit(k0, k1, dtype), lo, lax.constant(np.array(1.0, dtype)), dtype)
    return lax.mul(np.array(np.sqrt(2), dtype), _samplers._erf_inv(u, dtype))


def any_true(pred: Any) -> Any:
    """Whether any element of a boolean array is true (a bool scalar)."""
    return lax.gt(lax.sum(lax.astype(pred, _I32)), 0)


def _mul_add(a: Any, b: Any, c: Any, dtype: np.dtype) -> Any:
    """``a * b + c`` as XLA's CPU code computes it: fused in float32."""
    if dtype == _F32:
        return _float_ops.fma32(a, b, c)
    return lax.add(lax.mul(a, b), c)


def _rsqrt(x: Any, dtype: np.dtype) -> Any:
    """1 / sqrt(x) correctly rounded to dtype (through float64, whose
    division and square root are correctly rounded and leave far more
    digits than any narrower float needs)."""
    if dtype == _F64:
        return lax.div(1.0, lax.sqrt(x))
    r = lax.div(1.0, lax.sqrt(lax.astype(x, _F64)))
    return lax.astype(r, dtype)


def _log(x: Any, dtype: np.dtype) -> Any:
    return _gumbel.log(x, dtype)


def flush(x: Any, dtype: np.dtype) -> Any:
    """x with subnormal values replaced by zero (of the same sign): XLA's
    CPU code runs with denormals flushed to zero, so an operation whose
    exact result is subnormal gives 0 there. float16 is computed in
    float32 and rounded, so its subnormals survive."""
    if dtype == np.dtype(np.float16):
        return x
    tiny = float(ml_dtypes.finfo(dtype).tiny)
    return lax.select(lax.lt(lax.abs(x), tiny), lax.mul(x, 0.0), x)


# ---- Marsaglia-Tsang, vectorised over elements ----


def gamma_one(k0: Any, k1: Any, alpha: Any, log_space: bool, dtype: np.dtype) -> Any:
    """JAX's ``_gamma_one`` for each (key, alpha) of the batch (alpha of
    dtype, shape (n,))."""
    from baton._control_flow import while_loop

    shape = tuple(alpha.shape)
    one = lax.full((), 1.0, dtype)
    zero = lax.zeros((), dtype)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, lax.full((), 1.0 / 3.0, dtype))
    # XLA rewrites (1/3) / sqrt(d) as (1/3) * rsqrt(d); its CPU rsqrt is
    # the processor's estimate refined by a Newton step, within 2 ulp of
    # the correctly rounded value (and equal to it for most d), which is
    # what this takes.
    c = lax.mul(lax.full((), 1.0 / 3.0, dtype), _rsqrt(d, dtype))
    squeeze = lax.full((), 0.0331, dtype)

    def accept_not_yet(X: Any, V: Any, U: Any) -> Any:
        # 1 - 0.0331 * (X * X): the multiply-add is fused.
        first = lax.ge(U, _mul_add(lax.neg(squeeze), lax.mul(X, X), one, dtype))
        rhs = lax.add(
            lax.mul(X, lax.full((), 0.5, dtype)),
            lax.mul(d, lax.add(lax.sub(one, V), _log(V, dtype))),
        )
        return lax.bitwise_and(first, lax.ge(_log(U, dtype), rhs))

    def inner_body(state: Any) -> Any:
        kk0, kk1, x, v = state
        go = lax.le(v, zero)
        (n0, n1), (s0, s1) = bsplit(kk0, kk1, 2)
        x_new = bnormal(s0, s1, dtype)
        v_new = _mul_add(x_new, c, one, dtype)
        return (
            lax.select(go, n0, kk0),
            lax.select(go, n1, kk1),
            lax.select(go, x_new, x),
            lax.select(go, v_new, v),
        )

    def outer_body(state: Any) -> Any:
        ok0, ok1, X, V, U = state
        go = accept_not_yet(X, V, U)
        (n0, n1), (x0, x1), (u0, u1) = bsplit(ok0, ok1, 3)
        init = (
            x0,
            x1,
            lax.zeros(shape, dtype),
            lax.full(shape, -1.0, dtype),
        )
        _, _, x, v = while_loop(
            lambda s: any_true(lax.le(s[3], zero)), inner_body, init
        )
        X_new = lax.mul(x, x)
        V_new = lax.mul(lax.mul(v, v), v)
        U_new = bunit(u0, u1, dtype)
        return (
            lax.select(go, n0, ok0),
            lax.select(go, n1, ok1),
            lax.select(go, X_new, X),
            lax.select(go, V_new, V),
            lax.select(go, U_new, U),
        )

    (m0, m1), (sub0, sub1) = bsplit(k0, k1, 2)
    # The initial state is one _cond_fn accepts, so every element loops.
    init = (
        m0,
        m1,
        lax.zeros(shape, dtype),
        lax.full(shape, 1.0, dtype),
        lax.full(shape, 2.0, dtype),
    )
    _, _, _, V, _ = while_loop(
        lambda s: any_true(accept_not_yet(s[2], s[3], s[4])), outer_body, init
    )
    u = bunit(sub0, sub1, dtype)
    if log_space:
        # -exponential(subkey) = log1p(-u)
        log_samples = _gumbel._log1p(lax.neg(u), dtype)
        log_boost = lax.select(
            lax.bitwise_or(boost_mask, lax.eq(log_samples, zero)),
            lax.zeros(shape, dtype),
            lax.mul(log_samples, lax.div(one, alpha_orig)),
        )
        return lax.add(lax.add(_log(d, dtype), _log(V, dtype)), log_boost)
    samples = lax.sub(one, u)
    boost = lax.select(
        boost_mask,
        lax.full(shape, 1.0, dtype),
        flush(lax.pow(samples, lax.div(one, alpha_orig)), dtype),
    )
    return flush(lax.mul(lax.mul(d, V), boost), dtype)


def gamma_core(
    data: Any, a: Any, shape: tuple[int, ...], dtype: np.dtype, log_space: bool
) -> Any:
    """Gamma (or log-gamma) draws of ``shape`` for one key's data and
    parameters ``a`` (any float dtype, broadcast to ``shape``)."""
    n = int(np.prod(shape, dtype=np.int64))
    a = lax.broadcast_to(lax.astype(a, dtype), shape)
    if n == 0:
        return a
    keys = _keys._split_impl(data, shape=(n,))
    k0 = lax.reshape(lax.slice(keys, (0, 0), (n, 1)), (n,))
    k1 = lax.reshape(lax.slice(keys, (0, 1), (n, 2)), (n,))
    out = gamma_one(k0, k1, lax.reshape(a, (n,)), log_space, dtype)
    return lax.reshape(out, shape)


def _gamma_impl(
    data: Any, a: Any, *, shape: tuple[int, ...], dtype: np.dtype, log_space: bool
) -> Any:
    return gamma_core(data, a, shape, dtype, log_space)


def _gamma_shape(name: str, shape: Any, *params: Any) -> tuple[int, ...]:
    """``shape=``, defaulting to the parameters' broadcast shape, checked
    against them as JAX does."""
    from baton.numpy._shapes import broadcast_shapes

    if shape is None:
        return tuple(broadcast_shapes(*(_ops.shape_of(p) for p in params)))
    shape = _keys.canonical_shape(shape, name)
    _samplers._check_param_shapes(name, shape, *params)
    return shape


def _broadcast_impl(a: Any, *, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return lax.broadcast_to(lax.astype(a, dtype), shape)


@functools.cache
def _differentiable(shape: tuple[int, ...], dtype: np.dtype, log_space: bool) -> Any:
    """The sampler as a function of (a, key data) whose derivative with
    respect to ``a`` (of the draws' shape) is JAX's: the tangent times
    ``random_gamma_grad`` of the draws."""
    from baton._custom import custom_jvp

    static = (("shape", shape), ("dtype", dtype), ("log_space", log_space))

    @custom_jvp
    def sample(a: Any, data: Any) -> Any:
        return _ops.apply(_gamma_impl, (data, a), static)

    @sample.defjvp
    def _sample_jvp(primals: Any, tangents: Any) -> Any:
        a, data = primals
        a_dot = tangents[0]
        out = sample(a, data)
        grad = _ops.apply(_gamma_grad_impl, (out, a), (("log_space", log_space),))
        return out, a_dot * grad

    return sample


def sample(
    data: Any, a: Any, shape: tuple[int, ...], dtype: np.dtype, log_space: bool
) -> Any:
    """Gamma (``log_space``: log-gamma) draws of ``shape`` for one key's data
    and parameter ``a``: host data is converted to ``dtype`` and sampled
    directly; a float array or tracer goes through the differentiable
    sampler (JAX's derivative with respect to ``a``)."""
    ad = _ops.dtype_of(a)
    if (
        _ops.is_scalar(a)
        or isinstance(a, (list, tuple, np.ndarray, np.generic))
        or ad is None
        or not _ops.is_float(ad)
    ):
        # Host data or integers: nothing to differentiate.
        static = (("shape", shape), ("dtype", dtype), ("log_space", log_space))
        return _ops.apply(
            _gamma_impl, (data, _samplers._host_or_traced(a, dtype)), static
        )
    # a is broadcast to the draws' shape first, as JAX's _gamma does, so the
    # derivative rule sees one a per draw.
    a_full = _ops.apply(_broadcast_impl, (a,), (("shape", shape), ("dtype", dtype)))
    return _differentiable(shape, dtype, log_space)(a_full, data)


def _draw(name: str, key: Any, a: Any, shape: Any, dtype: Any, log_space: bool) -> Any:
    data, _ = _keys.single_key(key, name)
    d = _samplers.float_dtype(dtype, name)
    s = _gamma_shape(name, shape, a)
    return sample(data, a, s, d, log_space)


def gamma(
    key: Any, a: Any, shape: Any = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Standard gamma draws (unit scale) of shape parameter ``a`` > 0, by
    Marsaglia and Tsang's method as JAX runs it (``a`` < 1 boosted to
    ``a + 1`` and scaled by ``u ** (1/a)``); ``shape`` defaults to ``a``'s
    shape and must broadcast with it."""
    return _draw("gamma", key, a, shape, dtype, False)


def loggamma(
    key: Any, a: Any, shape: Any = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """The logarithm of gamma draws, computed in log space (accurate where
    small ``a`` makes the draws underflow); ``exp(loggamma(k, a))`` is
    ``gamma(k, a)`` to rounding."""
    return _draw("loggamma", key, a, shape, dtype, True)


# ---- the derivative of a gamma draw with respect to a ----
#
# Implicit reparameterisation: with F(x; a) the regularized lower incomplete
# gamma function, a draw x = F^-1(u; a) moves with a as
# dx/da = -(dF/da) / (dF/dx). JAX (``lax.random_gamma_grad``, after
# TensorFlow's igamma kernels) evaluates this with the series of F for
# x <= max(a, 1) and the continued fraction of 1 - F beyond, each carrying
# the derivative of its terms with respect to a; this is the same
# computation (its "SAMPLE_DERIVATIVE" mode), vectorised with per-element
# convergence flags as there.


def _digamma(x: Any) -> Any:
    from baton._lax_math import digamma

    return digamma(x)


def _lgamma(x: Any) -> Any:
    from baton._lax_math import lgamma

    return lgamma(x)


def _gamma_grad_series(x: Any, a: Any, enabled: Any, dtype: np.dtype) -> Any:
    from baton._control_flow import while_loop

    eps = float(ml_dtypes.finfo(dtype).eps)

    def body(vals: Any) -> Any:
        en, r, c, ans, xx, dc_da, dans_da = vals
        r_new = lax.add(r, 1.0)
        dc_new = lax.sub(
            lax.mul(dc_da, lax.div(xx, r_new)),
            lax.div(lax.mul(c, xx), lax.mul(r_new, r_new)),
        )
        dans_new = lax.add(dans_da, dc_new)
        c_new = lax.mul(c, lax.div(xx, r_new))
        ans_new = lax.add(ans, c_new)
        go = lax.bitwise_and(en, lax.gt(lax.abs(lax.div(dc_new, dans_new)), eps))
        return (
            go,
            lax.select(en, r_new, r),
            lax.select(en, c_new, c),
            lax.select(en, ans_new, ans),
            xx,
            lax.select(en, dc_new, dc_da),
            lax.select(en, dans_new, dans_da),
        )

    ones = lax.full(tuple(a.shape), 1.0, dtype)
    zeros = lax.zeros(tuple(a.shape), dtype)
    init = (enabled, a, ones, ones, x, zeros, zeros)
    vals = while_loop(lambda v: any_true(v[0]), body, init)
    ans, dans_da = vals[3], vals[6]
    dlogax_da = lax.sub(lax.log(x), _digamma(lax.add(a, 1.0)))
    return lax.div(lax.mul(lax.neg(lax.add(dans_da, lax.mul(ans, dlogax_da))), x), a)


def _gamma_grad_cf(x: Any, a: Any, enabled: Any, dtype: np.dtype) -> Any:
    from baton._control_flow import while_loop

    eps = float(ml_dtypes.finfo(dtype).eps)

    def body(vals: Any) -> Any:
        (en, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
         dpkm2, dqkm2, dpkm1, dqkm1, dans) = vals  # fmt: skip
        c = lax.add(c, 1.0)
        y_n = lax.add(y, 1.0)
        z_n = lax.add(z, 2.0)
        yc = lax.mul(y_n, c)
        pk = lax.sub(lax.mul(pkm1, z_n), lax.mul(pkm2, yc))
        qk = lax.sub(lax.mul(qkm1, z_n), lax.mul(qkm2, yc))
        nz = lax.ne(qk, 0.0)
        safe_qk = lax.select(nz, qk, lax.full((), 1.0, dtype))
        r = lax.div(pk, safe_qk)
        t_n = lax.select(
            nz, lax.abs(lax.div(lax.sub(ans, r), r)), lax.full((), 1.0, dtype)
        )
        ans_n = lax.select(nz, r, ans)
        dpk = lax.add(
            lax.sub(lax.sub(lax.mul(dpkm1, z_n), pkm1), lax.mul(dpkm2, yc)),
            lax.mul(pkm2, c),
        )
        dqk = lax.add(
            lax.sub(lax.sub(lax.mul(dqkm1, z_n), qkm1), lax.mul(dqkm2, yc)),
            lax.mul(qkm2, c),
        )
        dans_n = lax.select(
            nz, lax.div(lax.sub(dpk, lax.mul(ans_n, dqk)), safe_qk), dans
        )
        grad_cond = lax.select(
            nz, lax.abs(lax.sub(dans_n, dans)), lax.full((), 1.0, dtype)
        )
        npkm2, npkm1, nqkm2, nqkm1 = pkm1, pk, qkm1, qk
        ndpkm2, ndqkm2, ndpkm1, ndqkm1 = dpkm1, dqkm1, dpk, dqk
        rescale = lax.gt(lax.abs(pk), 1.0 / eps)

        def sc(v: Any) -> Any:
            return lax.select(rescale, lax.mul(v, eps), v)

        npkm2, npkm1, nqkm2, nqkm1 = sc(npkm2), sc(npkm1), sc(nqkm2), sc(nqkm1)
        ndpkm2, ndqkm2, ndpkm1, ndqkm1 = sc(ndpkm2), sc(ndqkm2), sc(ndpkm1), sc(ndqkm1)
        go = lax.bitwise_and(en, lax.gt(grad_cond, eps))

        def keep(new: Any, old: Any) -> Any:
            return lax.select(en, new, old)

        return (
            go, keep(ans_n, ans), keep(t_n, t), keep(y_n, y), keep(z_n, z), c,
            keep(npkm1, pkm1), keep(nqkm1, qkm1), keep(npkm2, pkm2), keep(nqkm2, qkm2),
            keep(ndpkm2, dpkm2), keep(ndqkm2, dqkm2), keep(ndpkm1, dpkm1),
            keep(ndqkm1, dqkm1), keep(dans_n, dans),
        )  # fmt: skip

    shape = tuple(a.shape)
    y = lax.sub(1.0, a)
    z = lax.add(lax.add(x, y), 1.0)
    pkm1 = lax.add(x, 1.0)
    qkm1 = lax.mul(z, x)
    ans = lax.div(pkm1, qkm1)
    zeros = lax.zeros(shape, dtype)
    dqkm1 = lax.neg(x)
    dans = lax.div(lax.neg(lax.mul(ans, dqkm1)), qkm1)
    init = (
        enabled, ans, lax.full(shape, 1.0, dtype), y, z, lax.zeros((), dtype),
        pkm1, qkm1, lax.full(shape, 1.0, dtype), x,
        zeros, zeros, zeros, dqkm1, dans,
    )  # fmt: skip
    vals = while_loop(
        lambda v: lax.bitwise_and(lax.lt(v[5], 2000.0), any_true(v[0])), body, init
    )
    ans, dans = vals[1], vals[14]
    dlogax_da = lax.sub(lax.log(x), _digamma(a))
    return lax.neg(lax.mul(lax.add(dans, lax.mul(ans, dlogax_da)), x))


def random_gamma_grad(a: Any, x: Any) -> Any:
    """d x / d a for gamma draws x of shape parameter a (lax values of one
    float dtype and shape): JAX's ``lax.random_gamma_grad``."""
    dtype = np.dtype(a.dtype)
    is_nan = lax.bitwise_or(lax.ne(a, a), lax.ne(x, x))
    x_is_zero = lax.eq(x, 0.0)
    domain_error = lax.bitwise_or(lax.lt(x, 0.0), lax.le(a, 0.0))
    use_cf = lax.bitwise_and(lax.gt(x, 1.0), lax.gt(x, a))
    safe_x = lax.select(lax.gt(x, 0.0), x, lax.full((), 1.0, dtype))
    safe_a = lax.select(lax.gt(a, 0.0), a, lax.full((), 1.0, dtype))
    ax = lax.sub(lax.sub(lax.mul(safe_a, lax.log(safe_x)), safe_x), _lgamma(safe_a))
    underflow = lax.lt(ax, -float(np.log(ml_dtypes.finfo(dtype).max)))
    enabled = lax.bitwise_not(
        lax.bitwise_or(
            lax.bitwise_or(x_is_zero, domain_error), lax.bitwise_or(underflow, is_nan)
        )
    )
    cf = _gamma_grad_cf(safe_x, safe_a, lax.bitwise_and(enabled, use_cf), dtype)
    series = _gamma_grad_series(
        safe_x, safe_a, lax.bitwise_and(enabled, lax.bitwise_not(use_cf)), dtype
    )
    out = lax.select(use_cf, lax.neg(cf), series)
    out = lax.select(x_is_zero, lax.zeros(tuple(a.shape), dtype), out)
    return lax.select(
        lax.bitwise_or(domain_error, is_nan),
        lax.full(tuple(a.shape), np.nan, dtype),
        out,
    )


def _gamma_grad_impl(sample: Any, a: Any, *, log_space: bool) -> Any:
    """JAX's ``_gamma_grad``: d sample / d a (of log sample in log space)."""
    dtype = np.dtype(a.dtype)
    if not log_space:
        return random_gamma_grad(a, sample)
    x = lax.exp(sample)
    tiny = float(ml_dtypes.finfo(dtype).tiny)
    x = lax.select(lax.eq(x, 0.0), lax.full(tuple(x.shape), tiny, dtype), x)
    return lax.div(random_gamma_grad(a, x), x)
