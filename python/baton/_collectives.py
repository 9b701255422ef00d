"""Collectives inside ``bt.shard_map`` (``bt.lax.psum`` ..., DESIGN 5.6).

Each takes ``axis_name`` -- a mesh axis name or a tuple of them -- and
combines the values of the devices that differ only along those axes (the
*group*; members ordered by their position on the named axes, major to
minor). Each device's result is computed on that device from copies of the
other members' values (direct device-to-device copies ordered on the
devices' queues; no network inside one process), in the same order on every
device, so a ``psum`` leaves bitwise equal values everywhere.

``x`` may be a pytree of arrays; each leaf is combined on its own. A
Python scalar ``x`` of ``psum`` gives ``x * group size`` (``psum(1, "x")`` is
the axis size, as in JAX).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import baton.numpy as bnp
from baton import _batched_collectives as _batched
from baton import _device_put, _process_collectives, tree
from baton._baton import Array, Donated
from baton._baton import lax as _baton_lax
from baton._shard_map import DeviceContext, current_context
from baton.sharding import _group_index

_Tracer = _baton_lax.Tracer

__all__ = [
    "all_gather",
    "all_to_all",
    "axis_index",
    "axis_size",
    "pbroadcast",
    "pcast",
    "pmax",
    "pmean",
    "pmin",
    "ppermute",
    "pshuffle",
    "psum",
    "psum_scatter",
    "pswapaxes",
]


def _axes(ctx: DeviceContext, axis_name: Any, what: str) -> tuple[str, ...]:
    names = (axis_name,) if isinstance(axis_name, str) else tuple(axis_name)
    for n in names:
        if n not in ctx.mesh.shape:
            raise ValueError(
                f"{what}: axis {n!r} is not an axis of the shard_map's mesh "
                f"{ctx.mesh.axis_names}"
            )
    if len(set(names)) != len(names):
        raise ValueError(f"{what}: axis_name {names} repeats an axis")
    return names


def _group(ctx: DeviceContext, names: tuple[str, ...]) -> tuple[list, int, tuple]:
    """(members as sorted position tuples in group order, my index, group key)."""
    sizes = [ctx.mesh.shape[n] for n in names]
    me = _group_index(ctx.mesh, ctx.position, names)
    members = []
    for k in range(math.prod(sizes)):
        pos = dict(ctx.position)
        rest = k
        for n, s in reversed(list(zip(names, sizes))):
            pos[n] = rest % s
            rest //= s
        members.append(tuple(sorted(pos.items())))
    key = tuple((a, ctx.position[a]) for a in ctx.mesh.axis_names if a not in names)
    return members, me, key


def _as_array(x: Any, device: Any, what: str) -> Array:
    if isinstance(x, _Tracer):  # shard_map's output check traces the body
        return x
    if isinstance(x, Donated):
        raise TypeError(f"{what}: a donate() marker is not a value to combine")
    if isinstance(x, Array):
        x._check_live()
        return x
    return _device_put.device_put(x, device)


def _swap(
    ctx: DeviceContext,
    names: tuple[str, ...],
    x: Array,
    what: str,
    attrs: dict | None = None,
) -> tuple[list, int]:
    members, me, key = _group(ctx, names)
    if ctx.vma is not None:
        # shard_map's output check (baton/_shard_map_vma.py): the members'
        # values are stood in for by one fresh parameter of the trace.
        v = _stand_in(ctx, what, names, x, attrs)
        if _exact(ctx):
            # shard_map's compiled body: v is the collective's result.
            return [v], me
        return [v] * math.prod(ctx.mesh.shape[n] for n in names), me
    ctx.count += 1
    if _process_collectives.crosses_processes(ctx, members):
        values = _process_collectives.gather_group(ctx, members, x, what)
    else:
        values = ctx.exchange.swap((ctx.count, names, key), members, me, x, what)
    shapes = {(tuple(v.shape), v.dtype) for v in values}
    if len(shapes) != 1:
        raise ValueError(
            f"{what}: the devices of the group passed different arrays "
            f"{sorted((str(d), s) for s, d in shapes)}; each must pass the same shape "
            "and dtype"
        )
    return values, me


def _stand_in(
    ctx: DeviceContext, what: str, names: tuple, x: Any, attrs: dict | None = None
) -> Any:
    """In shard_map's output check: a value shaped like ``x`` standing for
    the result of collective ``what`` (baton/_shard_map_vma.py); ``attrs``
    what a collective that moves blocks was asked."""
    p = ctx.vma.stand_in(what, names, x, attrs)
    if _exact(ctx):
        return p  # shard_map's compiled body: exactly the result's type
    like = np.asarray(x) if not hasattr(x, "dtype") else x
    return bnp.broadcast_to(p.astype(like.dtype), tuple(like.shape))


def _exact(ctx: DeviceContext) -> bool:
    """Whether this is shard_map's compiled trace
    (baton/_shard_map_compile.py), where a collective's result is a
    parameter of exactly its type."""
    return getattr(ctx.vma, "exact", False)


def _here(v: Array, device: Any) -> Array:
    if isinstance(v, _Tracer):
        return v
    return v if v.device == device else _device_put.device_put(v, device)


def _each(x: Any, fn: Any) -> Any:
    return tree.map(fn, x)


def _reduce(x: Any, axis_name: Any, op: str, what: str) -> Any:
    if _batched.applies(axis_name, what):
        names = _batched.names_of(axis_name)
        leaves = tree.leaves(x)
        if all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in leaves
        ):  # psum(1, "i"): the axis size, a Python number (as JAX)
            n = _batched.axis_size(names)
            return tree.map(lambda v: v * n if op == "sum" else v, x)
        return _batched.call(
            x,
            names,
            what,
            _batched.reduce_rule(
                names, op, lambda v, rest: _reduce(v, rest, op, what)
            ),
        )
    ctx = current_context(what)
    names = _axes(ctx, axis_name, what)
    combine = {"sum": bnp.add, "max": bnp.maximum, "min": bnp.minimum}[op]

    def one(leaf: Any) -> Any:
        if (
            op == "sum"
            and isinstance(leaf, (int, float))
            and not isinstance(leaf, bool)
        ):
            return leaf * math.prod(ctx.mesh.shape[n] for n in names)
        a = _as_array(leaf, ctx.device, what)
        members, _, _ = _group(ctx, names)
        if (
            ctx.vma is None
            and _process_collectives.crosses_processes(ctx, members)
            and _process_collectives.allreduce_eligible(ctx, names)
        ):
            ctx.count += 1
            return _device_put.device_put(
                _process_collectives.allreduce(ctx, a, op, what), ctx.device
            )
        values, _ = _swap(ctx, names, a, what)
        acc = _here(values[0], ctx.device)
        for v in values[1:]:
            acc = combine(acc, _here(v, ctx.device))
        return acc

    return _each(x, one)


def psum(x: Any, axis_name: Any) -> Any:
    """The sum of ``x`` over the group, on every member."""
    return _reduce(x, axis_name, "sum", "psum")


def pmax(x: Any, axis_name: Any) -> Any:
    """The elementwise maximum of ``x`` over the group."""
    return _reduce(x, axis_name, "max", "pmax")


def pmin(x: Any, axis_name: Any) -> Any:
    """The elementwise minimum of ``x`` over the group."""
    return _reduce(x, axis_name, "min", "pmin")


def pmean(x: Any, axis_name: Any) -> Any:
    """The mean of ``x`` over the group (``psum / group size``)."""
    if _batched.applies(axis_name, "pmean"):
        n = _batched.axis_size(axis_name)
        return tree.map(lambda s: s / n, _reduce(x, axis_name, "sum", "pmean"))
    ctx = current_context("pmean")
    n = math.prod(ctx.mesh.shape[a] for a in _axes(ctx, axis_name, "pmean"))
    return tree.map(lambda s: s / n, _reduce(x, axis_name, "sum", "pmean"))


def axis_index(axis_name: Any) -> Array:
    """This device's index along ``axis_name`` (int32, on this device)."""
    if _batched.applies(axis_name, "axis_index"):
        return _batched.axis_index(axis_name)
    ctx = current_context("axis_index")
    names = _axes(ctx, axis_name, "axis_index")
    _, me, _ = _group(ctx, names)
    if ctx.vma is not None:
        return _stand_in(ctx, "axis_index", names, np.int32(me))
    return _device_put.device_put(np.int32(me), ctx.device)


def axis_size(axis_name: Any) -> int:
    """The number of devices along ``axis_name`` (a Python int)."""
    if _batched.applies(axis_name, "axis_size"):
        return _batched.axis_size(axis_name)
    ctx = current_context("axis_size")
    return math.prod(ctx.mesh.shape[a] for a in _axes(ctx, axis_name, "axis_size"))


def _axis(axis: int, rank: int, what: str) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"{what}: axis {axis} is out of range for rank {rank}")
    return axis % rank


def all_gather(x: Any, axis_name: Any, *, axis: int = 0, tiled: bool = False) -> Any:
    """Every member's ``x``, stacked on a new dimension ``axis`` in group
    order (``tiled=True``: concatenated along ``axis``)."""
    if _batched.applies(axis_name, "all_gather"):
        names = _batched.names_of(axis_name)
        if len(names) > 1:  # the minor axes first, then the major one tiled
            inner = all_gather(x, names[1:], axis=axis, tiled=tiled)
            return all_gather(inner, names[0], axis=axis, tiled=True)
        return _batched.call(
            x,
            names,
            "all_gather",
            _batched.all_gather_rule(
                names,
                axis,
                tiled,
                lambda v, d: all_gather(v, axis_name, axis=d, tiled=tiled),
            ),
        )
    ctx = current_context("all_gather")
    names = _axes(ctx, axis_name, "all_gather")

    def one(leaf: Any) -> Any:
        a = _as_array(leaf, ctx.device, "all_gather")
        attrs = {
            "dimension": _axis(axis, a.ndim + (0 if tiled else 1), "all_gather"),
            "tiled": bool(tiled),
        }
        if _exact(ctx):
            return _stand_in(ctx, "all_gather", names, a, attrs)
        values, _ = _swap(ctx, names, a, "all_gather", attrs)
        here = [_here(v, ctx.device) for v in values]
        if tiled:
            return bnp.concatenate(here, axis=_axis(axis, values[0].ndim, "all_gather"))
        return bnp.stack(here, axis=_axis(axis, values[0].ndim + 1, "all_gather"))

    return _each(x, one)


def _block(v: Array, dim: int, k: int, n: int, keep: bool) -> Array:
    size = v.shape[dim] // n
    index = [slice(None)] * v.ndim
    index[dim] = slice(k * size, (k + 1) * size) if keep else k
    return v[tuple(index)]


def _my_blocks(
    ctx: DeviceContext,
    names: tuple,
    a: Array,
    dim: int,
    tiled: bool,
    what: str,
    attrs: dict,
) -> tuple[list, Array]:
    """Block ``me`` along ``dim`` of every member's value, copied here (for
    member ``me`` of the group), and this device's value."""
    values, me = _swap(ctx, names, a, what, attrs)
    n = len(values)
    if (tiled and a.shape[dim] % n) or (not tiled and a.shape[dim] != n):
        need = "divisible by" if tiled else "equal to"
        raise ValueError(
            f"{what}: dimension {dim} of size {a.shape[dim]} cannot be split over "
            f"{n} devices (a size {need} the group size is needed; tiled={tiled})"
        )
    return [_here(_block(v, dim, me, n, tiled), ctx.device) for v in values], a


def psum_scatter(
    x: Any, axis_name: Any, *, scatter_dimension: int = 0, tiled: bool = False
) -> Any:
    """The sum over the group, of which member i keeps block i along
    ``scatter_dimension`` (``tiled=False``: that dimension must equal the
    group size and is removed; ``tiled=True``: divided by it)."""
    what = "psum_scatter"
    if _batched.applies(axis_name, what):
        names = _batched.names_of(axis_name)
        if len(names) > 1:  # the major axis's blocks first, then the minor
            outer = psum_scatter(
                x, names[0], scatter_dimension=scatter_dimension, tiled=True
            )
            return psum_scatter(
                outer, names[1:], scatter_dimension=scatter_dimension, tiled=tiled
            )
        return _batched.call(
            x,
            names,
            what,
            _batched.psum_scatter_rule(
                names,
                scatter_dimension,
                tiled,
                lambda v, d: psum_scatter(
                    v, axis_name, scatter_dimension=d, tiled=tiled
                ),
            ),
        )
    ctx = current_context(what)
    names = _axes(ctx, axis_name, what)

    def one(leaf: Any) -> Any:
        a = _as_array(leaf, ctx.device, what)
        dim = _axis(scatter_dimension, a.ndim, what)
        attrs = {"dimension": dim, "tiled": bool(tiled)}
        if _exact(ctx):
            return _stand_in(ctx, what, names, a, attrs)
        parts, _ = _my_blocks(ctx, names, a, dim, tiled, what, attrs)
        acc = parts[0]
        for part in parts[1:]:
            acc = bnp.add(acc, part)
        return acc

    return _each(x, one)


def all_to_all(
    x: Any, axis_name: Any, split_axis: int, concat_axis: int, *, tiled: bool = False
) -> Any:
    """Member i sends block j of ``x`` along ``split_axis`` to member j, and
    concatenates what it receives along ``concat_axis`` in group order
    (``tiled=False``: ``split_axis`` must equal the group size and is removed,
    and the received blocks are stacked on a new ``concat_axis``)."""
    what = "all_to_all"
    if _batched.applies(axis_name, what):
        names = _batched.names_of(axis_name)
        return _batched.call(
            x,
            names,
            what,
            _batched.all_to_all_rule(
                names,
                split_axis,
                concat_axis,
                tiled,
                lambda v, s, c: all_to_all(v, axis_name, s, c, tiled=tiled),
            ),
        )
    ctx = current_context(what)
    names = _axes(ctx, axis_name, what)

    def one(leaf: Any) -> Any:
        a = _as_array(leaf, ctx.device, what)
        dim = _axis(split_axis, a.ndim, what)
        concat = _axis(concat_axis, a.ndim, what)
        attrs = {"dimension": dim, "concat": concat, "tiled": bool(tiled)}
        if _exact(ctx):
            return _stand_in(ctx, what, names, a, attrs)
        parts, _ = _my_blocks(ctx, names, a, dim, tiled, what, attrs)
        join = bnp.concatenate if tiled else bnp.stack
        return join(parts, axis=concat)

    return _each(x, one)


def _group_of(axis_name: Any, what: str) -> tuple:
    """(over vmap axes?, the shard_map context or None, the axis names,
    the group's size) of a collective over ``axis_name``."""
    if _batched.applies(axis_name, what):
        return True, None, _batched.names_of(axis_name), _batched.axis_size(axis_name)
    ctx = current_context(what)
    names = _axes(ctx, axis_name, what)
    return False, ctx, names, math.prod(ctx.mesh.shape[a] for a in names)


def ppermute(x: Any, axis_name: Any, perm: Any) -> Any:
    """Member ``dst`` receives member ``src``'s ``x`` for each ``(src, dst)``
    of ``perm`` (each index at most once as a source and once as a
    destination); members no pair sends to receive zeros."""
    what = "ppermute"
    pairs = [(int(s), int(d)) for s, d in perm]
    batched, ctx, names, n = _group_of(axis_name, what)
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"{what}: perm {pairs} repeats a source or a destination")
    if any(not 0 <= i < n for i in srcs + dsts):
        raise ValueError(f"{what}: perm {pairs} has an index outside 0..{n - 1}")

    sources = [next((s for s, d in pairs if d == k), -1) for k in range(n)]
    if batched:
        return _batched.call(
            x,
            names,
            what,
            _batched.permute_rule(
                names, sources, lambda v: ppermute(v, axis_name, perm), what
            ),
        )

    def one(leaf: Any) -> Any:
        a = _as_array(leaf, ctx.device, what)
        attrs = {"sources": sources}
        if _exact(ctx):
            return _stand_in(ctx, what, names, a, attrs)
        values, me = _swap(ctx, names, a, what, attrs)
        src = next((s for s, d in pairs if d == me), None)
        if src is None:
            if ctx.vma is not None:  # the output check: varying all the same
                return values[0]
            return bnp.zeros_like(a)
        return _here(values[src], ctx.device)

    return _each(x, one)


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Every member gets member ``source``'s ``x`` (index in group order);
    JAX's CollectiveBroadcast."""
    what = "pbroadcast"
    batched, ctx, names, n = _group_of(axis_name, what)
    src = int(source)
    if not 0 <= src < n:
        raise ValueError(f"{what}: source {source} is outside 0..{n - 1}")
    if batched:
        return _batched.call(
            x,
            names,
            what,
            _batched.permute_rule(
                names, [src] * n, lambda v: pbroadcast(v, axis_name, source), what
            ),
        )

    def one(leaf: Any) -> Any:
        a = _as_array(leaf, ctx.device, what)
        attrs = {"sources": [src] * n}
        if _exact(ctx):
            return _stand_in(ctx, what, names, a, attrs)
        values, _ = _swap(ctx, names, a, what, attrs)
        return _here(values[src], ctx.device)

    return _each(x, one)


def pshuffle(x: Any, axis_name: Any, perm: Any) -> Any:
    """Member i gets member ``perm[i]``'s ``x`` (``perm`` a permutation of
    the group's indices): ``ppermute`` with pairs ``(perm[i], i)``."""
    perm = [int(p) for p in perm]
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pswapaxes(
    x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None
) -> Any:
    """``all_to_all(x, axis_name, axis, axis)``: dimension ``axis`` (of the
    group's size) swaps places with the mapped axis. ``axis_index_groups``
    is not supported (shard_map's collectives take mesh axes instead)."""
    if axis_index_groups is not None:
        raise ValueError(
            "pswapaxes: axis_index_groups is not supported by baton's "
            "collectives; name mesh axes in axis_name instead"
        )
    return all_to_all(x, axis_name, axis, axis)


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """``x`` marked as varying over ``axis_name`` (``to="varying"``), for
    shard_map's output check: the values are unchanged, but an output
    computed from ``x`` then counts as varying over those axes (JAX's
    ``pvary``). ``to="reduced"`` / ``"unreduced"`` are JAX's
    reduced/unreduced types, which baton does not have.

    Example::

        f = bt.shard_map(lambda x: bt.lax.pcast(bnp.ones(2), "i", to="varying"),
                         mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    """
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(
            f"axis_name={axis_name} must be a tuple or a str. Got {axis_name}"
        )
    if not axis_name:
        return x
    if to not in ("varying", "reduced", "unreduced"):
        raise ValueError(
            "Got unexpected `to` value. Allowed `to` values are: "
            "{'varying', 'reduced', 'unreduced'}"
        )
    if to != "varying":
        raise NotImplementedError(
            f"pcast(to={to!r}): baton has no reduced / unreduced array types; "
            "only to='varying' is supported"
        )
    if _batched.applies(axis_name, "pcast"):
        return x  # vmap batches what varies by itself
    ctx = current_context("pcast")
    names = _axes(ctx, axis_name, "pcast")
    if ctx.vma is None:
        return x  # the values do not change; only the output check sees it
    return _each(x, lambda leaf: _stand_in(ctx, "pcast", names, leaf))
