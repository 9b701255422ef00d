"""``bt.stages``: the types of a ``bt.jit`` function's stages, as in
``jax.stages``: ``Wrapped`` (what ``bt.jit`` returns), ``Traced``
(``f.trace(*args)``), ``Lowered`` (``f.lower(*args)``), ``Compiled``
(``f.lower(*args).compile()``) and ``ArgInfo`` (``Traced.args_info``'s
leaves). See ``baton/_stages.py``.

Example::

    f = bt.jit(lambda x: x * 2)
    traced = f.trace(np.ones(3, np.float32))     # bt.stages.Traced
    compiled = traced.lower().compile()          # bt.stages.Compiled
    compiled(np.ones(3, np.float32))
"""

from baton._jit import _Jitted as Wrapped
from baton._stages import ArgInfo, Compiled, Lowered, Traced

__all__ = ["ArgInfo", "Compiled", "Lowered", "Traced", "Wrapped"]
