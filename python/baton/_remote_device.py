"""Other processes' devices, as ``bt.devices()`` lists them after
``bt.distributed.initialize`` (DESIGN 5.6).

A :class:`RemoteDevice` names a device of another process: it can be placed
in a :class:`~baton.sharding.Mesh` (this process then holds, and computes
on, only its own devices' shards), but holds nothing here. This process's
devices are baton ``Device`` objects, whose ``process_index`` is this
process's.

Device ids, as JAX numbers them: ``Device.id`` is unique across every
process (process p's devices follow those of processes 0..p-1), and
``Device.local_hardware_id`` is the device's index among its own process's
devices (what the C++ runtime calls the device's id). With one process the
two are equal.
"""

from __future__ import annotations

from typing import Any

from baton._baton import Device


class RemoteDevice:
    """Device ``local_hardware_id`` of process ``process_index`` (not this
    process), ``id`` unique across processes."""

    __slots__ = ("id", "local_hardware_id", "platform", "process_index")

    def __init__(
        self, local_hardware_id: int, process_index: int, platform: str, id: int
    ) -> None:
        self.id = id
        self.local_hardware_id = local_hardware_id
        self.process_index = process_index
        self.platform = platform

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RemoteDevice) and self.id == other.id

    def __hash__(self) -> int:
        return hash(("remote", self.id))

    def __repr__(self) -> str:
        return f"{self.platform.capitalize()}Device(id={self.id}, process_index={self.process_index})"


_layout: dict[str, Any] = {"me": 0, "counts": None}


def set_layout(process_index: int, counts: list[int] | None) -> None:
    """Records how many devices each process has (None: one process)."""
    _layout["me"] = process_index
    _layout["counts"] = None if counts is None else [int(c) for c in counts]


def _offset(p: int) -> int:
    counts = _layout["counts"] or []
    return sum(counts[:p])


def global_devices(local: list) -> list:
    """Every process's devices, process 0's first."""
    counts = _layout["counts"]
    if counts is None:
        return list(local)
    platform = local[0].platform if local else "cpu"
    out: list = []
    for p, n in enumerate(counts):
        if p == _layout["me"]:
            out.extend(local)
        else:
            out.extend(RemoteDevice(k, p, platform, _offset(p) + k) for k in range(n))
    return out


# The runtime's id is the index among this process's devices.
_local_index = Device.id
Device.local_hardware_id = property(
    _local_index.__get__,
    doc="The device's index among its own process's devices (bt.local_devices()).",
)
Device.id = property(
    lambda self: _offset(_layout["me"]) + _local_index.__get__(self),
    doc="The device's id, unique across every process: its index in bt.devices() "
    "(process p's devices follow those of processes 0..p-1).",
)
_runtime_repr = Device.__repr__


def _device_repr(self: Device) -> str:
    # The runtime's repr names the local index; across processes, the id.
    if _layout["counts"] is None:
        return _runtime_repr(self)
    return f"{self.platform.capitalize()}Device(id={self.id})"


Device.__repr__ = _device_repr
Device.process_index = property(
    lambda self: _layout["me"], doc="The index of the process this device belongs to."
)
