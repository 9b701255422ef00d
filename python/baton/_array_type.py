"""``bt.Array`` (also ``bt.numpy.ndarray``): the public array type.

As ``jax.Array``, it is an abstract base: ``isinstance(x, bt.Array)`` holds
for a concrete array (``baton._baton.Array``, the C++ binding) and for a
traced value (``bt.lax.Tracer``) alike, so code written for JAX that checks
``isinstance(x, jax.Array)`` inside ``jit`` / ``grad`` / ``vmap`` takes the
same branch on baton. ``bt.core.Tracer`` still tells traced from concrete.

baton's own modules test ``baton._baton.Array`` (concrete only) wherever
the difference matters; they never test this class.

Class-level attribute access is forwarded to the concrete class
(``bt.Array.sum``, ``bt.Array.shape`` are its method and property), and so
are attaching and deleting methods (``setattr`` / ``delattr``), so the
methods later layers attach to ``baton._baton.Array`` are seen here.
Neither class can be instantiated from Python: arrays come from baton's
functions (``bt.device_put``, ``bt.numpy.asarray``, ...).
"""

from __future__ import annotations

import abc
from typing import Any

from baton import _baton

__all__ = ["Array"]

_Concrete = _baton.Array
_Tracer = _baton.lax.Tracer


def _forwarded(name: str) -> bool:
    return not (name.startswith("__") and name.endswith("__")) and not name.startswith(
        "_abc_"
    )


class _ArrayMeta(abc.ABCMeta):
    def __getattr__(cls, name: str) -> Any:
        # Only reached when the abstract class itself lacks ``name``.
        if _forwarded(name):
            return getattr(_Concrete, name)
        raise AttributeError(f"type object 'Array' has no attribute {name!r}")

    def __setattr__(cls, name: str, value: Any) -> None:
        if _forwarded(name) and "_initialized" in cls.__dict__:
            setattr(_Concrete, name, value)
        else:
            super().__setattr__(name, value)

    def __delattr__(cls, name: str) -> None:
        if name in cls.__dict__:
            super().__delattr__(name)
        else:
            delattr(_Concrete, name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(_NOT_DIRECTLY)


_NOT_DIRECTLY = (
    "bt.Array cannot be created directly; make arrays with bt.device_put, "
    "bt.numpy.asarray / array, or another baton function"
)


class Array(metaclass=_ArrayMeta):
    """A baton array: a concrete ``baton._baton.Array`` or, while tracing,
    a ``bt.lax.Tracer`` (see the module docstring)."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(_NOT_DIRECTLY)


Array.__module__ = "baton"
try:  # the concrete class prints as baton.Array too (it did before)
    _Concrete.__module__ = "baton"
except (AttributeError, TypeError):
    pass
Array.register(_Concrete)
Array.register(_Tracer)
type.__setattr__(Array, "_initialized", True)
