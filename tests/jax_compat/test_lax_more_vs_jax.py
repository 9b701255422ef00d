"""bt.lax's further jax.lax names (associative_scan, reduce, index_take,
mulhi, scatter_apply, approx_max_k/min_k, ragged_dot, round's rounding
methods, dot_general's keywords, platform_dependent, composite, stage,
shape_as_value, optimization_barrier) and bt.scipy.signal against JAX:
the same values, shapes and dtypes, eagerly and under bt.jit, and
gradients where JAX defines them."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.signal as jsig  # noqa: E402

import baton as bt  # noqa: E402
import baton.lax as blax  # noqa: E402
import baton.numpy as bnp  # noqa: E402
import baton.scipy.signal as bsig  # noqa: E402

F32 = np.float32
RNG = np.random.default_rng(1)
jlax = jax.lax


def _close(b, j, rtol=1e-5, atol=1e-5):
    b, j = np.asarray(b), np.asarray(j)
    assert b.shape == j.shape, (b.shape, j.shape)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    np.testing.assert_allclose(b, j, rtol=rtol, atol=atol)


def _same(b, j, **tol):
    if isinstance(j, (tuple, list)):
        assert len(b) == len(j)
        for u, v in zip(b, j):
            _same(u, v, **tol)
    else:
        _close(b, j, **tol)


def _rand(shape):
    return RNG.standard_normal(shape).astype(F32)


# ---- associative_scan ----


@pytest.mark.parametrize("n", [1, 2, 7, 8])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_add(n, reverse):
    x = _rand((3, n))
    _close(
        blax.associative_scan(blax.add, x, reverse=reverse, axis=1),
        jlax.associative_scan(jlax.add, x, reverse=reverse, axis=1),
    )


def test_associative_scan_pytree_jit_and_grad():
    # A linear recurrence h_t = a_t h_{t-1} + b_t as pairs: the usual use.
    a, b = _rand((9, 2)) * 0.5, _rand((9, 2))

    def comb(np_mod):
        def f(x, y):
            return x[0] * y[0], y[0] * x[1] + y[1]

        return f

    got = blax.associative_scan(comb(bnp), (a, b))
    want = jlax.associative_scan(comb(jnp), (a, b))
    _same(got, want)
    _same(
        bt.jit(lambda u, v: blax.associative_scan(comb(bnp), (u, v), axis=-2))(a, b),
        want,
    )
    gb = bt.jit(
        bt.grad(
            lambda u, v: bnp.sum(blax.associative_scan(comb(bnp), (u, v))[1] ** 2),
            argnums=(0, 1),
        )
    )(a, b)
    gj = jax.grad(
        lambda u, v: jnp.sum(jlax.associative_scan(comb(jnp), (u, v))[1] ** 2),
        argnums=(0, 1),
    )(a, b)
    _same(gb, gj, rtol=1e-4, atol=1e-4)


# ---- reduce ----


def test_reduce_monoids():
    x = _rand((4, 5, 6))
    _close(blax.reduce(x, 0.0, blax.add, (1,)), jlax.reduce(x, 0.0, jlax.add, (1,)))
    _close(
        blax.reduce(x, -np.inf, blax.max, (0, 2)),
        jlax.reduce(x, -np.inf, jlax.max, (0, 2)),
    )
    _close(
        blax.reduce(x, np.inf, blax.min, (2,)), jlax.reduce(x, np.inf, jlax.min, (2,))
    )
    _close(blax.reduce(x, 1.0, blax.mul, (0,)), jlax.reduce(x, 1.0, jlax.mul, (0,)))
    xi = RNG.integers(-9, 9, (4, 5)).astype(np.int32)
    _close(blax.reduce(xi, 0, blax.add, (0,)), jlax.reduce(xi, 0, jlax.add, (0,)))
    xb = xi > 0
    _close(
        blax.reduce(xb, True, blax.bitwise_and, (1,)),
        jlax.reduce(xb, True, jlax.bitwise_and, (1,)),
    )
    _close(
        blax.reduce(xb, False, blax.bitwise_or, (0, 1)),
        jlax.reduce(xb, False, jlax.bitwise_or, (0, 1)),
    )
    g = bt.jit(bt.grad(lambda a: bnp.sum(blax.reduce(a, 0.0, blax.add, (1,)) ** 2)))(x)
    _close(g, jax.grad(lambda a: jnp.sum(jlax.reduce(a, 0.0, jlax.add, (1,)) ** 2))(x))


def test_reduce_general_computation_and_several_operands():
    x = _rand((5, 7))
    idx = np.arange(35, dtype=np.int32).reshape(5, 7)

    def argmax(np_mod):
        def f(a, b):
            take = a[0] >= b[0]
            return np_mod.where(take, a[0], b[0]), np_mod.where(take, a[1], b[1])

        return f

    got = blax.reduce((x, idx), (-np.inf, 0), argmax(bnp), (1,))
    want = jlax.reduce((x, idx), (-np.inf, 0), argmax(jnp), (1,))
    _same(got, want)
    got = bt.jit(lambda a, i: blax.reduce((a, i), (-np.inf, 0), argmax(bnp), (0, 1)))(
        x, idx
    )
    _same(got, jlax.reduce((x, idx), (-np.inf, 0), argmax(jnp), (0, 1)))
    # An elementwise computation baton does not recognise.
    _close(
        blax.reduce(x, -np.inf, lambda a, b: bnp.logaddexp(a, b), (0,)),
        jlax.reduce(x, -np.inf, lambda a, b: jnp.logaddexp(a, b), (0,)),
    )


# ---- indexing ----


def test_index_take():
    src = _rand((4, 5, 6))
    i = np.array([1, -1, 3, 9], np.int32)
    j = np.array([0, 2, 2, 5], np.int32)
    _close(blax.index_take(src, (i, j), (0, 2)), jlax.index_take(src, (i, j), (0, 2)))
    _close(blax.index_take(src, (j,), (1,)), jlax.index_take(src, (j,), (1,)))
    f = bt.jit(lambda s, a, b: blax.index_take(s, (a, b), (1, 2)))
    _close(f(src, j, i), jlax.index_take(src, (j, i), (1, 2)))


def test_scatter_apply():
    dn = jlax.ScatterDimensionNumbers(
        update_window_dims=(),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
    )
    bdn = blax.ScatterDimensionNumbers(*dn)
    op = np.arange(6, dtype=F32)
    idx = np.array([[1], [3], [1], [9]], np.int32)  # 1 twice; 9 dropped
    _close(
        blax.scatter_apply(op, idx, lambda v: v * 2 + 1, bdn, update_shape=(4,)),
        jlax.scatter_apply(op, idx, lambda v: v * 2 + 1, dn, update_shape=(4,)),
    )
    _close(
        blax.scatter_apply(op, idx, bnp.exp, bdn, update_shape=(4,), mode="clip"),
        jlax.scatter_apply(op, idx, jnp.exp, dn, update_shape=(4,), mode="clip"),
    )
    f = bt.jit(
        lambda o, i: blax.scatter_apply(o, i, lambda v: -v, bdn, update_shape=(4,))
    )
    _close(f(op, idx), jlax.scatter_apply(op, idx, lambda v: -v, dn, update_shape=(4,)))


# ---- arithmetic ----


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32])
def test_mulhi(dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, 64, endpoint=True).astype(dtype)
    b = RNG.integers(info.min, info.max, 64, endpoint=True).astype(dtype)
    a[:4] = [info.min, info.max, 0, info.min]
    b[:4] = [info.min, info.max, info.max, 1]
    _close(blax.mulhi(a, b), jlax.mulhi(a, b), rtol=0, atol=0)
    _close(bt.jit(blax.mulhi)(a, b), jlax.mulhi(a, b), rtol=0, atol=0)


def test_round_methods():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, -3.7, 7.0, 1e30], F32)
    _close(blax.round(x), jlax.round(x), rtol=0, atol=0)
    for m in (0, 1):
        _close(
            blax.round(x, blax.RoundingMethod(m)),
            jlax.round(x, jlax.RoundingMethod(m)),
            rtol=0,
            atol=0,
        )
    _close(
        bt.jit(lambda v: blax.round(v, blax.RoundingMethod.TO_NEAREST_EVEN))(x),
        jlax.round(x, jlax.RoundingMethod.TO_NEAREST_EVEN),
        rtol=0,
        atol=0,
    )
    assert [m.name for m in blax.RoundingMethod] == [
        m.name for m in jlax.RoundingMethod
    ]
    assert [int(m) for m in blax.RoundingMethod] == [
        int(m) for m in jlax.RoundingMethod
    ]


def test_dot_general_keywords():
    a, b = _rand((2, 3, 4)), _rand((2, 4, 5))
    dn = (((2,), (1,)), ((0,), (0,)))
    _close(
        blax.dot_general(
            a,
            b,
            dn,
            precision=blax.Precision.HIGHEST,
            preferred_element_type=np.float32,
        ),
        jlax.dot_general(
            a,
            b,
            dn,
            precision=jlax.Precision.HIGHEST,
            preferred_element_type=np.float32,
        ),
    )
    ai = RNG.integers(-9, 9, (3, 4)).astype(np.int8)
    bi = RNG.integers(-9, 9, (4, 2)).astype(np.int8)
    dn2 = (((1,), (0,)), ((), ()))
    _close(
        blax.dot_general(ai, bi, dn2, preferred_element_type=np.int32),
        jlax.dot_general(ai, bi, dn2, preferred_element_type=np.int32),
    )


# ---- top-k and ragged products ----


def test_approx_max_min_k():
    x = _rand((5, 11))
    _same(blax.approx_max_k(x, 3), jlax.approx_max_k(x, 3))
    _same(blax.approx_min_k(x, 4), jlax.approx_min_k(x, 4))
    _same(
        blax.approx_max_k(x, 2, reduction_dimension=0, recall_target=0.9),
        jlax.approx_max_k(x, 2, reduction_dimension=0, recall_target=0.9),
    )
    # JAX takes floats only; baton also integers (here numpy's order).
    xi = RNG.permutation(36).reshape(4, 9).astype(np.int32) - 18
    vals, idx = blax.approx_min_k(xi, 3)
    want_idx = np.argsort(xi, axis=1, kind="stable")[:, :3].astype(np.int32)
    _close(idx, want_idx, rtol=0, atol=0)
    _close(vals, np.take_along_axis(xi, want_idx, 1), rtol=0, atol=0)
    _same(
        bt.jit(lambda v: blax.approx_min_k(v, 2, reduction_dimension=0))(x),
        jlax.approx_min_k(x, 2, reduction_dimension=0),
    )
    g = bt.jit(bt.grad(lambda v: bnp.sum(blax.approx_max_k(v, 3)[0] ** 2)))(x)
    _close(g, jax.grad(lambda v: jnp.sum(jlax.approx_max_k(v, 3)[0] ** 2))(x))


def test_ragged_dot():
    lhs, rhs = _rand((10, 4)), _rand((3, 4, 5))
    for sizes in ([3, 0, 5], [10, 0, 0], [2, 2, 2]):
        gs = np.array(sizes, np.int32)
        _close(blax.ragged_dot(lhs, rhs, gs), jlax.ragged_dot(lhs, rhs, gs))
    gs = np.array([4, 1, 5], np.int32)
    _close(bt.jit(blax.ragged_dot)(lhs, rhs, gs), jlax.ragged_dot(lhs, rhs, gs))
    gb = bt.jit(
        bt.grad(lambda a, b: bnp.sum(blax.ragged_dot(a, b, gs) ** 2), argnums=(0, 1))
    )(lhs, rhs)
    gj = jax.grad(lambda a, b: jnp.sum(jlax.ragged_dot(a, b, gs) ** 2), argnums=(0, 1))(
        lhs, rhs
    )
    _same(gb, gj, rtol=1e-4, atol=1e-4)


# ---- program structure ----


@pytest.mark.cpu_default_device  # the branch taken is the platform's
def test_platform_dependent():
    x = _rand((4,))
    kw = dict(cpu=lambda v: v * 2.0, cuda=lambda v: v * 3.0, default=lambda v: v - 1.0)
    jkw = dict(cpu=lambda v: v * 2.0, cuda=lambda v: v * 3.0, default=lambda v: v - 1.0)
    want = jlax.platform_dependent(x, **jkw)  # JAX on CPU here
    assert bt.default_backend() == "cpu"
    _close(blax.platform_dependent(x, **kw), want)
    _close(bt.jit(lambda v: blax.platform_dependent(v, **kw))(x), want)
    _close(
        blax.platform_dependent(x, tpu=lambda v: v, default=lambda v: v + 5.0),
        jlax.platform_dependent(x, tpu=lambda v: v, default=lambda v: v + 5.0),
    )
    with pytest.raises(ValueError, match="cuda"):
        blax.platform_dependent(x, gpu=lambda v: v)


def test_composite_stage_shape_as_value_barrier():
    x = _rand((3, 4))

    def body(np_mod):
        return lambda v, s: np_mod.tanh(v) * s

    bc = blax.composite(body(bnp), name="my.tanh_scale", version=1)
    jc = jlax.composite(body(jnp), name="my.tanh_scale", version=1)
    _close(bc(x, 2.0), jc(x, 2.0))
    _close(bt.jit(bc)(x, 2.0), jc(x, 2.0))
    # JAX's composite has no JVP rule; baton's differentiates its body.
    _close(
        bt.jit(bt.grad(lambda v: bnp.sum(bc(v, 2.0))))(x),
        jax.grad(lambda v: jnp.sum(body(jnp)(v, 2.0)))(x),
    )

    _close(blax.stage(x), jlax.stage(x))
    _close(
        bt.jit(lambda v: blax.stage(v) + 1)(x), jax.jit(lambda v: jlax.stage(v) + 1)(x)
    )
    _close(blax.shape_as_value((2, 3, 5)), jlax.shape_as_value((2, 3, 5)))

    pair = (x, x * 2)
    _same(blax.optimization_barrier(pair), jlax.optimization_barrier(pair))
    f = bt.jit(lambda v: bnp.sum(blax.optimization_barrier((v, v + 1))[1]))
    _close(
        f(x), jax.jit(lambda v: jnp.sum(jlax.optimization_barrier((v, v + 1))[1]))(x)
    )


# ---- bt.scipy.signal ----

SIGNAL_SHAPES = [
    ((9,), (4,)),
    ((3,), (8,)),
    ((5, 6), (2, 3)),
    ((2, 3), (5, 6)),
    ((4, 5, 6), (2, 2, 3)),
]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", range(len(SIGNAL_SHAPES)))
def test_convolve_correlate(mode, shapes):
    s1, s2 = SIGNAL_SHAPES[shapes]
    x, y = _rand(s1), _rand(s2)
    _close(bsig.convolve(x, y, mode), jsig.convolve(x, y, mode))
    _close(
        bsig.correlate(x, y, mode, method="direct"),
        jsig.correlate(x, y, mode, method="direct"),
    )
    if len(s1) == 2:
        _close(bsig.convolve2d(x, y, mode), jsig.convolve2d(x, y, mode))
        _close(bsig.correlate2d(x, y, mode), jsig.correlate2d(x, y, mode))


def test_signal_jit_grad_vmap_and_dtypes():
    x, y = _rand((12,)), _rand((5,))
    _close(
        bt.jit(lambda a, b: bsig.correlate(a, b, "same"))(x, y),
        jsig.correlate(x, y, "same"),
    )
    gb = bt.jit(
        bt.grad(lambda a, b: bnp.sum(bsig.convolve(a, b) ** 2), argnums=(0, 1))
    )(x, y)
    gj = jax.grad(lambda a, b: jnp.sum(jsig.convolve(a, b) ** 2), argnums=(0, 1))(x, y)
    _same(gb, gj, rtol=1e-4, atol=1e-4)
    xs = _rand((3, 12))
    _close(
        bt.vmap(lambda a: bsig.convolve(a, y, "valid"))(xs),
        jax.vmap(lambda a: jsig.convolve(a, y, "valid"))(xs),
    )
    xi = np.arange(10, dtype=np.int32)
    _close(bsig.convolve(xi, xi[:3]), jsig.convolve(xi, xi[:3]))
    a2, b2 = _rand((6, 5)), _rand((3, 2))
    g2 = bt.jit(bt.grad(lambda a: bnp.sum(bsig.correlate2d(a, b2, "same") ** 2)))(a2)
    _close(
        g2,
        jax.grad(lambda a: jnp.sum(jsig.correlate2d(a, b2, "same") ** 2))(a2),
        rtol=1e-4,
        atol=1e-4,
    )


def test_signal_errors():
    x = _rand((5, 6))
    with pytest.raises(NotImplementedError, match="fill"):
        bsig.convolve2d(x, x[:2, :2], boundary="wrap")
    with pytest.raises(ValueError, match="2-dimensional"):
        bsig.convolve2d(x[0], x[0])
    with pytest.raises(ValueError, match="smaller than the other"):
        bsig.convolve(_rand((5, 2)), _rand((2, 5)))
    with pytest.raises(ValueError, match="mode"):
        bsig.convolve(x, x, "middle")
    with pytest.raises(ValueError, match="method"):
        bsig.convolve(x, x, method="magic")


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(type="constant"),
        dict(axis=0),
        dict(axis=0, type="constant"),
        dict(bp=[5, 12, 19]),
        dict(bp=3),
        dict(bp=[1, 19]),  # one-point segments
    ],
)
def test_detrend(kw):
    z = _rand((4, 20)) + np.linspace(0, 5, 20, dtype=F32)
    _close(bsig.detrend(z, **kw), jsig.detrend(z, **kw), rtol=2e-5, atol=2e-5)


def test_detrend_jit_grad_and_ints():
    z = _rand((3, 16)) + np.linspace(-2, 3, 16, dtype=F32)
    _close(
        bt.jit(lambda a: bsig.detrend(a, bp=[7]))(z),
        jsig.detrend(z, bp=[7]),
        rtol=2e-5,
        atol=2e-5,
    )
    g = bt.jit(bt.grad(lambda a: bnp.sum(bsig.detrend(a) ** 3)))(z)
    _close(
        g, jax.grad(lambda a: jnp.sum(jsig.detrend(a) ** 3))(z), rtol=1e-4, atol=1e-4
    )
    zi = np.arange(12, dtype=np.int32) ** 2
    _close(bsig.detrend(zi), jsig.detrend(zi), rtol=1e-4, atol=1e-4)


# ---- implicitly differentiated solves ----


def _spd(n):
    m = _rand((n, n))
    return (m @ m.T + n * np.eye(n)).astype(F32)


def _cg(L, np_mod, iters=30):
    """A conjugate-gradient solver written with while_loop (not
    differentiable through its iterations in JAX)."""

    def solve(matvec, b):
        def body(s):
            x, r, p, rs, i = s
            ap = matvec(p)
            alpha = rs / np_mod.sum(p * ap)
            x = x + alpha * p
            r = r - alpha * ap
            rs2 = np_mod.sum(r * r)
            p = r + (rs2 / np_mod.maximum(rs, 1e-30)) * p
            return x, r, p, rs2, i + 1

        x0 = b * 0.0
        s = (x0, b, b, np_mod.sum(b * b), 0)
        return L.while_loop(lambda s: (s[4] < iters) & (s[3] > 1e-20), body, s)[0]

    return solve


@pytest.mark.parametrize("solver", ["direct", "cg"])
def test_custom_linear_solve(solver):
    a, b = _spd(4), _rand((4,))
    w = np.arange(1.0, 5.0, dtype=F32)

    def loss(L, np_mod):
        def f(a, b):
            def mv(x):
                return a @ x

            if solver == "direct":

                def solve(_, y):
                    return np_mod.linalg.solve(a, y)

                x = L.custom_linear_solve(
                    mv, b, solve, lambda _, y: np_mod.linalg.solve(a.T, y)
                )
            else:
                x = L.custom_linear_solve(mv, b, _cg(L, np_mod), symmetric=True)
            return np_mod.sum(np_mod.sin(x) * w)

        return f

    _close(loss(blax, bnp)(a, b), loss(jlax, jnp)(a, b), rtol=1e-4, atol=1e-5)
    _close(bt.jit(loss(blax, bnp))(a, b), loss(jlax, jnp)(a, b), rtol=1e-4, atol=1e-5)
    gb = bt.jit(bt.grad(loss(blax, bnp), argnums=(0, 1)))(a, b)
    gj = jax.grad(loss(jlax, jnp), argnums=(0, 1))(a, b)
    _same(gb, gj, rtol=1e-3, atol=1e-4)


def test_custom_linear_solve_has_aux_and_pytrees():
    a1, a2, b1, b2 = _spd(3), _spd(2), _rand((3,)), _rand((2,))

    def loss(L, np_mod):
        def f(a1, a2, b1, b2):
            def mv(x):
                return a1 @ x[0], a2 @ x[1]

            def solve(_, y):
                return (
                    np_mod.linalg.solve(a1, y[0]),
                    np_mod.linalg.solve(a2, y[1]),
                ), np_mod.sum(y[0])

            def tsolve(_, y):
                return (
                    np_mod.linalg.solve(a1.T, y[0]),
                    np_mod.linalg.solve(a2.T, y[1]),
                ), 0.0

            (x1, x2), aux = L.custom_linear_solve(
                mv, (b1, b2), solve, tsolve, has_aux=True
            )
            return np_mod.sum(x1**2) + np_mod.sum(x2**3) + aux

        return f

    args = (a1, a2, b1, b2)
    _close(bt.jit(loss(blax, bnp))(*args), loss(jlax, jnp)(*args), rtol=1e-4, atol=1e-5)
    gb = bt.jit(bt.grad(loss(blax, bnp), argnums=(0, 1, 2, 3)))(*args)
    gj = jax.grad(loss(jlax, jnp), argnums=(0, 1, 2, 3))(*args)
    _same(gb, gj, rtol=1e-3, atol=1e-4)


def test_custom_root():
    def loss(L, np_mod):
        def g(a, c):
            def f(x):
                return x**3 + c * x - a  # a root in x for each (a, c)

            def newton(f, x0):
                def body(s):
                    x, i = s
                    fx = f(x)
                    return x - fx / (3 * x**2 + c), i + 1

                return L.while_loop(lambda s: s[1] < 30, body, (x0, 0))[0]

            def tangent_solve(g, y):
                return y / g(np_mod.ones_like(y))

            x = L.custom_root(f, np_mod.ones_like(a), newton, tangent_solve)
            return np_mod.sum(x * np_mod.arange(1.0, 4.0))

        return g

    a, c = np.array([1.0, 2.0, 9.0], F32), np.array([1.0, 0.5, 2.0], F32)
    _close(bt.jit(loss(blax, bnp))(a, c), loss(jlax, jnp)(a, c), rtol=1e-5, atol=1e-5)
    gb = bt.jit(bt.grad(loss(blax, bnp), argnums=(0, 1)))(a, c)
    gj = jax.grad(loss(jlax, jnp), argnums=(0, 1))(a, c)
    _same(gb, gj, rtol=1e-4, atol=1e-5)


RAGGED_CASES = [
    # ragged non-contracting dimension, batched, group sizes per batch
    (
        (2, 7, 3),
        (3, 2, 3, 4),
        [[2, 3, 1], [0, 7, 0]],
        ((((2,), (2,)), ((0,), (1,))), (1,), (0,)),
    ),
    # the same with group sizes broadcast
    ((2, 7, 3), (3, 2, 3, 4), [2, 3, 1], ((((2,), (2,)), ((0,), (1,))), (1,), (0,))),
    # ragged_dot's layout
    ((7, 3), (3, 3, 4), [2, 3, 1], ((((1,), (1,)), ((), ())), (0,), (0,))),
    # an outer non-contracting dimension with its own group sizes
    (
        (3, 6, 2),
        (2, 2, 4),
        [[1, 5], [3, 3], [0, 2]],
        ((((2,), (1,)), ((), ())), (1,), (0,)),
    ),
    # ragged contracting dimension: one product per group
    ((4, 7), (7, 5), [2, 3, 1], ((((1,), (0,)), ((), ())), (1,), ())),
    (
        (2, 4, 7),
        (2, 7, 5),
        [[2, 3, 1], [7, 0, 0]],
        ((((2,), (1,)), ((0,), (0,))), (2,), ()),
    ),
    # ragged batch dimension
    ((6, 4, 3), (6, 3, 5), [2, 3], ((((2,), (1,)), ((0,), (0,))), (0,), ())),
]


@pytest.mark.parametrize("i", range(len(RAGGED_CASES)))
def test_ragged_dot_general(i):
    ls, rs, sizes, dn = RAGGED_CASES[i]
    lhs, rhs, gs = _rand(ls), _rand(rs), np.array(sizes, np.int32)
    jdn, bdn = jlax.RaggedDotDimensionNumbers(*dn), blax.RaggedDotDimensionNumbers(*dn)
    want = jlax.ragged_dot_general(lhs, rhs, gs, jdn)
    _close(blax.ragged_dot_general(lhs, rhs, gs, bdn), want)
    _close(
        bt.jit(lambda a, b, g: blax.ragged_dot_general(a, b, g, bdn))(lhs, rhs, gs),
        want,
    )
    gb = bt.jit(
        bt.grad(
            lambda a, b: bnp.sum(blax.ragged_dot_general(a, b, gs, bdn) ** 2),
            argnums=(0, 1),
        )
    )(lhs, rhs)
    # JAX's reverse mode (and vmap) lack rules for most of these modes: the
    # product is bilinear, so the gradient of sum(out ** 2) with respect to
    # either operand is 2 J^T out, J taken column by column from JAX's
    # forward values on basis operands.
    out = np.asarray(want)

    def grad_of(fn, x):
        cols = [np.asarray(fn(e.reshape(x.shape))) for e in np.eye(x.size, dtype=F32)]
        return (
            (2 * np.tensordot(np.stack(cols), out, axes=out.ndim))
            .reshape(x.shape)
            .astype(F32)
        )

    _close(
        gb[0],
        grad_of(lambda a: jlax.ragged_dot_general(a, rhs, gs, jdn), lhs),
        rtol=1e-4,
        atol=1e-4,
    )
    _close(
        gb[1],
        grad_of(lambda b: jlax.ragged_dot_general(lhs, b, gs, jdn), rhs),
        rtol=1e-4,
        atol=1e-4,
    )
    assert bdn == blax.RaggedDotDimensionNumbers(*dn) and hash(bdn) == hash(
        blax.RaggedDotDimensionNumbers(*dn)
    )
    assert bdn.dot_dimension_numbers == jdn.dot_dimension_numbers


def _bitwise_equal(b, j):
    b, j = np.asarray(b).astype(F32), np.asarray(j).astype(F32)
    assert b.shape == j.shape
    same = ((b == j) & (np.signbit(b) == np.signbit(j))) | (np.isnan(b) & np.isnan(j))
    assert same.all(), (b[~same][:5], j[~same][:5])


REDUCE_PRECISION_X = np.concatenate(
    [
        np.array(
            [
                np.nan,
                np.inf,
                -np.inf,
                0.0,
                -0.0,
                1.0,
                1.5,
                1.75,
                1.875,
                3.14159,
                65504.0,
                65520.0,
                70000.0,
                6e-5,
                6.1e-5,
                1e-5,
                -1e-5,
                1e-40,
                3e38,
                -2.5e-45,
                1.2e-38,
            ],
            F32,
        ),
        RNG.standard_normal(100).astype(F32)
        * F32(10.0) ** RNG.integers(-40, 38, 100).astype(F32),
    ]
)


@pytest.mark.parametrize(
    "bits", [(5, 10), (8, 7), (5, 0), (8, 23), (3, 2), (1, 1), (11, 52), (6, 1)]
)
def test_reduce_precision(bits):
    x = REDUCE_PRECISION_X
    want = jlax.reduce_precision(x, *bits)
    _bitwise_equal(blax.reduce_precision(x, *bits), want)
    _bitwise_equal(bt.jit(lambda v: blax.reduce_precision(v, *bits))(x), want)
    for dt in (np.float16, jnp.bfloat16):
        with np.errstate(over="ignore"):  # large values become infinities
            xd = x.astype(dt)
        got = blax.reduce_precision(xd, *bits)
        assert np.asarray(got).dtype == np.dtype(dt)
        _bitwise_equal(got, jlax.reduce_precision(xd, *bits))


def test_reduce_precision_gradient():
    # JAX's derivative rounds the cotangent as the value.
    x = REDUCE_PRECISION_X[5:13]
    w = np.linspace(0.3, 2.9, 8).astype(F32)
    got = bt.jit(bt.grad(lambda v: bnp.sum(blax.reduce_precision(v, 5, 2) * w)))(x)
    want = jax.grad(lambda v: jnp.sum(jlax.reduce_precision(v, 5, 2) * w))(x)
    _close(got, want, rtol=0, atol=0)
