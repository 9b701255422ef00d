"""baton.numpy's functions on the newer elementwise primitives (log1p, expm1,
tan, atan, atan2, xor, shifts) against numpy: float results within a few
ulps of numpy's value in long double (libm's float64 can be further off
than the ulps allowed: cbrt by 2.6), IEEE edge values and signed zeros, eager and under jit;
gradients against jax; integer shifts exact for every shift amount; and
the TypeErrors jax.numpy raises for the wrong dtypes."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from _util import seeded_rng

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = [pytest.mark.x64, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
FLOATS = [F16, BF16, F32, F64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32]


@pytest.fixture(autouse=True)
def _x64():
    # float64 and int64 operands keep their dtype (conftest restores
    # bt.config after each test).
    bt.config.update("enable_x64", True)


def _name(d):
    return np.dtype(d).name


def both(fn, *args):
    """fn's result eagerly (on baton Arrays) and inside jit, as numpy."""
    eager = fn(*[bt.device_put(np.asarray(a)) for a in args])
    traced = bt.jit(fn)(*args)
    return np.asarray(eager), np.asarray(traced)


def _reference(npf, a):
    """npf at a in long double (x86-64's 80-bit extended) where numpy has a
    loop for it, else in float64: the float64 reference must be nearer than
    the ulps allowed, and glibc's float64 cbrt is 2.6 ulps off at 0.02207
    (cbrt(0.0220703429263853) = 0.28050225722506725148..., libm 0.2805022572250671087)."""
    try:
        return npf(a.astype(np.longdouble)).astype(np.float64)
    except TypeError:
        return npf(a.astype(np.float64))


# ---- float functions: values ----

EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan]


def _any(rng, d):
    v = np.concatenate([rng.standard_normal(60) * 3, rng.standard_normal(20) * 1e-3])
    return np.concatenate([EDGES, [1e-30, -1e-30, 0.5, -2.5], v])


def _unit(rng, d):
    eps = float(ml_dtypes.finfo(d).eps)
    near = [1 - eps, 1 - 2 * eps, 1 - 16 * eps, 1 - 1e-3, 1.0]
    near = near + [-v for v in near]
    return np.concatenate([EDGES, near, [1.5, -1.5, 1e-20], rng.uniform(-1, 1, 60)])


def _ge1(rng, d):
    eps = float(ml_dtypes.finfo(d).eps)
    big = float(ml_dtypes.finfo(d).max) / 4
    return np.concatenate(
        [
            EDGES,
            [1.0, 1 + eps, 1 + 8 * eps, 0.5, -3.0, 1e4, big],
            1 + rng.exponential(3, 60),
        ]
    )


def _gt_m1(rng, d):
    eps = float(ml_dtypes.finfo(d).eps)
    return np.concatenate(
        [EDGES, [-1.0, -1 + eps, -2.0, 1e-20, -1e-7], rng.uniform(-0.99, 5, 60)]
    )


def _hyperbolic(rng, d):
    # Large |x| up to and past overflow (float32 overflows past ~89.4,
    # float64 past ~710.5, float16 past ~11.8).
    top = {F16: 11.0, BF16: 88.0, F32: 89.0, F64: 710.0}[np.dtype(d)]
    large = [top - 2, top - 0.5, top, top + 2, 1e5]
    return np.concatenate(
        [
            EDGES,
            large,
            [-v for v in large],
            [19.9, 20.0, 20.1, -20.0],
            rng.standard_normal(60) * 5,
        ]
    )


def _tan_domain(rng, d):
    return np.concatenate([EDGES, [1.5, -1.5, 1e-20], rng.uniform(-1.5, 1.5, 60)])


# name: (numpy function, domain, ulps allowed for float32/float64, odd)
FLOAT_FUNCS = {
    "log1p": (np.log1p, _gt_m1, 1, False),
    "expm1": (np.expm1, _any, 1, False),
    "tan": (np.tan, _tan_domain, 2, False),
    "arctan": (np.arctan, _any, 1, True),
    "atan": (np.arctan, _any, 1, True),
    "arcsin": (np.arcsin, _unit, 3, True),
    "asin": (np.arcsin, _unit, 3, True),
    "arccos": (np.arccos, _unit, 3, False),
    "acos": (np.arccos, _unit, 3, False),
    "arcsinh": (np.arcsinh, _any, 3, True),
    "asinh": (np.arcsinh, _any, 3, True),
    "arccosh": (np.arccosh, _ge1, 3, False),
    "acosh": (np.arccosh, _ge1, 3, False),
    "arctanh": (np.arctanh, _unit, 3, True),
    "atanh": (np.arctanh, _unit, 3, True),
    "sinh": (np.sinh, _hyperbolic, 3, True),
    "cosh": (np.cosh, _hyperbolic, 3, False),
    "cbrt": (np.cbrt, _any, 2, True),
    "exp2": (np.exp2, _any, 2, False),
}


def assert_ulps(got, want64, d, ulps):
    """got (dtype d) within `ulps` of the float64 reference rounded to d,
    the same inf and NaN, and (for zeros) the same sign."""
    assert got.dtype == d, (got.dtype, d)
    g = got.astype(np.float64)
    w = want64.astype(d).astype(np.float64)
    info = ml_dtypes.finfo(d)
    if d in (F16, BF16):
        ulps = 1  # computed in float32, rounded once
    nan = np.isnan(w)
    assert np.array_equal(np.isnan(g), nan), (
        g[np.isnan(g) != nan],
        w[np.isnan(g) != nan],
    )
    inf = np.isinf(w)
    np.testing.assert_array_equal(g[inf], w[inf])
    fin = ~nan & ~inf
    scale = np.maximum(np.abs(w[fin]), float(info.smallest_normal))
    err = np.abs(g[fin] - w[fin]) / (scale * float(info.eps))
    # An ulp is eps at the bottom of a binade, eps/2 relative at its top.
    assert (err <= ulps + 1e-9).all(), (g[fin][err > ulps][:5], w[fin][err > ulps][:5])
    zero = fin & (w == 0)
    np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(w[zero]))


@pytest.mark.parametrize("dtype", FLOATS, ids=_name)
@pytest.mark.parametrize("name", list(FLOAT_FUNCS))
def test_float_function_matches_numpy(name, dtype):
    npf, domain, ulps, _ = FLOAT_FUNCS[name]
    d = np.dtype(dtype)
    a = domain(seeded_rng(name, d.name), d).astype(d)
    with np.errstate(all="ignore"):
        want = _reference(npf, a)
    for got in both(getattr(bnp, name), a):
        assert_ulps(got, want, d, ulps)


@pytest.mark.parametrize("name", list(FLOAT_FUNCS))
def test_odd_functions_keep_the_sign_of_zero(name):
    _, _, _, odd = FLOAT_FUNCS[name]
    if not odd:
        pytest.skip("not an odd function")
    a = np.array([0.0, -0.0], np.float32)
    for got in both(getattr(bnp, name), a):
        np.testing.assert_array_equal(np.signbit(got), [False, True])


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int32], ids=_name)
@pytest.mark.parametrize("name", list(FLOAT_FUNCS))
def test_float_function_of_integers_gives_float32(name, dtype):
    npf, _, _, _ = FLOAT_FUNCS[name]
    d = np.dtype(dtype)
    a = np.array([0, 1, 1, 0] if d == np.bool_ else [0, 1, 2, 3, 5, 100], d)
    if d.kind == "i":
        a = np.concatenate([a, -a])
    with np.errstate(all="ignore"):
        want = npf(a.astype(np.float64))
    for got in both(getattr(bnp, name), a):
        assert_ulps(got, want, F32, 3)


def test_arcsin_arccos_accurate_near_one():
    # 1 - x*x would lose everything here; (1 - x)(1 + x) keeps it.
    x = np.array([1 - 2.0**-24, 1 - 2.0**-20, -(1 - 2.0**-23)], np.float32)
    for f, npf in ((bnp.arcsin, np.arcsin), (bnp.arccos, np.arccos)):
        got = np.asarray(f(x)).astype(np.float64)
        want = npf(x.astype(np.float64))
        np.testing.assert_allclose(got, want, rtol=4e-7)


def test_small_arguments_are_accurate():
    x = np.array([1e-10, -1e-9, 3e-8, 1e-5, -1e-4], np.float32)
    for name, npf in (
        ("log1p", np.log1p),
        ("expm1", np.expm1),
        ("arcsinh", np.arcsinh),
        ("arctanh", np.arctanh),
        ("sinh", np.sinh),
        ("tan", np.tan),
    ):
        got = np.asarray(getattr(bnp, name)(x)).astype(np.float64)
        np.testing.assert_allclose(
            got, npf(x.astype(np.float64)), rtol=2.5e-7, err_msg=name
        )


def test_sinh_cosh_large_arguments_do_not_overflow_early():
    x = np.array([88.0, 89.0, -89.0, 89.5], np.float32)
    want = np.sinh(x.astype(np.float64))
    got = np.asarray(bnp.sinh(x))
    np.testing.assert_allclose(got[:3], want[:3], rtol=4e-7)
    assert got[3] == np.inf
    np.testing.assert_allclose(np.asarray(bnp.cosh(x))[:3], np.abs(want[:3]), rtol=4e-7)
    x64 = np.array([709.0, 710.0, -710.0, 711.0])
    np.testing.assert_allclose(
        np.asarray(bnp.cosh(x64))[:3], np.cosh(x64[:3]), rtol=1e-15
    )
    assert np.asarray(bnp.cosh(x64))[3] == np.inf


# ---- arctan2 ----

A2 = [0.0, -0.0, 1.0, -1.0, 2.5, -1e-3, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("dtype", FLOATS, ids=_name)
def test_arctan2_matches_numpy(dtype):
    d = np.dtype(dtype)
    y, x = (np.array(v, np.float64) for v in np.meshgrid(A2, A2))
    rng = seeded_rng("atan2", d.name)
    y = np.concatenate([y.ravel(), rng.standard_normal(50)]).astype(d)
    x = np.concatenate([x.ravel(), rng.standard_normal(50)]).astype(d)
    want = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    for name in ("arctan2", "atan2"):
        for got in both(getattr(bnp, name), y, x):
            assert_ulps(got, want, d, 2)
            # Every signed zero: atan2(+-0, +0) = +-0, atan2(+-0, -0) = +-pi.
            both_zero = (y == 0) & (x == 0)
            np.testing.assert_array_equal(
                np.signbit(got[both_zero]), np.signbit(want[both_zero])
            )


def test_arctan2_promotes_like_jax():
    assert np.asarray(bnp.arctan2(np.int32(1), np.int8(2))).dtype == F32
    assert np.asarray(bnp.arctan2(np.ones(2, F16), 2)).dtype == F16
    assert np.asarray(bnp.arctan2(np.ones(2, F16), np.ones(2, F32))).dtype == F32
    np.testing.assert_allclose(
        np.asarray(bnp.arctan2(1, np.array([1.0], F64))), [np.pi / 4]
    )


# ---- gradients ----

GRAD_POINTS = {
    "log1p": [-0.5, 0.0, 0.3, 2.0],
    "expm1": [-2.0, 0.0, 0.5, 3.0],
    "tan": [-1.2, 0.0, 0.4, 1.0],
    "arctan": [-3.0, 0.0, 0.5, 2.0],
    "arcsin": [-0.9, 0.0, 0.3, 0.7],
    "arccos": [-0.9, 0.0, 0.3, 0.7],
    "arcsinh": [-3.0, 0.0, 0.5, 5000.0],
    "arccosh": [1.5, 2.0, 3.0, 1e4],
    "arctanh": [-0.9, 0.0, 0.3, 0.7],
    "sinh": [-25.0, -0.5, 0.0, 2.0],
    "cosh": [-25.0, -0.5, 0.0, 2.0],
    "cbrt": [-8.0, -0.5, 0.5, 27.0],
}


@pytest.mark.parametrize("name", list(GRAD_POINTS))
def test_gradients_match_jax(name):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    x = np.array(GRAD_POINTS[name], np.float32)

    def f(v):
        return bnp.sum(
            getattr(bnp, name)(v) * bnp.array([1.0, 2.0, 3.0, 4.0], np.float32)
        )

    def fj(v):
        return jnp.sum(
            getattr(jnp, name)(v) * jnp.array([1.0, 2.0, 3.0, 4.0], np.float32)
        )

    want = np.asarray(jax.grad(fj)(x))
    for g in (bt.grad(f)(x), bt.jit(bt.grad(f))(x)):
        np.testing.assert_allclose(np.asarray(g), want, rtol=2e-5, err_msg=name)


def test_arctan2_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    y = np.array([1.0, -2.0, 0.5, -0.5], np.float32)
    x = np.array([1.0, 1.0, -3.0, -0.25], np.float32)
    want = jax.grad(lambda a, b: jnp.sum(jnp.arctan2(a, b)), argnums=(0, 1))(y, x)
    got = bt.grad(lambda a, b: bnp.sum(bnp.arctan2(a, b)), argnums=(0, 1))(y, x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_gradients_match_finite_differences_in_float64():
    x = np.array([0.3, -0.6, 0.8])
    eps = 1e-6
    for name in (
        "log1p",
        "expm1",
        "tan",
        "arctan",
        "arcsin",
        "arccos",
        "arctanh",
        "arcsinh",
        "sinh",
        "cosh",
    ):
        f = getattr(bnp, name)
        g = np.asarray(bt.grad(lambda v, f=f: bnp.sum(f(v)))(x))
        npf = FLOAT_FUNCS[name][0]
        fd = (npf(x + eps) - npf(x - eps)) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=1e-7, err_msg=name)


# ---- shifts, xor, bitwise_count ----


@pytest.mark.parametrize("dtype", INTS, ids=_name)
def test_shifts_match_numpy_for_every_amount(dtype):
    d = np.dtype(dtype)
    bits = d.itemsize * 8
    info = np.iinfo(d)
    xs = np.array([0, 1, 5, 100, info.max, info.min, info.max - 3], d)
    if d.kind == "i":
        xs = np.concatenate([xs, np.array([-1, -100, info.min + 1], d)])
    amounts = list(range(0, bits + 2))
    if d.kind == "i":
        amounts += [-1, -2, int(info.min)]
    amounts += [int(info.max)]
    x = np.repeat(xs, len(amounts))
    s = np.tile(np.array(amounts, np.int64).astype(d), len(xs))
    with np.errstate(all="ignore"):
        want_l, want_r = np.left_shift(x, s), np.right_shift(x, s)
    for name, want in (
        ("left_shift", want_l),
        ("bitwise_left_shift", want_l),
        ("right_shift", want_r),
        ("bitwise_right_shift", want_r),
    ):
        for got in both(getattr(bnp, name), x, s):
            assert got.dtype == d
            np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("dtype", INTS, ids=_name)
def test_lax_shifts_follow_xla(dtype):
    jax = pytest.importorskip("jax")
    d = np.dtype(dtype)
    if d.itemsize == 8 and not jax.config.jax_enable_x64:
        pytest.skip("jax without x64 has no 64-bit integers")
    bits = d.itemsize * 8
    info = np.iinfo(d)
    xs = np.array([1, 5, info.max, info.min, 200 % (int(info.max) + 1)], d)
    amounts = np.array(list(range(bits + 2)), np.int64).astype(d)
    x = np.repeat(xs, len(amounts))
    s = np.tile(amounts, len(xs))
    for name in ("shift_left", "shift_right_arithmetic", "shift_right_logical"):
        want = np.asarray(getattr(jax.lax, name)(x, s))
        got = np.asarray(bt.jit(getattr(bt.lax, name))(x, s))
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_shift_promotion():
    i8 = np.array([1, -2, 3], np.int8)
    u8 = np.array([1, 2, 3], np.uint8)
    assert np.asarray(bnp.left_shift(i8, 2)).dtype == np.int8
    assert np.asarray(bnp.left_shift(i8, u8)).dtype == np.int16
    np.testing.assert_array_equal(
        np.asarray(bnp.right_shift(i8, u8)), np.right_shift(i8, u8)
    )
    # jax.numpy shifts bools as int32.
    b = np.array([True, False])
    got = np.asarray(bnp.left_shift(b, b))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [2, 0])


@pytest.mark.parametrize("dtype", [np.bool_, *INTS], ids=_name)
def test_bitwise_xor(dtype):
    d = np.dtype(dtype)
    rng = seeded_rng("xor", d.name)
    if d == np.bool_:
        a, b = rng.integers(0, 2, 50).astype(bool), rng.integers(0, 2, 50).astype(bool)
    else:
        info = np.iinfo(d)
        a = rng.integers(
            info.min,
            info.max,
            50,
            dtype=np.int64 if d != np.uint32 else np.uint64,
            endpoint=True,
        ).astype(d)
        b = rng.integers(
            info.min,
            info.max,
            50,
            dtype=np.int64 if d != np.uint32 else np.uint64,
            endpoint=True,
        ).astype(d)
    for got in both(bnp.bitwise_xor, a, b):
        assert got.dtype == d
        np.testing.assert_array_equal(got, np.bitwise_xor(a, b))
    for got in both(bnp.logical_xor, a, b):
        np.testing.assert_array_equal(got, np.logical_xor(a, b))


def test_tracer_xor_operator():
    a = np.array([0b1100, 7], np.int32)
    got = bt.jit(lambda x, y: x ^ y)(a, np.array([0b1010, 7], np.int32))
    np.testing.assert_array_equal(np.asarray(got), [0b0110, 0])
    got = bt.jit(lambda x: 1 ^ x)(a)
    np.testing.assert_array_equal(np.asarray(got), [0b1101, 6])


@pytest.mark.parametrize("dtype", [np.bool_, *INTS], ids=_name)
def test_bitwise_count(dtype):
    d = np.dtype(dtype)
    if d == np.bool_:
        a = np.array([True, False, True])
    else:
        info = np.iinfo(d)
        rng = seeded_rng("popcount", d.name)
        a = rng.integers(
            info.min,
            info.max,
            60,
            dtype=np.int64 if d != np.uint32 else np.uint64,
            endpoint=True,
        ).astype(d)
        a[:4] = np.array([0, info.max, info.min, 1]).astype(d)
        if d.kind == "i":
            a[4] = -1
    want = np.bitwise_count(a)
    for got in both(bnp.bitwise_count, a):
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, want)


# ---- dtype errors ----


@pytest.mark.parametrize(
    "name",
    [
        "left_shift",
        "right_shift",
        "bitwise_left_shift",
        "bitwise_right_shift",
        "bitwise_xor",
    ],
)
def test_integer_functions_refuse_floats(name):
    x = np.array([1.0, 2.0], np.float32)
    with pytest.raises(TypeError, match=name.replace("bitwise_", "").split("_")[0]):
        getattr(bnp, name)(x, 1)
    with pytest.raises(TypeError):
        bt.jit(getattr(bnp, name))(x, x)


def test_bitwise_count_refuses_floats():
    with pytest.raises(TypeError, match="bitwise_count"):
        bnp.bitwise_count(np.array([1.5], np.float32))


@pytest.mark.parametrize(
    "name",
    ["shift_left", "shift_right_arithmetic", "shift_right_logical", "bitwise_xor"],
)
def test_lax_bit_ops_raise_type_error(name):
    f = getattr(bt.lax, name)
    with pytest.raises(TypeError, match=name):
        bt.jit(f)(np.ones(2, np.float32), np.ones(2, np.float32))
    if name != "bitwise_xor":
        with pytest.raises(TypeError, match=name):
            bt.jit(f)(np.ones(2, np.bool_), np.ones(2, np.bool_))
    else:  # logical xor for bool
        got = bt.jit(f)(np.array([True, False]), np.array([True, True]))
        np.testing.assert_array_equal(np.asarray(got), [False, True])


def test_lax_float_primitives():
    x = np.array([0.25, -0.5, 0.0], np.float32)
    for name, npf in (
        ("log1p", np.log1p),
        ("expm1", np.expm1),
        ("tan", np.tan),
        ("atan", np.arctan),
    ):
        got = np.asarray(bt.jit(getattr(bt.lax, name))(x))
        np.testing.assert_allclose(got, npf(x), rtol=3e-7, err_msg=name)
    got = np.asarray(bt.jit(bt.lax.atan2)(x, np.float32(2)))
    np.testing.assert_allclose(got, np.arctan2(x, np.float32(2)), rtol=3e-7)
