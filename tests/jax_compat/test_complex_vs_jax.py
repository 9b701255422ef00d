"""Complex numbers against JAX: dtypes and promotion, the elementwise
functions, reductions, dot products, numpy interop, jit, and the
transformations' conventions (grad of real-valued functions of complex
inputs, grad with holomorphic=True, jvp, vjp) -- the same values, shapes
and dtypes as jax.numpy on the same inputs."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402

import baton as bt  # noqa: E402
import baton.numpy as bjnp  # noqa: E402

C64 = np.complex64
RNG = np.random.default_rng(7)
Z = (RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))).astype(C64)
W = (RNG.normal(size=(4, 2)) - 1j * RNG.normal(size=(4, 2))).astype(C64)
ZS = np.array([1 + 2j, -0.5 + 0.3j, 2 - 1j, 1e-3 + 1e-4j], C64)
X = np.array([0.3, -1.2, 2.0, 0.0], np.float32)


def _close(b, j, rtol=2e-5, atol=2e-6):
    b, j = np.asarray(b), np.asarray(j)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    assert b.shape == j.shape, (b.shape, j.shape)
    np.testing.assert_allclose(b, j, rtol=rtol, atol=atol, equal_nan=True)


def _both(fn, *args, **tol):
    _close(fn(bjnp)(*args), fn(jjnp)(*args), **tol)
    _close(bt.jit(fn(bjnp))(*args), fn(jjnp)(*args), **tol)


# ---- dtypes and promotion ----


@pytest.mark.parametrize(
    "a, b",
    [
        (np.complex64, np.float32),
        (np.complex64, np.int32),
        (np.complex64, np.bool_),
        (np.complex64, np.float16),
        (np.complex64, "bfloat16"),
        (np.complex64, np.uint8),
    ],
)
def test_promotion_matches_jax(a, b):
    assert bjnp.promote_types(a, b) == jjnp.promote_types(a, b)
    assert bjnp.promote_types(b, a) == jjnp.promote_types(b, a)


def test_python_complex_scalars_are_weak():
    for x in (np.ones(3, np.float32), np.ones(3, np.float16), np.arange(3)):
        _close(bjnp.asarray(x) * 1j, jjnp.asarray(x) * 1j)
        _close(bjnp.asarray(x) + (2 - 1j), jjnp.asarray(x) + (2 - 1j))
    z = bjnp.asarray(ZS)
    _close(z * 2.5, jjnp.asarray(ZS) * 2.5)
    _close(z + 1, jjnp.asarray(ZS) + 1)
    assert bjnp.asarray(1j).dtype == jjnp.asarray(1j).dtype
    assert bjnp.asarray([1j, 2]).dtype == jjnp.asarray([1j, 2]).dtype


def test_numpy_interop_keeps_bits():
    b = bt.device_put(Z)
    assert b.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(b), Z)
    # complex128 is narrowed to complex64 with x64 off, as in JAX.
    assert bt.device_put(Z.astype(np.complex128)).dtype == np.complex64
    # Memory: 8 bytes an element.
    assert b.nbytes == Z.size * 8


def test_complex_of_parts_and_parts_of_complex():
    _both(lambda m: lambda x, y: jax.lax.complex(x, y) if m is jjnp else bt.lax.complex(x, y), X, X[::-1].copy())
    for name in ("real", "imag", "conj", "abs", "angle", "isreal", "iscomplex"):
        _both(lambda m, n=name: getattr(m, n), ZS)
    # On real data: real is the value, imag zeros, conj the value.
    for name in ("real", "imag", "conj"):
        _both(lambda m, n=name: getattr(m, n), X)


UNARY = [
    "negative", "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "arctan",
    "log1p", "expm1", "sign", "square", "reciprocal", "sinh", "cosh",
    "exp2", "log10", "log2", "arcsin", "arccos", "arcsinh", "arccosh", "arctanh",
]


@pytest.mark.parametrize("name", UNARY)
def test_unary_functions(name):
    _both(lambda m: getattr(m, name), ZS, rtol=5e-5, atol=5e-6)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power", "equal", "not_equal"])
def test_binary_functions(name):
    other = ZS[::-1].copy()
    _both(lambda m: getattr(m, name), ZS, other, rtol=5e-5, atol=5e-6)
    # Mixed with a real array.
    _both(lambda m: getattr(m, name), ZS, X, rtol=5e-5, atol=5e-6)


def test_reductions_and_dots():
    _both(lambda m: lambda z: m.sum(z, axis=1), Z)
    _both(lambda m: lambda z: m.prod(z, axis=0), Z, rtol=1e-4)
    _both(lambda m: lambda z: m.mean(z), Z)
    _both(lambda m: lambda z: m.var(z, axis=0), Z, rtol=1e-4)
    _both(lambda m: lambda z: m.std(z), Z, rtol=1e-4)
    _both(lambda m: lambda z: m.cumsum(z, axis=1), Z)
    _both(lambda m: lambda a, b: a @ b, Z, W, rtol=1e-4, atol=1e-5)
    _both(lambda m: lambda a, b: m.einsum("ij,jk->ik", a, b), Z, W, rtol=1e-4, atol=1e-5)
    _both(lambda m: lambda a: m.vdot(a, a[::-1]), ZS, rtol=1e-4)
    _both(lambda m: lambda a, b: m.vecdot(a, b), Z, Z[::-1].copy(), rtol=1e-4)
    _both(lambda m: lambda a, b: m.dot(a, b), Z, X, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "kw", [{}, {"ord": 1, "axis": 1}, {"ord": "fro"}, {"ord": np.inf}, {"axis": 0}, {"ord": 3, "axis": 1}]
)
def test_norms_of_complex_data(kw):
    _both(lambda m: lambda z: m.linalg.norm(z, **kw), Z, rtol=1e-5)


def test_data_movement():
    _both(lambda m: lambda z: m.transpose(z), Z)
    _both(lambda m: lambda z: m.concatenate([z, z[:, :1]], axis=1), Z)
    _both(lambda m: lambda z: z[::2, 1:3], Z)
    _both(lambda m: lambda z: m.where(m.abs(z) > 1, z, 0), Z)
    _both(lambda m: lambda z: m.pad(z, 1), Z)
    _both(lambda m: lambda z: z.reshape(4, 3), Z)
    _both(lambda m: lambda z: m.take(z, m.array([2, 0]), axis=1), Z)
    _both(lambda m: lambda z: m.asarray(z).at[1, 2].set(5j), Z)
    _both(lambda m: lambda z: m.asarray(z).at[0].add(1 + 1j), Z)
    _both(lambda m: lambda z: m.broadcast_to(z[:1], (5, 4)), Z)


def test_order_is_lexicographic_as_jax_numpy():
    a = np.array([1 + 2j, 1 + 1j, 0 + 5j, -1 - 1j], C64)
    b = np.array([1 + 1j, 1 + 2j, 0 + 5j, -1 + 0j], C64)
    for name in ("less", "less_equal", "greater", "greater_equal", "maximum", "minimum"):
        _both(lambda m, n=name: getattr(m, n), a, b)
    _both(lambda m: lambda z: m.max(z), a)
    _both(lambda m: lambda z: m.min(z), a)
    _both(lambda m: lambda z, w: z > w, a, b)


def test_ops_without_a_complex_form_are_refused():
    z = bjnp.asarray(ZS)
    with pytest.raises(ValueError, match="not defined for complex operands"):
        bt.jit(bt.lax.floor)(z)
    with pytest.raises(ValueError, match="sort complex"):
        bt.jit(bjnp.sort)(z)


# ---- transformations ----

HOLOMORPHIC = {
    "sin*exp": lambda m: lambda z: m.sin(z) * m.exp(z),
    "z^3/(1+z)": lambda m: lambda z: z**3 / (1 + z),
    "log+sqrt": lambda m: lambda z: m.log(z) + m.sqrt(z),
    "tanh": lambda m: lambda z: m.tanh(z),
}


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_grad_holomorphic(name):
    f = HOLOMORPHIC[name]
    z0 = np.complex64(1.5 - 0.7j)
    _close(bt.grad(f(bjnp), holomorphic=True)(z0), jax.grad(f(jjnp), holomorphic=True)(z0))
    _close(
        bt.jit(bt.grad(f(bjnp), holomorphic=True))(z0),
        jax.grad(f(jjnp), holomorphic=True)(z0),
    )


REAL_VALUED = {
    "abs^2": lambda m: lambda z: m.sum(m.abs(z) ** 2),
    "real*imag": lambda m: lambda z: m.sum(m.real(z) * m.imag(z)),
    "abs": lambda m: lambda z: m.sum(m.abs(z)),
    "real(z conj z)": lambda m: lambda z: m.real(m.sum(z * m.conj(z))),
    "angle": lambda m: lambda z: m.sum(m.angle(z)),
    "real(exp)": lambda m: lambda z: m.sum(m.real(m.exp(z))),
}


@pytest.mark.parametrize("name", sorted(REAL_VALUED))
def test_grad_of_real_valued_functions_of_complex_inputs(name):
    f = REAL_VALUED[name]
    _close(bt.grad(f(bjnp))(ZS), jax.grad(f(jjnp))(ZS), rtol=1e-4, atol=1e-5)
    _close(bt.jit(bt.grad(f(bjnp)))(ZS), jax.grad(f(jjnp))(ZS), rtol=1e-4, atol=1e-5)


def test_grad_through_complex_intermediates_of_real_inputs():
    def g(m):
        return lambda x: m.sum(m.abs(m.exp(1j * x) * (1 + 2j) + x) ** 2)

    _close(bt.grad(g(bjnp))(X), jax.grad(g(jjnp))(X), rtol=1e-4, atol=1e-5)


def test_jvp_and_vjp_of_complex_programs():
    def h(m):
        return lambda z: m.sin(z) * z

    pb, tb = bt.jvp(h(bjnp), (ZS,), (ZS * 0.5,))
    pj, tj = jax.jvp(h(jjnp), (ZS,), (ZS * 0.5,))
    _close(pb, pj)
    _close(tb, tj, rtol=1e-4)
    _, vb = bt.vjp(h(bjnp), ZS)
    _, vj = jax.vjp(h(jjnp), ZS)
    _close(vb(ZS)[0], vj(ZS)[0], rtol=1e-4)


def test_grad_of_matmul_and_complex_constructor():
    def m(mod):
        return lambda a, b: mod.sum(mod.abs(a @ b))

    gb = bt.grad(m(bjnp), argnums=(0, 1))(Z, W)
    gj = jax.grad(m(jjnp), argnums=(0, 1))(Z, W)
    _close(gb[0], gj[0], rtol=1e-4, atol=1e-5)
    _close(gb[1], gj[1], rtol=1e-4, atol=1e-5)
    c_b = bt.grad(lambda x, y: bjnp.sum(bjnp.abs(bt.lax.complex(x, y)) ** 3), argnums=(0, 1))(X, 2 * X)
    c_j = jax.grad(lambda x, y: jjnp.sum(jjnp.abs(jax.lax.complex(x, y)) ** 3), argnums=(0, 1))(X, 2 * X)
    _close(c_b[0], c_j[0], rtol=1e-4)
    _close(c_b[1], c_j[1], rtol=1e-4)


def test_jacobians_holomorphic():
    f = HOLOMORPHIC["sin*exp"]
    _close(
        bt.jacfwd(f(bjnp), holomorphic=True)(ZS[:3]),
        jax.jacfwd(f(jjnp), holomorphic=True)(ZS[:3]),
        rtol=1e-4,
        atol=1e-5,
    )
    _close(
        bt.jacrev(f(bjnp), holomorphic=True)(ZS[:3]),
        jax.jacrev(f(jjnp), holomorphic=True)(ZS[:3]),
        rtol=1e-4,
        atol=1e-5,
    )


def test_grad_errors_match_jax():
    with pytest.raises(TypeError, match="holomorphic=True"):
        bt.grad(lambda z: z * z)(np.complex64(1 + 1j))
    with pytest.raises(TypeError, match="complex dtype"):
        bt.grad(lambda x: x * x, holomorphic=True)(np.float32(1.0))


def test_vmap_of_complex_functions():
    f = lambda m: lambda z: m.sum(z * m.conj(z[::-1]))  # noqa: E731
    _close(bt.vmap(f(bjnp))(Z), jax.vmap(f(jjnp))(Z), rtol=1e-4)
