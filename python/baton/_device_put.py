"""``bt.device_put`` and ``bt.device_get`` (DESIGN R2, R6): one dispatcher
above the two ways values travel.

- ``_transfer``: onto one device (numpy data, scalars, Arrays, ``donate``
  markers), and ``into=`` single-device Arrays;
- ``_sharded_put``: onto a sharding, and sharded values (``ShardedArray``)
  gathered, resharded or overwritten.

``device_put`` takes a pytree whose leaves are numpy arrays, Python or numpy
scalars, other array-likes (anything ``np.asarray`` accepts), baton Arrays
and ``bt.donate`` markers. Every leaf is validated before anything is
created or consumed, so an error changes nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _baton, _sharded_put, _transfer, tree
from baton._baton import Array, Device, Donated
from baton._config_states import check_transfer
from baton._memory_kinds import check_kind
from baton._sharded_array import ShardedArray, ShardedDonated, is_sharded
from baton.sharding import PartitionSpec, sharding_of


def check_device(device: Any) -> None:
    """TypeError unless ``device`` is None, a Device or a sharding."""
    if device is not None and not isinstance(device, Device):
        if _sharded_put.is_sharding(device):
            return
        raise TypeError(
            "device must be a baton Device (from bt.devices()), a sharding "
            f"(bt.sharding.NamedSharding ...) or None, not {type(device).__name__}"
        )


def on_device(value: Any, device: Device) -> Any:
    """``value`` (an Array, numpy array or scalar) on ``device``: an Array
    already there is itself, anything else a copy put there."""
    if isinstance(value, Array) and value.device == device:
        return value
    return device_put(value, device)


def device_put(
    x: Any,
    device: Device | None = None,
    *,
    memory_kind: str | None = None,
    may_alias: bool = False,
    into: Any = None,
) -> Any:
    """Puts ``x`` (an array, scalar or pytree of them) on a device.

    - numpy data is copied (a snapshot: changing the numpy array afterwards
      never changes the result) unless ``may_alias=True``, which borrows a
      C-contiguous, 16-byte-aligned numpy array zero-copy (host-resident
      memory kinds only): the numpy array stays alive until the baton buffer
      is released, its bytes are not counted in ``memory_stats()``, and you
      promise not to mutate it meanwhile. Other arrays are copied.
    - A baton Array keeps its device and memory kind where ``device`` /
      ``memory_kind`` are None, and is copied into an independent array --
      unless ``may_alias=True``, which returns the array itself when nothing
      moves.
    - ``bt.donate(x)``: x's storage is reused for the result when the device
      and memory kind stay the same (no copy), else freed once copied.
    - Python scalars become bool / int32 / float32 arrays. With x64 off (the
      default, as in JAX) float64 / int64 / uint64 numpy data becomes float32
      / int32 / uint32 (a converted copy: ``may_alias`` cannot borrow it), so
      ``device_put(np.ones(4))`` holds 16 bytes; with
      ``bt.config.update("enable_x64", True)`` it stays 64-bit (32 bytes).
    - ``into=``: an Array (or a pytree of them matching ``x``) whose storage
      receives the values, after all work already enqueued on it; ``into`` is
      consumed and the result uses its storage, so ``bytes_in_use`` does not
      grow. Shape, dtype, device or memory kind mismatches raise ValueError
      with nothing consumed; live host views of ``into`` raise DonationError.

    ``device`` may be a sharding (``NamedSharding(mesh, P("i"))``), or a
    bare PartitionSpec on the current mesh (``with bt.set_mesh(mesh):``).

    Transfers are asynchronous; ``block_until_ready()`` waits.
    """
    if isinstance(device, PartitionSpec):  # on the current mesh (bt.set_mesh)
        device = sharding_of(device, "device_put")
    if not isinstance(device, Device) and device is not None:
        if not _sharded_put.is_sharding(device):
            return _put_per_leaf(x, device, memory_kind, may_alias, into)
    check_kind(memory_kind)
    if into is not None:
        return _device_put_into(x, device, memory_kind, into)
    paths, leaves, treedef = tree.paths_and_leaves(x)
    if isinstance(device, Device):
        _guard_device_to_device(leaves, device)
    if _sharded_put.is_sharding(device) or any(is_sharded(leaf) for leaf in leaves):
        return tree.unflatten(
            treedef,
            [
                _put_sharded_leaf(leaf, device, memory_kind, may_alias, path)
                for path, leaf in zip(paths, leaves)
            ],
        )
    return _transfer.put_leaves(paths, leaves, treedef, device, memory_kind, may_alias)


def _guard_device_to_device(leaves: list, device: Device) -> None:
    """Applies ``transfer_guard_device_to_device`` to the Arrays of
    ``leaves`` that live on another device than ``device`` (an explicit
    transfer, as ``jax.device_put`` is: only the ``*_explicit`` settings
    log or refuse it)."""
    for leaf in leaves:
        if isinstance(leaf, Array) and not leaf.is_deleted() and leaf.device != device:
            check_transfer(
                "device_to_device",
                True,
                f"{leaf.dtype}{list(leaf.shape)} from {leaf.device} to {device}",
            )


def _put_per_leaf(
    x: Any, device: Any, memory_kind: Any, may_alias: bool, into: Any
) -> Any:
    """``device`` a pytree of devices / shardings with ``x``'s structure."""

    def is_leaf(d: Any) -> bool:
        return isinstance(d, (Device, PartitionSpec)) or _sharded_put.is_sharding(d)

    targets, tdef = tree.flatten(device, is_leaf=is_leaf)
    leaves, xdef = tree.flatten(x)
    if tdef != xdef or not all(is_leaf(t) for t in targets):
        raise TypeError(
            "device must be a baton Device, a sharding, None, or a pytree of "
            f"devices / shardings with the structure of x ({xdef}); got "
            f"{type(device).__name__}"
        )
    intos = [None] * len(leaves) if into is None else tree.flatten(into)[0]
    if len(intos) != len(leaves):
        raise ValueError(
            "device_put(into=...): `into` has another structure than the value. "
            "Nothing was consumed."
        )
    out = [
        device_put(leaf, t, memory_kind=memory_kind, may_alias=may_alias, into=i)
        for leaf, t, i in zip(leaves, targets, intos)
    ]
    return tree.unflatten(xdef, out)


def _put_sharded_leaf(
    leaf: Any, device: Any, memory_kind: Any, may_alias: bool, path: tuple
) -> Any:
    if _sharded_put.is_sharding(device):
        if may_alias and isinstance(leaf, ShardedArray) and leaf.sharding == device:
            leaf._check_live()
            return leaf
        return _sharded_put.put_leaf(leaf, device, memory_kind, path)
    if is_sharded(leaf):
        if device is None:  # stays sharded
            if (
                may_alias
                and isinstance(leaf, ShardedArray)
                and memory_kind in (None, leaf.memory_kind)
            ):
                leaf._check_live()
                return leaf
            return _sharded_put.put_leaf(
                leaf,
                leaf.sharding.with_memory_kind(memory_kind or leaf.memory_kind),
                None,
                path,
            )
        return _sharded_put._gather(leaf, device, memory_kind)  # onto one device
    return device_put(leaf, device, memory_kind=memory_kind, may_alias=may_alias)


def _device_put_into(x: Any, device: Any, memory_kind: Any, into: Any) -> Any:
    paths, leaves, treedef, into_leaves = _transfer.flatten_into(x, into)
    if any(isinstance(d, ShardedArray) for d in into_leaves):
        if device is not None and not _sharded_put.is_sharding(device):
            raise ValueError(
                "device_put(into=...): `into` is sharded; pass no device (or its "
                "sharding). Nothing was consumed."
            )
        if len(leaves) != 1:
            raise ValueError(
                "device_put(into=...): sharded `into` takes one array per call. "
                "Nothing was consumed."
            )
        dst = into_leaves[0]
        if device is not None and device != dst.sharding:
            raise ValueError(
                f"device_put(into=...): `into` has sharding {dst.sharding}, not the "
                f"requested {device}. Nothing was consumed."
            )
        values = _sharded_put.plan_into(leaves[0], dst, paths[0])
        return tree.unflatten(treedef, [_sharded_put.run_into(values, dst)])
    return _transfer.put_into(paths, leaves, treedef, into_leaves, device, memory_kind)


def device_get(x: Any) -> Any:
    """numpy copies of every baton Array in pytree ``x`` (other leaves are
    returned as they are). The copies own their memory: nothing refers to
    the arrays afterwards."""
    leaves, treedef = tree.flatten(x)
    if any(isinstance(leaf, (ShardedArray, ShardedDonated)) for leaf in leaves):
        if any(isinstance(leaf, ShardedDonated) for leaf in leaves):
            raise TypeError(
                "device_get: a donate() marker has no values to get (the array "
                "was consumed)"
            )
        gathered = [
            np.asarray(leaf) if isinstance(leaf, ShardedArray) else leaf
            for leaf in leaves
        ]
        return device_get(tree.unflatten(treedef, gathered))
    arrays = []
    for leaf in leaves:
        if isinstance(leaf, Array):
            leaf._check_live()
            if leaf.device.platform != "cpu":
                check_transfer(
                    "device_to_host",
                    True,
                    f"{leaf.dtype}{list(leaf.shape)} (device_get)",
                )
            arrays.append(leaf)
        elif isinstance(leaf, Donated):
            raise TypeError(
                "device_get: a donate() marker has no values to get (the array "
                "was consumed)"
            )
    outs = [np.empty(a.shape, a.dtype) for a in arrays]
    _baton._copy_to_numpy(arrays, outs)
    it = iter(outs)
    return tree.unflatten(
        treedef, [next(it) if isinstance(leaf, Array) else leaf for leaf in leaves]
    )
