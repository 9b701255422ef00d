"""``baton.experimental.shard_map.shard_map``: ``bt.shard_map`` under JAX's
older import path."""

from baton._shard_map import shard_map

__all__ = ["shard_map"]
