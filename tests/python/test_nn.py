"""bt.nn activations and bt.nn.initializers (numpy references)."""

import math

import numpy as np
import pytest

import baton as bt
from baton import nn

F32 = np.float32
X = np.array([-3.0, -0.5, 0.0, 0.5, 2.0, 7.0], F32)


def _np_gelu_erf(x):
    return np.array([v * (1 + math.erf(v / math.sqrt(2))) / 2 for v in x.astype(float)])


REFERENCES = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "silu": lambda x: x / (1 + np.exp(-x)),
    "softplus": lambda x: np.log1p(np.exp(x)),
    "log_sigmoid": lambda x: -np.log1p(np.exp(-x)),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "selu": lambda x: (
        1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))
    ),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "celu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activation_values(name):
    got = np.asarray(getattr(nn, name)(X))
    np.testing.assert_allclose(
        got, REFERENCES[name](X.astype(float)), rtol=1e-5, atol=1e-6
    )


def test_swish_is_silu():
    assert nn.swish is nn.silu


def test_gelu_both_forms():
    x = X.astype(float)
    tanh_form = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(np.asarray(nn.gelu(X)), tanh_form, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(nn.gelu(X, approximate=False)), _np_gelu_erf(X), rtol=1e-5, atol=1e-6
    )


def test_derivatives_at_kinks_match_jax():
    expect = {"relu": 0.0, "relu6": 0.0, "leaky_relu": 1.0, "elu": 1.0, "softplus": 0.5}
    for name, d in expect.items():
        assert float(bt.grad(getattr(nn, name))(0.0)) == d, name
    assert float(bt.grad(nn.relu6)(6.0)) == 0.0
    # smooth ones: against finite differences
    for name in ("sigmoid", "silu", "softplus", "log_sigmoid", "gelu", "selu"):
        f = getattr(nn, name)
        x0 = 0.3
        fd = (float(f(np.float64(x0 + 1e-3))) - float(f(np.float64(x0 - 1e-3)))) / 2e-3
        assert float(bt.grad(f)(x0)) == pytest.approx(fd, rel=1e-3), name


def test_softplus_large_inputs_are_finite():
    assert float(nn.softplus(100.0)) == 100.0
    assert float(bt.grad(nn.softplus)(-100.0)) == pytest.approx(0.0, abs=1e-30)
    assert float(bt.grad(nn.softplus)(100.0)) == 1.0


def test_softmax_log_softmax():
    x = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, 1000.0]], F32)
    s = np.asarray(nn.softmax(x))
    np.testing.assert_allclose(s.sum(axis=-1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(s[1], 1 / 3, rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(nn.log_softmax(x)), np.log(s), rtol=1e-5, atol=1e-6
    )
    assert nn.softmax(x, axis=0).shape == (2, 3)
    g = bt.grad(lambda v: nn.log_softmax(v)[0, 0])(x)
    np.testing.assert_allclose(
        np.asarray(g)[0], [1 - s[0, 0], -s[0, 1], -s[0, 2]], rtol=1e-5
    )
    assert nn.logsumexp is bt.scipy.special.logsumexp


def test_one_hot():
    got = np.asarray(nn.one_hot(np.array([0, 2, 5, -1]), 3))
    np.testing.assert_array_equal(got, [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    assert got.dtype == np.float32
    assert nn.one_hot(np.array([[0, 1]]), 4, axis=0).shape == (4, 1, 2)
    assert nn.one_hot(np.array([1]), 2, dtype=np.int32).dtype == np.int32
    labels = np.array([1, 0])
    out = bt.jit(lambda y: nn.one_hot(y, 3))(labels)
    np.testing.assert_array_equal(np.asarray(out), [[0, 1, 0], [1, 0, 0]])
    with pytest.raises(TypeError, match="num_classes"):
        nn.one_hot(labels, 3.0)


def test_standardize():
    x = np.arange(12, dtype=F32).reshape(3, 4)
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(np.asarray(nn.standardize(x)), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        np.asarray(nn.standardize(x, mean=1.0, variance=4.0, epsilon=0.0)), (x - 1) / 2
    )


def test_integer_inputs_compute_in_float():
    assert nn.sigmoid(np.array([0, 1], np.int32)).dtype == np.float32
    assert nn.relu(np.array([-1, 2], np.int32)).dtype == np.int32  # keeps the dtype


# ---- initializers (need bt.random) ----

random = pytest.importorskip("baton.random")
if not all(
    hasattr(random, n) for n in ("PRNGKey", "normal", "uniform", "truncated_normal")
):
    pytest.skip("bt.random is not complete yet", allow_module_level=True)

init = nn.initializers


def test_constant_initializers():
    k = random.PRNGKey(0)
    np.testing.assert_array_equal(np.asarray(init.zeros(k, (2, 3))), np.zeros((2, 3)))
    np.testing.assert_array_equal(np.asarray(init.ones(k, (2,))), np.ones(2))
    c = init.constant(-7.0)(k, (2, 2), np.float16)
    assert c.dtype == np.float16 and float(c[0, 0]) == -7.0


def test_random_initializers_scale():
    k = random.PRNGKey(1)
    n = np.asarray(init.normal(0.5)(k, (200, 100)))
    assert n.shape == (200, 100) and abs(n.std() - 0.5) < 0.02
    u = np.asarray(init.uniform(2.0)(k, (10000,)))
    assert 0 <= u.min() and u.max() < 2.0
    t = np.asarray(init.truncated_normal(1.0)(k, (10000,)))
    assert np.abs(t).max() <= 2.0


@pytest.mark.parametrize(
    "name,var",
    [
        ("glorot_normal", 2 / (300 + 200)),
        ("glorot_uniform", 2 / (300 + 200)),
        ("xavier_normal", 2 / (300 + 200)),
        ("lecun_normal", 1 / 300),
        ("lecun_uniform", 1 / 300),
        ("he_normal", 2 / 300),
        ("he_uniform", 2 / 300),
        ("kaiming_normal", 2 / 300),
    ],
)
def test_variance_scaling_family(name, var):
    w = np.asarray(getattr(init, name)()(random.PRNGKey(2), (300, 200)))
    assert w.shape == (300, 200) and w.dtype == np.float32
    assert w.var() == pytest.approx(var, rel=0.05)


def test_variance_scaling_fans_and_errors():
    w = init.variance_scaling(1.0, "fan_in", "normal")(
        random.PRNGKey(3), (3, 3, 16, 32)
    )
    assert np.asarray(w).var() == pytest.approx(1 / (3 * 3 * 16), rel=0.1)
    with pytest.raises(ValueError, match="mode"):
        init.variance_scaling(1.0, "fan_sideways", "normal")
    with pytest.raises(ValueError, match="distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="in_axis"):
        init.lecun_normal()(random.PRNGKey(0), (5,))
