"""``bt.typing``: the annotation types of ``jax.typing``.

    from baton.typing import ArrayLike, DTypeLike

    def scale(x: ArrayLike, dtype: DTypeLike = "float32") -> bt.Array: ...

``ArrayLike`` is what baton's functions accept as an array argument: a
baton ``Array``, a ``Tracer`` (the value of an array inside ``bt.jit`` /
``grad`` / ``vmap``), numpy arrays and scalars, and Python's ``bool``,
``int``, ``float`` and ``complex``. ``DTypeLike`` is what a ``dtype=``
argument accepts: a name (``"float32"``), a scalar type (``np.float32``,
``float``), a numpy dtype, or anything with a ``dtype`` attribute. Both are
``typing.Union`` values, as in JAX; ``isinstance(x, ArrayLike)`` works.
"""

from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from baton._baton import Array
from baton._baton import lax as _lax

__all__ = ["ArrayLike", "DTypeLike"]


class SupportsDType(Protocol):
    """Anything with a ``dtype`` attribute (an array, a ShapeDtypeStruct)."""

    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[
    Array,
    _lax.Tracer,
    np.ndarray,
    np.bool_,
    np.number,
    bool,
    int,
    float,
    complex,
]

DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
