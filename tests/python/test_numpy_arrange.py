"""baton.numpy's arrangement, selection and index-building functions
(_arrange, _selection, _index_tricks) against numpy -- and jax.numpy where
the two differ -- eager and inside jit, with their errors."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton.errors import ConcretizationTypeError

from _util import dtype_name as _name

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64

DTYPES = [np.float32, np.int32, np.int8, np.bool_, ml_dtypes.bfloat16]


def sample(dtype, shape=(2, 3, 4)):
    return (np.arange(int(np.prod(shape))).reshape(shape) % 7).astype(dtype)


def both(fn, *args):
    """fn on device arrays (eager) and fn of the same data traced by jit."""
    eager = fn(*[bt.device_put(a) if isinstance(a, np.ndarray) else a for a in args])
    traced = bt.jit(fn)(*args)
    return eager, traced


def check(got, want, dtype=True):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)), type(got)
        assert len(got) == len(want), (len(got), len(want))
        for g, w in zip(got, want):
            check(g, w, dtype)
        return
    want = np.asarray(want)
    if dtype:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert tuple(got.shape) == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(
        np.asarray(got).astype(np.float64), want.astype(np.float64)
    )


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


# ---- index builders ----


def test_index_builders_match_numpy_with_int32():
    cases = [
        (lambda m: m.tril_indices(3), None),
        (lambda m: m.tril_indices(3, 1, 4), None),
        (lambda m: m.triu_indices(4, -1), None),
        (lambda m: m.triu_indices(3, 0, 2), None),
        (lambda m: m.tril_indices_from(np.ones((2, 5)), 1), None),
        (lambda m: m.triu_indices_from(np.ones((4, 3))), None),
        (lambda m: m.diag_indices(3), None),
        (lambda m: m.diag_indices(2, 4), None),
        (lambda m: m.diag_indices_from(np.ones((3, 3, 3))), None),
        (lambda m: m.indices((2, 3)), None),
        (lambda m: m.indices((2, 0, 3)), None),
        (lambda m: m.indices((2, 3), sparse=True), None),
        (lambda m: m.indices(()), None),
        (lambda m: m.unravel_index(np.array([5, 0, 23], np.int32), (2, 3, 4)), None),
        (lambda m: m.unravel_index(7, (4, 2)), None),
        (
            lambda m: m.ravel_multi_index(
                (np.array([1, 0], np.int32), np.array([2, 1], np.int32)), (2, 3)
            ),
            None,
        ),
        (
            lambda m: m.ravel_multi_index(
                (np.array([1, 0], np.int32), np.array([2, 1], np.int32)),
                (2, 3),
                order="F",
            ),
            None,
        ),
        (
            lambda m: m.ravel_multi_index(
                (np.array([1, 5], np.int32), np.array([-2, 1], np.int32)),
                (2, 3),
                mode="wrap",
            ),
            None,
        ),
        (
            lambda m: m.ravel_multi_index(
                (np.array([1, 5], np.int32), np.array([-2, 1], np.int32)),
                (2, 3),
                mode="clip",
            ),
            None,
        ),
        (lambda m: m.mgrid[0:3, 1:5:2], None),
        (lambda m: m.ogrid[0:3, 1:5:2], None),
        (lambda m: m.mgrid[-2:2], None),
    ]
    for fn, _ in cases:
        want = fn(np)
        want = (
            [np.asarray(w).astype(np.int32) for w in want]
            if isinstance(want, (tuple, list))
            else np.asarray(want).astype(np.int32)
        )
        check(fn(bnp), want)
        check(bt.jit(lambda fn=fn: fn(bnp))(), want)


def test_float_grids_match_numpy_in_float32():
    cases = [
        lambda m: m.tri(3, 5, 1),
        lambda m: m.tri(4, k=-1),
        lambda m: m.tri(0),
        lambda m: m.mgrid[0:1:5j],
        lambda m: m.mgrid[0:1:3j, 0:2:0.5],
        lambda m: m.ogrid[0:3:4j, 1:2:2j],
        lambda m: m.r_[0:3, 5, 1:2:3j],
        lambda m: m.fromfunction(lambda i, j: i * 10 + j, (2, 3)),
        lambda m: m.geomspace(1, 1000, 7),
        lambda m: m.geomspace(-2, -256, 8, endpoint=False),
        lambda m: m.logspace(0, 3, 7, base=2.0),
        lambda m: m.logspace(1, -1, 5),
    ]
    for fn in cases:
        want = fn(np)
        want = (
            [np.asarray(w, np.float32) for w in want]
            if isinstance(want, (tuple, list))
            else np.asarray(want, np.float32)
        )
        for got in (fn(bnp), bt.jit(lambda fn=fn: fn(bnp))()):
            if isinstance(want, list):
                for g, w in zip(got, want):
                    np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)
            else:
                assert got.dtype == np.float32
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_space_dtypes():
    got = bnp.geomspace(1, 1000, 4, dtype=np.int32)
    check(got, np.geomspace(1, 1000, 4).astype(np.int32))
    got = bnp.logspace(0, 3, 4, dtype=bnp.int32)
    check(got, np.array([1, 10, 100, 1000], np.int32))
    check(
        bnp.fromfunction(lambda i: i * 2, (3,), dtype=int),
        np.array([0, 2, 4], np.int32),
    )


def test_meshgrid_and_ix_():
    x, y, z = (
        np.arange(3, dtype=np.float32),
        np.arange(2, dtype=np.int32),
        np.ones(4, np.int8),
    )
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            want = np.meshgrid(x, y, z, indexing=indexing, sparse=sparse)
            got = both(
                lambda a, b, c, i=indexing, s=sparse: tuple(
                    bnp.meshgrid(a, b, c, indexing=i, sparse=s)
                ),
                x,
                y,
                z,
            )
            for g in got:
                check(g, want)
    assert bnp.meshgrid() == []
    check(bnp.meshgrid(x)[0], x)
    a = sample(np.float32)
    want = a[np.ix_([0, 1], [2, 0], [3])]
    check(bt.device_put(a)[bnp.ix_([0, 1], [2, 0], [3])], want)
    check(bt.jit(lambda x: x[bnp.ix_([0, 1], [2, 0], [3])])(a), want)
    check(bnp.ix_(np.array([True, False, True]))[0], np.array([0, 2], np.int32))
    check(
        bt.jit(lambda i: bnp.asarray(a)[bnp.ix_(i, i)])(np.array([1, 0], np.int32)),
        a[np.ix_([1, 0], [1, 0])],
    )


def test_unravel_index_traced_clamps_like_jax():
    jnp = pytest.importorskip("jax.numpy")
    i = np.array([5, 100, -1, 0], np.int32)
    want = jnp.unravel_index(i, (2, 3))
    check(
        bt.jit(lambda i: bnp.unravel_index(i, (2, 3)))(i), [np.asarray(w) for w in want]
    )
    i8 = np.array([5, 2], np.int8)
    got = bnp.unravel_index(i8, (2, 3))
    check(got, [np.array([1, 0], np.int8), np.array([2, 2], np.int8)])


def test_trim_zeros():
    for v, trim in (
        ([0, 0, 1, 0, 2, 0], "fb"),
        ([0, 0, 1, 0, 2, 0], "f"),
        ([0, 0, 1, 0, 2, 0], "b"),
        ([0, 0], "fb"),
        ([], "fb"),
        ([3], "b"),
    ):
        a = np.array(v, np.float32)
        check(bnp.trim_zeros(a, trim), np.trim_zeros(a, trim))
        check(bnp.trim_zeros(bt.device_put(a), trim), np.trim_zeros(a, trim))
    m = np.zeros((4, 5), np.int32)
    m[1, 2] = m[2, 3] = 1
    check(bnp.trim_zeros(m), np.trim_zeros(m))
    check(bnp.trim_zeros(m, axis=1), np.trim_zeros(m, axis=1))
    with pytest.raises(ConcretizationTypeError, match="trim_zeros"):
        bt.jit(bnp.trim_zeros)(np.array([0, 1, 0], np.float32))


def test_apply_along_and_over_axes():
    a = sample(np.float32)
    for axis, f in (
        (1, lambda v: v * v.sum()),
        (2, lambda v: v.max()),
        (0, lambda v: bnp.stack([v, -v])),
    ):
        fn = f if axis != 0 else (lambda v: np.stack([v, -v]))
        want = np.apply_along_axis(fn if axis == 0 else f, axis, a)
        for got in both(lambda x, f=f, ax=axis: bnp.apply_along_axis(f, ax, x), a):
            check(got, want)
    for axes in ([0, 2], [1], (-1, 0)):
        want = np.apply_over_axes(np.sum, a, axes)
        for got in both(lambda x, ax=axes: bnp.apply_over_axes(bnp.sum, x, ax), a):
            check(got, want)


def test_unstack_and_fliplr_on_jit_tracer_keep_dtypes():
    a = sample(ml_dtypes.bfloat16)
    for got in both(lambda x: bnp.unstack(x), a):
        check(got, list(a))
    assert bnp.unstack(np.zeros((0, 2), np.float32)) == ()


# ---- errors ----


def test_errors_have_numpy_classes_and_clear_messages():
    x = bt.device_put(sample(np.float32))
    m = bt.device_put(np.ones((2, 3), np.float32))
    v = bt.device_put(np.ones(3, np.float32))
    cases = [
        (lambda: bnp.array_split(x, 0), ValueError, "sections must be > 0"),
        (lambda: bnp.vsplit(v, 2), ValueError, "2 or more dimensions"),
        (lambda: bnp.dsplit(m, 2), ValueError, "3 or more dimensions"),
        (lambda: bnp.hsplit(np.float32(1), 1), ValueError, "1 or more"),
        (lambda: bnp.block([]), ValueError, "empty list"),
        (lambda: bnp.block([[v], v]), ValueError, "depths are mismatched"),
        (lambda: bnp.block([(v, v)]), TypeError, "tuple"),
        (lambda: bnp.fliplr(v), ValueError, "at least 2-d"),
        (lambda: bnp.flipud(np.float32(1)), ValueError, "at least 1-d"),
        (lambda: bnp.rot90(m, axes=(0, 0)), ValueError, "must be different"),
        (lambda: bnp.rot90(m, axes=(0,)), ValueError, "len\\(axes\\) must be 2"),
        (lambda: bnp.rot90(v), ValueError, "at least 2-d"),
        (lambda: bnp.roll(x, (1, 2, 3), (0, 1)), ValueError, "same length"),
        (lambda: bnp.roll(x, 1.5, 0), TypeError, "shift"),
        (lambda: bnp.rollaxis(x, 0, 5), np.exceptions.AxisError, "start"),
        (lambda: bnp.matrix_transpose(v), ValueError, "two-dimensional"),
        (lambda: bnp.permute_dims(m, (0,)), ValueError, "don't match"),
        (lambda: bnp.repeat(v, [1, 2]), ValueError, "do not match"),
        (lambda: bnp.repeat(v, -1), ValueError, "negative"),
        (lambda: bnp.repeat(v, 1.5), TypeError, "integers"),
        (lambda: bnp.tile(v, (-1,)), ValueError, "non-negative"),
        (lambda: bnp.resize(v, (-1, 2)), ValueError, "non-negative"),
        (lambda: bnp.diag(x), ValueError, "1-d or 2-d"),
        (lambda: bnp.diagonal(v), ValueError, "at least 2 dimensions"),
        (lambda: bnp.diagonal(m, 0, 1, 1), ValueError, "cannot be the same"),
        (lambda: bnp.trace(m, out=m), NotImplementedError, "out="),
        (lambda: bnp.vander(m), ValueError, "one-dimensional"),
        (lambda: bnp.vander(v, -1), ValueError, "nonnegative"),
        (lambda: bnp.delete(v, 5), IndexError, "out of bounds"),
        (lambda: bnp.delete(v, np.array([True])), ValueError, "match the axis length"),
        (lambda: bnp.delete(v, [0.5]), IndexError, "integers"),
        (lambda: bnp.insert(v, 5, 1.0), IndexError, "out of bounds"),
        (lambda: bnp.insert(v, [[0]], 1.0), ValueError, "scalar or 1-D"),
        (
            lambda: bnp.insert(m, 1, np.ones(5), axis=1),
            ValueError,
            "cannot be broadcast",
        ),
        (
            lambda: bnp.take_along_axis(
                m, np.array([[3]]), 1, mode="promise_in_bounds"
            ),
            IndexError,
            "out of bounds",
        ),
        (lambda: bnp.take_along_axis(m, np.array([0]), 1), ValueError, "same number"),
        (
            lambda: bnp.take_along_axis(m, np.zeros((3, 1), int), 1),
            ValueError,
            "broadcast",
        ),
        (lambda: bnp.take_along_axis(m, np.array([[0.5]]), 1), IndexError, "integers"),
        (
            lambda: bnp.take_along_axis(m, np.array([[0]]), 1, mode="bad"),
            ValueError,
            "mode",
        ),
        (
            lambda: bnp.take_along_axis(m, np.zeros((2, 2), int), None),
            ValueError,
            "1-D",
        ),
        (
            lambda: bnp.put_along_axis(m, np.array([[0]]), 1.0, 1),
            ValueError,
            "inplace=False",
        ),
        (
            lambda: bnp.put_along_axis(
                m, np.array([[0]]), np.ones(4), 1, inplace=False
            ),
            ValueError,
            "do not broadcast",
        ),
        (lambda: bnp.select([v > 0], []), ValueError, "same length"),
        (lambda: bnp.select([], []), ValueError, "non-empty"),
        (lambda: bnp.select([v > 0], [m[:, :2]]), ValueError, "broadcast"),
        (lambda: bnp.choose(np.array([0, 3]), [v, v]), ValueError, "invalid entry"),
        (lambda: bnp.choose(np.array([0]), [v], mode="x"), ValueError, "mode"),
        (lambda: bnp.choose(np.array([0.5]), [v]), TypeError, "integers"),
        (lambda: bnp.fill_diagonal(m, 1.0), ValueError, "inplace=False"),
        (lambda: bnp.fill_diagonal(v, 1.0, inplace=False), ValueError, "at least 2-d"),
        (lambda: bnp.fill_diagonal(x, 1.0, inplace=False), ValueError, "equal length"),
        (lambda: bnp.trim_zeros(v, "x"), ValueError, "trim"),
        (lambda: bnp.trim_zeros(np.float32(1)), ValueError, "at least 1-d"),
        (lambda: bnp.compress(m, v), ValueError, "1-D"),
        (lambda: bnp.compress([1, 0, 0, 1], v), ValueError, "out of bounds"),
        (lambda: bnp.compress([1, 0], v, size=4), ValueError, "size"),
        (lambda: bnp.place(v, [1, 0], [1.0], inplace=False), ValueError, "as many"),
        (lambda: bnp.place(v, [1, 0, 0], [], inplace=False), ValueError, "empty"),
        (lambda: bnp.place(v, [1, 0, 0], [1.0]), ValueError, "inplace=False"),
        (lambda: bnp.put(v, [0], 1.0), ValueError, "inplace=False"),
        (lambda: bnp.put(v, [3], 1.0, inplace=False), IndexError, "out of bounds"),
        (lambda: bnp.put(v, [0], 1.0, mode="x", inplace=False), ValueError, "mode"),
        (
            lambda: bnp.apply_over_axes(lambda a, ax: a[0, 0], m, [0]),
            ValueError,
            "dimensions",
        ),
        (lambda: bnp.tri(-1), ValueError, "non-negative"),
        (lambda: bnp.tril_indices_from(v), ValueError, "2-D"),
        (lambda: bnp.diag_indices_from(m), ValueError, "equal length"),
        (lambda: bnp.diag_indices(-2), ValueError, "non-negative"),
        (lambda: bnp.indices((2, -1)), ValueError, "non-negative"),
        (lambda: bnp.meshgrid(m), ValueError, "1-D"),
        (lambda: bnp.meshgrid(v, indexing="xx"), ValueError, "indexing"),
        (lambda: bnp.ix_(m), ValueError, "1-D"),
        (lambda: bnp.unravel_index(np.array([6]), (2, 3)), ValueError, "out of bounds"),
        (lambda: bnp.unravel_index(np.array([1.5]), (2, 3)), TypeError, "integers"),
        (
            lambda: bnp.ravel_multi_index((np.array([2]), np.array([0])), (2, 3)),
            ValueError,
            "invalid entry",
        ),
        (
            lambda: bnp.ravel_multi_index((np.array([1]),), (2, 3)),
            ValueError,
            "length 2",
        ),
        (
            lambda: bnp.ravel_multi_index(([0], [0]), (2, 3), order="K"),
            ValueError,
            "order",
        ),
        (lambda: bnp.mgrid[3], TypeError, "slices"),
        (lambda: bnp.mgrid[0:1:0], ValueError, "zero"),
        (lambda: bnp.r_["x,y", v], ValueError, "directive"),
        (lambda: bnp.r_[v, "0"], ValueError, "first"),
        (lambda: bnp.geomspace(0, 10), ValueError, "zero"),
        (lambda: bnp.geomspace(v, 10), TypeError, "static"),
        (lambda: bnp.logspace(0, 1, -1), ValueError, "non-negative"),
    ]
    for fn, cls, frag in cases:
        with pytest.raises(cls, match=frag):
            fn()


def test_data_dependent_shapes_raise_concretization_errors_in_jit():
    a = sample(np.float32)
    c = np.array([True, False, True])
    i = np.array([0, 1], np.int32)
    cases = [
        (lambda x, c: bnp.compress(c, x, axis=1), "size="),
        (lambda x, c: bnp.extract(c, x[0, :, 0]), "size="),
        (lambda x, c: bnp.delete(x, c, axis=1), "assume_unique_indices"),
        (lambda x, c: bnp.trim_zeros(x[0, 0]), "trim_zeros"),
    ]
    for fn, frag in cases:
        with pytest.raises(ConcretizationTypeError, match=frag):
            bt.jit(fn)(a, c)
    with pytest.raises(ConcretizationTypeError, match="mode='wrap'"):
        bt.jit(lambda i: bnp.choose(i, [a[0, 0, :2], a[1, 1, :2]]))(i)
    with pytest.raises(ConcretizationTypeError, match="mode='wrap'"):
        bt.jit(lambda i: bnp.ravel_multi_index((i, i), (2, 3)))(i)
    with pytest.raises(ConcretizationTypeError, match="mode='raise'"):
        bt.jit(lambda i: bnp.put(a, i, 1.0, mode="raise", inplace=False))(i)
    with pytest.raises(ConcretizationTypeError, match="boolean mask"):
        bt.jit(lambda c: bnp.ix_(c))(c)
