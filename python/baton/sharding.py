"""``bt.sharding``: where an array's data lives (DESIGN 5.6).

- :class:`SingleDeviceSharding` -- all of an array on one device (every
  ``bt.Array`` has one).
- :class:`Mesh` -- devices laid out on named axes, ``Mesh(devices,
  ("data", "model"))``; :func:`make_mesh` builds one from ``bt.devices()``.
- :class:`PartitionSpec` (``P``) -- for each array dimension, the mesh axis
  (or axes) it is split over, or None for "not split".
- :class:`NamedSharding` -- a mesh and a spec: each device holds the block of
  the array at its mesh position; mesh axes the spec does not name replicate.

Example::

    mesh = bt.make_mesh((4,), ("x",))                 # 4 CPU devices
    s = bt.sharding.NamedSharding(mesh, P("x"))
    y = bt.device_put(np.arange(8.0, dtype=np.float32), s)
    [sh.data.shape for sh in y.addressable_shards]   # [(2,), (2,), (2,), (2,)]

A dimension split over axes of total size n must be divisible by n (baton
does not pad shards). Shardings are immutable and hashable; equal when they
place every element on the same devices in the same memory kind.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from baton import _device_queries
from baton._memory_kinds import check_kind as _check_kind

__all__ = [
    "AxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "SingleDeviceSharding",
    "get_mesh",
    "make_mesh",
    "set_mesh",
]


class PartitionSpec(tuple):
    """How each dimension of an array is split over mesh axes: one entry per
    leading dimension, each None (not split), an axis name, or a tuple of
    axis names (split over their product, major to minor). Trailing
    dimensions without an entry are not split. ``P()`` is fully replicated.

    A tuple subclass, but a *leaf* of baton's pytrees (``bt.tree``), as in
    JAX."""

    def __new__(cls, *parts: Any) -> PartitionSpec:
        norm = []
        for i, p in enumerate(parts):
            if p is None or isinstance(p, str):
                norm.append(p)
            elif isinstance(p, (tuple, list)) and all(isinstance(a, str) for a in p):
                norm.append(tuple(p) if len(p) != 1 else p[0])
            else:
                raise TypeError(
                    f"PartitionSpec: entry {i} is {p!r}; each entry must be None, "
                    "a mesh axis name or a tuple of axis names"
                )
        return super().__new__(cls, norm)

    def axes_of(self, dim: int) -> tuple[str, ...]:
        """The mesh axes dimension ``dim`` is split over (``()`` if none)."""
        if dim >= len(self) or self[dim] is None:
            return ()
        p = self[dim]
        return (p,) if isinstance(p, str) else tuple(p)

    def __repr__(self) -> str:
        return "PartitionSpec(" + ", ".join(repr(p) for p in self) + ")"

    def __reduce__(self) -> Any:
        return (PartitionSpec, tuple(self))


P = PartitionSpec


class AxisType(enum.Enum):
    """How a mesh axis is treated (JAX's ``jax.sharding.AxisType``):

    - ``Auto``: the compiler may place values over it as it likes (baton's
      default, see ``make_mesh``);
    - ``Explicit``: an array's sharding over it is part of its type
      (``bt.typeof(x).sharding``): ``bt.shard_map`` takes its in_specs from
      the arguments, and refuses in_specs that do not match them;
    - ``Manual``: inside a ``shard_map`` body (no mesh is built so).

    Example: ``bt.make_mesh((4,), ("i",), axis_types=(AxisType.Explicit,))``.
    """

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name

    def __str__(self) -> str:
        return f"AxisType.{self.name}"


class Mesh:
    """Devices on named axes: ``Mesh(devices, axis_names)`` where ``devices``
    is an array-like of baton Devices whose rank is ``len(axis_names)``
    (each device at most once). ``mesh.shape`` maps each axis name to its
    size; ``mesh.devices`` is the numpy object array; ``mesh.size`` the
    number of devices. Usable as a context manager (``with mesh:``), which
    makes it the default mesh of :func:`bt.shard_map`."""

    __slots__ = ("_axis_names", "_axis_types", "_devices", "_hash", "_shape")

    def __init__(
        self,
        devices: Any,
        axis_names: Iterable[str] | str,
        axis_types: Any = None,
    ) -> None:
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"Mesh: axis names must be strings, not {n!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh: axis names {names} repeat a name")
        arr = np.empty(np.shape(np.asarray(devices, dtype=object)), dtype=object)
        arr[...] = np.asarray(devices, dtype=object)
        if arr.ndim != len(names):
            raise ValueError(
                f"Mesh: devices has {arr.ndim} dimension(s) {arr.shape} but "
                f"{len(names)} axis name(s) {names} were given; give one name per "
                "dimension"
            )
        flat = list(arr.flat)
        if not flat:
            raise ValueError("Mesh: no devices")
        ids = [(_process_of(d), d.id) for d in flat]
        if len(set(ids)) != len(ids):
            raise ValueError("Mesh: a device appears more than once")
        arr.flags.writeable = False
        self._axis_types = _axis_types(axis_types, len(names))
        self._devices = arr
        self._axis_names = names
        self._shape = dict(zip(names, arr.shape))
        # Hashed once: a mesh is a key of every partitioned call's cache.
        self._hash = hash((names, self._axis_types, arr.shape, tuple(ids)))

    @property
    def devices(self) -> np.ndarray:
        return self._devices

    @property
    def axis_names(self) -> tuple[str, ...]:
        return self._axis_names

    @property
    def axis_types(self) -> tuple[AxisType, ...]:
        """Each axis's :class:`AxisType` (default ``Auto``)."""
        return self._axis_types

    @property
    def explicit_axes(self) -> tuple[str, ...]:
        return self._axes_of_type(AxisType.Explicit)

    @property
    def auto_axes(self) -> tuple[str, ...]:
        return self._axes_of_type(AxisType.Auto)

    @property
    def manual_axes(self) -> tuple[str, ...]:
        return self._axes_of_type(AxisType.Manual)

    def _axes_of_type(self, t: AxisType) -> tuple[str, ...]:
        return tuple(n for n, a in zip(self._axis_names, self._axis_types) if a is t)

    @property
    def empty(self) -> bool:
        return False

    @property
    def shape(self) -> dict[str, int]:
        """``{axis name: size}``, in axis order."""
        return dict(self._shape)

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return tuple(self._devices.shape)

    @property
    def size(self) -> int:
        return int(self._devices.size)

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self._devices)

    @property
    def local_devices(self) -> list:
        """The mesh's devices that belong to this process, in mesh order."""
        return [d for d in self._devices.flat if _is_local(d)]

    def device_positions(self) -> list[tuple[Any, dict[str, int]]]:
        """``(device, {axis name: index})`` for every device, in mesh order."""
        out = []
        for pos in np.ndindex(*self._devices.shape):
            out.append((self._devices[pos], dict(zip(self._axis_names, pos))))
        return out

    def __enter__(self) -> Mesh:
        _MESH_STACK.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _MESH_STACK.pop()

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (
            isinstance(other, Mesh)
            and self._hash == other._hash
            and self._axis_names == other._axis_names
            and self._axis_types == other._axis_types
            and self._devices.shape == other._devices.shape
            and all(
                a is b or a == b
                for a, b in zip(self._devices.flat, other._devices.flat)
            )
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        axes = ", ".join(f"'{n}': {s}" for n, s in self._shape.items())
        types = ""
        if any(t is not AxisType.Auto for t in self._axis_types):
            types = f", axis_types={self._axis_types}"
        return f"Mesh(axis_sizes={{{axes}}}, devices={self.device_ids.tolist()}{types})"


def _axis_types(axis_types: Any, n: int) -> tuple[AxisType, ...]:
    if axis_types is None:
        return (AxisType.Auto,) * n
    if isinstance(axis_types, AxisType):
        axis_types = (axis_types,) * n
    types = tuple(axis_types)
    if len(types) != n or not all(isinstance(t, AxisType) for t in types):
        raise ValueError(
            f"Mesh: axis_types must be {n} bt.sharding.AxisType value(s), one per "
            f"axis; got {axis_types!r}"
        )
    if AxisType.Manual in types:
        raise NotImplementedError(
            "Mesh: AxisType.Manual axes are the ones inside a shard_map body; baton "
            "builds no mesh with them (use Auto or Explicit)"
        )
    return types


_MESH_STACK: list[Mesh] = []


def current_mesh() -> Mesh | None:
    """The innermost ``with mesh:`` / ``bt.set_mesh`` mesh, or None."""
    return _MESH_STACK[-1] if _MESH_STACK else None


def get_mesh() -> Mesh | None:
    """The current mesh (set by ``bt.set_mesh(mesh)`` or ``with mesh:``), or
    None where there is none -- JAX returns an empty mesh there.

    Example::

        with bt.set_mesh(bt.make_mesh((4,), ("i",))):
            bt.sharding.get_mesh().axis_names   # ("i",)
    """
    return current_mesh()


class set_mesh:
    """Makes ``mesh`` the current mesh: for good (``bt.set_mesh(mesh)``) or
    for a ``with bt.set_mesh(mesh):`` block (the previous one comes back
    at its end). The current mesh is what ``bt.shard_map`` without
    ``mesh=``, ``bt.device_put(x, P(...))``, ``bt.reshard`` and
    ``bt.lax.with_sharding_constraint`` with a bare PartitionSpec use.

    Example::

        with bt.set_mesh(bt.make_mesh((4,), ("i",))):
            y = bt.device_put(np.arange(8.0), P("i"))   # split over the 4
    """

    def __init__(self, mesh: Mesh) -> None:
        if not isinstance(mesh, Mesh):
            raise TypeError(
                f"set_mesh: expected a bt.sharding.Mesh, not {type(mesh).__name__}"
            )
        self._mesh = mesh
        self._depth = len(_MESH_STACK)
        _MESH_STACK.append(mesh)

    def __enter__(self) -> Mesh:
        return self._mesh

    def __exit__(self, *exc: Any) -> None:
        del _MESH_STACK[self._depth :]


def sharding_of(s: Any, what: str) -> Any:
    """A sharding: ``s`` itself, or a bare PartitionSpec on the current mesh."""
    if isinstance(s, PartitionSpec):
        mesh = current_mesh()
        if mesh is None:
            raise ValueError(
                f"{what}: a bare PartitionSpec needs a current mesh; set one with "
                "`with bt.set_mesh(mesh):` (or bt.set_mesh(mesh)), or pass "
                "NamedSharding(mesh, spec)"
            )
        return NamedSharding(mesh, s)
    return s


def _group_index(mesh: Mesh, position: Any, names: Iterable[str]) -> int:
    """The index of the device at ``position`` (axis name -> coordinate) in
    its group along axes ``names``, the first name major: the order JAX's
    collectives number a group's members in."""
    me = 0
    for n in names:
        me = me * mesh.shape[n] + position[n]
    return me


def _process_of(device: Any) -> int:
    return int(getattr(device, "process_index", 0))


def _is_local(device: Any) -> bool:
    return _process_of(device) == _device_queries.process_index()


def make_mesh(
    axis_shapes: Iterable[int],
    axis_names: Iterable[str] | str,
    axis_types: Any = None,
    *,
    devices: Any = None,
) -> Mesh:
    """A :class:`Mesh` of shape ``axis_shapes`` over ``devices`` (default: the
    first ``prod(axis_shapes)`` of ``bt.devices()``), filled in order, with
    ``axis_types`` (a tuple of :class:`AxisType`, one per axis). Their
    default is ``Auto`` -- JAX 0.10.2's ``make_mesh`` defaults to
    ``Explicit``; see docs/sharding.md for why baton differs.

    Example: ``bt.make_mesh((2, 2), ("data", "model"))`` on 4 devices."""
    shape = tuple(int(s) for s in axis_shapes)
    if any(s < 1 for s in shape):
        raise ValueError(f"make_mesh: axis sizes must be positive, got {shape}")
    n = math.prod(shape)
    if devices is None:
        all_devices = _device_queries.devices()
        if n > len(all_devices):
            raise ValueError(
                f"make_mesh: a mesh of shape {shape} needs {n} devices but baton has "
                f"{len(all_devices)}; set BATON_NUM_CPU_DEVICES={n} (before import) "
                "for more CPU devices"
            )
        devices = all_devices[:n]
    devices = list(devices)
    if len(devices) != n:
        raise ValueError(
            f"make_mesh: a mesh of shape {shape} needs {n} devices, {len(devices)} "
            "were given"
        )
    return Mesh(np.array(devices, dtype=object).reshape(shape), axis_names, axis_types)


class _Sharding:
    """What every sharding answers (JAX's ``jax.sharding.Sharding``)."""

    __slots__ = ()

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> dict:
        """``{device: index}``: the block of an array of ``global_shape`` each
        device holds, as a tuple of slices (one per dimension)."""
        return dict(self._placement(tuple(global_shape)))

    def addressable_devices_indices_map(self, global_shape: tuple[int, ...]) -> dict:
        """:meth:`devices_indices_map` for this process's devices only."""
        return {d: i for d, i in self._placement(tuple(global_shape)) if _is_local(d)}

    @property
    def addressable_devices(self) -> set:
        return {d for d in self.device_set if _is_local(d)}

    @property
    def is_fully_addressable(self) -> bool:
        return all(_is_local(d) for d in self.device_set)

    @property
    def num_devices(self) -> int:
        return len(self.device_set)

    def _placement(self, global_shape: tuple[int, ...]) -> list[tuple[Any, tuple]]:
        raise NotImplementedError


class SingleDeviceSharding(_Sharding):
    """All of an array on one ``device`` in memory ``memory_kind``
    (``None``: the device's default kind). Immutable; equal when device and
    memory kind are."""

    __slots__ = ("_device", "_memory_kind")

    def __init__(self, device: Any, *, memory_kind: str | None = None) -> None:
        self._device = device
        self._memory_kind = memory_kind

    @property
    def device(self) -> Any:
        return self._device

    @property
    def device_set(self) -> set:
        """``{device}``."""
        return {self._device}

    @property
    def memory_kind(self) -> str | None:
        """The memory kind (``"device"``, ``"pinned_host"`` ...) or None."""
        return self._memory_kind

    @property
    def num_devices(self) -> int:
        return 1

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of the one shard: the whole array's."""
        return tuple(global_shape)

    def with_memory_kind(self, kind: str) -> SingleDeviceSharding:
        """The same device, another memory kind."""
        return SingleDeviceSharding(self._device, memory_kind=kind)

    def _placement(self, global_shape: tuple[int, ...]) -> list[tuple[Any, tuple]]:
        return [(self._device, tuple(slice(None) for _ in global_shape))]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SingleDeviceSharding)
            and self._device == other._device
            and self._memory_kind == other._memory_kind
        )

    def __hash__(self) -> int:
        return hash((self._device, self._memory_kind))

    def __repr__(self) -> str:
        return (
            f"SingleDeviceSharding(device={self._device!r}, "
            f"memory_kind={self._memory_kind})"
        )


class NamedSharding(_Sharding):
    """An array split over ``mesh`` as ``spec`` says, in memory
    ``memory_kind`` (None: ``"device"``). Each device holds the block at its
    mesh position along the axes the spec names; along the other mesh axes
    the blocks are replicated (each device its own copy).

    Example: on a ``(2, 2)`` mesh ``("data", "model")``, ``P("data")`` splits
    dimension 0 in two and replicates each half on the two ``model``
    devices."""

    __slots__ = ("_memory_kind", "_mesh", "_spec")

    def __init__(
        self, mesh: Mesh, spec: PartitionSpec, *, memory_kind: str | None = None
    ) -> None:
        if not isinstance(mesh, Mesh):
            raise TypeError(
                "NamedSharding: mesh must be a bt.sharding.Mesh, not "
                f"{type(mesh).__name__}"
            )
        if spec is None:
            spec = PartitionSpec()
        if not isinstance(spec, PartitionSpec):
            if isinstance(spec, (tuple, list)):
                spec = PartitionSpec(*spec)
            else:
                raise TypeError(
                    f"NamedSharding: spec must be a PartitionSpec (bt.sharding.P), "
                    f"not {type(spec).__name__}"
                )
        used: list[str] = []
        for d in range(len(spec)):
            for a in spec.axes_of(d):
                if a not in mesh.shape:
                    raise ValueError(
                        f"NamedSharding: spec {spec} names axis {a!r}, which the mesh "
                        f"does not have (its axes: {mesh.axis_names})"
                    )
                if a in used:
                    raise ValueError(
                        f"NamedSharding: spec {spec} uses mesh axis {a!r} twice; each "
                        "axis can split one dimension"
                    )
                used.append(a)
        _check_kind(memory_kind)
        self._mesh = mesh
        self._spec = spec
        self._memory_kind = memory_kind

    @property
    def mesh(self) -> Mesh:
        return self._mesh

    @property
    def spec(self) -> PartitionSpec:
        return self._spec

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind

    @property
    def device_set(self) -> set:
        return set(self._mesh.devices.flat)

    @property
    def is_fully_replicated(self) -> bool:
        """True when every device holds the whole array."""
        return all(
            self._mesh.shape[a] == 1
            for d in range(len(self._spec))
            for a in self._spec.axes_of(d)
        )

    def with_memory_kind(self, kind: str) -> NamedSharding:
        return NamedSharding(self._mesh, self._spec, memory_kind=kind)

    def split_count(self, dim: int) -> int:
        """Into how many blocks dimension ``dim`` is split."""
        return math.prod(self._mesh.shape[a] for a in self._spec.axes_of(dim))

    def check_shape(self, global_shape: tuple[int, ...], what: str = "array") -> None:
        """Raises ValueError unless an array of ``global_shape`` can be placed."""
        if len(self._spec) > len(global_shape):
            raise ValueError(
                f"{what} has rank {len(global_shape)} but the sharding's spec "
                f"{self._spec} has {len(self._spec)} entries"
            )
        for d in range(len(self._spec)):
            n = self.split_count(d)
            if global_shape[d] % n:
                raise ValueError(
                    f"{what} of shape {tuple(global_shape)}: dimension {d} "
                    f"({global_shape[d]}) is split over mesh axes "
                    f"{self._spec.axes_of(d)} of total size {n} and must be divisible "
                    "by it (baton does not pad shards)"
                )

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of each device's block."""
        self.check_shape(tuple(global_shape))
        return tuple(
            s // self.split_count(d) if d < len(self._spec) else s
            for d, s in enumerate(global_shape)
        )

    def _placement(self, global_shape: tuple[int, ...]) -> list[tuple[Any, tuple]]:
        local = self.shard_shape(global_shape)
        out = []
        for device, pos in self._mesh.device_positions():
            index = []
            for d, size in enumerate(local):
                block = 0
                for a in self._spec.axes_of(d):
                    block = block * self._mesh.shape[a] + pos[a]
                if d < len(self._spec) and self._spec[d] is not None:
                    index.append(slice(block * size, (block + 1) * size))
                else:
                    index.append(slice(None))
            out.append((device, tuple(index)))
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NamedSharding):
            return False
        return (
            self._mesh == other._mesh
            and _trimmed(self._spec) == _trimmed(other._spec)
            and self._memory_kind == other._memory_kind
        )

    def __hash__(self) -> int:
        return hash((self._mesh, _trimmed(self._spec), self._memory_kind))

    def __repr__(self) -> str:
        kind = f", memory_kind={self._memory_kind}" if self._memory_kind else ""
        return f"NamedSharding(mesh={self._mesh!r}, spec={self._spec!r}{kind})"


def _trimmed(spec: PartitionSpec) -> tuple:
    parts = list(spec)
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


Sharding = _Sharding
