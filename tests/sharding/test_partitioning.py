"""jit of sharded arguments is partitioned over the mesh (python/baton/_partitioned_call.py, jit/spmd_executable.h).

- JAX's partitioning cases (_partitioning_cases.py, a JAX program run
  unchanged on baton through ``baton.as_jax``) on 8 CPU devices: values and
  output shardings equal JAX's, ``in_shardings`` / ``out_shardings`` among
  them, and ``with_sharding_constraint`` inside jit (under grad and vmap
  too).
- On this suite's 4 devices: the findings of issue 37 (``x.sum()`` and
  ``x @ x.T`` of a sharded ``x``, mixed sharded and unsharded arguments)
  compute instead of raising; each device holds 1/N of a split parameter
  and, after the call, nothing but its arguments and outputs; a donated
  parameter is updated in place on every device, and refused donations
  consume nothing.
"""

import os

import numpy as np
import pytest
from conftest import N, in_use, run_cases_on_8_devices

import baton as bt
import baton.numpy as bnp
from baton.sharding import NamedSharding
from baton.sharding import PartitionSpec as P

HERE = os.path.dirname(__file__)
CASES = os.path.join(HERE, "_partitioning_cases.py")


@pytest.fixture(scope="module")
def baton_results():
    return run_cases_on_8_devices(CASES, on_baton=True)


@pytest.fixture(scope="module")
def jax_results():
    pytest.importorskip("jax")
    return run_cases_on_8_devices(CASES, on_baton=False)


CASE_NAMES = [
    "sum_all", "sum_axis0", "sum_axis1", "mean", "max_axis1", "dot_lhs_rows",
    "dot_rhs_cols", "dot_both", "dot_contracting", "x_xT", "reshape_keep",
    "reshape_flat", "mixed_unsharded", "mixed_shardings", "softmax_rows",
    "mlp_forward", "out_shardings_gather", "out_shardings_split", "in_shardings",
    "dp_step", "scan_tp_step", "while_tp_train", "tp_step", "constraint_gathers", "constraint_resplits",
    "constraint_in_matmul", "constraint_under_grad", "constraint_under_vmap",
    "bf16_dot_split", "bf16_sum_split", "bf16_matmul_split_rows",
    "slice_cols", "pad_cols", "concat_cols", "sort_cols", "dynamic_slice_cols",
    "take_rows_by_split_ids", "scatter_add_cols", "rfft_rows", "cholesky_batch",
    "solve_batch", "fori_loop_rows", "while_loop_rows", "scan_carry_and_ys",
    "scan_over_layers", "cond_rows", "switch_tp", "cond_tp_grad", "along_split_rows",
]


def _leaves(result):
    if "value" in result or "error" in result:
        return {"": result}
    return result


@pytest.mark.parametrize("case", CASE_NAMES)
def test_values_and_output_shardings_equal_jax(case, baton_results, jax_results):
    ours, theirs = _leaves(baton_results[case]), _leaves(jax_results[case])
    assert "error" not in theirs.get("", {}), theirs
    assert ours.keys() == theirs.keys(), (ours, theirs)
    for k in theirs:
        assert "error" not in ours[k], ours[k]
        np.testing.assert_allclose(
            np.asarray(ours[k]["value"]), np.asarray(theirs[k]["value"]),
            rtol=1e-6, atol=1e-6, err_msg=f"{case} {k}",
        )
        assert ours[k]["spec"] == theirs[k]["spec"], f"{case} {k}"
        assert ours[k]["dtype"] == theirs[k]["dtype"], f"{case} {k}"


def test_every_case_runs_on_baton(baton_results):
    # Without jax installed the comparison skips; the cases must still run.
    for case in CASE_NAMES:
        for k, r in _leaves(baton_results[case]).items():
            assert "error" not in r, (case, k, r)


@pytest.fixture
def mesh():
    return bt.make_mesh((N,), ("i",))


def floats(*shape):
    n = int(np.prod(shape))
    return ((np.arange(n) * 37) % 7 - 3).astype(np.float32).reshape(shape)


def test_the_findings_compute(mesh):
    x = floats(8, 4)
    y = bt.device_put(x, NamedSharding(mesh, P("i")))
    s = y.sum()
    assert isinstance(s, bt.ShardedArray) and s.sharding.spec == P()
    assert float(np.asarray(s)) == x.sum()
    g = bt.jit(lambda a: a @ a.T)(y)
    np.testing.assert_array_equal(np.asarray(g), x @ x.T)
    assert g.sharding.spec == P("i")
    m = bt.jit(lambda a, b: a + b)(y, bt.device_put(x))
    np.testing.assert_array_equal(np.asarray(m), 2 * x)
    r = bt.jit(lambda a: a[::-1])(y)
    np.testing.assert_array_equal(np.asarray(r), x[::-1])


def test_a_split_parameter_takes_a_quarter_per_device(mesh):
    before = in_use()
    w = bt.device_put(floats(64, 64), NamedSharding(mesh, P(None, "i")))
    x = bt.device_put(floats(16, 64), NamedSharding(mesh, P()))
    after_put = in_use()
    # w: 64 x 16 floats per device; x whole on each.
    assert [a - b for a, b in zip(after_put, before)] == [(64 * 16 + 16 * 64) * 4] * N

    def layer(w, x):
        return (x @ w).sum()

    out = bt.jit(layer)(w, x)
    np.testing.assert_array_equal(np.asarray(out), (floats(16, 64) @ floats(64, 64)).sum())
    bt.effects_barrier()
    # Beyond the arguments, each device holds its copy of the scalar result
    # (one allocation block): the stages' temporaries are gone.
    grew = [a - b for a, b in zip(in_use(), after_put)]
    assert all(0 < g <= 256 for g in grew), grew
    del out
    bt.effects_barrier()
    assert in_use() == after_put


def test_elementwise_calls_are_partitioned_and_land_where_their_sharding_says(mesh):
    # Eager operators and elementwise jits of sharded arrays run through the
    # partitioned executable like any other call: one compute stage on each
    # device's block. The result is in device memory, and its sharding says
    # so (the per-shard path this replaced kept the input's pinned_host
    # sharding on a result in device memory).
    x = floats(8, 4)
    y = bt.device_put(x, NamedSharding(mesh, P("i"), memory_kind="pinned_host"))
    z = y * 2 + 1
    assert z.memory_kind == "device" and z.sharding.memory_kind in (None, "device")
    assert all(s.data.memory_kind == "device" for s in z.addressable_shards)
    assert z.sharding.spec == P("i")
    np.testing.assert_array_equal(np.asarray(z), x * 2 + 1)
    f = bt.jit(lambda a: bnp.tanh(a) * 3)
    text = f.lower(bt.device_put(x, NamedSharding(mesh, P("i")))).compile().as_text()
    assert text.count("compute (") == 1 and "all-" not in text, text


def test_a_loop_over_split_rows_runs_on_each_devices_rows(mesh):
    # The loop body needs no communication: each device runs it on its
    # quarter of the rows (no all-gather, one compute stage), holding only
    # its block and its result's; a loop whose condition sums the rows
    # needs every device's partial sum in each iteration: it runs as a loop
    # stage, the rows still split, the sum all-reduced inside its condition.
    x = bt.device_put(floats(64, 32), NamedSharding(mesh, P("i")))
    f = bt.jit(lambda a: bt.lax.fori_loop(0, 4, lambda i, c: bnp.tanh(c) * 0.5 + i, a))
    text = f.lower(x).compile().as_text()
    assert "all-gather" not in text and text.count("compute (") == 1, text
    before = in_use()
    out = f(x)
    bt.effects_barrier()
    grew = [a - b for a, b in zip(in_use(), before)]
    assert grew == [16 * 32 * 4] * N, grew  # each device: its result block
    assert out.sharding.spec == P("i")
    want = floats(64, 32)
    for i in range(4):
        want = np.tanh(want) * 0.5 + i
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    g = bt.jit(lambda a: bt.lax.while_loop(lambda c: c.sum() < 1e4, lambda c: c * 2 + 1, a))
    text = g.lower(x).compile().as_text()
    assert "all-gather" not in text and "while %" in text, text
    assert "all-reduce sum over 'i'" in text[text.index("cond:") : text.index("body:")]
    got = g(x)
    assert got.sharding.spec == P("i")
    want = floats(64, 32)
    while want.sum() < 1e4:
        want = want * 2 + 1
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_a_donated_parameter_is_updated_in_place_on_every_device(mesh):
    """A data-parallel SGD step donating its replicated parameter: the
    gradient is all-reduced across the batch split, and each device's new
    parameter is written over its old block (same storage), so the step
    holds one copy of the parameter per device, not two."""
    w = bt.device_put(floats(16, 16), NamedSharding(mesh, P()))
    x = bt.device_put(floats(32, 16) / 8, NamedSharding(mesh, P("i")))

    def step(w, x):
        return w - 0.01 * (x.T @ (x @ w))

    want = floats(16, 16) - 0.01 * (floats(32, 16).T / 8 @ (floats(32, 16) / 8 @ floats(16, 16)))
    before = [s.data.unsafe_buffer_pointer() for s in w.addressable_shards]
    bt.effects_barrier()
    held = in_use()
    new = bt.jit(step, donate_argnums=0)(w, x)
    assert w.is_deleted()
    np.testing.assert_allclose(np.asarray(new), want, rtol=1e-5)
    assert [s.data.unsafe_buffer_pointer() for s in new.addressable_shards] == before
    bt.effects_barrier()
    # x's blocks and the new w where the old one was: nothing else remains.
    assert in_use() == held
    # Again, donating the result (the loop a training script runs).
    newer = bt.jit(step, donate_argnums=0)(new, x)
    assert new.is_deleted()
    assert [s.data.unsafe_buffer_pointer() for s in newer.addressable_shards] == before
    # A call-site donation of a split array is taken the same way (a sum:
    # no output can reuse it, so its blocks are freed after the call).
    total = bt.jit(lambda a: a.sum())(bt.donate(x))
    assert x.is_deleted()
    np.testing.assert_allclose(float(total), (floats(32, 16) / 8).sum(), rtol=1e-6)


def test_refused_donations_to_a_partitioned_call_consume_nothing(mesh):
    y = bt.device_put(floats(8, 4), NamedSharding(mesh, P("i")))
    z = bt.device_put(floats(4, 4))  # unsharded, read whole on every device
    with pytest.raises(bt.DonationError, match="unsharded.*Nothing was consumed"):
        bt.jit(lambda a, b: a @ b, donate_argnums=1)(y, z)
    assert not y.is_deleted() and not z.is_deleted()
    with pytest.raises(bt.DonationError, match="Nothing was consumed"):
        bt.jit(lambda a, b: a @ b)(y, bt.donate(z))
    assert not y.is_deleted() and not z.is_deleted()
    # A host view of one shard refuses the donation of the whole array.
    view = np.asarray(y.addressable_shards[2].data)
    with pytest.raises(bt.DonationError):
        bt.jit(lambda a: a @ a.T, donate_argnums=0)(y)
    assert not y.is_deleted()
    del view
    np.testing.assert_array_equal(np.asarray(y), floats(8, 4))


def test_a_scanned_tensor_parallel_model_keeps_its_layers_split(mesh):
    """A scan over layers whose stacked weights are split Megatron-style
    needs an all-reduce in every step: the step is unrolled, so each
    device holds 1/N of every layer's weights (never a whole layer) in the
    training step, forward and backward, and the updated weights keep the
    split."""
    layers, d, h = 3, 16, 32
    w1 = floats(layers, d, h) * 0.125
    w2 = floats(layers, h, d) * 0.125
    x = floats(8, d)

    def model(w1, w2, x):
        def layer(c, w):
            return c + bnp.maximum(c @ w[0], 0.0) @ w[1], None

        return bt.lax.scan(layer, x, (w1, w2))[0]

    def step(w1, w2, x):
        g1, g2 = bt.grad(lambda a, b: (model(a, b, x) ** 2).mean(), argnums=(0, 1))(w1, w2)
        return w1 - 0.01 * g1, w2 - 0.01 * g2

    s1 = bt.device_put(w1, NamedSharding(mesh, P(None, None, "i")))
    s2 = bt.device_put(w2, NamedSharding(mesh, P(None, "i")))
    sx = bt.device_put(x, NamedSharding(mesh, P()))
    compiled = bt.jit(step).lower(s1, s2, sx).compile()
    text = compiled.as_text()
    assert "all-gather" not in text
    assert text.count("all-reduce sum over 'i'") >= 2 * layers  # forward, backward
    weights = w1.nbytes + w2.nbytes
    for a in compiled.memory_analysis_per_device():
        assert a.argument_size_in_bytes == weights // N + x.nbytes
        assert a.output_size_in_bytes == weights // N
    whole = bt.jit(step).lower(bt.device_put(w1), bt.device_put(w2), sx).compile()
    assert compiled.memory_analysis().peak_memory_in_bytes < (
        whole.memory_analysis().peak_memory_in_bytes - weights // 2
    )
    n1, n2 = compiled(s1, s2, sx)
    assert n1.sharding.spec == P(None, None, "i") and n2.sharding.spec == P(None, "i")
    r1, r2 = bt.jit(step)(w1, w2, x)
    np.testing.assert_allclose(np.asarray(n1), np.asarray(r1), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(n2), np.asarray(r2), rtol=1e-6, atol=1e-6)


def test_a_training_while_loop_over_tensor_parallel_weights_keeps_them_split(mesh):
    """A training loop as a ``while_loop`` -- steps until a step budget or a
    loss target, whichever comes first -- over Megatron-style weights: the
    body's all-reduces stay inside the loop (a loop stage), so each device
    holds 1/N of the weights through every step instead of gathering them
    whole before the loop; the weights come out with their specs, and the
    values are the unsharded loop's."""
    d, h = 16, 32
    w1 = floats(d, h) * 0.125
    w2 = floats(h, d) * 0.125
    x = floats(8, d)

    def loss_fn(w1, w2):
        return ((x + bnp.maximum(x @ w1, 0.0) @ w2) ** 2).mean()

    def train(w1, w2):
        def cond(c):
            return (c[2] < 5) & (c[3] > 1e-3)

        def body(c):
            w1, w2, i, _ = c
            loss, (g1, g2) = bt.value_and_grad(loss_fn, argnums=(0, 1))(w1, w2)
            return w1 - 0.01 * g1, w2 - 0.01 * g2, i + 1, loss

        return bt.lax.while_loop(cond, body, (w1, w2, 0, bnp.float32(1.0)))

    s1 = bt.device_put(w1, NamedSharding(mesh, P(None, "i")))
    s2 = bt.device_put(w2, NamedSharding(mesh, P("i")))
    compiled = bt.jit(train).lower(s1, s2).compile()
    text = compiled.as_text()
    assert "while %" in text
    loop_at = text.index("while %")
    assert "all-gather" not in text[:loop_at]  # nothing gathered before the loop
    assert "all-reduce sum over 'i'" in text[loop_at:]
    weights = w1.nbytes + w2.nbytes
    for a in compiled.memory_analysis_per_device():
        assert a.argument_size_in_bytes == weights // N
        assert a.output_size_in_bytes == weights // N + 4 + 4  # + step, loss
    whole = bt.jit(train).lower(bt.device_put(w1), bt.device_put(w2)).compile()
    assert compiled.memory_analysis().peak_memory_in_bytes < (
        whole.memory_analysis().peak_memory_in_bytes - weights // 2
    )
    n1, n2, steps, loss = compiled(s1, s2)
    assert n1.sharding.spec == P(None, "i") and n2.sharding.spec == P("i")
    r1, r2, rsteps, rloss = bt.jit(train)(w1, w2)
    assert int(steps) == int(rsteps) == 5
    np.testing.assert_allclose(np.asarray(n1), np.asarray(r1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(n2), np.asarray(r2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(loss), float(rloss), rtol=1e-5)


def test_a_conditional_over_tensor_parallel_weights_keeps_them_split(mesh):
    """A ``lax.switch`` between a Megatron-style layer (its all-reduce inside
    the branch) and cheaper branches runs as a case stage: the weights stay
    split (1/N per device, nothing gathered before it), each branch runs on
    the blocks, and every index -- one out of range clamped, as JAX's -- gives
    the unsharded switch's values. Before case stages, the weights were
    gathered whole to every device before the conditional."""
    d, h = 16, 64
    w1 = floats(d, h) * 0.125
    w2 = floats(h, d) * 0.125
    x = floats(8, d)
    branches = [
        lambda x, w1, w2: bnp.maximum(x @ w1, 0.0) @ w2,
        lambda x, w1, w2: (x @ w1) @ w2 * 0.5,
        lambda x, w1, w2: x * 2.0,
    ]

    def f(i, x, w1, w2):
        return bt.lax.switch(i, branches, x, w1, w2)

    s1 = bt.device_put(w1, NamedSharding(mesh, P(None, "i")))
    s2 = bt.device_put(w2, NamedSharding(mesh, P("i")))
    compiled = bt.jit(f).lower(0, x, s1, s2).compile()
    text = compiled.as_text()
    assert "case %" in text
    case_at = text.index("case %")
    assert "all-gather" not in text[:case_at]
    assert "all-reduce sum over 'i'" in text[case_at:]
    weights = w1.nbytes + w2.nbytes
    for a in compiled.memory_analysis_per_device():
        assert a.argument_size_in_bytes == weights // N + x.nbytes + 4
    whole = bt.jit(f).lower(0, x, bt.device_put(w1), bt.device_put(w2)).compile()
    assert compiled.memory_analysis().peak_memory_in_bytes < (
        whole.memory_analysis().peak_memory_in_bytes - weights // 2
    )
    for i in (0, 1, 2, 7, -1):
        got = compiled(i, x, s1, s2)
        assert got.sharding.spec == P()
        want = bt.jit(f)(i, x, w1, w2)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)


def test_a_scan_too_long_to_unroll_keeps_its_stacked_weights_split(mesh):
    """A scan over more tensor-parallel layers than unrolling allows (steps
    x body past 2^16 instructions) runs as a while loop stage: its stacked
    weights stay split (1/N per device, nothing gathered), each step's
    all-reduce inside the loop, and its stacked outputs are written split,
    row by row, in place."""
    layers, d, h = 7000, 8, 16
    w1 = floats(layers, d, h) * 0.125
    w2 = floats(layers, h, d) * 0.125
    x = floats(4, d) * 0.125

    def model(w1, w2, x):
        def layer(c, w):
            y = bnp.tanh(c + bnp.maximum(c @ w[0], 0.0) @ w[1])
            return y, y[:, :2]

        return bt.lax.scan(layer, x, (w1, w2))

    s1 = bt.device_put(w1, NamedSharding(mesh, P(None, None, "i")))
    s2 = bt.device_put(w2, NamedSharding(mesh, P(None, "i")))
    sx = bt.device_put(x, NamedSharding(mesh, P()))
    compiled = bt.jit(model).lower(s1, s2, sx).compile()
    text = compiled.as_text()
    assert text.count("while %") == 1 and "all-gather" not in text
    assert "all-reduce sum over 'i'" in text[text.index("body:") :]
    for a in compiled.memory_analysis_per_device():
        assert a.argument_size_in_bytes == (w1.nbytes + w2.nbytes) // N + x.nbytes
        assert a.peak_memory_in_bytes < (w1.nbytes + w2.nbytes) // 2
    out, ys = compiled(s1, s2, sx)
    want_out, want_ys = bt.jit(model)(w1, w2, x)
    np.testing.assert_allclose(np.asarray(out), np.asarray(want_out), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ys), np.asarray(want_ys), rtol=1e-5, atol=1e-6)


def test_lower_and_compile_of_sharded_arguments_analyse_memory_per_device(mesh):
    """f.lower(*sharded).compile(): the partitioned program, its memory per
    device (a split argument a quarter, donation aliased), its text, and a
    call that runs it."""
    x = bt.device_put(floats(64, 32), NamedSharding(mesh, P("i")))
    w = bt.device_put(floats(32, 16), NamedSharding(mesh, P()))

    def step(w, x):
        return w - 0.01 * (x.T @ (x @ w))

    compiled = bt.jit(step).lower(w, x).compile()
    per_device = compiled.memory_analysis_per_device()
    assert len(per_device) == N
    for a in per_device:
        assert a.argument_size_in_bytes == (64 * 32 // N + 32 * 16) * 4
        assert a.output_size_in_bytes == 32 * 16 * 4  # the new w, whole
        assert a.alias_size_in_bytes == 0
        # x @ w's block and the partial gradient live during the first stage.
        assert a.peak_memory_in_bytes >= (
            a.argument_size_in_bytes + a.output_size_in_bytes + (64 // N) * 16 * 4
        )
    assert compiled.memory_analysis().peak_memory_in_bytes == max(
        a.peak_memory_in_bytes for a in per_device
    )
    assert "all-reduce sum over 'i'" in compiled.as_text()
    assert compiled.output_shardings.spec == P()
    np.testing.assert_allclose(np.asarray(compiled(w, x)), np.asarray(bt.jit(step)(w, x)))
    # Donated, the new w is written over the old one's block on each device.
    donated = bt.jit(step, donate_argnums=0).lower(w, x).compile()
    assert not w.is_deleted()  # lowering consumes nothing
    for a in donated.memory_analysis_per_device():
        assert a.alias_size_in_bytes == 32 * 16 * 4
