"""Property-based tests: device_put / np.asarray / device_get round trips,
copies between memory kinds, snapshots, in-place overwrite with into=, and
bt.zeros/ones/full/empty (DESIGN R2, R6, R7, R8, section 3).

A round trip is bitwise: baton moves bytes, it does not convert them, so
every float bit pattern (NaN payloads, signalling NaNs, subnormals, -0.0)
comes back as it went (R7: bfloat16 and float16 round-trip through numpy).
"""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import baton as bt
import baton.numpy as bnp

import _property_strategies as P
from _property_strategies import assert_bitwise_equal, examples, returns_memory

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64

kinds = st.sampled_from(P.KINDS)


@examples(120)
@given(a=P.host_arrays(), kind=kinds, read=st.sampled_from(["asarray", "device_get"]))
@returns_memory
def test_round_trip_is_bitwise_for_every_dtype_layout_and_kind(a, kind, read):
    before = P.usage()[(0, kind)]
    x = bt.device_put(a, memory_kind=kind)
    assert (x.shape, x.dtype, x.memory_kind) == (a.shape, a.dtype, kind)
    assert (x.size, x.ndim, x.nbytes) == (a.size, a.ndim, a.nbytes)
    got = np.asarray(x) if read == "asarray" else bt.device_get(x)
    assert_bitwise_equal(np.array(got), a)
    # bytes_in_use counts the buffer (the allocator may round up <= 4 KiB).
    grown = P.usage()[(0, kind)] - before
    assert a.nbytes <= grown <= a.nbytes + 4096
    del got


@examples(60)
@given(a=P.host_arrays(), src=kinds, dst=kinds)
@returns_memory
def test_copy_between_kinds_is_independent_and_bitwise(a, src, dst):
    x = bt.device_put(a, memory_kind=src)
    y = bt.device_put(x, memory_kind=dst)
    assert y is not x and y.memory_kind == dst and not x.is_deleted()
    x.delete()  # y does not depend on x's storage
    assert_bitwise_equal(np.asarray(y), a)
    assert x.is_deleted() and x.shape == a.shape and x.dtype == a.dtype
    with pytest.raises(bt.DeletedArrayError):
        np.asarray(x)


@examples(40)
@given(
    a=P.host_arrays(layouts=("C", "F", "negative", "strided", "misaligned")), kind=kinds
)
@returns_memory
def test_device_put_snapshots_its_source(a, kind):
    want = a.copy()
    x = bt.device_put(a, memory_kind=kind)
    a[...] = 1  # after the call returns; the transfer may still be in flight
    assert_bitwise_equal(np.asarray(x), want)


@examples(40)
@given(a=P.host_arrays(layouts=("C",)), kind=st.sampled_from(P.KINDS))
@returns_memory
def test_may_alias_values_and_accounting(a, kind):
    # A borrowed buffer is not counted; a copy is. Either way the values
    # are a's and nothing is left behind.
    before = P.usage()[(0, kind)]
    x = bt.device_put(a, memory_kind=kind, may_alias=True)
    assert_bitwise_equal(np.asarray(x), a)
    grown = P.usage()[(0, kind)] - before
    assert grown == 0 if x._is_borrowed else a.nbytes <= grown <= a.nbytes + 4096


@examples(80)
@given(data=st.data(), kind=kinds, source=st.sampled_from(["numpy", "array"]))
@returns_memory
def test_into_overwrites_in_place_and_consumes_into(data, kind, source):
    new = data.draw(P.host_arrays(), label="new")
    old_values = data.draw(
        P.laid_out(lambda s: P.raw_values(new.dtype, s), new.shape, ("C",)), label="old"
    )
    old = bt.device_put(old_values, memory_kind=kind).block_until_ready()
    src = new if source == "numpy" else bt.device_put(new).block_until_ready()
    before = P.usage()
    out = bt.device_put(src, into=old)
    assert old.is_deleted() and not out.is_deleted()
    assert (out.shape, out.dtype, out.memory_kind) == (new.shape, new.dtype, kind)
    assert_bitwise_equal(np.asarray(out), new)
    # The result uses old's storage: no memory kind grows.
    assert P.usage() == before
    with pytest.raises(bt.DeletedArrayError, match=r"overwritten|deleted|donated"):
        old + 0


@examples(60)
@given(data=st.data(), kind=kinds)
@returns_memory
def test_into_mismatch_raises_value_error_and_consumes_nothing(data, kind):
    old_values = data.draw(P.host_arrays(layouts=("C",)), label="old")
    new = data.draw(P.host_arrays(), label="new")
    if new.shape == old_values.shape and new.dtype == old_values.dtype:
        new = np.zeros((*old_values.shape, 1), old_values.dtype)
    old = bt.device_put(old_values, memory_kind=kind)
    with pytest.raises(ValueError):
        bt.device_put(new, into=old)
    assert not old.is_deleted()
    assert_bitwise_equal(np.asarray(old), old_values)


# A Python float beyond float32's range becomes inf (numpy warns as it casts).
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@examples(60)
@given(
    value=st.one_of(
        st.booleans(),
        st.integers(-(2**31), 2**31 - 1),
        st.floats(allow_nan=True, allow_infinity=True),
    ),
    kind=kinds,
)
@returns_memory
def test_python_scalars_are_weakly_typed(value, kind):
    want = np.asarray(
        value, {bool: np.bool_, int: np.int32, float: np.float32}[type(value)]
    )
    x = bt.device_put(value, memory_kind=kind)
    assert x.shape == () and x.dtype == want.dtype
    assert_bitwise_equal(np.asarray(x), want)


@examples(20)
@given(
    value=st.one_of(st.integers(max_value=-(2**31) - 1), st.integers(min_value=2**31))
)
@returns_memory
def test_python_int_outside_int32_raises_overflow_error(value):
    with pytest.raises(OverflowError):
        bt.device_put(value)


@examples(80)
@example(shape=(), dtype=np.dtype(np.int8), fill=128, kind="device", fn="full")
@example(shape=(2,), dtype=np.dtype(np.uint8), fill=-1, kind="device", fn="full")
@given(
    shape=P.shapes(),
    dtype=st.sampled_from(P.ALL_DTYPES),
    fill=st.one_of(
        st.booleans(), st.integers(-1000, 1000), st.floats(-1e3, 1e3, width=16)
    ),
    kind=kinds,
    fn=st.sampled_from(["full", "zeros", "ones", "empty"]),
)
@returns_memory
def test_creation_matches_numpy(shape, dtype, fill, kind, fn):
    if dtype.kind in "iu" and isinstance(fill, float):  # in range: no UB cast
        info = np.iinfo(dtype)
        fill = float(np.clip(fill, info.min, info.max))
    if fn == "full":
        try:
            want = np.full(shape, fill, dtype)
        except OverflowError:  # a Python int outside dtype's range
            with pytest.raises(OverflowError):
                bt.full(shape, fill, dtype, memory_kind=kind)
            return
        x = bt.full(shape, fill, dtype, memory_kind=kind)
    elif fn == "empty":
        x = bt.empty(shape, dtype, memory_kind=kind)
        want = None
    else:
        x = getattr(bt, fn)(shape, dtype, memory_kind=kind)
        want = getattr(np, fn)(shape, dtype)
    assert (x.shape, x.dtype, x.memory_kind) == (tuple(shape), dtype, kind)
    got = np.asarray(x)
    if want is not None:
        assert_bitwise_equal(got, want)
    del got


# The kinds np.asarray views (zero-copy): device memory only where the host
# can address it (on an accelerator np.asarray copies it out).
VIEWED_KINDS = ["pinned_host", "unpinned_host"] + (
    ["device"] if bt.devices()[0]._host_addressable("device") else []
)


@examples(40)
@given(a=P.host_arrays(), kind=st.sampled_from(VIEWED_KINDS))
@returns_memory
def test_host_view_is_read_only_and_blocks_donation_while_alive(a, kind):
    x = bt.device_put(a, memory_kind=kind)
    view = np.asarray(x)
    assert not view.flags.writeable
    assert_bitwise_equal(view, a)
    with pytest.raises(bt.DonationError):
        bt.donate(x)
    with pytest.raises(bt.DonationError):
        bt.device_put(a, into=x)
    assert not x.is_deleted()  # refused: nothing consumed
    del view  # the hold dies with the numpy object
    marker = bt.donate(x)
    assert x.is_deleted()
    del marker


USES = {
    "np.asarray": lambda x: np.asarray(x),
    "device_get": lambda x: bt.device_get(x),
    "add": lambda x: x + 1,
    "getitem": lambda x: x[...],
    "block_until_ready": lambda x: x.block_until_ready(),
    "is_ready": lambda x: x.is_ready(),
    "device_put": lambda x: bt.device_put(x),
    "device_put kind": lambda x: bt.device_put(x, memory_kind="pinned_host"),
    "sum": lambda x: x.sum(),
    "reshape": lambda x: x.reshape(-1),
    "astype": lambda x: x.astype(np.float32),
    "bnp.exp": lambda x: bnp.exp(x),
    "jit": lambda x: bt.jit(lambda t: t * 2)(x),
    "donate": lambda x: bt.donate(x),
    "at.set": lambda x: x.at[...].set(0),
    "into": lambda x: bt.device_put(np.zeros(x.shape, x.dtype), into=x),
    "copy": lambda x: x.copy(),
    "tolist": lambda x: x.tolist(),
    "dlpack": lambda x: x.__dlpack__(),
    # Found by the property below (fixed: baton._ops.unchanged): ops that
    # leave an array as it is returned a deleted array instead of raising.
    "reshape same shape": lambda x: x.reshape(x.shape),
    "astype same dtype": lambda x: x.astype(x.dtype),
    "x[...]": lambda x: x[...],
    "x[()]": lambda x: x[()],
    "+x": lambda x: +x,
    "bnp.asarray": lambda x: bnp.asarray(x),
    "bnp.array(copy=False)": lambda x: bnp.array(x, copy=False),
    "transpose identity": lambda x: bnp.transpose(x, tuple(range(x.ndim))),
    "squeeze nothing": lambda x: bnp.squeeze(x, ()),
    "atleast_1d": lambda x: bnp.atleast_1d(x),
}
_FOUND = [
    k
    for k in USES
    if k
    in (
        "reshape same shape",
        "astype same dtype",
        "x[...]",
        "x[()]",
        "+x",
        "bnp.asarray",
        "bnp.array(copy=False)",
        "transpose identity",
        "squeeze nothing",
        "atleast_1d",
    )
]


@examples(80)
@given(
    a=P.host_arrays(layouts=("C",)),
    kind=kinds,
    how=st.sampled_from(["delete", "donate", "into"]),
    use=st.sampled_from(sorted(USES)),
)
@returns_memory
def test_a_consumed_array_refuses_every_use_and_keeps_its_metadata(a, kind, how, use):
    x = bt.device_put(a, memory_kind=kind)
    if how == "delete":
        x.delete()
        x.delete()  # idempotent
    elif how == "donate":
        marker = bt.donate(x)
        del marker
    else:
        out = bt.device_put(np.zeros(a.shape, a.dtype), into=x)
        del out
    assert x.is_deleted()
    assert (x.shape, x.dtype, x.nbytes, x.memory_kind) == (
        a.shape,
        a.dtype,
        a.nbytes,
        kind,
    )
    assert "deleted" in repr(x).lower() or "donated" in repr(x).lower()
    with pytest.raises(bt.DeletedArrayError, match=rf"{a.dtype.name}|deleted|donated"):
        USES[use](x)


for _use in _FOUND:  # each one a regression example, on every run
    test_a_consumed_array_refuses_every_use_and_keeps_its_metadata = example(
        a=np.zeros(3, np.float32), kind="device", how="delete", use=_use
    )(test_a_consumed_array_refuses_every_use_and_keeps_its_metadata)
del _use
