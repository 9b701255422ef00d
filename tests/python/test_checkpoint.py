"""bt.checkpoint / bt.remat with bt.checkpoint_policies,
bt.ad_checkpoint.checkpoint_name and bt.saved_residuals: same values and
derivatives as without checkpointing, fewer saved residuals, policies that
save what they say, offloading to pinned_host, and the markers the
transformations see in the traced program."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton import _subtrace
from baton.ad_checkpoint import checkpoint_name

P = bt.checkpoint_policies
RNG = np.random.default_rng(1)
W = RNG.standard_normal((4, 4)).astype(np.float32)
X = RNG.standard_normal((2, 4)).astype(np.float32)


def layer(w, x):
    h = bnp.tanh(x @ w)
    h = checkpoint_name(h, "h")
    return bnp.sin(h @ w)


def loss(w, x):
    return bnp.sum(layer(w, x))


def ckpt_loss(policy=None):
    def f(w, x):
        return bnp.sum(bt.checkpoint(layer, policy=policy)(w, x))

    return f


def whats(residuals):
    return sorted(r[2] for r in residuals)


POLICIES = [
    None,
    P.nothing_saveable,
    P.everything_saveable,
    P.dots_saveable,
    P.dots_with_no_batch_dims_saveable,
    P.save_only_these_names("h"),
    P.offload_dot_with_no_batch_dims("device", "pinned_host"),
]


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_checkpoint_gives_the_same_gradient(policy, mode):
    g = bt.grad(ckpt_loss(policy), argnums=(0, 1))
    expected = bt.grad(loss, argnums=(0, 1))(W, X)
    if mode == "jit":
        g = bt.jit(g)
    got = g(W, X)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_checkpoint_value_and_eager_call():
    np.testing.assert_allclose(
        np.asarray(bt.checkpoint(layer)(W, X)), np.asarray(layer(W, X)), rtol=1e-6
    )
    assert bt.remat is bt.checkpoint


def test_saved_residuals_without_checkpoint():
    res = bt.saved_residuals(loss, W, X)
    assert whats(res) == sorted(
        [
            "argument 0",
            "argument 1",
            "output of dot_general",
            "output of tanh named 'h'",
        ]
    )
    for shape, dtype, _ in res:
        assert dtype == np.float32 and shape in ((4, 4), (2, 4))


def test_nothing_saveable_keeps_only_the_arguments():
    assert whats(bt.saved_residuals(ckpt_loss(), W, X)) == ["argument 0", "argument 1"]
    assert whats(bt.saved_residuals(ckpt_loss(P.nothing_saveable), W, X)) == [
        "argument 0",
        "argument 1",
    ]


def test_policies_save_what_they_say():
    dots = whats(bt.saved_residuals(ckpt_loss(P.dots_saveable), W, X))
    assert dots.count("output of dot_general") == 2
    assert not any("tanh" in w for w in dots)
    named = whats(bt.saved_residuals(ckpt_loss(P.save_only_these_names("h")), W, X))
    assert named == sorted(["argument 0", "argument 1", "output of tanh named 'h'"])
    other = whats(bt.saved_residuals(ckpt_loss(P.save_only_these_names("zz")), W, X))
    assert other == ["argument 0", "argument 1"]
    everything = whats(bt.saved_residuals(ckpt_loss(P.everything_saveable), W, X))
    assert everything == whats(bt.saved_residuals(loss, W, X))


def test_batched_dots_are_not_saved_by_no_batch_dims_policy():
    def bl(w, x):  # a dot_general with a batch dimension
        return bnp.sum(bnp.sin(bnp.einsum("bij,bjk->bik", x, w)))

    w3 = np.ones((2, 3, 3), np.float32)
    x3 = np.ones((2, 3, 3), np.float32)
    f = lambda w, x: bt.checkpoint(bl, policy=P.dots_with_no_batch_dims_saveable)(w, x)  # noqa: E731
    assert whats(bt.saved_residuals(f, w3, x3)) == ["argument 0", "argument 1"]
    g = lambda w, x: bt.checkpoint(bl, policy=P.dots_saveable)(w, x)  # noqa: E731
    assert "output of dot_general" in whats(bt.saved_residuals(g, w3, x3))


def test_offload_policy_moves_residuals_to_pinned_host():
    f = ckpt_loss(P.offload_dot_with_no_batch_dims("device", "pinned_host"))
    text = bt.jit(bt.grad(f)).lower(W, X).compile().as_text()
    assert "memory_kind=pinned_host" in text
    assert "memory_kind=device" in text  # and back for the backward pass


def test_checkpoint_static_argnums_and_pytrees():
    def f(p, n):
        y = p["x"]
        for _ in range(n):  # n is a Python int: static
            y = bnp.sin(y)
        return {"y": y}

    c = bt.checkpoint(f, static_argnums=(1,))
    g = bt.grad(lambda x: bnp.sum(c({"x": x}, 2)["y"]))(X)
    expected = np.cos(np.sin(X)) * np.cos(X)
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-5)


def test_checkpoint_closure_over_outer_tracer():
    @bt.jit
    def f(w, x):
        return bt.grad(lambda x: bnp.sum(bt.checkpoint(lambda x: bnp.tanh(x @ w))(x)))(
            x
        )

    expected = bt.grad(lambda x: bnp.sum(bnp.tanh(x @ W)))(X)
    np.testing.assert_allclose(np.asarray(f(W, X)), np.asarray(expected), rtol=1e-5)


def test_checkpoint_under_vmap_and_grad_of_grad():
    per_ex = bt.vmap(bt.grad(lambda x: bnp.sum(bt.checkpoint(bnp.sin)(x))))(X)
    np.testing.assert_allclose(np.asarray(per_ex), np.cos(X), rtol=1e-6)
    g2 = bt.grad(bt.grad(bt.checkpoint(lambda x: x**3)))(2.0)
    assert float(g2) == pytest.approx(12.0)


def test_custom_policy_functions_are_not_supported():
    with pytest.raises(NotImplementedError, match="checkpoint_policies"):
        bt.checkpoint(layer, policy=lambda *a, **k: True)
    with pytest.raises(NotImplementedError):
        P.save_anything_except_these_names("h")


def test_offload_policy_validates_memory_kinds():
    with pytest.raises(ValueError, match="memory kind"):
        P.offload_dot_with_no_batch_dims("device", "disk")


def test_checkpoint_name_is_identity_eagerly_and_in_value():
    assert checkpoint_name(X, "a") is X
    np.testing.assert_allclose(
        np.asarray(bt.jit(lambda x: checkpoint_name(x * 2, "a"))(X)), X * 2
    )
    with pytest.raises(TypeError, match="name"):
        checkpoint_name(X, 3)


def test_markers_appear_in_the_traced_program():
    def fn(x):
        y = bt.lax.stop_gradient(x)
        z = checkpoint_name(y * 2, "hidden")
        return [bt.checkpoint(bnp.sin)(z)]

    t = _subtrace.trace(fn, [((3,), "float32", False, None)], "fn")
    text = t.program.as_text()
    assert "kind=stop_gradient" in text
    assert 'kind=checkpoint_name, name="hidden"' in text
    assert "kind=checkpoint," in text


def test_saved_residuals_of_closed_over_array():
    w = bt.device_put(W)
    res = bt.saved_residuals(lambda x: bnp.sum(bnp.tanh(x @ w)), X)
    assert "a closed-over array" in whats(res)
