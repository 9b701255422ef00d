"""baton.numpy's elementwise math of real numbers, whole-array comparisons, type
predicates and vector products against numpy (and jax.numpy where the two
differ), eagerly and under bt.jit."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton.errors import ConcretizationTypeError

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
from _numpy_check import BF16, F16, F32, F64, I32, _name, both, check

pytestmark = [pytest.mark.x64, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

SHAPES = [(0,), (7,), (3, 5), (2, 0, 3)]
SPECIAL = np.array(
    [0.0, -0.0, 1.0, -1.5, 2.5, np.inf, -np.inf, np.nan, 1e-30, 3e38], np.float32
)


def as_np(x):
    if isinstance(x, (tuple, list)):
        return type(x)(as_np(e) for e in x)
    return np.asarray(x)


def sample(shape, dtype, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    d = np.dtype(dtype)
    if d == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if d.kind in "iu":
        lo = 0 if d.kind == "u" else -20
        return rng.integers(lo, 20, shape).astype(d)
    return (rng.standard_normal(shape) * scale).astype(d)


# ---- unary float functions ----

UNARY = [
    ("deg2rad", np.deg2rad),
    ("radians", np.radians),
    ("rad2deg", np.rad2deg),
    ("degrees", np.degrees),
    ("fabs", np.fabs),
    ("sinc", np.sinc),
]


@pytest.mark.parametrize("name,ref", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", [np.int32, np.bool_, F16, F32, F64], ids=_name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_unary(name, ref, dtype, shape):
    a = sample(shape, dtype)
    want_dtype = F32 if np.dtype(dtype).kind in "biu" else np.dtype(dtype)
    want = ref(a.astype(np.float64))
    tol = 2e-3 if dtype == F16 else 1e-6
    for got in both(getattr(bnp, name), a):
        check(got, want, want_dtype, rtol=tol, atol=tol)


def test_unary_special_values():
    for name, ref in UNARY:
        got = np.asarray(getattr(bnp, name)(SPECIAL))
        want = ref(SPECIAL)
        check(got, want, F32, rtol=1e-6, atol=1e-6)


def test_sinc_zero_and_jax():
    jnp = pytest.importorskip("jax.numpy")
    x = np.array([0.0, 1e-8, 0.5, -2.0, 3.25], np.float32)
    check(bnp.sinc(x), np.asarray(jnp.sinc(x)), F32)
    assert float(bnp.sinc(0.0)) == 1.0


@pytest.mark.parametrize("dtype", [np.int32, F32, F64], ids=_name)
def test_isposinf_isneginf(dtype):
    a = (
        SPECIAL.astype(dtype)
        if np.dtype(dtype).kind == "f"
        else np.arange(-3, 4, dtype=dtype)
    )
    for name in ("isposinf", "isneginf"):
        for got in both(getattr(bnp, name), a):
            check(got, getattr(np, name)(a), np.bool_)


# ---- binary float functions ----


def _pair(shape, dtype, seed):
    return sample(shape, dtype, seed), sample(
        shape[-1:] if shape else (), dtype, seed + 1
    )


@pytest.mark.parametrize("dtype", [np.int32, F16, BF16, F32, F64], ids=_name)
@pytest.mark.parametrize("shape", [(0,), (4, 6), (3, 1, 5)], ids=str)
@pytest.mark.parametrize(
    "name", ["copysign", "hypot", "heaviside", "logaddexp", "logaddexp2", "float_power"]
)
def test_binary(name, dtype, shape):
    a, b = _pair(shape, dtype, 3)
    if name == "float_power":
        a = np.abs(a) + (1 if np.dtype(dtype).kind == "i" else 0.5)
        a = a.astype(dtype)
        b = (b / 3).astype(dtype) if np.dtype(dtype).kind == "f" else b % 4
    if name == "heaviside":
        a[..., ::3] = 0
    ref = getattr(np, name)
    want = ref(a.astype(np.float64), b.astype(np.float64))
    out = F32 if np.dtype(dtype).kind == "i" else np.dtype(dtype)
    tol = {F16: 3e-3, BF16: 2e-2}.get(np.dtype(dtype), 2e-6)
    for got in both(getattr(bnp, name), a, b):
        check(got, want.astype(out).astype(np.float64), out, rtol=tol, atol=tol)


def test_binary_weak_scalars_and_jax_dtypes():
    jnp = pytest.importorskip("jax.numpy")
    x = np.array([1.0, -2.0, 3.5], np.float16)
    i = np.array([1, 2, 3], np.int32)
    for name in ("copysign", "hypot", "heaviside", "logaddexp", "float_power"):
        assert getattr(bnp, name)(x, 2).dtype == getattr(jnp, name)(x, 2).dtype
        assert getattr(bnp, name)(i, i).dtype == getattr(jnp, name)(i, i).dtype
        assert getattr(bnp, name)(i, 2.0).dtype == getattr(jnp, name)(i, 2.0).dtype


def test_copysign_signed_zero():
    got = np.asarray(
        bnp.copysign(np.float32(2), np.array([0.0, -0.0, -1, np.inf], np.float32))
    )
    np.testing.assert_array_equal(got, [2, -2, -2, 2])
    assert np.signbit(np.asarray(bnp.copysign(0.0, -1.0)))


def test_hypot_extremes():
    a = np.array([3e30, 1e-30, np.inf, np.nan, 0.0, -np.inf, 3e38], np.float32)
    b = np.array([4e30, 1e-30, np.nan, np.inf, 0.0, 1.0, 3e38], np.float32)
    for got in both(bnp.hypot, a, b):
        check(got, np.hypot(a, b), F32, rtol=1e-6)


def test_heaviside_nan():
    got = np.asarray(bnp.heaviside(np.array([np.nan, -1, 0, 1], np.float32), 0.5))
    check(got, np.heaviside(np.array([np.nan, -1, 0, 1], np.float32), 0.5), F32)


def test_logaddexp_extremes():
    big, tiny = 3e38, -3e38
    a = np.array(
        [
            big,
            tiny,
            -np.inf,
            -np.inf,
            np.inf,
            np.inf,
            0,
            100,
            -100,
            np.nan,
            1e-8,
            -1000,
            88.0,
        ],
        np.float32,
    )
    b = np.array(
        [
            big,
            tiny,
            -np.inf,
            5.0,
            np.inf,
            -np.inf,
            0,
            -100,
            100,
            1.0,
            -1e-8,
            -1000.5,
            89.0,
        ],
        np.float32,
    )
    for name in ("logaddexp", "logaddexp2"):
        want = getattr(np, name)(a.astype(np.float64), b.astype(np.float64)).astype(
            np.float32
        )
        for got in both(getattr(bnp, name), a, b):
            got = np.asarray(got)
            np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
            check(got, want, F32, rtol=2e-7, atol=0)
    # log1p accuracy: log(1 + e**-40) is 4.2e-18, lost by a plain log(1 + x).
    got = float(bnp.logaddexp(np.float64(0), np.float64(-40)))
    assert abs(got - np.logaddexp(0.0, -40.0)) < 1e-30
    got = float(bnp.logaddexp(np.float32(-20), np.float32(-120)))
    assert got == np.float32(np.logaddexp(-20.0, -120.0))


def test_logaddexp_no_log1p_loss_f32():
    d = np.linspace(-30, 0, 301).astype(np.float32)
    got = np.asarray(bnp.logaddexp(d, np.float32(0)))
    want = np.logaddexp(d.astype(np.float64), 0.0)
    np.testing.assert_allclose(got, want, rtol=3e-7)


# ---- nan_to_num / divmod / modf ----


@pytest.mark.parametrize("dtype", [F16, BF16, F32, F64], ids=_name)
def test_nan_to_num(dtype):
    a = SPECIAL.astype(dtype)
    info = ml_dtypes.finfo(dtype)
    want = np.nan_to_num(
        a.astype(np.float64), posinf=float(info.max), neginf=float(info.min)
    ).astype(dtype)
    for got in both(bnp.nan_to_num, a):
        check(got, want, dtype, rtol=0, atol=0)
    for got in both(lambda x: bnp.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0), a):
        want = np.nan_to_num(a.astype(np.float64), nan=-1.0, posinf=9.0, neginf=-9.0)
        check(got, want.astype(dtype), dtype, rtol=0, atol=0)


def test_nan_to_num_integers_unchanged():
    a = np.arange(-3, 3, dtype=np.int8)
    for got in both(bnp.nan_to_num, a):
        check(got, a, np.int8)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, F32, F64], ids=_name)
def test_divmod(dtype):
    a = sample((5, 6), dtype, 7)
    b = sample((6,), dtype, 8)
    b[b == 0] = 3
    want_q, want_r = np.divmod(a, b)
    for q, r in both(bnp.divmod, a, b):
        check(q, want_q, want_q.dtype)
        check(r, want_r, want_r.dtype)


@pytest.mark.parametrize("dtype", [np.int32, F16, F32, F64], ids=_name)
def test_modf(dtype):
    a = sample((4, 5), dtype, 9)
    if np.dtype(dtype).kind == "f":
        a = np.concatenate(
            [a.ravel(), SPECIAL.astype(dtype), np.array([-2.0, -0.0], dtype)]
        )
    out = F32 if np.dtype(dtype).kind == "i" else np.dtype(dtype)
    wf, wi = np.modf(a.astype(out))
    for f, i in both(bnp.modf, a):
        check(f, wf, out, rtol=0, atol=0)
        check(i, wi, out, rtol=0, atol=0)
        np.testing.assert_array_equal(np.signbit(np.asarray(f)), np.signbit(wf))


# ---- frexp / ldexp ----


@pytest.mark.parametrize("dtype", [F16, BF16, F32, F64], ids=_name)
def test_frexp(dtype):
    rng = np.random.default_rng(1)
    info = ml_dtypes.finfo(dtype)
    vals = [
        0.0,
        -0.0,
        1.0,
        0.5,
        3.0,
        -5.0,
        np.inf,
        -np.inf,
        np.nan,
        float(info.max),
        float(info.tiny),
        float(info.smallest_subnormal),
        -float(info.smallest_subnormal) * 3,
    ]
    a = np.concatenate(
        [
            np.array(vals, np.float64),
            rng.standard_normal(50) * 10.0 ** rng.integers(-30, 30, 50),
        ]
    )
    a = a.astype(dtype)
    ref = a.astype(np.float32) if np.dtype(dtype) == BF16 else a
    wm, we = np.frexp(ref)
    for m, e in both(bnp.frexp, a):
        assert np.asarray(e).dtype == I32
        check(m, wm.astype(dtype), dtype, rtol=0, atol=0)
        check(e, we.astype(np.int32), I32)


def test_frexp_integer_input():
    m, e = bnp.frexp(np.array([0, 3, -8], np.int32))
    check(m, [0.0, 0.75, -0.5], F32)
    check(e, [0, 2, 4], I32)


@pytest.mark.parametrize("dtype", [F16, F32, F64], ids=_name)
def test_ldexp(dtype):
    info = ml_dtypes.finfo(dtype)
    m = np.array(
        [
            1.0,
            -0.75,
            0.5,
            1.5,
            float(info.tiny),
            float(info.max),
            0.0,
            np.inf,
            np.nan,
            float(info.smallest_subnormal),
            1.0 + float(info.eps),
        ],
        dtype,
    )
    e = np.array(
        [
            3,
            -2,
            int(info.minexp) - int(info.nmant),
            200,
            5,
            -3,
            7,
            1,
            1,
            int(info.nmant) + 2,
            int(info.minexp) - 3,
        ],
        np.int32,
    )
    want = np.ldexp(m, e)
    for got in both(bnp.ldexp, m, e):
        check(got, want, dtype, rtol=0, atol=0)
    # Huge exponents: no overflow of 2**n on the way.
    tiny = np.array([float(info.smallest_subnormal)], dtype)
    big = int(info.maxexp) - int(info.minexp) + int(info.nmant)
    check(
        bnp.ldexp(tiny, np.int32(big - 1)),
        np.ldexp(tiny, big - 1),
        dtype,
        rtol=0,
        atol=0,
    )
    check(
        bnp.ldexp(np.array([4.0], dtype), np.int32(-10000)),
        np.array([0.0], dtype),
        dtype,
    )


def test_ldexp_int_and_errors():
    check(bnp.ldexp(np.int32(3), np.int32(2)), np.float32(12), F32)
    with pytest.raises(TypeError, match="exponent x2 must be an integer"):
        bnp.ldexp(1.0, 2.0)


# ---- gcd / lcm ----


@pytest.mark.parametrize(
    "dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32], ids=_name
)
def test_gcd_lcm(dtype):
    rng = np.random.default_rng(2)
    lo = 0 if np.dtype(dtype).kind == "u" else -60
    a = rng.integers(lo, 60, (6, 7)).astype(dtype)
    b = rng.integers(lo, 60, (7,)).astype(dtype)
    a[0, :3] = 0
    b[1] = 0
    for name in ("gcd", "lcm"):
        want = getattr(np, name)(a, b)
        for got in both(getattr(bnp, name), a, b):
            if name == "lcm" and np.dtype(dtype).itemsize == 1:
                got = np.asarray(got)  # int8 lcm may wrap, as numpy's
            check(got, want, dtype)


def test_gcd_large_and_empty():
    a = np.array([2**31 - 1, 1836311903, 0, 48], np.int32)
    b = np.array(
        [2**30, 1134903170, 0, -180], np.int32
    )  # consecutive Fibonacci: many steps
    check(bnp.gcd(a, b), np.gcd(a, b), I32)
    check(bnp.gcd(np.zeros((0,), np.int32), 3), np.zeros((0,), np.int32), I32)
    check(bnp.lcm(4, 6), np.int32(12), I32)


def test_gcd_errors():
    with pytest.raises(TypeError, match="gcd: the arguments must be integers"):
        bnp.gcd(np.ones(2, np.float32), 2)
    with pytest.raises(TypeError, match="lcm: the arguments must be integers"):
        bnp.lcm(True, False)


# ---- isclose / allclose / array_equal / array_equiv ----


@pytest.mark.parametrize("dtype", [np.int32, F16, F32, F64], ids=_name)
@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose(dtype, equal_nan):
    a = sample((4, 9), dtype, 4)
    b = a.copy()
    if np.dtype(dtype).kind == "f":
        b = (b * (1 + np.linspace(-2e-5, 2e-5, 9))).astype(dtype)
        a[0, :4] = [np.nan, np.inf, -np.inf, np.inf]
        b[0, :4] = [np.nan, np.inf, np.inf, 1.0]
    else:
        b[1] += 1
    want = np.isclose(a, b, equal_nan=equal_nan)
    if dtype == F16:
        want = np.isclose(a, b, equal_nan=equal_nan, atol=np.float16(1e-8))
    for got in both(lambda x, y: bnp.isclose(x, y, equal_nan=equal_nan), a, b):
        check(got, want, np.bool_)
    for got in both(lambda x, y: bnp.allclose(x, y, equal_nan=equal_nan), a, b):
        check(got, np.asarray(want.all()), np.bool_)
    got = bnp.isclose(a, b, rtol=0.0, atol=2.0)
    check(got, np.isclose(a, b, rtol=0.0, atol=2.0), np.bool_)


def test_isclose_jax():
    jnp = pytest.importorskip("jax.numpy")
    a = np.array([1.0, 1.0001, np.nan, np.inf], np.float32)
    check(bnp.isclose(a, 1.0), np.asarray(jnp.isclose(a, 1.0)), np.bool_)
    check(bnp.isclose(np.int32(10), np.int32(11), atol=2), np.asarray(True), np.bool_)


def test_array_equal_equiv():
    a = np.array([[1.0, np.nan], [3.0, 4.0]], np.float32)
    for got in both(lambda x: bnp.array_equal(x, x), a):
        check(got, np.asarray(False), np.bool_)
    for got in both(lambda x: bnp.array_equal(x, x, equal_nan=True), a):
        check(got, np.asarray(True), np.bool_)
    assert not bool(bnp.array_equal(np.ones(2), np.ones(3)))
    assert bool(
        bnp.array_equal(np.arange(3, dtype=np.int32), np.arange(3.0, dtype=np.float32))
    )
    assert bool(bnp.array_equal(np.zeros((0, 2)), np.zeros((0, 2))))
    assert bool(bnp.array_equiv([1, 2], [[1, 2], [1, 2]]))
    assert not bool(bnp.array_equiv([1, 2], [[1, 2], [1, 3]]))
    assert not bool(bnp.array_equiv(np.ones(2), np.ones((3, 3))))
    for got in both(
        lambda x, y: bnp.array_equiv(x, y),
        np.ones(3, np.float32),
        np.ones((2, 3), np.float32),
    ):
        check(got, np.asarray(True), np.bool_)


# ---- type predicates ----


def test_predicates():
    a = np.ones((2, 3), np.float32)
    for got in both(bnp.isreal, a):
        check(got, np.ones((2, 3), bool), np.bool_)
    for got in both(bnp.iscomplex, a):
        check(got, np.zeros((2, 3), bool), np.bool_)
    assert bnp.isrealobj(a) is True and bnp.iscomplexobj(a) is False
    assert bnp.iscomplexobj(1j) is True and bnp.isrealobj(bt.device_put(a)) is True
    assert bnp.isscalar(1) and bnp.isscalar(2.5) and bnp.isscalar(np.float32(1))
    assert bnp.isscalar(bt.device_put(np.float32(1))) and bnp.isscalar(np.array(1.0))
    assert not bnp.isscalar([1]) and not bnp.isscalar(bt.device_put(a))
    assert not bnp.isscalar(None)
    assert bnp.iterable([1]) and bnp.iterable(bt.device_put(a)) and not bnp.iterable(3)
    assert not bnp.iterable(bt.device_put(np.float32(1)))

    @bt.jit
    def f(x):
        assert bnp.isscalar(x) and not bnp.iterable(x) and bnp.isrealobj(x)
        return x

    f(np.float32(2))


# ---- vector products ----


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # numpy: 2-vectors
@pytest.mark.parametrize("dtype", [np.int32, F32, F64], ids=_name)
@pytest.mark.parametrize("na,nb", [(3, 3), (2, 3), (3, 2), (2, 2)])
def test_cross(dtype, na, nb):
    a = sample((4, na), dtype, 10)
    b = sample((5, 1, nb), dtype, 11)
    want = (
        np.cross(a, b)
        if (na, nb) != (2, 2)
        else a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    )
    for got in both(bnp.cross, a, b):
        check(got, want, dtype, rtol=1e-6, atol=1e-4)


def test_cross_axes():
    a = sample((3, 4), F32, 12)
    b = sample((4, 3), F32, 13)
    want = np.cross(a, b, axisa=0, axisb=1, axisc=0)
    for got in both(lambda x, y: bnp.cross(x, y, axisa=0, axisb=1, axisc=0), a, b):
        check(got, want, F32, rtol=1e-5, atol=1e-5)
    c = sample((3, 5), F32, 14)
    check(bnp.cross(c, c[::-1], axis=0), np.cross(c, c[::-1], axis=0), F32, atol=1e-5)


def test_cross_errors():
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        bnp.cross(np.ones(4), np.ones(3))
    with pytest.raises(ValueError, match="do not broadcast"):
        bnp.cross(np.ones((2, 3)), np.ones((4, 3)))
    with pytest.raises(np.exceptions.AxisError):
        bnp.cross(np.ones(3), np.ones(3), axisa=2)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, F32, F64], ids=_name)
def test_vecdot_matvec_vecmat(dtype):
    jnp = pytest.importorskip("jax.numpy")
    x = sample((2, 3, 4), dtype, 15)
    v = sample((4,), dtype, 16)
    m = sample((3, 4, 5), dtype, 17)
    for got in both(bnp.vecdot, x, v):
        check(got, np.asarray(jnp.vecdot(x, v)), dtype, rtol=1e-5, atol=1e-4)
    for got in both(lambda a, b: bnp.vecdot(a, b, axis=0), x, x):
        check(got, np.asarray(jnp.vecdot(x, x, axis=0)), None, rtol=1e-5, atol=1e-4)
    for got in both(bnp.matvec, x, v):
        check(got, np.asarray(jnp.matvec(x, v)), dtype, rtol=1e-5, atol=1e-4)
    u = sample((3, 4), dtype, 18)
    for got in both(bnp.vecmat, u, m):
        check(got, np.asarray(jnp.vecmat(u, m)), dtype, rtol=1e-5, atol=1e-4)
    check(
        bnp.vecdot(np.zeros((0, 3), dtype), np.zeros(3, dtype)), np.zeros((0,), dtype)
    )


def test_vector_errors():
    with pytest.raises(ValueError, match="same length along axis"):
        bnp.vecdot(np.ones((2, 3)), np.ones(1))
    with pytest.raises(ValueError, match="do not broadcast"):
        bnp.vecdot(np.ones((2, 3)), np.ones((4, 3)))
    with pytest.raises(ValueError, match="contracted dimensions differ"):
        bnp.matvec(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="needs a matrix"):
        bnp.vecmat(np.ones(3), np.ones(3))


def test_bincount_needs_length_under_jit():
    with pytest.raises(ConcretizationTypeError, match="pass length="):
        bt.jit(lambda x: bnp.bincount(x))(np.array([1, 2], np.int32))
