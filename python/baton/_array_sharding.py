"""Where a single-device Array lives, in JAX's terms: ``Array.devices()``,
``Array.sharding`` (a ``SingleDeviceSharding``), ``addressable_shards`` /
``global_shards`` (one ``Shard``, the whole array), ``is_fully_replicated``,
``is_fully_addressable``.

Attached to ``Array`` here, above ``sharding`` and ``_sharded_array`` whose
types they return, so neither of those needs the device queries' module to
import them back.
"""

from __future__ import annotations

from typing import Any

from baton import _array_methods
from baton._sharded_array import Shard
from baton.sharding import SingleDeviceSharding


def _array_devices(self: Any) -> set:
    """``{self.device}``: the devices holding this array."""
    return {self.device}


def _array_sharding(self: Any) -> SingleDeviceSharding:
    return SingleDeviceSharding(self.device, memory_kind=self.memory_kind)


_array_methods.attach("devices", _array_devices)
_array_methods.attach(
    "sharding",
    property(_array_sharding, doc="Where the array lives: a SingleDeviceSharding."),
)


def _array_shards(self: Any) -> list:
    return [Shard(self.device, tuple(slice(None) for _ in self.shape), 0, self)]


_array_methods.attach(
    "addressable_shards",
    property(_array_shards, doc="``[Shard]``: the one shard, the whole array."),
)
_array_methods.attach(
    "global_shards", property(_array_shards, doc="= addressable_shards.")
)
_array_methods.attach(
    "is_fully_replicated",
    property(lambda self: True, doc="True: a single-device array is whole."),
)
_array_methods.attach(
    "is_fully_addressable",
    property(lambda self: True, doc="True: a single-device array is in this process."),
)
