"""bt.custom_batching (custom_vmap, sequential_vmap) against
jax.custom_batching: the examples of JAX's docstrings, pytree arguments
and in_batched, outputs not batched (broadcast), nested vmap, jit, jvp,
custom_vjp / custom_jvp around custom_vmap, and the errors."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import custom_batching as jcb  # noqa: E402

import baton as bt  # noqa: E402
import baton.numpy as bnp  # noqa: E402
from baton import custom_batching as bcb  # noqa: E402

RNG = np.random.default_rng(0)


def _close(b, j, **tol):
    bl, jl = bt.tree.leaves(b), jax.tree_util.tree_leaves(j)
    assert bt.tree.structure(b).num_leaves == len(jl)
    assert len(bl) == len(jl)
    for u, v in zip(bl, jl):
        u, v = np.asarray(u), np.asarray(v)
        assert u.shape == v.shape, (u.shape, v.shape)
        assert u.dtype == v.dtype, (u.dtype, v.dtype)
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)


def _both(make):
    """``make(cb, np_module)`` built once with JAX's module, once with
    baton's."""
    return make(bcb, bnp), make(jcb, jnp)


def test_public_names_match_jax():
    names = {n for n in dir(jcb) if not n.startswith("_")}
    assert names <= set(dir(bcb))
    assert bt.custom_batching is bcb


# ---- JAX's docstring examples ----


def _docstring_add(cb, np_):
    @cb.custom_vmap
    def f(x, y):
        return x + y

    @f.def_vmap
    def f_vmap_rule(axis_size, in_batched, xs, ys):
        assert all(in_batched)
        assert xs.shape[0] == axis_size
        assert ys.shape[0] == axis_size
        out_batched = True
        return xs * ys, out_batched

    return f


def test_docstring_rule_replaces_batching():
    bf, jf = _both(_docstring_add)
    xs, ys = np.arange(3, dtype=np.int32), np.arange(1, 4, dtype=np.int32)
    out = bt.vmap(bf)(xs, ys)
    _close(out, jax.vmap(jf)(xs, ys))
    np.testing.assert_array_equal(out, xs * ys)  # the rule, not x + y
    # Outside vmap (and under jit) the function itself runs.
    _close(bf(bnp.asarray(xs), bnp.asarray(ys)), jf(xs, ys))
    _close(bt.jit(bf)(xs, ys), jax.jit(jf)(xs, ys))
    # jit inside vmap (inlined in baton) and vmap inside jit.
    _close(bt.vmap(bt.jit(bf))(xs, ys), jax.vmap(jax.jit(jf))(xs, ys))
    _close(bt.jit(bt.vmap(bf))(xs, ys), jax.jit(jax.vmap(jf))(xs, ys))


def _docstring_vjp(cb, np_):
    jit_ = bt if np_ is bnp else jax

    @jit_.custom_vjp
    @cb.custom_vmap
    def f(x, y):
        return np_.sin(x) * y

    @f.def_vmap
    def f_vmap_rule(axis_size, in_batched, xs, ys):
        return np_.cos(xs) * ys, True

    def f_fwd(x, y):
        return f(x, y), (np_.cos(x), np_.sin(x), y)

    def f_bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)

    f.defvjp(f_fwd, f_bwd)
    return f


def test_docstring_custom_vjp_around_custom_vmap():
    bf, jf = _both(_docstring_vjp)
    z, o = np.zeros(3, np.float32), np.ones(3, np.float32)
    out = bt.vmap(bf)(z, o)
    _close(out, jax.vmap(jf)(z, o))
    np.testing.assert_array_equal(out, [1.0, 1.0, 1.0])  # cos: the rule
    _close(bf(z, o), jf(z, o))  # sin: the function
    _close(
        bt.grad(bf)(np.float32(0), np.float32(1)),
        jax.grad(jf)(np.float32(0), np.float32(1)),
    )
    x, y = RNG.normal(size=4).astype(np.float32), RNG.normal(size=4).astype(np.float32)
    _close(bt.vmap(bf)(x, y), jax.vmap(jf)(x, y))
    # One argument unbatched: its cotangent is summed over the batch.
    _close(
        bt.vmap(bf, in_axes=(0, None))(x, np.float32(2)),
        jax.vmap(jf, in_axes=(0, None))(x, np.float32(2)),
    )
    bg = bt.grad(lambda x, y: bt.vmap(bf, in_axes=(0, None))(x, y).sum(), (0, 1))
    jg = jax.grad(lambda x, y: jax.vmap(jf, in_axes=(0, None))(x, y).sum(), (0, 1))
    _close(bg(x, np.float32(2)), jg(x, np.float32(2)))


def test_docstring_sequential_vmap():
    bf, jf = _both(lambda cb, np_: cb.sequential_vmap(lambda x: x + 1))
    xs = np.arange(3, dtype=np.int32)
    _close(bt.vmap(bf)(xs), jax.vmap(jf)(xs))
    _close(bf(xs), jf(xs))


# ---- the rule's arguments and results ----


def _pytree_fn(cb, np_, log):
    @cb.custom_vmap
    def f(d, s):
        return {"a": d["x"] * s, "b": np_.sum(d["y"])}

    @f.def_vmap
    def rule(axis_size, in_batched, d, s):
        log.append((axis_size, in_batched))
        s2 = s[:, None] if in_batched[1] else s
        # Different values from the function, so that the test sees the rule.
        return {"a": d["x"] * s2 + 100.0, "b": np_.sum(d["y"]) * 2}, {
            "a": True,
            "b": False,
        }

    return f


@pytest.mark.parametrize("s_axis", [None, 0])
def test_pytree_in_batched_and_unbatched_output(s_axis):
    blog, jlog = [], []
    bf = _pytree_fn(bcb, bnp, blog)
    jf = _pytree_fn(jcb, jnp, jlog)
    d = {
        "x": RNG.normal(size=(4, 3)).astype(np.float32),
        "y": RNG.normal(size=5).astype(np.float32),
    }
    s = np.float32(2) if s_axis is None else RNG.normal(size=4).astype(np.float32)
    in_axes = ({"x": 0, "y": None}, s_axis)
    out = bt.vmap(bf, in_axes=in_axes)(d, s)
    _close(out, jax.vmap(jf, in_axes=in_axes)(d, s))
    # "b" was not batched: broadcast along the batch axis.
    assert out["b"].shape == (4,)
    assert blog == jlog  # same axis_size and in_batched pytrees
    assert blog[-1] == (4, [{"x": True, "y": False}, s_axis == 0])


def test_mapped_axis_not_first_and_out_axes():
    bf, jf = _both(_docstring_add)
    x = RNG.normal(size=(2, 5)).astype(np.float32)
    y = RNG.normal(size=(5, 2)).astype(np.float32)
    _close(
        bt.vmap(bf, in_axes=(1, 0), out_axes=1)(x, y),
        jax.vmap(jf, in_axes=(1, 0), out_axes=1)(x, y),
    )


def test_rule_not_called_when_nothing_is_batched():
    def make(cb, np_):
        @cb.custom_vmap
        def f(x):
            return x * 3.0

        @f.def_vmap
        def rule(axis_size, in_batched, x):
            raise AssertionError("rule called")

        return lambda i, c: f(c) + i

    bf, jf = _both(make)
    i, c = np.arange(3, dtype=np.float32), np.float32(2)
    _close(bt.vmap(bf, in_axes=(0, None))(i, c), jax.vmap(jf, in_axes=(0, None))(i, c))


def _sin_rule_cos(cb, np_):
    @cb.custom_vmap
    def f(x):
        return np_.sin(x)

    @f.def_vmap
    def rule(axis_size, in_batched, x):
        return np_.cos(x), in_batched[0]

    return f


def test_several_calls_chained():
    bf, jf = _both(_sin_rule_cos)
    x = RNG.normal(size=5).astype(np.float32)
    _close(
        bt.vmap(lambda x: bf(bf(x) * 2) + bf(x))(x),
        jax.vmap(lambda x: jf(jf(x) * 2) + jf(x))(x),
    )


def test_nested_vmap_uses_the_rule_at_each_level():
    def make(cb, np_, log):
        @cb.custom_vmap
        def f(x):
            return x + 1.0

        @f.def_vmap
        def rule(axis_size, in_batched, x):
            log.append((axis_size, tuple(x.shape)))
            return f(x) * 10.0, True  # f again: the outer level's rule

        return f

    blog, jlog = [], []
    bf, jf = make(bcb, bnp, blog), make(jcb, jnp, jlog)
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    _close(bt.vmap(bt.vmap(bf))(x), jax.vmap(jax.vmap(jf))(x))
    # axis_size and shapes the rule saw, in the order JAX calls it (baton
    # traces the inner vmap again for the outer level's call, so the inner
    # rule may run more than once).
    assert list(dict.fromkeys(blog)) == jlog == [(3, (3,)), (2, (2, 3))]
    _close(bt.vmap(bt.vmap(bf), in_axes=1)(x), jax.vmap(jax.vmap(jf), in_axes=1)(x))


def test_nested_sequential_vmap():
    bf, jf = _both(lambda cb, np_: cb.sequential_vmap(lambda x, y: np_.sin(x) * y))
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    y = RNG.normal(size=3).astype(np.float32)
    _close(
        bt.vmap(bt.vmap(bf, in_axes=(0, None)), in_axes=(0, None))(x, y[0]),
        jax.vmap(jax.vmap(jf, in_axes=(0, None)), in_axes=(0, None))(x, y[0]),
    )
    _close(
        bt.vmap(bt.vmap(bf), in_axes=(0, None))(x, y),
        jax.vmap(jax.vmap(jf), in_axes=(0, None))(x, y),
    )


def test_sequential_vmap_runs_once_per_example():
    seen = []

    @bcb.sequential_vmap
    def f(x):
        seen.append(tuple(x.shape))
        return bnp.sum(x) * 2.0

    x = RNG.normal(size=(4, 3)).astype(np.float32)
    out = bt.vmap(f)(x)
    np.testing.assert_allclose(out, x.sum(1) * 2, rtol=1e-5)
    # Traced on one example ((3,)), never on the batch ((4, 3)).
    assert seen and all(s == (3,) for s in seen)


# ---- differentiation ----


def test_jvp_uses_the_function_outside_vmap_and_the_rule_inside():
    bf, jf = _both(_sin_rule_cos)
    x, t = np.float32(0.7), np.float32(1.5)
    _close(bt.jvp(bf, (x,), (t,)), jax.jvp(jf, (x,), (t,)))
    xs = RNG.normal(size=3).astype(np.float32)
    ts = RNG.normal(size=3).astype(np.float32)
    _close(bt.jvp(bt.vmap(bf), (xs,), (ts,)), jax.jvp(jax.vmap(jf), (xs,), (ts,)))


def test_custom_jvp_around_custom_vmap():
    def make(cb, np_):
        t = bt if np_ is bnp else jax

        @t.custom_jvp
        @cb.custom_vmap
        def f(x):
            return np_.sin(x)

        @f.def_vmap
        def rule(axis_size, in_batched, x):
            return np_.cos(x), True

        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (tx,) = primals, tangents
            return f(x), 3.0 * tx

        return f

    bf, jf = _both(make)
    xs = RNG.normal(size=3).astype(np.float32)
    ts = RNG.normal(size=3).astype(np.float32)
    _close(bt.vmap(bf)(xs), jax.vmap(jf)(xs))
    _close(bt.jvp(bt.vmap(bf), (xs,), (ts,)), jax.jvp(jax.vmap(jf), (xs,), (ts,)))
    _close(bt.grad(lambda x: bf(x))(xs[0]), jax.grad(lambda x: jf(x))(xs[0]))


# ---- errors ----


def test_missing_rule():
    @bcb.custom_vmap
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No batching rule defined"):
        f(1.0)


def test_rule_output_structure_mismatch():
    def make(cb, np_):
        @cb.custom_vmap
        def f(x):
            return x, x

        @f.def_vmap
        def rule(axis_size, in_batched, x):
            return (x, x), True  # one flag for a pair

        return f

    bf, jf = _both(make)
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="do not match") as je:
        jax.vmap(jf)(x)
    with pytest.raises(ValueError, match="do not match") as be:
        bt.vmap(bf)(x)
    assert "structure of output value and output batching" in str(je.value)
    assert "structure of output value and output batching" in str(be.value)

    def make2(cb, np_):
        @cb.custom_vmap
        def f(x):
            return x, x

        @f.def_vmap
        def rule(axis_size, in_batched, x):
            return [x, x], [True, True]  # a list for a tuple

        return f

    bf, jf = _both(make2)
    with pytest.raises(ValueError, match="original custom-vmapped function"):
        jax.vmap(jf)(x)
    with pytest.raises(ValueError, match="original custom-vmapped function"):
        bt.vmap(bf)(x)


def test_inside_a_scan_the_rule_applies_as_in_jax():
    # JAX batches the scan body with the rule; baton batches a nested
    # trace's program whole, so a scan of known length whose body calls a
    # ruled function is unrolled in the vmapped function (each call batched
    # by its rule) -- was NotImplementedError.
    bf, jf = _both(_sin_rule_cos)
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    _close(bt.vmap(lambda x: bt.lax.map(bf, x))(x), jax.vmap(lambda x: jax.lax.map(jf, x))(x))


def test_inside_a_while_loop_the_rule_applies_as_in_jax():
    # The loop runs over the batched carry in the enclosing trace, its body
    # vmapped there, so the rule applies (was NotImplementedError).
    bf, jf = _both(_sin_rule_cos)
    x = RNG.normal(size=(2, 3)).astype(np.float32)

    def loop(f):
        return lambda x: jax.lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, f(c[1])), (0, x))

    _close(
        bt.vmap(lambda x: bt.lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, bf(c[1])), (0, x)))(x),
        jax.vmap(loop(jf))(x),
    )


def test_a_jvp_closing_over_a_batched_value_uses_the_rule():
    # The jvp is computed on the vmapped function, where the value it
    # closes over is batched (it was an error: the Tracer's trace had
    # finished).
    bf, jf = _both(_sin_rule_cos)
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    w = RNG.normal(size=3).astype(np.float32)
    _close(
        bt.vmap(lambda xi: bt.jvp(lambda v: bf(v * xi), (w,), (w,)))(x),
        jax.vmap(lambda xi: jax.jvp(lambda v: jf(v * xi), (w,), (w,)))(x),
    )


def test_inside_a_nested_transformation_is_refused():
    bf = _sin_rule_cos(bcb, bnp)
    x = np.ones((2, 3), np.float32)
    # custom_root's function is traced and batched whole: the rule cannot
    # apply inside it.
    with pytest.raises(NotImplementedError, match="custom batching rule"):
        bt.vmap(
            lambda x: bt.lax.custom_root(lambda y: bf(y) - x, x, lambda f, y0: y0, lambda f, y: y)
        )(x)


# ---- grad / jvp inside vmap ----


def test_vmap_of_grad_of_custom_vjp_around_custom_vmap():
    bf, jf = _both(_docstring_vjp)
    x = RNG.normal(size=4).astype(np.float32)
    y = RNG.normal(size=4).astype(np.float32)
    _close(bt.vmap(bt.grad(bf))(x, y), jax.vmap(jax.grad(jf))(x, y))
    _close(
        bt.vmap(bt.grad(bf, (0, 1)), in_axes=(0, None))(x, np.float32(2)),
        jax.vmap(jax.grad(jf, (0, 1)), in_axes=(0, None))(x, np.float32(2)),
    )
    _close(
        bt.vmap(bt.value_and_grad(bf, (0, 1)), in_axes=(None, 0))(np.float32(0.3), y),
        jax.vmap(jax.value_and_grad(jf, (0, 1)), in_axes=(None, 0))(np.float32(0.3), y),
    )

    def with_aux(f):
        return lambda x, y: (f(x, y), x * 2.0)

    _close(
        bt.vmap(bt.grad(with_aux(bf), has_aux=True))(x, y),
        jax.vmap(jax.grad(with_aux(jf), has_aux=True))(x, y),
    )


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_vmap_of_jvp_uses_the_rule(in_axes):
    bf, jf = _both(_sin_rule_cos)
    x = RNG.normal(size=3).astype(np.float32)
    t = RNG.normal(size=3).astype(np.float32)
    xa = x if in_axes[0] == 0 else x[0]
    ta = t if in_axes[1] == 0 else t[0]
    _close(
        bt.vmap(lambda x, t: bt.jvp(bf, (x,), (t,)), in_axes=in_axes)(xa, ta),
        jax.vmap(lambda x, t: jax.jvp(jf, (x,), (t,)), in_axes=in_axes)(xa, ta),
    )


def test_grad_of_scalar_check_under_vmap():
    bf, jf = _both(_docstring_vjp)
    x = np.ones((3, 2), np.float32)
    with pytest.raises(TypeError, match="scalar-output"):
        jax.vmap(jax.grad(jf))(x, x)
    with pytest.raises(TypeError, match="scalar-output"):
        bt.vmap(bt.grad(bf))(x, x)


# ---- reverse mode: refused, as in JAX ----


def _reverse_cases(t, np_, s, q):
    x = np.arange(3, dtype=np.float32)
    lax_ = t.lax
    return [
        ("grad(vmap(f))", lambda: t.grad(lambda x: t.vmap(s)(x).sum())(x)),
        ("grad(vmap(sequential))", lambda: t.grad(lambda x: t.vmap(q)(x).sum())(x)),
        ("grad, constant argument", lambda: t.grad(lambda x: x * s(2.0))(1.0)),
        (
            "grad of stop_gradient",
            lambda: t.grad(lambda x: x * lax_.stop_gradient(s(x)))(1.0),
        ),
        ("grad", lambda: t.grad(s)(1.0)),
        ("vjp", lambda: t.vjp(s, 1.0)),
        ("linearize", lambda: t.linearize(s, 1.0)[1](1.0)),
        ("jacrev", lambda: t.jacrev(s)(x)),
        ("jacfwd", lambda: t.jacfwd(s)(x)),
        ("hessian", lambda: t.hessian(s)(1.0)),
        ("grad(jit)", lambda: t.grad(t.jit(s))(1.0)),
        ("grad(checkpoint)", lambda: t.grad(t.checkpoint(s))(1.0)),
        ("vmap(grad)", lambda: t.vmap(t.grad(s))(x)),
    ]


def test_reverse_mode_refused_where_jax_refuses():
    bs, js = _both(_sin_rule_cos)
    bq, jq = _both(lambda cb, np_: cb.sequential_vmap(lambda x: np_.sin(x)))
    bcases = _reverse_cases(bt, bnp, bs, bq)
    jcases = _reverse_cases(jax, jnp, js, jq)
    for (_name, b), (_, j) in zip(bcases, jcases):
        try:
            want = j()
        except ValueError:
            with pytest.raises(ValueError, match="does not support reverse-mode"):
                b()
            continue
        _close(b(), want)
