"""``bt.scipy``: the parts of ``jax.scipy`` baton has (``bt.scipy.special``,
``bt.scipy.linalg``, ``bt.scipy.stats``)."""

from baton.scipy import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
