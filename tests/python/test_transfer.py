"""bt.device_put / device_get / block_until_ready (DESIGN R2, R6, R8)."""

import collections
import dataclasses
import sys
import textwrap

import numpy as np
import pytest

import baton as bt

from _util import ALL_DTYPES, data_ptr, floats, in_use, num_allocs, run_with_two_devices


def test_device_put_snapshots_numpy(no_gc):
    h = floats(1024)
    before = in_use()
    x = bt.device_put(h)
    assert in_use() == before + 4096
    h[:] = -1  # later mutation never changes the array
    np.testing.assert_array_equal(np.asarray(x), floats(1024))
    assert not x._is_borrowed


@pytest.mark.parametrize(
    "value, dtype",
    [(True, np.bool_), (3, np.int32), (2.5, np.float32)],
)
def test_python_scalars_are_weakly_typed_defaults(value, dtype):
    x = bt.device_put(value)
    assert x.shape == () and x.dtype == dtype and x.item() == value


def test_python_scalar_errors():
    with pytest.raises(OverflowError):
        bt.device_put(2**40)
    # Python complex numbers are weakly typed complex64, as in JAX.
    z = bt.device_put(1 - 2j)
    assert z.dtype == np.complex64 and complex(np.asarray(z)) == 1 - 2j
    with pytest.raises(TypeError):
        bt.device_put("text")


@pytest.mark.x64  # 64-bit dtypes among the cases
@pytest.mark.parametrize(
    "dtype",
    ALL_DTYPES,
)
def test_numpy_dtypes_are_kept(dtype):
    h = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    x = bt.device_put(h)
    assert x.dtype == np.dtype(dtype) and x.shape == (3, 4)
    np.testing.assert_array_equal(bt.device_get(x), h)


def test_unsupported_inputs_change_nothing():
    before = in_use()
    with pytest.raises(TypeError, match="object"):
        bt.device_put(np.array([[1, 2], [3]], dtype=object))
    with pytest.raises(TypeError, match="uint16"):
        bt.device_put(np.zeros(3, np.uint16))
    with pytest.raises(TypeError):
        bt.device_put([floats(4), "oops"])  # validated before anything is put
    assert in_use() == before


def test_non_contiguous_numpy_is_copied():
    h = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    x = bt.device_put(h, may_alias=True)
    assert not x._is_borrowed
    np.testing.assert_array_equal(np.asarray(x), h)


def test_may_alias_borrows_numpy_memory(no_gc):
    h = floats(4096)
    refs = sys.getrefcount(h)
    before = in_use("pinned_host")
    x = bt.device_put(h, memory_kind="pinned_host", may_alias=True)
    assert x._is_borrowed
    assert in_use("pinned_host") == before  # borrowed: not counted
    assert np.shares_memory(np.asarray(x), h)
    assert sys.getrefcount(h) == refs + 1  # kept alive by the baton buffer
    del x
    assert sys.getrefcount(h) == refs


def test_may_alias_of_misaligned_memory_copies():
    raw = np.zeros(4 * 64 + 4, np.uint8)
    h = (
        raw[4:].view(np.float32)
        if raw[4:].ctypes.data % 16
        else raw[8 : 8 + 256].view(np.float32)
    )
    if h.ctypes.data % 16 == 0:
        pytest.skip("could not make a misaligned array")
    x = bt.device_put(h, may_alias=True)
    assert not x._is_borrowed


def test_device_put_of_array_is_an_independent_copy():
    x = bt.device_put(floats(256), memory_kind="unpinned_host")
    y = bt.device_put(x)
    assert y.memory_kind == "unpinned_host" and y.device == x.device
    assert not np.shares_memory(np.asarray(x), np.asarray(y))
    assert bt.device_put(x, may_alias=True) is x
    z = bt.device_put(x, memory_kind="pinned_host", may_alias=True)
    assert z is not x and z.memory_kind == "pinned_host"


def test_memory_kinds_are_counted_separately():
    stats = {k: in_use(k) for k in ("device", "pinned_host", "unpinned_host")}
    x = bt.device_put(floats(1024), memory_kind="unpinned_host")
    assert in_use("unpinned_host") == stats["unpinned_host"] + 4096
    assert in_use("device") == stats["device"]
    assert in_use("pinned_host") == stats["pinned_host"]
    del x


Pair = collections.namedtuple("Pair", "first second")


@bt.tree.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object


def test_pytrees():
    tree = {
        "p": Params(w=floats(4), b=1.0),
        "t": (np.int32(3), None),
        "n": Pair(1, [2]),
    }
    out = bt.device_put(tree)
    assert isinstance(out["p"], Params) and isinstance(out["p"].w, bt.Array)
    assert out["t"][1] is None and isinstance(out["n"], Pair)
    got = bt.device_get(out)
    np.testing.assert_array_equal(got["p"].w, floats(4))
    assert got["n"].second[0] == 2


def test_into_overwrites_in_place(no_gc):
    old = bt.device_put(floats(1024))
    ptr = data_ptr(old)
    before, allocs = in_use(), num_allocs()
    new = bt.device_put(floats(1024, start=1), into=old)
    assert old.is_deleted()
    with pytest.raises(bt.DeletedArrayError, match="overwritten"):
        np.asarray(old)
    assert in_use() == before and num_allocs() == allocs
    assert data_ptr(new) == ptr
    np.testing.assert_array_equal(np.asarray(new), floats(1024, start=1))


def test_into_from_an_array_of_another_kind(no_gc):
    # Both ready first: on an accelerator a copy in flight holds staging
    # memory until it lands.
    src = bt.device_put(floats(256, start=3)).block_until_ready()
    dst = bt.zeros((256,), memory_kind="pinned_host").block_until_ready()
    ptr, pinned = data_ptr(dst), in_use("pinned_host")
    out = bt.device_put(src, into=dst).block_until_ready()
    assert out.memory_kind == "pinned_host" and data_ptr(out) == ptr
    assert in_use("pinned_host") == pinned and not src.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), floats(256, start=3))
    same = bt.device_put(out, into=out)  # rebinds the same storage
    assert out.is_deleted() and data_ptr(same) == ptr


@pytest.mark.parametrize(
    "value, kwargs",
    [
        (np.zeros(5, np.float32), {}),  # shape
        (np.zeros(4, np.int32), {}),  # dtype
        (np.zeros(4, np.float32), {"memory_kind": "pinned_host"}),  # kind
    ],
)
def test_into_mismatch_consumes_nothing(value, kwargs):
    into = bt.device_put(floats(4))
    with pytest.raises(ValueError, match="Nothing was consumed"):
        bt.device_put(value, into=into, **kwargs)
    assert not into.is_deleted()
    np.testing.assert_array_equal(np.asarray(into), floats(4))


def test_into_structure_mismatch_and_duplicates():
    a, b = bt.device_put(floats(4)), bt.device_put(floats(4))
    with pytest.raises(ValueError, match="structure"):
        bt.device_put([floats(4)], into=[a, b])
    with pytest.raises(ValueError, match="twice"):
        bt.device_put([floats(4), floats(4)], into=[a, a])
    assert not a.is_deleted() and not b.is_deleted()


def test_into_swap_is_refused_before_anything_moves():
    a, b = bt.device_put(floats(4)), bt.device_put(floats(4, 1))
    with pytest.raises(ValueError, match="copy"):
        bt.device_put([a, b], into=[b, a])
    assert not a.is_deleted() and not b.is_deleted()
    out = bt.device_put([a.copy(), b.copy()], into=[b, a])
    np.testing.assert_array_equal(np.asarray(out[0]), floats(4))


# Kinds whose storage np.asarray views (zero-copy) and device_put(...,
# may_alias=True) borrows: device memory only where the host can address it.
HOST_VIEWABLE_KINDS = [
    pytest.param("device", marks=pytest.mark.host_addressable_device),
    "pinned_host",
]


@pytest.mark.parametrize("kind", HOST_VIEWABLE_KINDS)
def test_into_pytree_with_a_live_view_consumes_nothing(no_gc, kind):
    a = bt.device_put(floats(4), memory_kind=kind)
    b = bt.device_put(floats(4), memory_kind=kind)
    view = np.asarray(b)
    with pytest.raises(bt.DonationError, match="Nothing was consumed"):
        bt.device_put({"a": floats(4), "b": floats(4)}, into={"a": a, "b": b})
    assert not a.is_deleted() and not b.is_deleted()
    del view
    out = bt.device_put({"a": floats(4, 1), "b": floats(4, 2)}, into={"a": a, "b": b})
    assert a.is_deleted() and b.is_deleted()
    np.testing.assert_array_equal(np.asarray(out["b"]), floats(4, 2))


@pytest.mark.parametrize("kind", HOST_VIEWABLE_KINDS)
def test_into_single_live_view_names_it(no_gc, kind):
    a = bt.device_put(floats(4), memory_kind=kind)
    view = np.asarray(a)
    with pytest.raises(bt.DonationError, match="view"):
        bt.device_put(floats(4), into=a)
    assert not a.is_deleted()
    del view


@pytest.mark.parametrize("kind", HOST_VIEWABLE_KINDS)
def test_into_deleted_or_borrowed(kind):
    a = bt.device_put(floats(4))
    a.delete()
    with pytest.raises(bt.DeletedArrayError):
        bt.device_put(floats(4), into=a)
    h = floats(4)
    borrowed = bt.device_put(h, memory_kind=kind, may_alias=True)
    with pytest.raises(ValueError, match="borrows"):
        bt.device_put(floats(4, 9), into=borrowed)
    np.testing.assert_array_equal(h, floats(4))


def test_into_python_scalar_takes_targets_dtype():
    t = bt.device_put(np.float32(1))
    out = bt.device_put(2, into=t)
    assert out.dtype == np.float32 and out.item() == 2.0


def test_device_put_of_deleted_array_raises():
    x = bt.device_put(floats(4))
    x.delete()
    with pytest.raises(bt.DeletedArrayError, match=r"float32\(4,\)"):
        bt.device_put(x, memory_kind="pinned_host")


def test_device_get_returns_owned_copies(no_gc):
    x = bt.device_put(floats(64).reshape(8, 8))
    got = bt.device_get({"x": x, "n": 3})
    assert got["n"] == 3
    g = got["x"]
    assert isinstance(g, np.ndarray) and g.flags.owndata and g.flags.writeable
    assert x._external_references == 0
    np.testing.assert_array_equal(g, floats(64).reshape(8, 8))


def test_block_until_ready_on_trees():
    tree = {"a": bt.device_put(floats(4)), "b": [bt.zeros((3,)), 1]}
    assert bt.block_until_ready(tree) is tree
    assert tree["a"].is_ready()
    # The fast paths: one array, a flat list or tuple of arrays.
    big = [bt.device_put(floats(1 << 20)) + 1 for _ in range(3)]
    assert bt.block_until_ready(big) is big and all(a.is_ready() for a in big)
    t = tuple(a * 2 for a in big)
    assert bt.block_until_ready(t) is t and all(a.is_ready() for a in t)
    one = big[0] - 1
    assert bt.block_until_ready(one) is one and one.is_ready()
    gone = bt.device_put(floats(4))
    gone.delete()
    with pytest.raises(bt.errors.DeletedArrayError):
        bt.block_until_ready(gone)
    with pytest.raises(bt.errors.DeletedArrayError):
        bt.block_until_ready((one, gone))


def test_bad_device_and_kind_arguments():
    with pytest.raises(TypeError, match="Device"):
        bt.device_put(floats(4), device=0)
    with pytest.raises(ValueError, match="memory kind"):
        bt.device_put(floats(4), memory_kind="gpu")


def test_several_cpu_devices():
    code = textwrap.dedent(
        """
        import numpy as np, baton as bt
        d0, d1 = bt.devices()
        before = bt.memory_stats(d0)["bytes_in_use"]
        x = bt.device_put(np.ones(1024, np.float32), d1)
        assert x.device == d1 and x.device.id == 1
        assert bt.memory_stats(d1)["bytes_in_use"] == 4096
        assert bt.memory_stats(d0)["bytes_in_use"] == before
        y = bt.device_put(x, d0)
        assert y.device == d0 and float(np.asarray(y).sum()) == 1024
        assert [a.device.id for a in bt.live_arrays(d1)] == [1]
        print("ok")
        """
    )
    run_with_two_devices(code)
