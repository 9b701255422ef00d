"""custom_jvp and custom_vjp, baton against JAX: the JAX docs' examples
(log1pexp, clip_gradient, f(x, y) = sin(x) * y) under grad, jvp, vmap, jit
and nesting."""

from __future__ import annotations

import numpy as np
import pytest
from _jaxcompat import BATON, JAX, assert_same, rng_floats, run_both, to_host

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


# ---- regressions (tracker issue 41) ----


def _nested_vjp(L):
    """``inner`` (custom_vjp with a distinctive backward rule, 50 * ct)
    called in ``outer``'s forward rule, whose residual is inner's output:
    grad of grad differentiates that residual through inner's rule."""
    np_ = L.np

    @L.api.custom_vjp
    def inner(x):
        return np_.sin(x)

    inner.defvjp(lambda x: (np_.sin(x), x), lambda x, ct: (ct * 50.0,))

    @L.api.custom_vjp
    def outer(x):
        return np_.sin(x)

    def outer_fwd(x):
        y = inner(x)
        return y, y

    outer.defvjp(outer_fwd, lambda y, ct: (ct * y,))
    return outer


def test_custom_vjp_inside_custom_vjp_fwd_grad_of_grad():
    # Was 0.5403 (cos 1: inner's body differentiated, its rule ignored).
    def build(L):
        outer = _nested_vjp(L)
        gg = L.api.grad(L.api.grad(outer))
        return lambda x: (gg(x), L.api.jit(gg)(x))

    b, _ = run_both(build, np.float32(1.0))
    np.testing.assert_allclose(b[0], 50.0)


def test_custom_rules_on_a_value_an_outer_grad_differentiates():
    # The inner grad (over x) sees g(y) / h(y) as constants; the outer grad
    # (over y) must still use their rules.
    def build(L):
        np_ = L.np

        @L.api.custom_vjp
        def g(y):
            return np_.sin(y)

        g.defvjp(lambda y: (np_.sin(y), y), lambda y, ct: (ct * 50.0,))

        @L.api.custom_jvp
        def h(y):
            return np_.sin(y)

        h.defjvp(lambda p, t: (np_.sin(p[0]), 7.0 * t[0]))

        def d2(fn):
            return L.api.grad(lambda y: L.api.grad(lambda x, y: x * fn(y))(2.0, y))

        return lambda y: (d2(g)(y), d2(h)(y))

    run_both(build, np.float32(1.0))


def test_custom_jvp_rule_branching_on_a_value_under_eager_grad():
    # JAX evaluates eager grad's jvp rule on concrete values; under jit both
    # raise TracerBoolConversionError.
    def make(L):
        @L.api.custom_jvp
        def f(x):
            return L.np.abs(x)

        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            if x > 0:
                return f(x), 2.0 * t
            return f(x), -3.0 * t

        return f

    res = []
    for L in (BATON, JAX):
        f = make(L)
        res.append(
            (
                L.api.grad(f)(1.0),
                L.api.grad(f)(-1.0),
                L.api.value_and_grad(f)(0.5),
                # (JAX's tangent here is the rule's Python float: compare values)
                np.float32(L.api.jvp(f, (1.0,), (1.0,))[1]),
            )
        )
    assert_same(res[0], res[1])
    for L in (BATON, JAX):
        with pytest.raises(Exception, match=r"TracerBool|concrete"):
            L.api.jit(L.api.grad(make(L)))(1.0)


def test_custom_vjp_fwd_branching_on_a_value_under_eager_grad():
    def make(L):
        @L.api.custom_vjp
        def f(x):
            return x * 2.0

        def fwd(x):
            return x * 2.0, (3.0 if x > 0 else -4.0)

        f.defvjp(fwd, lambda r, ct: (r * ct,))
        return f

    res = [(L.api.grad(make(L))(1.0), L.api.grad(make(L))(-1.0)) for L in (BATON, JAX)]
    assert_same(res[0], res[1])


def test_zeros_like_of_weakly_typed_tracer():
    # Was TypeError: Tracer is not a Python scalar.
    def build(L):
        np_ = L.np
        like = (np_.zeros_like, np_.ones_like, np_.empty_like)
        return lambda: (
            *(L.api.jit(fn)(2.0).shape for fn in like),
            L.api.jit(np_.zeros_like)(2.0),
            L.api.jit(np_.ones_like)(3),
            L.api.jit(lambda x: np_.full_like(x, 7))(2.0),
            # weakly typed result: takes bfloat16 from the other operand
            L.api.jit(lambda x: np_.zeros_like(x) + np_.ones(2, np_.bfloat16))(2.0),
            L.api.jit(lambda x: np_.zeros_like(x, dtype=np_.int32))(2.0),
        )

    b = [to_host(r) for r in build(BATON)()]
    j = [to_host(r) for r in build(JAX)()]
    assert_same(tuple(b[3:]), tuple(j[3:]))
    assert b[:3] == j[:3]
