"""``bt.experimental``: where JAX keeps APIs baton has under their JAX paths
(``from baton.experimental.shard_map import shard_map``)."""
