"""bt.scipy.special against Python's math module (no scipy, no jax)."""

import math

import numpy as np
import pytest

import baton as bt
from baton.scipy import special as S

F32 = np.float32


def _ref(fn, xs):
    return np.array([fn(float(v)) for v in xs])


def test_erf_bound():
    x = np.linspace(-6, 6, 4001).astype(F32)
    assert np.abs(np.asarray(S.erf(x)) - _ref(math.erf, x)).max() < 1e-6


def test_erfc_relative_bound():
    x = np.linspace(-3, 9, 4001).astype(F32)
    ref = _ref(math.erfc, x)
    got = np.asarray(S.erfc(x))
    keep = ref > 1e-30
    assert (np.abs(got - ref) / ref)[keep].max() < 1e-5


def test_erfinv_roundtrip_and_edges():
    y = np.linspace(-0.9999, 0.9999, 4001).astype(F32)
    back = _ref(math.erf, np.asarray(S.erfinv(y)))
    assert np.abs(back - y).max() < 1e-6
    e = np.asarray(S.erfinv(np.array([-1.0, 1.0, 1.5], F32)))
    assert e[0] == -np.inf and e[1] == np.inf and np.isnan(e[2])


def test_gammaln_bound():
    x = np.concatenate([np.linspace(0.01, 40, 3001), np.linspace(-9.9, -0.1, 999)])
    x = x[np.abs(x - np.round(x)) > 1e-3].astype(F32)  # away from the poles
    ref = _ref(math.lgamma, x)
    err = np.abs(np.asarray(S.gammaln(x)) - ref) / np.maximum(np.abs(ref), 1.0)
    assert err.max() < 1e-5
    assert np.asarray(S.gammaln(np.array([0.0, -2.0], F32)))[0] == np.inf


def test_dtypes():
    assert S.erf(np.float16(0.5)).dtype == np.float16
    assert S.erf(np.array([1], np.int32)).dtype == np.float32
    assert S.gammaln(np.ones(2, bt.numpy.bfloat16)).dtype == bt.numpy.bfloat16


def test_exact_derivatives():
    for x in (-1.5, 0.0, 0.7, 2.5):
        d = 2 / math.sqrt(math.pi) * math.exp(-x * x)
        assert float(bt.grad(S.erf)(x)) == pytest.approx(d, rel=1e-5)
        assert float(bt.grad(S.erfc)(x)) == pytest.approx(-d, rel=1e-5)
    y = 0.3
    dy = math.sqrt(math.pi) / 2 * math.exp(float(S.erfinv(y)) ** 2)
    assert float(bt.grad(S.erfinv)(y)) == pytest.approx(dy, rel=1e-5)
    # digamma(3) = 1.5 - euler_gamma
    assert float(bt.grad(S.gammaln)(3.0)) == pytest.approx(1.5 - 0.5772156649, rel=1e-5)


def test_logsumexp():
    a = np.array([[1.0, 2.0, 3.0], [-np.inf, -np.inf, -np.inf]], F32)
    got = np.asarray(S.logsumexp(a, axis=1))
    assert got[0] == pytest.approx(math.log(math.e + math.e**2 + math.e**3), rel=1e-6)
    assert got[1] == -np.inf
    assert S.logsumexp(a[0], keepdims=True).shape == (1,)
    assert S.logsumexp(np.ones((2, 3, 4), F32), axis=(0, 2)).shape == (3,)
    big = np.array([1000.0, 1000.0], F32)
    assert float(S.logsumexp(big)) == pytest.approx(1000 + math.log(2))
    b = np.array([1.0, -1.0, 2.0], F32)
    ref = math.log(math.e - math.e**2 + 2 * math.e**3)
    assert float(S.logsumexp(a[0], b=b)) == pytest.approx(ref, rel=1e-6)
    out, sign = S.logsumexp(a[0], b=-np.ones(3, F32), return_sign=True)
    assert float(sign) == -1.0
    assert float(out) == pytest.approx(math.log(math.e + math.e**2 + math.e**3))
    assert np.isnan(float(S.logsumexp(a[0], b=-np.ones(3, F32))))
    g = np.asarray(bt.grad(lambda v: S.logsumexp(v))(a[0]))
    e = np.exp(a[0])
    np.testing.assert_allclose(g, e / e.sum(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="where"):
        S.logsumexp(a, where=a > 0)


def test_expit_logit_xlogy_xlog1py():
    x = np.array([-3.0, 0.0, 2.0], F32)
    np.testing.assert_allclose(np.asarray(S.expit(x)), 1 / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(S.logit(S.expit(x))), x, atol=1e-5)
    assert float(S.xlogy(0.0, 0.0)) == 0.0
    assert float(S.xlogy(2.0, 3.0)) == pytest.approx(2 * math.log(3))
    assert float(S.xlog1py(0.0, -1.0)) == 0.0
    assert float(S.xlog1py(2.0, 0.5)) == pytest.approx(2 * math.log1p(0.5))
    assert float(bt.grad(lambda v: S.xlogy(v, 2.0))(0.0)) == pytest.approx(math.log(2))
    assert float(bt.grad(lambda v: S.xlogy(2.0, v))(4.0)) == pytest.approx(0.5)


def test_jit_and_vmap():
    x = np.linspace(-2, 2, 5).astype(F32)
    np.testing.assert_allclose(np.asarray(bt.jit(S.erf)(x)), np.asarray(S.erf(x)))
    np.testing.assert_allclose(
        np.asarray(bt.vmap(bt.grad(S.erf))(x)),
        2 / np.sqrt(np.pi) * np.exp(-x * x),
        rtol=1e-5,
    )
