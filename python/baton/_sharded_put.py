"""``bt.device_put`` to a sharding, ``bt.device_put_replicated``,
``bt.device_put_sharded`` (DESIGN 5.6).

Each device receives its own block, copied straight from the source: from
host data, the block's bytes (a snapshot); from a single-device array, a
slice taken on its device and copied; from a sharded array of another
sharding, through the host. ``into=`` a sharded array of the same sharding
overwrites each shard in place (R2 per shard), so a replicated parameter
swap costs each device its share plus staging, never a second copy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _baton, _transfer, tree
from baton._baton import Array, Donated
from baton._sharded_array import ShardedArray, ShardedDonated, is_sharded, placement
from baton.sharding import (
    Mesh,
    NamedSharding,
    PartitionSpec,
    SingleDeviceSharding,
    _Sharding,
)


def is_sharding(x: Any) -> bool:
    return isinstance(x, _Sharding)


def _kind_of(sharding: Any, memory_kind: str | None) -> str:
    if memory_kind is not None:
        if sharding.memory_kind is not None and sharding.memory_kind != memory_kind:
            raise ValueError(
                f"device_put: memory_kind={memory_kind!r} but the sharding says "
                f"{sharding.memory_kind!r}; give one"
            )
        return memory_kind
    return sharding.memory_kind or "device"


def put_leaf(leaf: Any, sharding: Any, memory_kind: str | None, path: tuple) -> Any:
    """``leaf`` placed as ``sharding`` says (a ShardedArray, or an Array for a
    SingleDeviceSharding)."""
    where = f" (leaf x{tree.keystr(path)})" if path else ""
    if isinstance(sharding, SingleDeviceSharding):
        kind = memory_kind or sharding.memory_kind
        if isinstance(leaf, (ShardedArray, ShardedDonated)):
            return _gather(leaf, sharding.device, kind)
        return _transfer.put(leaf, sharding.device, memory_kind=kind)
    kind = _kind_of(sharding, memory_kind)
    if isinstance(leaf, ShardedDonated):
        raise TypeError(
            f"device_put{where}: a donated sharded array can be passed to a jitted "
            "function, or as the value of device_put(..., into=); to reshard, "
            "pass the array itself"
        )
    if isinstance(leaf, ShardedArray):
        leaf._check_live()
        if leaf.sharding == sharding and leaf.memory_kind == kind:
            return leaf.copy()
        leaf = np.asarray(leaf)  # another sharding: through the host
    if isinstance(leaf, Donated):
        raise TypeError(
            f"device_put{where}: a donated single-device array cannot be split "
            "over a mesh (its storage cannot become the shards); pass the array"
        )
    if isinstance(leaf, Array):
        leaf._check_live()
        shape = leaf.shape
        sharding.check_shape(shape, f"device_put{where}: the array")
        datas = [
            _slice_to(leaf, index, device, kind)
            for device, index, _ in placement(sharding, shape)
        ]
        return ShardedArray.from_shards(shape, sharding, datas, leaf.dtype)
    host = _transfer.prepare(leaf, path)
    a = host.array
    sharding.check_shape(a.shape, f"device_put{where}: the array")
    datas = []
    for device, index, _ in placement(sharding, a.shape):
        # order="C", not ascontiguousarray, which makes a 0-d block 1-d.
        block = np.asarray(a[index], order="C")
        datas.append(_baton._put_numpy(block, host.dtype_name, device, kind, False))
    return ShardedArray.from_shards(a.shape, sharding, datas, a.dtype)


def _slice_to(a: Array, index: tuple, device: Any, kind: str) -> Array:
    whole = all(s == slice(None) for s in index)
    part = a if whole else a[index]
    if whole or part.device != device or part.memory_kind != kind:
        return _transfer.put(part, device, memory_kind=kind)
    return part


def _gather(x: Any, device: Any, kind: str | None) -> Array:
    if isinstance(x, ShardedDonated):
        raise TypeError(
            "device_put: a donated sharded array cannot be gathered onto one device; "
            "pass the array"
        )
    return _transfer.put(np.asarray(x), device, memory_kind=kind)


def plan_into(x: Any, into: ShardedArray, path: tuple) -> list:
    """Checks that ``x`` can overwrite every shard of ``into`` in place and
    returns each shard's new value (nothing is consumed yet)."""
    where = f" at x{tree.keystr(path)}" if path else ""
    into._check_live()
    if isinstance(x, (ShardedArray, ShardedDonated)):
        if (
            x.sharding != into.sharding
            or x.shape != into.shape
            or x.dtype != into.dtype
        ):
            raise ValueError(
                f"device_put(into=...){where}: the value is {x.dtype}{x.shape} with "
                f"{x.sharding} but `into` is {into.dtype}{into.shape} with "
                f"{into.sharding}; an in-place overwrite needs the same shape, dtype "
                "and sharding. Nothing was consumed."
            )
        values = [s.data for s in x._shards]
    elif isinstance(x, (Array, Donated)):
        raise TypeError(
            f"device_put(into=...){where}: `into` is sharded but the value is a "
            "single-device array; pass host data or a sharded array of the same "
            "sharding. Nothing was consumed."
        )
    else:
        host = _transfer.prepare(x, path)
        a = host.array
        if host.weak and a.dtype != into.dtype:
            a = a.astype(into.dtype)
        if a.shape != into.shape or a.dtype != into.dtype:
            raise ValueError(
                f"device_put(into=...){where}: the new value is "
                f"{a.dtype.name}{a.shape} "
                f"but `into` is {into.dtype.name}{into.shape}; an in-place overwrite "
                "needs the same shape and dtype. Nothing was consumed."
            )
        values = [np.ascontiguousarray(a[s.index]) for s in into._shards]
    for s in into._shards:  # refuse before consuming anything
        n = s.data._external_references
        if n:
            raise _baton.DonationError(
                f"device_put(into=...){where}: the shard on {s.device} has {n} live "
                "host view(s) or DLPack export(s); delete them first. Nothing was "
                "consumed."
            )
    return values


def run_into(values: list, into: ShardedArray) -> ShardedArray:
    """Overwrites each shard of ``into`` with ``values`` (from :func:`plan_into`)."""
    datas = [_transfer.put(v, into=s.data) for v, s in zip(values, into._shards)]
    return ShardedArray.from_shards(into.shape, into.sharding, datas, into.dtype)


def device_put_replicated(x: Any, devices: list) -> Any:
    """``x`` (an array or pytree) stacked on a new leading axis, one copy per
    device: each device holds ``x`` (its shard ``[i:i+1]``). Shape
    ``(len(devices), *x.shape)``, as in JAX."""
    devices = list(devices)
    if not devices:
        raise ValueError("device_put_replicated: devices is empty")
    mesh = Mesh(np.array(devices, dtype=object), ("_replica",))
    sharding = NamedSharding(mesh, PartitionSpec("_replica"))

    def one(leaf: Any) -> ShardedArray:
        a = np.asarray(leaf) if not isinstance(leaf, Array) else leaf
        if isinstance(a, Array):
            datas = [_transfer.put(a.reshape((1, *a.shape)), d) for d in devices]
        else:
            host = _transfer.prepare(a, ())
            block = np.ascontiguousarray(host.array[None])
            datas = [
                _baton._put_numpy(block, host.dtype_name, d, "device", False)
                for d in devices
            ]
        shape = (len(devices), *datas[0].shape[1:])
        return ShardedArray.from_shards(shape, sharding, datas)

    return tree.map(one, x)


def device_put_sharded(shards: list, devices: list) -> Any:
    """``shards[i]`` on ``devices[i]``, stacked into one array of shape
    ``(len(devices), *shards[0].shape)`` split on its leading axis."""
    devices = list(devices)
    shards = list(shards)
    if len(shards) != len(devices):
        raise ValueError(
            f"device_put_sharded: {len(shards)} shards for {len(devices)} devices; "
            "give one per device"
        )
    mesh = Mesh(np.array(devices, dtype=object), ("_shard",))
    sharding = NamedSharding(mesh, PartitionSpec("_shard"))

    def stack(*leaves: Any) -> ShardedArray:
        datas = []
        for leaf, d in zip(leaves, devices):
            if isinstance(leaf, Array):
                a = leaf
            elif is_sharded(leaf):
                a = _gather(leaf, d, None)
            else:
                a = _transfer.put(leaf, d)
            datas.append(_transfer.put(a.reshape((1, *a.shape)), d))
        shapes = {tuple(a.shape) for a in datas}
        if len(shapes) != 1:
            raise ValueError(
                f"device_put_sharded: shards have different shapes {shapes}"
            )
        return ShardedArray.from_shards(
            (len(devices), *datas[0].shape[1:]), sharding, datas
        )

    return tree.map(stack, shards[0], *shards[1:])
