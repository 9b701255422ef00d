"""bt.donate(x): call-site donation (DESIGN R4) outside jit."""

import numpy as np
import pytest

import baton as bt

from _util import data_ptr, floats, in_use, num_allocs

# Memory kinds of which np.asarray / np.from_dlpack give live zero-copy views:
# `device` only where the host addresses it (the CPU), `pinned_host` on every
# platform.
VIEWABLE_KINDS = pytest.mark.parametrize(
    "kind",
    [pytest.param("device", marks=pytest.mark.host_addressable_device), "pinned_host"],
)


def test_donate_consumes_every_reference_at_once(no_gc):
    x = bt.device_put(floats(256))
    alias = x
    d = bt.donate(x)
    assert isinstance(d, bt.Donated)
    assert x.is_deleted() and alias.is_deleted()
    assert (d.shape, d.dtype, d.memory_kind, d.used) == (
        (256,),
        np.float32,
        "device",
        False,
    )
    with pytest.raises(bt.DeletedArrayError, match="donated"):
        np.asarray(x)
    assert "deleted" in repr(x)


def test_device_put_of_donated_reuses_storage(no_gc):
    x = bt.device_put(floats(1024))
    ptr = data_ptr(x)
    before, allocs = in_use(), num_allocs()
    y = bt.device_put(bt.donate(x))
    assert in_use() == before and num_allocs() == allocs
    assert data_ptr(y) == ptr  # buffer identity: same storage
    np.testing.assert_array_equal(np.asarray(y), floats(1024))
    with pytest.raises(bt.DeletedArrayError, match="donated to device_put"):
        x.block_until_ready()


def test_device_put_of_donated_to_another_kind_frees_source(no_gc):
    x = bt.device_put(floats(1024))
    # On an accelerator device_put's copy is asynchronous: until it lands, x's
    # storage is in use by it and its host staging buffer counts in pinned_host.
    x.block_until_ready()
    dev, pin = in_use(), in_use("pinned_host")
    y = bt.device_put(bt.donate(x), memory_kind="pinned_host")
    y.block_until_ready()
    assert in_use() == dev - 4096
    assert in_use("pinned_host") == pin + 4096
    np.testing.assert_array_equal(np.asarray(y), floats(1024))


@VIEWABLE_KINDS
def test_donate_with_live_view_is_refused_and_names_it(kind, no_gc):
    x = bt.device_put(floats(64), memory_kind=kind)
    a = np.asarray(x)
    with pytest.raises(bt.DonationError, match=r"np\.asarray.*view #\d+") as e:
        bt.donate(x)
    assert "Nothing was consumed" in str(e.value)
    assert not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), floats(64))
    del a


@VIEWABLE_KINDS
def test_donate_with_live_dlpack_export_is_refused(kind, no_gc):
    x = bt.device_put(floats(64), memory_kind=kind)
    n = np.from_dlpack(x)
    with pytest.raises(bt.DonationError, match="DLPack export"):
        bt.donate(x)
    assert not x.is_deleted()
    del n
    bt.donate(x)


def test_donate_deleted_array_raises_deleted_array_error():
    x = bt.device_put(floats(4))
    x.delete()
    with pytest.raises(bt.DeletedArrayError, match="deleted"):
        bt.donate(x)
    y = bt.device_put(floats(4))
    bt.donate(y)
    with pytest.raises(bt.DeletedArrayError, match="donated"):
        bt.donate(y)
    # It is also a refused donation.
    with pytest.raises(bt.DonationError):
        bt.donate(y)


def test_donate_pytree_donates_every_leaf():
    x, y = bt.device_put(floats(4)), bt.device_put(floats(8))
    tree = bt.donate({"a": x, "b": [y, 3, None]})
    assert isinstance(tree["a"], bt.Donated) and isinstance(tree["b"][0], bt.Donated)
    assert tree["b"][1] == 3 and tree["b"][2] is None
    assert x.is_deleted() and y.is_deleted()


@VIEWABLE_KINDS
def test_donate_pytree_is_all_or_nothing(kind, no_gc):
    x, y = bt.device_put(floats(4)), bt.device_put(floats(8), memory_kind=kind)
    view = np.asarray(y)
    with pytest.raises(bt.DonationError):
        bt.donate([x, y])
    assert not x.is_deleted() and not y.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), floats(4))
    del view
    with pytest.raises(bt.DonationError, match="twice"):
        bt.donate([x, x])
    assert not x.is_deleted()


def test_unused_marker_frees_storage_when_dropped(no_gc):
    x = bt.device_put(floats(1 << 14))
    # On an accelerator device_put's copy is asynchronous: until it lands, x's
    # storage is in use by it and its host staging buffer counts in pinned_host.
    x.block_until_ready()
    before = in_use()
    d = bt.donate(x)
    assert in_use() == before  # the marker owns the storage
    del d
    assert in_use() == before - (1 << 16)


def test_marker_is_spent_by_its_first_call():
    d = bt.donate(bt.device_put(floats(4)))
    bt.device_put(d)
    assert d.used
    with pytest.raises(ValueError, match="already used"):
        bt.device_put(d)


def test_donated_into_overwrites_target(no_gc):
    x = bt.device_put(floats(256, start=5))
    target = bt.zeros((256,), memory_kind="pinned_host")
    # On an accelerator device_put's copy is asynchronous: until it lands, x's
    # storage is in use by it and its host staging buffer counts in pinned_host.
    x.block_until_ready()
    ptr = data_ptr(target)
    dev, pin = in_use(), in_use("pinned_host")
    y = bt.device_put(bt.donate(x), into=target)
    y.block_until_ready()
    assert target.is_deleted() and y.memory_kind == "pinned_host"
    assert data_ptr(y) == ptr
    assert in_use("pinned_host") == pin and in_use() == dev - 1024
    np.testing.assert_array_equal(np.asarray(y), floats(256, start=5))


def test_donated_into_mismatch_keeps_marker():
    d = bt.donate(bt.device_put(floats(4)))
    target = bt.zeros((8,))
    with pytest.raises(ValueError, match="Nothing was consumed"):
        bt.device_put(d, into=target)
    assert not d.used and not target.is_deleted()
