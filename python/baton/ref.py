"""``bt.ref``: JAX's ``jax.ref`` module -- mutable array references.

    r = bt.ref.new_ref(bnp.zeros(3))
    bt.ref.set(r, 1, 5.0)          # r[1] = 5.0
    bt.ref.addupdate(r, ..., bnp.ones(3))
    bt.ref.get(r, slice(0, 2))     # r[0:2]
    bt.ref.freeze(r)

See ``baton._ref`` for the memory behaviour and what works under ``bt.jit``,
lax control flow and differentiation.
"""

from baton import _ref
from baton._ref import *  # noqa: F401,F403 -- the public names, listed once there

__all__ = list(_ref.__all__)
