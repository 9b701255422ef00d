"""make_jaxpr, eval_shape, ShapeDtypeStruct, device queries, Array.devices()
and Array.sharding."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from _util import default_platform


def _f(x, y):
    return {"p": bnp.sin(x) @ y, "s": (x * 2).sum()}


def test_eval_shape_returns_structs_and_runs_nothing():
    before = bt.memory_stats()["num_allocs"]
    out = bt.eval_shape(
        _f,
        bt.ShapeDtypeStruct((1000, 3000), np.float32),
        bt.ShapeDtypeStruct((3000, 7), "float32"),
    )
    assert out == {
        "p": bt.ShapeDtypeStruct((1000, 7), np.float32),
        "s": bt.ShapeDtypeStruct((), np.float32),
    }
    assert bt.memory_stats()["num_allocs"] == before
    assert out["p"].ndim == 2 and out["p"].size == 7000


def test_eval_shape_accepts_arrays_scalars_and_static_leaves():
    x = bt.device_put(np.ones((2, 3), np.float32))
    assert bt.eval_shape(lambda a: a.T, x).shape == (3, 2)
    weak = bt.eval_shape(lambda a: a + 1, 2.0)
    assert weak.weak_type and weak.dtype == np.float32
    # A leaf that is not an array (a str) is passed through unchanged.
    out = bt.eval_shape(
        lambda a, how: a[None] if how == "add_axis" else a, np.ones(6), "add_axis"
    )
    assert out.shape == (1, 6)
    assert not x.is_deleted()


def test_eval_shape_output_errors():
    with pytest.raises(TypeError, match="returned a str"):
        bt.eval_shape(lambda a: "no", np.ones(2))


def test_make_jaxpr_text():
    jaxpr = bt.make_jaxpr(_f)(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    text = str(jaxpr)
    assert text.startswith("func(") and "dot_general" in text and "sine" in text
    assert [a.shape for a in jaxpr.in_avals] == [(2, 3), (3, 4)]
    assert [a.shape for a in jaxpr.out_avals] == [(2, 4), ()]
    j2, shapes = bt.make_jaxpr(lambda a, k: a * k, static_argnums=1, return_shape=True)(
        np.ones(3, np.float32), 4
    )
    assert shapes == bt.ShapeDtypeStruct((3,), np.float32)
    assert len(j2.in_avals) == 1
    with pytest.raises(TypeError, match="function"):
        bt.make_jaxpr(3)


def test_device_queries():
    ds = bt.devices()
    assert bt.local_devices() == ds
    assert bt.device_count() == len(ds) == bt.local_device_count()
    assert bt.default_backend() == ds[0].platform == default_platform()
    assert bt.process_index() == 0 and bt.process_count() == 1
    with pytest.raises(ValueError, match="process"):
        bt.local_devices(process_index=1)
    with pytest.raises(RuntimeError, match="not available"):
        bt.device_count(backend="tpu")


def test_array_devices_and_sharding():
    x = bt.device_put(np.ones(3, np.float32))
    assert x.devices() == {x.device}
    s = x.sharding
    assert isinstance(s, bt.sharding.SingleDeviceSharding)
    assert s.device_set == {x.device} and s.memory_kind == "device"
    assert s.num_devices == 1 and s.is_fully_replicated and s.shard_shape((3,)) == (3,)
    assert s == bt.sharding.SingleDeviceSharding(x.device, memory_kind="device")
    assert "SingleDeviceSharding" in repr(s)
    assert s.with_memory_kind("pinned_host").memory_kind == "pinned_host"
