"""bt.lax's elementwise, comparison, bitwise, creation, shape, sorting,
gather/scatter names and its type aliases (GatherScatterMode,
DotDimensionNumbers, PrecisionLike, ConvGeneralDilatedDimensionNumbers)
against jax.lax: the same values, shapes and dtypes, eagerly and under
bt.jit, and gradients where the function is differentiable."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import baton as bt  # noqa: E402
import baton.lax as blax  # noqa: E402
import baton.numpy as bnp  # noqa: E402

jlax = jax.lax
F32 = np.float32
RNG = np.random.default_rng(7)


def _close(b, j, rtol=1e-5, atol=1e-6):
    b, j = np.asarray(b), np.asarray(j)
    assert b.shape == j.shape, (b.shape, j.shape)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    if b.dtype.kind in "biu":
        np.testing.assert_array_equal(b, j)
    else:
        np.testing.assert_allclose(b, j, rtol=rtol, atol=atol, equal_nan=True)


def _rand(shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype(F32)


# ---- unary elementwise: values eagerly and under jit, and gradients ----

# name -> (input, differentiable)
UNARY = {
    "abs": (_rand((3, 4)), True),
    "atan": (_rand((3, 4)), True),
    "ceil": (_rand((3, 4)) * 3, False),
    "cos": (_rand((3, 4)), True),
    "exp": (_rand((3, 4)), True),
    "expm1": (_rand((3, 4)), True),
    "log": (_rand((3, 4), 0.1, 3.0), True),
    "log1p": (_rand((3, 4), -0.5, 3.0), True),
    "neg": (_rand((3, 4)), True),
    "sign": (np.array([-2.0, -0.0, 0.0, 1.5, np.nan], F32), False),
    "sin": (_rand((3, 4)), True),
    "sqrt": (_rand((3, 4), 0.1, 4.0), True),
    "tan": (_rand((3, 4), -1.2, 1.2), True),
    "tanh": (_rand((3, 4)), True),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    x, differentiable = UNARY[name]
    bf, jf = getattr(blax, name), getattr(jlax, name)
    want = jf(x)
    _close(bf(x), want, rtol=2e-6)
    _close(bt.jit(bf)(x), want, rtol=2e-6)
    if differentiable:
        gb = bt.grad(
            lambda v: bnp.sum(bf(v) * bnp.arange(v.size, dtype=F32).reshape(v.shape))
        )(x)
        gj = jax.grad(
            lambda v: jnp.sum(jf(v) * jnp.arange(v.size, dtype=F32).reshape(v.shape))
        )(x)
        _close(gb, gj, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["abs", "neg", "sign"])
def test_unary_int(name):
    x = np.array([-5, -1, 0, 3, 2**31 - 1], np.int32)
    _close(getattr(blax, name)(x), getattr(jlax, name)(x))
    _close(bt.jit(getattr(blax, name))(x), getattr(jlax, name)(x))


@pytest.mark.parametrize(
    "name",
    [
        "abs",
        "cos",
        "exp",
        "log",
        "sin",
        "sqrt",
        "tanh",
        "neg",
        "sign",
        "expm1",
        "log1p",
        "tan",
        "atan",
    ],
)
def test_unary_complex(name):
    x = (_rand((5,), 0.2, 1.0) + 1j * _rand((5,), -1.0, 1.0)).astype(np.complex64)
    _close(getattr(blax, name)(x), getattr(jlax, name)(x), rtol=1e-5, atol=1e-6)


def test_abs_sign_grad_at_kinks():
    # JAX: d|x|/dx at 0 is sign(0) = 0... as is sign's derivative everywhere.
    x = np.array([-1.0, 0.0, 2.0], F32)
    _close(
        bt.grad(lambda v: bnp.sum(blax.abs(v)))(x),
        jax.grad(lambda v: jnp.sum(jlax.abs(v)))(x),
    )
    _close(
        bt.grad(lambda v: bnp.sum(blax.sign(v) * v))(x),
        jax.grad(lambda v: jnp.sum(jlax.sign(v) * v))(x),
    )


# ---- complex parts ----


@pytest.mark.parametrize("name", ["conj", "real", "imag"])
def test_complex_parts(name):
    z = (_rand((2, 3)) + 1j * _rand((2, 3))).astype(np.complex64)
    bf, jf = getattr(blax, name), getattr(jlax, name)
    _close(bf(z), jf(z))
    _close(bt.jit(bf)(z), jf(z))
    # gradient of a real loss through the part, wrt the two reals a
    # complex input is built from
    a, b = _rand((4,)), _rand((4,))
    w1, w2 = _rand((4,)), _rand((4,))

    def loss(mod, lax_mod, f):
        def fn(u, v):
            out = f(lax_mod.complex(u, v))
            return mod.sum(mod.real(out) * w1 + mod.imag(out) * w2)

        return fn

    gb = bt.grad(loss(bnp, blax, bf), argnums=(0, 1))(a, b)
    gj = jax.grad(loss(jnp, jlax, jf), argnums=(0, 1))(a, b)
    for u, v in zip(gb, gj):
        _close(u, v, rtol=1e-5, atol=1e-5)


def test_complex_parts_real_input():
    # JAX: conj of a float32 gives complex64; real and imag take complex
    # only; conj rejects integers
    x = _rand((3,))
    _close(blax.conj(x), jlax.conj(x))
    _close(bt.jit(blax.conj)(x), jlax.conj(x))
    for name in ("real", "imag"):
        with pytest.raises(TypeError):
            getattr(jlax, name)(x)
        with pytest.raises(TypeError):
            getattr(blax, name)(x)
    i = np.arange(3, dtype=np.int32)
    with pytest.raises(TypeError):
        jlax.conj(i)
    with pytest.raises(TypeError):
        blax.conj(i)
    _close(
        bt.grad(lambda v: bnp.sum(bnp.real(blax.conj(v)) * v))(x),
        jax.grad(lambda v: jnp.sum(jnp.real(jlax.conj(v)) * v))(x),
    )


# ---- binary arithmetic ----


def test_sub_pow_atan2_float():
    x, y = _rand((3, 4), 0.2, 2.0), _rand((3, 4), -2.0, 2.0)
    for name in ("sub", "pow", "atan2", "div"):
        bf, jf = getattr(blax, name), getattr(jlax, name)
        _close(bf(x, y), jf(x, y), rtol=1e-5)
        _close(bt.jit(bf)(x, y), jf(x, y), rtol=1e-5)
        gb = bt.grad(lambda u, v, f=bf: bnp.sum(f(u, v)), argnums=(0, 1))(x, y)
        gj = jax.grad(lambda u, v, f=jf: jnp.sum(f(u, v)), argnums=(0, 1))(x, y)
        for u, v in zip(gb, gj):
            _close(u, v, rtol=1e-4, atol=1e-5)


def test_div_int_rounds_toward_zero():
    x = np.array([7, -7, 7, -7, 0, 5], np.int32)
    y = np.array([2, 2, -2, -2, 3, 1], np.int32)
    _close(blax.div(x, y), jlax.div(x, y))
    _close(bt.jit(blax.div)(x, y), jlax.div(x, y))
    _close(blax.sub(x, y), jlax.sub(x, y))


def test_pow_integer_exponent_and_complex():
    x = _rand((5,), 0.5, 2.0)
    n = np.array([0, 1, 2, 3, -2], np.int32)
    _close(blax.pow(x, n), jlax.pow(x, n), rtol=1e-5)
    _close(blax.pow(x, F32(2.5)), jlax.pow(x, F32(2.5)), rtol=1e-5)
    z = (x + 1j * x[::-1]).astype(np.complex64)
    _close(blax.pow(z, z), jlax.pow(z, z), rtol=1e-4, atol=1e-5)


def test_atan2_quadrants_and_zeros():
    y = np.array([1.0, 1.0, -1.0, -1.0, 0.0, -0.0, 0.0, -0.0], F32)
    x = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0], F32)
    _close(blax.atan2(y, x), jlax.atan2(y, x))


# ---- comparisons ----


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_compare(name, dtype):
    if dtype is np.bool_:
        x = np.array([True, False, True, False])
        y = np.array([True, True, False, False])
    else:
        x = np.array([1, 2, 3, -1, 0, 5], dtype)
        y = np.array([1, 3, 2, -1, 0, 4], dtype)
    bf, jf = getattr(blax, name), getattr(jlax, name)
    _close(bf(x, y), jf(x, y))
    _close(bt.jit(bf)(x, y), jf(x, y))


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_compare_nan_and_signed_zero(name):
    x = np.array([np.nan, 0.0, -0.0, 1.0, np.inf], F32)
    y = np.array([np.nan, -0.0, 0.0, np.nan, np.inf], F32)
    _close(getattr(blax, name)(x, y), getattr(jlax, name)(x, y))


# ---- bitwise and shifts ----


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8, np.uint8, np.bool_])
def test_bitwise_not_xor(dtype):
    if dtype is np.bool_:
        x = np.array([True, False, True, False])
        y = np.array([True, True, False, False])
    else:
        info = np.iinfo(dtype)
        x = np.array([0, 1, 5, info.max, info.min, 3], dtype)
        y = np.array([1, 1, 3, 7, info.max, 0], dtype)
    _close(blax.bitwise_not(x), jlax.bitwise_not(x))
    _close(blax.bitwise_xor(x, y), jlax.bitwise_xor(x, y))
    _close(bt.jit(blax.bitwise_xor)(x, y), jlax.bitwise_xor(x, y))
    _close(bt.jit(blax.bitwise_not)(x), jlax.bitwise_not(x))


@pytest.mark.parametrize(
    "name", ["shift_left", "shift_right_arithmetic", "shift_right_logical"]
)
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8, np.uint8])
def test_shifts(name, dtype):
    info = np.iinfo(dtype)
    bits = info.bits
    x = np.array(
        [1, -1 if info.min < 0 else info.max, 5, info.max, info.min, 12, 3, 3], dtype
    )
    # includes shift counts at and beyond the bit width (XLA: 0 or sign fill)
    y = np.array([0, 1, 2, 3, 1, bits - 1, bits, bits + 3], dtype)
    bf, jf = getattr(blax, name), getattr(jlax, name)
    _close(bf(x, y), jf(x, y))
    _close(bt.jit(bf)(x, y), jf(x, y))


def test_bitwise_rejects_float():
    x = _rand((3,))
    for name in (
        "bitwise_not",
        "bitwise_xor",
        "shift_left",
        "shift_right_logical",
        "shift_right_arithmetic",
    ):
        args = (x,) if name == "bitwise_not" else (x, x)
        with pytest.raises(TypeError):
            getattr(jlax, name)(*args)
        with pytest.raises(TypeError):
            getattr(blax, name)(*args)


# ---- creation ----


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint8])
def test_iota(dtype):
    _close(blax.iota(dtype, 6), jlax.iota(dtype, 6))
    _close(bt.jit(lambda: blax.iota(dtype, 6))(), jlax.iota(dtype, 6))
    _close(blax.iota(dtype, 0), jlax.iota(dtype, 0))


@pytest.mark.parametrize(
    "shape,fill,dtype",
    [
        ((2, 3), 1.5, None),
        ((4,), 7, None),
        ((), True, None),
        ((2, 2), 3, np.float32),
        ((3,), 2.7, np.int32),
    ],
)
def test_full(shape, fill, dtype):
    _close(blax.full(shape, fill, dtype), jlax.full(shape, fill, dtype))
    _close(
        bt.jit(lambda: blax.full(shape, fill, dtype))(), jlax.full(shape, fill, dtype)
    )


def test_full_array_fill_and_grad():
    v = np.float32(2.5)
    _close(blax.full((2, 3), v), jlax.full((2, 3), v))
    _close(
        bt.grad(
            lambda s: bnp.sum(blax.full((2, 3), s) * bnp.arange(6.0).reshape(2, 3))
        )(v),
        jax.grad(
            lambda s: jnp.sum(jlax.full((2, 3), s) * jnp.arange(6.0).reshape(2, 3))
        )(v),
    )


@pytest.mark.parametrize(
    "shape,dtype", [((2, 3), np.float32), ((4,), np.int32), ((), np.bool_)]
)
def test_empty(shape, dtype):
    # the values of empty are not specified: shape and dtype are
    b, j = blax.empty(shape, dtype), jlax.empty(shape, dtype)
    assert np.asarray(b).shape == np.asarray(j).shape == shape
    assert np.asarray(b).dtype == np.asarray(j).dtype
    bj = bt.jit(lambda: blax.empty(shape, dtype))()
    assert (np.asarray(bj).shape, np.asarray(bj).dtype) == (shape, np.dtype(dtype))


def test_broadcast_like():
    x, like = _rand((3, 1)), _rand((2, 3, 4))
    _close(blax.broadcast_like(x, like), jlax.broadcast_like(x, like))
    _close(bt.jit(blax.broadcast_like)(x, like), jlax.broadcast_like(x, like))
    s = np.int32(4)
    _close(blax.broadcast_like(s, like), jlax.broadcast_like(s, like))
    _close(
        bt.grad(lambda u: bnp.sum(blax.broadcast_like(u, like) * like))(x),
        jax.grad(lambda u: jnp.sum(jlax.broadcast_like(u, like) * like))(x),
    )


# ---- pad (JAX's padding_config: (low, high, interior) per dimension) ----


@pytest.mark.parametrize(
    "config",
    [
        [(1, 2, 0), (0, 0, 0)],
        [(0, 0, 1), (2, 1, 2)],
        [(-1, 1, 0), (1, -2, 1)],
    ],
)
def test_pad(config):
    x = _rand((3, 4))
    want = jlax.pad(x, F32(-1.0), config)
    _close(blax.pad(x, F32(-1.0), config), want)
    _close(bt.jit(lambda v: blax.pad(v, F32(-1.0), config))(x), want)
    w = _rand(tuple(want.shape))
    _close(
        bt.grad(lambda v, p: bnp.sum(blax.pad(v, p, config) * w), argnums=(0, 1))(
            x, F32(0.5)
        )[0],
        jax.grad(lambda v, p: jnp.sum(jlax.pad(v, p, config) * w), argnums=(0, 1))(
            x, F32(0.5)
        )[0],
    )
    # (JAX 0.10.2's grad wrt padding_value alone fails inside JAX: take
    # both cotangents)
    _close(
        bt.grad(lambda v, p: bnp.sum(blax.pad(v, p, config) * w), argnums=(0, 1))(
            x, F32(0.5)
        )[1],
        jax.grad(lambda v, p: jnp.sum(jlax.pad(v, p, config) * w), argnums=(0, 1))(
            x, F32(0.5)
        )[1],
        rtol=1e-4,
    )


def test_pad_int_1d():
    x = np.arange(5, dtype=np.int32)
    _close(blax.pad(x, np.int32(9), [(2, 1, 1)]), jlax.pad(x, np.int32(9), [(2, 1, 1)]))


# ---- sort (JAX's: one operand or several, num_keys, is_stable) ----


@pytest.mark.parametrize("dimension", [-1, 0])
def test_sort_one(dimension):
    x = _rand((4, 5))
    x[0, 0] = np.nan
    x[1, 1] = -0.0
    _close(blax.sort(x, dimension=dimension), jlax.sort(x, dimension=dimension))
    _close(
        bt.jit(lambda v: blax.sort(v, dimension=dimension))(x),
        jlax.sort(x, dimension=dimension),
    )
    _close(
        blax.sort(x, dimension, is_stable=True), jlax.sort(x, dimension, is_stable=True)
    )
    _close(
        blax.sort(x, dimension, is_stable=False),
        jlax.sort(x, dimension, is_stable=False),
    )
    xi = RNG.integers(-5, 5, (4, 5)).astype(np.int32)
    _close(blax.sort(xi, dimension), jlax.sort(xi, dimension))
    y = _rand((4, 5))
    w = _rand((4, 5))
    _close(
        bt.grad(lambda v: bnp.sum(blax.sort(v, dimension) * w))(y),
        jax.grad(lambda v: jnp.sum(jlax.sort(v, dimension) * w))(y),
    )


def test_sort_positional_is_stable():
    # JAX's positional order: (operand, dimension, is_stable, num_keys).
    x = _rand((6,))
    _close(blax.sort(x, 0, True), jlax.sort(x, 0, True))
    _close(blax.sort(x, 0, False, 1), jlax.sort(x, 0, False, 1))
    # baton's own keyword: largest first
    _close(blax.sort(x, 0, descending=True), np.sort(np.asarray(x))[::-1])


def test_sort_several_operands():
    k = np.array([[3, 1, 2, 1], [0, 0, 5, -1]], np.int32)
    v = _rand((2, 4))
    u = np.arange(8, dtype=np.int32).reshape(2, 4)
    got = blax.sort((k, v, u), dimension=1)
    want = jlax.sort((k, v, u), dimension=1)
    assert isinstance(got, tuple) and len(got) == 3
    for b, j in zip(got, want):
        _close(b, j)
    got = bt.jit(lambda a, b, c: blax.sort([a, b, c], dimension=1))(k, v, u)
    for b, j in zip(got, want):
        _close(b, j)
    # num_keys=2: ties in the first key broken by the second
    k2 = np.array([[1, 1, 0, 1]], np.int32)
    s2 = np.array([[3.0, 1.0, 5.0, 2.0]], F32)
    got = blax.sort((k2, s2, u[:1]), num_keys=2)
    want = jlax.sort((k2, s2, u[:1]), num_keys=2)
    for b, j in zip(got, want):
        _close(b, j)
    # a single-element sequence gives a 1-tuple
    got = blax.sort([v])
    want = jlax.sort([v])
    assert len(got) == len(want) == 1
    _close(got[0], want[0])
    # gradient through the values sorted by a key
    wgt = _rand((2, 4))
    _close(
        bt.grad(lambda s: bnp.sum(blax.sort((k, s), dimension=1)[1] * wgt))(v),
        jax.grad(lambda s: jnp.sum(jlax.sort((k, s), dimension=1)[1] * wgt))(v),
    )


# ---- gather (JAX's GatherDimensionNumbers, slice_sizes, GatherScatterMode) ----


def _gdn(mod, **kw):
    return mod.GatherDimensionNumbers(**kw)


GATHERS = {
    # x[idx] rows: take along axis 0 with whole rows
    "rows": (
        (5, 3),
        np.array([[4], [0], [2], [2]], np.int32),
        dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)),
        (1, 3),
    ),
    # point gather x[i, j]
    "points": (
        (4, 5),
        np.array([[0, 1], [3, 4], [2, 2]], np.int32),
        dict(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1)),
        (1, 1),
    ),
    # 2x2 windows, not collapsed, batch of indices in 2-D
    "windows": (
        (4, 5),
        np.array([[[0, 1], [2, 3]], [[1, 0], [2, 2]]], np.int32),
        dict(offset_dims=(2, 3), collapsed_slice_dims=(), start_index_map=(0, 1)),
        (2, 2),
    ),
    # start_index_map permuted, offset dim placed first
    "permuted": (
        (3, 4, 2),
        np.array([[1, 2], [3, 0]], np.int32),
        dict(offset_dims=(0,), collapsed_slice_dims=(0, 1), start_index_map=(1, 0)),
        (1, 1, 2),
    ),
    # operand/indices batching dims (per-batch take)
    "batched": (
        (3, 6),
        np.array([[5], [0], [2]], np.int32),
        dict(
            offset_dims=(),
            collapsed_slice_dims=(1,),
            start_index_map=(1,),
            operand_batching_dims=(0,),
            start_indices_batching_dims=(0,),
        ),
        (1, 1),
    ),
}


@pytest.mark.parametrize("case", sorted(GATHERS))
def test_gather(case):
    shape, idx, dn, sizes = GATHERS[case]
    x = _rand(shape)
    want = jlax.gather(x, idx, _gdn(jlax, **dn), sizes)
    _close(blax.gather(x, idx, _gdn(blax, **dn), sizes), want)
    _close(
        bt.jit(lambda v, i: blax.gather(v, i, _gdn(blax, **dn), sizes))(x, idx), want
    )
    w = _rand(tuple(want.shape))
    _close(
        bt.grad(lambda v: bnp.sum(blax.gather(v, idx, _gdn(blax, **dn), sizes) * w))(x),
        jax.grad(lambda v: jnp.sum(jlax.gather(v, idx, _gdn(jlax, **dn), sizes) * w))(
            x
        ),
    )


MODES = ["clip", "fill", "promise_in_bounds", None]


@pytest.mark.parametrize(
    "mode_name", ["CLIP", "FILL_OR_DROP", "PROMISE_IN_BOUNDS", None, "clip", "fill"]
)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
def test_gather_out_of_bounds_modes(mode_name, dtype):
    x = (
        (RNG.integers(0, 9, (6, 3)) > 3)
        if dtype is np.bool_
        else RNG.integers(0, 9, (6, 3)).astype(dtype)
    )
    x = np.asarray(x, dtype)
    idx = np.array([[-1], [0], [5], [6], [100], [4]], np.int32)
    dn = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))

    def mode(mod):
        if mode_name is None or mode_name.islower():
            return mode_name
        return getattr(mod.GatherScatterMode, mode_name)

    want = jlax.gather(x, idx, _gdn(jlax, **dn), (1, 3), mode=mode(jlax))
    _close(blax.gather(x, idx, _gdn(blax, **dn), (1, 3), mode=mode(blax)), want)
    # windows of 2 rows: a start past size - 2 is out of bounds too
    dn2 = dict(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0,))
    want = jlax.gather(x, idx, _gdn(jlax, **dn2), (2, 3), mode=mode(jlax))
    _close(
        bt.jit(
            lambda v: blax.gather(v, idx, _gdn(blax, **dn2), (2, 3), mode=mode(blax))
        )(x),
        want,
    )


def test_gather_fill_value_and_grad_of_dropped():
    x = _rand((5,))
    idx = np.array([[1], [7], [-2]], np.int32)
    dn = dict(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    for fv in (-3.0, 0.0):
        _close(
            blax.gather(x, idx, _gdn(blax, **dn), (1,), mode="fill", fill_value=fv),
            jlax.gather(x, idx, _gdn(jlax, **dn), (1,), mode="fill", fill_value=fv),
        )
    _close(
        bt.grad(
            lambda v: bnp.sum(
                blax.gather(v, idx, _gdn(blax, **dn), (1,), mode="fill", fill_value=0.0)
            )
        )(x),
        jax.grad(
            lambda v: jnp.sum(
                jlax.gather(v, idx, _gdn(jlax, **dn), (1,), mode="fill", fill_value=0.0)
            )
        )(x),
    )
    _close(
        bt.grad(
            lambda v: bnp.sum(
                blax.gather(
                    v, idx, _gdn(blax, **dn), (1,), mode=blax.GatherScatterMode.CLIP
                )
            )
        )(x),
        jax.grad(
            lambda v: jnp.sum(
                jlax.gather(
                    v, idx, _gdn(jlax, **dn), (1,), mode=jlax.GatherScatterMode.CLIP
                )
            )
        )(x),
    )


def test_gather_dimension_numbers_must_be_sorted():
    x, idx = _rand((3, 4)), np.array([[1, 2]], np.int32)
    kw = dict(offset_dims=(), collapsed_slice_dims=(1, 0), start_index_map=(0, 1))
    with pytest.raises(TypeError):
        jlax.gather(x, idx, _gdn(jlax, **kw), (1, 1))
    with pytest.raises(TypeError):
        blax.gather(x, idx, _gdn(blax, **kw), (1, 1))


def test_gather_dimension_numbers_type():
    kw = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    b, j = _gdn(blax, **kw), _gdn(jlax, **kw)
    assert tuple(b) == tuple(j)
    assert b._fields == j._fields
    assert b == blax.GatherDimensionNumbers((1,), (0,), (0,), (), ())


def test_gather_scatter_mode_enum():
    assert [m.name for m in blax.GatherScatterMode] == [
        m.name for m in jlax.GatherScatterMode
    ]
    for s in ("clip", "fill", "drop", "promise_in_bounds", None):
        assert (
            blax.GatherScatterMode.from_any(s).name
            == jlax.GatherScatterMode.from_any(s).name
        )
    with pytest.raises(ValueError):
        jlax.GatherScatterMode.from_any("wrap")
    with pytest.raises(ValueError):
        blax.GatherScatterMode.from_any("wrap")


# ---- scatter (JAX's ScatterDimensionNumbers) ----


SCATTERS = {
    "points": (
        (6,),
        np.array([[4], [0], [2]], np.int32),
        (3,),
        dict(
            update_window_dims=(),
            inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,),
        ),
    ),
    "rows": (
        (5, 3),
        np.array([[3], [1]], np.int32),
        (2, 3),
        dict(
            update_window_dims=(1,),
            inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,),
        ),
    ),
    "windows": (
        (4, 5),
        np.array([[0, 0], [2, 3]], np.int32),
        (2, 2, 2),
        dict(
            update_window_dims=(1, 2),
            inserted_window_dims=(),
            scatter_dims_to_operand_dims=(0, 1),
        ),
    ),
    "batched": (
        (3, 4),
        np.array([[1], [3], [0]], np.int32),
        (3,),
        dict(
            update_window_dims=(),
            inserted_window_dims=(1,),
            scatter_dims_to_operand_dims=(1,),
            operand_batching_dims=(0,),
            scatter_indices_batching_dims=(0,),
        ),
    ),
}


@pytest.mark.parametrize("case", sorted(SCATTERS))
def test_scatter(case):
    oshape, idx, ushape, dn = SCATTERS[case]
    x, u = _rand(oshape), _rand(ushape)
    want = jlax.scatter(x, idx, u, jlax.ScatterDimensionNumbers(**dn))
    _close(blax.scatter(x, idx, u, blax.ScatterDimensionNumbers(**dn)), want)
    _close(
        bt.jit(
            lambda a, i, b: blax.scatter(a, i, b, blax.ScatterDimensionNumbers(**dn))
        )(x, idx, u),
        want,
    )
    w = _rand(oshape)
    gb = bt.grad(
        lambda a, b: bnp.sum(
            blax.scatter(a, idx, b, blax.ScatterDimensionNumbers(**dn)) * w
        ),
        argnums=(0, 1),
    )(x, u)
    gj = jax.grad(
        lambda a, b: jnp.sum(
            jlax.scatter(a, idx, b, jlax.ScatterDimensionNumbers(**dn)) * w
        ),
        argnums=(0, 1),
    )(x, u)
    for b, j in zip(gb, gj):
        _close(b, j)


@pytest.mark.parametrize("mode", [None, "clip", "fill", "CLIP", "FILL_OR_DROP"])
def test_scatter_out_of_bounds(mode):
    x = np.arange(12, dtype=np.int32).reshape(4, 3)
    idx = np.array([[-1], [3], [9]], np.int32)
    u = np.full((3, 2, 3), 100, np.int32) + np.arange(3, dtype=np.int32)[:, None, None]
    dn = dict(
        update_window_dims=(1, 2),
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=(0,),
    )

    def m(mod):
        return (
            mode
            if mode is None or mode.islower()
            else getattr(mod.GatherScatterMode, mode)
        )

    want = jlax.scatter(x, idx, u, jlax.ScatterDimensionNumbers(**dn), mode=m(jlax))
    _close(
        blax.scatter(x, idx, u, blax.ScatterDimensionNumbers(**dn), mode=m(blax)), want
    )


# ---- the type aliases: what a user does with them ----


def test_dot_dimension_numbers():
    a, b = _rand((2, 3, 4)), _rand((2, 4, 5))
    dn_b: blax.DotDimensionNumbers = (((2,), (1,)), ((0,), (0,)))
    dn_j: jlax.DotDimensionNumbers = (((2,), (1,)), ((0,), (0,)))
    _close(blax.dot_general(a, b, dn_b), jlax.dot_general(a, b, dn_j), rtol=1e-5)
    assert blax.DotDimensionNumbers == jlax.DotDimensionNumbers or str(
        blax.DotDimensionNumbers
    ) == str(jlax.DotDimensionNumbers)


@pytest.mark.parametrize(
    "precision", [None, "highest", "default", ("highest", "highest"), "PREC"]
)
def test_precision_like(precision):
    a, b = _rand((3, 4)), _rand((4, 2))
    pb = blax.Precision.HIGHEST if precision == "PREC" else precision
    pj = jlax.Precision.HIGHEST if precision == "PREC" else precision
    want = jlax.dot(a, b, precision=pj)
    _close(blax.dot(a, b, precision=pb), want, rtol=1e-5)
    # every form is a member of the PrecisionLike union in both
    assert _member(pb, blax.PrecisionLike)
    assert _member(pj, jlax.PrecisionLike)


def _member(value, alias):
    import typing

    for arm in typing.get_args(alias):
        origin = typing.get_origin(arm)
        if origin is tuple:
            kinds = typing.get_args(arm)
            if isinstance(value, tuple) and len(value) == len(kinds):
                if all(isinstance(v, k) for v, k in zip(value, kinds)):
                    return True
        elif isinstance(arm, type) and isinstance(value, arm):
            return True
    return False


def test_precision_like_members():
    import typing

    assert not _member(3, blax.PrecisionLike) and not _member(3, jlax.PrecisionLike)

    # baton's union is JAX's less the DotAlgorithm arms (baton has no
    # DotAlgorithm / DotAlgorithmPreset)
    def names(alias):
        return {
            getattr(a, "__name__", str(a)).split(".")[-1]
            for a in typing.get_args(alias)
        }

    assert names(blax.PrecisionLike) == names(jlax.PrecisionLike) - {
        "DotAlgorithm",
        "DotAlgorithmPreset",
    }


def test_conv_general_dilated_dimension_numbers():
    lhs, rhs = _rand((2, 5, 5, 3)), _rand((3, 3, 3, 4))
    for spec in (("NHWC", "HWIO", "NHWC"), ("NHWC", "HWIO", "NCHW")):
        bdn = blax.conv_dimension_numbers(lhs.shape, rhs.shape, spec)
        jdn = jlax.conv_dimension_numbers(lhs.shape, rhs.shape, spec)
        assert tuple(tuple(f) for f in bdn) == tuple(tuple(f) for f in jdn)
        assert bdn._fields == jdn._fields
        assert (bdn.lhs_spec, bdn.rhs_spec, bdn.out_spec) == (
            jdn.lhs_spec,
            jdn.rhs_spec,
            jdn.out_spec,
        )
        # the three accepted forms of ConvGeneralDilatedDimensionNumbers
        b_forms: list[blax.ConvGeneralDilatedDimensionNumbers] = [spec, bdn]
        j_forms: list[jlax.ConvGeneralDilatedDimensionNumbers] = [spec, jdn]
        for fb, fj in zip(b_forms, j_forms):
            _close(
                blax.conv_general_dilated(
                    lhs, rhs, (1, 1), "SAME", dimension_numbers=fb
                ),
                jlax.conv_general_dilated(
                    lhs, rhs, (1, 1), "SAME", dimension_numbers=fj
                ),
                rtol=1e-4,
                atol=1e-4,
            )
    # None: NCHW / OIHW / NCHW
    l2, r2 = _rand((1, 3, 6, 6)), _rand((4, 3, 3, 3))
    _close(
        blax.conv_general_dilated(l2, r2, (1, 1), "VALID", dimension_numbers=None),
        jlax.conv_general_dilated(l2, r2, (1, 1), "VALID", dimension_numbers=None),
        rtol=1e-4,
        atol=1e-4,
    )
    import typing

    assert set(map(str, typing.get_args(blax.ConvGeneralDilatedDimensionNumbers))) == {
        "tuple[str, str, str]",
        str(blax.ConvDimensionNumbers),
        str(type(None)),
    }


def test_gather_scatter_sort_pad_under_vmap():
    x = _rand((3, 5, 4))
    idx = np.array([[4], [0], [2]], np.int32)
    gdn = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    _close(
        bt.vmap(lambda v: blax.gather(v, idx, _gdn(blax, **gdn), (1, 4)))(x),
        jax.vmap(lambda v: jlax.gather(v, idx, _gdn(jlax, **gdn), (1, 4)))(x),
    )
    sdn = dict(
        update_window_dims=(1,),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
    )
    u = _rand((3, 3, 4))
    _close(
        bt.vmap(
            lambda v, w: blax.scatter(v, idx, w, blax.ScatterDimensionNumbers(**sdn))
        )(x, u),
        jax.vmap(
            lambda v, w: jlax.scatter(v, idx, w, jlax.ScatterDimensionNumbers(**sdn))
        )(x, u),
    )
    k = RNG.integers(0, 3, (3, 5)).astype(np.int32)
    v = _rand((3, 5))
    for b, j in zip(
        bt.vmap(lambda a, c: blax.sort((a, c)))(k, v),
        jax.vmap(lambda a, c: jlax.sort((a, c)))(k, v),
    ):
        _close(b, j)
    cfg = [(1, 0, 1), (0, 2, 0)]
    _close(
        bt.vmap(lambda a: blax.pad(a, F32(0.0), cfg))(x),
        jax.vmap(lambda a: jlax.pad(a, F32(0.0), cfg))(x),
    )
