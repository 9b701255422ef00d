"""The memory kinds of a device, and the check of a ``memory_kind=`` argument.

Its own module, below ``_transfer`` and ``sharding``, which both check the
argument.
"""

from __future__ import annotations

import enum
from types import SimpleNamespace
from typing import Any

KINDS = ("device", "pinned_host", "unpinned_host")


class MemorySpace(enum.Enum):
    """JAX's memory spaces (``jax.memory.Space``): ``bt.device_put(x,
    bt.memory.Space.Host)`` puts ``x`` in pinned host memory, ``Device`` in
    device memory, as JAX does; ``Any`` names no place to put data."""

    Device = 1
    Host = 2
    Any = 3

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"


# bt.memory, as jax.memory: a namespace holding Space.
memory = SimpleNamespace(Space=MemorySpace)


def kind_of_space(space: MemorySpace) -> str:
    """The memory kind a memory space puts data in."""
    if space is MemorySpace.Device:
        return "device"
    if space is MemorySpace.Host:
        return "pinned_host"
    raise ValueError(
        "device_put: memory space Any names no memory to put data in; use "
        "bt.memory.Space.Device or Space.Host"
    )


def check_kind(memory_kind: Any) -> None:
    """ValueError unless ``memory_kind`` is None or a memory kind."""
    if memory_kind is not None and memory_kind not in KINDS:
        raise ValueError(
            f"unknown memory kind {memory_kind!r}; a device has {', '.join(KINDS)}"
        )
