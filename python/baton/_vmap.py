"""``bt.vmap``: vectorizing map, with JAX's arguments and errors.

The function is traced once on one example (each mapped argument without
its mapped axis), the program is batched in C++
(``compiler/transforms/batching.h``), and the batched program is inlined
with the original arguments, whose mapped axes stay where they are (the
batching rules move a batch dimension only where an op needs it). Values
the function closes over are unbatched. Outside a trace ``vmap`` runs
through a fresh ``bt.jit`` (see ``_subtrace``).
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any, Callable

import numpy as np
import optree

from baton import tree
from baton._baton import lax as _lax
from baton._subtrace import (
    argument_names,
    aval_of,
    check_args,
    fun_name,
    inline,
    is_tracing,
    run_eagerly,
    shape_of,
    trace,
    transforms,
    type_str,
)

__all__ = ["vmap"]


def _is_axis(x: Any) -> bool:
    return x is None or (isinstance(x, (int, np.integer)) and not isinstance(x, bool))


def _check_spec(spec: Any, what: str) -> None:
    for leaf in optree.tree_leaves(
        spec, is_leaf=lambda x: x is None, none_is_leaf=False, namespace=tree.NAMESPACE
    ):
        if not _is_axis(leaf):
            raise TypeError(
                f"vmap {what} must be an int, None, or (nested) container with "
                f"those types as leaves, but got {spec!r}."
            )


def _broadcast_spec(spec: Any, value: Any, what: str) -> list:
    """``spec`` (a pytree prefix of ``value`` with int / None leaves)
    broadcast to one entry per leaf of ``value``."""
    if _is_axis(spec):
        return [spec] * len(tree.leaves(value))
    try:
        full = optree.broadcast_prefix(
            spec,
            value,
            is_leaf=lambda x: x is None,
            none_is_leaf=False,
            namespace=tree.NAMESPACE,
        )
    except ValueError:
        raise ValueError(
            f"vmap {what} specification must be a tree prefix of the "
            f"corresponding value, got specification {spec!r} for value tree "
            f"{tree.structure(value)}."
        ) from None
    return full


def vmap(
    fun: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Any = None,
    axis_size: int | None = None,
    spmd_axis_name: Any = None,
) -> Callable[..., Any]:
    """``fun`` mapped over an axis of its arguments.

    ``in_axes``: an int, None, or a pytree prefix of the positional arguments
    (a tuple with one entry per argument; lists are taken as tuples) whose
    leaves are ints (the mapped axis, negative counts from the end) or None
    (not mapped). Keyword arguments are mapped over axis 0. ``out_axes``:
    likewise for the output (None: the output must not depend on mapped
    values). ``axis_size`` is needed when nothing is mapped. Mismatched
    sizes raise ValueError naming each argument, as in JAX.
    """
    if axis_name is not None or spmd_axis_name is not None:
        raise NotImplementedError(
            "vmap: axis_name / spmd_axis_name (collectives) are not supported"
        )
    if not callable(fun):
        raise TypeError(f"vmap: expected a function, not {type(fun).__name__}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    name = f"vmap({fun_name(fun)})"

    @functools.wraps(fun)
    def batched(*args: Any, **kwargs: Any) -> Any:
        if not is_tracing():
            return run_eagerly(batched, args, kwargs, name)
        return _vmap_traced(fun, in_axes, out_axes, axis_size, args, kwargs, name)

    return batched


def _vmap_traced(
    fun: Callable[..., Any],
    in_axes: Any,
    out_axes: Any,
    axis_size: int | None,
    args: tuple,
    kwargs: dict,
    name: str,
) -> Any:
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ValueError(
            "vmap in_axes must be an int, None, or a tuple of entries "
            "corresponding to the positional arguments passed to the function, "
            f"but got len(in_axes)={len(in_axes)}, len(args)={len(args)}"
        )
    leaves, in_tree = tree.flatten((tuple(args), kwargs))
    check_args(leaves, "vmap")
    axes = _broadcast_spec(in_axes, tuple(args), "in_axes") + [0] * len(
        tree.leaves(kwargs)
    )
    names = _leaf_names(fun, args, kwargs)
    # Normalize axes and find the batch size.
    dims: list[int] = []
    sizes: list[tuple[int, str, Any]] = []
    for leaf, ax, nm in zip(leaves, axes, names):
        if ax is None:
            dims.append(-1)
            continue
        shape = shape_of(leaf)
        ax = int(ax)
        if not -len(shape) <= ax < len(shape) or len(shape) == 0:
            raise ValueError(
                f"vmap was requested to map its argument along axis {ax}, which "
                f"implies that its rank should be at least "
                f"{ax + 1 if ax >= 0 else -ax}, but is only {len(shape)} (its "
                f"shape is {shape})"
            )
        ax = ax + len(shape) if ax < 0 else ax
        dims.append(ax)
        sizes.append(
            (shape[ax], f"axis {ax} of argument {nm} of type {type_str(leaf)}", leaf)
        )
    distinct = sorted({s for s, _, _ in sizes})
    if axis_size is not None:
        if distinct and distinct != [axis_size]:
            raise ValueError(
                f"vmap got axis_size={axis_size} but the mapped axes have sizes "
                f"{', '.join(str(s) for s in distinct)}: "
                + "; ".join(d for _, d, _ in sizes)
            )
        n = int(axis_size)
    elif not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes")
    elif len(distinct) > 1:
        raise ValueError(_inconsistent_sizes(sizes))
    else:
        n = distinct[0]

    # One example: each mapped argument without its mapped axis.
    avals = []
    for leaf, d in zip(leaves, dims):
        shape, dtype, weak, kind = aval_of(leaf)
        if d >= 0:
            shape = shape[:d] + shape[d + 1 :]
        avals.append((shape, dtype, weak, kind))
    out_tree_cell: list = []

    def flat_fn(*tracers: Any) -> list:
        a, k = tree.unflatten(in_tree, tracers)
        out = fun(*a, **k)
        out_leaves, out_tree = tree.flatten(out)
        out_tree_cell.append((out, out_tree))
        return out_leaves

    traced = trace(flat_fn, avals, name)
    in_dims = dims + [-1] * len(traced.lifted)
    program, out_batched = transforms.vmap(traced.program, in_dims, n)
    outs = inline(program, list(leaves) + list(traced.lifted), traced.out_weak)
    out_value, out_tree = out_tree_cell[-1]
    oaxes = _broadcast_spec(out_axes, out_value, "out_axes")
    results = []
    for t, batched_, ax in zip(outs, out_batched, oaxes):
        results.append(_place_output(t, batched_, ax, n))
    return tree.unflatten(out_tree, results)


def _inconsistent_sizes(sizes: list) -> str:
    """JAX's message: the most common size first, then the others."""
    counts = Counter(s for s, _, _ in sizes)
    lines = []
    common = counts.most_common(1)[0][0]
    order = [common] + [s for s in counts if s != common]
    for s in order:
        of = [d for sz, d, _ in sizes if sz == s]
        if len(of) == 1:
            lines.append(f"  * one axis had size {s}: {of[0]}")
        elif s == common:
            lines.append(
                f"  * most axes ({len(of)} of them) had size {s}, e.g. {of[0]}"
            )
        else:
            lines.append(
                f"  * some axes ({len(of)} of them) had size {s}, e.g. {of[0]}"
            )
    return "vmap got inconsistent sizes for array axes to be mapped:\n" + ";\n".join(
        lines
    )


def _place_output(t: Any, batched: bool, ax: Any, n: int) -> Any:
    """A batched output (batch dimension first) moved to ``ax``; an
    unbatched one broadcast along a new ``ax`` (None: left unbatched)."""
    if ax is None:
        if batched:
            raise ValueError(
                "vmap has mapped output but out_axes is None (the output "
                f"{type_str(t)} depends on a mapped input)"
            )
        return t
    rank = len(shape_of(t)) + (0 if batched else 1)
    ax = int(ax)
    if not -rank <= ax < rank:
        raise ValueError(
            f"vmap out_axes specification {ax} is out of bounds for an output "
            f"of rank {rank}"
        )
    ax = ax + rank if ax < 0 else ax
    if not batched:
        shape = list(shape_of(t))
        new_shape = (*shape[:ax], n, *shape[ax:])
        dims = [i for i in range(rank) if i != ax]
        r = _lax.broadcast_in_dim(t, new_shape, dims)
        return r
    if ax == 0:
        return t
    perm = list(range(1, rank))
    perm.insert(ax, 0)
    return _lax.transpose(t, perm)


def _leaf_names(fun: Any, args: tuple, kwargs: dict) -> list[str]:
    names = []
    roots = argument_names(fun, len(args))
    for root, a in zip(roots, args):
        paths, _, _ = tree.flatten_with_path(a)
        names.extend(root + tree.keystr(p) for p in paths)
    for k in sorted(kwargs):
        paths, _, _ = tree.flatten_with_path(kwargs[k])
        names.extend(k + tree.keystr(p) for p in paths)
    return names
