"""``bt.stages``: the types of a ``bt.jit`` function's stages, as in
``jax.stages``: ``Wrapped`` (what ``bt.jit`` returns), ``Lowered``
(``f.lower(*args)``) and ``Compiled`` (``f.lower(*args).compile()``).

baton has no separate traced stage (JAX's ``Traced``, ``f.trace``): a
function is traced and lowered in one step."""

from baton._baton import Compiled, Lowered
from baton._jit import _Jitted as Wrapped

__all__ = ["Compiled", "Lowered", "Wrapped"]
