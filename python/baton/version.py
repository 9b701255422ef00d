"""``bt.version``: the package version, as ``jax.version`` gives JAX's
(``__version__``, ``__version_info__``, ``_version``)."""

from baton._version import __version__

_version = __version__
__version_info__ = tuple(int(p) for p in __version__.split(".")[:3])
