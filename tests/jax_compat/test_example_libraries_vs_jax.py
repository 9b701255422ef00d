# ruff: noqa: E741 -- O: an optimizers module, as S is a stax one
"""baton.example_libraries (stax, optimizers) against
jax.example_libraries: the same PRNG keys give the same initial parameters,
layers give the same outputs, and a few training steps of each optimizer
give the same parameters."""

from __future__ import annotations

import numpy as np
import pytest
from _jaxcompat import BATON, JAX, assert_same, rng_floats

jex = pytest.importorskip("jax.example_libraries")
from jax.example_libraries import optimizers as jopt  # noqa: E402
from jax.example_libraries import stax as jstax  # noqa: E402

from baton.example_libraries import optimizers as bopt  # noqa: E402
from baton.example_libraries import stax as bstax  # noqa: E402

SIDES = ((BATON, bstax, bopt), (JAX, jstax, jopt))
X = rng_floats(0, (6, 5), -1, 1)
Y = np.eye(3, dtype=np.float32)[np.arange(6) % 3]


def _both(fn):
    """fn(L, stax, optimizers) for baton and JAX, compared."""
    b, j = (fn(*side) for side in SIDES)
    assert_same(b, j, rtol=2e-5, atol=2e-6)
    return b, j


def test_serial_dense_init_and_apply():
    def run(L, S, _):
        init, apply = S.serial(S.Dense(8), S.Relu, S.Dense(3), S.LogSoftmax)
        shape, params = init(L.api.random.PRNGKey(0), (-1, 5))
        return shape, params, apply(params, X)

    b, j = _both(run)
    assert b[0] == j[0] == (-1, 3)


@pytest.mark.parametrize(
    "layer",
    [
        "Tanh",
        "Relu",
        "Exp",
        "LogSoftmax",
        "Softmax",
        "Softplus",
        "Sigmoid",
        "Elu",
        "LeakyRelu",
        "Selu",
        "Gelu",
        "Identity",
        "Flatten",
    ],
)
def test_parameterless_layers(layer):
    def run(L, S, _):
        init, apply = getattr(S, layer)
        shape, params = init(L.api.random.PRNGKey(0), X.shape)
        return shape, params, apply(params, X)

    _both(run)


def test_routing_layers_and_combinators():
    def run(L, S, _):
        init, apply = S.serial(
            S.FanOut(3),
            S.parallel(S.Dense(4), S.serial(S.Dense(4), S.Tanh), S.Identity),
            S.parallel(S.Identity, S.Identity, S.Dense(4)),
            S.FanInSum,
        )
        shape, params = init(L.api.random.PRNGKey(3), (-1, 5))
        init2, apply2 = S.serial(
            S.FanOut(2), S.parallel(S.Dense(2), S.Dense(7)), S.FanInConcat(axis=-1)
        )
        shape2, params2 = init2(L.api.random.PRNGKey(4), (-1, 5))
        dep = S.shape_dependent(lambda s: S.Dense(s[-1] * 2))
        shape3, params3 = dep[0](L.api.random.PRNGKey(5), (6, 5))
        return (
            shape,
            params,
            apply(params, X),
            shape2,
            params2,
            apply2(params2, X),
            shape3,
            params3,
            dep[1](params3, X),
        )

    _both(run)


def test_dropout_and_batchnorm():
    def run(L, S, _):
        k = L.api.random.PRNGKey(7)
        d_init, d_apply = S.Dropout(0.75)
        _, dp = d_init(k, X.shape)
        _, e_apply = S.Dropout(0.75, mode="test")
        bn_init, bn_apply = S.BatchNorm(axis=(0,))
        shape, bp = bn_init(k, X.shape)
        x4 = X.reshape(6, 5, 1, 1)
        bn2_init, bn2_apply = S.BatchNorm(center=False)
        _, bp2 = bn2_init(k, x4.shape)
        return (
            d_apply(dp, X, rng=k),
            e_apply((), X, rng=k),
            shape,
            bp,
            bn_apply(bp, X),
            bn2_apply(bp2, x4),
        )

    _both(run)
    with pytest.raises(ValueError, match="PRNG key"):
        bstax.Dropout(0.5)[1]((), X)


def _train(L, S, O, make_opt, steps=5, jit=True):
    """A small classifier trained for a few steps; its parameters and
    losses. (sm3's state holds the parameters' shapes as ints, which jit
    would trace: JAX's cannot be jitted either.)"""
    init, apply = S.serial(S.Dense(7), S.Tanh, S.Dense(3), S.LogSoftmax)
    _, params = init(L.api.random.PRNGKey(1), (-1, 5))
    opt_init, opt_update, get_params = make_opt(O)

    def loss(p):
        return -L.np.mean(L.np.sum(apply(p, X) * Y, axis=1))

    def step(i, state):
        value, g = L.api.value_and_grad(loss)(get_params(state))
        return value, opt_update(i, g, state)

    if jit:
        step = L.api.jit(step)

    state = opt_init(params)
    values = []
    for i in range(steps):
        value, state = step(i, state)
        values.append(value)
    return values, get_params(state)


OPTIMIZERS = {
    "sgd": lambda O: O.sgd(0.1),
    "momentum": lambda O: O.momentum(0.1, 0.9),
    "nesterov": lambda O: O.nesterov(0.1, 0.9),
    "adagrad": lambda O: O.adagrad(0.1),
    "rmsprop": lambda O: O.rmsprop(0.01),
    "rmsprop_momentum": lambda O: O.rmsprop_momentum(0.01),
    "adam": lambda O: O.adam(0.01),
    "adamax": lambda O: O.adamax(0.01),
    "sm3": lambda O: O.sm3(0.1),
    "sgd_exponential_decay": lambda O: O.sgd(O.exponential_decay(0.1, 2, 0.5)),
    "momentum_inverse_time": lambda O: O.momentum(
        O.inverse_time_decay(0.1, 2, 0.5), 0.9
    ),
    "adam_inverse_time_staircase": lambda O: O.adam(
        O.inverse_time_decay(0.01, 2, 0.5, staircase=True)
    ),
    "sgd_polynomial_decay": lambda O: O.sgd(O.polynomial_decay(0.1, 3, 0.01, 2.0)),
    "sgd_piecewise_constant": lambda O: O.sgd(
        O.piecewise_constant([1, 3], [0.1, 0.05, 0.01])
    ),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_training_matches_jax(name):
    def run(L, S, O):
        return _train(L, S, O, OPTIMIZERS[name], jit=name != "sm3")

    b, j = (run(*side) for side in SIDES)
    # Adaptive steps divide by small running averages: float32 rounding of
    # the gradients is amplified a little.
    assert_same(b, j, rtol=1e-4, atol=2e-5)


def test_schedules_values():
    def run(L, S, O):
        fs = [
            O.constant(0.5),
            O.exponential_decay(1.0, 3, 0.5),
            O.inverse_time_decay(1.0, 2, 0.5),
            O.inverse_time_decay(1.0, 2, 0.5, True),
            O.polynomial_decay(1.0, 4, 0.1, 2.0),
            O.piecewise_constant([2, 4], [1.0, 0.5, 0.25]),
        ]
        return [[L.np.asarray(f(i), L.np.float32) for i in range(6)] for f in fs]

    _both(run)
    for O in (bopt, jopt):
        with pytest.raises(ValueError):
            O.piecewise_constant([1, 2], [1.0])
        assert O.make_schedule(0.3)(7) == 0.3
        with pytest.raises(TypeError):
            O.make_schedule([0.1, 0.2])


def test_clip_grads_l2_norm_and_state_packing():
    def run(L, S, O):
        g = {"a": L.np.asarray(X), "b": (L.np.ones(3), L.np.arange(4.0))}
        init, update, get = O.momentum(0.1, 0.9)
        state = update(0, g, init(g))
        unpacked = O.unpack_optimizer_state(state)
        repacked = O.pack_optimizer_state(unpacked)
        flat = L.api.tree_util.tree_leaves(unpacked)
        return (
            O.l2_norm(g),
            O.clip_grads(g, 1.0),
            O.clip_grads(g, 100.0),
            get(repacked),
            len(flat),
            type(flat[0]).__name__,
            isinstance(state, O.OptimizerState),
        )

    b, j = (run(*side) for side in SIDES)
    assert b[4:] == j[4:]
    assert_same(b[:4], j[:4])


def test_optimizer_state_is_a_pytree_and_optimizer_a_triple():
    init, update, _ = bopt.adam(1e-3)
    assert isinstance(bopt.adam(1e-3), bopt.Optimizer)
    state = init({"w": np.ones(3, np.float32)})
    leaves = BATON.api.tree_util.tree_leaves(state)
    assert len(leaves) == 3  # x, m, v
    with pytest.raises(TypeError, match="gradient tree"):
        update(0, [np.ones(3, np.float32)], state)


IMAGES = rng_floats(1, (2, 9, 8, 3), -1, 1)


CONV_POOL_LAYERS = {
    "conv": lambda S: S.Conv(4, (3, 3)),
    "conv_strided_same": lambda S: S.Conv(4, (3, 2), strides=(2, 1), padding="SAME"),
    "general_conv_nchw": lambda S: S.GeneralConv(
        ("NCHW", "OIHW", "NCHW"), 5, (2, 3), padding="SAME"
    ),
    "conv_transpose": lambda S: S.ConvTranspose(
        4, (3, 3), strides=(2, 2), padding="SAME"
    ),
    "max_pool": lambda S: S.MaxPool((2, 2), strides=(2, 2)),
    "max_pool_same": lambda S: S.MaxPool((3, 3), strides=(2, 2), padding="SAME"),
    "sum_pool": lambda S: S.SumPool((2, 3), padding="SAME"),
    "avg_pool": lambda S: S.AvgPool((3, 3), strides=(2, 2), padding="SAME"),
    "avg_pool_nchw": lambda S: S.AvgPool((2, 2), spec="NCHW"),
}


@pytest.mark.parametrize("name", sorted(CONV_POOL_LAYERS))
def test_conv_and_pooling_layers(name):
    # The same key gives the same parameters; NCHW layers see the images
    # transposed.
    x = np.transpose(IMAGES, (0, 3, 1, 2)) if name.endswith("nchw") else IMAGES

    def run(L, S, _):
        init, apply = CONV_POOL_LAYERS[name](S)
        shape, params = init(L.api.random.PRNGKey(3), x.shape)
        out = apply(params, x)
        assert tuple(out.shape) == tuple(shape)
        return shape, params, out

    _both(run)


def test_conv1d_transpose_and_a_small_cnn_trains_like_jax():
    x1 = rng_floats(2, (2, 7, 3), -1, 1)

    def run1(L, S, _):
        init, apply = S.Conv1DTranspose(2, (3,), strides=(2,), padding="VALID")
        shape, params = init(L.api.random.PRNGKey(1), x1.shape)
        return shape, params, apply(params, x1)

    _both(run1)

    labels = np.eye(3, dtype=np.float32)[np.arange(2) % 3]

    def run2(L, S, O):
        init, apply = S.serial(
            S.Conv(4, (3, 3), padding="SAME"),
            S.Relu,
            S.MaxPool((2, 2), strides=(2, 2)),
            S.Conv(3, (2, 2)),
            S.AvgPool((2, 2)),
            S.Flatten,
            S.Dense(3),
            S.LogSoftmax,
        )
        _, params = init(L.api.random.PRNGKey(0), IMAGES.shape)

        def loss(p):
            return -L.np.mean(L.np.sum(apply(p, IMAGES) * labels, axis=-1))

        opt_init, opt_update, get_params = O.sgd(0.1)
        state = opt_init(params)
        step = L.api.jit(lambda i, s: opt_update(i, L.api.grad(loss)(get_params(s)), s))
        for i in range(3):
            state = step(i, state)
        return loss(get_params(state)), get_params(state)

    _both(run2)
