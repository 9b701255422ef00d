"""``bt.scipy``: the parts of ``jax.scipy`` baton has (``bt.scipy.special``)."""

from baton.scipy import special

__all__ = ["special"]
