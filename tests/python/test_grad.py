"""bt.grad, bt.value_and_grad and bt.vjp (reverse mode), checked against
analytic derivatives and numpy finite differences, eagerly and under jit,
nested, with pytrees, closures and the errors JAX raises."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp


def finite_diff(f, x, eps=1e-3):
    """Central differences of scalar numpy function f at float64 x."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


X = np.array([0.3, -1.2, 2.0, 0.7], np.float32)


def loss(x):
    return bnp.sum(bnp.tanh(x) * x + bnp.exp(-x * x))


def loss_np(x):
    return np.sum(np.tanh(x) * x + np.exp(-x * x))


# ---- values ----


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_grad_matches_finite_differences(mode):
    g = bt.grad(loss)
    if mode == "jit":
        g = bt.jit(g)
    got = np.asarray(g(X))
    np.testing.assert_allclose(got, finite_diff(loss_np, X), rtol=1e-3, atol=1e-4)
    assert got.dtype == np.float32 and got.shape == X.shape


def test_grad_of_polynomial_is_exact():
    g = bt.grad(lambda x: x**3 + 2 * x)
    assert float(g(2.0)) == pytest.approx(14.0)
    assert float(bt.jit(g)(np.float32(-1.0))) == pytest.approx(5.0)


def test_value_and_grad():
    v, g = bt.value_and_grad(loss)(X)
    assert float(v) == pytest.approx(loss_np(X.astype(np.float64)), rel=1e-5)
    np.testing.assert_allclose(
        np.asarray(g), finite_diff(loss_np, X), rtol=1e-3, atol=1e-4
    )


def test_matmul_mlp_grad():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    x = rng.standard_normal((5, 4)).astype(np.float32)

    def f(params, x):
        h = bnp.tanh(x @ params["w"] + params["b"])
        return bnp.mean(h * h)

    def f_np(w_, b_):
        h = np.tanh(x.astype(np.float64) @ w_ + b_)
        return np.mean(h * h)

    g = bt.jit(bt.grad(f))({"w": w, "b": b}, x)
    assert set(g) == {"w", "b"}
    np.testing.assert_allclose(
        np.asarray(g["w"]), finite_diff(lambda w_: f_np(w_, b), w), rtol=1e-3, atol=1e-5
    )
    np.testing.assert_allclose(
        np.asarray(g["b"]), finite_diff(lambda b_: f_np(w, b_), b), rtol=1e-3, atol=1e-5
    )


def test_argnums_tuple_and_negative():
    def f(x, y, z):
        return bnp.sum(x * y * y + z)

    x = np.float32(3.0)
    y = np.float32(2.0)
    gx, gz = bt.grad(f, argnums=(0, 2))(x, y, np.float32(1.0))
    assert float(gx) == 4.0 and float(gz) == 1.0
    gy = bt.grad(f, argnums=-2)(x, y, np.float32(1.0))
    assert float(gy) == 12.0
    (gy2,) = bt.grad(f, argnums=(1,))(x, y, np.float32(1.0))
    assert float(gy2) == 12.0


def test_has_aux():
    def f(x):
        y = bnp.sum(x * x)
        return y, {"y": y, "double": x * 2}

    g, aux = bt.grad(f, has_aux=True)(X)
    np.testing.assert_allclose(np.asarray(g), 2 * X, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(aux["double"]), 2 * X)
    (v, aux2), g2 = bt.jit(bt.value_and_grad(f, has_aux=True))(X)
    assert float(v) == pytest.approx(float(np.sum(X * X)), rel=1e-6)
    np.testing.assert_allclose(np.asarray(aux2["y"]), np.asarray(v))
    np.testing.assert_allclose(np.asarray(g2), 2 * X, rtol=1e-6)


def test_pytree_arguments_and_none_leaves():
    params = {"a": (X, None), "b": [np.float32(2.0)]}

    def f(p):
        return bnp.sum(p["a"][0] ** 2) * p["b"][0]

    g = bt.grad(f)(params)
    assert g["a"][1] is None
    np.testing.assert_allclose(np.asarray(g["a"][0]), 4 * X, rtol=1e-6)
    assert float(g["b"][0]) == pytest.approx(float(np.sum(X * X)), rel=1e-6)


def test_integer_argument_not_differentiated_is_fine():
    def f(x, n):
        return bnp.sum(x * n)

    g = bt.grad(f)(X, np.int32(3))
    np.testing.assert_allclose(np.asarray(g), np.full(4, 3.0))


def test_python_scalars_are_weak():
    # A weakly typed scalar argument takes the other operand's dtype.
    x16 = np.array([1.0, 2.0], np.float16)

    def f(x, s):
        return bnp.sum(x * s).astype(np.float32)

    g = bt.grad(f)(x16, 3.0)
    assert np.asarray(g).dtype == np.float16
    np.testing.assert_allclose(np.asarray(g, np.float32), [3.0, 3.0])
    gs = bt.grad(f, argnums=1)(x16, 3.0)
    assert float(gs) == pytest.approx(3.0)


def test_bfloat16_grad():
    import ml_dtypes

    x = np.array([1.0, -2.0], ml_dtypes.bfloat16)
    g = bt.grad(lambda x: bnp.sum(x * x).astype(np.float32))(x)
    assert np.asarray(g).dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(np.asarray(g, np.float32), [2.0, -4.0])


def test_stop_gradient():
    def f(x):
        return bnp.sum(bt.lax.stop_gradient(x) * x)

    np.testing.assert_allclose(np.asarray(bt.grad(f)(X)), X, rtol=1e-6)
    assert bt.lax.stop_gradient(X) is X  # eagerly the identity
    tree = bt.jit(lambda t: bt.lax.stop_gradient(t))({"a": X})
    np.testing.assert_allclose(np.asarray(tree["a"]), X)


# ---- nesting ----


def test_grad_of_grad():
    f = lambda x: bnp.sin(x) * x  # noqa: E731
    g2 = bt.grad(bt.grad(f))
    x = 0.7
    expected = 2 * np.cos(x) - x * np.sin(x)
    assert float(g2(x)) == pytest.approx(expected, rel=1e-5)
    assert float(bt.jit(g2)(x)) == pytest.approx(expected, rel=1e-5)
    g3 = bt.grad(bt.grad(bt.grad(lambda x: x**4)))
    assert float(g3(2.0)) == pytest.approx(48.0)


def test_jit_inside_grad_and_grad_inside_jit():
    inner = bt.jit(lambda x: bnp.tanh(x) * 2)
    g = bt.grad(lambda x: bnp.sum(inner(x)))
    np.testing.assert_allclose(np.asarray(g(X)), 2 * (1 - np.tanh(X) ** 2), rtol=1e-5)

    @bt.jit
    def step(x):
        return x - 0.1 * bt.grad(loss)(x)

    np.testing.assert_allclose(
        np.asarray(step(X)), X - 0.1 * finite_diff(loss_np, X), rtol=1e-3, atol=1e-4
    )


def test_closure_over_outer_tracer():
    # y is a Tracer of the jit trace; the grad's function closes over it.
    @bt.jit
    def f(x, y):
        return bt.grad(lambda a: bnp.sum(a * y * a))(x)

    y = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    np.testing.assert_allclose(np.asarray(f(X, y)), 2 * X * y, rtol=1e-6)


def test_closure_over_outer_tracer_is_differentiated_by_outer_grad():
    # d/dy of (d/dx sum(x * y * x)) = d/dy (2 x y) summed = 2 x
    def outer(y):
        gx = bt.grad(lambda x: bnp.sum(x * y * x))(X)
        return bnp.sum(gx)

    np.testing.assert_allclose(np.asarray(bt.grad(outer)(X)), 2 * X, rtol=1e-6)


def test_closure_over_array_and_numpy():
    w = bt.device_put(np.array([2.0, 3.0, 4.0, 5.0], np.float32))
    c = np.array([1.0, 1.0, 0.0, 0.0], np.float32)
    g = bt.grad(lambda x: bnp.sum(x * w + x * x * c))(X)
    np.testing.assert_allclose(np.asarray(g), np.asarray(w) + 2 * X * c, rtol=1e-6)


def test_eager_grad_retraces_every_call():
    calls = []

    def f(x):
        calls.append(1)
        return bnp.sum(x * scale[0])

    scale = [2.0]
    g = bt.grad(f)
    np.testing.assert_allclose(np.asarray(g(X)), np.full(4, 2.0))
    scale[0] = 5.0  # no stale closure: the next call traces again
    np.testing.assert_allclose(np.asarray(g(X)), np.full(4, 5.0))
    assert len(calls) == 2


# ---- vjp ----


def test_vjp_eager_and_pullback_reuse():
    out, vjp_fn = bt.vjp(lambda x: bnp.sin(x) * 2, X)
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(X), rtol=1e-6)
    (ct,) = vjp_fn(np.ones(4, np.float32))
    np.testing.assert_allclose(np.asarray(ct), 2 * np.cos(X), rtol=1e-6)
    (ct2,) = vjp_fn(np.full(4, 3.0, np.float32))
    np.testing.assert_allclose(np.asarray(ct2), 6 * np.cos(X), rtol=1e-6)


def test_vjp_pytrees_has_aux_and_multiple_primals():
    def f(a, b):
        return {"s": a * b, "t": (a + b,)}, a * 10

    a = np.array([1.0, 2.0], np.float32)
    b = np.array([3.0, 4.0], np.float32)
    out, vjp_fn, aux = bt.vjp(f, a, b, has_aux=True)
    np.testing.assert_allclose(np.asarray(out["s"]), a * b)
    np.testing.assert_allclose(np.asarray(aux), a * 10)
    ga, gb = vjp_fn({"s": np.ones(2, np.float32), "t": (np.full(2, 2.0, np.float32),)})
    np.testing.assert_allclose(np.asarray(ga), b + 2)
    np.testing.assert_allclose(np.asarray(gb), a + 2)


def test_vjp_under_jit():
    @bt.jit
    def f(x, ct):
        out, vjp_fn = bt.vjp(bnp.exp, x)
        return out, vjp_fn(ct)[0]

    out, g = f(X, np.full(4, 2.0, np.float32))
    np.testing.assert_allclose(np.asarray(out), np.exp(X), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(g), 2 * np.exp(X), rtol=1e-6)


def test_vjp_integer_primal_gets_zero_cotangent():
    _, vjp_fn = bt.vjp(lambda x, n: x * n, X, np.int32(2))
    gx, gn = vjp_fn(np.ones(4, np.float32))
    np.testing.assert_allclose(np.asarray(gx), np.full(4, 2.0))
    assert np.asarray(gn).dtype == np.int32 and int(gn) == 0


def test_vjp_residuals_freed_when_vjp_fn_dies(no_gc):
    big = np.ones(1 << 16, np.float32)
    x = bt.device_put(big)
    before = bt.memory_stats()["bytes_in_use"]
    out, vjp_fn = bt.vjp(lambda x: bnp.tanh(x) * bnp.exp(x), x)
    held = bt.memory_stats()["bytes_in_use"]
    assert held > before  # output plus residuals
    bt.block_until_ready((out, vjp_fn(big)))  # work done: no holds in flight
    del out
    del vjp_fn  # by reference counting alone: the collector is off
    assert bt.memory_stats()["bytes_in_use"] == before


def test_vjp_cotangent_errors():
    _, vjp_fn = bt.vjp(lambda x: (x, x), X)
    with pytest.raises(TypeError, match="Tree structure of cotangent"):
        vjp_fn(np.ones(4, np.float32))
    _, vjp_fn = bt.vjp(lambda x: x, X)
    with pytest.raises(ValueError, match="shape"):
        vjp_fn(np.ones(3, np.float32))


# ---- errors ----


def test_grad_integer_input_raises_type_error():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        bt.grad(lambda x: bnp.sum(x))(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="int32"):
        bt.jit(bt.grad(lambda x: x * 2.0))(3)
    g = bt.grad(lambda x: bnp.sum(x * 2.0), allow_int=True)(
        np.arange(3, dtype=np.int32)
    )
    assert np.asarray(g).dtype == np.int32
    np.testing.assert_array_equal(np.asarray(g), [0, 0, 0])


def test_grad_non_scalar_output_raises_type_error():
    with pytest.raises(TypeError, match=r"Output had shape: \(4,\)"):
        bt.grad(lambda x: x * 2)(X)
    with pytest.raises(TypeError, match="scalar-output"):
        bt.grad(lambda x: (bnp.sum(x), bnp.sum(x)))(X)


def test_grad_integer_output_raises_type_error():
    with pytest.raises(TypeError, match="real-valued outputs"):
        bt.grad(lambda x: bnp.sum(x).astype(np.int32))(X)


def test_grad_argnums_out_of_range():
    with pytest.raises(TypeError, match="argnums"):
        bt.grad(lambda x: bnp.sum(x), argnums=1)(X)


def test_has_aux_requires_pair():
    with pytest.raises(TypeError, match="two-element tuple"):
        bt.grad(lambda x: bnp.sum(x), has_aux=True)(X)


def test_python_control_flow_on_traced_value_raises_under_jit():
    def f(x):
        if x > 0:  # under jit a Tracer has no concrete value
            return x
        return -x

    with pytest.raises(TypeError, match="concrete value"):
        bt.jit(bt.grad(f))(1.0)
    # Eagerly grad knows its argument, as in JAX (test_concrete_values.py).
    assert float(bt.grad(f)(-2.0)) == -1.0


def test_escaped_tracer_raises():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2

    bt.grad(f)(1.0)
    with pytest.raises(RuntimeError, match="escaped"):
        leaked[0] + 1


def test_documentation_examples_run():
    """docs/transformations.md promises that its examples run as they are."""
    import pathlib
    import re

    doc = pathlib.Path(__file__).parents[2] / "docs" / "transformations.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)
    assert len(blocks) >= 8
    exec(compile("\n".join(blocks), str(doc), "exec"), {})
