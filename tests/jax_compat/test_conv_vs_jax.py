"""bt.lax's convolutions and windowed reductions against JAX's: values on
many configurations (1-3 spatial dimensions, layouts, strides, dilations,
groups, padding kinds), eagerly and under bt.jit, gradients with respect to
the input and the kernel under bt.jit(bt.grad), vmap, and the shape
helpers; reduce_window with the monoid ops, other computations, several
operands, and the gradients of max and average pooling."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import baton as bt  # noqa: E402
import baton.lax as blax  # noqa: E402
import baton.numpy as bnp  # noqa: E402

F32 = np.float32
RNG = np.random.default_rng(0)
jlax = jax.lax


def _close(b, j, rtol=2e-5, atol=2e-5):
    b, j = np.asarray(b), np.asarray(j)
    assert b.shape == j.shape, (b.shape, j.shape)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    np.testing.assert_allclose(b, j, rtol=rtol, atol=atol)


def _rand(shape, dtype=F32):
    return RNG.standard_normal(shape).astype(dtype)


# (lhs shape, rhs shape, keyword arguments of conv_general_dilated)
CONV_CASES = {
    "1d_same": ((2, 3, 11), (4, 3, 3), dict(window_strides=(1,), padding="SAME")),
    "1d_valid_stride": (
        (2, 3, 11),
        (4, 3, 4),
        dict(window_strides=(3,), padding="VALID"),
    ),
    "1d_nhc": (
        (2, 10, 3),
        (3, 3, 5),
        dict(
            window_strides=(2,),
            padding="SAME_LOWER",
            dimension_numbers=("NHC", "HIO", "NHC"),
        ),
    ),
    "2d_nchw": (
        (2, 3, 9, 8),
        (4, 3, 3, 2),
        dict(window_strides=(1, 1), padding="SAME"),
    ),
    "2d_nhwc": (
        (2, 9, 8, 3),
        (3, 3, 3, 5),
        dict(
            window_strides=(2, 1),
            padding="VALID",
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
        ),
    ),
    "2d_explicit_negative": (
        (1, 2, 9, 10),
        (3, 2, 3, 3),
        dict(window_strides=(1, 2), padding=((2, -1), (0, 3))),
    ),
    "2d_dilations": (
        (2, 3, 9, 8),
        (4, 3, 3, 2),
        dict(
            window_strides=(2, 3),
            padding=((0, 1), (2, 1)),
            lhs_dilation=(1, 2),
            rhs_dilation=(2, 1),
        ),
    ),
    "2d_rhs_dilation_same": (
        (2, 3, 12, 10),
        (2, 3, 3, 3),
        dict(window_strides=(1, 1), padding="SAME", rhs_dilation=(2, 3)),
    ),
    "2d_groups": (
        (2, 9, 8, 6),
        (3, 2, 3, 4),
        dict(
            window_strides=(2, 1),
            padding=((1, 2), (-1, 0)),
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
            feature_group_count=2,
        ),
    ),
    "2d_depthwise": (
        (2, 4, 7, 7),
        (8, 1, 3, 3),
        dict(window_strides=(1, 1), padding="SAME", feature_group_count=4),
    ),
    "2d_batch_groups": (
        (4, 3, 7, 6),
        (6, 3, 2, 2),
        dict(window_strides=(1, 1), padding="VALID", batch_group_count=2),
    ),
    "2d_odd_layout": (
        (7, 2, 3, 6),
        (3, 2, 4, 3),
        dict(
            window_strides=(1, 2),
            padding="SAME",
            dimension_numbers=("HNCW", "OHWI", "WCNH"),
        ),
    ),
    "3d": (
        (2, 2, 5, 4, 6),
        (4, 2, 2, 2, 3),
        dict(window_strides=(1, 2, 1), padding="SAME"),
    ),
    "3d_ndhwc": (
        (1, 5, 6, 4, 2),
        (2, 3, 2, 2, 3),
        dict(
            window_strides=(2, 1, 1),
            padding="VALID",
            rhs_dilation=(1, 2, 1),
            dimension_numbers=("NDHWC", "DHWIO", "NDHWC"),
        ),
    ),
    "conv_dimension_numbers_object": (
        (2, 6, 5, 3),
        (2, 2, 3, 4),
        dict(
            window_strides=(1, 1),
            padding="SAME",
            dimension_numbers=jlax.ConvDimensionNumbers(
                (0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)
            ),
        ),
    ),
}


def _b_kwargs(kw):
    """The same keywords for baton (ConvDimensionNumbers converted)."""
    kw = dict(kw)
    dn = kw.get("dimension_numbers")
    if isinstance(dn, jlax.ConvDimensionNumbers):
        kw["dimension_numbers"] = blax.ConvDimensionNumbers(*dn)
    return kw


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_conv_general_dilated_values(case):
    ls, rs, kw = CONV_CASES[case]
    x, w = _rand(ls), _rand(rs)
    want = jlax.conv_general_dilated(x, w, **kw)
    _close(blax.conv_general_dilated(x, w, **_b_kwargs(kw)), want)
    jitted = bt.jit(lambda a, b: blax.conv_general_dilated(a, b, **_b_kwargs(kw)))
    _close(jitted(x, w), want)


@pytest.mark.parametrize(
    "case",
    [
        "1d_valid_stride",
        "2d_dilations",
        "2d_groups",
        "2d_batch_groups",
        "3d",
        "2d_odd_layout",
    ],
)
def test_conv_general_dilated_gradients(case):
    ls, rs, kw = CONV_CASES[case]
    x, w = _rand(ls), _rand(rs)

    def loss(lax_mod, np_mod, kwargs):
        def f(a, b):
            out = lax_mod.conv_general_dilated(a, b, **kwargs)
            return np_mod.sum(np_mod.sin(out) * out)

        return f

    gx, gw = bt.jit(bt.grad(loss(blax, bnp, _b_kwargs(kw)), argnums=(0, 1)))(x, w)
    jx, jw = jax.grad(loss(jlax, jnp, kw), argnums=(0, 1))(x, w)
    _close(gx, jx, rtol=1e-4, atol=1e-4)
    _close(gw, jw, rtol=1e-4, atol=1e-4)


def test_conv_vmap_over_inputs_and_kernels():
    x, w = _rand((3, 2, 2, 6, 5)), _rand((3, 4, 2, 3, 2))
    kw = dict(window_strides=(1, 2), padding="SAME")
    got = bt.vmap(lambda a, b: blax.conv_general_dilated(a, b, **kw))(x, w)
    want = jax.vmap(lambda a, b: jlax.conv_general_dilated(a, b, **kw))(x, w)
    _close(got, want)
    # Only the input batched (the kernel shared).
    got = bt.vmap(lambda a: blax.conv_general_dilated(a, w[0], **kw))(x)
    want = jax.vmap(lambda a: jlax.conv_general_dilated(a, w[0], **kw))(x)
    _close(got, want)


def test_conv_preferred_element_type_and_precision():
    x, w = _rand((1, 2, 6, 6)), _rand((3, 2, 3, 3))
    kw = dict(window_strides=(1, 1), padding="VALID")
    _close(
        blax.conv_general_dilated(x, w, precision=blax.Precision.HIGHEST, **kw),
        jlax.conv_general_dilated(x, w, precision=jlax.Precision.HIGHEST, **kw),
    )
    _close(
        blax.conv_general_dilated(x, w, precision="highest", **kw),
        jlax.conv_general_dilated(x, w, precision="highest", **kw),
    )
    xh, wh = x.astype(np.float16), w.astype(np.float16)
    _close(
        blax.conv_general_dilated(xh, wh, preferred_element_type=np.float32, **kw),
        jlax.conv_general_dilated(xh, wh, preferred_element_type=np.float32, **kw),
        rtol=2e-3,
        atol=2e-3,
    )
    xi = RNG.integers(-5, 5, (1, 2, 6, 6)).astype(np.int32)
    wi = RNG.integers(-5, 5, (3, 2, 3, 3)).astype(np.int32)
    _close(
        blax.conv_general_dilated(xi, wi, **kw),
        jlax.conv_general_dilated(xi, wi, **kw),
    )


def test_conv_and_conv_with_general_padding():
    x, w = _rand((2, 3, 8, 7)), _rand((4, 3, 3, 3))
    for pad in ("SAME", "VALID"):
        _close(blax.conv(x, w, (2, 1), pad), jlax.conv(x, w, (2, 1), pad))
    args = ((1, 2), ((1, 0), (2, 2)), (2, 1), (1, 2))
    _close(
        blax.conv_with_general_padding(x, w, *args),
        jlax.conv_with_general_padding(x, w, *args),
    )


TRANSPOSE_CASES = [
    ((2, 5, 6, 3), (3, 3, 3, 4), dict(strides=(2, 2), padding="SAME")),
    ((2, 5, 6, 3), (3, 2, 3, 4), dict(strides=(2, 3), padding="VALID")),
    ((2, 5, 6, 3), (3, 3, 3, 4), dict(strides=(2, 1), padding=((1, 2), (0, 1)))),
    (
        (2, 5, 6, 3),
        (3, 3, 4, 3),
        dict(strides=(2, 2), padding="SAME", transpose_kernel=True),
    ),
    (
        (2, 5, 6, 3),
        (3, 3, 3, 4),
        dict(strides=(2, 2), padding=((1, 1), (1, 1)), use_consistent_padding=True),
    ),
    ((2, 7, 3), (3, 3, 2), dict(strides=(3,), padding="SAME", rhs_dilation=(2,))),
    (
        (2, 3, 5, 6),
        (4, 3, 3, 3),
        dict(
            strides=(2, 2), padding="SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")
        ),
    ),
]


@pytest.mark.parametrize("i", range(len(TRANSPOSE_CASES)))
def test_conv_transpose(i):
    ls, rs, kw = TRANSPOSE_CASES[i]
    x, w = _rand(ls), _rand(rs)
    want = jlax.conv_transpose(x, w, **kw)
    _close(blax.conv_transpose(x, w, **kw), want)
    gb = bt.jit(
        bt.grad(
            lambda a, b: bnp.sum(blax.conv_transpose(a, b, **kw) ** 2), argnums=(0, 1)
        )
    )(x, w)
    gj = jax.grad(
        lambda a, b: jnp.sum(jlax.conv_transpose(a, b, **kw) ** 2), argnums=(0, 1)
    )(x, w)
    _close(gb[0], gj[0], rtol=1e-4, atol=1e-4)
    _close(gb[1], gj[1], rtol=1e-4, atol=1e-4)


PATCH_CASES = [
    ((2, 3, 7, 6), dict(filter_shape=(3, 2), window_strides=(1, 1), padding="SAME")),
    (
        (2, 3, 7, 6),
        dict(
            filter_shape=(2, 3),
            window_strides=(2, 1),
            padding="VALID",
            rhs_dilation=(2, 1),
        ),
    ),
    (
        (2, 7, 6, 3),
        dict(
            filter_shape=(3, 2),
            window_strides=(1, 2),
            padding=((1, 0), (0, 2)),
            lhs_dilation=(2, 1),
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
        ),
    ),
    ((2, 3, 9), dict(filter_shape=(4,), window_strides=(2,), padding="SAME")),
]


@pytest.mark.parametrize("i", range(len(PATCH_CASES)))
def test_conv_general_dilated_patches(i):
    shape, kw = PATCH_CASES[i]
    x = _rand(shape)
    _close(
        blax.conv_general_dilated_patches(x, **kw),
        jlax.conv_general_dilated_patches(x, **kw),
    )


def test_conv_general_dilated_patches_kernel_spec_order():
    # rhs_spec's spatial entries out of positional order: the patch
    # features follow filter_shape's order, as in JAX.
    x = _rand((2, 3, 7, 6))
    dn = jlax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 3, 2), (0, 1, 2, 3))
    kw = dict(filter_shape=(3, 2), window_strides=(1, 1), padding="VALID")
    _close(
        blax.conv_general_dilated_patches(
            x, dimension_numbers=blax.ConvDimensionNumbers(*dn), **kw
        ),
        jlax.conv_general_dilated_patches(x, dimension_numbers=dn, **kw),
    )


def test_conv_general_dilated_local():
    x = _rand((2, 3, 6, 5))
    kw = dict(window_strides=(1, 1), padding="SAME", filter_shape=(3, 2))
    out_space = (6, 5)
    w = _rand((4, 3 * 3 * 2, *out_space))
    _close(
        blax.conv_general_dilated_local(x, w, **kw),
        jlax.conv_general_dilated_local(x, w, **kw),
    )
    dn = ("NHWC", "HWIO", "NHWC")
    xh = _rand((2, 6, 5, 3))
    wh = _rand((3, 3, 3 * 3 * 2, 4))
    kw2 = dict(
        window_strides=(2, 2), padding="SAME", filter_shape=(3, 2), dimension_numbers=dn
    )
    _close(
        blax.conv_general_dilated_local(xh, wh, **kw2),
        jlax.conv_general_dilated_local(xh, wh, **kw2),
    )
    g = bt.jit(
        bt.grad(
            lambda a, b: bnp.sum(blax.conv_general_dilated_local(a, b, **kw2) ** 2),
            argnums=(0, 1),
        )
    )(xh, wh)
    gj = jax.grad(
        lambda a, b: jnp.sum(jlax.conv_general_dilated_local(a, b, **kw2) ** 2),
        argnums=(0, 1),
    )(xh, wh)
    _close(g[0], gj[0], rtol=1e-4, atol=1e-4)
    _close(g[1], gj[1], rtol=1e-4, atol=1e-4)


def test_shape_helpers():
    dn = ("NHWC", "HWIO", "NHWC")
    assert blax.conv_general_permutations(dn) == jlax.conv_general_permutations(dn)
    odd = ("HNCW", "OHWI", "WCNH")
    assert blax.conv_general_permutations(odd) == jlax.conv_general_permutations(odd)
    got = blax.conv_dimension_numbers((2, 5, 6, 3), (3, 3, 3, 4), dn)
    want = jlax.conv_dimension_numbers((2, 5, 6, 3), (3, 3, 3, 4), dn)
    assert tuple(map(tuple, got)) == tuple(map(tuple, want))
    assert isinstance(got, blax.ConvDimensionNumbers)
    assert tuple(
        map(tuple, blax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None))
    ) == tuple(map(tuple, jlax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None)))
    for pad in ("SAME", "VALID", "SAME_LOWER"):
        assert blax.padtype_to_pads((7, 8), (3, 4), (2, 3), pad) == [
            tuple(p) for p in jlax.padtype_to_pads((7, 8), (3, 4), (2, 3), pad)
        ]
    assert blax.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), "SAME") == tuple(
        jlax.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), "SAME")
    )
    assert blax.conv_shape_tuple(
        (4, 3, 9, 8), (4, 3, 3, 2), (1, 1), ((1, 0), (2, 2)), 2
    ) == tuple(
        jlax.conv_shape_tuple((4, 3, 9, 8), (4, 3, 3, 2), (1, 1), ((1, 0), (2, 2)), 2)
    )
    args = ((2, 9, 8, 3), (3, 2, 3, 5), (2, 1), "VALID", dn)
    assert blax.conv_general_shape_tuple(*args) == tuple(
        jlax.conv_general_shape_tuple(*args)
    )
    for pad in ("SAME", "VALID", ((1, 2), (0, 1))):
        args = ((2, 5, 6, 3), (3, 3, 3, 4), (2, 2), pad, dn)
        assert blax.conv_transpose_shape_tuple(*args) == tuple(
            jlax.conv_transpose_shape_tuple(*args)
        )
        x, w = _rand(args[0]), _rand(args[1])
        assert blax.conv_transpose(
            x, w, (2, 2), pad
        ).shape == blax.conv_transpose_shape_tuple(*args)


def test_conv_errors():
    x, w = _rand((2, 4, 6, 6)), _rand((4, 3, 3, 3))
    with pytest.raises(ValueError, match="feature_group_count"):
        blax.conv_general_dilated(x, w, (1, 1), "SAME")
    with pytest.raises(ValueError, match="String padding"):
        blax.conv_general_dilated(
            x, _rand((4, 4, 3, 3)), (1, 1), "SAME", lhs_dilation=(2, 2)
        )
    with pytest.raises(ValueError, match="window_strides"):
        blax.conv_general_dilated(x, _rand((4, 4, 3, 3)), (1,), "SAME")
    with pytest.raises(TypeError, match="exactly once"):
        blax.conv_general_dilated(
            x,
            _rand((4, 4, 3, 3)),
            (1, 1),
            "SAME",
            dimension_numbers=("NNHW", "OIHW", "NCHW"),
        )
    with pytest.raises(RuntimeError, match="Unrecognized padding"):
        blax.conv_general_dilated(x, _rand((4, 4, 3, 3)), (1, 1), "FULL")


# ---- windowed reductions ----

WINDOW_KW = [
    dict(window_dimensions=(1, 3, 3, 1), window_strides=(1, 2, 2, 1), padding="SAME"),
    dict(window_dimensions=(1, 2, 3, 1), window_strides=(1, 1, 2, 1), padding="VALID"),
    dict(
        window_dimensions=(1, 3, 2, 1),
        window_strides=(1, 2, 1, 1),
        padding="SAME_LOWER",
        base_dilation=(1, 1, 2, 1),
        window_dilation=(1, 2, 1, 1),
    ),
    dict(
        window_dimensions=(2, 2, 2, 2),
        window_strides=(1, 1, 1, 1),
        padding=((0, 1), (1, 0), (2, -1), (0, 0)),
    ),
]

MONOIDS = {
    "max": (-np.inf, blax.max, jlax.max),
    "min": (np.inf, blax.min, jlax.min),
    "add": (0.0, blax.add, jlax.add),
    "mul": (1.0, blax.mul, jlax.mul),
    "add_init": (2.5, blax.add, jlax.add),
    "max_init": (0.25, blax.max, jlax.max),
}


@pytest.mark.parametrize("kind", sorted(MONOIDS))
@pytest.mark.parametrize("k", range(len(WINDOW_KW)))
def test_reduce_window_monoids(kind, k):
    x = _rand((2, 7, 8, 3))
    init, bop, jop = MONOIDS[kind]
    kw = WINDOW_KW[k]
    _close(
        blax.reduce_window(x, init, bop, **kw),
        jlax.reduce_window(x, init, jop, **kw),
        rtol=1e-5,
        atol=1e-5,
    )


def test_reduce_window_integers_and_jit():
    x = RNG.integers(-50, 50, (3, 9, 7)).astype(np.int32)
    kw = dict(window_dimensions=(1, 3, 2), window_strides=(1, 2, 2), padding="SAME")
    imin = np.iinfo(np.int32).min
    _close(
        blax.reduce_window(x, imin, blax.max, **kw),
        jlax.reduce_window(x, imin, jlax.max, **kw),
    )
    _close(
        blax.reduce_window(x, 0, blax.add, **kw),
        jlax.reduce_window(x, 0, jlax.add, **kw),
    )
    f = bt.jit(lambda a: blax.reduce_window(a, 0, blax.add, **kw))
    _close(f(x), jlax.reduce_window(x, 0, jlax.add, **kw))


GENERAL_WINDOW_KW = [
    dict(
        window_dimensions=(1, 2, 3),
        window_strides=(1, 1, 2),
        padding=((0, 0), (1, 2), (2, 0)),
    ),
    dict(
        window_dimensions=(1, 3, 2),
        window_strides=(1, 1, 1),
        padding="SAME",
        base_dilation=(1, 2, 1),
        window_dilation=(1, 1, 2),
    ),
]


@pytest.mark.parametrize("kw", GENERAL_WINDOW_KW)
def test_reduce_window_general_computation(kw):
    # XLA leaves the order of a window's elements open: the computation
    # must be associative and commutative (logaddexp, not a known monoid).
    x = _rand((2, 7, 8))

    def fb(a, b):
        return bnp.logaddexp(a, b)

    def fj(a, b):
        return jnp.logaddexp(a, b)

    _close(blax.reduce_window(x, 0.5, fb, **kw), jlax.reduce_window(x, 0.5, fj, **kw))
    _close(
        bt.jit(lambda a: blax.reduce_window(a, 0.5, fb, **kw))(x),
        jlax.reduce_window(x, 0.5, fj, **kw),
    )
    got = bt.jit(bt.grad(lambda a: bnp.sum(blax.reduce_window(a, 0.5, fb, **kw) ** 2)))(
        x
    )

    # JAX cannot differentiate a generic reduce_window: the same
    # function written with its sum window instead.
    def lse_pool(a):
        return jnp.log(
            jnp.exp(0.5) + jlax.reduce_window(jnp.exp(a), 0.0, jlax.add, **kw)
        )

    _close(lse_pool(x), jlax.reduce_window(x, 0.5, fj, **kw), rtol=1e-5, atol=1e-5)
    want = jax.grad(lambda a: jnp.sum(lse_pool(a) ** 2))(x)
    _close(got, want, rtol=1e-4, atol=1e-4)


def test_reduce_window_several_operands():
    # argmax pooling: (value, index) pairs, the larger value winning.
    x = _rand((9, 10))
    idx = np.arange(90, dtype=np.int32).reshape(9, 10)

    def pick(np_mod):
        def f(a, b):
            take = a[0] >= b[0]
            return np_mod.where(take, a[0], b[0]), np_mod.where(take, a[1], b[1])

        return f

    kw = dict(window_dimensions=(3, 3), window_strides=(2, 2), padding="SAME")
    got = blax.reduce_window((x, idx), (-np.inf, 0), pick(bnp), **kw)
    want = jlax.reduce_window((x, idx), (-np.inf, 0), pick(jnp), **kw)
    _close(got[0], want[0])
    _close(got[1], want[1])


def test_reduce_window_shape_tuple():
    args = ((4, 9, 8), (1, 3, 2), (1, 2, 3), ((0, 0), (1, 1), (2, 0)))
    assert blax.reduce_window_shape_tuple(*args) == tuple(
        jlax.reduce_window_shape_tuple(*args)
    )
    assert blax.reduce_window_shape_tuple(*args, (1, 2, 1), (1, 1, 2)) == tuple(
        jlax.reduce_window_shape_tuple(*args, (1, 2, 1), (1, 1, 2))
    )


def _pool_loss(lax_mod, np_mod, kind):
    def f(x):
        if kind == "max":
            y = lax_mod.reduce_window(
                x, -np.inf, lax_mod.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"
            )
        else:
            y = (
                lax_mod.reduce_window(
                    x, 0.0, lax_mod.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"
                )
                / 4.0
            )
        return np_mod.sum(np_mod.sin(y) * y)

    return f


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pooling_gradients(kind):
    x = _rand((2, 8, 9, 3))  # distinct values: max pooling's choice is unique
    got = bt.jit(bt.grad(_pool_loss(blax, bnp, kind)))(x)
    want = jax.grad(_pool_loss(jlax, jnp, kind))(x)
    _close(got, want, rtol=1e-5, atol=1e-5)


def test_reduce_window_vmap():
    x = _rand((3, 6, 7))
    kw = dict(window_dimensions=(2, 2), window_strides=(1, 2), padding="SAME")
    got = bt.vmap(lambda a: blax.reduce_window(a, -np.inf, blax.max, **kw))(x)
    want = jax.vmap(lambda a: jlax.reduce_window(a, -np.inf, jlax.max, **kw))(x)
    _close(got, want)


@pytest.mark.parametrize("kind", ["max", "min"])
def test_pooling_gradient_ties_and_nans(kind):
    # Many equal values: JAX gives each window's gradient to its first
    # chosen element (select_and_scatter); baton's fold does the same.
    x = RNG.integers(0, 3, (2, 6, 7, 2)).astype(F32)
    init = -np.inf if kind == "max" else np.inf
    w = np.arange(1.0, 3.0, dtype=F32)

    def loss(lax_mod, np_mod):
        op = getattr(lax_mod, kind)
        return lambda v: np_mod.sum(
            lax_mod.reduce_window(v, init, op, (1, 3, 2, 1), (1, 2, 1, 1), "SAME") * w
        )

    _close(bt.jit(bt.grad(loss(blax, bnp)))(x), jax.grad(loss(jlax, jnp))(x))
    y = np.array([1.0, np.nan, 2.0, 5.0, 5.0], F32)
    op_b, op_j = getattr(blax, kind), getattr(jlax, kind)
    got = blax.reduce_window(y, init, op_b, (2,), (1,), "VALID")
    want = jlax.reduce_window(y, init, op_j, (2,), (1,), "VALID")
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
