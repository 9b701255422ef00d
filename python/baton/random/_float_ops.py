"""Floating-point pieces of the samplers, rounded the way JAX's are on CPU.

The samplers promise JAX's values: bitwise for ``uniform`` (and what is
built on it) and within 2 ulp (bitwise in practice) for ``normal`` /
``truncated_normal``. What JAX computes is what XLA's CPU backend emits, so
these functions evaluate the same formulas with the same roundings:

- :func:`fma32` -- XLA fuses ``u * (max - min) + min`` into one fused
  multiply-add; a separate multiply and add differ in the last bit for a
  large share of values. baton has no fma, so it is emulated exactly.
- :func:`erf32` -- XLA's float32 ``erf`` (a rational approximation in
  Eigen's form: odd numerator / even denominator in x**2, Horner steps as
  fmas, +-1 beyond |x| = 3.8325...).
- :func:`erf_inv32` -- XLA's float32 ``erf_inv``: M. Giles, "Approximating
  the erfinv function" (GPU Computing Gems, 2011), two degree-8
  polynomials in w = -log1p(-x*x), also evaluated with fmas.
- :func:`log32`, :func:`log1p32` -- XLA's float32 log (Cephes' logf,
  fused steps) and log1p (Cephes' rational form near 0), on which erf_inv
  and gumbel depend; the exponent split is a binary search on powers of
  two, since baton has no bit casts.
- :func:`next_after` -- ``nextafter`` for float32, without bit casts.

All take and return lax values of float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton._baton import lax

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def fma32(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` for float32 values, rounded once (a fused multiply-add).

    The product of two float32s is exact in float64; the float64 sum is
    rounded, and rounding that again to float32 can differ from a single
    rounding only when the float64 sum lands exactly on a midpoint between
    two float32s while the exact sum does not (double rounding). The exact
    error of the float64 sum (Knuth's TwoSum) tells which side the exact
    value is on, and the midpoint case is corrected with it.
    """
    p = lax.mul(lax.astype(a, _F64), lax.astype(b, _F64))  # exact
    c64 = lax.astype(c, _F64)
    s = lax.add(p, c64)
    # TwoSum: err is exactly (p + c) - s.
    b_virtual = lax.sub(s, p)
    a_virtual = lax.sub(s, b_virtual)
    err = lax.add(lax.sub(p, a_virtual), lax.sub(c64, b_virtual))
    r = lax.astype(s, _F32)
    r64 = lax.astype(r, _F64)
    d = lax.sub(s, r64)  # exact: s minus its float32 rounding
    # On a midpoint, s + d is the other float32 neighbour (exactly), and it
    # is as far from s as r is.
    other = lax.astype(lax.add(s, d), _F32)
    other64 = lax.astype(other, _F64)
    midpoint = lax.bitwise_and(lax.ne(d, 0.0), lax.eq(lax.sub(other64, s), d))
    # At a midpoint ties-to-even picked r; the exact value lies on err's side.
    towards_err = lax.eq(lax.gt(other64, r64), lax.gt(err, 0.0))
    fix = lax.bitwise_and(lax.bitwise_and(midpoint, lax.ne(err, 0.0)), towards_err)
    return lax.select(fix, other, r)


def _horner_fma(x: Any, coefficients: tuple[float, ...]) -> Any:
    """sum(c_i x**(n-i)) by Horner's rule with a fused step each (as XLA
    emits it on CPU); coefficients from the highest degree."""
    p = lax.full((), np.float32(coefficients[0]), _F32)
    for c in coefficients[1:]:
        p = fma32(p, x, np.float32(c))
    return p


# XLA's float32 erf: erf(x) = x * P(x^2) / Q(x^2) for |x| < 3.8325...
_ERF_NUMERATOR = (
    0.00022905065861350646,
    0.0034082910107109506,
    0.050955695062380861,
    0.18520832239976145,
    1.128379143519084,
)
_ERF_DENOMINATOR = (
    -1.1791602954361697e-7,
    0.000023547966471313185,
    0.0010179625278914885,
    0.014070470171167667,
    0.11098505178285362,
    0.49746925110067538,
    1.0,
)
# erf rounds to +-1 in float32 beyond this (erfinv(1 - 2**-24)).
_ERF_SATURATION = 3.832506856900711


def erf32(x: Any) -> Any:
    """The error function of float32 x, as XLA's CPU backend computes it."""
    x2 = lax.mul(x, x)
    p = lax.mul(x, _horner_fma(x2, _ERF_NUMERATOR))
    q = _horner_fma(x2, _ERF_DENOMINATOR)
    one = lax.select(lax.lt(x, 0.0), lax.full((), -1.0, _F32), lax.full((), 1.0, _F32))
    saturated = lax.ge(lax.abs(x), np.float32(_ERF_SATURATION))
    return lax.select(saturated, one, lax.true_divide(p, q))


# Giles' single-precision erfinv: polynomials in w - 2.5 (w < 5) and in
# sqrt(w) - 3 (w >= 5), highest degree first.
_ERF_INV_CENTRAL = (
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
_ERF_INV_TAIL = (
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


# XLA's float32 log on CPU: Cephes' logf. With x = m - 1 (or 2m - 1 below
# sqrt(1/2)) for the mantissa m in [0.5, 1), log = x - x**2/2 + x**3 * P(x)
# + e * ln2, ln2 split in two parts (q2 + q1) so e * q2 is exact.
_LOG_P = (
    7.0376836292e-2,
    -1.1514610310e-1,
    1.1676998740e-1,
    -1.2420140846e-1,
    1.4249322787e-1,
    -1.6668057665e-1,
    2.0000714765e-1,
    -2.4999993993e-1,
    3.3333331174e-1,
)
_LOG_Q1 = -2.12194440e-4
_LOG_Q2 = 0.693359375
_F32_MIN_NORMAL = float(np.finfo(np.float32).tiny)


def _frexp32(x: Any) -> tuple[Any, Any]:
    """(m, e) with x = m * 2**e and m in [0.5, 1), for positive normal
    float32 x, without bit casts: scaling by powers of two is exact, so a
    binary search on the exponent normalises m exactly."""
    m, e = x, lax.zeros((), _F32)
    for s in (64, 32, 16, 8, 4, 2, 1):
        big = lax.ge(m, np.float32(2.0**s))
        m = lax.select(big, lax.mul(m, np.float32(2.0**-s)), m)
        e = lax.select(big, lax.add(e, float(s)), e)
        small = lax.lt(m, np.float32(2.0**-s))
        m = lax.select(small, lax.mul(m, np.float32(2.0**s)), m)
        e = lax.select(small, lax.sub(e, float(s)), e)
    ge_one = lax.ge(m, 1.0)
    m = lax.select(ge_one, lax.mul(m, 0.5), m)
    e = lax.select(ge_one, lax.add(e, 1.0), e)
    return m, e


def log32(u: Any) -> Any:
    """The natural log of float32 u, as XLA's CPU backend computes it
    (Cephes' polynomial with fused steps; subnormals count as zero, as
    there)."""
    x, e = _frexp32(lax.maximum(u, np.float32(_F32_MIN_NORMAL)))
    low = lax.lt(x, np.float32(0.707106781186547524))
    e = lax.select(low, lax.sub(e, 1.0), e)
    x = lax.sub(lax.select(low, lax.add(x, x), x), 1.0)
    x2 = lax.mul(x, x)
    x3 = lax.mul(x2, x)
    c = [np.float32(v) for v in _LOG_P]
    y = fma32(c[0], x, c[1])
    y1 = fma32(c[3], x, c[4])
    y2 = fma32(c[6], x, c[7])
    y = fma32(y, x, c[2])
    y1 = fma32(y1, x, c[5])
    y2 = fma32(y2, x, c[8])
    y = fma32(y, x3, y1)
    y = fma32(y, x3, y2)
    y = fma32(y, x3, lax.mul(e, np.float32(_LOG_Q1)))
    r = lax.add(
        lax.add(lax.sub(x, lax.mul(x2, 0.5)), y), lax.mul(e, np.float32(_LOG_Q2))
    )
    r = lax.select(lax.eq(u, np.float32(np.inf)), u, r)
    # XLA's CPU code flushes subnormal inputs to zero: log gives -inf.
    r = lax.select(
        lax.lt(u, np.float32(_F32_MIN_NORMAL)), lax.full((), -np.inf, _F32), r
    )
    return lax.select(lax.bitwise_not(lax.ge(u, 0.0)), lax.full((), np.nan, _F32), r)


# XLA's float32 log1p: Cephes' rational form log1p(x) = x - x**2/2 +
# x**3 * P(x) / Q(x) for |x| < sqrt(2) - 1, log(1 + x) beyond.
_LOG1P_SMALL = 0.41421356237309504880
_LOG1P_NUMERATOR = (
    4.5270000862445199635215e-5,
    4.9854102823193375972212e-1,
    6.5787325942061044846969e0,
    2.9911919328553073277375e1,
    6.0949667980987787057556e1,
    5.7112963590585538103336e1,
    2.0039553499201281259648e1,
)
_LOG1P_DENOMINATOR = (
    1.0,
    1.5062909083469192043167e1,
    8.3047565967967209469434e1,
    2.2176239823732856465394e2,
    3.0909872225312059774938e2,
    2.1642788614495947685003e2,
    6.0118660497603843919306e1,
)


def log1p32(x: Any) -> Any:
    """log(1 + x) for float32 x > -1, as XLA's CPU backend computes it: the
    Cephes rational function (fused Horner steps) for |x| < sqrt(2) - 1,
    else log32 of the float32 sum 1 + x."""
    x2 = lax.mul(x, x)
    ratio = lax.true_divide(
        _horner_fma(x, _LOG1P_NUMERATOR), _horner_fma(x, _LOG1P_DENOMINATOR)
    )
    small = lax.add(x, lax.add(lax.mul(x2, -0.5), lax.mul(lax.mul(x, x2), ratio)))
    large = log32(lax.add(x, 1.0))
    return lax.select(lax.lt(lax.abs(x), np.float32(_LOG1P_SMALL)), small, large)


def erf_inv32(x: Any) -> Any:
    """The inverse error function of float32 x in [-1, 1] (+-inf at +-1),
    as XLA computes it: Giles' polynomials in w = -log1p(-x*x), Horner steps
    fused."""
    w = lax.neg(log1p32(lax.neg(lax.mul(x, x))))
    central = lax.lt(w, 5.0)
    t = lax.select(central, lax.sub(w, 2.5), lax.sub(lax.sqrt(w), 3.0))
    p = lax.select(
        central,
        lax.full((), np.float32(_ERF_INV_CENTRAL[0]), _F32),
        lax.full((), np.float32(_ERF_INV_TAIL[0]), _F32),
    )
    for c_central, c_tail in zip(_ERF_INV_CENTRAL[1:], _ERF_INV_TAIL[1:]):
        c = lax.select(
            central,
            lax.full((), np.float32(c_central), _F32),
            lax.full((), np.float32(c_tail), _F32),
        )
        p = fma32(p, t, c)
    result = lax.mul(p, x)
    return lax.select(lax.eq(lax.abs(x), 1.0), lax.mul(x, np.float32(np.inf)), result)


_F32_MAX = float(np.finfo(np.float32).max)
_F32_DENORM_MIN = float(np.finfo(np.float32).smallest_subnormal)


def next_after(x: Any, upward: bool) -> Any:
    """The float32 neighbour of float32 x toward +inf (``upward``) or -inf
    (numpy's nextafter(x, +-inf)), without bit casts.

    Moving x by v = 1.25 * |x| * 2**-24 (at least the smallest subnormal)
    in float64 and rounding to float32 lands on the neighbour: with u the
    ulp of x, v lies in [0.625u, 1.25u), so the nearest float32 is x +- u,
    also where the neighbour is in the next binade down (spacing u / 2).
    """
    if not upward:
        return lax.neg(next_after(lax.neg(x), True))
    x64 = lax.astype(x, _F64)
    step = lax.maximum(lax.mul(lax.abs(x64), 1.25 * 2.0**-24), _F32_DENORM_MIN)
    r = lax.astype(lax.add(x64, step), _F32)
    # -inf's upward neighbour is the lowest float (inf + step stays inf and
    # NaN stays NaN on their own).
    return lax.select(lax.eq(x, -np.inf), lax.full((), -_F32_MAX, _F32), r)


# XLA's float32 exp on CPU: Cephes' expf. With n = floor(x log2(e) + 1/2)
# and r = x - n ln2 (ln2 in two parts, fused steps), exp(x) = 2**n *
# (1 + r + r**2 P(r)), Horner steps fused; x is first clamped to
# [-88.376..., log(FLT_MAX)] and n to at most 127 (so 2**n stays a float32;
# matched against XLA on 300k inputs across the whole range).
_EXP_P = (
    1.9875691500e-4,
    1.3981999507e-3,
    8.3334519073e-3,
    4.1665795894e-2,
    1.6666665459e-1,
    5.0000001201e-1,
)
_EXP_HI = 88.7228391
_EXP_LO = -88.3762626647949


def _pow2_64(n: Any) -> Any:
    """2.0**n in float64 for integral float32 n with |n| <= 255, exactly
    (a product of the powers of two of n's bits)."""
    m = lax.astype(lax.abs(n), np.dtype(np.int32))
    p = lax.full((), 1.0, _F64)
    for s in (128, 64, 32, 16, 8, 4, 2, 1):
        bit = lax.ne(lax.bitwise_and(m, s), 0)
        p = lax.select(bit, lax.mul(p, 2.0**s), p)
    return lax.select(lax.lt(n, 0.0), lax.div(1.0, p), p)


def exp32(x: Any) -> Any:
    """e**x of float32 x as XLA's CPU backend computes it (Cephes' expf
    with fused steps; results below the normal range flushed to zero, as
    XLA's code runs with denormals off)."""
    f32 = np.float32
    xc = lax.minimum(lax.maximum(x, f32(_EXP_LO)), f32(_EXP_HI))
    n = lax.minimum(lax.floor(fma32(xc, f32(1.44269504088896341), f32(0.5))), 127.0)
    r = fma32(n, f32(-0.693359375), xc)
    r = fma32(n, f32(2.12194440e-4), r)
    z = lax.mul(r, r)
    y = _horner_fma(r, _EXP_P)
    y = lax.add(fma32(y, z, r), 1.0)
    out = lax.astype(lax.mul(lax.astype(y, _F64), _pow2_64(n)), _F32)
    out = lax.select(lax.lt(out, f32(_F32_MIN_NORMAL)), lax.zeros((), _F32), out)
    return lax.select(lax.ne(x, x), x, out)
