"""Property-based tests: baton.numpy elementwise ops, broadcasting and
reductions against numpy, on float32, int32 and bool arrays of random shapes
and layouts.

Dtypes follow jax.numpy (DESIGN 5.4), not numpy: Python scalars are weakly
typed, bool < int32 < float32 promote to the larger one, true division and
transcendental functions of integers give float32, sums of bool give int32,
means of integers float32. So the reference is numpy computed *in the dtype
baton must report*: the operands are cast to the JAX result dtype first
(int32 vs float32 compares in float32, as JAX does, not in float64 as numpy
would), and the result dtype is asserted separately. Exact ops (+, -, *, /,
comparisons, min/max, rounding) must match bitwise-for-value; transcendental
ones are compared with a float64 reference rounded to float32, within
rtol 1e-5 / atol 1e-6. Sums and means are compared with a float64 reference
within the error bound of float32 summation in any order.
"""

import warnings

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import baton as bt
import baton.numpy as bnp

import _property_strategies as P
from _property_strategies import (
    BOOL,
    F32,
    I32,
    assert_values_equal,
    examples,
    returns_memory,
)

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64

DTYPES3 = (BOOL, I32, F32)
_RANK = {BOOL: 0, I32: 1, F32: 2}


def jax_result(*dtypes):
    """JAX's promotion within bool < int32 < float32."""
    return DTYPES3[max(_RANK[np.dtype(d)] for d in dtypes)]


def operand(dtype, shape, small_ints=False):
    """Values for math: floats in [-100, 100] and specials; ints over their
    range (or [-1000, 1000] for transcendental functions)."""

    def values(d, s):
        if small_ints and d == I32:
            return hnp.arrays(I32, s, elements=st.integers(-1000, 1000))
        return P.math_values(d, s)

    return P.laid_out(lambda s: values(dtype, s), shape)


# ---- unary ----

# name -> (numpy reference, result: "same" | "float" | "bool", exact)
UNARY = {
    "negative": (np.negative, "same", True),
    "absolute": (np.absolute, "same", True),
    "sign": (np.sign, "same", True),
    "square": (np.square, "same", True),
    "floor": (np.floor, "same", True),
    "ceil": (np.ceil, "same", True),
    "trunc": (np.trunc, "same", True),
    "positive": (np.positive, "same", True),
    "invert": (np.invert, "same", True),
    "rint": (np.rint, "float", True),
    "isnan": (np.isnan, "bool", True),
    "isinf": (np.isinf, "bool", True),
    "isfinite": (np.isfinite, "bool", True),
    "signbit": (np.signbit, "bool", True),
    "logical_not": (np.logical_not, "bool", True),
    "exp": (np.exp, "float", False),
    "log": (np.log, "float", False),
    "sqrt": (np.sqrt, "float", False),
    "tanh": (np.tanh, "float", False),
    "sin": (np.sin, "float", False),
    "cos": (np.cos, "float", False),
    "log1p": (np.log1p, "float", False),
    "expm1": (np.expm1, "float", False),
    "log2": (np.log2, "float", False),
    "log10": (np.log10, "float", False),
    "exp2": (np.exp2, "float", False),
    "sinh": (np.sinh, "float", False),
    "cosh": (np.cosh, "float", False),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), "float", False),
}

# (op, dtype) pairs left out: numpy and JAX refuse them (TypeError in both;
# test_ops_numpy_refuses_raise_type_error below), or numpy and JAX disagree
# (square and positive of bool: int8 / an error in numpy).
REFUSED_UNARY = {
    ("negative", BOOL),
    ("sign", BOOL),
    ("invert", F32),
    ("square", BOOL),
    ("positive", BOOL),
}


def _unary_reference(name, a):
    fn, result, exact = UNARY[name]
    out = a.dtype if result == "same" else BOOL if result == "bool" else F32
    if result == "float" and a.dtype != F32:
        a = a.astype(F32)  # JAX: integers and bool give float32
    with np.errstate(all="ignore"):
        want = fn(a) if exact else fn(a.astype(np.float64))
        return np.asarray(want).astype(out)


@examples(150)
@given(
    data=st.data(),
    name=st.sampled_from(sorted(UNARY)),
    dtype=st.sampled_from(DTYPES3),
    shape=P.shapes(),
)
@example(data=None, name="floor", dtype=I32, shape=(3,)).via(
    "floor of int32 keeps int32"
)
@example(data=None, name="ceil", dtype=BOOL, shape=(3,)).via("ceil of bool keeps bool")
@example(data=None, name="absolute", dtype=BOOL, shape=(3,)).via("abs of bool is bool")
@returns_memory
def test_unary_matches_numpy(data, name, dtype, shape):
    assume((name, dtype) not in REFUSED_UNARY)
    if data is None:  # the explicit example
        a = np.array([-3, 0, 7], dtype)
    else:
        a = data.draw(operand(dtype, shape, small_ints=not UNARY[name][2]), label="a")
    want = _unary_reference(name, a)
    got = np.asarray(getattr(bnp, name)(bt.device_put(a)))
    if name == "signbit" and a.dtype == F32:
        # Documented: baton's signbit does not see the sign of a NaN
        # (no bitcast primitive, numpy/_elementwise.py _signbit).
        got, want = got[~np.isnan(a)], want[~np.isnan(a)]
    exact = UNARY[name][2]
    assert_values_equal(got, want, rtol=0 if exact else 1e-5, atol=0 if exact else 1e-6)


# ---- binary, with broadcasting and weakly typed scalars ----

EXACT_BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "fmax": np.fmax,
    "fmin": np.fmin,
    "floor_divide": np.floor_divide,
    "remainder": np.remainder,
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
}
BOOL_RESULT = {
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
}


def _binary_refused(name, r):
    """Left out: refused by numpy and JAX (subtract of bools, bitwise ops of
    floats), or where they disagree (floor_divide / remainder of bools: int8
    in numpy)."""
    if r == BOOL:
        return name in ("subtract", "floor_divide", "remainder")
    return name.startswith("bitwise") and r == F32


scalars = st.one_of(
    st.booleans(), st.integers(-(2**31), 2**31 - 1), st.floats(-100, 100, width=32)
)


@st.composite
def binary_operands(draw, name):
    """Two operands (numpy arrays of broadcastable shapes and layouts, or
    one Python scalar) and the dtype JAX gives the result."""
    shapes = draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4)
    )
    ops = []
    for s in shapes.input_shapes:
        ops.append(draw(operand(draw(st.sampled_from(DTYPES3)), s), label="operand"))
    which = draw(st.sampled_from([None, 0, 1]), label="scalar operand")
    if which is not None:
        ops[which] = draw(scalars, label="scalar")
    dts = [
        {bool: BOOL, int: I32, float: F32}[type(o)]
        if not isinstance(o, np.ndarray)
        else o.dtype
        for o in ops
    ]
    return ops[0], ops[1], jax_result(*dts)


def _as_numpy(x, dtype):
    return np.asarray(x, dtype) if not isinstance(x, np.ndarray) else x.astype(dtype)


@examples(200)
@given(data=st.data(), name=st.sampled_from(sorted(EXACT_BINARY)))
@example(
    data=(np.array([-(2**31), 7, -7], I32), np.array([-1, 0, 2], I32)),
    name="floor_divide",
).via("int32 INT_MIN // -1 wraps, x // 0 == 0 (numpy)")
@example(data=(np.array([-128], np.int8), np.array([-1], np.int8)), name="floor_divide")
@returns_memory
def test_binary_broadcasting_matches_numpy(data, name):
    if isinstance(data, tuple):  # an explicit example
        a, b = data
        r = np.result_type(a, b)
    else:
        a, b, r = data.draw(binary_operands(name))
    assume(not _binary_refused(name, r))
    out = BOOL if name in BOOL_RESULT else F32 if name == "divide" else r
    compute = F32 if name == "divide" else r
    with np.errstate(all="ignore"):
        want = np.asarray(
            EXACT_BINARY[name](_as_numpy(a, compute), _as_numpy(b, compute))
        )
        want = want.astype(out)
    put = lambda x: bt.device_put(x) if isinstance(x, np.ndarray) else x  # noqa: E731
    got = np.asarray(getattr(bnp, name)(put(a), put(b)))
    assert_values_equal(got, want)


@examples(60)
@given(data=st.data())
@returns_memory
def test_power_matches_numpy(data):
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4)
    )
    a = data.draw(operand(F32, shapes.input_shapes[0]))
    b = data.draw(
        P.laid_out(
            lambda s: hnp.arrays(F32, s, elements=st.floats(-8, 8, width=32)),
            shapes.input_shapes[1],
        )
    )
    with np.errstate(all="ignore"):
        want = np.power(a.astype(np.float64), b.astype(np.float64)).astype(F32)
    got = np.asarray(bnp.power(bt.device_put(a), bt.device_put(b)))
    assert_values_equal(got, want, rtol=1e-5, atol=1e-30)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: bnp.negative(x),
        lambda x: bnp.sign(x),
        lambda x: bnp.subtract(x, x),
        lambda x: -x,
    ],
    ids=["negative", "sign", "subtract", "neg-operator"],
)
def test_ops_numpy_refuses_raise_type_error(call):
    x = bt.device_put(np.array([True, False]))
    with pytest.raises(TypeError, match="not defined for bool operands"):
        call(x)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: bnp.negative(x),
        lambda x: bnp.sign(x),
        lambda x: bnp.subtract(x, x),
        lambda x: -x,
    ],
    ids=["negative", "sign", "subtract", "neg-operator"],
)
def test_ops_numpy_refuses_raise_type_error_under_jit(call):
    x = bt.device_put(np.array([True, False]))
    with pytest.raises(TypeError, match="not defined for bool operands"):
        bt.jit(call)(x)


def test_invert_of_float_raises_type_error():
    # The other refused combination: baton agrees with numpy and JAX.
    with pytest.raises(TypeError):
        bnp.invert(bt.device_put(np.ones(2, F32)))
    with pytest.raises(TypeError):
        bnp.bitwise_and(bt.device_put(np.ones(2, F32)), 1)


# ---- reductions ----


@st.composite
def axes_for(draw, ndim, single=False):
    """None, an int or a tuple of distinct axes (negative ones included)."""
    if ndim == 0:
        return None if single else draw(st.sampled_from([None, ()]))
    ax = st.integers(-ndim, ndim - 1)
    if single:
        return draw(st.one_of(st.none(), ax))
    chosen = draw(
        st.one_of(st.none(), ax, st.lists(st.integers(0, ndim - 1), unique=True))
    )
    if isinstance(chosen, list):
        signs = draw(
            st.lists(st.booleans(), min_size=len(chosen), max_size=len(chosen))
        )
        chosen = tuple(a - ndim if s else a for a, s in zip(chosen, signs))
    return chosen


def _norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axis = (axis,) if isinstance(axis, int) else axis
    return tuple(a % ndim if ndim else a for a in axis)


REDUCTIONS = ("sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin")


def _reduction_values(name, dtype, shape):
    if name == "prod" and dtype == F32:
        # |x| in [0.5, 1.5] (<= 81 elements): no order-dependent overflow,
        # underflow or 0 * inf.
        mag = st.floats(0.5, 1.5, width=32)
        el = st.one_of(mag, mag.map(lambda v: -v), st.just(0.0), st.just(np.nan))
        return hnp.arrays(F32, shape, elements=el)
    return P.math_values(dtype, shape)


@examples(200)
@given(data=st.data(), name=st.sampled_from(REDUCTIONS), dtype=st.sampled_from(DTYPES3))
@returns_memory
def test_reductions_match_numpy(data, name, dtype):
    max_side = 3 if name == "prod" else 5
    shape = data.draw(P.shapes(max_side=max_side), label="shape")
    a = data.draw(
        P.laid_out(lambda s: _reduction_values(name, dtype, s), shape), label="a"
    )
    arg = name in ("argmax", "argmin")
    axis = data.draw(axes_for(a.ndim, single=arg), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    x = bt.device_put(a)
    fn = getattr(bnp, name)
    empty = any(a.shape[i] == 0 for i in _norm_axes(axis, a.ndim))
    if name in ("max", "min", "argmax", "argmin") and empty:
        with pytest.raises(ValueError):
            getattr(np, name)(a, axis=axis, keepdims=keepdims)
        with pytest.raises(ValueError):
            fn(x, axis=axis, keepdims=keepdims)
        return
    got = np.asarray(fn(x, axis=axis, keepdims=keepdims))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty slice
        if name in ("sum", "prod"):
            out = F32 if dtype == F32 else I32
            want = getattr(np, name)(
                a.astype(np.float64 if dtype == F32 else I32),
                axis=axis,
                keepdims=keepdims,
            )
        elif name == "mean":
            out = F32
            want = np.mean(a.astype(np.float64), axis=axis, keepdims=keepdims)
        elif name in ("any", "all"):
            out = BOOL
            want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
        elif arg:
            out = I32
            want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
        else:
            out = dtype
            want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
        want = np.asarray(want).astype(out)
    if out == F32 and name == "prod":
        # float32 products in any order: relative error <= n eps (no overflow
        # or underflow with these factors).
        n = max(1, a.size // max(1, want.size)) if a.size else 1
        assert got.shape == want.shape and got.dtype == F32
        np.testing.assert_allclose(got, want, rtol=2 * n * np.finfo(F32).eps, atol=0)
    elif out == F32 and name in ("sum", "mean"):
        # float32 summation in any order: |error| <= n eps sum|a| (for the
        # mean, divided by the count); infinities and NaNs must match.
        assert got.shape == want.shape and got.dtype == F32
        count = a.size // max(1, want.size) if a.size else 0
        bound = np.sum(np.abs(a.astype(np.float64)), axis=axis, keepdims=keepdims)
        bound = bound / max(1, count) if name == "mean" else bound
        finite = np.isfinite(bound) & np.isfinite(want)
        np.testing.assert_array_equal(got[~finite], want[~finite])  # nan == nan here
        err = np.abs(got[finite].astype(np.float64) - want[finite].astype(np.float64))
        tol = 2 * max(1, count) * np.finfo(F32).eps * bound[finite] + 1e-30
        assert (err <= tol).all(), (got, want)
    else:
        assert_values_equal(got, want)
