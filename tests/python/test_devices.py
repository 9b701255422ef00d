"""bt.devices() and Device."""

import baton as bt
from _util import default_platform


def test_default_device():
    devs = bt.devices()
    assert len(devs) >= 1
    d = devs[0]
    assert d.id == 0 and d.platform == default_platform()  # "cpu" by default
    assert d.memory_kinds == ("device", "pinned_host", "unpinned_host")
    assert d.default_memory_kind == "device"
    expected = {"cpu": "CpuDevice(id=0)", "sim": "SimDevice(id=0)", "cuda": "CudaDevice(id=0)"}
    assert repr(d) == expected[d.platform]


def test_device_identity_and_hash():
    d = bt.devices()[0]
    assert bt.devices()[0] is d
    assert bt.zeros((1,)).device is d
    assert d == bt.devices()[0] and hash(d) == hash(bt.devices()[0])
    assert d != "cpu:0"
    bt.devices().clear()  # a copy: the module's list is unchanged
    assert bt.devices()
