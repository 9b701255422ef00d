"""baton.numpy's elementwise functions against numpy, over every dtype:
exact for arithmetic, comparisons and rounding; within a few ulps for
transcendental functions. Eager and inside jit give the same values."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from _util import seeded_rng

BF16 = np.dtype(ml_dtypes.bfloat16)
# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = [pytest.mark.x64, pytest.mark.filterwarnings("ignore::RuntimeWarning")]
F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32]
FLOATS = [F16, BF16, F32, np.dtype(np.float64)]
ALL = [np.bool_, *INTS, *FLOATS]
N = 97  # not a multiple of any vector width


def _name(d):
    return np.dtype(d).name


def is_float(d):
    d = np.dtype(d)
    return d.kind == "f" or d == BF16


def sample(dtype, rng, *, positive=False, nonzero=False, small=False, special=True):
    d = np.dtype(dtype)
    if d == np.bool_:
        return rng.integers(0, 2, N).astype(bool)
    if d.kind in "iu":
        info = np.iinfo(d)
        lo, hi = (
            (1 if positive else max(info.min, -100), 100)
            if small
            else (info.min, info.max)
        )
        if positive:
            lo = max(lo, 1)
        v = rng.integers(
            lo, hi, N, dtype=np.int64 if d != np.uint32 else np.uint64, endpoint=True
        )
        v = v.astype(d)
        if nonzero:
            v[v == 0] = 1
        return v
    v = rng.standard_normal(N) * 10
    if positive:
        v = np.abs(v) + 0.1
    v = v.astype(d)
    if special and not positive and not nonzero:
        v[:6] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]).astype(d)
    if nonzero:
        v[v == 0] = 1
    return v


def both(fn, *args):
    """fn's result eager (on baton Arrays) and inside jit."""
    eager = fn(*[bt.device_put(a) for a in args])
    traced = bt.jit(fn)(*args)
    return np.asarray(eager), np.asarray(traced)


def assert_exact(got, want):
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    if is_float(want.dtype):
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
    else:
        np.testing.assert_array_equal(got, want)


# ---- arithmetic ----

ARITH = {
    "add": (np.add, [np.bool_, *INTS, *FLOATS]),
    "subtract": (np.subtract, [*INTS, *FLOATS]),
    "multiply": (np.multiply, [np.bool_, *INTS, *FLOATS]),
    "maximum": (np.maximum, ALL),
    "minimum": (np.minimum, ALL),
}


@pytest.mark.parametrize("dtype", ALL, ids=_name)
@pytest.mark.parametrize("name", list(ARITH))
def test_arithmetic_exact(name, dtype):
    npf, dtypes = ARITH[name]
    if dtype not in dtypes:
        pytest.skip(f"numpy has no {name} for {_name(dtype)}")
    rng = seeded_rng(name, _name(dtype))
    a, b = sample(dtype, rng), sample(dtype, rng)
    with np.errstate(all="ignore"):
        want = npf(a, b)
    for got in both(getattr(bnp, name), a, b):
        assert_exact(got, want)


@pytest.mark.parametrize("dtype", ALL, ids=_name)
def test_true_divide(dtype):
    rng = seeded_rng("div", _name(dtype))
    a, b = sample(dtype, rng), sample(dtype, rng, nonzero=True)
    if is_float(dtype):
        with np.errstate(all="ignore"):
            want = a / b
    else:  # integers and bool give float32 (JAX)
        want = a.astype(np.float32) / b.astype(np.float32)
    for got in both(bnp.divide, a, b):
        assert_exact(got, want)


@pytest.mark.parametrize("dtype", [*INTS, *FLOATS], ids=_name)
@pytest.mark.parametrize("name", ["floor_divide", "mod", "fmod"])
def test_division_remainders(name, dtype):
    rng = seeded_rng(name, _name(dtype))
    a = sample(dtype, rng, special=False)
    b = sample(dtype, rng, nonzero=True, small=True, special=False)
    if np.dtype(dtype).kind == "i":
        b[: N // 2] = -np.abs(b[: N // 2])  # negative divisors too
        a[a == np.iinfo(dtype).min] += 1  # INT_MIN // -1 overflows
    if np.dtype(dtype) == np.int64:
        a //= 4  # exact to within 2**10 of the int64 limits
        b[N // 2 :] = rng.integers(-(2**40), 2**40, N - N // 2)
        b[b == 0] = 3
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
    for got in both(getattr(bnp, name), a, b):
        assert_exact(got, want)


def test_integer_division_by_zero_gives_zero_like_numpy():
    a = np.array([5, -5, 0], np.int32)
    b = np.zeros(3, np.int32)
    for got in both(bnp.floor_divide, a, b):
        np.testing.assert_array_equal(got, [0, 0, 0])
    for got in both(bnp.mod, a, b):
        np.testing.assert_array_equal(got, [0, 0, 0])


@pytest.mark.parametrize("dtype", INTS, ids=_name)
def test_integer_power(dtype):
    rng = seeded_rng("pow", _name(dtype))
    a = sample(dtype, rng, small=True)
    b = rng.integers(0, 6, N).astype(dtype)
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    for got in both(bnp.power, a, b):
        assert_exact(got, want)


@pytest.mark.parametrize("dtype", FLOATS, ids=_name)
def test_float_power(dtype):
    rng = seeded_rng("fpow", _name(dtype))
    a = sample(dtype, rng, positive=True)
    b = (rng.standard_normal(N) * 2).astype(dtype)
    want = np.power(a.astype(np.float64), b.astype(np.float64))
    for got in both(bnp.power, a, b):
        assert_close(got, want, dtype)


# ---- comparisons, logic, bitwise ----


@pytest.mark.parametrize("dtype", ALL, ids=_name)
@pytest.mark.parametrize(
    "name", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
)
def test_comparisons(name, dtype):
    rng = seeded_rng(name, _name(dtype))
    a, b = sample(dtype, rng), sample(dtype, rng)
    b[10:20] = a[10:20]
    want = getattr(np, name)(a, b)
    for got in both(getattr(bnp, name), a, b):
        assert_exact(got, want)


@pytest.mark.parametrize("dtype", ALL, ids=_name)
@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical(name, dtype):
    rng = seeded_rng(name, _name(dtype))
    a, b = sample(dtype, rng), sample(dtype, rng)
    a[::3] = 0
    want = getattr(np, name)(a, b)
    for got in both(getattr(bnp, name), a, b):
        assert_exact(got, want)
    for got in both(bnp.logical_not, a):
        assert_exact(got, np.logical_not(a))


@pytest.mark.parametrize("dtype", [np.bool_, *INTS], ids=_name)
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise(name, dtype):
    rng = seeded_rng(name, _name(dtype))
    a, b = sample(dtype, rng), sample(dtype, rng)
    want = getattr(np, name)(a, b)
    for got in both(getattr(bnp, name), a, b):
        assert_exact(got, want)
    for got in both(bnp.invert, a):
        assert_exact(got, np.invert(a))


# ---- unary ----

EXACT_UNARY = {
    "negative": (np.negative, [*INTS, *FLOATS]),
    "absolute": (np.absolute, [*INTS, *FLOATS]),
    "sign": (np.sign, [*INTS, *FLOATS]),
    "square": (np.square, [*INTS, *FLOATS]),
    "floor": (np.floor, FLOATS),
    "ceil": (np.ceil, FLOATS),
    "rint": (np.rint, FLOATS),
    "trunc": (np.trunc, FLOATS),
    "isnan": (np.isnan, ALL),
    "isinf": (np.isinf, ALL),
    "isfinite": (np.isfinite, ALL),
    "positive": (np.positive, [*INTS, *FLOATS]),
}


@pytest.mark.parametrize("dtype", ALL, ids=_name)
@pytest.mark.parametrize("name", list(EXACT_UNARY))
def test_unary_exact(name, dtype):
    npf, dtypes = EXACT_UNARY[name]
    if dtype not in dtypes:
        pytest.skip(f"not defined for {_name(dtype)}")
    rng = seeded_rng(name, _name(dtype))
    a = sample(dtype, rng)
    with np.errstate(all="ignore"):
        want = npf(a)
    for got in both(getattr(bnp, name), a):
        assert_exact(got, want)


@pytest.mark.parametrize("dtype", FLOATS, ids=_name)
def test_round_half_to_even_and_decimals(dtype):
    a = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.25, -7.75, 1e3 + 0.5], dtype)
    for got in both(bnp.round, a):
        assert_exact(got, np.round(a))
    a = np.array([1.25, 3.14159, -2.71828, 10.0], np.float32)
    got = np.asarray(bnp.round(a, 2))
    np.testing.assert_allclose(got, np.round(a, 2), rtol=1e-6)


def test_round_integers_negative_decimals():
    a = np.array([125, 135, -125, 7], np.int32)
    assert_exact(np.asarray(bnp.round(bt.device_put(a), -1)), np.round(a, -1))


@pytest.mark.parametrize("dtype", [F16, BF16, F32], ids=_name)
def test_reciprocal(dtype):
    a = sample(dtype, seeded_rng("recip", _name(dtype)), nonzero=True)
    with np.errstate(all="ignore"):
        want = np.reciprocal(a)
    for got in both(bnp.reciprocal, a):
        assert_exact(got, want)


def test_integer_reciprocal_like_numpy():
    a = np.array([1, -1, 2, 5, -3], np.int32)
    assert_exact(
        np.asarray(bnp.reciprocal(bt.device_put(a))),
        np.array([1, -1, 0, 0, 0], np.int32),
    )


def ulps(dtype):
    return {F16: 2e-3, BF16: 1.6e-2, F32: 5e-6}.get(np.dtype(dtype), 1e-13)


def assert_close(got, want64, dtype, factor=1):
    """got (in dtype) within a few ulps of the float64 reference."""
    d = np.dtype(dtype)
    out = d if is_float(d) else F32
    assert got.dtype == out
    g = got.astype(np.float64)
    w = want64.astype(out).astype(np.float64)  # the correctly rounded result
    tol = ulps(out) * factor
    finite = np.isfinite(w)
    assert np.array_equal(np.isnan(g), np.isnan(w))
    np.testing.assert_array_equal(g[~finite & ~np.isnan(w)], w[~finite & ~np.isnan(w)])
    ok = np.abs(g - w) <= tol * np.maximum(np.abs(w), np.finfo(np.float32).tiny)
    ok |= np.abs(g - w) <= tol * 1e-3  # near zero
    ok |= ~finite
    assert ok.all(), (g[~ok][:5], w[~ok][:5])


TRANSCENDENTAL = {
    "exp": (np.exp, {}),
    "log": (np.log, {"positive": True}),
    "sqrt": (np.sqrt, {"positive": True}),
    "rsqrt": (lambda x: 1 / np.sqrt(x), {"positive": True}),
    "tanh": (np.tanh, {}),
    "sin": (np.sin, {}),
    "cos": (np.cos, {}),
    "tan": (np.tan, {}),
    "sinh": (np.sinh, {}),
    "cosh": (np.cosh, {}),
    "log1p": (np.log1p, {"positive": True}),
    "expm1": (np.expm1, {}),
    "log2": (np.log2, {"positive": True}),
    "log10": (np.log10, {"positive": True}),
    "exp2": (np.exp2, {}),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), {}),
}


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, *FLOATS], ids=_name)
@pytest.mark.parametrize("name", list(TRANSCENDENTAL))
def test_transcendental(name, dtype):
    npf, kw = TRANSCENDENTAL[name]
    rng = seeded_rng(name, _name(dtype))
    a = sample(dtype, rng, small=True, special=False, **kw)
    if is_float(dtype) and name in ("exp", "sinh", "cosh", "expm1", "exp2"):
        a = (a / 4).astype(dtype)  # stay in range for float16
    if name in ("sin", "cos", "tan") and is_float(dtype):
        a = (a / 4).astype(dtype)
    with np.errstate(all="ignore"):
        want = npf(a.astype(np.float64))
    factor = (
        8
        if name in ("tan", "sinh", "cosh", "log2", "log10", "exp2", "expm1", "log1p")
        else 3
    )
    for got in both(getattr(bnp, name), a):
        assert_close(got, want, dtype, factor)


def test_log1p_expm1_accurate_for_small_values():
    a = np.array([1e-10, -1e-9, 3e-8, 1e-5, -1e-4], np.float32)
    np.testing.assert_allclose(
        np.asarray(bnp.log1p(a)), np.log1p(a.astype(np.float64)), rtol=1e-6
    )
    np.testing.assert_allclose(
        np.asarray(bnp.expm1(a)), np.expm1(a.astype(np.float64)), rtol=1e-6
    )


# ---- where, clip, fmax/fmin ----


@pytest.mark.parametrize("dtype", ALL, ids=_name)
def test_where(dtype):
    rng = seeded_rng("where", _name(dtype))
    c = rng.integers(0, 2, N).astype(bool)
    a, b = sample(dtype, rng), sample(dtype, rng)
    for got in both(bnp.where, c, a, b):
        assert_exact(got, np.where(c, a, b))


def test_where_broadcasts_and_weak_scalars():
    x = bt.device_put(np.arange(6, dtype=np.float16).reshape(2, 3))
    got = bnp.where(x > 2, x, 0)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(
        np.asarray(got), np.where(np.asarray(x) > 2, np.asarray(x), 0)
    )
    got = bnp.where(np.array([True, False, True]), 1, 2)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), [1, 2, 1])
    c = bt.device_put(np.array([1.0, 0.0]))  # a numeric condition: nonzero is true
    np.testing.assert_array_equal(np.asarray(bnp.where(c, 5, 6)), [5, 6])


@pytest.mark.parametrize("dtype", [*INTS, *FLOATS], ids=_name)
def test_clip(dtype):
    rng = seeded_rng("clip", _name(dtype))
    a = sample(dtype, rng, special=False)
    lo, hi = np.array(2).astype(dtype), np.array(90).astype(dtype)
    for got in both(lambda x: bnp.clip(x, lo, hi), a):
        assert_exact(got, np.minimum(np.maximum(a, lo), hi))
    assert bnp.clip(bt.device_put(a), 1, None).dtype == a.dtype


@pytest.mark.parametrize("dtype", FLOATS, ids=_name)
def test_fmax_fmin_ignore_nan(dtype):
    rng = seeded_rng("fmax", _name(dtype))
    a, b = sample(dtype, rng), sample(dtype, rng)
    a[3], b[7], a[9], b[9] = np.nan, np.nan, np.nan, np.nan
    for name in ("fmax", "fmin"):
        for got in both(getattr(bnp, name), a, b):
            assert_exact(got, getattr(np, name)(a, b))


# ---- inputs and errors ----


def test_numpy_and_scalar_inputs_give_baton_arrays():
    got = bnp.add(np.arange(3, dtype=np.float32), 1)
    assert isinstance(got, bt.Array) and got.dtype == np.float32
    got = bnp.multiply(2, 3)
    assert isinstance(got, bt.Array) and got.dtype == np.int32 and int(got) == 6
    got = bnp.add(2, 0.5)
    assert got.dtype == np.float32 and float(got) == 2.5
    got = bnp.add([1, 2], [3, 4])  # Python lists: int32, as in JAX
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), [4, 6])
    got = bnp.exp(np.float64(0.0))
    assert got.dtype == np.float64


def test_bad_inputs():
    x = bt.device_put(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="uint16"):
        bnp.add(x, np.ones(3, np.uint16))
    with pytest.raises(TypeError, match="objects"):
        bnp.add(x, np.array([object()] * 3))
    with pytest.raises(TypeError):
        bnp.add(x, "abc")
    with pytest.raises(ValueError, match="broadcast"):
        bnp.add(x, np.ones(4, np.float32))
    with pytest.raises(ValueError):
        bnp.add(x, [[1, 2], [3]])  # ragged
    with pytest.raises(TypeError, match="integer and bool"):
        bnp.bitwise_and(x, x)
    with pytest.raises(NotImplementedError, match="nonzero"):
        bnp.where(x)
    np.testing.assert_array_equal(np.asarray(x), np.ones(3, np.float32))


def test_eager_op_on_a_donated_array_reuses_its_buffer(no_gc):
    x = bt.device_put(np.ones(1 << 18, np.float32)).block_until_ready()
    before = bt.memory_stats()["bytes_in_use"]
    y = bnp.add(bt.donate(x), 1).block_until_ready()
    assert x.is_deleted()
    assert bt.memory_stats()["bytes_in_use"] == before
    np.testing.assert_array_equal(np.asarray(y[:3]), [2, 2, 2])
