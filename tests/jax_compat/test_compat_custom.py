"""custom_jvp and custom_vjp, baton against JAX: the JAX docs' examples
(log1pexp, clip_gradient, f(x, y) = sin(x) * y) under grad, jvp, vmap, jit
and nesting."""

from __future__ import annotations

import numpy as np
from _jaxcompat import rng_floats, run_both

X0 = rng_floats(1, (4,), -2, 2)
Y0 = rng_floats(2, (4,), -2, 2)


def _xy(L):
    """The inputs as L's arrays (JAX's custom rules reject numpy constants
    closed over by a jitted function)."""
    return L.np.asarray(X0), L.np.asarray(Y0)


def _log1pexp(L):
    np_ = L.np

    @L.api.custom_jvp
    def log1pexp(x):
        return np_.log(1.0 + np_.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        ans = log1pexp(x)
        ans_dot = (1 - 1 / (1 + np_.exp(x))) * x_dot
        return ans, ans_dot

    return log1pexp


def _sin_times_jvp(L):
    np_ = L.np

    @L.api.custom_jvp
    def f(x, y):
        return np_.sin(x) * y

    @f.defjvp
    def f_jvp(primals, tangents):
        x, y = primals
        x_dot, y_dot = tangents
        primal_out = f(x, y)
        tangent_out = np_.cos(x) * x_dot * y + np_.sin(x) * y_dot
        return primal_out, tangent_out

    return f


def _sin_times_vjp(L):
    np_ = L.np

    @L.api.custom_vjp
    def f(x, y):
        return np_.sin(x) * y

    def f_fwd(x, y):
        return f(x, y), (np_.cos(x), np_.sin(x), y)

    def f_bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)

    f.defvjp(f_fwd, f_bwd)
    return f


def _clip_gradient(L):
    from functools import partial

    @partial(L.api.custom_vjp, nondiff_argnums=(0, 1))
    def clip_gradient(lo, hi, x):
        return x  # identity function

    def clip_gradient_fwd(lo, hi, x):
        return x, None  # no residual values to save

    def clip_gradient_bwd(lo, hi, _, g):
        return (L.np.clip(g, lo, hi),)

    clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)
    return clip_gradient


def test_custom_jvp_log1pexp_grad_jvp_and_large_inputs():
    big = np.float32([10.0, 50.0, 100.0])  # where the naive derivative is nan

    def build(L):
        X, Y = _xy(L)
        big_ = L.np.asarray(big)
        f = _log1pexp(L)
        return lambda: (
            f(X),
            L.api.grad(lambda x: L.np.sum(f(x)))(X),
            L.api.grad(lambda x: L.np.sum(f(x)))(big_),
            L.api.jvp(f, (X,), (Y,)),
            L.api.vmap(L.api.grad(f))(X),
            L.api.jit(L.api.grad(lambda x: L.np.sum(f(x))))(X),
        )

    run_both(build)


def test_custom_jvp_two_args_and_second_order():
    def build(L):
        X, Y = _xy(L)
        f = _sin_times_jvp(L)
        s = lambda x, y: L.np.sum(f(x, y))  # noqa: E731
        return lambda: (
            L.api.grad(s, argnums=(0, 1))(X, Y),
            L.api.jvp(f, (X, Y), (Y, X)),
            L.api.grad(lambda x: L.np.sum(L.api.grad(s)(x, Y)))(X),
            L.api.jacrev(f)(X, Y),
            L.api.jacfwd(f, argnums=1)(X, Y),
        )

    run_both(build)


def test_custom_vjp_grad_vmap_jit():
    def build(L):
        X, Y = _xy(L)
        f = _sin_times_vjp(L)
        s = lambda x, y: L.np.sum(f(x, y))  # noqa: E731
        return lambda: (
            f(X, Y),
            L.api.grad(s, argnums=(0, 1))(X, Y),
            L.api.vmap(L.api.grad(lambda x, y: f(x, y)))(X, Y),
            L.api.jit(L.api.value_and_grad(s))(X, Y),
            L.api.jacrev(f)(X, Y),
        )

    run_both(build)


def test_custom_vjp_nondiff_argnums_clip_gradient():
    def build(L):
        X, _ = _xy(L)
        clip = _clip_gradient(L)
        return lambda: (
            L.api.grad(lambda x: L.np.sum(clip(-0.75, 0.75, L.np.sin(x) * 3)))(X),
            L.api.vmap(L.api.grad(lambda x: clip(-0.1, 0.1, x**2)))(X),
        )

    run_both(build)


def test_custom_vjp_inside_larger_program():
    w = rng_floats(3, (4, 3))

    def build(L):
        X, _ = _xy(L)
        f = _sin_times_vjp(L)

        def loss(x, w):
            h = f(x, x * 0.5)
            return L.np.sum(L.np.tanh(h @ w))

        return lambda: L.api.grad(loss, argnums=(0, 1))(X, w)

    run_both(build)
