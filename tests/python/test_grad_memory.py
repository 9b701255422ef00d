"""Memory of gradients (issue 9, acceptance 2 and 3), from baton's own
figures: memory_analysis() of the compiled step, saved_residuals(), and
memory_stats() of the device and pinned_host memory kinds.

The model is a 4-layer tanh MLP; a training step is jit(value_and_grad(loss))
followed by SGD, with the parameters donated. Comparisons against JAX's
compiled temp bytes are in tests/jax_compat/test_memory_vs_jax.py.
"""

import gc

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

from _util import in_use

BATCH = 64
DIMS = (256, 512, 512, 512, 128)  # 4 layers; the weights dominate memory
# For the checkpoint tests: activations dominate (a large batch, narrow
# layers), so that what a policy saves shows in the temp bytes.
ACT_BATCH = 1024
ACT_DIMS = (64, 128, 128, 128, 16)
LR = 0.01
ROUNDING = 4096  # bytes_in_use may round each buffer up to 4 KiB (DESIGN 3)


def host_params(seed=0, dims=DIMS):
    rng = np.random.default_rng(seed)
    return [
        (
            (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
            (0.1 * rng.standard_normal(n)).astype(np.float32),
        )
        for m, n in zip(dims[:-1], dims[1:])
    ]


def host_batch(seed=1, dims=DIMS, batch=BATCH):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, dims[0])).astype(np.float32)
    y = np.eye(dims[-1], dtype=np.float32)[rng.integers(0, dims[-1], batch)]
    return x, y


def act_model():
    """(params, batch) of the activation-heavy MLP, host arrays."""
    return host_params(dims=ACT_DIMS), host_batch(dims=ACT_DIMS, batch=ACT_BATCH)


def loss(params, batch):
    x, y = batch
    h = x
    for w, b in params[:-1]:
        h = bnp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    m = bt.lax.stop_gradient(bnp.max(logits, axis=1, keepdims=True))
    logp = logits - m - bnp.log(bnp.sum(bnp.exp(logits - m), axis=1, keepdims=True))
    return -bnp.mean(bnp.sum(logp * y, axis=1))


def train_step(params, batch, loss_fn=loss):
    value, grads = bt.value_and_grad(loss_fn)(params, batch)
    new = [(w - LR * dw, b - LR * db) for (w, b), (dw, db) in zip(params, grads)]
    return value, new


def nbytes_of(tree):
    return sum(
        int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize for x in bt.tree.leaves(tree)
    )


PARAM_BYTES = nbytes_of(host_params())
BATCH_BYTES = nbytes_of(host_batch())


def residual_bytes(residuals, keep=lambda what: True):
    return sum(
        int(np.prod(shape)) * np.dtype(dtype).itemsize
        for shape, dtype, what in residuals
        if keep(what)
    )


def largest_backward_temporaries(dims=DIMS, batch=BATCH):
    """The most a layer's backward pass holds besides residuals and the
    gradients it has finished: the cotangents of its output and input
    (batch x out, batch x in) and its weight and bias gradients, for the
    largest layer."""
    return max(
        4 * (batch * n + batch * m + m * n + n) for m, n in zip(dims[:-1], dims[1:])
    )


def compiled(fn, *args, donate=(0,)):
    return bt.jit(fn, donate_argnums=donate).lower(*args).compile()


def test_mlp_step_aliases_every_param_byte():
    params, batch = host_params(), host_batch()
    ma = compiled(train_step, params, batch).memory_analysis()
    assert ma.alias_size_in_bytes == PARAM_BYTES
    # jit(value_and_grad(loss)) alone: the gradients take the params' buffers.
    ma = compiled(bt.value_and_grad(loss), params, batch).memory_analysis()
    assert ma.alias_size_in_bytes == PARAM_BYTES


def test_mlp_step_temp_bytes_within_residuals_plus_backward_temporaries():
    """Acceptance 2 as worded: temp <= the residual bytes saved_residuals
    reports (arguments included) + the largest backward temporaries."""
    params, batch = host_params(), host_batch()
    residuals = bt.saved_residuals(loss, params, batch)
    # Each hidden layer's activations (BATCH x width) are among them.
    shapes = [tuple(s) for s, _, _ in residuals]
    for width in DIMS[1:-1]:
        assert (BATCH, width) in shapes, residuals
    ma = compiled(train_step, params, batch).memory_analysis()
    bound = residual_bytes(residuals) + largest_backward_temporaries()
    assert ma.temp_size_in_bytes <= bound, (ma, residuals)


def test_mlp_step_temp_bytes_without_counting_arguments_twice():
    """The same bound with only the residuals that are not arguments (the
    arguments are argument bytes already): the gradients must not all be
    alive at once as temporaries, each is consumed by its SGD update (in
    the donated parameter's buffer) once the backward pass is past it."""
    params, batch = host_params(), host_batch()
    residuals = bt.saved_residuals(loss, params, batch)
    intermediate = residual_bytes(residuals, lambda w: not w.startswith("argument"))
    ma = compiled(train_step, params, batch).memory_analysis()
    bound = intermediate + largest_backward_temporaries()
    assert ma.temp_size_in_bytes <= bound, (
        f"temp {ma.temp_size_in_bytes} > intermediate residuals {intermediate} "
        f"+ largest backward temporaries {largest_backward_temporaries()} "
        f"(all gradients: {PARAM_BYTES})"
    )


def test_bytes_in_use_after_five_steps_is_params_plus_batch():
    # Earlier tests' jitted functions caught in reference cycles hold
    # constants until the cyclic collector runs; collect them now, not
    # between `before` and `after`.
    gc.collect()
    params = bt.device_put(host_params())
    batch = bt.device_put(host_batch())
    bt.block_until_ready((params, batch))
    before = in_use()
    n_buffers = len(bt.tree.leaves((params, batch)))
    assert (
        PARAM_BYTES + BATCH_BYTES
        <= before
        <= PARAM_BYTES + BATCH_BYTES + n_buffers * ROUNDING
    )
    step = bt.jit(train_step, donate_argnums=0)
    constants = (
        step.lower(params, batch).compile().memory_analysis().constant_size_in_bytes
    )
    values, after = [], []
    for _ in range(5):
        value, params = step(params, batch)
        values.append(float(value))
        del value
        bt.block_until_ready(params)
        after.append(in_use())
    # Steady from the first step; above params + batch by at most the step's
    # own constants (held by its executable, device memory, rounded).
    assert after == [after[0]] * 5, after
    assert before <= after[-1] <= before + (ROUNDING if constants else 0), (
        before,
        after,
        constants,
    )
    assert values[-1] < values[0]


def test_checkpoint_nothing_saveable_keeps_only_arguments():
    params, batch = act_model()
    plain = bt.saved_residuals(loss, params, batch)
    ckpt = bt.checkpoint(loss, policy=bt.checkpoint_policies.nothing_saveable)
    saved = bt.saved_residuals(ckpt, params, batch)
    assert all(what.startswith("argument") for _, _, what in saved), saved
    assert residual_bytes(saved) <= nbytes_of((params, batch))
    assert residual_bytes(saved) < residual_bytes(plain)


# Residual blocks h + tanh(h @ w1) @ w2 whose hidden layer is 4x wider than
# their input: what checkpointing each block saves (its input) is a quarter
# of what the plain backward pass keeps (input and hidden activations), as in
# the transformer feed-forward blocks checkpoint is made for.
RES_BATCH, RES_D, RES_H, RES_BLOCKS = 512, 64, 256, 4


def res_model(seed=0):
    rng = np.random.default_rng(seed)
    params = [
        (
            (rng.standard_normal((RES_D, RES_H)) / 8).astype(np.float32),
            (rng.standard_normal((RES_H, RES_D)) / 16).astype(np.float32),
        )
        for _ in range(RES_BLOCKS)
    ]
    x = rng.standard_normal((RES_BATCH, RES_D)).astype(np.float32)
    return params, x


def res_block(w, h):
    w1, w2 = w
    return h + bnp.tanh(h @ w1) @ w2


def res_loss(block):
    def loss(params, x):
        h = x
        for w in params:
            h = block(w, h)
        return bnp.mean(h * h)

    return loss


def res_step(loss_fn):
    def step(params, x):
        value, grads = bt.value_and_grad(loss_fn)(params, x)
        return value, bt.tree.map(lambda p, g: p - LR * g, params, grads)

    return step


def test_checkpoint_nothing_saveable_lowers_residual_and_temp_bytes():
    params, x = res_model()
    plain = res_loss(res_block)
    ckpt = res_loss(
        bt.checkpoint(res_block, policy=bt.checkpoint_policies.nothing_saveable)
    )
    not_arg = lambda w: not w.startswith("argument")  # noqa: E731
    r_plain = residual_bytes(bt.saved_residuals(plain, params, x), not_arg)
    r_ckpt = residual_bytes(bt.saved_residuals(ckpt, params, x), not_arg)
    # The policy keeps each block's input only (the first block's is an
    # argument) and the last block's output (h * h reads it); the plain pass
    # also keeps every hidden activation.
    block_in = 4 * RES_BATCH * RES_D
    hidden = 4 * RES_BATCH * RES_H
    assert r_ckpt == RES_BLOCKS * block_in, r_ckpt
    assert r_plain >= RES_BLOCKS * hidden, r_plain
    t_plain = compiled(res_step(plain), params, x).memory_analysis().temp_size_in_bytes
    t_ckpt = compiled(res_step(ckpt), params, x).memory_analysis().temp_size_in_bytes
    # The temporaries shrink by what is no longer kept, less one block's
    # recomputation (its pre-activation and hidden values) done at a time.
    assert t_ckpt < t_plain, (t_ckpt, t_plain)
    assert t_ckpt <= t_plain - (r_plain - r_ckpt) + 2 * hidden, (
        t_ckpt,
        t_plain,
        r_plain,
        r_ckpt,
    )
    # Same values, same training.
    v_plain, _ = bt.jit(res_step(plain))(params, x)
    v_ckpt, _ = bt.jit(res_step(ckpt))(params, x)
    np.testing.assert_allclose(float(v_ckpt), float(v_plain), rtol=1e-6)


def test_checkpoint_dots_saveable_keeps_the_dots():
    params, batch = act_model()
    ckpt = bt.checkpoint(loss, policy=bt.checkpoint_policies.dots_saveable)
    saved = bt.saved_residuals(ckpt, params, batch)
    dots = [s for s in saved if "dot_general" in s[2]]
    others = [s for s in saved if not s[2].startswith("argument") and s not in dots]
    assert sorted(tuple(s) for s, _, _ in dots) == sorted(
        (ACT_BATCH, n) for n in ACT_DIMS[1:]
    )
    assert not others, others


def _offload_policy():
    return bt.checkpoint_policies.offload_dot_with_no_batch_dims(
        "device", "pinned_host"
    )


DOT_BYTES = 4 * ACT_BATCH * sum(ACT_DIMS[1:])  # the dots' outputs, f32


def test_offload_policy_keeps_dot_residuals_in_pinned_host_eager_vjp():
    params, batch = (bt.device_put(t) for t in act_model())
    bt.block_until_ready((params, batch))
    growth = {}
    for name, policy in [
        ("on device", bt.checkpoint_policies.dots_with_no_batch_dims_saveable),
        ("offloaded", _offload_policy()),
    ]:
        f = bt.checkpoint(loss, policy=policy)
        dev0, pin0 = in_use("device"), in_use("pinned_host")
        out, f_vjp = bt.vjp(f, params, batch)
        bt.block_until_ready(out)
        growth[name] = (in_use("device") - dev0, in_use("pinned_host") - pin0)
        grads = f_vjp(bnp.ones((), bnp.float32))
        bt.block_until_ready(grads)
        del grads, out, f_vjp
    dev_on, pin_on = growth["on device"]
    dev_off, pin_off = growth["offloaded"]
    assert pin_on == 0, growth
    assert DOT_BYTES <= pin_off <= DOT_BYTES + len(ACT_DIMS) * ROUNDING, growth
    assert dev_off <= dev_on - DOT_BYTES + len(ACT_DIMS) * ROUNDING, growth


def test_eager_vjp_residuals_freed_when_vjp_fn_dies(no_gc):
    """DESIGN 5.1: residuals held by an eager vjp_fn are freed as soon as it
    dies, by reference counting (no garbage collector), in both kinds."""
    params, batch = (bt.device_put(t) for t in act_model())
    bt.block_until_ready((params, batch))
    for policy in (None, _offload_policy()):
        f = loss if policy is None else bt.checkpoint(loss, policy=policy)
        dev0, pin0 = in_use("device"), in_use("pinned_host")
        out, f_vjp = bt.vjp(f, params, batch)
        grads = f_vjp(bnp.ones((), bnp.float32))
        bt.block_until_ready((out, grads))
        del grads, out, f_vjp
        assert (in_use("device"), in_use("pinned_host")) == (dev0, pin0), policy


def test_offload_policy_under_jit_uses_pinned_host():
    params, batch = (bt.device_put(t) for t in act_model())
    bt.block_until_ready((params, batch))
    peaks = {}
    for name, policy in [
        ("on device", bt.checkpoint_policies.dots_with_no_batch_dims_saveable),
        ("offloaded", _offload_policy()),
    ]:
        f = bt.checkpoint(loss, policy=policy)
        step = bt.jit(bt.value_and_grad(f))
        bt.block_until_ready(step(params, batch))  # compile, warm
        pin0 = in_use("pinned_host")
        bt.reset_peak_memory_stats(memory_kind="device")
        bt.reset_peak_memory_stats(memory_kind="pinned_host")
        bt.block_until_ready(step(params, batch))
        peaks[name] = (
            bt.memory_stats(memory_kind="device")["peak_bytes_in_use"],
            bt.memory_stats(memory_kind="pinned_host")["peak_bytes_in_use"] - pin0,
        )
        assert in_use("pinned_host") == pin0
    assert peaks["on device"][1] == 0, peaks
    assert peaks["offloaded"][1] >= DOT_BYTES, peaks
    assert peaks["offloaded"][0] < peaks["on device"][0], peaks


@pytest.mark.parametrize("policy", ["nothing_saveable", "offload"])
def test_checkpointed_gradients_equal_plain_ones(policy):
    params, batch = act_model()
    pol = (
        bt.checkpoint_policies.nothing_saveable
        if policy == "nothing_saveable"
        else _offload_policy()
    )
    g_plain = bt.jit(bt.grad(loss))(params, batch)
    g_ckpt = bt.jit(bt.grad(bt.checkpoint(loss, policy=pol)))(params, batch)
    for a, b in zip(bt.tree.leaves(g_plain), bt.tree.leaves(g_ckpt)):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5, atol=1e-6)
