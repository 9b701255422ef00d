"""shard_map inside jit, grad and vmap, and vmap's axis_name collectives
(python/baton/_shard_map_trace.py, python/baton/_batched_collectives.py).

- The neural-network examples of JAX's shard_map page as jitted gradient
  steps (data parallel, FSDP, tensor parallel, FSDP on a 2-D mesh), more
  collectives inside jit, vmap of a shard_map, and vmap with axis_name
  (_shard_map_traced_cases.py, a JAX program run unchanged on baton through
  ``baton.as_jax``) on 8 CPU devices: values equal JAX's; output shardings
  equal where the arguments were placed on the mesh.
- On this suite's 4 devices: a data-parallel step whose loss is a
  shard_map'ed pmean is partitioned as a data-parallel step is: 1/N of the
  batch per device, no value of the batch's size whole anywhere, one
  all-reduce, and so is one whose gradient is taken inside the body; a
  varying output promised replicated is refused; a while_loop whose
  predicate varies runs as JAX's vmap of it; a collective in a custom_jvp
  function's body says what is not supported.
"""

import os

import numpy as np
import pytest
from conftest import N, run_cases_on_8_devices

import baton as bt
import baton.numpy as bnp
from baton.sharding import NamedSharding
from baton.sharding import PartitionSpec as P

HERE = os.path.dirname(__file__)
CASES = os.path.join(HERE, "_shard_map_traced_cases.py")


@pytest.fixture(scope="module")
def baton_results():
    return run_cases_on_8_devices(CASES, on_baton=True)


@pytest.fixture(scope="module")
def jax_results():
    pytest.importorskip("jax")
    return run_cases_on_8_devices(CASES, on_baton=False)


CASE_NAMES = [
    "dp_grad", "dp_value_and_grad_equals_loss", "fsdp_grad", "tp_predict", "tp_grad",
    "fsdp_2d_grad", "rows_times_index", "ppermute_ring", "all_to_all_swap",
    "collective_matmul", "collective_matmul_in_a_jitted_step",
    "vmap_collectives_in_loops_and_conds", "vmap_of_shard_map", "pmap_in_jit_and_grad",
    "vmap_axis_name_psum", "vmap_axis_name_gather_and_index", "vmap_nested_axis_names",
    "grad_through_vmap_psum", "grad_inside_dp_body", "grad_inside_body_varying",
    "grad_inside_body_top_level", "grad_inside_body_2d_outer_axis",
    "grad_inside_body_check_vma_false", "jvp_inside_body", "vmap_axis_name_grad_and_jvp",
    "vmap_axis_name_closures_loops_checkpoint", "vjp_jacobians_inside_body",
    "checkpoint_inside_body", "grad_of_grad_inside_body", "while_loop_inside_body",
]
# Cases whose jitted arguments are placed on the mesh (or whose jitted
# function is the shard_map itself, which places them): baton partitions
# them, and the outputs' shardings are JAX's -- FSDP's gradients on the 2-D
# mesh split over both axes as its parameters are. (A jitted program of
# unplaced arguments runs on one device in baton, docs/sharding.md; JAX
# shards it over the shard_map's mesh.)
SPEC_CASES = {
    "dp_grad", "fsdp_grad", "fsdp_2d_grad", "all_to_all_swap", "collective_matmul",
    "collective_matmul_in_a_jitted_step", "grad_inside_dp_body", "grad_inside_body_varying",
    "grad_inside_body_top_level", "grad_inside_body_2d_outer_axis",
    "grad_inside_body_check_vma_false", "jvp_inside_body", "checkpoint_inside_body",
    "grad_of_grad_inside_body", "while_loop_inside_body", "vjp_jacobians_inside_body",
}


@pytest.mark.parametrize("case", CASE_NAMES)
def test_values_equal_jax(case, baton_results, jax_results):
    ours, theirs = baton_results[case], jax_results[case]
    assert "error" not in theirs.get("", {}), theirs
    assert "error" not in ours.get("", {}), ours
    assert sorted(ours) == sorted(theirs)
    for leaf in theirs:
        np.testing.assert_allclose(
            np.asarray(ours[leaf]["value"]),
            np.asarray(theirs[leaf]["value"]),
            rtol=1e-5,
            atol=1e-5,
            err_msg=f"{case} {leaf}",
        )
        if case in SPEC_CASES:
            assert ours[leaf]["spec"] == theirs[leaf]["spec"], (case, leaf)


@pytest.fixture
def mesh():
    return bt.make_mesh((N,), ("i",))


def _dp_step(mesh):
    def loss(w, x):
        return bt.shard_map(
            lambda w, x: bt.lax.pmean(((x @ w) ** 2).sum(), "i"),
            mesh=mesh,
            in_specs=(P(), P("i")),
            out_specs=P(),
        )(w, x)

    return bt.jit(lambda w, x: w - 0.1 * bt.grad(loss)(w, x))


def test_a_varying_output_promised_replicated_is_refused_inside_jit(mesh):
    f = bt.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P("i"), out_specs=P())
    with pytest.raises(ValueError, match="varies along a mesh axis"):
        bt.jit(lambda a: f(a) + 1)(np.arange(8.0, dtype=np.float32))


def test_shard_map_inside_jit_with_unplaced_arguments_gives_the_same_values(mesh):
    x = np.arange(8.0, dtype=np.float32)
    f = bt.shard_map(
        lambda b: b / bt.lax.psum(b.sum(), "i") + bt.lax.axis_index("i"),
        mesh=mesh,
        in_specs=P("i"),
        out_specs=P("i"),
    )
    want = np.asarray(f(x))  # eager: one program per device
    np.testing.assert_allclose(np.asarray(bt.jit(lambda a: f(a) * 1)(x)), want, rtol=1e-6)
    placed = bt.device_put(x, NamedSharding(mesh, P("i")))
    out = bt.jit(lambda a: f(a) * 1)(placed)
    assert out.sharding.spec == P("i")
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)


def _dp_step_grad_inside(mesh):
    # The gradient taken inside the body, as JAX's shard_map page writes a
    # data-parallel step too: the parameters are invariant, so their
    # cotangent is summed over the devices (JAX's check_vma).
    def body(w, x):
        g = bt.grad(lambda v: bt.lax.pmean(((x @ v) ** 2).sum(), "i"))(w)
        return w - 0.1 * g

    step = bt.shard_map(body, mesh=mesh, in_specs=(P(), P("i")), out_specs=P())
    return bt.jit(lambda w, x: step(w, x))


@pytest.mark.parametrize("make_step", [_dp_step, _dp_step_grad_inside])
def test_a_data_parallel_step_keeps_the_batch_split(mesh, make_step):
    x = (np.arange(4096 * 64) % 13 - 6).astype(np.float32).reshape(4096, 64) / 64
    w = (np.arange(64 * 64) % 5 - 2).astype(np.float32).reshape(64, 64) / 64
    xs = bt.device_put(x, NamedSharding(mesh, P("i")))
    compiled = make_step(mesh).lower(w, xs).compile()
    block = x.nbytes // N
    for m in compiled.memory_analysis_per_device():
        # Each device's arguments are its block of the batch and the
        # weights; its peak stays under the whole batch (computed whole
        # and sliced, the cotangent of the mean alone took the batch's
        # size on every device; with the grad inside the body, the
        # partitioner computed and all-reduced the vmap rounds' unused
        # values too).
        assert m.argument_size_in_bytes == block + w.nbytes
        assert m.peak_memory_in_bytes < x.nbytes
        assert m.temp_size_in_bytes <= 3 * block
    text = compiled.as_text()
    # One all-reduce, the gradient's (the loss is not an output).
    assert text.count("all-reduce") == 1, text[:2000]
    assert "slice" not in text.split("// stage")[0], text[:2000]
    out = np.asarray(compiled(w, xs))
    want = w - 0.1 * 2 * x.T @ (x @ w) / N
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_a_while_loop_whose_predicate_varies_runs_while_any_device_is_not_done(mesh):
    # As JAX's vmap of a while_loop: the loop runs while any device's
    # predicate holds; a device whose predicate is false keeps its carry,
    # which still takes part in the body's psum.
    def body(b):
        return bt.lax.while_loop(
            lambda c: c[0] < b.sum(), lambda c: bt.lax.psum(c, "i"), b
        )

    f = bt.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    x = np.arange(8.0, dtype=np.float32)
    out = np.asarray(bt.jit(lambda a: f(a) * 1)(x))
    # Blocks [0 1] [2 3] [4 5] [6 7]: every predicate holds, so one psum
    # gives [12 16] everywhere; only the last block's (12 < 13) still
    # holds, and its next psum adds the three kept carries to its own.
    np.testing.assert_array_equal(out, [12, 16, 12, 16, 12, 16, 48, 64])


def test_a_collective_in_a_custom_jvp_body_says_what_is_unsupported(mesh):
    @bt.custom_jvp
    def total(y):
        return bt.lax.psum(y, "i")

    @total.defjvp
    def total_jvp(primals, tangents):
        return total(primals[0]), bt.lax.psum(tangents[0], "i")

    f = bt.shard_map(lambda b: total(b), mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    with pytest.raises(NotImplementedError, match="nested in the mapped function"):
        bt.jit(lambda a: f(a) * 1)(np.arange(8.0, dtype=np.float32))


def test_vmap_collectives_name_their_axis():
    x = bnp.arange(1.0, 5.0)
    out = bt.vmap(lambda v: v / bt.lax.psum(v, "i"), axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(out), np.arange(1.0, 5.0) / 10.0, rtol=1e-6)
    with pytest.raises(ValueError, match="outside bt.shard_map"):
        bt.vmap(lambda v: bt.lax.psum(v, "j"), axis_name="i")(x)
    with pytest.raises(NotImplementedError, match="spmd_axis_name"):
        bt.vmap(lambda v: v, spmd_axis_name="i")(x)


def test_python_scalars_and_closed_over_arrays_pass_into_the_body(mesh):
    # A Python float with a P() spec (a step size) was refused inside jit:
    # its rank was read from .shape, which a float has not.
    x = np.arange(8.0, dtype=np.float32)
    bias = bnp.ones(2)
    f = bt.shard_map(
        lambda b, s: b * s + bt.lax.psum(s, "i") + bias,
        mesh=mesh,
        in_specs=(P("i"), P()),
        out_specs=P("i"),
    )
    np.testing.assert_array_equal(np.asarray(bt.jit(lambda a: f(a, 2.0))(x)), x * 2 + 9)
