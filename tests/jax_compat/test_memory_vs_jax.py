"""Acceptance 2's comparison with JAX: the 4-layer MLP training step
`jit(value_and_grad(loss))` + SGD with donated params compiles to no more
temporary bytes in baton than in XLA (`memory_analysis()` of both), and
aliases every parameter byte in both."""

from __future__ import annotations

import numpy as np
import pytest
from _jaxcompat import BATON, JAX, SELF_CHECK

BATCH = 64
DIMS = (256, 512, 512, 512, 128)
ACT_BATCH, ACT_DIMS = 1024, (64, 128, 128, 128, 16)  # activations dominate
LR = 0.01


def _model(dims, batch):
    rng = np.random.default_rng(0)
    params = [
        (
            (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
            (0.1 * rng.standard_normal(n)).astype(np.float32),
        )
        for m, n in zip(dims[:-1], dims[1:])
    ]
    x = rng.standard_normal((batch, dims[0])).astype(np.float32)
    y = np.eye(dims[-1], dtype=np.float32)[rng.integers(0, dims[-1], batch)]
    return params, (x, y)


def _step(L, policy=None):
    np_ = L.np

    def loss(params, batch):
        x, y = batch
        h = x
        for w, b in params[:-1]:
            h = np_.tanh(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        m = L.lax.stop_gradient(np_.max(logits, axis=1, keepdims=True))
        logp = logits - m - np_.log(np_.sum(np_.exp(logits - m), axis=1, keepdims=True))
        return -np_.mean(np_.sum(logp * y, axis=1))

    if policy is not None:
        loss = L.api.checkpoint(loss, policy=policy(L.api.checkpoint_policies))

    def step(params, batch):
        value, grads = L.api.value_and_grad(loss)(params, batch)
        return value, [
            (w - LR * dw, b - LR * db) for (w, b), (dw, db) in zip(params, grads)
        ]

    return step


def _analysis(L, dims, batch, policy=None):
    params, data = _model(dims, batch)
    if L is JAX:
        params, data = JAX.api.device_put((params, data))
    f = L.api.jit(_step(L, policy), donate_argnums=0)
    return f.lower(params, data).compile().memory_analysis()


@pytest.mark.parametrize(
    "model,policy",
    [
        ("weights", None),
        ("activations", None),
        ("activations", lambda cp: cp.nothing_saveable),
        ("activations", lambda cp: cp.dots_saveable),
    ],
    ids=[
        "weights",
        "activations",
        "activations_nothing_saveable",
        "activations_dots_saveable",
    ],
)
def test_mlp_step_temp_bytes_no_more_than_jax(model, policy):
    if SELF_CHECK:
        pytest.skip("compares baton's figures with JAX's")
    dims, batch = (DIMS, BATCH) if model == "weights" else (ACT_DIMS, ACT_BATCH)
    b = _analysis(BATON, dims, batch, policy)
    j = _analysis(JAX, dims, batch, policy)
    param_bytes = sum(4 * (m * n + n) for m, n in zip(dims[:-1], dims[1:]))
    assert b.alias_size_in_bytes == param_bytes
    assert j.alias_size_in_bytes == param_bytes
    assert b.temp_size_in_bytes <= j.temp_size_in_bytes, (
        f"baton temp {b.temp_size_in_bytes} > JAX temp {j.temp_size_in_bytes}"
    )
