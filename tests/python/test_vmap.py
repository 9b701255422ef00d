"""bt.vmap: in_axes / out_axes / axis_size as JAX takes them (ints, None,
pytree prefixes, negative axes), closures, nesting with grad and jit, and
JAX's errors for size and rank mismatches."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

A = np.arange(12, dtype=np.float32).reshape(3, 4)
B = np.arange(4, dtype=np.float32) + 1


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_vmap_basic(mode):
    f = bt.vmap(lambda row: bnp.sum(row * row))
    if mode == "jit":
        f = bt.jit(f)
    np.testing.assert_allclose(np.asarray(f(A)), np.sum(A * A, axis=1))


def test_in_axes_none_and_tuple():
    f = bt.vmap(lambda row, v: row * v, in_axes=(0, None))
    np.testing.assert_allclose(np.asarray(f(A, B)), A * B)
    g = bt.vmap(lambda col, v: col * v, in_axes=(1, 0))
    np.testing.assert_allclose(np.asarray(g(A, B)), (A * B).T)


def test_in_axes_list_is_a_tuple():
    f = bt.vmap(lambda row, v: row + v, in_axes=[0, None])
    np.testing.assert_allclose(np.asarray(f(A, B)), A + B)


def test_negative_axes():
    f = bt.vmap(lambda col: bnp.sum(col), in_axes=-1)
    np.testing.assert_allclose(np.asarray(f(A)), A.sum(axis=0))
    g = bt.vmap(lambda row: row * 2, out_axes=-1)
    np.testing.assert_allclose(np.asarray(g(A)), (A * 2).T)


def test_out_axes_moves_batch_dimension():
    c = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    f = bt.vmap(lambda m: m + 1, in_axes=1, out_axes=2)
    got = np.asarray(f(c))
    assert got.shape == (2, 4, 3)
    np.testing.assert_allclose(got, np.moveaxis(c + 1, 1, 2))


def test_pytree_in_axes_prefix_and_outputs():
    def f(p, x):
        return {"y": p["w"] * x + p["b"], "w": p["w"]}

    p = {"w": B, "b": np.float32(1.0)}
    out = bt.vmap(f, in_axes=({"w": None, "b": None}, 0))(p, A)
    np.testing.assert_allclose(np.asarray(out["y"]), A * B + 1)
    # An unbatched output is broadcast along the batch axis.
    np.testing.assert_allclose(np.asarray(out["w"]), np.broadcast_to(B, (3, 4)))
    out = bt.vmap(f, in_axes=(None, 0), out_axes={"y": 0, "w": None})(p, A)
    np.testing.assert_allclose(np.asarray(out["w"]), B)


def test_kwargs_are_mapped_over_axis_0():
    f = bt.vmap(lambda x, *, y: x * y)
    np.testing.assert_allclose(np.asarray(f(A, y=A)), A * A)


def test_axis_size_with_nothing_mapped():
    f = bt.vmap(lambda v: v * 2, in_axes=None, axis_size=5)
    got = np.asarray(f(B))
    assert got.shape == (5, 4)
    np.testing.assert_allclose(got, np.broadcast_to(B * 2, (5, 4)))


def test_closure_over_outer_values_is_unbatched():
    w = bt.device_put(B)

    @bt.jit
    def f(a, s):
        return bt.vmap(lambda row: row * w * s)(a)

    np.testing.assert_allclose(np.asarray(f(A, np.float32(2.0))), A * B * 2)


def test_python_scalars_stay_weak():
    import ml_dtypes

    x = A.astype(ml_dtypes.bfloat16)
    out = bt.vmap(lambda r, s: r * s, in_axes=(0, None))(x, 2.0)
    assert np.asarray(out).dtype == ml_dtypes.bfloat16


def test_nested_vmap():
    c = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    f = bt.vmap(bt.vmap(lambda v: bnp.sum(v)))
    np.testing.assert_allclose(np.asarray(f(c)), c.sum(axis=2))
    outer = bt.vmap(bt.vmap(lambda a, b: a * b, in_axes=(0, None)), in_axes=(None, 0))
    got = np.asarray(outer(B, B))  # got[i, j] = B[j] * B[i]
    np.testing.assert_allclose(got, np.outer(B, B))


def test_vmap_of_grad_is_per_example_gradients():
    w = np.array([0.5, -1.0, 2.0, 1.0], np.float32)

    def loss(w, x):
        return bnp.sum(bnp.tanh(x * w))

    per_ex = bt.vmap(bt.grad(loss), in_axes=(None, 0))(w, A)
    expected = A * (1 - np.tanh(A * w) ** 2)
    np.testing.assert_allclose(np.asarray(per_ex), expected, rtol=1e-5, atol=1e-6)
    jitted = bt.jit(bt.vmap(bt.grad(loss), in_axes=(None, 0)))(w, A)
    np.testing.assert_allclose(np.asarray(jitted), expected, rtol=1e-5, atol=1e-6)


def test_grad_of_vmap():
    def f(w):
        return bnp.sum(bt.vmap(lambda row: bnp.sum(row * w) ** 2)(A))

    # d/dw sum_i (a_i . w)^2 = sum_i 2 (a_i . w) a_i
    w = np.array([0.1, 0.2, -0.3, 0.4], np.float32)
    expected = (2 * (A @ w))[:, None] * A
    np.testing.assert_allclose(np.asarray(bt.grad(f)(w)), expected.sum(0), rtol=1e-5)


def test_vmap_matmul_batched_both_sides():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = np.arange(40, dtype=np.float32).reshape(2, 4, 5)
    got = np.asarray(bt.vmap(bnp.matmul)(x, y))
    np.testing.assert_allclose(got, x @ y)


# ---- errors ----


def test_inconsistent_sizes():
    with pytest.raises(ValueError, match="inconsistent sizes") as e:
        bt.vmap(lambda x, y: x + y)(np.ones(3, np.float32), np.ones(4, np.float32))
    msg = str(e.value)
    assert "axis 0 of argument x of type float32[3]" in msg
    assert "axis 0 of argument y of type float32[4]" in msg


def test_axis_out_of_range():
    with pytest.raises(ValueError, match="rank should be at least 3"):
        bt.vmap(lambda x: x, in_axes=2)(A)
    with pytest.raises(ValueError, match="rank"):
        bt.vmap(lambda x: x)(np.float32(1.0))


def test_no_mapped_axis_without_axis_size():
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        bt.vmap(lambda x: x, in_axes=None)(A)


def test_axis_size_disagrees():
    with pytest.raises(ValueError, match="axis_size"):
        bt.vmap(lambda x: x, axis_size=5)(A)


def test_in_axes_length_mismatch():
    with pytest.raises(ValueError, match="in_axes"):
        bt.vmap(lambda x, y: x, in_axes=(0, 0, 0))(A, A)


def test_bad_in_axes_type():
    with pytest.raises(TypeError, match="in_axes"):
        bt.vmap(lambda x: x, in_axes="0")


def test_mapped_output_with_out_axes_none():
    with pytest.raises(ValueError, match="mapped output but out_axes is None"):
        bt.vmap(lambda x: x, out_axes=None)(A)


def test_closure_lifted_through_several_frames():
    # w is a Tracer of the jit trace used two frames further in (grad, then
    # vmap): it becomes a parameter of each nested program in turn.
    a = A / 10
    w = np.linspace(-1, 1, 4).astype(np.float32)

    @bt.jit
    def f(w, a):
        def loss(v):
            return bnp.sum(bt.vmap(lambda row: bnp.tanh(row @ (v * w)))(a))

        return bt.grad(loss)(bnp.ones_like(w))

    z = a @ w
    expected = ((1 - np.tanh(z) ** 2)[:, None] * a * w).sum(0)
    np.testing.assert_allclose(np.asarray(f(w, a)), expected, rtol=1e-5)


def test_vmap_of_hessian_and_jvp_of_vmap():
    x = A[:, :2] / 10
    h = np.asarray(bt.vmap(bt.hessian(lambda v: bnp.sum(v**3)))(x))
    expected = np.stack([np.diag(6 * r) for r in x])
    np.testing.assert_allclose(h, expected, rtol=1e-5, atol=1e-6)
    _, t = bt.jvp(bt.vmap(bnp.sin), (A,), (np.ones_like(A),))
    np.testing.assert_allclose(np.asarray(t), np.cos(A), rtol=1e-6)
