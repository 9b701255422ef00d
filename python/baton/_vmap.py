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

from collections import Counter
from typing import Any, Callable

import numpy as np
import optree

from baton import _batching_hook as hook
from baton import tree
from baton._baton import lax as _lax
from baton._eager_transform import transformation
from baton._subtrace import (
    argument_names,
    aval_of,
    check_args,
    fun_name,
    inline,
    shape_of,
    trace,
    transforms,
    type_str,
)

__all__ = ["batched_call", "mesh_axis_vmap", "vmap"]


# How in_axes / out_axes specs are read as pytrees: None is a leaf (not
# mapped), not an empty subtree.
_SPEC_TREE = {
    "is_leaf": lambda x: x is None,
    "none_is_leaf": False,
    "namespace": tree.NAMESPACE,
}


def _is_axis(x: Any) -> bool:
    """Whether ``x`` is a leaf of an axis spec: an int (not a bool) or None."""
    return x is None or (isinstance(x, (int, np.integer)) and not isinstance(x, bool))


def _check_spec(spec: Any, what: str) -> None:
    """TypeError (as JAX) unless every leaf of ``spec`` is an int or None."""
    for leaf in optree.tree_leaves(spec, **_SPEC_TREE):
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
        return optree.broadcast_prefix(spec, value, **_SPEC_TREE)
    except ValueError:
        raise ValueError(
            f"vmap {what} specification must be a tree prefix of the "
            f"corresponding value, got specification {spec!r} for value tree "
            f"{tree.structure(value)}."
        ) from None


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

    ``axis_name`` names the mapped axis for the collectives
    (``bt.lax.psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``,
    ``psum_scatter``, ``all_to_all``, ``ppermute``, ``pbroadcast``,
    ``axis_index``, ``axis_size``), which then combine the examples as
    shard_map's combine devices (``baton/_batched_collectives.py``).

    Example::

        f = bt.vmap(lambda x: x / bt.lax.psum(x, "i"), axis_name="i")
        f(bnp.arange(1.0, 5.0))   # [0.1, 0.2, 0.3, 0.4]
    """
    if spmd_axis_name is not None:
        raise NotImplementedError(
            "vmap: spmd_axis_name is not supported (baton's jit partitions a "
            "vmapped program by its arguments' shardings)"
        )
    if axis_name is not None:
        try:
            hash(axis_name)
        except TypeError:
            raise TypeError(
                f"vmap: axis_name must be hashable (a str), not {axis_name!r}"
            ) from None
    if not callable(fun):
        raise TypeError(f"vmap: expected a function, not {type(fun).__name__}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    return _vmapped(fun, in_axes, out_axes, axis_name, axis_size, False)


def mesh_axis_vmap(
    fun: Callable[..., Any],
    in_axes: Any,
    out_axes: Any,
    axis_name: Any,
    axis_size: int,
    check_vma: bool = True,
) -> Callable[..., Any]:
    """``vmap`` over one mesh axis of a shard_map called in a trace
    (``_shard_map_trace``): as ``vmap(fun, in_axes, out_axes, axis_name,
    axis_size)``, but with ``check_vma`` a ``grad`` taken inside over a
    collective differentiates with shard_map's semantics (JAX's
    ``check_vma=True``), not vmap's (JAX's ``check_vma=False`` is vmap's):
    see ``_transform_batching``."""
    return _vmapped(fun, in_axes, out_axes, axis_name, axis_size, check_vma)


def _vmapped(
    fun: Callable[..., Any],
    in_axes: Any,
    out_axes: Any,
    axis_name: Any,
    axis_size: int | None,
    check_vma: bool,
) -> Callable[..., Any]:
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    name = f"vmap({fun_name(fun)})"

    def batched(*args: Any, **kwargs: Any) -> Any:
        return _vmap_traced(
            fun, in_axes, out_axes, axis_size, args, kwargs, name, axis_name,
            check_vma=check_vma,
        )

    return transformation(fun, name, batched)


def batched_call(
    fun: Callable[..., Any],
    in_axes: tuple,
    leaves: list,
    axis_name: Any,
    axis_size: int,
    check_vma: bool,
) -> tuple[Any, Any]:
    """``fun(*leaves)`` vmapped (in a trace) with ``in_axes`` (0 or None
    per leaf), each output left as batching made it: returns the output
    (a batched leaf with the batch dimension first, an unbatched one as one
    example's value) and a pytree of bools of its structure saying which
    leaves are batched. ``check_vma``: as :func:`mesh_axis_vmap`'s. For the
    rules of transformations called in a vmap body
    (``_transform_batching``), which must know which results depend on the
    example."""
    return _vmap_traced(
        fun, tuple(in_axes), 0, axis_size, tuple(leaves), {},
        f"vmap({fun_name(fun)})", axis_name, check_vma=check_vma, keep=True,
    )


def _vmap_traced(
    fun: Callable[..., Any],
    in_axes: Any,
    out_axes: Any,
    axis_size: int | None,
    args: tuple,
    kwargs: dict,
    name: str,
    axis_name: Any = None,
    check_vma: bool = False,
    keep: bool = False,
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
    dims, sizes = _mapped_dims(leaves, axes, _leaf_names(fun, args, kwargs))
    n = _batch_size(sizes, axis_size)

    # One example: each mapped argument without its mapped axis.
    avals = []
    for leaf, d in zip(leaves, dims):
        shape, dtype, weak, kind = aval_of(leaf)
        if d >= 0:
            shape = shape[:d] + shape[d + 1 :]
        avals.append((shape, dtype, weak, kind))
    n_user = len(avals)
    if axis_name is not None:
        # Each example's index along the named axis: a batched argument the
        # body sees as a scalar (axis_index is then a value of the trace).
        index = _lax.iota("int32", (n,), 0)
        leaves = list(leaves) + [index]
        dims = dims + [0]
        avals.append(((),) + aval_of(index)[1:])
    # Calls with a batching rule (custom_vmap) are batched by their rule, one
    # tracing round each (_batching_hook): their batched results are extra
    # arguments of the later rounds.
    calls: list = []  # (out_tree, per-example avals, arg avals) per call
    extra_values: list = []
    extra_dims: list = []
    nb = len(avals)
    while True:
        cell: dict = {}

        def flat_fn(*tracers: Any, cell: dict = cell) -> list:
            known, pos = [], nb
            for out_tree, out_avals, arg_avals in calls:
                m = len(out_avals)
                known.append((out_tree, list(tracers[pos : pos + m]), arg_avals))
                pos += m
            rnd = hook.Round(known, fun_name(fun), axis_name, n, check_vma=check_vma)
            if axis_name is not None:
                rnd.index = tracers[n_user]
            with hook.rounds(rnd, tracers[0] if tracers else None):
                a, k = tree.unflatten(in_tree, tracers[:n_user])
                try:
                    cell["out"] = fun(*a, **k)
                except hook.Stop as here:
                    if here.round is not rnd:
                        raise
                    cell["stop"] = here
                    cell["arg_avals"] = [aval_of(x)[:2] for x in here.leaves]
                    return [_lax.as_tracer(x) for x in here.leaves]
            out_leaves, cell["out_tree"] = tree.flatten(cell["out"])
            return out_leaves

        extra_avals = [a for _, out_avals, _ in calls for a in out_avals]
        traced = trace(flat_fn, avals + extra_avals, name)
        in_dims = dims + extra_dims + [-1] * len(traced.lifted)
        program, out_batched = transforms.vmap(traced.program, in_dims, n)
        outs = inline(
            program,
            list(leaves) + extra_values + list(traced.lifted),
            traced.out_weak,
        )
        stop = cell.get("stop")
        if stop is None:
            break
        out_tree, results, res_batched = _apply_rule(stop, outs, out_batched, n)
        calls.append(
            (
                out_tree,
                [_example_aval(r, b) for r, b in zip(results, res_batched)],
                cell["arg_avals"],
            )
        )
        extra_values += results
        extra_dims += [0 if b else -1 for b in res_batched]
    if keep:
        return (
            tree.unflatten(cell["out_tree"], outs),
            tree.unflatten(cell["out_tree"], [bool(b) for b in out_batched]),
        )
    oaxes = _broadcast_spec(out_axes, cell["out"], "out_axes")
    results = [_place_output(t, b, ax, n) for t, b, ax in zip(outs, out_batched, oaxes)]
    return tree.unflatten(cell["out_tree"], results)


def _example_aval(x: Any, batched: bool) -> tuple:
    """The aval of one example of ``x`` (batched: without its leading
    batch dimension)."""
    shape, dtype, weak, kind = aval_of(x)
    return (shape[1:] if batched else shape, dtype, weak, kind)


def _rule_name(rule: Any) -> str:
    return getattr(rule, "__name__", "<unnamed rule>")


def _apply_rule(
    stop: hook.Stop, args: list, batched: list, n: int
) -> tuple[Any, list, list]:
    """A ruled call's batched result, in the enclosing trace: its rule on
    the batched arguments (batch dimension first), or its plain function
    when no argument is batched (as JAX binds the call one level down).
    Returns (output structure, output leaves, which are batched)."""
    name = stop.name
    call_args = tree.unflatten(stop.in_tree, list(args))
    # The function's own output structure, for the checks (traced with no
    # round applying, so that calls inside it run their bodies).
    cell: dict = {}

    def body_fn(*ts: Any) -> list:
        with hook.suspended(), hook.derivative_defined():
            leaves, cell["tree"] = tree.flatten(
                stop.body(*tree.unflatten(stop.in_tree, list(ts)))
            )
        return leaves

    trace(
        body_fn,
        [_example_aval(a, b) for a, b in zip(args, batched)],
        f"{name} (output structure)",
    )
    fun_tree = cell["tree"]
    if not any(batched):
        out = stop.body(*call_args)
        leaves, t = tree.flatten(out)
        return t, [_lax.as_tracer(x) for x in leaves], [False] * len(leaves)
    in_batched = list(tree.unflatten(stop.in_tree, list(batched)))
    r = stop.rule(n, in_batched, *call_args)
    if not isinstance(r, (tuple, list)) or len(r) != 2:
        raise TypeError(
            f"custom vmap rule ({_rule_name(stop.rule)}) for {name} must return a "
            f"pair (batched output, output batched flags), got {r!r}"
        )
    out, out_batched = r
    leaves, t1 = tree.flatten(out)
    flags, t2 = tree.flatten(out_batched)
    if t1 != t2:
        raise ValueError(
            "structure of output value and output batching specification returned "
            f"by custom vmap rule ({_rule_name(stop.rule)}) do not match.\n"
            f"Output values: {t1}\n"
            f"Batching spec: {t2}"
        )
    if t1 != fun_tree:
        raise ValueError(
            f"structure of output returned by custom vmap rule "
            f"({_rule_name(stop.rule)}) does not match that of original "
            "custom-vmapped function.\n"
            f"Original output: {fun_tree}\n"
            f"Rule output: {t1}"
        )
    results, res_batched = [], []
    for x, b in zip(leaves, flags):
        if not isinstance(b, (bool, np.bool_)):
            raise TypeError(
                f"custom vmap rule ({_rule_name(stop.rule)}) for {name}: the output "
                f"batching specification must have bool leaves, got {b!r}"
            )
        x = _lax.as_tracer(x)
        if b and (len(x.shape) == 0 or x.shape[0] != n):
            raise ValueError(
                f"custom vmap rule ({_rule_name(stop.rule)}) for {name} returned an "
                f"output of shape {tuple(x.shape)} marked batched, but batched "
                f"outputs must have the batch size {n} as their leading dimension"
            )
        results.append(x)
        res_batched.append(bool(b))
    return t1, results, res_batched


def _mapped_dims(
    leaves: list, axes: list, names: list[str]
) -> tuple[list[int], list[tuple[int, str]]]:
    """Each leaf's mapped dimension (non-negative; -1: not mapped), and for
    each mapped leaf its size and how messages describe it (ValueError, as
    JAX, for an axis beyond a leaf's rank)."""
    dims: list[int] = []
    sizes: list[tuple[int, str]] = []
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
            (shape[ax], f"axis {ax} of argument {nm} of type {type_str(leaf)}")
        )
    return dims, sizes


def _batch_size(sizes: list[tuple[int, str]], axis_size: int | None) -> int:
    """The size of the mapped axis: ``axis_size`` or the mapped leaves'
    common size (ValueError, as JAX, when they disagree or there is none)."""
    distinct = sorted({s for s, _ in sizes})
    if axis_size is not None:
        if distinct and distinct != [axis_size]:
            raise ValueError(
                f"vmap got axis_size={axis_size} but the mapped axes have sizes "
                f"{', '.join(str(s) for s in distinct)}: "
                + "; ".join(d for _, d in sizes)
            )
        return int(axis_size)
    if not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes")
    if len(distinct) > 1:
        raise ValueError(_inconsistent_sizes(sizes))
    return distinct[0]


def _inconsistent_sizes(sizes: list) -> str:
    """JAX's message: the most common size first, then the others."""
    counts = Counter(s for s, _ in sizes)
    lines = []
    common = counts.most_common(1)[0][0]
    order = [common] + [s for s in counts if s != common]
    for s in order:
        of = [d for sz, d in sizes if sz == s]
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
        return _lax.broadcast_in_dim(t, new_shape, dims)
    if ax == 0:
        return t
    perm = list(range(1, rank))
    perm.insert(ax, 0)
    return _lax.transpose(t, perm)


def _leaf_names(fun: Any, args: tuple, kwargs: dict) -> list[str]:
    """How messages name each argument leaf, in flattening order: its
    argument's name followed by the leaf's path in that argument."""
    named = [*zip(argument_names(fun, len(args)), args)]
    named += [(k, kwargs[k]) for k in sorted(kwargs)]
    names = []
    for root, value in named:
        paths, _, _ = tree.paths_and_leaves(value)
        names.extend(root + tree.keystr(p) for p in paths)
    return names
