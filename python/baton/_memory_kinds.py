"""The memory kinds of a device, and the check of a ``memory_kind=`` argument.

Its own module, below ``_transfer`` and ``sharding``, which both check the
argument.
"""

from __future__ import annotations

from typing import Any

KINDS = ("device", "pinned_host", "unpinned_host")


def check_kind(memory_kind: Any) -> None:
    """ValueError unless ``memory_kind`` is None or a memory kind."""
    if memory_kind is not None and memory_kind not in KINDS:
        raise ValueError(
            f"unknown memory kind {memory_kind!r}; a device has {', '.join(KINDS)}"
        )
