"""``bt.custom_batching``: JAX's module of custom batching rules,
``custom_vmap`` and ``sequential_vmap`` (``_custom_batching``)."""

from baton._custom_batching import custom_vmap, sequential_vmap

__all__ = ["custom_vmap", "sequential_vmap"]
