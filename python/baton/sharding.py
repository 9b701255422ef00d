"""``bt.sharding``: where an array's data lives (``Array.sharding``).

For now every baton array lives whole on one device, so the only sharding
is :class:`SingleDeviceSharding` (sharded arrays are a later issue, DESIGN
5.6). It answers what ported code asks of ``x.sharding``: ``device_set``,
``memory_kind``, ``is_fully_replicated``, ``is_fully_addressable``,
``num_devices``, ``shard_shape``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SingleDeviceSharding"]


class SingleDeviceSharding:
    """All of an array on one ``device`` in memory ``memory_kind``
    (``None``: the device's default kind). Immutable; equal when device and
    memory kind are."""

    __slots__ = ("_device", "_memory_kind")

    def __init__(self, device: Any, *, memory_kind: str | None = None) -> None:
        self._device = device
        self._memory_kind = memory_kind

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

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def addressable_devices(self) -> set:
        return {self._device}

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of the one shard: the whole array's."""
        return tuple(global_shape)

    def with_memory_kind(self, kind: str) -> SingleDeviceSharding:
        """The same device, another memory kind."""
        return SingleDeviceSharding(self._device, memory_kind=kind)

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
