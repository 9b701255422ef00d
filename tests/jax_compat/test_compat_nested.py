"""Nested transformations, pytrees, argnums/has_aux and Python scalars,
baton against JAX: grad of grad, vmap of grad, grad of vmap, jit of both,
forward-over-reverse, jacfwd of jacrev, closures over outer tracers."""

from __future__ import annotations

import numpy as np
import pytest
from _jaxcompat import BATON, JAX, rng_floats, run_both

X = rng_floats(1, (3,), -1, 1)
M = rng_floats(2, (3, 4))
XB = rng_floats(3, (5, 3), -1, 1)  # a batch of five X


def _f(L):
    np_ = L.np

    def f(x):
        return np_.sum(np_.tanh(x) * np_.sin(2 * x) + x**3 / 3)

    return f


def test_grad_of_grad_of_tanh_python_scalar():
    # The docs' first example: third derivative of tanh at a Python float.
    run_both(lambda L: lambda: L.api.grad(L.api.grad(L.api.grad(L.np.tanh)))(2.0))


def test_higher_derivatives_of_polynomial():
    def build(L):
        f = lambda x: x**3 + 2 * x**2 - 3 * x + 1  # noqa: E731
        d1 = L.api.grad(f)
        d2 = L.api.grad(d1)
        d3 = L.api.grad(d2)
        d4 = L.api.grad(d3)
        return lambda: (d1(1.0), d2(1.0), d3(1.0), d4(1.0))

    run_both(build)


def test_grad_of_sum_of_grad():
    run_both(
        lambda L: lambda: L.api.grad(lambda x: L.np.sum(L.api.grad(_f(L))(x) ** 2))(X)
    )


def test_vmap_of_grad():
    run_both(lambda L: lambda: L.api.vmap(L.api.grad(_f(L)))(XB))


def test_grad_of_vmap():
    def build(L):
        per_row = L.api.vmap(_f(L))
        return lambda: L.api.grad(lambda xb: L.np.sum(per_row(xb) ** 2))(XB)

    run_both(build)


@pytest.mark.parametrize("order", ["jit_vmap_grad", "vmap_jit_grad", "jit_grad_vmap"])
def test_jit_of_both(order):
    def build(L):
        api = L.api
        if order == "jit_vmap_grad":
            g = api.jit(api.vmap(api.grad(_f(L))))
        elif order == "vmap_jit_grad":
            g = api.vmap(api.jit(api.grad(_f(L))))
        else:
            g = api.jit(api.grad(lambda xb: L.np.sum(api.vmap(_f(L))(xb))))
        return lambda: g(XB)

    run_both(build)


def test_forward_over_reverse_hvp():
    v = rng_floats(4, (3,))

    def build(L):
        def hvp(x, v):
            return L.api.jvp(L.api.grad(_f(L)), (x,), (v,))[1]

        return lambda: hvp(X, v)

    run_both(build)


def test_reverse_over_forward_hvp():
    v = rng_floats(4, (3,))

    def build(L):
        def hvp(x, v):
            return L.api.grad(lambda x: L.np.vdot(L.api.grad(_f(L))(x), v))(x)

        return lambda: hvp(X, v)

    run_both(build)


def test_grad_of_jvp():
    v = rng_floats(5, (3,))

    def build(L):
        def tangent_out(x):
            return L.api.jvp(_f(L), (x,), (v,))[1]

        return lambda: L.api.grad(tangent_out)(X)

    run_both(build)


def test_vjp_of_vjp():
    def build(L):
        g = lambda x: L.np.sin(x) * x  # noqa: E731

        def first(x, ct):
            return L.api.vjp(g, x)[1](ct)[0]

        def run():
            ct = np.float32([0.5, -1.0, 2.0])
            out, back = L.api.vjp(lambda x: first(x, ct), X)
            return out, back(np.float32([1.0, 2.0, 3.0]))

        return run

    run_both(build)


def test_jacfwd_of_jacrev_is_hessian():
    run_both(
        lambda L: (
            lambda: (
                L.api.jacfwd(L.api.jacrev(_f(L)))(X),
                L.api.jacrev(L.api.jacfwd(_f(L)))(X),
                L.api.hessian(_f(L))(X),
            )
        )
    )


def test_jacobian_of_vector_function():
    def build(L):
        def f(x, m):
            return L.np.tanh(x @ m)

        return lambda: (
            L.api.jacobian(f)(X, M),
            L.api.jacrev(f, argnums=1)(X, M),
            L.api.jacfwd(f, argnums=(0, 1))(X, M),
        )

    run_both(build)


def test_vmap_of_vmap_with_axes():
    a = rng_floats(6, (2, 3, 4))
    b = rng_floats(7, (4, 2))

    def build(L):
        inner = L.api.vmap(lambda x, y: L.np.sin(x) * y, in_axes=(0, None))
        outer = L.api.vmap(inner, in_axes=(0, 1), out_axes=1)
        return lambda: outer(a, b)

    run_both(build)


def test_vmap_of_jvp_and_jvp_of_vmap():
    t = rng_floats(8, (5, 3))

    def build(L):
        def f(x):
            return L.np.sin(x) * L.np.sum(x**2)

        per_lane = L.api.vmap(lambda x, v: L.api.jvp(f, (x,), (v,)))
        whole = lambda: L.api.jvp(L.api.vmap(f), (XB,), (t,))  # noqa: E731
        return lambda: (per_lane(XB, t), whole())

    run_both(build)


def test_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] at 1 = 1 (the closure over the outer x must not
    # leak the inner derivative).
    def build(L):
        def f(x):
            return x * L.api.grad(lambda y: x + y)(1.0)

        def g(x):
            return L.api.grad(lambda y: x * y**2)(x)  # 2 x^2 -> 4x

        return lambda: (L.api.grad(f)(1.0), L.api.grad(g)(1.5))

    run_both(build)


def test_pytree_arguments_and_outputs():
    params = {
        "w": rng_floats(9, (3, 4)),
        "b": rng_floats(10, (4,)),
        "layers": [rng_floats(11, (4,)), (rng_floats(12, ()), rng_floats(13, (2,)))],
    }

    def build(L):
        def loss(p, x):
            h = L.np.tanh(x @ p["w"] + p["b"])
            v, (s, u) = p["layers"]
            return L.np.sum(h * v) * s + L.np.sum(u**2)

        return lambda: (
            L.api.grad(loss)(params, X),
            L.api.value_and_grad(loss, argnums=(0, 1))(params, X),
            L.api.jacrev(lambda p: {"out": L.np.tanh(X @ p["w"])})(params),
        )

    run_both(build)


def test_has_aux():
    def build(L):
        def loss(x):
            y = L.np.sin(x)
            return L.np.sum(y**2), {"y": y, "n": L.np.sum(x)}

        return lambda: (
            L.api.grad(loss, has_aux=True)(X),
            L.api.value_and_grad(loss, has_aux=True)(X),
            L.api.jacrev(loss, has_aux=True)(X),
            L.api.jacfwd(loss, has_aux=True)(X),
        )

    run_both(build)


def test_vjp_has_aux():
    def build(L):
        def f(x):
            return L.np.sin(x) * 2, L.np.cos(x)

        def run():
            out, back, aux = L.api.vjp(f, X, has_aux=True)
            return out, back(np.ones(3, np.float32)), aux

        return run

    run_both(build)


def test_grad_with_respect_to_python_scalars_and_mixed_args():
    def build(L):
        def f(x, y, s):
            return L.np.sum(x * y) * s + s**2

        return lambda: L.api.grad(f, argnums=(0, 2))(X, X[::-1].copy(), 1.5)

    run_both(build)


def test_stop_gradient():
    def build(L):
        def f(x):
            return L.np.sum(x * L.lax.stop_gradient(x**2) + L.lax.stop_gradient(x))

        return lambda: (L.api.grad(f)(X), L.api.jvp(f, (X,), (X,)))

    run_both(build)


def test_eager_grad_of_jitted_function():
    def build(L):
        f = L.api.jit(_f(L))
        return lambda: (
            L.api.grad(f)(X),
            L.api.grad(L.api.grad(lambda x: f(x * 1.0)))(X[:1].reshape(())),
        )

    run_both(build)


# Errors as JAX raises them (the class, not the message).


def _raises_in_both(build, exc):
    for L in (JAX, BATON):
        with pytest.raises(exc):
            build(L)()


def test_grad_of_integer_input_is_type_error():
    _raises_in_both(
        lambda L: (
            lambda: L.api.grad(lambda x: L.np.sum(x * 2))(np.arange(3, dtype=np.int32))
        ),
        TypeError,
    )


def test_grad_of_non_scalar_output_is_type_error():
    _raises_in_both(lambda L: lambda: L.api.grad(lambda x: x * 2)(X), TypeError)


def test_vmap_size_mismatch_is_value_error():
    _raises_in_both(
        lambda L: lambda: L.api.vmap(lambda a, b: a + b)(XB, rng_floats(1, (4, 3))),
        ValueError,
    )
