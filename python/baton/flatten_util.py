"""``bt.flatten_util``: a pytree of arrays as one flat vector and back.

    flat, unravel = bt.flatten_util.ravel_pytree({"w": w, "b": b})
    params = unravel(flat - lr * g)     # the same tree, dtypes and shapes

As ``jax.flatten_util.ravel_pytree``: the leaves in flattening order (dict
keys sorted), each raveled, concatenated into one 1-D array whose dtype is
the promotion of all leaf dtypes (float32 for an empty tree); ``unravel``
splits a vector of that size back, each piece reshaped (and, when the
leaves had different dtypes, cast to its leaf's dtype: the vector must then
have ``flat``'s dtype, else TypeError; with one dtype the pieces keep the
vector's dtype, as in JAX). Both work on traced values (inside ``bt.jit``,
``bt.grad`` ...).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from baton import dtypes as _jdtypes
from baton import tree

__all__ = ["ravel_pytree"]


def _leaf_dtype(x: Any) -> np.dtype:
    if isinstance(x, (bool, int, float, complex)):
        return _jdtypes.canonicalize_dtype(type(x))
    d = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
    return _jdtypes.canonicalize_dtype(d)


def _leaf_shape(x: Any) -> tuple[int, ...]:
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


class _Unravel:
    """The inverse of one ``ravel_pytree`` (hashable by identity)."""

    def __init__(
        self,
        treedef: Any,
        shapes: list[tuple[int, ...]],
        dtypes: list[np.dtype],
        to_dtype: np.dtype,
    ) -> None:
        self._treedef = treedef
        self._shapes = shapes
        self._dtypes = dtypes
        self._to = to_dtype
        self._sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        self._total = sum(self._sizes)
        self._mixed = len(set(dtypes)) > 1

    def __call__(self, flat: Any) -> Any:
        from baton import numpy as bnp

        shape = _leaf_shape(flat)
        if shape != (self._total,):
            raise ValueError(
                f"unravel: expected a 1-D array of {self._total} elements (what "
                f"ravel_pytree gave), got shape {shape}"
            )
        d = _leaf_dtype(flat)
        if self._mixed and d != self._to:
            raise TypeError(
                f"unravel function given array of dtype {d}, but expected dtype "
                f"{self._to} (the dtype ravel_pytree gave)"
            )
        flat = bnp.asarray(flat)
        leaves = []
        start = 0
        for size, shp, dt in zip(self._sizes, self._shapes, self._dtypes):
            piece = bnp.reshape(flat[start : start + size], shp)
            leaves.append(piece.astype(dt) if self._mixed and dt != d else piece)
            start += size
        return tree.unflatten(self._treedef, leaves)

    def __repr__(self) -> str:
        return f"<unravel of {self._treedef}>"


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``(flat, unravel)``: the leaves of ``pytree`` as one 1-D array, and
    the function rebuilding the tree from such an array (see the module
    doc)."""
    from baton import numpy as bnp

    leaves, treedef = tree.flatten(pytree)
    dts = [_leaf_dtype(x) for x in leaves]
    shapes = [_leaf_shape(x) for x in leaves]
    to = np.dtype(np.float32)
    if dts:
        to = dts[0]
        for d in dts[1:]:
            to = np.dtype(bnp.promote_types(to, d))
    if leaves:
        flat = bnp.concatenate([bnp.ravel(bnp.asarray(x, dtype=to)) for x in leaves])
    else:
        flat = bnp.zeros((0,), dtype=to)
    return flat, _Unravel(treedef, shapes, dts, to)
