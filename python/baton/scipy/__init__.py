"""``bt.scipy``: the parts of ``jax.scipy`` baton has (``bt.scipy.fft``,
``bt.scipy.special``, ``bt.scipy.linalg``, ``bt.scipy.signal``,
``bt.scipy.stats``)."""

from baton.scipy import fft, linalg, signal, special, stats

__all__ = ["fft", "linalg", "signal", "special", "stats"]
