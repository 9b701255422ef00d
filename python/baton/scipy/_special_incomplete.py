"""The incomplete gamma and beta functions as compositions of baton's ops
(implementations run on Tracers; ``baton.scipy.special`` and ``bt.lax``
wrap them): ``igamma`` / ``igammac`` (``gammainc`` / ``gammaincc``),
``igamma_grad_a``, ``random_gamma_grad`` and ``betainc``.

The algorithms are XLA's (``xla/client/lib/math.cc``, which JAX lowers
``lax.igamma`` and ``lax.betainc`` to), in the same float dtype:

- ``igamma(a, x)``: the power series ``x^a e^-x / Gamma(a+1) * sum_n
  x^n / ((a+1)...(a+n))`` where ``x < 1`` or ``x <= a``, else ``1 -`` the
  continued fraction of the upper function (Cephes' ``igamc``, at most
  2000 steps); both stop once every element has converged to the dtype's
  epsilon. ``igamma_grad_a`` and ``random_gamma_grad`` carry the
  derivative in ``a`` through the same recurrences.
- ``betainc(a, b, x)``: the continued fraction of DLMF 8.17.22 evaluated
  by the modified Lentz method (200 steps in float32, 600 in float64),
  with the symmetry ``I_x(a, b) = 1 - I_{1-x}(b, a)`` where
  ``x >= (a+1)/(a+b+2)``.

Derivatives are JAX's: ``igamma`` in ``a`` is ``igamma_grad_a``, in ``x``
the density ``x^(a-1) e^-x / Gamma(a)``; ``betainc`` only in ``x`` (JAX
raises for ``a`` and ``b``; here those derivatives are NaN).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton import _ops
from baton._custom import custom_jvp
from baton.scipy import _special_gamma as _sg
from baton.scipy import _special_math as _sm
from baton.scipy._float_args import as_float as _float
from baton.scipy._float_args import bnp as _bnp
from baton.scipy._float_args import nan_tangent

_VALUE, _DERIVATIVE, _SAMPLE_DERIVATIVE = 0, 1, 2


def _lax() -> Any:
    from baton import _control_flow as lax

    return lax


def _finfo(x: Any) -> Any:
    return np.finfo(np.dtype(x.dtype))


def _upcast(fn: Any, *xs: Any) -> Any:
    """``fn`` on the operands promoted to one float dtype and broadcast to
    one shape; float16 / bfloat16 compute in float32 and round back."""
    bnp = _bnp()
    xs = _ops.promote(*(_float(x) for x in xs))
    xs = bnp.broadcast_arrays(*xs)
    d = np.dtype(xs[0].dtype)
    if d == np.float32 or d == np.float64:
        return fn(*xs)
    return fn(*(x.astype(np.float32) for x in xs)).astype(d)


def _lgamma(x: Any) -> Any:
    return _sm._gammaln_f32(x)


def _digamma(x: Any) -> Any:
    return _sg._digamma_f(x)


def _series(ax: Any, x: Any, a: Any, enabled: Any, mode: int) -> Any:
    """The power series of the lower incomplete gamma function (or its
    derivative in ``a``), iterated where ``enabled``."""
    bnp = _bnp()
    eps = float(_finfo(x).eps)

    def cond(v: Any) -> Any:
        return bnp.any(v[0])

    def body(v: Any) -> Any:
        en, r, c, ans, dc_da, dans_da = v
        r2 = r + 1.0
        dc2 = dc_da * (x / r2) - (c * x) / (r2 * r2)
        dans2 = dans_da + dc2
        c2 = c * (x / r2)
        ans2 = ans + c2
        if mode == _VALUE:
            more = en & (c2 / ans2 > eps)
        else:
            more = en & (bnp.abs(dc2 / dans2) > eps)
        return (
            more,
            bnp.where(en, r2, r),
            bnp.where(en, c2, c),
            bnp.where(en, ans2, ans),
            bnp.where(en, dc2, dc_da),
            bnp.where(en, dans2, dans_da),
        )

    one, zero = bnp.ones_like(a), bnp.zeros_like(a)
    _, _, _, ans, _, dans_da = _lax().while_loop(
        cond, body, (enabled, a, one, one, zero, zero)
    )
    if mode == _VALUE:
        return ans * ax / a
    dlogax_da = bnp.log(x) - _digamma(a + 1.0)
    if mode == _DERIVATIVE:
        return ax * (ans * dlogax_da + dans_da) / a
    return -(dans_da + ans * dlogax_da) * x / a


def _continued_fraction(ax: Any, x: Any, a: Any, enabled: Any, mode: int) -> Any:
    """The continued fraction of the upper incomplete gamma function (or
    its derivative in ``a``), iterated where ``enabled`` (2000 steps at
    most)."""
    bnp = _bnp()
    eps = float(_finfo(x).eps)

    def cond(v: Any) -> Any:
        return (v[5] < 2000.0) & bnp.any(v[0])

    def body(v: Any) -> Any:
        (
            en,
            ans,
            t,
            y,
            z,
            c,
            pkm1,
            qkm1,
            pkm2,
            qkm2,
            dpkm2,
            dqkm2,
            dpkm1,
            dqkm1,
            dans,
        ) = v
        c2 = c + 1.0
        y2 = y + 1.0
        z2 = z + 2.0
        yc = y2 * c2
        pk = pkm1 * z2 - pkm2 * yc
        qk = qkm1 * z2 - qkm2 * yc
        nz = qk != 0.0
        safe_qk = bnp.where(nz, qk, 1.0)
        r = pk / safe_qk
        safe_r = bnp.where(nz & (r != 0.0), r, 1.0)
        t2 = bnp.where(nz, bnp.abs((ans - r) / safe_r), 1.0)
        ans2 = bnp.where(nz, r, ans)
        dpk = dpkm1 * z2 - pkm1 - dpkm2 * yc + pkm2 * c2
        dqk = dqkm1 * z2 - qkm1 - dqkm2 * yc + qkm2 * c2
        dans2 = bnp.where(nz, (dpk - ans2 * dqk) / safe_qk, dans)
        grad_cond = bnp.where(nz, bnp.abs(dans2 - dans), 1.0)
        rescale = bnp.abs(pk) > 1.0 / eps
        s = bnp.where(rescale, eps, 1.0)
        n_pkm2, n_pkm1, n_qkm2, n_qkm1 = pkm1 * s, pk * s, qkm1 * s, qk * s
        n_dpkm2, n_dqkm2, n_dpkm1, n_dqkm1 = dpkm1 * s, dqkm1 * s, dpk * s, dqk * s
        if mode == _VALUE:
            more = en & (t2 > eps)
        else:
            more = en & (grad_cond > eps)
        w = lambda new, old: bnp.where(en, new, old)  # noqa: E731
        return (
            more,
            w(ans2, ans),
            w(t2, t),
            w(y2, y),
            w(z2, z),
            c2,
            w(n_pkm1, pkm1),
            w(n_qkm1, qkm1),
            w(n_pkm2, pkm2),
            w(n_qkm2, qkm2),
            w(n_dpkm2, dpkm2),
            w(n_dqkm2, dqkm2),
            w(n_dpkm1, dpkm1),
            w(n_dqkm1, dqkm1),
            w(dans2, dans),
        )

    y = 1.0 - a
    z = x + y + 1.0
    c = bnp.zeros((), x.dtype)
    pkm2 = bnp.ones_like(x)
    qkm2 = x
    pkm1 = x + 1.0
    qkm1 = z * x
    ans = pkm1 / qkm1
    zero = bnp.zeros_like(x)
    dqkm1 = -x
    dans = (zero - ans * dqkm1) / qkm1
    init = (enabled, ans, bnp.ones_like(x), y, z, c, pkm1, qkm1, pkm2, qkm2)
    init = (*init, zero, zero, zero, dqkm1, dans)
    vals = _lax().while_loop(cond, body, init)
    ans = vals[1]
    if mode == _VALUE:
        return ans * ax
    dans = vals[14]
    dlogax_da = bnp.log(x) - _digamma(a)
    if mode == _DERIVATIVE:
        return ax * (ans * dlogax_da + dans)
    return -(dans + ans * dlogax_da) * x


def _log_ax(a: Any, x: Any) -> tuple[Any, Any]:
    """``exp(a log x - x - lgamma(a))`` and whether it underflows."""
    bnp = _bnp()
    safe_x = bnp.where(x > 0.0, x, 1.0)
    safe_a = bnp.where(a > 0.0, a, 1.0)
    lax_ = safe_a * bnp.log(safe_x) - safe_x - _lgamma(safe_a)
    underflow = lax_ < -math.log(float(_finfo(x).max))
    return bnp.exp(lax_), underflow


def _igamma_f(a: Any, x: Any) -> Any:
    bnp = _bnp()
    is_nan = bnp.isnan(a) | bnp.isnan(x)
    x_inf = x == np.inf
    a0, x0 = a == 0.0, x == 0.0
    domain = (x < 0.0) | (a < 0.0) | (a0 & x0) | is_nan
    use_c = (x >= 1.0) & (x > a)
    ax, underflow = _log_ax(a, x)
    enabled = ~(x0 | domain | underflow | x_inf)
    safe_x = bnp.where(enabled, x, 1.0)
    safe_a = bnp.where(enabled, a, 1.0)
    out = bnp.where(
        use_c,
        1.0 - _continued_fraction(ax, safe_x, safe_a, enabled & use_c, _VALUE),
        _series(ax, safe_x, safe_a, enabled & ~use_c, _VALUE),
    )
    out = bnp.where(x0, 0.0, out)
    out = bnp.where(x_inf, 1.0, out)
    return bnp.where(domain, np.nan, out)


def _igammac_f(a: Any, x: Any) -> Any:
    bnp = _bnp()
    is_nan = bnp.isnan(a) | bnp.isnan(x)
    a0, x0 = a == 0.0, x == 0.0
    x_inf = x == np.inf
    domain = (x < 0.0) | (a < 0.0) | (a0 & x0) | is_nan
    use_series = (x < 1.0) | (x < a)
    ax, underflow = _log_ax(a, x)
    enabled = ~(domain | underflow | x_inf | a0)
    safe_x = bnp.where(enabled & ~x0, x, 1.0)
    safe_a = bnp.where(enabled, a, 1.0)
    ax = bnp.where(x0, 0.0, ax)
    series = _series(ax, safe_x, safe_a, enabled & use_series & ~x0, _VALUE)
    frac = _continued_fraction(ax, safe_x, safe_a, enabled & ~use_series, _VALUE)
    out = bnp.where(use_series, 1.0 - series, frac)
    out = bnp.where(x_inf | a0, 0.0, out)
    return bnp.where(domain, np.nan, out)


def _grad_a_f(a: Any, x: Any, mode: int) -> Any:
    bnp = _bnp()
    is_nan = bnp.isnan(a) | bnp.isnan(x)
    x0 = x == 0.0
    domain = (x < 0.0) | (a <= 0.0)
    use_c = (x > 1.0) & (x > a)
    ax, underflow = _log_ax(a, x)
    enabled = ~(x0 | domain | underflow | is_nan)
    safe_x = bnp.where(enabled, x, 1.0)
    safe_a = bnp.where(enabled, a, 1.0)
    out = bnp.where(
        use_c,
        -_continued_fraction(ax, safe_x, safe_a, enabled & use_c, mode),
        _series(ax, safe_x, safe_a, enabled & ~use_c, mode),
    )
    # Where the loops never ran (underflow), their value is not a number.
    out = bnp.where(enabled, out, 0.0)
    out = bnp.where(x0, 0.0, out)
    return bnp.where(domain | is_nan, np.nan, out)


def _density(a: Any, x: Any) -> Any:
    """``x^(a-1) e^-x / Gamma(a)``, the derivative of igamma in x."""
    bnp = _bnp()
    return bnp.exp(-x + (a - 1.0) * bnp.log(x) - _lgamma(a))


@custom_jvp
def _igamma_rule(a: Any, x: Any) -> Any:
    return _igamma_f(a, x)


@_igamma_rule.defjvp
def _igamma_jvp(primals: Any, tangents: Any) -> Any:
    (a, x), (ta, tx) = primals, tangents
    da = _grad_a_f(a, x, _DERIVATIVE)
    return _igamma_rule(a, x), ta * da + tx * _density(a, x)


@custom_jvp
def _igammac_rule(a: Any, x: Any) -> Any:
    return _igammac_f(a, x)


@_igammac_rule.defjvp
def _igammac_jvp(primals: Any, tangents: Any) -> Any:
    (a, x), (ta, tx) = primals, tangents
    da = _grad_a_f(a, x, _DERIVATIVE)
    return _igammac_rule(a, x), -(ta * da + tx * _density(a, x))


def igamma(a: Any, x: Any) -> Any:
    """Implementation of ``lax.igamma`` / ``special.gammainc``."""
    return _upcast(_igamma_rule, a, x)


def igammac(a: Any, x: Any) -> Any:
    """Implementation of ``lax.igammac`` / ``special.gammaincc``."""
    return _upcast(_igammac_rule, a, x)


def igamma_grad_a(a: Any, x: Any) -> Any:
    """Implementation of ``lax.igamma_grad_a``: ``d igamma(a, x) / da``."""
    return _upcast(lambda a, x: _grad_a_f(a, x, _DERIVATIVE), a, x)


def random_gamma_grad(a: Any, x: Any) -> Any:
    """Implementation of ``lax.random_gamma_grad``: the derivative of a
    Gamma(a, 1) sample ``x`` in ``a`` (implicit reparameterization)."""
    return _upcast(lambda a, x: _grad_a_f(a, x, _SAMPLE_DERIVATIVE), a, x)


# ---- the regularized incomplete beta function ----


def _lentz(a: Any, b: Any, x: Any, *, num_iterations: int, small: float) -> Any:
    """DLMF 8.17.22's continued fraction by the modified Lentz method."""
    bnp = _bnp()

    def numerator(it: Any) -> Any:
        itf = it.astype(x.dtype) if hasattr(it, "astype") else float(it)
        m = bnp.floor((itf - 1.0) / 2.0)
        even_it = bnp.fmod(itf, 2.0) == 0.0
        zero_num = -(a + b) * x / (a + 1.0)
        even_num = bnp.where(
            m == 0.0,
            zero_num,
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        )
        odd_num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
        num = bnp.where(even_it, even_num, odd_num)
        return bnp.where(itf == 1.0, 1.0, num)

    def cond(v: Any) -> Any:
        return (v[0] < num_iterations) & v[1]

    def body(v: Any) -> Any:
        it, _, c, d, h = v
        pn = numerator(it)
        c2 = 1.0 + pn / c
        c2 = bnp.where(bnp.abs(c2) < small, small, c2)
        d2 = 1.0 + pn * d
        d2 = bnp.where(bnp.abs(d2) < small, small, d2)
        d2 = 1.0 / d2
        delta = c2 * d2
        h2 = h * delta
        return (it + 1, bnp.any(bnp.abs(delta - 1.0) >= small), c2, d2, h2)

    # The 0th partial denominator is 0 (so h starts at `small`), the others 1.
    h = bnp.zeros_like(x) + small
    it0 = np.int32(1)
    init = (it0, bnp.asarray(True), h, bnp.zeros_like(x), h)
    return _lax().while_loop(cond, body, init)[4]


def _betainc_f(a: Any, b: Any, x: Any) -> Any:
    bnp = _bnp()
    fin = _finfo(x)
    a_zero = (a == 0.0) | (b == np.inf)
    b_zero = (b == 0.0) | (a == np.inf)
    x0, x1 = x == 0.0, x == 1.0
    is_nan = bnp.isnan(a) | bnp.isnan(b) | bnp.isnan(x)
    res_zero = (b_zero & ~x1) | (a_zero & x0)
    res_one = (a_zero & ~x0) | (b_zero & x1)
    res_nan = (a < 0.0) | (b < 0.0) | (x < 0.0) | (x > 1.0)
    res_nan = res_nan | (a_zero & b_zero) | is_nan
    fast = x < (a + 1.0) / (a + b + 2.0)
    a2 = bnp.where(fast, a, b)
    b2 = bnp.where(fast, b, a)
    x2 = bnp.where(fast, x, 1.0 - x)
    # Keep the loop's arithmetic finite where the answer is set below.
    special = res_zero | res_one | res_nan
    a2 = bnp.where(special, 1.0, a2)
    b2 = bnp.where(special, 1.0, b2)
    x2 = bnp.where(special, 0.5, x2)
    small = float(fin.eps) / 2.0
    iters = 200 if np.dtype(x.dtype) == np.float32 else 600
    frac = _lentz(a2, b2, x2, num_iterations=iters, small=small)
    very_small = float(fin.tiny) * 2.0
    lb_small = _lgamma(b2) - _lgamma(a2 + b2)
    lb = _lgamma(a2) + lb_small
    factor = bnp.where(
        a2 < very_small,
        bnp.exp(bnp.log1p(-x2) * b2 - lb_small),
        bnp.exp(bnp.log(x2) * a2 + bnp.log1p(-x2) * b2 - lb) / a2,
    )
    out = frac * factor
    out = bnp.where(fast, out, 1.0 - out)
    out = bnp.where(res_zero, 0.0, out)
    out = bnp.where(res_one, 1.0, out)
    return bnp.where(res_nan, np.nan, out)


@custom_jvp
def _betainc_rule(a: Any, b: Any, x: Any) -> Any:
    return _betainc_f(a, b, x)


@_betainc_rule.defjvp
def _betainc_jvp(primals: Any, tangents: Any) -> Any:
    (a, b, x), (ta, tb, tx) = primals, tangents
    bnp = _bnp()
    lbeta = _lgamma(a) + _lgamma(b) - _lgamma(a + b)
    dx = bnp.exp((b - 1.0) * bnp.log1p(-x) + (a - 1.0) * bnp.log(x) - lbeta)
    # No derivative in a and b (JAX raises): NaN, never a silent zero.
    return _betainc_rule(a, b, x), tx * dx + nan_tangent(ta) + nan_tangent(tb)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """Implementation of ``lax.betainc`` / ``special.betainc``."""
    return _upcast(_betainc_rule, a, b, x)
