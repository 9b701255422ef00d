"""``bt.custom_derivatives``: JAX's module of custom differentiation rules,
with the ones baton has: ``custom_jvp``, ``custom_vjp``,
``custom_gradient`` and ``closure_convert`` (the same objects as
``bt.custom_jvp`` etc.). JAX's internals here (the ``*_p`` primitives,
``SymbolicZero``, ``linear_call``, ``CustomVJPPrimal``) are not part of
baton (docs/jax_surface.md)."""

from baton._custom import custom_jvp, custom_vjp
from baton._toplevel_ad import closure_convert, custom_gradient

__all__ = ["closure_convert", "custom_gradient", "custom_jvp", "custom_vjp"]
