"""Joining and splitting arrays beyond ``_shapes``' concatenate / stack /
split: append, concat, array_split, hsplit / vsplit / dsplit, atleast_3d,
dstack, column_stack, block, unstack.

Compositions of the other ``baton.numpy`` functions and ``bt.lax``; most
run as one program through ``_ops.apply`` (one compile per static
parameters and argument signature), eagerly or inside ``bt.jit``.
Semantics are jax.numpy's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops
from baton.numpy import _creation as _cr
from baton.numpy import _shapes as _sh
from baton.numpy._selection import (
    _along,
    _run,
    _weak_like,
)

__all__ = [
    "append",
    "array_split",
    "atleast_3d",
    "block",
    "column_stack",
    "concat",
    "dsplit",
    "dstack",
    "hsplit",
    "unstack",
    "vsplit",
]


# ---- joining and splitting ----


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` appended to ``arr`` along ``axis`` (None: both flattened).

    >>> bnp.append(bnp.arange(3), [7, 8])    # [0 1 2 7 8]
    """
    values = _weak_like(values, arr)
    if axis is None:
        return _sh.concatenate([_sh.ravel(arr), _sh.ravel(values)], 0)
    return _sh.concatenate([arr, values], axis)


def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    """The array API's name for ``concatenate``.

    >>> bnp.concat([bnp.zeros(2), bnp.ones(1)])    # [0. 0. 1.]
    """
    return _sh.concatenate(arrays, axis)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Like ``split``, but N sections need not divide the axis: the first
    ``len % N`` pieces get one element more.

    >>> [p.shape for p in bnp.array_split(bnp.arange(7), 3)]   # [(3,), (2,), (2,)]
    """
    s = _ops.shape_of(ary)
    ax = _ops.normalize_axis(axis, len(s))
    ios = indices_or_sections
    if isinstance(ios, (int, np.integer)) and not isinstance(ios, (bool, np.bool_)):
        k = int(ios)
        if k <= 0:
            raise ValueError(
                f"array_split: the number of sections must be > 0, got {k}"
            )
        q, r = divmod(s[ax], k)
        cuts = np.cumsum([q + 1] * r + [q] * (k - r))[:-1]
        return _sh.split(ary, [int(c) for c in cuts], ax)
    return _sh.split(ary, ios, ax)


def _split_along(name: str, ary: Any, ios: Any, axis: int, need: int) -> list[Any]:
    nd = _sh.ndim(ary)
    if nd < need:
        raise ValueError(
            f"{name} only works on arrays of {need} or more dimensions; got an "
            f"array of shape {_ops.shape_of(ary)}"
        )
    return _sh.split(ary, ios, axis)


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 1 (axis 0 for 1-D arrays).

    >>> bnp.hsplit(bnp.ones((2, 4)), 2)[0].shape    # (2, 2)
    """
    axis = 1 if _sh.ndim(ary) > 1 else 0
    return _split_along("hsplit", ary, indices_or_sections, axis, 1)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 0 of an array of at least 2 dimensions.

    >>> bnp.vsplit(bnp.ones((4, 2)), [1])[1].shape    # (3, 2)
    """
    return _split_along("vsplit", ary, indices_or_sections, 0, 2)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 2 of an array of at least 3 dimensions.

    >>> bnp.dsplit(bnp.ones((1, 2, 4)), 2)[0].shape    # (1, 2, 2)
    """
    return _split_along("dsplit", ary, indices_or_sections, 2, 3)


def atleast_3d(*arys: Any) -> Any:
    """Each array with at least 3 dimensions: 0-d -> (1, 1, 1), (N,) ->
    (1, N, 1), (M, N) -> (M, N, 1).

    >>> bnp.atleast_3d(bnp.ones(4)).shape    # (1, 4, 1)
    """
    from baton.numpy._shapes import asarray_like

    out = []
    for a in arys:
        a = asarray_like(a)  # sequences converted, as jnp does
        s = _ops.shape_of(a)
        if len(s) == 0:
            new = (1, 1, 1)
        elif len(s) == 1:
            new = (1, s[0], 1)
        elif len(s) == 2:
            new = (*s, 1)
        else:
            new = s
        out.append(_sh.asarray_like(a) if new == s else _sh.reshape(a, new))
    return out[0] if len(out) == 1 else out


def dstack(tup: Any, dtype: Any = None) -> Any:
    """The arrays (made at least 3-d) joined along axis 2.

    >>> bnp.dstack([bnp.ones(3), bnp.zeros(3)]).shape    # (1, 3, 2)
    """
    arrs = [atleast_3d(a) for a in _sh._operands(tup, "dstack")]
    return _sh.concatenate(arrs, 2, dtype)


def column_stack(tup: Any) -> Any:
    """1-D arrays as the columns of a 2-D array (others joined on axis 1).

    >>> bnp.column_stack([bnp.arange(3), bnp.arange(3)]).shape    # (3, 2)
    """
    arrs = [
        _sh.reshape(a, (-1, 1)) if _sh.ndim(a) < 2 else a
        for a in _sh._operands(tup, "column_stack")
    ]
    return _sh.concatenate(arrs, 1)


def _block_depth(x: Any, path: str) -> tuple[int, int]:
    """(list depth, largest leaf ndim) of a nested list for ``block``."""
    if isinstance(x, tuple):
        raise TypeError(
            f"block: arrays{path} is a tuple; nest the blocks in lists (tuples "
            "are not allowed, as in numpy)"
        )
    if not isinstance(x, list):
        return 0, _sh.ndim(x)
    if not x:
        raise ValueError(f"block: arrays{path} is an empty list; lists cannot be empty")
    parts = [_block_depth(e, f"{path}[{i}]") for i, e in enumerate(x)]
    depths = {d for d, _ in parts}
    if len(depths) != 1:
        raise ValueError(
            f"block: list depths are mismatched inside arrays{path} (depths "
            f"{sorted(depths)}); every leaf must be nested equally deep"
        )
    return parts[0][0] + 1, max(n for _, n in parts)


def block(arrays: Any) -> Any:
    """An array assembled from nested lists of blocks: the innermost lists
    are joined along the last axis, the next ones along the one before, ...

    >>> bnp.block([[bnp.eye(2), bnp.zeros((2, 1))], [bnp.ones((1, 3))]]).shape  # (3, 3)
    """
    depth, nd = _block_depth(arrays, "")
    nd = max(nd, depth)

    def build(x: Any, level: int) -> Any:
        if not isinstance(x, list):
            s = _ops.shape_of(x)
            return _sh.reshape(x, (1,) * (nd - len(s)) + s)
        return _sh.concatenate([build(e, level + 1) for e in x], level - depth - 1)

    if depth == 0:
        return _cr.array(arrays)
    return build(arrays, 1)


def _unstack(x: Any, *, axis: int) -> Any:
    t = _ops.as_tracer(x)
    return tuple(t[_along(t, axis, i)] for i in range(t.shape[axis]))


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple.

    >>> len(bnp.unstack(bnp.ones((3, 2))))    # 3
    """
    s = _ops.shape_of(x)
    ax = _ops.normalize_axis(axis, len(s))
    if s[ax] == 0:
        return ()
    return tuple(_run(_unstack, (x,), axis=ax))
