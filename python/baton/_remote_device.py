"""Other processes' devices, as ``bt.devices()`` lists them after
``bt.distributed.initialize`` (DESIGN 5.6).

A :class:`RemoteDevice` names a device of another process: it can be placed
in a :class:`~baton.sharding.Mesh` (this process then holds, and computes
on, only its own devices' shards), but holds nothing here. This process's
devices are baton ``Device`` objects, whose ``process_index`` is this
process's.

Device ids: every process's devices are numbered from 0 within the process
(``Device.id``); ``global_id`` is unique across processes (process p's
devices follow those of processes 0..p-1).
"""

from __future__ import annotations

from typing import Any

from baton._baton import Device


class RemoteDevice:
    """Device ``id`` of process ``process_index`` (not this process)."""

    __slots__ = ("global_id", "id", "platform", "process_index")

    def __init__(
        self, id: int, process_index: int, platform: str, global_id: int
    ) -> None:
        self.id = id
        self.process_index = process_index
        self.platform = platform
        self.global_id = global_id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RemoteDevice) and (self.process_index, self.id) == (
            other.process_index,
            other.id,
        )

    def __hash__(self) -> int:
        return hash(("remote", self.process_index, self.id))

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id}, process_index={self.process_index})"


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


Device.process_index = property(
    lambda self: _layout["me"], doc="The index of the process this device belongs to."
)
Device.global_id = property(
    lambda self: _offset(_layout["me"]) + self.id,
    doc="The device's index in bt.devices() across every process.",
)
