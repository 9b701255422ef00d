"""``bt.core``: the public names of ``jax.core`` that baton can honour.

``Tracer`` is the class of every traced value baton hands to a function
under ``bt.jit``, ``bt.grad`` / ``vjp`` / ``jvp``, ``bt.vmap``,
``lax.scan`` / ``while_loop`` / ``cond`` bodies and ``checkpoint``: so
``isinstance(x, bt.core.Tracer)`` tells, as in JAX, whether ``x`` is being
traced (a concrete ``bt.Array`` is not a Tracer).

baton has no jaxprs or JAX-style traces, so ``jax.core``'s ``Jaxpr``,
``ClosedJaxpr``, ``Trace``, ``ShapedArray``, ``eval_jaxpr`` ... are not
here (``bt.make_jaxpr`` prints baton's own program text instead).
"""

from __future__ import annotations

from baton._baton import lax as _lax

__all__ = ["Tracer"]

Tracer = _lax.Tracer
