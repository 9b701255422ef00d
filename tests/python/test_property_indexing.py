"""Property-based tests: x[key] and x.at[key].set/add/multiply/min/max
against numpy, for random keys (ints, negative ints, slices with any step,
Ellipsis, None, integer arrays and lists, boolean masks, out-of-range
values) over random shapes and layouts (DESIGN section 3: static indices
follow numpy -- out-of-range integer -> IndexError, slices clip, negative
indices wrap; traced indices and baton Arrays follow JAX -- negative ones
wrap, then reads clamp and out-of-range updates are dropped).
"""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import baton as bt

import _property_strategies as P
from _property_strategies import F32, I32, assert_values_equal, examples, returns_memory

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64


@st.composite
def index_keys(draw, shape, allow_out_of_range=True):
    """A key for an array of `shape`: one entry per indexed axis (int,
    slice, integer array or list, boolean mask over one or more axes),
    None and at most one Ellipsis anywhere. Out-of-range integers appear
    sometimes (numpy raises IndexError for them)."""
    nd = len(shape)
    n_indexed = draw(st.integers(0, nd))
    entries = []
    axis = 0
    while axis < n_indexed:
        n = shape[axis]
        lo, hi = (
            (-n - 2, n + 1)
            if allow_out_of_range and draw(st.integers(0, 9)) == 0
            else (-n, n - 1)
        )
        kind = draw(st.sampled_from(["int", "slice", "slice", "array", "list", "mask"]))
        if kind == "int":
            if hi < lo:  # an empty axis has no valid integer
                lo, hi = -1, 0
            entries.append(draw(st.integers(lo, hi)))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-n - 3, n + 3))
            step = draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
            entries.append(slice(draw(bound), draw(bound), step))
        elif kind in ("array", "list"):
            ishape = draw(
                hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=3)
            )
            if hi < lo:
                lo, hi = -1, 0
            idx = draw(hnp.arrays(np.int64, ishape, elements=st.integers(lo, hi)))
            entries.append(idx.tolist() if kind == "list" and idx.ndim == 1 else idx)
        else:
            span = draw(st.integers(1, n_indexed - axis))
            mshape = shape[axis : axis + span]
            entries.append(draw(hnp.arrays(np.bool_, mshape)))
            axis += span
            continue
        axis += 1
    for _ in range(draw(st.integers(0, 2))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), Ellipsis)
    if len(entries) == 1 and draw(st.booleans()):
        return entries[0]
    return tuple(entries)


@st.composite
def array_and_key(draw, dtypes=P.ALL_DTYPES, allow_out_of_range=True):
    shape = draw(P.shapes(max_dims=4, max_side=4), label="shape")
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    a = draw(P.laid_out(lambda s: P.raw_values(dtype, s), shape), label="a")
    key = draw(index_keys(shape, allow_out_of_range), label="key")
    return a, key


def numpy_or_error(fn):
    """(fn(), False), or (None, True) where numpy raises IndexError. (The
    exception itself is not returned: its traceback would tie the caller's
    frame, and the arrays in it, into a reference cycle.)"""
    try:
        return fn(), False
    except IndexError:
        return None, True


@examples(300)
@given(data=array_and_key())
@example(data=(np.arange(12, dtype=np.float32).reshape(3, 4), (1, [0, -1], None)))
@example(data=(np.arange(6, dtype=np.int32), 6))
@example(data=(np.zeros((2, 0, 3), np.float32), (Ellipsis, [0, -1])))
# Found by this property (fixed in baton/_index_plan.py): an Ellipsis that
# stands for no dimension still separates advanced indices, so numpy puts
# their dimensions first; and indexing arrays that do not broadcast raise
# IndexError (not ValueError).
@example(
    data=(
        np.arange(24, dtype=np.int32).reshape(2, 3, 4),
        (slice(None), [0], Ellipsis, 0),
    )
)
@example(
    data=(
        np.zeros((0, 0, 1), np.bool_),
        (None, np.zeros((0, 0), np.bool_), Ellipsis, 0),
    )
)
@example(
    data=(
        np.zeros((0, 0), np.bool_),
        (np.zeros(0, np.bool_), np.zeros((0, 2), np.int64)),
    )
)
# numpy accepts a boolean mask dimension of 0 along an axis of any size.
@example(
    data=(np.zeros((0, 0, 1), np.bool_), (Ellipsis, slice(None), np.zeros(0, np.bool_)))
)
@example(data=(np.arange(6.0).reshape(2, 3), np.zeros((2, 0), np.bool_)))
@returns_memory
def test_getitem_matches_numpy_or_raises_index_error(data):
    a, key = data
    x = bt.device_put(a)
    check_getitem(a, key, lambda: x[key])


def check_getitem(a, key, get):
    """get() (baton's a[key]) gives numpy's a[key], or IndexError where
    numpy raises it."""
    want, error = numpy_or_error(lambda: a[key])
    if error:
        with pytest.raises(IndexError):
            get()
        return
    if np.asarray(want).size == 0 and _out_of_range(a, key):
        # Known difference (docs/testing_robustness.md): numpy checks index
        # values while it gathers, so an empty result skips the check; baton
        # checks every static index value and raises IndexError.
        with pytest.raises(IndexError):
            get()
        return
    P.assert_bitwise_equal(np.asarray(get()), np.asarray(want))


def _out_of_range(a, key):
    """Whether an integer array in key has a value outside its axis."""
    entries = list(key) if isinstance(key, tuple) else [key]
    if Ellipsis in [e for e in entries if e is Ellipsis]:
        i = next(i for i, e in enumerate(entries) if e is Ellipsis)
        used = sum(
            np.ndim(e) if _is_mask(e) else 1
            for e in entries
            if e is not None and e is not Ellipsis
        )
        entries[i : i + 1] = [slice(None)] * (a.ndim - used)
    axis = 0
    for e in entries:
        if e is None:
            continue
        if _is_mask(e):
            axis += np.ndim(e)
            continue
        if isinstance(e, (list, np.ndarray)):
            v = np.asarray(e)
            n = a.shape[axis]
            if v.size and (v.min() < -n or v.max() >= n):
                return True
        axis += 1
    return False


def _is_mask(e):
    return isinstance(e, np.ndarray) and e.dtype == np.bool_


@examples(100)
@given(data=array_and_key(dtypes=(P.F32,)))
@returns_memory
def test_getitem_under_jit_with_static_key_matches_eager(data):
    a, key = data
    f = bt.jit(lambda x: x[key])
    x = bt.device_put(a)
    check_getitem(a, key, lambda: f(x))


def _updated(a, key, v, mode):
    """numpy's result of x.at[key].<mode>(v): the selected positions (as flat
    indices, repeats included) updated; repeats accumulate."""
    flat = a.copy().reshape(-1)
    pos = np.arange(a.size).reshape(a.shape)[key]
    vals = np.broadcast_to(np.asarray(v, a.dtype), pos.shape).reshape(-1)
    pos = pos.reshape(-1)
    if mode == "set":
        flat[pos] = vals
    else:
        {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}[
            mode
        ].at(flat, pos, vals)
    return flat.reshape(a.shape)


@examples(200)
@given(
    data=array_and_key(dtypes=(F32, I32)),
    mode=st.sampled_from(["set", "add", "multiply", "min", "max"]),
    v_data=st.data(),
)
@returns_memory
def test_at_updates_match_numpy(data, mode, v_data):
    a, key = data
    # small integer values: sums and products are exact in any order
    a = np.round(np.clip(np.nan_to_num(a.astype(np.float64)), -4, 4)).astype(a.dtype)
    pos, error = numpy_or_error(lambda: np.arange(a.size).reshape(a.shape)[key])
    x = bt.device_put(a)
    if error or (pos.size == 0 and _out_of_range(a, key)):  # see check_getitem
        with pytest.raises(IndexError):
            getattr(x.at[key], mode)(1)
        return
    # v: a scalar or an array broadcastable to the selection's shape
    k = v_data.draw(st.integers(0, pos.ndim), label="v ndim")
    ones = v_data.draw(st.lists(st.booleans(), min_size=k, max_size=k), label="v ones")
    vshape = tuple(1 if o else d for o, d in zip(ones, pos.shape[pos.ndim - k :]))
    v = v_data.draw(hnp.arrays(a.dtype, vshape, elements=st.integers(-3, 3)), label="v")
    if mode == "set" and len(np.unique(pos)) < pos.size:
        # repeated positions: "one of them wins" (DESIGN) -- each must be one of v's
        got = np.asarray(x.at[key].set(v))
        want_any = np.broadcast_to(v, pos.shape)
        for p in np.unique(pos):
            choices = want_any[pos == p]
            assert got.reshape(-1)[p] in choices
        untouched = np.setdiff1d(np.arange(a.size), pos)
        np.testing.assert_array_equal(
            got.reshape(-1)[untouched], a.reshape(-1)[untouched]
        )
        return
    got = np.asarray(getattr(x.at[key], mode)(v))
    assert_values_equal(got, _updated(a, key, v, mode))
    np.testing.assert_array_equal(np.asarray(x), a)  # x itself is unchanged


@examples(120)
@given(
    shape=P.shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
    data=st.data(),
    where=st.sampled_from(["eager", "jit"]),
)
@returns_memory
def test_array_indices_wrap_then_clamp_reads_and_drop_updates(shape, data, where):
    a = data.draw(hnp.arrays(F32, shape, elements=st.integers(-50, 50)), label="a")
    n = shape[0]
    idx = data.draw(
        hnp.arrays(
            I32,
            hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
            elements=st.integers(-2 * n - 1, 2 * n + 1),
        ),
        label="idx",
    )
    wrapped = np.where(idx < 0, idx + n, idx)
    read = np.clip(wrapped, 0, n - 1)
    x, i = bt.device_put(a), bt.device_put(idx)
    get = (lambda x, i: x[i]) if where == "eager" else bt.jit(lambda x, i: x[i])
    add = (
        (lambda x, i: x.at[i].add(1.0))
        if where == "eager"
        else bt.jit(lambda x, i: x.at[i].add(1.0))
    )
    P.assert_bitwise_equal(np.asarray(get(x, i)), a[read])
    want = a.copy()
    inside = (wrapped >= 0) & (wrapped < n)
    np.add.at(want, wrapped[inside], 1.0)
    P.assert_bitwise_equal(np.asarray(add(x, i)), want)
