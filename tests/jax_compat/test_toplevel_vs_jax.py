"""baton's additions to JAX's top level (baton._toplevel,
baton._toplevel_ad) against JAX: custom_gradient, closure_convert,
linearize, linear_transpose, disable_jit, typeof, enable_x64, the
environment queries and the small helpers."""

from __future__ import annotations

import numpy as np
import pytest
from _jaxcompat import BATON, JAX, assert_same, rng_floats, run_both

import baton as bt
import baton.numpy as bnp

X = rng_floats(0, (4,), -1, 1)


def test_custom_gradient_single_and_two_arguments():
    def build(L):
        np_ = L.np

        @L.api.custom_gradient
        def f(x):
            return np_.sin(x), lambda g: g * 3.0 * x  # not a tuple: one argument

        @L.api.custom_gradient
        def h(x, y):
            out = x * y
            return out, lambda g: (g * y * 10.0, g * np_.cos(x))

        @L.api.custom_gradient
        def clip(x):
            return x, lambda g: (np_.clip(g, -0.1, 0.1),)

        return lambda x: (
            f(x[0]),
            L.api.grad(f)(x[0]),
            L.api.grad(lambda x: np_.sum(L.api.vmap(f)(x)))(x),
            L.api.grad(h, argnums=(0, 1))(x[1], x[2]),
            L.api.jit(L.api.grad(lambda x: np_.sum(clip(x) * 5.0)))(x),
        )

    run_both(build, X)


def test_custom_gradient_none_cotangent_and_eager_grad():
    res = []
    for L in (BATON, JAX):

        @L.api.custom_gradient
        def f(x, y):
            return x * y, lambda g: (g * 2.0, None)

        res.append(L.api.grad(f, argnums=(0, 1))(3.0, 4.0))
    assert_same(res[0], res[1])


def test_closure_convert_inside_jit():
    def build(L):
        def outer(x, w):
            f = lambda z: L.np.sin(z) * w  # noqa: E731 -- closes over w
            conv, consts = L.api.closure_convert(f, x)
            return conv(x, *consts), len(consts)

        return lambda x: outer(x, x * 2.0)[0]

    run_both(build, X)
    for L in (BATON, JAX):
        f, consts = L.api.closure_convert(lambda z: z * 2.0, 1.0)
        assert consts == [] and float(f(3.0)) == 6.0


def test_linearize():
    def build(L):
        fn = lambda x, y: L.np.sin(x) * y  # noqa: E731
        return lambda x: (
            L.api.linearize(fn, x, x * 2.0)[0],
            L.api.linearize(fn, x, x * 2.0)[1](L.np.ones(4), x),
        )

    run_both(build, X)
    res = [
        L.api.linearize(lambda x: (x**2, x * 3), 2.0, has_aux=True)
        for L in (BATON, JAX)
    ]
    assert_same(
        (res[0][0], res[0][1](1.0), res[0][2]), (res[1][0], res[1][1](1.0), res[1][2])
    )


def test_linear_transpose():
    m = rng_floats(1, (3, 4))

    def build(L):
        f = lambda x: L.np.asarray(m) @ x * 2.0  # noqa: E731
        t = L.api.linear_transpose(f, L.api.ShapeDtypeStruct((4,), np.float32))
        g = lambda x, y: (x + y, x - y)  # noqa: E731
        tg = L.api.linear_transpose(g, X, X)
        return lambda c: (t(c), tg((c[:1].repeat(4), X)))

    run_both(build, rng_floats(2, (3,)))


def test_disable_jit_runs_python_op_by_op():
    seen = []

    @bt.jit
    def f(x):
        seen.append(type(x).__name__)
        if x.sum() > 0:  # Python control flow on a value: eager only
            return x * 2
        return x

    with bt.disable_jit():
        assert np.allclose(f(bnp.ones(3)), 2.0)
        # transformations still work inside the block
        assert float(bt.grad(lambda x: bnp.sum(x**2))(bnp.ones(2))[0]) == 2.0
    assert seen == ["Array"]
    with pytest.raises(bt.errors.TracerBoolConversionError):
        f(bnp.ones(3))  # traced again: bool of a Tracer
    assert seen[-1] == "Tracer"
    with bt.disable_jit(False):
        assert np.allclose(bt.jit(lambda x: x + 1)(bnp.ones(2)), 2.0)


def test_typeof_and_float0_and_aliases():
    import jax
    import jax.numpy as jnp

    for x_b, x_j in ((bnp.ones((2, 3)), jnp.ones((2, 3))), (1.0, 1.0)):
        tb, tj = bt.typeof(x_b), jax.typeof(x_j)
        assert tb.shape == tj.shape and tb.dtype == tj.dtype
        assert tb.weak_type == tj.weak_type
    assert bt.float0 == jax.float0
    assert (
        bt.P is bt.sharding.PartitionSpec
        and bt.NamedSharding is bt.sharding.NamedSharding
    )


def test_environment_queries():
    import jax

    assert bt.process_indices() == jax.process_indices() == [0]
    assert bt.host_count() == jax.host_count() == 1
    assert bt.host_id() == jax.host_id() == 0
    assert bt.host_ids() == jax.host_ids() == [0]
    with bt.default_device(bt.devices()[0]):
        assert bnp.ones(2).device == bt.devices()[0]
    with bt.default_device(None), bt.default_device("cpu"):
        assert bnp.ones(2).device == bt.devices("cpu")[0]


def test_enable_x64_context_manager():
    before = bt.config.read("enable_x64")
    with bt.enable_x64():
        assert bnp.asarray(np.ones(2)).dtype == np.float64
    assert bt.config.read("enable_x64") == before
    assert bnp.asarray(np.ones(2)).dtype == np.float32


def test_named_call_named_scope_ensure_compile_time_eval():
    def build(L):
        g = L.api.named_call(lambda x: x * 2.0, name="doubler")

        def f(x):
            with L.api.named_scope("block"):
                y = g(x)
            with L.api.ensure_compile_time_eval():
                c = L.np.sin(L.np.float32(1.0))
                n = 2 if c > 0.5 else 3  # a constant: concrete under jit
            return y * n

        return L.api.jit(f)

    run_both(build, X)
    assert bt.named_call(len, name="size").__name__ == "size"
    with pytest.raises(TypeError):
        with bt.named_scope(3):
            pass


def test_pure_callback_eager_and_refused_in_jit():
    import jax

    spec = jax.ShapeDtypeStruct((4,), np.float32)
    fn = lambda x: np.sort(x)  # noqa: E731
    b = bt.pure_callback(fn, bt.ShapeDtypeStruct((4,), np.float32), X)
    j = jax.pure_callback(fn, spec, X)
    assert_same(b, j)
    with pytest.raises(NotImplementedError):
        bt.jit(
            lambda x: bt.pure_callback(fn, bt.ShapeDtypeStruct((4,), np.float32), x)
        )(X)
    with pytest.raises(RuntimeError):
        bt.pure_callback(fn, bt.ShapeDtypeStruct((3,), np.float32), X)


def test_make_array_from_callback_and_copy_to_host_async():
    import jax

    data = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    b = bt.make_array_from_callback(
        (3, 4), bt.sharding.SingleDeviceSharding(bt.devices()[0]), lambda idx: data[idx]
    )
    j = jax.make_array_from_callback(
        (3, 4),
        jax.sharding.SingleDeviceSharding(jax.devices()[0]),
        lambda idx: data[idx],
    )
    assert_same(b, j)
    assert bt.copy_to_host_async(b) is None
