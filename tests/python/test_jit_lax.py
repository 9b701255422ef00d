"""bt.lax and bt.lax.Tracer: the tracer's operations as Python sees them."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
from baton import lax

bf16 = np.dtype(ml_dtypes.bfloat16)


def run(fn, *args):
    """fn traced by bt.jit and run; numpy results."""
    return bt.device_get(bt.jit(fn)(*args))


def test_lax_exports_the_tracer_ops():
    for name in (
        "add sub mul div rem mod pow maximum minimum bitwise_and bitwise_or "
        "bitwise_not eq ne lt le gt ge compare select where neg abs sign exp log "
        "tanh logistic sqrt rsqrt sin cos floor ceil round convert_element_type "
        "astype to_memory_kind reshape transpose broadcast_to broadcast_in_dim "
        "slice dynamic_slice dynamic_update_slice concatenate pad take gather "
        "scatter sum prod max min matmul dot_general iota full zeros ones "
        "constant capture as_tracer is_tracing Tracer"
    ).split():
        assert hasattr(lax, name), name
        assert getattr(lax, name).__doc__, name
    assert bt.lax is lax


def test_tracer_metadata():
    seen = {}

    def fn(x, y):
        seen.update(
            shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size, kind=y.memory_kind
        )
        assert isinstance(x, lax.Tracer) and lax.is_tracing()
        assert "Tracer(shape=(2, 3), dtype=bfloat16)" == repr(x)
        assert len(x) == 2
        return x

    x = bt.device_put(np.ones((2, 3), bf16))
    y = bt.device_put(np.ones(4, np.float32), memory_kind="pinned_host")
    bt.jit(fn)(x, y)
    assert seen == dict(shape=(2, 3), dtype=bf16, ndim=2, size=6, kind="pinned_host")
    assert not lax.is_tracing()


ELEMENTWISE = [
    ("add", np.add),
    ("sub", np.subtract),
    ("mul", np.multiply),
    ("div", np.true_divide),
    ("maximum", np.maximum),
    ("minimum", np.minimum),
    ("pow", np.power),
    ("rem", np.fmod),
    ("mod", np.mod),
]


@pytest.mark.parametrize(("name", "ref"), ELEMENTWISE)
def test_binary_ops_match_numpy_with_broadcasting(name, ref):
    a = np.array([[1.5, -2.0, 3.0, 4.25]], np.float32)
    if name == "pow":
        a = np.abs(a)
    b = np.array([[2.0], [-3.0], [0.5]], np.float32)
    got = run(getattr(lax, name), bt.device_put(a), bt.device_put(b))
    np.testing.assert_allclose(got, ref(a, b), rtol=1e-6)
    assert got.shape == (3, 4) and got.dtype == np.float32


@pytest.mark.parametrize(
    ("name", "ref"),
    [
        ("eq", np.equal),
        ("ne", np.not_equal),
        ("lt", np.less),
        ("le", np.less_equal),
        ("gt", np.greater),
        ("ge", np.greater_equal),
    ],
)
def test_comparisons(name, ref):
    a = np.array([1, 2, 3, 4], np.int32)
    b = np.array([4, 2, 1, 4], np.int32)
    got = run(getattr(lax, name), bt.device_put(a), bt.device_put(b))
    np.testing.assert_array_equal(got, ref(a, b))
    assert got.dtype == np.bool_
    got = run(lambda x: lax.compare(x, 2, "LT"), bt.device_put(a))
    np.testing.assert_array_equal(got, a < 2)


@pytest.mark.parametrize(
    ("name", "ref"),
    [
        ("exp", np.exp),
        ("log", np.log),
        ("tanh", np.tanh),
        ("sqrt", np.sqrt),
        ("sin", np.sin),
        ("cos", np.cos),
        ("floor", np.floor),
        ("ceil", np.ceil),
        # jax.lax.round's default: halves away from zero (not numpy's rint).
        ("round", lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)),
        ("abs", np.abs),
        ("sign", np.sign),
        ("neg", np.negative),
    ],
)
def test_unary_ops(name, ref):
    a = np.array([0.5, 1.5, 2.5, 3.75], np.float32)
    np.testing.assert_allclose(
        run(getattr(lax, name), bt.device_put(a)), ref(a), rtol=1e-6
    )


def test_integer_math_promotes_to_float32():
    a = bt.device_put(np.array([1, 4, 9], np.int32))
    got = run(lax.sqrt, a)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [1, 2, 3])
    assert run(lambda x: x / 2, a).dtype == np.float32


@pytest.mark.x64  # 64-bit dtypes among the cases
def test_weak_python_scalars_keep_the_array_dtype():
    for dtype in (bf16, np.float16, np.int8, np.uint8, np.int32, np.float64):
        x = bt.device_put(np.array([1, 2, 3], dtype))
        outs = run(lambda x: (x * 2, 2 * x, x + 1, 1 - x, x - 1, lax.maximum(x, 2)), x)
        for o in outs:
            assert o.dtype == dtype, (dtype, o.dtype)
        a = np.array([1, 2, 3], dtype)
        np.testing.assert_array_equal(outs[0].astype(np.float32), [2, 4, 6])
        np.testing.assert_array_equal(outs[3], (1 - a).astype(dtype))
    # A float scalar with an integer array gives float32; an int with bool int32.
    i = bt.device_put(np.array([1, 2], np.int32))
    assert run(lambda x: x * 0.5, i).dtype == np.float32
    b = bt.device_put(np.array([True, False]))
    assert run(lambda x: x + 1, b).dtype == np.int32
    # numpy scalars are strongly typed (promotion as in numpy/JAX).
    h = bt.device_put(np.array([1, 2], np.float16))
    assert run(lambda x: x * np.float32(2), h).dtype == np.float32


def test_scalar_that_does_not_fit_is_an_error():
    x = bt.device_put(np.array([1, 2], np.int8))
    with pytest.raises(ValueError, match="does not fit"):
        bt.jit(lambda x: x + 1000)(x)
    with pytest.raises(OverflowError, match="64 bits"):
        bt.jit(lambda x: x + 2**70)(x)


def test_tracer_operators():
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    x = bt.device_put(a)

    def fn(t):
        return (
            t + 1,
            1 + t,
            t - t,
            3 - t,
            t * t,
            t / 2,
            2 / t,
            t**2,
            2**t,
            -t,
            +t,
            abs(-t),
            t % 3,
            t @ t,
            a @ t,
            t == 2,
            t != 2,
            t < 2,
            t <= 2,
            t > 2,
            t >= 2,
            (t > 1) & (t < 4),
            (t < 2) | (t > 3),
            ~(t > 2),
            a + t,
        )

    got = run(fn, x)
    want = (
        a + 1,
        1 + a,
        a - a,
        3 - a,
        a * a,
        a / 2,
        2 / a,
        a**2,
        2**a,
        -a,
        a,
        abs(a),
        a % 3,
        a @ a,
        a @ a,
        a == 2,
        a != 2,
        a < 2,
        a <= 2,
        a > 2,
        a >= 2,
        (a > 1) & (a < 4),
        (a < 2) | (a > 3),
        ~(a > 2),
        a + a,
    )
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
        assert g.dtype == w.dtype
    i = bt.device_put(np.array([6, 5, -7], np.int32))
    ib = run(lambda t: (t & 3, t | 8, ~t, t % 4, -7 % t), i)
    ia = np.array([6, 5, -7], np.int32)
    for g, w in zip(ib, (ia & 3, ia | 8, ~ia, ia % 4, -7 % ia)):
        np.testing.assert_array_equal(g, w)


def test_tracer_methods():
    x = bt.device_put(np.arange(6, dtype=np.float32))
    got = run(lambda t: (t.astype(np.int32), t.reshape(2, 3), t.reshape((3, -1)).T), x)
    assert got[0].dtype == np.int32
    assert got[1].shape == (2, 3) and got[2].shape == (2, 3)
    np.testing.assert_array_equal(got[2], np.arange(6).reshape(3, 2).T)


def test_shape_ops():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = bt.device_put(a)
    got = run(
        lambda t: (
            lax.reshape(t, (6, -1)),
            lax.transpose(t, (2, 0, 1)),
            lax.transpose(t),
            lax.broadcast_to(lax.slice(t, (0, 0, 0), (1, 3, 4)), (5, 3, 4)),
            lax.broadcast_in_dim(lax.sum(t, axes=(1, 2)), (2, 7), (0,)),
            lax.slice(t, (0, 1, 0), (2, 3, 4), (1, 1, 2)),
            lax.concatenate([t, t * 2], axis=-1),
            lax.pad(t, 0.5, (0, 1, 1), (1, 0, -1)),
            lax.pad(lax.reshape(t, (-1,)), -1, (1,), (0,), (1,)),
        ),
        x,
    )
    np.testing.assert_array_equal(got[0], a.reshape(6, -1))
    np.testing.assert_array_equal(got[1], a.transpose(2, 0, 1))
    np.testing.assert_array_equal(got[2], a.T)
    np.testing.assert_array_equal(got[3], np.broadcast_to(a[:1], (5, 3, 4)))
    np.testing.assert_array_equal(
        got[4], np.broadcast_to(a.sum((1, 2))[:, None], (2, 7))
    )
    np.testing.assert_array_equal(got[5], a[:, 1:3, ::2])
    np.testing.assert_array_equal(got[6], np.concatenate([a, a * 2], -1))
    padded = np.pad(a, ((0, 1), (1, 0), (1, 0)), constant_values=0.5)[:, :, :-1]
    np.testing.assert_array_equal(got[7], padded)
    flat = a.reshape(-1)
    interior = np.full(2 * flat.size, -1, np.float32)
    interior[1::2] = flat
    np.testing.assert_array_equal(got[8], interior)


def test_dynamic_slices_with_traced_and_int_starts():
    a = np.arange(10, dtype=np.float32)
    x = bt.device_put(a)
    i = bt.device_put(np.int32(3))
    got = run(
        lambda t, i: (
            lax.dynamic_slice(t, [i], [4]),
            lax.dynamic_slice(t, [8], [4]),  # clamped to fit
            lax.dynamic_update_slice(t, lax.full((2,), 7.0), [i]),
            lax.dynamic_update_slice(t, np.array([1, 2], np.int32), (9,)),
        ),
        x,
        i,
    )
    np.testing.assert_array_equal(got[0], a[3:7])
    np.testing.assert_array_equal(got[1], a[6:10])
    want = a.copy()
    want[3:5] = 7
    np.testing.assert_array_equal(got[2], want)
    want = a.copy()
    want[8:10] = [1, 2]
    np.testing.assert_array_equal(got[3], want)


def test_take_and_scatter_modes():
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    x = bt.device_put(a)
    idx = np.array([2, 0, 2], np.int32)
    got = run(
        lambda t: (
            lax.take(t, idx, axis=0),
            lax.gather(t, np.array([1]), axis=1),
            lax.scatter(t, idx, 1.0, mode="add"),
            lax.scatter(t, idx, np.ones((3, 3), np.float32) * 2, mode="mul"),
            lax.scatter(t, np.array([1, 9]), -1.0),  # out of range: dropped
            lax.scatter(t, idx, 100.0, mode="min"),
            lax.scatter(t, idx, 100.0, mode="max"),
        ),
        x,
    )
    np.testing.assert_array_equal(got[0], a[idx])
    np.testing.assert_array_equal(got[1], a[:, [1]])
    want = a.copy()
    np.add.at(want, idx, 1.0)
    np.testing.assert_array_equal(got[2], want)
    want = a.copy()
    np.multiply.at(want, idx, 2.0)
    np.testing.assert_array_equal(got[3], want)
    want = a.copy()
    want[1] = -1
    np.testing.assert_array_equal(got[4], want)
    np.testing.assert_array_equal(got[5], a)
    want = a.copy()
    want[[0, 2]] = 100
    np.testing.assert_array_equal(got[6], want)
    with pytest.raises(ValueError, match="mode"):
        run(lambda t: lax.scatter(t, idx, 1.0, mode="xor"), x)


def test_reductions():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 5
    x = bt.device_put(a)
    for name, ref in (
        ("sum", np.sum),
        ("prod", np.prod),
        ("max", np.max),
        ("min", np.min),
    ):
        f = getattr(lax, name)
        got = run(
            lambda t, f=f: (
                f(t),
                f(t, 1),
                f(t, (0, -1)),
                f(t, -1, keepdims=True),
                f(t, None, True),
            ),
            x,
        )
        want = (
            ref(a),
            ref(a, 1),
            ref(a, (0, 2)),
            ref(a, -1, keepdims=True),
            ref(a, keepdims=True),
        )
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5)
            assert g.shape == w.shape
    b = bt.device_put(np.array([True, True, False]))
    assert run(lax.sum, b).dtype == np.int32 and int(run(lax.sum, b)) == 2


def test_contractions():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    c = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x, y, z = bt.device_put(a), bt.device_put(b), bt.device_put(c)
    got = run(
        lambda x, y, z: (
            lax.matmul(x, y),
            lax.matmul(
                lax.reshape(lax.slice(y, (0, 0), (1, 4)), (4,)), lax.transpose(y)
            ),
            lax.dot_general(x, z, (((1,), (1,)), ((0,), (0,)))),
        ),
        x,
        y,
        z,
    )
    np.testing.assert_allclose(got[0], a @ b)
    np.testing.assert_allclose(got[1], b[0] @ b.T)
    np.testing.assert_allclose(got[2], np.einsum("bk,bkn->bn", a, c))
    with pytest.raises(TypeError, match="dimension_numbers"):
        run(lambda x, y: lax.dot_general(x, y, ((1,), (0,))), x, y)


def test_creation_ops():
    got = run(
        lambda: (
            lax.iota(np.int32, 4),
            lax.iota("float32", (2, 3), 1),
            lax.full((2,), 3),
            lax.full((2, 2), 1.5, bf16),
            lax.zeros(3, np.int8),
            lax.ones((1, 2)),
            lax.constant(np.arange(3, dtype=np.int16)),
            lax.constant(2.0),
            lax.constant([1.0, 2.0], np.float32),
        )
    )
    np.testing.assert_array_equal(got[0], np.arange(4))
    np.testing.assert_array_equal(got[1], np.broadcast_to(np.arange(3.0), (2, 3)))
    assert got[2].dtype == np.int32 and list(got[2]) == [3, 3]
    assert got[3].dtype == bf16
    assert got[4].dtype == np.int8 and got[5].dtype == np.float32
    assert got[6].dtype == np.int16
    assert got[7].dtype == np.float32 and got[7].shape == ()
    assert got[8].dtype == np.float32


def test_select_where_convert_and_bf16():
    a = np.array([1.0, -2.0, 3.0], np.float32)
    x = bt.device_put(a)
    got = run(
        lambda t: (
            lax.select(t > 0, t, 0.0),
            lax.where(t > 0, 1, t),
            lax.where(np.array([True, False, True]), t, t * 10),
            lax.convert_element_type(t, bf16) * 2,
            lax.astype(t, np.int32),
        ),
        x,
    )
    np.testing.assert_array_equal(got[0], np.where(a > 0, a, 0))
    np.testing.assert_array_equal(got[1], np.where(a > 0, 1, a))
    np.testing.assert_array_equal(got[2], np.where([True, False, True], a, a * 10))
    assert got[3].dtype == bf16
    np.testing.assert_array_equal(got[3].astype(np.float32), a * 2)
    np.testing.assert_array_equal(got[4], a.astype(np.int32))


def test_shape_errors_are_value_errors_naming_the_op():
    x = bt.device_put(np.ones(3, np.float32))
    y = bt.device_put(np.ones(4, np.float32))
    with pytest.raises(ValueError, match=r"add.*\(3,\).*\(4,\)"):
        bt.jit(lambda a, b: a + b)(x, y)
    with pytest.raises(ValueError, match="reshape"):
        bt.jit(lambda a: lax.reshape(a, (2, 2)))(x)
    with pytest.raises(ValueError, match="concatenate"):
        bt.jit(lambda a: lax.concatenate([a, lax.reshape(a, (3, 1))]))(x)
    with pytest.raises(TypeError, match=r"matmul|dot"):  # TypeError, as in JAX
        bt.jit(lambda a, b: a @ b)(x, y)
    with pytest.raises(ValueError, match="memory kind"):
        bt.jit(lambda a: lax.to_memory_kind(a, "gpu"))(x)


def test_type_errors():
    x = bt.device_put(np.ones(3, np.float32))
    # Outside any trace lax runs eagerly (test_concrete_values.py).
    assert np.asarray(lax.add(x, 1)).tolist() == [2.0, 2.0, 2.0]
    assert np.asarray(lax.iota(np.int32, 3)).tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match="dtype"):
        lax.astype(x, np.uint16)
    with pytest.raises(TypeError, match="dtype"):
        bt.jit(lambda a: lax.astype(a, np.clongdouble))(x)
    with pytest.raises(TypeError, match="str"):
        bt.jit(lambda a: lax.add(a, "one"))(x)
    d = bt.donate(bt.device_put(np.ones(3, np.float32)))
    with pytest.raises(TypeError, match="donate"):
        bt.jit(lambda a: lax.add(a, d))(x)
    # Tracer operators return NotImplemented for foreign types.
    with pytest.raises(TypeError):
        bt.jit(lambda a: a + "one")(x)
    seen = []
    bt.jit(lambda a: seen.append(a == None) or a)(x)  # noqa: E711
    assert seen == [False]


def test_concretization_errors():
    x = bt.device_put(np.ones(3, np.float32))
    for fn in (
        lambda t: t if lax.sum(t) > 0 else -t,  # bool()
        lambda t: int(lax.sum(t)),
        lambda t: float(lax.sum(t)),
        lambda t: np.asarray(t),
        lambda t: range(lax.sum(t).astype(np.int32)),
    ):
        with pytest.raises(TypeError, match="traced value"):
            bt.jit(fn)(x)


def test_escaped_tracer_is_an_error():
    leaked = []

    def fn(t):
        leaked.append(t)
        return t + 1

    x = bt.device_put(np.ones(3, np.float32))
    bt.jit(fn)(x)
    t = leaked[0]
    assert "escaped" in repr(t) and t.shape == (3,)
    with pytest.raises(RuntimeError, match="escaped"):
        t + 1
    with pytest.raises(RuntimeError, match="escaped"):
        bt.jit(lambda a: a + t)(x)


def test_captured_arrays_are_hidden_arguments_and_numpy_constants():
    w = bt.device_put(np.full(4, 2.0, np.float32))
    c = np.full(4, 3.0, np.float32)
    x = bt.device_put(np.ones(4, np.float32))

    def fn(t):
        return lax.capture(w) * t + lax.as_tracer(c) + w

    f = bt.jit(fn)
    np.testing.assert_array_equal(np.asarray(f(x)), [7, 7, 7, 7])
    ma = f.lower(x).compile().memory_analysis()
    assert ma.argument_size_in_bytes == 32  # x and the captured w
    assert ma.constant_size_in_bytes == 16  # c


def test_div_of_integers_rounds_toward_zero_as_jax_lax_div():
    a = np.array([7, -7, 7, -7, 5], np.int32)
    b = np.array([2, 2, -2, -2, 0], np.int32)
    # C division, and x / 0 = -1 as XLA; the dtype stays int32.
    for r in (lax.div(a, b), bt.jit(lax.div)(a, b)):
        assert r.dtype == np.int32
        assert np.asarray(r).tolist() == [3, -3, -3, 3, -1]
    assert int(lax.div(7, 2)) == 3
    x = bt.device_put(np.array([7.0, -1.0], np.float32))
    np.testing.assert_array_equal(np.asarray(lax.div(x, 2.0)), [3.5, -0.5])
    # The / operator stays true division, as numpy's and JAX's.
    assert np.asarray(bt.jit(lambda a, b: a / b)(a[:4], b[:4])).tolist() == [
        3.5,
        -3.5,
        -3.5,
        3.5,
    ]
