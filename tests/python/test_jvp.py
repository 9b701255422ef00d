"""bt.jvp (forward mode) and the Jacobians built on the transformations:
bt.jacfwd, bt.jacrev (= bt.jacobian), bt.hessian, checked against analytic
numpy results; shapes and pytree nesting as in JAX."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

X = np.array([0.5, -1.0, 2.0], np.float32)


def f(x):
    return bnp.sin(x) * x[0]


def jac_f(x):
    j = np.diag(np.cos(x) * x[0])
    j[:, 0] += np.sin(x)
    return j


# ---- jvp ----


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_jvp_values(mode):
    t = np.array([1.0, 2.0, -1.0], np.float32)

    def run(x, t):
        return bt.jvp(f, (x,), (t,))

    if mode == "jit":
        run = bt.jit(run)
    out, tan = run(X, t)
    np.testing.assert_allclose(np.asarray(out), np.sin(X) * X[0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tan), jac_f(X) @ t, rtol=1e-5)


def test_jvp_pytrees_and_multiple_primals():
    def g(p, y):
        return {"u": p["a"] * y, "v": bnp.exp(p["b"])}

    p = {"a": X, "b": np.float32(0.5)}
    tp = {"a": np.ones(3, np.float32), "b": np.float32(2.0)}
    out, tan = bt.jvp(g, (p, X), (tp, np.zeros(3, np.float32)))
    np.testing.assert_allclose(np.asarray(out["u"]), X * X, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tan["u"]), X, rtol=1e-6)
    assert float(tan["v"]) == pytest.approx(2 * np.exp(0.5), rel=1e-6)


def test_jvp_has_aux_and_python_scalars():
    out, tan, aux = bt.jvp(lambda x: (x * x, x + 1), (3.0,), (1.0,), has_aux=True)
    assert float(out) == 9.0 and float(tan) == 6.0 and float(aux) == 4.0


def test_jvp_integer_primal_and_output():
    def g(x, n):
        return x * n, n * 2

    (_, _), (ty, tm) = bt.jvp(
        g, (X, np.int32(3)), (np.ones(3, np.float32), np.int32(0))
    )
    np.testing.assert_allclose(np.asarray(ty), np.full(3, 3.0))
    assert np.asarray(tm).dtype == np.int32 and int(tm) == 0  # no float0 in baton


def test_jvp_of_grad_is_hessian_vector_product():
    def loss(x):
        return bnp.sum(x**3)

    v = np.array([1.0, 0.0, 2.0], np.float32)
    _, hvp = bt.jvp(bt.grad(loss), (X,), (v,))
    np.testing.assert_allclose(np.asarray(hvp), 6 * X * v, rtol=1e-6)


def test_jvp_closure_over_outer_tracer():
    @bt.jit
    def g(x, w):
        return bt.jvp(lambda a: a * w, (x,), (bnp.ones_like(x),))[1]

    np.testing.assert_allclose(np.asarray(g(X, X * 2)), X * 2, rtol=1e-6)


@pytest.mark.x64  # 64-bit dtypes among the cases
def test_jvp_errors():
    with pytest.raises(TypeError, match="tuples or lists"):
        bt.jvp(f, X, X)
    with pytest.raises(TypeError, match="same tree structure"):
        bt.jvp(lambda a, b: a + b, (X, X), (X,))
    with pytest.raises(ValueError, match="shape"):
        bt.jvp(f, (X,), (np.ones(2, np.float32),))
    with pytest.raises(TypeError, match="dtype"):
        bt.jvp(f, (X,), (np.ones(3, np.float64),))


# ---- Jacobians ----


@pytest.mark.parametrize("jac", [bt.jacfwd, bt.jacrev, bt.jacobian])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_jacobian_values(jac, mode):
    j = jac(f)
    if mode == "jit":
        j = bt.jit(j)
    got = np.asarray(j(X))
    assert got.shape == (3, 3)
    np.testing.assert_allclose(got, jac_f(X), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("jac", [bt.jacfwd, bt.jacrev])
def test_jacobian_shapes_of_matrices(jac):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)

    def g(m):
        return bnp.sum(m * m, axis=1)  # (2,) from (2, 3)

    got = np.asarray(jac(g)(a))
    assert got.shape == (2, 2, 3)
    expected = np.zeros((2, 2, 3), np.float32)
    for i in range(2):
        expected[i, i] = 2 * a[i]
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("jac", [bt.jacfwd, bt.jacrev])
def test_jacobian_pytrees_and_argnums(jac):
    def g(x, y):
        return {"p": x * y, "s": bnp.sum(x)}

    y = np.array([2.0, 3.0, 4.0], np.float32)
    jx, jy = jac(g, argnums=(0, 1))(X, y)["p"]
    np.testing.assert_allclose(np.asarray(jx), np.diag(y))
    np.testing.assert_allclose(np.asarray(jy), np.diag(X))
    r = jac(g, argnums=1)(X, y)
    assert np.asarray(r["s"]).shape == (3,)
    np.testing.assert_allclose(np.asarray(r["s"]), np.zeros(3))


def test_jacobian_has_aux():
    j, aux = bt.jacrev(lambda x: (x * 2, bnp.sum(x)), has_aux=True)(X)
    np.testing.assert_allclose(np.asarray(j), 2 * np.eye(3))
    assert float(aux) == pytest.approx(float(np.sum(X)))
    j, aux = bt.jacfwd(lambda x: (x * 2, bnp.sum(x)), has_aux=True)(X)
    np.testing.assert_allclose(np.asarray(j), 2 * np.eye(3))
    assert float(aux) == pytest.approx(float(np.sum(X)))


def test_jacobian_of_scalar_input():
    d = bt.jacfwd(lambda s: bnp.stack([s, s * s]))(3.0)
    np.testing.assert_allclose(np.asarray(d), [1.0, 6.0])
    d = bt.jacrev(lambda s: bnp.stack([s, s * s]))(3.0)
    np.testing.assert_allclose(np.asarray(d), [1.0, 6.0])


def test_hessian():
    def g(x):
        return bnp.sum(x**3) + x[0] * x[1]

    h = np.asarray(bt.hessian(g)(X))
    expected = np.diag(6 * X)
    expected[0, 1] += 1
    expected[1, 0] += 1
    np.testing.assert_allclose(h, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(bt.jit(bt.hessian(g))(X)), expected, rtol=1e-5, atol=1e-6
    )


def test_jacobian_integer_input_raises():
    with pytest.raises(TypeError, match="real-valued inputs"):
        bt.jacfwd(lambda x: x * 2)(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="real-valued inputs"):
        bt.jacrev(lambda x: x * 2)(np.arange(3, dtype=np.int32))
