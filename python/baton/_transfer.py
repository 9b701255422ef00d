"""``bt.device_put``, ``bt.device_get``, ``bt.block_until_ready`` (DESIGN R2, R6).

``device_put`` takes a pytree whose leaves are numpy arrays, Python or numpy
scalars, other array-likes (anything ``np.asarray`` accepts), baton Arrays
and ``bt.donate`` markers. Every leaf is validated before anything is
created or consumed, so an error changes nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _baton, _dtypes, tree
from baton._baton import Array, Device, Donated

_KINDS = ("device", "pinned_host", "unpinned_host")


def _check_device(device: Any) -> None:
    if device is not None and not isinstance(device, Device):
        from baton import _sharded_put

        if _sharded_put.is_sharding(device):
            return
        raise TypeError(
            "device must be a baton Device (from bt.devices()), a sharding "
            f"(bt.sharding.NamedSharding ...) or None, not {type(device).__name__}"
        )


def _check_kind(memory_kind: Any) -> None:
    if memory_kind is not None and memory_kind not in _KINDS:
        raise ValueError(
            f"unknown memory kind {memory_kind!r}; a device has {', '.join(_KINDS)}"
        )


class _Host:
    """A leaf on its way from host memory: a C-contiguous numpy array."""

    __slots__ = ("array", "dtype_name", "fresh", "weak")

    def __init__(self, array: np.ndarray, weak: bool, fresh: bool) -> None:
        self.array = array
        self.dtype_name = _dtypes.name_of(array.dtype)
        self.weak = weak  # from a Python scalar: takes `into`'s dtype
        self.fresh = fresh  # a private copy made here (nothing to alias)


def _prepare(leaf: Any, path: tuple[Any, ...]) -> Any:
    """Validates one leaf of x; returns an Array, a Donated or a _Host."""
    where = f" (leaf x{tree.keystr(path)})" if path else ""
    if isinstance(leaf, Array):
        leaf._check_live()
        return leaf
    if isinstance(leaf, Donated):
        if leaf.used:
            raise ValueError(
                f"device_put: this donate() marker was already used{where}; a "
                "donated array can be passed to one call only"
            )
        return leaf
    if _dtypes.is_python_scalar(leaf):
        return _Host(_dtypes.python_scalar_to_numpy(leaf), weak=True, fresh=True)
    if isinstance(leaf, (np.ndarray, np.generic)):
        a = np.asarray(leaf)
    elif isinstance(leaf, (str, bytes)) or not (
        hasattr(leaf, "__array__")
        or hasattr(leaf, "__array_interface__")
        or hasattr(leaf, "__dlpack__")
    ):
        raise TypeError(
            f"device_put: cannot put a {type(leaf).__name__} on a device{where}; "
            "leaves must be numpy arrays, scalars or baton Arrays"
        )
    else:
        a = np.asarray(leaf)
    narrow = _dtypes.NARROW.get(a.dtype)
    if narrow is not None:  # 64-bit data with x64 off: a 32-bit copy, as JAX
        return _Host(a.astype(narrow), weak=False, fresh=True)
    _dtypes.name_of(a.dtype)  # TypeError for object/complex/... dtypes
    if not a.flags.c_contiguous:
        return _Host(np.ascontiguousarray(a), weak=False, fresh=True)
    return _Host(a, weak=False, fresh=not isinstance(leaf, np.ndarray))


def _put(leaf: Any, device: Any, memory_kind: str | None, may_alias: bool) -> Array:
    if isinstance(leaf, Array):
        dev = leaf.device if device is None else device
        kind = leaf.memory_kind if memory_kind is None else memory_kind
        if may_alias and dev == leaf.device and kind == leaf.memory_kind:
            return leaf
        return _baton._copy_array(leaf, dev, kind)
    if isinstance(leaf, Donated):
        return leaf._put(device, memory_kind)
    kind = "device" if memory_kind is None else memory_kind
    return _baton._put_numpy(
        leaf.array, leaf.dtype_name, device, kind, may_alias and not leaf.fresh
    )


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

    Transfers are asynchronous; ``block_until_ready()`` waits.
    """
    from baton import _sharded_put
    from baton._sharded_array import is_sharded

    if not isinstance(device, Device) and device is not None:
        if not _sharded_put.is_sharding(device):
            return _put_per_leaf(x, device, memory_kind, may_alias, into)
    _check_kind(memory_kind)
    if into is not None:
        return _device_put_into(x, device, memory_kind, into)
    paths, leaves, treedef = tree.paths_and_leaves(x)
    if _sharded_put.is_sharding(device) or any(is_sharded(leaf) for leaf in leaves):
        return tree.unflatten(
            treedef,
            [
                _put_sharded_leaf(leaf, device, memory_kind, may_alias, path)
                for path, leaf in zip(paths, leaves)
            ],
        )
    prepared = [_prepare(leaf, p) for p, leaf in zip(paths, leaves)]
    out = [_put(p, device, memory_kind, may_alias) for p in prepared]
    return tree.unflatten(treedef, out)


def _put_per_leaf(
    x: Any, device: Any, memory_kind: Any, may_alias: bool, into: Any
) -> Any:
    """``device`` a pytree of devices / shardings with ``x``'s structure."""
    from baton import _sharded_put

    is_leaf = lambda d: isinstance(d, Device) or _sharded_put.is_sharding(d)  # noqa: E731
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
    from baton import _sharded_put
    from baton._sharded_array import ShardedArray, is_sharded

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
    paths, leaves, treedef = tree.paths_and_leaves(x)
    into_leaves, into_def = tree.flatten(into)
    if into_def != treedef:
        raise ValueError(
            f"device_put(into=...): `into` has structure {into_def} but the value "
            f"has structure {treedef}. Nothing was consumed."
        )
    from baton import _sharded_put
    from baton._sharded_array import ShardedArray

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
    prepared = [_prepare(leaf, p) for p, leaf in zip(paths, leaves)]
    seen: set[int] = set()
    plan = []
    for path, src, dst in zip(paths, prepared, into_leaves):
        where = f" at x{tree.keystr(path)}" if path else ""
        if not isinstance(dst, Array):
            raise TypeError(
                f"device_put(into=...): `into`{where} is a {type(dst).__name__}, "
                "not a baton Array. Nothing was consumed."
            )
        dst._check_live()
        if dst._id in seen:
            raise ValueError(
                f"device_put(into=...): the same array appears twice in `into`{where}. "
                "Nothing was consumed."
            )
        seen.add(dst._id)
        if device is not None and device != dst.device:
            raise ValueError(
                f"device_put(into=...): `into`{where} is on {dst.device}, not on the "
                f"requested {device}. Nothing was consumed."
            )
        if memory_kind is not None and memory_kind != dst.memory_kind:
            raise ValueError(
                f"device_put(into=...): `into`{where} is in {dst.memory_kind} "
                f"memory, not the requested {memory_kind}. Nothing was consumed."
            )
        if isinstance(src, _Host) and src.weak and src.array.dtype != dst.dtype:
            # Python scalars are weakly typed: they take `into`'s dtype.
            src = _Host(src.array.astype(dst.dtype), weak=True, fresh=True)
        shape = src.array.shape if isinstance(src, _Host) else src.shape
        dtype = src.array.dtype if isinstance(src, _Host) else src.dtype
        if tuple(shape) != dst.shape or dtype != dst.dtype:
            raise ValueError(
                f"device_put(into=...): the new value{where} is "
                f"{np.dtype(dtype).name}{tuple(shape)} but `into` is "
                f"{dst.dtype.name}{dst.shape}; an in-place overwrite needs the same "
                "shape and dtype. Nothing was consumed."
            )
        if dst._is_borrowed:
            raise ValueError(
                f"device_put(into=...): `into`{where} borrows memory it does not "
                "own (may_alias=True or from_dlpack); overwriting it would write "
                "into the lender's data. Nothing was consumed."
            )
        plan.append((src, dst))
    into_at = {dst._id: i for i, (_, dst) in enumerate(plan)}
    for i, (src, _) in enumerate(plan):
        j = into_at.get(src._id, i) if isinstance(src, Array) else i
        if j != i:
            raise ValueError(
                f"device_put(into=...): the value at x{tree.keystr(paths[i])} is "
                f"also overwritten as `into` at x{tree.keystr(paths[j])}; pass a "
                "copy of it (x.copy()). Nothing was consumed."
            )
    if len(plan) > 1:
        # One leaf's refusal must not leave the others consumed.
        for path, (_, dst) in zip(paths, plan):
            n = dst._external_references
            if n:
                raise _baton.DonationError(
                    f"device_put(into=...): `into` at x{tree.keystr(path)} "
                    f"({dst._describe()}) has {n} live host view(s) or DLPack "
                    "export(s); delete them (or let them go out of scope) first. "
                    "Nothing was consumed."
                )
    out = []
    for src, dst in plan:
        if isinstance(src, Array):
            out.append(_baton._copy_array_into(src, dst))
        elif isinstance(src, Donated):
            out.append(src._put_into(dst))
        else:
            out.append(_baton._put_numpy_into(src.array, src.dtype_name, dst))
    return tree.unflatten(treedef, out)


def device_get(x: Any) -> Any:
    """numpy copies of every baton Array in pytree ``x`` (other leaves are
    returned as they are). The copies own their memory: nothing refers to
    the arrays afterwards."""
    from baton._sharded_array import ShardedArray, ShardedDonated

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


def block_until_ready(x: Any) -> Any:
    """Waits for every baton Array in pytree ``x``; returns ``x``."""
    # Fast paths (a pytree flatten costs more than waiting for a ready array):
    # one array, or a flat list/tuple of arrays.
    if type(x) is Array:
        x.block_until_ready()
        return x
    if type(x) in (list, tuple) and all(type(a) is Array for a in x):
        for a in x:
            a.block_until_ready()
        return x
    for leaf in tree.leaves(x):
        if isinstance(leaf, Array) or hasattr(leaf, "addressable_shards"):
            leaf.block_until_ready()
    return x
