"""checkpoint / remat with every policy, baton against JAX: the gradients
do not depend on what is saved, so they must equal JAX's whatever the
policy; and `saved_residuals` lists what each policy says (shapes and
dtypes, compared with JAX's `jax.ad_checkpoint.print_saved_residuals`'s
source, `saved_residuals`)."""

from __future__ import annotations

import numpy as np
import pytest
from _jaxcompat import BATON, JAX, SELF_CHECK, rng_floats, run_both

W1 = rng_floats(1, (6, 8))
W2 = rng_floats(2, (8, 8))
W3 = rng_floats(3, (8, 3))
X = rng_floats(4, (5, 6))


def _policy(L, name):
    cp = L.api.checkpoint_policies
    return {
        "none": None,
        "everything_saveable": cp.everything_saveable,
        "nothing_saveable": cp.nothing_saveable,
        "dots_saveable": cp.dots_saveable,
        "dots_with_no_batch_dims_saveable": cp.dots_with_no_batch_dims_saveable,
        "save_only_these_names": cp.save_only_these_names("hidden"),
        "offload_dot_with_no_batch_dims": cp.offload_dot_with_no_batch_dims(
            "device", "pinned_host"
        ),
    }[name]


def _net(L):
    np_ = L.np
    name = L.api.ad_checkpoint.checkpoint_name

    def net(w1, w2, w3, x):
        h = np_.sin(x @ w1)
        h = name(np_.tanh(h @ w2), "hidden")
        return np_.sum(np_.tanh(h @ w3) ** 2)

    return net


POLICIES = [
    "none",
    "everything_saveable",
    "nothing_saveable",
    "dots_saveable",
    "dots_with_no_batch_dims_saveable",
    "save_only_these_names",
    "offload_dot_with_no_batch_dims",
]


@pytest.mark.parametrize("policy", POLICIES)
def test_checkpoint_gradients_equal_jax(policy):
    def build(L):
        f = L.api.checkpoint(_net(L), policy=_policy(L, policy))
        return lambda: (
            L.api.value_and_grad(f, argnums=(0, 1, 2))(W1, W2, W3, X),
            L.api.jit(L.api.grad(f, argnums=(0, 1, 2)))(W1, W2, W3, X),
        )

    run_both(build)


def test_remat_alias_nested_and_static_argnums():
    def build(L):
        api = L.api

        def layer(x, w, n):
            for _ in range(n):  # n is static: a Python int
                x = L.np.tanh(x @ w)
            return x

        inner = api.remat(layer, static_argnums=(2,))

        def loss(w, x):
            return L.np.sum(api.checkpoint(lambda x: inner(x, w, 3))(x) ** 2)

        return lambda: (
            api.grad(loss)(W2, X @ W1),
            api.grad(api.grad(lambda s: loss(W2 * s, X @ W1)))(1.0),
        )

    run_both(build)


def test_checkpoint_under_vmap():
    def build(L):
        f = L.api.checkpoint(lambda x: L.np.sum(L.np.sin(x @ W2) ** 2))
        return lambda: L.api.vmap(L.api.grad(f))(X @ W1)

    run_both(build)


def _shapes(residuals):
    """The multiset of (shape, dtype) of a saved_residuals list."""
    return sorted((tuple(s), str(np.dtype(d))) for s, d, *_ in residuals)


@pytest.mark.parametrize(
    "policy",
    ["nothing_saveable", "dots_saveable", "save_only_these_names"],
)
def test_saved_residuals_shapes_match_jax(policy):
    """What each policy saves, as shapes and dtypes: JAX's saved_residuals
    lists (aval, description) pairs; baton's (shape, dtype, what)."""
    from jax._src.ad_checkpoint import saved_residuals as jax_saved_residuals

    if SELF_CHECK:
        pytest.skip("bt.saved_residuals has no public JAX twin")

    jf = JAX.api.checkpoint(_net(JAX), policy=_policy(JAX, policy))
    jres = [(a.shape, a.dtype, w) for a, w in jax_saved_residuals(jf, W1, W2, W3, X)]
    bf = BATON.api.checkpoint(_net(BATON), policy=_policy(BATON, policy))
    bres = BATON.api.saved_residuals(bf, W1, W2, W3, X)
    assert _shapes(bres) == _shapes(jres), (bres, jres)
