"""XLA-style scatters of ``bt.lax`` (``jax.lax.scatter_add`` and family),
with JAX's ``ScatterDimensionNumbers``.

Each update element's position in the operand is computed from the
dimension numbers (the scatter index vector is the last dimension of
``scatter_indices``, as in JAX); the operand is then updated through
baton's one-dimensional scatter on its flattened form. Out-of-bounds
windows follow ``mode``: ``'fill'``/``'drop'`` (JAX's default,
FILL_OR_DROP) drops the whole window, ``'clip'`` clamps its start.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from baton import _ops
from baton._baton import lax

_I32 = np.dtype(np.int32)


class GatherScatterMode(enum.Enum):
    """How gathers and scatters treat out-of-bounds indices (JAX's enum)."""

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s: Any) -> GatherScatterMode:
        """The mode named by ``s`` (a mode, a string, or None: FILL_OR_DROP)."""
        if isinstance(s, GatherScatterMode):
            return s
        if s is None or s in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if s == "clip":
            return GatherScatterMode.CLIP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter's updates map to the operand (XLA's and JAX's fields:
    ``update_window_dims``, ``inserted_window_dims``,
    ``scatter_dims_to_operand_dims``, the two batching dimension lists)."""

    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


def _coords(shape: tuple[int, ...], dim: int) -> Any:
    return lax.iota(_I32, shape, dim)


def _window_starts(
    idx: Any,
    shape: tuple[int, ...],
    batch_dims: Sequence[int],
    k: int,
    to_operand: Sequence[int],
    obatch: Sequence[int],
    ibatch: Sequence[int],
    r: int,
) -> list:
    """Where in the operand (r dimensions) the window of each element of an
    array of ``shape`` starts -- gather's output, scatter's updates, whose
    ``batch_dims`` run over the batch shape of ``idx`` (int32, index vectors
    of ``k`` entries in its last dimension): r int32 arrays of ``shape``, the
    index vector's entries on ``to_operand``, the batch coordinate on the
    operand batching dimensions ``obatch`` (of index batch dimensions
    ``ibatch``), 0 elsewhere."""
    batch_shape = tuple(idx.shape)[:-1]
    # Row of the index vector each element uses.
    row = lax.full(shape, 0, _I32)
    batch_coord = []
    stride = 1
    for j in range(len(batch_dims) - 1, -1, -1):
        c = _coords(shape, batch_dims[j])
        batch_coord.insert(0, c)
        row = lax.add(row, lax.mul(c, stride))
        stride *= batch_shape[j]
    rows = math.prod(batch_shape)
    flat_idx = lax.reshape(idx, (rows, k))
    start = [lax.full(shape, 0, _I32) for _ in range(r)]
    for j, d in enumerate(to_operand):
        column = lax.reshape(lax.slice(flat_idx, (0, j), (rows, j + 1)), (rows,))
        start[d] = lax.take(column, row)
    for od, idim in zip(obatch, ibatch):
        start[od] = batch_coord[idim]
    return start


def _operand_positions(
    o_shape: tuple[int, ...],
    indices: Any,
    u_shape: tuple[int, ...],
    dn: ScatterDimensionNumbers,
    mode: GatherScatterMode,
) -> Any:
    """The flat operand index of every update element (int32, shape
    u_shape); dropped elements get the operand's size (out of range)."""
    r = len(o_shape)
    window_u = tuple(int(d) for d in dn.update_window_dims)
    scatter_u = [d for d in range(len(u_shape)) if d not in window_u]
    inserted = {int(d) for d in dn.inserted_window_dims}
    obatch = [int(d) for d in dn.operand_batching_dims]
    ibatch = [int(d) for d in dn.scatter_indices_batching_dims]
    to_operand = [int(d) for d in dn.scatter_dims_to_operand_dims]
    window_o = [d for d in range(r) if d not in inserted and d not in obatch]
    if len(window_o) != len(window_u):
        raise ValueError(
            f"scatter: {len(window_u)} update_window_dims for {len(window_o)} "
            "operand window dimensions"
        )
    idx = lax.astype(_ops.as_tracer(indices), _I32)
    i_shape = tuple(idx.shape)
    batch_shape = i_shape[:-1]
    k = i_shape[-1] if i_shape else 0
    if tuple(u_shape[d] for d in scatter_u) != batch_shape:
        raise ValueError(
            f"scatter: updates' scatter dimensions {[u_shape[d] for d in scatter_u]} "
            f"must equal the indices' batch shape {list(batch_shape)}"
        )
    start = _window_starts(idx, u_shape, scatter_u, k, to_operand, obatch, ibatch, r)
    size = [1] * r
    for od, ud in zip(window_o, window_u):
        size[od] = u_shape[ud]
    inside = lax.full(u_shape, True, np.dtype(bool))
    for d in range(r):
        hi = o_shape[d] - size[d]
        if mode == GatherScatterMode.CLIP:
            start[d] = lax.minimum(lax.maximum(start[d], 0), max(hi, 0))
        else:
            ok = lax.bitwise_and(lax.ge(start[d], 0), lax.le(start[d], hi))
            inside = lax.bitwise_and(inside, ok)
    flat = lax.full(u_shape, 0, _I32)
    window_of = dict(zip(window_o, window_u))
    stride = 1
    for d in range(r - 1, -1, -1):
        pos = start[d]
        if d in window_of:
            pos = lax.add(pos, _coords(u_shape, window_of[d]))
        flat = lax.add(flat, lax.mul(pos, stride))
        stride *= o_shape[d]
    return lax.select(inside, flat, lax.full((), math.prod(o_shape), _I32))


def _scatter(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: Any,
    mode: Any,
    how: str,
) -> Any:
    x = _ops.as_tracer(operand)
    u = lax.astype(_ops.as_tracer(updates), np.dtype(x.dtype))
    o_shape, u_shape = tuple(x.shape), tuple(u.shape)
    dn = ScatterDimensionNumbers(*dimension_numbers)
    m = GatherScatterMode.from_any(mode)
    n = math.prod(u_shape)
    if n == 0:
        return x
    pos = _operand_positions(o_shape, scatter_indices, u_shape, dn, m)
    flat = lax.scatter(
        lax.reshape(x, (math.prod(o_shape),)),
        lax.reshape(pos, (n,)),
        lax.reshape(u, (n,)),
        0,
        how,
    )
    return lax.reshape(flat, o_shape)


def _scatter_fn(how: str, name: str, doc: str) -> Any:
    def fn(
        operand: Any,
        scatter_indices: Any,
        updates: Any,
        dimension_numbers: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
    ) -> Any:
        if how == "sub":
            updates = lax.neg(_ops.as_tracer(updates))
        return _scatter(
            operand,
            scatter_indices,
            updates,
            dimension_numbers,
            mode,
            "add" if how == "sub" else how,
        )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


scatter_add = _scatter_fn(
    "add",
    "scatter_add",
    "``operand`` with ``updates`` added at the scattered positions.",
)
scatter_sub = _scatter_fn(
    "sub",
    "scatter_sub",
    "``operand`` with ``updates`` subtracted at the scattered positions.",
)
scatter_mul = _scatter_fn(
    "mul",
    "scatter_mul",
    "``operand`` multiplied by ``updates`` at the scattered positions.",
)
scatter_min = _scatter_fn(
    "min",
    "scatter_min",
    "The minimum of ``operand`` and ``updates`` at the scattered positions.",
)
scatter_max = _scatter_fn(
    "max",
    "scatter_max",
    "The maximum of ``operand`` and ``updates`` at the scattered positions.",
)

__all__ = [
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "scatter_add",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "scatter_sub",
]

# Classes: bt.lax leaves them unwrapped.
NOT_OPERATIONS = frozenset({"GatherScatterMode", "ScatterDimensionNumbers"})
