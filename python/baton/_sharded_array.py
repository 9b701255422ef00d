"""``bt.ShardedArray``: one logical array made of per-device shards (DESIGN 5.6).

A ShardedArray of global shape ``S`` with a :class:`~baton.sharding.NamedSharding`
holds, for each of this process's devices in the mesh, an ordinary
``bt.Array`` -- its shard: the block ``sharding.devices_indices_map(S)[device]``
of the logical array, on that device, in the sharding's memory kind. Devices
that hold the same block (mesh axes the spec does not name) each hold their
own copy. So ``memory_stats(device)`` counts exactly the shards on that
device, ``bt.live_arrays()`` lists each shard, and R1 holds per shard: a
shard's storage is released when the last reference to it (the ShardedArray,
an ``addressable_shards`` entry, a host view) is gone.

The storage is the C++ runtime's ``baton::ShardedArray``
(jit/sharded_array.h, bound as ``_baton.ShardedArray``), kept as ``_impl``:
the mesh as axis names and sizes, the layout as mesh axis indices per
dimension, a device per mesh position (None for another process's) and this
process's blocks in mesh order. ``_impl.blocks[k]`` and
``addressable_shards[k].data`` are the same ``bt.Array`` object; this class
adds the API (the NamedSharding, :class:`Shard` objects with their indices,
host values, deletion and donation). jit of sharded arguments hands the
``_impl`` objects to the partitioned program (``SpmdExecutable.run``) and
wraps the ones it returns.

Made by ``bt.device_put(x, sharding)``, ``bt.device_put_replicated``,
``bt.device_put_sharded``, ``bt.shard_map`` and jit of sharded arguments.

- ``delete()`` deletes every shard; ``bt.donate(x)`` donates every shard (a
  marker per shard, all or nothing); ``device_put(v, into=x)`` overwrites
  every shard in place.
- ``np.asarray(x)`` / ``bt.device_get(x)`` assemble the whole array on the host
  (a fresh numpy array; nothing is cached).
- Operators and jitted functions of sharded arrays are partitioned over the
  mesh and run on every device at once (baton/_partitioned_call.py): an
  elementwise operation on each device's blocks, a sum or a dot with the
  collectives it needs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from baton import _baton, _device_queries
from baton._baton import Array, Donated


class Shard:
    """One device's block of a sharded array: ``device``, ``index`` (a tuple
    of slices into the global array), ``replica_id`` (0 for the first device
    holding this block) and ``data`` (the ``bt.Array`` on ``device``)."""

    __slots__ = ("data", "device", "index", "replica_id")

    def __init__(self, device: Any, index: tuple, replica_id: int, data: Any) -> None:
        self.device = device
        self.index = index
        self.replica_id = replica_id
        self.data = data

    def __repr__(self) -> str:
        return (
            f"Shard(device={self.device!r}, index={self.index}, "
            f"replica_id={self.replica_id}, data={self.data!r})"
        )


def _index_key(index: tuple) -> tuple:
    return tuple((s.start, s.stop) for s in index)


def placement(sharding: Any, shape: tuple[int, ...]) -> list[tuple[Any, tuple, int]]:
    """``(device, index, replica_id)`` for each of this process's devices of
    ``sharding`` holding a block of an array of ``shape``, in mesh order."""
    seen: dict[tuple, int] = {}
    out = []
    for device, index in sharding.devices_indices_map(tuple(shape)).items():
        key = _index_key(index)
        replica = seen.get(key, 0)
        seen[key] = replica + 1
        if getattr(device, "process_index", 0) == _process_index():
            out.append((device, index, replica))
    return out


def _process_index() -> int:
    return _device_queries.process_index()


def spec_dims(spec: Any, ndim: int, mesh: Any) -> list:
    """A PartitionSpec as, per dimension, the mesh axis indices splitting it
    (major first): how C++ takes a layout."""
    names = list(mesh.axis_names)
    return [[names.index(a) for a in spec.axes_of(d)] for d in range(ndim)]


def mesh_devices(mesh: Any) -> list:
    """The mesh's devices in row-major order as C++ takes them: this
    process's Devices, None for other processes'."""
    return [d if isinstance(d, _baton.Device) else None for d in mesh.devices.flat]


def blocks_impl(shape: tuple, dtype: Any, mesh: Any, dims: list, blocks: list) -> Any:
    """The ``_baton.ShardedArray`` of ``blocks`` (this process's, in mesh
    order) laid out over ``mesh`` as ``dims`` (per dimension the mesh axis
    indices); the blocks are shared, not copied."""
    return _baton.ShardedArray.from_blocks(
        tuple(shape), np.dtype(dtype).name, list(mesh.axis_names),
        list(mesh.axis_sizes), dims, mesh_devices(mesh), list(blocks),
    )


class ShardedArray:
    """An array split over several devices; see the module docstring.

    Attributes as ``bt.Array``'s: ``shape``, ``dtype``, ``ndim``, ``size``,
    ``nbytes`` (of the logical array), ``sharding``, ``memory_kind``;
    ``addressable_shards`` (this process's :class:`Shard` list),
    ``is_fully_replicated``, ``is_fully_addressable``, ``devices()``.
    """

    __slots__ = ("__weakref__", "_dtype", "_impl", "_shape", "_sharding", "_shards")
    __array_priority__ = 200  # numpy defers to our reflected operators

    def __init__(
        self,
        shape: tuple[int, ...],
        dtype: Any,
        sharding: Any,
        shards: list[Shard],
        impl: Any = None,
    ) -> None:
        """``shards``: this process's, in mesh order. ``impl``: their
        ``_baton.ShardedArray`` when the caller has it (the same blocks, on
        ``sharding``'s mesh devices and layout), else made here from the
        shards; ValueError when they do not fit the sharding."""
        self._shape = tuple(int(s) for s in shape)
        self._dtype = np.dtype(dtype)
        self._sharding = sharding
        self._shards = list(shards)
        if impl is None:
            mesh = sharding.mesh
            impl = blocks_impl(
                self._shape, self._dtype, mesh,
                spec_dims(sharding.spec, len(self._shape), mesh),
                [s.data for s in self._shards],
            )
        self._impl = impl

    @classmethod
    def from_shards(
        cls, shape: tuple[int, ...], sharding: Any, datas: list, dtype: Any = None
    ) -> ShardedArray:
        """Wraps per-device arrays (one per entry of :func:`placement`, in
        that order) as a ShardedArray of global ``shape``; ``dtype`` (None:
        the arrays') says it where this process holds no shard."""
        return cls.from_placement(
            shape, sharding, placement(sharding, shape), datas, dtype
        )

    @classmethod
    def from_placement(
        cls, shape: tuple[int, ...], sharding: Any, where: list, datas: list,
        dtype: Any = None,
    ) -> ShardedArray:
        """:meth:`from_shards` with ``where`` = ``placement(sharding,
        shape)`` made by the caller (once for many arrays alike)."""
        if len(where) != len(datas):
            raise ValueError(
                f"ShardedArray: {len(datas)} shard(s) for a sharding with "
                f"{len(where)} device(s) in this process"
            )
        shards = [Shard(d, i, r, a) for (d, i, r), a in zip(where, datas)]
        if dtype is None:
            dtype = datas[0].dtype if datas else np.float32
        return cls(shape, dtype, sharding, shards)

    @classmethod
    def from_impl(cls, impl: Any, sharding: Any, where: list) -> ShardedArray:
        """Wraps a ``_baton.ShardedArray`` (one ``SpmdExecutable.run``
        returned) laid out as ``sharding`` says, ``where`` =
        ``placement(sharding, impl.shape)``; its blocks become the shards."""
        blocks = impl.blocks
        if len(where) != len(blocks):
            raise ValueError(
                f"ShardedArray: {len(blocks)} block(s) for a sharding with "
                f"{len(where)} device(s) in this process"
            )
        shards = [Shard(d, i, r, a) for (d, i, r), a in zip(where, blocks)]
        return cls(impl.shape, impl.dtype, sharding, shards, impl)

    # ---- metadata ----

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return int(np.prod(self._shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        """Bytes of the logical array (each device holds its shards' bytes)."""
        return self.size * self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def sharding(self) -> Any:
        return self._sharding

    @property
    def memory_kind(self) -> str:
        return self._shards[0].data.memory_kind if self._shards else "device"

    @property
    def weak_type(self) -> bool:
        return False

    @property
    def addressable_shards(self) -> list[Shard]:
        """This process's shards, in mesh order (a new list each time)."""
        return list(self._shards)

    @property
    def global_shards(self) -> list[Shard]:
        """Every shard; only this process's when all are addressable."""
        if not self.is_fully_addressable:
            raise ValueError(
                "global_shards: this array has shards in other processes; use "
                "addressable_shards"
            )
        return list(self._shards)

    @property
    def is_fully_replicated(self) -> bool:
        return self._sharding.is_fully_replicated

    @property
    def is_fully_addressable(self) -> bool:
        return self._sharding.is_fully_addressable

    def devices(self) -> set:
        return set(self._sharding.device_set)

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d array")
        return self._shape[0]

    # ---- lifetime ----

    def delete(self) -> None:
        """Deletes every shard now (each freed once its enqueued work is
        done). Idempotent."""
        for s in self._shards:
            s.data.delete()

    def is_deleted(self) -> bool:
        return any(s.data.is_deleted() for s in self._shards)

    def _check_live(self) -> None:
        for s in self._shards:
            s.data._check_live()

    def is_ready(self) -> bool:
        return all(s.data.is_ready() for s in self._shards)

    def block_until_ready(self) -> ShardedArray:
        for s in self._shards:
            s.data.block_until_ready()
        return self

    def copy(self) -> ShardedArray:
        """An independent copy, shard by shard (each on its own device)."""
        return self._map(lambda a: a.copy())

    def _map(self, fn: Any) -> ShardedArray:
        return ShardedArray(
            self._shape,
            self._dtype,
            self._sharding,
            [Shard(s.device, s.index, s.replica_id, fn(s.data)) for s in self._shards],
        )

    # ---- host values ----

    def _unique_shards(self) -> Iterator[Shard]:
        """One local shard per distinct block (the first: in another process
        the replica with id 0 may not be local)."""
        seen: set = set()
        for s in self._shards:
            key = _index_key(s.index)
            if key not in seen:
                seen.add(key)
                yield s

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The whole array on the host: a fresh numpy array (nothing is kept).
        Needs this process to hold every block (always, in one process)."""
        if not self._covers_all():
            raise ValueError(
                "np.asarray: parts of this array are only in other processes; read "
                "addressable_shards, or all-gather it inside bt.shard_map first"
            )
        self._check_live()
        out = np.empty(self._shape, self._dtype)
        unique = list(self._unique_shards())
        parts = [np.empty(s.data.shape, self._dtype) for s in unique]
        _baton._copy_to_numpy([s.data for s in unique], parts)
        for s, part in zip(unique, parts):
            out[s.index] = part
        return out if dtype is None else out.astype(dtype, copy=False)

    def _covers_all(self) -> bool:
        if self.is_fully_addressable:
            return True
        have = {_index_key(s.index) for s in self._shards}
        wanted = self._sharding.devices_indices_map(self._shape).values()
        return all(_index_key(i) in have for i in wanted)

    def __repr__(self) -> str:
        if self.is_deleted():
            return (
                f"ShardedArray(<deleted>, shape={self._shape}, "
                f"dtype={self._dtype.name})"
            )
        try:
            body = np.array2string(
                np.asarray(self), separator=", ", prefix="ShardedArray("
            )
        except Exception as e:  # not addressable, or a failed producer
            body = f"<unavailable: {type(e).__name__}: {e}>"
        return (
            f"ShardedArray({body}, dtype={self._dtype.name}, "
            f"sharding={self._sharding!r})"
        )

    def _scalar(self) -> Any:
        if self.size != 1:
            raise TypeError(
                "only one-element arrays can be converted to Python scalars; this "
                f"array has shape {self._shape}"
            )
        return np.asarray(self).reshape(()).item()

    def item(self) -> Any:
        return self._scalar()

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __bool__(self) -> bool:
        return bool(self._scalar())

    def tolist(self) -> Any:
        return np.asarray(self).tolist()

    def __hash__(self) -> int:
        raise TypeError("unhashable type: 'ShardedArray'")

    def __reduce__(self) -> Any:
        raise TypeError(
            "a ShardedArray cannot be pickled; pickle np.asarray(x) or each of "
            "x.addressable_shards"
        )


class ShardedDonated:
    """What ``bt.donate(x)`` returns for a ShardedArray: a ``Donated`` marker
    per shard, for the next jitted call or ``device_put`` that takes it
    (each device's call reuses its shard's storage)."""

    __slots__ = ("_dtype", "_shape", "_sharding", "_shards")

    def __init__(self, array: ShardedArray, markers: list[Donated]) -> None:
        self._shape = array.shape
        self._dtype = array.dtype
        self._sharding = array.sharding
        self._shards = [
            Shard(s.device, s.index, s.replica_id, m)
            for s, m in zip(array._shards, markers)
        ]

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    sharding = property(lambda self: self._sharding)
    ndim = property(lambda self: len(self._shape))

    @property
    def used(self) -> bool:
        return any(s.data.used for s in self._shards)

    def _restore(self) -> None:
        for s in self._shards:
            s.data._restore()

    def __repr__(self) -> str:
        return f"ShardedDonated(shape={self._shape}, dtype={self._dtype.name})"


def donate(x: ShardedArray) -> ShardedDonated:
    """Donates every shard of ``x`` (all or nothing)."""
    markers: list[Donated] = []
    try:
        for s in x._shards:
            markers.append(_baton._donate(s.data))
    except BaseException:
        for m in reversed(markers):
            m._restore()
        raise
    return ShardedDonated(x, markers)


def is_sharded(x: Any) -> bool:
    return isinstance(x, (ShardedArray, ShardedDonated))


_ = Array
