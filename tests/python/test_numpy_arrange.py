"""baton.numpy's arrangement and selection functions (_joining,
_rearranging, _matrices, _selection, _along_axis) against numpy -- and
jax.numpy where the two differ -- eager and inside jit. The index builders
(_index_tricks) are in test_numpy_index_builders.py, the errors in
test_numpy_arrange_errors.py."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton.errors import ConcretizationTypeError

from _arrange_check import both, check, sample
from _util import dtype_name as _name

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64

DTYPES = [np.float32, np.int32, np.int8, np.bool_, ml_dtypes.bfloat16]


def np_inplace(fn, a, *args, **kw):
    """numpy's in-place fn applied to a copy of a; the copy."""
    b = np.array(a, copy=True)
    fn(b, *args, **kw)
    return b


IDX = np.array([[[2], [0], [1]], [[0], [2], [2]]])  # along axis 1 of (2, 3, 4)
MASK = sample(np.int32) % 3 == 0

# (name, fn(module, a)) for a of shape (2, 3, 4); the numpy result's dtype
# must match (functions that keep a's dtype).
CASES = [
    ("append", lambda m, a: m.append(a, a[0])),
    ("append_axis", lambda m, a: m.append(a, a[:1], axis=0)),
    ("array_split", lambda m, a: tuple(m.array_split(a, 3, axis=2))),
    ("array_split_idx", lambda m, a: tuple(m.array_split(a, [1, 5], axis=2))),
    ("atleast_3d_0d", lambda m, a: m.atleast_3d(a[0, 0, 0])),
    ("atleast_3d_1d", lambda m, a: m.atleast_3d(a[0, 0])),
    ("atleast_3d_2d", lambda m, a: m.atleast_3d(a[0])),
    ("atleast_3d_many", lambda m, a: tuple(m.atleast_3d(a, a[0]))),
    ("block", lambda m, a: m.block([[a[0], a[1]], [a[1], a[0]]])),
    ("block_1d", lambda m, a: m.block([a[0, 0], a[1, 1]])),
    ("block_promote", lambda m, a: m.block([[a[0]], [a[1, 0]]])),
    ("column_stack", lambda m, a: m.column_stack([a[0, 0], a[0, 1], a[1].T])),
    ("concat", lambda m, a: m.concat([a, a], axis=2)),
    ("delete", lambda m, a: m.delete(a, [0, 2], axis=2)),
    ("delete_neg", lambda m, a: m.delete(a, -1, axis=1)),
    ("delete_slice", lambda m, a: m.delete(a, slice(None, None, 3))),
    ("delete_mask", lambda m, a: m.delete(a, np.array([True, False, True]), axis=1)),
    ("insert", lambda m, a: m.insert(a, 1, a[0, 0, 0], axis=1)),
    ("insert_seq", lambda m, a: m.insert(a, [1, 0, 4], a[0, 0, :3], axis=2)),
    ("insert_flat", lambda m, a: m.insert(a, [2, 2, -1], a[0, 0, :3])),
    ("insert_column", lambda m, a: m.insert(a, 2, a[0, :, 0], axis=2)),
    ("insert_block", lambda m, a: m.insert(a[0], 1, a[1, :2, :1], axis=1)),
    ("insert_slice", lambda m, a: m.insert(a, slice(0, 2), a[0, 0, 0], axis=0)),
    ("diag_1d", lambda m, a: m.diag(a[0, 0], 1)),
    ("diag_1d_neg", lambda m, a: m.diag(a[0, 0], -2)),
    ("diag_2d", lambda m, a: m.diag(a[0], -1)),
    ("diag_2d_far", lambda m, a: m.diag(a[0], 7)),
    ("diagflat", lambda m, a: m.diagflat(a[0], 1)),
    ("diagonal", lambda m, a: m.diagonal(a)),
    ("diagonal_axes", lambda m, a: m.diagonal(a, 1, 2, 0)),
    ("diagonal_neg", lambda m, a: m.diagonal(a, -1, -1, 1)),
    ("dsplit", lambda m, a: tuple(m.dsplit(a, 2))),
    ("hsplit", lambda m, a: tuple(m.hsplit(a, [1]))),
    ("hsplit_1d", lambda m, a: tuple(m.hsplit(a[0, 0], 2))),
    ("vsplit", lambda m, a: tuple(m.vsplit(a, 2))),
    ("dstack", lambda m, a: m.dstack([a[0, 0], a[0, 1]])),
    ("dstack_2d", lambda m, a: m.dstack([a[0], a[1]])),
    ("fliplr", lambda m, a: m.fliplr(a)),
    ("flipud", lambda m, a: m.flipud(a)),
    ("rot90", lambda m, a: m.rot90(a)),
    ("rot90_2", lambda m, a: m.rot90(a, 2)),
    ("rot90_3_axes", lambda m, a: m.rot90(a, 3, (2, 0))),
    ("rot90_neg", lambda m, a: m.rot90(a, -1, (1, -1))),
    ("rot90_0", lambda m, a: m.rot90(a, 4)),
    ("roll_flat", lambda m, a: m.roll(a, 5)),
    ("roll_axis", lambda m, a: m.roll(a, -1, 1)),
    ("roll_multi", lambda m, a: m.roll(a, (1, -5), (0, 2))),
    ("roll_same_axis", lambda m, a: m.roll(a, (1, 2), (2, 2))),
    ("rollaxis", lambda m, a: m.rollaxis(a, 2)),
    ("rollaxis_start", lambda m, a: m.rollaxis(a, 0, 3)),
    ("rollaxis_noop", lambda m, a: m.rollaxis(a, 1, 2)),
    ("permute_dims", lambda m, a: m.permute_dims(a, (2, 0, 1))),
    ("matrix_transpose", lambda m, a: m.matrix_transpose(a)),
    ("repeat", lambda m, a: m.repeat(a, 2, axis=1)),
    ("repeat_counts", lambda m, a: m.repeat(a, [1, 0, 3], axis=1)),
    ("repeat_flat", lambda m, a: m.repeat(a, 2)),
    ("repeat_neg_axis", lambda m, a: m.repeat(a, [2, 1, 0, 1], axis=-1)),
    ("tile", lambda m, a: m.tile(a, (2, 1, 1, 2))),
    ("tile_int", lambda m, a: m.tile(a[0, 0], 3)),
    ("tile_short", lambda m, a: m.tile(a, (2, 1))),
    ("tile_zero", lambda m, a: m.tile(a, (0, 2))),
    ("resize_grow", lambda m, a: m.resize(a, (5, 7))),
    ("resize_shrink", lambda m, a: m.resize(a, 5)),
    ("unstack", lambda m, a: m.unstack(a, axis=1)),
    ("take_along", lambda m, a: m.take_along_axis(a, IDX, 1)),
    ("take_along_neg", lambda m, a: m.take_along_axis(a, IDX - 3, 1)),
    (
        "take_along_bcast",
        lambda m, a: m.take_along_axis(a, np.array([[[3], [0], [1]]]), 2),
    ),
    ("take_along_none", lambda m, a: m.take_along_axis(a, np.array([5, 0, 23]), None)),
    (
        "put_along",
        lambda m, a: (
            np_inplace(np.put_along_axis, a, IDX, a[0, 0, 0], 1)
            if m is np
            else m.put_along_axis(a, IDX, a[0, 0, 0], 1, inplace=False)
        ),
    ),
    (
        "put_along_vals",
        lambda m, a: (
            np_inplace(np.put_along_axis, a, IDX[:, :1], a[:, :1, :], 1)
            if m is np
            else m.put_along_axis(a, IDX[:, :1], a[:, :1, :], 1, inplace=False)
        ),
    ),
    ("select", lambda m, a: m.select([MASK, MASK[::-1]], [a, a[::-1]], a[0, 0, 1])),
    ("choose", lambda m, a: m.choose(sample(np.int32) % 3, [a, a[::-1], a[0, 0]])),
    ("kron", lambda m, a: m.kron(a[0], a[1, :2])),
    ("kron_3d", lambda m, a: m.kron(a[:, :2, :2], a[0, 0, :3])),
    (
        "fill_diagonal",
        lambda m, a: (
            np_inplace(np.fill_diagonal, a[0], a[1, 1, :2])
            if m is np
            else m.fill_diagonal(a[0], a[1, 1, :2], inplace=False)
        ),
    ),
    (
        "fill_diagonal_tall",
        lambda m, a: (
            np_inplace(np.fill_diagonal, a[0].T, a[0, 0, 1])
            if m is np
            else m.fill_diagonal(a[0].T, a[0, 0, 1], inplace=False)
        ),
    ),
    ("compress", lambda m, a: m.compress([True, False, True], a, axis=1)),
    ("compress_flat", lambda m, a: m.compress(MASK.ravel()[:10], a)),
    ("extract", lambda m, a: m.extract(MASK, a)),
    (
        "place",
        lambda m, a: (
            np_inplace(np.place, a, MASK, a[1, 2, ::-1])
            if m is np
            else m.place(a, MASK, a[1, 2, ::-1], inplace=False)
        ),
    ),
    (
        "put",
        lambda m, a: (
            np_inplace(np.put, a, [0, 5, -1], a[1, 2, :2])
            if m is np
            else m.put(a, [0, 5, -1], a[1, 2, :2], inplace=False)
        ),
    ),
    (
        "put_wrap",
        lambda m, a: (
            np_inplace(np.put, a, [30, -30], a[1, 2, :2], mode="wrap")
            if m is np
            else m.put(a, [30, -30], a[1, 2, :2], mode="wrap", inplace=False)
        ),
    ),
    (
        "put_clip",
        lambda m, a: (
            np_inplace(np.put, a, [30, 2], a[1, 2, :2], mode="clip")
            if m is np
            else m.put(a, [30, 2], a[1, 2, :2], mode="clip", inplace=False)
        ),
    ),
    ("r_", lambda m, a: m.r_[a[0, 0], a[1, 1]]),
    ("r_directive", lambda m, a: m.r_["0,2,0", a[0, 0], a[0, 1]]),
    ("r_directive1", lambda m, a: m.r_["1,2,0", a[0, 0], a[0, 1]]),
    ("r_directive3", lambda m, a: m.r_["-1,3,1", a[0, 0], a[0, 1]]),
    ("r_axis", lambda m, a: m.r_["-1", a, a]),
    ("c_", lambda m, a: m.c_[a[0, 0], a[0, 1]]),
    ("c_2d", lambda m, a: m.c_[a[0], a[1]]),
    ("s_", lambda m, a: a[m.s_[::2, 1]]),
    ("index_exp", lambda m, a: a[m.index_exp[1]]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(name, fn, dtype):
    a = sample(dtype)
    want = fn(np, a)
    for got in both(lambda x: fn(bnp, x), a):
        check(got, want)


# numpy promotes vander's and trace's results (to int64 / float64), JAX
# keeps the input's dtype (trace: sum's): compared with jax.numpy.
NUM_CASES = [
    ("vander", lambda m, a: m.vander(a[0, 0], 5)),
    ("vander_inc", lambda m, a: m.vander(a[0, 0], increasing=True)),
    ("vander_0", lambda m, a: m.vander(a[0, 0], 0)),
    ("trace", lambda m, a: m.trace(a[0])),
    ("trace_axes", lambda m, a: m.trace(a, 1, 2, 1)),
    ("trace_dtype", lambda m, a: m.trace(a[1], -1, dtype=np.float32)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.bool_], ids=_name)
@pytest.mark.parametrize("name, fn", NUM_CASES, ids=[c[0] for c in NUM_CASES])
def test_numeric_matches_jax(name, fn, dtype):
    jnp = pytest.importorskip("jax.numpy")
    if dtype == np.bool_ and name.startswith("vander"):
        pytest.skip("vander refuses bool (as in JAX)")
    a = sample(dtype)
    want = np.asarray(fn(jnp, a))
    np.testing.assert_array_equal(want, fn(np, a).astype(want.dtype))
    for got in both(lambda x: fn(bnp, x), a):
        check(got, want)


def test_trace_dtype_follows_sum():
    jnp = pytest.importorskip("jax.numpy")
    for d in (np.int8, np.int32, np.float32, np.bool_):
        a = np.ones((3, 3), d)
        for got in both(bnp.trace, a):
            assert got.dtype == jnp.trace(a).dtype
            assert float(got) == 3


# Shapes with a zero-length axis.
EMPTY_CASES = [
    ("append", lambda m, a: m.append(a, a, axis=1)),
    ("array_split", lambda m, a: tuple(m.array_split(a, 2, axis=1))),
    ("atleast_3d", lambda m, a: m.atleast_3d(a[0])),
    ("delete", lambda m, a: m.delete(a, [0], axis=0)),
    ("insert", lambda m, a: m.insert(a, 0, 1, axis=1)),
    ("diagonal", lambda m, a: m.diagonal(a, 0, 0, 1)),
    ("fliplr", lambda m, a: m.fliplr(a)),
    ("rot90", lambda m, a: m.rot90(a)),
    ("roll", lambda m, a: m.roll(a, 3, 1)),
    ("roll_flat", lambda m, a: m.roll(a, 3)),
    ("repeat", lambda m, a: m.repeat(a, 2, axis=1)),
    ("tile", lambda m, a: m.tile(a, (2, 2, 2))),
    ("resize", lambda m, a: m.resize(a, (2, 2))),
    ("take_along", lambda m, a: m.take_along_axis(a, np.zeros((2, 0, 1), int), 2)),
    ("kron", lambda m, a: m.kron(a, np.ones((2, 2), np.float32))),
    ("compress", lambda m, a: m.compress([True, False], a, axis=0)),
    ("unstack", lambda m, a: m.unstack(a, axis=1)),
]


@pytest.mark.parametrize("name, fn", EMPTY_CASES, ids=[c[0] for c in EMPTY_CASES])
def test_empty_shapes_match_numpy(name, fn):
    a = np.zeros((2, 0, 3), np.float32)
    want = fn(np, a)
    for got in both(lambda x: fn(bnp, x), a):
        check(got, want)


ZERO_D_CASES = [
    ("append", lambda m, a: m.append(a, a)),
    ("atleast_3d", lambda m, a: m.atleast_3d(a)),
    ("column_stack", lambda m, a: m.column_stack([a, a])),
    ("dstack", lambda m, a: m.dstack([a, a])),
    ("roll", lambda m, a: m.roll(a, 3)),
    ("repeat", lambda m, a: m.repeat(a, 3)),
    ("tile", lambda m, a: m.tile(a, (2, 3))),
    ("resize", lambda m, a: m.resize(a, (2, 2))),
    ("kron", lambda m, a: m.kron(a, np.ones((2,), np.float32))),
    ("diagflat", lambda m, a: m.diagflat(a, 1)),
    ("block", lambda m, a: m.block([a, a])),
    ("r_", lambda m, a: m.r_[a, a]),
    ("select", lambda m, a: m.select([a > 1], [a], 5)),
    (
        "put",
        lambda m, a: (
            np.full((), 7, np.float32) if m is np else m.put(a, 0, 7.0, inplace=False)
        ),
    ),
]


@pytest.mark.parametrize("name, fn", ZERO_D_CASES, ids=[c[0] for c in ZERO_D_CASES])
def test_zero_d_inputs_match_numpy(name, fn):
    a = np.array(3.0, np.float32)
    want = fn(np, a)
    for got in both(lambda x: fn(bnp, x), a):
        check(got, want)


def test_fill_diagonal_variants():
    for shape, val, wrap in (
        ((7, 3), 5.0, True),
        ((3, 3, 3), [1.0, 2.0], False),
        ((2, 5), [1.0, 2.0, 3.0], False),
        ((0, 3), 1.0, False),
    ):
        a = np.zeros(shape, np.float32)
        want = np_inplace(np.fill_diagonal, a, val, wrap=wrap)
        for got in both(
            lambda x, v=val, w=wrap: bnp.fill_diagonal(x, v, w, inplace=False), a
        ):
            check(got, want)


def test_traced_arguments_of_select_choose_take_along():
    a = sample(np.float32)
    i = np.argsort(a, axis=2).astype(np.int32)
    f = bt.jit(lambda x, i: bnp.take_along_axis(x, i, 2))
    check(f(a, i), np.take_along_axis(a, i, 2))
    f = bt.jit(lambda x, c: bnp.select([c, ~c], [x, -x], 1.0))
    check(f(a, MASK), np.select([MASK, ~MASK], [a, -a], 1.0))
    f = bt.jit(lambda x, i: bnp.put_along_axis(x, i, -x, 2, inplace=False))
    want = np_inplace(np.put_along_axis, a, i[..., :1], -a[..., :1], 2)
    check(
        bt.jit(lambda x, i: bnp.put_along_axis(x, i, -x[..., :1], 2, inplace=False))(
            a, i[..., :1]
        ),
        want,
    )


def test_roll_traced_shift():
    a = sample(np.float32)
    for shift, axis in ((-5, 2), (7, 1), (3, None)):
        want = np.roll(a, shift, axis)
        for got in both(lambda x, s, ax=axis: bnp.roll(x, s, ax), a, np.int32(shift)):
            check(got, want)
    got = bt.jit(lambda x, s: bnp.roll(x, s, (0, 2)))(a, np.array([1, -2], np.int32))
    check(got, np.roll(a, (1, -2), (0, 2)))


def test_repeat_traced_needs_total_length():
    jnp = pytest.importorskip("jax.numpy")
    a = np.arange(4, dtype=np.float32)
    r = np.array([1, 0, 3, 2], np.int32)
    for total in (6, 4, 9, 0):
        want = jnp.repeat(a, r, total_repeat_length=total)
        got = bt.jit(lambda x, r, t=total: bnp.repeat(x, r, total_repeat_length=t))(
            a, r
        )
        check(got, np.asarray(want))
        check(bnp.repeat(a, r, total_repeat_length=total), np.asarray(want))
    with pytest.raises(ConcretizationTypeError, match="total_repeat_length"):
        bt.jit(lambda x, r: bnp.repeat(x, r))(a, r)


def test_take_along_axis_traced_modes_follow_jax():
    jnp = pytest.importorskip("jax.numpy")
    a = sample(np.float32)
    i = np.array([[[5], [-1], [-9]], [[0], [2], [3]]], np.int32)
    f = bt.jit(lambda x, i: bnp.take_along_axis(x, i, 1, mode="clip"))
    check(f(a, i), np.asarray(jnp.take_along_axis(a, i, 1, mode="clip")))
    f = bt.jit(lambda x, i: bnp.take_along_axis(x, i, 1, mode="fill"))
    check(f(a, i), np.asarray(jnp.take_along_axis(a, i, 1, mode="fill")))
    ai = sample(np.int32)
    g = bt.jit(lambda x, i: bnp.take_along_axis(x, i, 1, mode="fill", fill_value=-7))
    check(
        g(ai, i), np.asarray(jnp.take_along_axis(ai, i, 1, mode="fill", fill_value=-7))
    )
    # the default is JAX's: 'fill', for traced and static indices alike
    want = np.asarray(jnp.take_along_axis(a, i, 1))
    assert np.isnan(want).any()
    check(bt.jit(lambda x, i: bnp.take_along_axis(x, i, 1))(a, i), want)
    check(bnp.take_along_axis(a, i, 1), want)
    # numpy's refusal on request
    with pytest.raises(IndexError):
        bnp.take_along_axis(a, i, 1, mode="promise_in_bounds")


def test_put_along_axis_traced_drops_out_of_range():
    jnp = pytest.importorskip("jax.numpy")
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    i = np.array([[-1, 9], [0, 2]], np.int32)
    want = jnp.put_along_axis(a, i, -5.0, axis=1, inplace=False)
    f = bt.jit(lambda x, i: bnp.put_along_axis(x, i, -5.0, 1, inplace=False))
    check(f(a, i), np.asarray(want))
    want = jnp.put_along_axis(a, np.array([0, 7]), 3.0, axis=None, inplace=False)
    got = bnp.put_along_axis(a, np.array([0, 7]), 3.0, None, inplace=False)
    check(got, np.asarray(want))


def test_put_traced_indices_follow_jax():
    jnp = pytest.importorskip("jax.numpy")
    a = np.arange(5, dtype=np.int32)
    v = np.array([9, 8], np.int32)
    for ind, mode in (
        ([0, 7], None),
        ([0, -1], None),
        ([0, -7], "wrap"),
        ([0, 1, 2], None),
    ):
        ind = np.array(ind, np.int32)
        want = jnp.put(a, ind, v, mode=mode, inplace=False)
        got = bt.jit(lambda x, i, m=mode: bnp.put(x, i, v, mode=m, inplace=False))(
            a, ind
        )
        check(got, np.asarray(want))


def test_place_traced_mask():
    a = sample(np.float32)
    want = np_inplace(np.place, a, MASK, [-1.0, -2.0, -3.0])
    f = bt.jit(
        lambda x, m: bnp.place(
            x, m, np.array([-1.0, -2.0, -3.0], np.float32), inplace=False
        )
    )
    check(f(a, MASK), want)


def test_compress_and_extract_with_size():
    jnp = pytest.importorskip("jax.numpy")
    a = sample(np.float32)
    c = np.array([True, False, True])
    for size, fill in ((3, -1.0), (1, 0.0), (2, 5.0)):
        want = jnp.compress(c, a, axis=1, size=size, fill_value=fill)
        f = bt.jit(
            lambda c, x, s=size, v=fill: bnp.compress(
                c, x, axis=1, size=s, fill_value=v
            )
        )
        check(f(c, a), np.asarray(want))
        check(bnp.compress(c, a, axis=1, size=size, fill_value=fill), np.asarray(want))
    m = MASK
    want = jnp.extract(m, a, size=20, fill_value=-2)
    check(
        bt.jit(lambda m, x: bnp.extract(m, x, size=20, fill_value=-2))(m, a),
        np.asarray(want),
    )


def test_delete_traced_with_assume_unique_indices():
    a = sample(np.float32)
    f = bt.jit(lambda x, i: bnp.delete(x, i, axis=2, assume_unique_indices=True))
    check(f(a, np.array([3, 0], np.int32)), np.delete(a, [3, 0], axis=2))
    check(f(a, np.array([-1], np.int32)), np.delete(a, [-1], axis=2))


def test_choose_modes():
    a = sample(np.float32)
    i = (sample(np.int32) % 5) - 1
    ch = [a, -a, a * 2]
    for mode in ("wrap", "clip"):
        want = np.choose(i, ch, mode=mode)
        for got in both(lambda i, m=mode: bnp.choose(i, ch, mode=m), i):
            check(got, want)


def test_dtype_promotion_follows_jax():
    jnp = pytest.importorskip("jax.numpy")
    a8 = np.arange(3, dtype=np.int8)
    f32 = np.ones(3, np.float32)
    pairs = [
        (lambda m: m.append(a8, 1), None),
        (lambda m: m.append(a8, f32), None),
        (lambda m: m.select([a8 > 0], [a8], 5), None),
        (lambda m: m.select([a8 > 0], [a8], 1.5), None),
        (lambda m: m.choose(np.array([0, 1, 0]), [a8, 5]), None),
        (lambda m: m.kron(2, a8), None),
        (lambda m: m.insert(a8, 1, 2.7), None),
        (lambda m: m.r_[a8, 1], None),
        (lambda m: m.r_[a8, 1.5], None),
        (lambda m: m.r_[0:3, 5, 1:2:3j], None),
        (lambda m: m.c_[a8, f32], None),
        (lambda m: m.vander(a8), None),
        (lambda m: m.diag(a8), None),
    ]
    for fn, _ in pairs:
        want = np.asarray(fn(jnp))
        check(fn(bnp), want)
        check(bt.jit(lambda fn=fn: fn(bnp))(), want)
