"""``bt.scipy``: the parts of ``jax.scipy`` baton has (``bt.scipy.special``,
``bt.scipy.linalg``, ``bt.scipy.signal``, ``bt.scipy.stats``)."""

from baton.scipy import linalg, signal, special, stats

__all__ = ["linalg", "signal", "special", "stats"]
