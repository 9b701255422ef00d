"""``bt.nn``: ``jax.nn``'s activation functions, normalisations and
initializers (``bt.nn.initializers``).

    import baton as bt
    h = bt.nn.relu(x @ w + b)
    p = bt.nn.softmax(logits, axis=-1)
    w = bt.nn.initializers.glorot_normal()(key, (784, 512))

All are compositions of baton.numpy operations: they run eagerly (one
compiled program per function, shape and dtype), under ``bt.jit`` and
``bt.vmap``, and ``bt.grad`` differentiates them.
"""

from baton.nn import _activations, _attention, _gated, initializers
from baton.nn._activations import *  # noqa: F403
from baton.nn._attention import *  # noqa: F403
from baton.nn._gated import *  # noqa: F403

__all__ = [
    "initializers", *_activations.__all__, *_attention.__all__, *_gated.__all__
]
