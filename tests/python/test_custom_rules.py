"""bt.custom_jvp and bt.custom_vjp: the rules are used by every
transformation (grad, jvp, vmap of grad, jit), the body everywhere else;
nondiff_argnums, pytrees, closures and JAX's errors."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

X = np.array([0.5, -1.0, 2.0], np.float32)


# ---- custom_jvp ----


@bt.custom_jvp
def scaled_sin(x):
    return bnp.sin(x)


@scaled_sin.defjvp
def _scaled_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return scaled_sin(x), 10.0 * t  # a deliberately "wrong" derivative


def test_custom_jvp_value_and_eager_call():
    np.testing.assert_allclose(np.asarray(scaled_sin(X)), np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(bt.jit(scaled_sin)(X)), np.sin(X), rtol=1e-6)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_custom_jvp_used_by_jvp_and_grad(mode):
    def run(x):
        _, t = bt.jvp(scaled_sin, (x,), (bnp.ones_like(x),))
        g = bt.grad(lambda x: bnp.sum(scaled_sin(x)))(x)
        return t, g

    if mode == "jit":
        run = bt.jit(run)
    t, g = run(X)
    np.testing.assert_allclose(np.asarray(t), np.full(3, 10.0))
    np.testing.assert_allclose(np.asarray(g), np.full(3, 10.0))


def test_custom_jvp_vmap_of_grad():
    g = bt.vmap(bt.grad(lambda x: scaled_sin(x) * 2))(X)
    np.testing.assert_allclose(np.asarray(g), np.full(3, 20.0))


def test_custom_jvp_numerically_stable_log1pexp():
    @bt.custom_jvp
    def log1pexp(x):
        return bnp.log(1.0 + bnp.exp(x))

    @log1pexp.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + bnp.exp(x)))

    g = bt.grad(log1pexp)(100.0)  # exp(100) overflows float32 in the naive rule
    assert float(g) == pytest.approx(1.0)


def test_custom_jvp_defjvps_and_multiple_arguments():
    @bt.custom_jvp
    def f(x, y):
        return x * y

    f.defjvps(lambda tx, out, x, y: tx * y * 2, lambda ty, out, x, y: ty * x * 3)
    gx, gy = bt.grad(f, argnums=(0, 1))(2.0, 5.0)
    assert float(gx) == 10.0 and float(gy) == 6.0


def test_custom_jvp_nondiff_argnums():
    f = bt.custom_jvp(lambda n, x: x**n, nondiff_argnums=(0,))
    f.defjvp(lambda n, p, t: (p[0] ** n, n * p[0] ** (n - 1) * t[0] * 100))
    assert float(f(3, 2.0)) == 8.0
    assert float(bt.grad(lambda x: f(3, x))(2.0)) == pytest.approx(1200.0)


def test_custom_jvp_pytree_output():
    @bt.custom_jvp
    def f(x):
        return {"a": x * 2, "b": (x * 3,)}

    @f.defjvp
    def _(p, t):
        return f(p[0]), {"a": t[0] * 7, "b": (t[0] * 11,)}

    out, tan = bt.jvp(f, (X,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(np.asarray(out["a"]), X * 2)
    np.testing.assert_allclose(np.asarray(tan["b"][0]), np.full(3, 11.0))


def test_custom_jvp_closure_over_traced_value_is_differentiated():
    # Beyond JAX (which raises): the closed-over y gets its derivative from
    # the body, x from the rule.
    def outer(y):
        @bt.custom_jvp
        def f(x):
            return x * y

        f.defjvp(lambda p, t: (f(p[0]), t[0] * 100.0))
        return bnp.sum(f(X))

    g = bt.grad(outer)(2.0)
    assert float(g) == pytest.approx(float(np.sum(X)), rel=1e-6)


def test_custom_rule_calls_appear_in_the_traced_program():
    from baton import _subtrace

    t = _subtrace.trace(
        lambda x: [scaled_sin(x) + clip_gradient(x)],
        [((3,), "float32", False, None)],
        "f",
    )
    text = t.program.as_text()
    assert 'kind=custom_jvp, name="scaled_sin"' in text
    assert 'kind=custom_vjp, name="clip_gradient"' in text


def test_custom_jvp_without_rule_raises():
    f = bt.custom_jvp(lambda x: x)
    with pytest.raises(AttributeError, match="No JVP defined"):
        bt.jit(f)(X)


def test_custom_jvp_rule_structure_mismatch_raises():
    f = bt.custom_jvp(lambda x: x * 2)
    f.defjvp(lambda p, t: ((p[0] * 2,), t[0]))
    with pytest.raises(TypeError, match="structure"):
        bt.jit(f)(X)


# ---- custom_vjp ----


@bt.custom_vjp
def clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (bnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_custom_vjp_used_by_grad(mode):
    g = bt.grad(lambda x: bnp.sum(clip_gradient(x) * 5.0))
    if mode == "jit":
        g = bt.jit(g)
    np.testing.assert_allclose(np.asarray(g(X)), np.ones(3))


def test_custom_vjp_residuals_and_value():
    @bt.custom_vjp
    def f(x, y):
        return bnp.sin(x) * y

    def fwd(x, y):
        return f(x, y), (bnp.cos(x), bnp.sin(x), y)

    def bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)

    f.defvjp(fwd, bwd)
    y = np.array([2.0, 3.0, 4.0], np.float32)
    np.testing.assert_allclose(np.asarray(f(X, y)), np.sin(X) * y, rtol=1e-6)
    gx, gy = bt.grad(lambda x, y: bnp.sum(f(x, y)), argnums=(0, 1))(X, y)
    np.testing.assert_allclose(np.asarray(gx), np.cos(X) * y, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gy), np.sin(X), rtol=1e-6)


def test_custom_vjp_none_cotangent_and_nondiff_argnums():
    g = bt.custom_vjp(lambda scale, x, z: x * scale + z, nondiff_argnums=(0,))
    g.defvjp(
        lambda scale, x, z: (x * scale + z, None),
        lambda scale, res, ct: (ct * scale * 10, None),
    )
    gx, gz = bt.grad(lambda x, z: bnp.sum(g(3.0, x, z)), argnums=(0, 1))(X, X)
    np.testing.assert_allclose(np.asarray(gx), np.full(3, 30.0))
    np.testing.assert_allclose(np.asarray(gz), np.zeros(3))


def test_custom_vjp_vmap_of_grad_and_grad_of_vmap():
    per_ex = bt.vmap(bt.grad(lambda x: clip_gradient(x) * 5.0))(X)
    np.testing.assert_allclose(np.asarray(per_ex), np.ones(3))
    g = bt.grad(lambda x: bnp.sum(bt.vmap(clip_gradient)(x) * 5.0))(X)
    np.testing.assert_allclose(np.asarray(g), np.ones(3))


def test_custom_vjp_closure_over_traced_value():
    def outer(w):
        @bt.custom_vjp
        def f(x):
            return x * w

        f.defvjp(lambda x: (f(x), None), lambda _, g: (g * 100.0,))
        return bnp.sum(f(X))

    g = bt.grad(outer)(2.0)  # d/dw sum(x * w) = sum(x), from the body
    assert float(g) == pytest.approx(float(np.sum(X)), rel=1e-6)


def test_custom_vjp_under_jvp_raises_type_error():
    with pytest.raises(TypeError, match="custom_vjp"):
        bt.jvp(clip_gradient, (X,), (X,))


def test_custom_vjp_bad_bwd_output_raises():
    f = bt.custom_vjp(lambda x: x)
    f.defvjp(lambda x: (x, None), lambda _, g: g)  # not a tuple
    with pytest.raises(TypeError, match="bwd rule"):
        bt.grad(lambda x: bnp.sum(f(x)))(X)


def test_custom_vjp_without_rule_raises():
    f = bt.custom_vjp(lambda x: x)
    with pytest.raises(AttributeError, match="No VJP defined"):
        f(X)
