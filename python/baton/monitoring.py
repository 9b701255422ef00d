"""``bt.monitoring``: JAX's ``jax.monitoring`` (event listeners).

See ``baton._monitoring`` for the events baton records itself.
"""

from baton import _monitoring
from baton._monitoring import *  # noqa: F401,F403 -- the public names, listed once there

__all__ = list(_monitoring.__all__)
