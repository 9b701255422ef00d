"""Array (and Tracer) operators and methods: numpy's results, JAX's dtype
promotion with weakly typed Python scalars, eager caching, bad operands."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton import _ops

BF16 = np.dtype(ml_dtypes.bfloat16)


def put(a):
    return bt.device_put(np.asarray(a))


def check(got, want, dtype=None):
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert isinstance(got, bt.Array)
    assert got_np.dtype == (want.dtype if dtype is None else np.dtype(dtype))
    assert got_np.shape == want.shape
    np.testing.assert_array_equal(got_np.astype(np.float64), want.astype(np.float64))


A = np.array([[1.5, -2.0, 3.25], [0.0, 7.0, -0.5]], np.float32)
B = np.array([[2.0, 4.0, -1.0], [3.0, -2.0, 0.25]], np.float32)
IA = np.array([[7, -8, 9], [0, 5, -3]], np.int32)
IB = np.array([[2, 3, -4], [1, -2, 5]], np.int32)


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a * b,
        lambda a, b: a / b,
        lambda a, b: a // b,
        lambda a, b: a % b,
        lambda a, b: a**b,
        lambda a, b: a == b,
        lambda a, b: a != b,
        lambda a, b: a < b,
        lambda a, b: a <= b,
        lambda a, b: a > b,
        lambda a, b: a >= b,
    ],
)
def test_binary_operators_match_numpy_float(op):
    a, b = np.abs(A) + 1, B
    check(op(put(a), put(b)), op(a, b))


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a * b,
        lambda a, b: a // b,
        lambda a, b: a % b,
        lambda a, b: a & b,
        lambda a, b: a | b,
        lambda a, b: a ^ b,
        lambda a, b: a == b,
        lambda a, b: a < b,
    ],
)
def test_binary_operators_match_numpy_int(op):
    check(op(put(IA), put(IB)), op(IA, IB))


def test_true_division_of_integers_gives_float32():
    check(put(IA) / put(IB), IA.astype(np.float32) / IB.astype(np.float32))


def test_integer_power():
    e = np.abs(IB)
    check(put(IA) ** put(e), IA**e)


def test_reflected_operators_with_scalars_and_numpy():
    x = put(A)
    check(2 + x, 2 + A)
    check(2 - x, 2 - A)
    check(2 * x, 2 * A)
    check(3 / (x + 10), np.float32(3) / (A + 10))
    check(7 // (x + 10), np.float32(7) // (A + 10))
    check(7 % (x + 10), np.float32(7) % (A + 10))
    check(2**x, np.float32(2) ** A)
    # numpy on the left defers to the baton Array (a baton Array results).
    check(B + x, B + A)
    check(B * x, B * A)
    check(B > x, B > A)


def test_unary_operators():
    check(-put(A), -A)
    check(+put(A), A)
    check(abs(put(A)), np.abs(A))
    check(~put(IA), ~IA)
    check(~put(A > 0), ~(A > 0))


def test_matmul_operator():
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = np.asarray(put(A) @ put(m))
    np.testing.assert_allclose(got, A @ m, rtol=1e-6)
    got = np.asarray(A @ put(m))
    np.testing.assert_allclose(got, A @ m, rtol=1e-6)


def test_divmod():
    q, r = divmod(put(A), 2.5)
    check(q, A // np.float32(2.5))
    check(r, A % np.float32(2.5))


# ---- weak scalars and promotion ----


@pytest.mark.x64  # 64-bit dtypes among the cases
@pytest.mark.parametrize(
    "dtype",
    [np.int8, np.uint8, np.int16, np.int32, np.float16, BF16, np.float32, np.float64],
)
def test_python_scalars_are_weakly_typed(dtype):
    x = put(np.arange(6).astype(dtype))
    for y in (x * 2, 2 * x, x + 1, x - 1, x // 2, x % 3, x**2, bnp.maximum(x, 1)):
        assert y.dtype == np.dtype(dtype)
    f = x * 0.5
    assert f.dtype == (
        np.dtype(dtype) if _ops.is_float(np.dtype(dtype)) else np.float32
    )
    assert (x > 1).dtype == np.bool_


def test_bfloat16_scalar_arithmetic_stays_bfloat16():
    v = np.array([1.5, 2.25, -3.0], BF16)
    x = put(v)
    y = x * 2 + 0.5
    assert y.dtype == BF16
    np.testing.assert_array_equal(np.asarray(y), v * BF16.type(2) + BF16.type(0.5))


def test_weak_scalar_with_bool_and_int_arrays():
    b = put(np.array([True, False]))
    assert (b + 1).dtype == np.int32
    assert (b * 1.5).dtype == np.float32
    assert (b & True).dtype == np.bool_
    i = put(np.array([1, 2], np.int8))
    assert (i + 1.5).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(i + 1.5), [2.5, 3.5])


@pytest.mark.x64  # 64-bit dtypes among the cases
def test_numpy_scalars_are_strong():
    x = put(np.ones(3, np.float32))
    assert (x + np.float64(1)).dtype == np.float64
    assert (x + np.float16(1)).dtype == np.float32
    i = put(np.ones(3, np.int8))
    assert (i + np.int32(1)).dtype == np.int32


@pytest.mark.x64  # 64-bit dtypes among the cases
@pytest.mark.parametrize(
    "a, b, want",
    [
        (np.int8, np.uint8, np.int16),
        (np.int32, np.uint32, np.int64),
        (np.int32, np.float16, np.float16),
        (np.int64, np.float32, np.float32),
        (np.float16, BF16, np.float32),
        (np.bool_, np.int8, np.int8),
        (np.uint8, np.uint32, np.uint32),
        (np.float32, np.float64, np.float64),
        (BF16, np.float32, np.float32),
    ],
)
def test_array_promotion_follows_jax(a, b, want):
    x, y = put(np.ones(2, a)), put(np.ones(2, b))
    assert (x + y).dtype == np.dtype(want)
    assert bnp.promote_types(a, b) == np.dtype(want)


def test_weak_scalar_arguments_of_jit_keep_the_array_dtype():
    """A Python scalar passed to a jitted function is a weakly typed Tracer:
    baton.numpy's composite functions keep treating it as weak."""
    x = put(np.arange(6).astype(BF16))
    for fn in (
        lambda x, s: bnp.floor_divide(x, s),
        lambda x, s: bnp.mod(x, s),
        lambda x, s: bnp.clip(x, s, 3),
        lambda x, s: bnp.where(x > 2, s, x),
        lambda x, s: x.at[1].set(s),
        lambda x, s: bnp.mean(x) * s,
    ):
        assert bt.jit(fn)(x, 2.0).dtype == BF16
    i = put(np.arange(6, dtype=np.int8))
    assert bt.jit(lambda i, s: bnp.floor_divide(i, s))(i, 2).dtype == np.int8


def test_integer_scalar_that_does_not_fit_is_an_error():
    x = put(np.ones(3, np.int8))
    with pytest.raises(OverflowError, match="int8"):
        x + 1000


# ---- methods ----


def test_astype_reshape_transpose():
    x = put(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    check(x.astype(np.int32), a.astype(np.int32))
    check(x.astype("bfloat16"), a.astype(BF16))
    assert x.astype(np.float32) is x
    check(x.reshape(4, 6), a.reshape(4, 6))
    check(x.reshape((-1, 4)), a.reshape(-1, 4))
    check(x.reshape(-1), a.reshape(-1))
    check(x.T, a.T)
    check(x.transpose(1, 0, 2), a.transpose(1, 0, 2))
    check(x.transpose((2, 0, 1)), a.transpose(2, 0, 1))
    check(x.mT, np.swapaxes(a, -1, -2))
    check(x.ravel(), a.ravel())
    check(x.flatten(), a.flatten())
    check(x.swapaxes(0, 2), a.swapaxes(0, 2))
    check(x[:1].squeeze(0), a[:1].squeeze(0))


def test_astype_float_to_int_truncates():
    check(
        put(np.array([1.7, -1.7, 2.5], np.float32)).astype(np.int32),
        np.array([1, -1, 2], np.int32),
    )


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_methods(axis, keepdims):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7
    x = put(a)
    for name in ("sum", "max", "min", "prod"):
        got = getattr(x, name)(axis=axis, keepdims=keepdims)
        want = getattr(a, name)(axis=axis, keepdims=keepdims)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
        assert got.dtype == np.float32
    got = x.mean(axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(
        np.asarray(got), a.mean(axis=axis, keepdims=keepdims), rtol=1e-6
    )


def test_scalar_conversions_len_iteration():
    x = put(np.array([[1.5, 2.0], [3.0, 4.0]], np.float32))
    assert len(x) == 2
    rows = list(x)
    assert len(rows) == 2 and all(isinstance(r, bt.Array) for r in rows)
    np.testing.assert_array_equal(np.asarray(rows[1]), [3.0, 4.0])
    assert float(x[0, 0]) == 1.5
    assert int(x[1, 1]) == 4
    assert bool(x[0, 0] > 1)
    assert x.sum().item() == 10.5
    assert x.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    with pytest.raises(TypeError, match="0-d"):
        iter(x[0, 0]).__next__()


def test_copy_is_independent():
    x = put(A)
    y = x.copy()
    assert y is not x
    check(y, A)


# ---- Tracers get the same methods ----


def test_tracer_methods_inside_jit():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)

    @bt.jit
    def f(x):
        return (
            x[1],
            x[:, ::2],
            x.at[0].set(-1.0),
            x.sum(axis=0),
            x.mean(),
            x.max(axis=1, keepdims=True),
            x // 3,
            x.transpose(),
            x.ravel(),
            (x.astype(np.int32) ^ 5),
            x.argmax(axis=1),
        )

    outs = f(put(a))
    want = (
        a[1],
        a[:, ::2],
        np.concatenate([np.full((1, 4), -1, np.float32), a[1:]]),
        a.sum(axis=0),
        a.mean(),
        a.max(axis=1, keepdims=True),
        a // 3,
        a.T,
        a.ravel(),
        a.astype(np.int32) ^ 5,
        a.argmax(axis=1).astype(np.int32),
    )
    for got, w in zip(outs, want):
        np.testing.assert_allclose(np.asarray(got), w, rtol=1e-6)


def test_tracer_iteration_and_setitem_error():
    @bt.jit
    def f(x):
        return bnp.stack([r * i for i, r in enumerate(x)])

    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(np.asarray(f(put(a))), a * np.arange(3)[:, None])

    @bt.jit
    def g(x):
        x[0] = 1.0
        return x

    with pytest.raises(TypeError, match=r"at\[idx\]\.set"):
        g(put(a))


# ---- eager ops compile once ----


def test_eager_op_compiles_once_per_signature():
    x = put(np.ones(37, np.float32))
    x + 1  # add(f32[37], f32[]): a scalar is a 0-d argument of x's dtype
    1 + x  # add(f32[], f32[37])
    x + x  # add(f32[37], f32[37])
    n = _ops.eager_cache_size()
    for v in (2, 3.5, -7, True):
        x + v
        v + x
    put(np.zeros(37, np.float32)) + 5
    np.ones(37, np.float32) + x
    bnp.add(x, np.ones(37, np.float32))
    assert _ops.eager_cache_size() == n
    put(np.ones(38, np.float32)) + 1  # a new shape: one more program
    assert _ops.eager_cache_size() == n + 1
    for i in range(10):
        x[i]
    m = _ops.eager_cache_size()
    for i in range(10, 30):
        x[i]
        x[-i]
    assert _ops.eager_cache_size() == m


def test_clear_caches_drops_eager_programs():
    x = put(np.ones(41, np.float32))
    x * 3
    assert _ops.eager_cache_size() > 0
    bt.clear_caches()
    assert _ops.eager_cache_size() == 0
    np.testing.assert_array_equal(np.asarray(x * 3), np.full(41, 3, np.float32))


# ---- bad operands ----


def test_unsupported_operands_raise_type_error_and_change_nothing():
    x = put(A)
    for bad in ("a", [1, 2, 3], None, object(), {1: 2}):
        with pytest.raises(TypeError):
            x + bad
        with pytest.raises(TypeError):
            bad * x
    check(x, A)


def test_shape_mismatch_is_a_value_error():
    x = put(A)
    with pytest.raises(ValueError, match="broadcast"):
        x + put(np.ones(4, np.float32))
    check(x, A)


def test_operations_on_deleted_or_donated_arrays():
    x = put(A)
    x.delete()
    with pytest.raises(bt.DeletedArrayError, match="deleted"):
        x + 1
    y = put(A)
    bt.donate(y)
    with pytest.raises(bt.DeletedArrayError, match="donat"):
        y * 2


def test_setitem_is_refused():
    x = put(A)
    with pytest.raises(TypeError, match=r"at\[idx\]\.set"):
        x[0, 0] = 5.0
    check(x, A)


def test_bitwise_on_floats_is_a_type_error():
    with pytest.raises(TypeError, match="integer and bool"):
        put(A) & put(B)
