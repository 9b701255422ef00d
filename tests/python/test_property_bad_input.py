"""Property-based tests: bad input never crashes (issue 14).

Random garbage -- wrong dtype names and objects, negative, float, string
and nested dims, sizes far over the memory limit, non-array objects,
ragged nested lists, objects whose __array__ misbehaves, wrong keyword
values -- given to bt.zeros/ones/full/empty, baton.numpy's creation
functions, bnp.array/asarray, bt.device_put and reshape must raise a Python
exception of a documented class (or succeed with a valid array), never
segfault or abort, and leave memory where it was. A request larger than
the memory limit raises bt.ResourceExhaustedError, before any host memory
is spent on it.

Shapes whose element count or byte size overflows int64 are left out here
(the lead is fixing them in the C++ core); test_shape_overflow_is_refused
holds them, skipped until then.
"""

import operator

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

import baton as bt
import baton.numpy as bnp

import _property_strategies as P
from _property_strategies import examples, returns_memory


class Boom(Exception):
    """What a user's __array__ raises: it must reach the caller as it is."""


# What bad input may raise: the documented classes (ResourceExhaustedError
# is a MemoryError, DonationError a ValueError).
ALLOWED = (
    TypeError,
    ValueError,
    IndexError,
    OverflowError,
    MemoryError,
    NotImplementedError,
    Boom,
)

INT64_SAFE = 2**62  # byte sizes below this never overflow int64


def _nbytes(shape, itemsize=8):
    n = itemsize
    for d in shape:
        n *= d
    return n


class ArrayRaises:
    def __array__(self, dtype=None, copy=None):
        raise Boom("no array here")


class ArrayReturnsList:
    def __array__(self, dtype=None, copy=None):
        return [1, 2, 3]


class Opaque:
    pass


# ---- garbage ----

small_dims = st.integers(0, 4)
huge_dims = st.integers(2**20, 2**24)  # products far over any memory limit
bad_dims = st.one_of(
    st.integers(-(2**40), -1),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.none(),
    st.just([2, 3]),
    st.just(object()),
    st.just(1j),
)


@st.composite
def garbage_shapes(draw):
    """Shapes that are invalid, or valid but far too large, or valid."""
    kind = draw(
        st.sampled_from(["bad_dim", "huge", "valid", "valid", "scalar_junk", "nested"])
    )
    if kind == "scalar_junk":
        return draw(
            st.one_of(bad_dims, st.just({"a": 1}), st.just({1, 2}), st.just(b"\x01"))
        )
    if kind == "nested":
        return draw(st.lists(st.lists(small_dims, max_size=2), min_size=1, max_size=3))
    dims = draw(st.lists(small_dims, max_size=3))
    if kind == "bad_dim":
        dims.insert(draw(st.integers(0, len(dims))), draw(bad_dims))
    elif kind == "huge":
        dims = draw(st.lists(huge_dims, min_size=2, max_size=3))
        if _nbytes(dims) >= INT64_SAFE:  # overflow: not here (skipped test below)
            dims = dims[:2]
    as_type = draw(st.sampled_from([tuple, list, np.array]))
    if as_type is np.array:
        try:
            return np.array(dims)
        except (ValueError, TypeError, OverflowError):
            return tuple(dims)
    return as_type(dims)


_valid_dtypes = st.sampled_from(P.ALL_DTYPES)
garbage_dtypes = st.one_of(  # valid half the time, so other garbage gets through
    _valid_dtypes,
    _valid_dtypes,
    _valid_dtypes,
    st.sampled_from(
        [
            "float33",
            "int128",
            "complex64",
            "object",
            "U5",
            "S3",
            "uint16",
            "uint64",
            "datetime64[s]",
            ">f4",
            "<f4",
            "f4",
            "i8",
            "?",
            "",
            "float",
            "bfloat16",
        ]
    ),
    st.sampled_from([np.complex64, object, str, bytes, complex, int, float, bool]),
    st.sampled_from([3, -1, [], {}, np.dtype([("a", "f4")]), Opaque()]),
)

garbage_values = st.one_of(
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True),
    st.complex_numbers(max_magnitude=10),
    st.text(max_size=3),
    st.none(),
    st.just([[1, 2], [3]]),  # ragged
    st.just([[1, 2], [3, [4]]]),
    st.just([1, "a"]),
    st.just([[], [1]]),
    st.just({"a": np.ones(2)}),  # a pytree (device_put accepts it)
    st.just({"a": [1, [2, 3]]}),
    st.just({1, 2}),
    st.just(iter([1, 2])),
    st.just(ArrayRaises()),
    st.just(ArrayReturnsList()),
    st.just(Opaque()),
    st.just(np.array([1, None], dtype=object)),
    st.just(np.array([1 + 2j])),
    st.just(np.array(["ab"])),
    st.just(np.zeros(3, dtype=">f4")),
    st.just(np.zeros(2, dtype=[("a", "f4")])),
    st.just(np.array([1], dtype="datetime64[s]")),
    st.just(np.zeros(3, np.uint16)),
    st.just(memoryview(b"abcd")),
    st.just(bytearray(b"ab")),
    st.just(b"ab"),
    st.just(np.float64(3.5)),
    st.just(np.int64(2**40)),
    st.just(np.ones((2, 3), np.float32)[:, ::2]),
)

bad_kwargs = st.fixed_dictionaries(
    {},
    optional={
        "memory_kind": st.sampled_from(["device", "pinned_host", "gpu", "", 3, None]),
        "device": st.sampled_from([None, 0, "cpu:0", Opaque()]),
    },
)


def _call(fn):
    """Calls fn; returns its result or the (allowed) exception's class."""
    try:
        return fn()
    except ALLOWED as e:
        return type(e)


def _valid(result):
    """A successful call must give real arrays (a pytree of them for
    device_put): shapes of ints, live, readable."""
    for leaf in bt.tree.leaves(result):
        if isinstance(leaf, bt.Array):
            assert all(isinstance(d, int) and d >= 0 for d in leaf.shape)
            assert not leaf.is_deleted()
            np.asarray(leaf)  # readable


CREATORS = {
    "bt.zeros": lambda s, d, v, kw: bt.zeros(s, d, **kw),
    "bt.ones": lambda s, d, v, kw: bt.ones(s, d, **kw),
    "bt.empty": lambda s, d, v, kw: bt.empty(s, d, **kw),
    "bt.full": lambda s, d, v, kw: bt.full(s, v, d, **kw),
    "bt.full(array fill)": lambda s, d, v, kw: bt.full(s, np.ones(1), d, **kw),
    "bnp.zeros": lambda s, d, v, kw: bnp.zeros(s, d),
    "bnp.full": lambda s, d, v, kw: bnp.full(s, v, d),
    "bnp.empty": lambda s, d, v, kw: bnp.empty(s, d),
    "bnp.zeros_like": lambda s, d, v, kw: bnp.zeros_like(np.zeros(2), d, s),
    "bnp.eye": lambda s, d, v, kw: bnp.eye(
        *(s if isinstance(s, tuple) and len(s) == 2 else (s,)), dtype=d
    ),
    "bnp.arange": lambda s, d, v, kw: bnp.arange(_count(s), dtype=d),
    "bnp.linspace": lambda s, d, v, kw: bnp.linspace(0, 1, _count(s), dtype=d),
}


def _count(shape):
    """An element count for 1-D creators: the product of a tuple of ints,
    else the garbage itself."""
    if isinstance(shape, tuple) and all(type(d) is int for d in shape):
        n = 1
        for d in shape:
            n *= d
        return n
    return shape


@examples(300)
@given(
    fn=st.sampled_from(sorted(CREATORS)),
    shape=garbage_shapes(),
    dtype=garbage_dtypes,
    value=garbage_values,
    kwargs=bad_kwargs,
)
@example(
    fn="bt.full(array fill)", shape=(2**20, 2**20), dtype=np.float32, value=0, kwargs={}
)
@example(fn="bnp.arange", shape=(2**20, 2**20), dtype=np.int32, value=0, kwargs={})
@example(fn="bnp.eye", shape=(2**20, 2**20), dtype=np.float32, value=0, kwargs={})
@returns_memory
def test_creation_with_garbage_raises_or_succeeds(fn, shape, dtype, value, kwargs):
    result = _call(lambda: CREATORS[fn](shape, dtype, value, kwargs))
    if isinstance(result, type):
        return  # an allowed exception
    _valid(result)
    del result


@examples(40)
@given(
    fn=st.sampled_from(sorted(CREATORS)),
    dims=st.lists(huge_dims, min_size=2, max_size=2),
    dtype=st.sampled_from([np.float32, np.int32, np.uint8]),
    kind=st.sampled_from(P.KINDS),
)
@example(fn="bt.full(array fill)", dims=[2**20, 2**20], dtype=np.float32, kind="device")
@example(fn="bnp.arange", dims=[2**20, 2**20], dtype=np.int32, kind="device")
@example(fn="bnp.eye", dims=[2**20, 2**20], dtype=np.float32, kind="device")
@example(fn="bnp.linspace", dims=[2**40, 1], dtype=np.float32, kind="device")
@returns_memory
def test_over_the_limit_raises_resource_exhausted_before_using_host_memory(
    fn, dims, dtype, kind
):
    # >= 2**40 bytes: over any machine's memory limit; numpy could not even
    # build the values on the host (found: bt.full with an array fill value,
    # bnp.arange, bnp.eye and bnp.linspace did, and raised numpy's MemoryError
    # -- or, where the OS overcommits, would have run the host out of memory).
    kw = {"memory_kind": kind} if fn.startswith("bt.") else {}
    with pytest.raises(bt.ResourceExhaustedError, match="Out of memory"):
        CREATORS[fn](tuple(dims), dtype, 1, kw)


@examples(60)
@given(
    n=st.integers(1, 1 << 14),
    limit=st.integers(1 << 10, 1 << 16),
    kind=st.sampled_from(P.KINDS),
    fn=st.sampled_from(["zeros", "device_put", "full"]),
)
@returns_memory
def test_memory_limit_is_enforced_exactly_and_nothing_leaks(n, limit, kind, fn):
    need = P.footprint(4 * n, kind)  # what the array takes (with rounding)
    in_use = P.usage()[(0, kind)]
    make = {
        "zeros": lambda: bt.zeros((n,), np.float32, memory_kind=kind),
        "device_put": lambda: bt.device_put(np.ones(n, np.float32), memory_kind=kind),
        "full": lambda: bt.full((n,), 2.5, memory_kind=kind),
    }[fn]
    bt.set_memory_limit(in_use + limit, memory_kind=kind)
    try:
        if need > limit:
            with pytest.raises(bt.ResourceExhaustedError, match="Out of memory"):
                make()
            assert P.usage()[(0, kind)] == in_use  # nothing was allocated
        else:
            x = make()
            assert np.asarray(x).shape == (n,)
            assert P.usage()[(0, kind)] == in_use + need
            del x
    finally:
        bt.set_memory_limit(None, memory_kind=kind)


@examples(200)
@given(
    value=garbage_values,
    kwargs=bad_kwargs,
    where=st.sampled_from(["device_put", "array", "asarray", "into"]),
)
# baton's python_scalar_to_numpy lets numpy's cast warning through for a
# Python float beyond float32 (the value becomes inf, as in JAX).
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@returns_memory
def test_device_put_and_array_of_garbage_raise_or_succeed(value, kwargs, where):
    if where == "device_put":
        result = _call(lambda: bt.device_put(value, **kwargs))
    elif where == "array":
        result = _call(lambda: bnp.array(value))
    elif where == "asarray":
        result = _call(lambda: bnp.asarray(value, dtype=np.float32))
    else:
        old = bt.zeros((3,), np.float32)
        result = _call(lambda: bt.device_put(value, into=old))
        if isinstance(result, type):  # refused: nothing was consumed
            assert not old.is_deleted()
            np.testing.assert_array_equal(np.asarray(old), np.zeros(3, np.float32))
        del old
    if not isinstance(result, type):
        _valid(result)
    del result


@examples(150)
@given(
    shape=P.shapes(max_dims=3),
    new=st.one_of(
        garbage_shapes(),
        st.lists(st.integers(-3, 6), max_size=4).map(tuple),
        st.just((-1, -1)),
    ),
    how=st.sampled_from(["bnp.reshape", "method", "jit"]),
)
@example(shape=(), new=-2, how="bnp.reshape")
@returns_memory
def test_reshape_with_garbage_raises_like_numpy(shape, new, how):
    a = np.zeros(shape, np.float32)
    x = bt.device_put(a)
    if how == "bnp.reshape":
        fn = lambda: bnp.reshape(x, new)  # noqa: E731
    elif how == "method":
        fn = lambda: x.reshape(new)  # noqa: E731
    else:
        fn = lambda: bt.jit(lambda t: bnp.reshape(t, new))(x)  # noqa: E731
    result = _call(fn)
    if _has_dim_below_minus_one(new):
        # numpy treats every negative dim as the unknown one (-1); baton, as
        # JAX, refuses dims below -1.
        assert result in (ValueError, TypeError), (new, result)
        return
    try:
        want = np.reshape(a, new)
    except Exception:  # numpy refuses: so must baton, with an allowed class
        assert isinstance(result, type), (new, result)
        return
    assert not isinstance(result, type), (new, result)  # numpy accepts it
    assert result.shape == want.shape
    np.testing.assert_array_equal(np.asarray(result), want)
    del result


def _has_dim_below_minus_one(new):
    try:
        dims = [operator.index(new)] if np.ndim(new) == 0 else list(new)
        return any(operator.index(d) < -1 for d in dims)
    except (TypeError, ValueError):
        return False


@given(
    shape=st.sampled_from(
        [(2**62, 4), (2**64,), (2**31, 2**31, 2**31), (2**63 - 1, 2), (3, 2**62)]
    ),
    fn=st.sampled_from(["bt.zeros", "bt.empty", "bt.full", "bnp.zeros", "bnp.eye"]),
)
def test_shape_overflow_is_refused(shape, fn):
    # One check (Shape::Check, or 64-bit range in the Python shape helper):
    # a ValueError saying the shape is too large, nothing allocated.
    assume(fn != "bnp.eye" or len(shape) == 2)  # eye(N, M)
    with pytest.raises(ValueError, match="too large|does not fit in 64 bits"):
        CREATORS[fn](shape, np.float32, 0, {})
