"""``bt.scipy``: the parts of ``jax.scipy`` baton has (``bt.scipy.special``,
``bt.scipy.linalg``)."""

from baton.scipy import linalg, special

__all__ = ["linalg", "special"]
