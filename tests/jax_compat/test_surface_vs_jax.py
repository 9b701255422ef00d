"""bt.nn, bt.nn.initializers, bt.scipy.special, eval_shape, device queries
and error classes against JAX: the same values and gradients (float32
rounding; erf-based functions within baton's stated erf bound), the same
shapes, the same exception classes for the same mistakes."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as jss  # noqa: E402

import baton as bt  # noqa: E402
import baton.numpy as bnp  # noqa: E402
import baton.scipy.special as bss  # noqa: E402

F32 = np.float32
X = np.array([-6.0, -2.5, -1.0, -0.3, 0.0, 0.3, 1.0, 2.5, 6.0, 20.0], F32)
APPROX = dict(rtol=2e-6, atol=2e-6)  # baton's erf: |error| < 1e-6


def _close(b, j, **tol):
    tol = tol or dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(b), np.asarray(j), **tol)


ACTIVATIONS = [
    ("relu", {}),
    ("relu6", {}),
    ("sigmoid", {}),
    ("silu", {}),
    ("swish", {}),
    ("softplus", {}),
    ("log_sigmoid", {}),
    ("elu", {}),
    ("elu", {"alpha": 0.5}),
    ("selu", {}),
    ("celu", {"alpha": 2.0}),
    ("leaky_relu", {}),
    ("leaky_relu", {"negative_slope": 0.2}),
    ("gelu", {}),
    ("gelu", {"approximate": False}),
    ("soft_sign", {}),
    ("hard_tanh", {}),
]


@pytest.mark.parametrize(
    "name,kw", ACTIVATIONS, ids=[f"{n}{k}" for n, k in ACTIVATIONS]
)
def test_activation_values_and_grads(name, kw):
    bf = lambda x: getattr(bt.nn, name)(x, **kw)  # noqa: E731
    jf = lambda x: getattr(jax.nn, name)(x, **kw)  # noqa: E731
    tol = APPROX if kw.get("approximate") is False else {}
    _close(bf(X), jf(X), **tol)
    _close(bt.vmap(bt.grad(bf))(X), jax.vmap(jax.grad(jf))(X), **tol)


@pytest.mark.parametrize("axis", [-1, 0, None, (0, 1)])
def test_softmax_family(axis):
    x = np.random.default_rng(0).normal(size=(3, 5)).astype(F32) * 4
    _close(bt.nn.softmax(x, axis=axis), jax.nn.softmax(x, axis=axis))
    _close(bt.nn.log_softmax(x, axis=axis), jax.nn.log_softmax(x, axis=axis))
    _close(bt.nn.logsumexp(x, axis=axis), jax.nn.logsumexp(x, axis=axis))
    w = np.arange(15, dtype=F32).reshape(3, 5)

    def loss(lib):
        return lambda v: (lib.nn.log_softmax(v, axis=axis) * w).sum()

    _close(bt.grad(loss(bt))(x), jax.grad(loss(jax))(x))
    _close(
        bt.grad(lambda v: (bt.nn.softmax(v, axis=axis) * w).sum())(x),
        jax.grad(lambda v: (jax.nn.softmax(v, axis=axis) * w).sum())(x),
    )


def test_one_hot_and_standardize():
    y = np.array([[0, 3], [2, 7]], np.int32)
    for axis in (-1, 0, 1):
        _close(bt.nn.one_hot(y, 4, axis=axis), jax.nn.one_hot(y, 4, axis=axis))
    x = np.random.default_rng(1).normal(size=(4, 6)).astype(F32)
    _close(bt.nn.standardize(x), jax.nn.standardize(x), rtol=1e-4, atol=1e-5)
    _close(
        bt.nn.standardize(x, axis=0, epsilon=1e-3),
        jax.nn.standardize(x, axis=0, epsilon=1e-3),
        rtol=1e-4,
        atol=1e-5,
    )


SPECIAL = ["erf", "erfc", "expit", "gammaln"]


@pytest.mark.parametrize("name", SPECIAL)
def test_special_values_and_grads(name):
    x = np.abs(X) + 0.1 if name == "gammaln" else X
    tol = dict(rtol=1e-5, atol=2e-6)
    _close(getattr(bss, name)(x), getattr(jss, name)(x), **tol)
    _close(
        bt.vmap(bt.grad(getattr(bss, name)))(x),
        jax.vmap(jax.grad(getattr(jss, name)))(x),
        rtol=1e-4,
        atol=2e-6,
    )


def test_erfinv_logit_xlogy_xlog1py():
    y = np.array([-0.999, -0.7, -0.1, 0.0, 0.2, 0.9, 0.99999], F32)
    _close(bss.erfinv(y), jss.erfinv(y), rtol=1e-5, atol=1e-6)
    _close(
        bt.vmap(bt.grad(bss.erfinv))(y), jax.vmap(jax.grad(jss.erfinv))(y), rtol=1e-4
    )
    p = np.array([0.01, 0.3, 0.5, 0.97], F32)
    _close(bss.logit(p), jss.logit(p))
    _close(bt.vmap(bt.grad(bss.logit))(p), jax.vmap(jax.grad(jss.logit))(p))
    a = np.array([0.0, 0.0, 1.5, 2.0], F32)
    b = np.array([0.0, 3.0, 0.5, 4.0], F32)
    for bf, jf in ((bss.xlogy, jss.xlogy), (bss.xlog1py, jss.xlog1py)):
        _close(bf(a, b), jf(a, b))
        _close(bt.vmap(bt.grad(bf))(a, b + 1), jax.vmap(jax.grad(jf))(a, b + 1))
        _close(
            bt.vmap(bt.grad(bf, argnums=1))(a, b + 1),
            jax.vmap(jax.grad(jf, argnums=1))(a, b + 1),
        )


def test_logsumexp_options():
    a = np.random.default_rng(2).normal(size=(3, 4)).astype(F32)
    b = np.random.default_rng(3).uniform(-1, 2, size=(3, 4)).astype(F32)
    for kw in ({}, {"axis": 0}, {"axis": 1, "keepdims": True}, {"axis": (0, 1)}):
        _close(bss.logsumexp(a, **kw), jss.logsumexp(a, **kw))
        _close(bss.logsumexp(a, b=np.abs(b), **kw), jss.logsumexp(a, b=np.abs(b), **kw))
        bo, bs = bss.logsumexp(a, b=b, return_sign=True, **kw)
        jo, js = jss.logsumexp(a, b=b, return_sign=True, **kw)
        _close(bo, jo)
        _close(bs, js)
    _close(
        bss.logsumexp(np.full(3, -np.inf, F32)), jss.logsumexp(np.full(3, -np.inf, F32))
    )
    _close(
        bt.grad(lambda v: bss.logsumexp(v, b=np.abs(b)))(a),
        jax.grad(lambda v: jss.logsumexp(v, b=np.abs(b)))(a),
    )


INITS = [
    ("normal", ()),
    ("uniform", ()),
    ("truncated_normal", ()),
    ("glorot_normal", ()),
    ("glorot_uniform", ()),
    ("lecun_normal", ()),
    ("lecun_uniform", ()),
    ("he_normal", ()),
    ("he_uniform", ()),
    ("xavier_uniform", ()),
    ("kaiming_normal", ()),
]


@pytest.mark.parametrize("name,args", INITS, ids=[n for n, _ in INITS])
def test_initializers_same_parameters(name, args):
    br = pytest.importorskip("baton.random")
    bi = getattr(bt.nn.initializers, name)(*args)
    ji = getattr(jax.nn.initializers, name)(*args)
    for seed, shape in ((0, (5, 7)), (3, (3, 3, 4, 8))):
        b = bi(br.PRNGKey(seed), shape)
        j = ji(jax.random.PRNGKey(seed), shape)
        assert b.shape == j.shape and b.dtype == j.dtype
        _close(b, j, rtol=1e-6, atol=1e-7)


def test_constant_initializers_and_variance_scaling():
    br = pytest.importorskip("baton.random")
    k, jk = br.PRNGKey(0), jax.random.PRNGKey(0)
    _close(bt.nn.initializers.zeros(k, (2, 3)), jax.nn.initializers.zeros(jk, (2, 3)))
    _close(bt.nn.initializers.ones(k, (4,)), jax.nn.initializers.ones(jk, (4,)))
    _close(
        bt.nn.initializers.constant(-2.0)(k, (3,)),
        jax.nn.initializers.constant(-2.0)(jk, (3,)),
    )
    for mode in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        for dist in ("truncated_normal", "normal", "uniform"):
            b = bt.nn.initializers.variance_scaling(0.7, mode, dist, in_axis=(0, 1))(
                k, (2, 3, 8)
            )
            j = jax.nn.initializers.variance_scaling(0.7, mode, dist, in_axis=(0, 1))(
                jk, (2, 3, 8)
            )
            _close(b, j, rtol=1e-6, atol=1e-7)


def test_eval_shape_matches():
    def f(x, y):
        return {"p": x @ y, "t": (x.sum(0), y.T), "w": x * 2.0}

    args = (np.ones((2, 3), F32), np.ones((3, 5), F32))
    b = bt.eval_shape(f, *args)
    j = jax.eval_shape(f, *args)
    bl, jl = bt.tree.leaves(b), jax.tree.leaves(j)
    assert [(x.shape, x.dtype) for x in bl] == [(x.shape, x.dtype) for x in jl]
    sb = bt.eval_shape(
        f, bt.ShapeDtypeStruct((2, 3), F32), bt.ShapeDtypeStruct((3, 5), F32)
    )
    assert bt.tree.leaves(sb) == bl


@pytest.mark.cpu_default_device
def test_device_surface():
    assert bt.default_backend() == jax.default_backend() == "cpu"
    assert bt.device_count() == len(bt.local_devices()) >= 1
    x, jx = bnp.ones(3), jnp.ones(3)
    assert x.devices() == {x.device} and len(jx.devices()) == 1
    assert x.sharding.device_set == {x.device}
    assert x.sharding.memory_kind == jx.sharding.memory_kind == "device"


MISTAKES = [
    ("bool", lambda L: L.api.jit(lambda v: 1 if v > 0 else 0), (TypeError,)),
    ("int", lambda L: L.api.jit(lambda v: int(v)), (TypeError,)),
    ("index", lambda L: L.api.jit(lambda v: [1, 2][v.astype("int32")]), (TypeError,)),
    (
        "mask",
        lambda L: L.api.jit(lambda v: L.np.arange(3.0)[L.np.arange(3.0) > v]),
        (IndexError,),
    ),
    (
        "dot",
        lambda L: lambda v: L.np.dot(L.np.ones((2, 3)), L.np.ones((2, 3))),
        (TypeError,),
    ),
    ("matmul", lambda L: lambda v: L.np.ones((2, 3)) @ L.np.ones((2, 3)), (TypeError,)),
    (
        "traced@",
        lambda L: L.api.jit(lambda v: L.np.ones((2, 3)) * v @ L.np.ones((2, 3))),
        (TypeError,),
    ),
    (
        "einsum",
        lambda L: lambda v: L.np.einsum("ij,jk", L.np.ones((2, 3)), L.np.ones((2, 3))),
        (ValueError,),
    ),
]


class _Lib:
    def __init__(self, api, np_):
        self.api, self.np = api, np_


@pytest.mark.parametrize("what,make,classes", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_same_exception_classes(what, make, classes):
    names = {
        "bool": "TracerBoolConversionError",
        "int": "ConcretizationTypeError",
        "index": "TracerIntegerConversionError",
        "mask": "NonConcreteBooleanIndexError",
    }
    for lib, errors in ((_Lib(bt, bnp), bt.errors), (_Lib(jax, jnp), jax.errors)):
        with pytest.raises(classes) as e:
            make(lib)(np.float32(1.0))
        if what in names:
            assert isinstance(e.value, getattr(errors, names[what])), (lib.api, e.value)


@pytest.mark.parametrize(
    "dtype, value",
    [
        ("float32", -175.5616),
        ("float16", 0.1),
        ("bfloat16", 1.5),
        ("int32", 3),
        ("bool", True),
        ("complex64", 1 + 2j),
    ],
)
def test_format_empty_spec_as_jax(dtype, value):
    """`"{}".format(x)` of a 0-d array is its numpy scalar's format, as in JAX
    (a float32 writes its float64 repr: "-175.5615997314453"; programs
    such as the vmapped_log_probs notebook print their losses this way); an
    n-d array formats as its str; a spec formats the value."""
    b, j = bnp.array(value, dtype), jnp.array(value, dtype)
    assert "{}".format(b) == "{}".format(j)  # noqa: UP032 -- str.format itself
    assert f"{b}|{b!s}" == f"{j}|{j!s}"
    assert "{}".format(bnp.stack([b, b])) == "{}".format(jnp.stack([j, j]))  # noqa: UP032
    if dtype != "bool":
        assert f"{b:.3f}" == f"{j:.3f}"
