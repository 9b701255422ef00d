"""``bt.shard_map`` called inside a traced function (``bt.jit``, ``grad``,
``vmap``, a ``lax`` loop body): the body vmapped over the mesh axes.

A shard_map over mesh axes ``a1 .. ak`` is, as a function of the global
arrays, a vmap over each axis: every argument's dimension split over axes
(``P(("a1", "a2"))``) is reshaped into one dimension per axis, of the
axis's size, before the block's own (``(n1, n2, block)``); each axis is one
``bt.vmap`` with ``axis_name`` (outermost: the mesh's first axis), mapping
the arguments whose spec names it and broadcasting the others; the
collectives in the body combine the examples of the vmap over their axis
(``_batched_collectives``); each output's mesh dimensions are placed as its
out spec says and merged back into the global array (an axis its out spec
leaves out: ``out_axes=None``, so an output that varies along it is
refused, as JAX's ``check_vma``). The program is then ordinary: ``grad`` /
``vmap`` / ``jit`` transform it as any other (JAX's shard_map transposes
alike: the derivative of the global function), and ``jit``'s SPMD
partitioner splits it over the devices of its sharded arguments -- the
reshaped arguments and the outputs are constrained to their mesh axes
(``with_sharding_constraint``), so each device computes its blocks and a
collective becomes the all-reduce / all-gather its sum or gather needs. A
program of unsharded arguments runs on one device (the constraints do
nothing there), with the same values.

A ``grad`` taken inside the body over a collective differentiates as
JAX's shard_map with the same ``check_vma`` does (``_transform_batching``:
with it, a replicated argument's gradient is summed over the devices).

Limits, besides those of ``_batched_collectives`` (a collective inside a
``custom_jvp`` / ``custom_vjp`` function of the shard_map'ed function; ``ppermute`` /
``all_to_all`` / ``pbroadcast`` over several axes): an output varying along
an axis its spec leaves out is refused even with ``check_vma=False`` (JAX
then returns one device's value).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import optree

from baton import _batching_hook as hook
from baton import _donation, _jit, _shard_map, _vmap, tree
from baton._baton import lax as _lax
from baton._sharding_api import with_sharding_constraint
from baton.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["run_traced"]


def _rank(x: Any) -> int:
    return len(x.shape) if hasattr(x, "shape") else int(np.ndim(x))


def _entry_names(entry: Any) -> tuple:
    """The mesh axes of one dimension's spec entry (None: none)."""
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


class _Layout:
    """An array's dimensions with its mesh axes split out: each dimension
    ``d`` of the block becomes ``[one per axis of spec[d]] + [d]``;
    ``axis_dim`` maps a mesh axis to its dimension in that layout."""

    def __init__(self, spec: PartitionSpec, rank: int, mesh: Mesh, what: str) -> None:
        entries = list(spec) + [None] * (rank - len(spec))
        if len(entries) > rank:
            raise ValueError(
                f"shard_map: {what} has rank {rank} but its spec {spec} names "
                f"{len(entries)} dimensions"
            )
        self.dims: list = []  # ("mesh", axis) or ("block", d)
        self.axis_dim: dict = {}
        for d, entry in enumerate(entries):
            for a in _entry_names(entry):
                if a not in mesh.shape:
                    raise ValueError(
                        f"shard_map: {what}'s spec {spec} names {a!r}, which is "
                        f"not an axis of the mesh {tuple(mesh.axis_names)}"
                    )
                if a in self.axis_dim:
                    raise ValueError(
                        f"shard_map: {what}'s spec {spec} names the axis {a!r} "
                        "twice"
                    )
                self.axis_dim[a] = len(self.dims)
                self.dims.append(("mesh", a))
            self.dims.append(("block", d))
        self.entries = entries

    def position(self, axis: str, axes: tuple) -> int | None:
        """Where ``axis`` is for its vmap: in this layout without the mesh
        dimensions of the axes before it (outer vmaps, mapped already)."""
        if axis not in self.axis_dim:
            return None
        k = axes.index(axis)
        outer = set(axes[:k])
        kept = [t for t in self.dims if not (t[0] == "mesh" and t[1] in outer)]
        return kept.index(("mesh", axis))


def _split(x: Any, layout: _Layout, mesh: Mesh, where: str) -> Any:
    """The global array ``x`` reshaped to ``layout`` (its mesh dimensions
    constrained to their axes)."""
    x = _lax.as_tracer(x)
    shape = list(x.shape)
    new_shape: list = []
    spec: list = []
    for d, entry in enumerate(layout.entries):
        names = _entry_names(entry)
        n = math.prod(mesh.shape[a] for a in names)
        if shape[d] % n:
            raise ValueError(
                f"shard_map: {where} has shape {tuple(shape)}, whose dimension "
                f"{d} ({shape[d]}) is not divisible by {n}, the size of the mesh "
                f"axes {names} its spec splits it over"
            )
        new_shape += [mesh.shape[a] for a in names] + [shape[d] // n]
        spec += list(names) + [None]
    y = _lax.reshape(x, tuple(new_shape))
    return with_sharding_constraint(y, NamedSharding(mesh, PartitionSpec(*spec)))


def _merge(y: Any, layout: _Layout, mesh: Mesh) -> Any:
    """The vmapped output ``y`` (in ``layout``) as the global array,
    constrained to its out spec."""
    shape: list = []
    i = 0
    for entry in layout.entries:
        names = _entry_names(entry)
        size = 1
        for _ in range(len(names) + 1):
            size *= y.shape[i]
            i += 1
        shape.append(size)
    out = _lax.reshape(y, tuple(shape))
    spec = PartitionSpec(*layout.entries)
    return with_sharding_constraint(out, NamedSharding(mesh, spec))


def _out_axes(out_specs: Any, axis: str, axes: tuple, mesh: Mesh) -> Any:
    """vmap's out_axes for ``axis``: ``out_specs`` with each spec replaced
    by the position of ``axis`` in its layout (None where it leaves the
    axis out). The position depends on the spec alone (dimensions past the
    spec's length come after)."""

    def one(spec: PartitionSpec) -> int | None:
        return _Layout(spec, len(spec), mesh, f"out_specs {spec}").position(axis, axes)

    return optree.tree_map(
        one,
        out_specs,
        is_leaf=lambda x: isinstance(x, PartitionSpec),
        none_is_leaf=False,
        namespace=tree.NAMESPACE,
    )


def run_traced(
    f: Callable[..., Any],
    mesh: Mesh,
    specs: list,
    out_specs: Any,
    leaves: list,
    treedef: Any,
    paths: list,
    out_specs_of: Callable[[Any, Any], list],
    check_vma: bool = True,
) -> Any:
    """The shard_map of ``f`` on the global arrays ``leaves`` (Tracers or
    concrete) with one spec per leaf (None: static, passed unchanged);
    ``out_specs_of(out_specs, out)`` gives one spec per output leaf.
    ``check_vma``: a ``grad`` taken inside the body over a collective
    differentiates as JAX's shard_map with that flag does
    (``_transform_batching``)."""
    axes = tuple(mesh.axis_names)
    mapped = [i for i, s in enumerate(specs) if s is not None]
    names = {i: f"argument args{tree.keystr(paths[i])}" for i in mapped}
    layouts = {i: _Layout(specs[i], _rank(leaves[i]), mesh, names[i]) for i in mapped}
    split = [_split(leaves[i], layouts[i], mesh, names[i]) for i in mapped]
    if isinstance(out_specs, list):
        out_specs = tuple(out_specs)
    cell: dict = {}

    def body(*blocks: Any) -> Any:
        full = list(leaves)
        for i, b in zip(mapped, blocks):
            full[i] = b
        cell["out"] = f(*tree.unflatten(treedef, full))
        return cell["out"]

    fn: Callable[..., Any] = body
    for axis in reversed(axes):
        fn = _vmap.mesh_axis_vmap(
            fn,
            tuple(layouts[i].position(axis, axes) for i in mapped),
            _out_axes(out_specs, axis, axes, mesh),
            axis,
            mesh.shape[axis],
            check_vma,
        )
    try:
        out = fn(*split)
    except ValueError as e:
        if "out_axes is None" not in str(e):
            raise
        raise ValueError(
            f"shard_map: an output of {getattr(f, '__name__', repr(f))} varies "
            f"along a mesh axis its out_specs {out_specs} leave out (it would "
            "differ from device to device); psum or all_gather it over that "
            f"axis first, or name the axis in out_specs ({e})"
        ) from None
    outs, out_tree = tree.flatten(out)
    per_leaf = out_specs_of(out_specs, cell["out"])
    merged = []
    for k, (o, spec) in enumerate(zip(outs, per_leaf)):
        rank = len(o.shape) - len(_named(spec))
        merged.append(_merge(o, _Layout(spec, rank, mesh, f"output {k}"), mesh))
    return tree.unflatten(out_tree, merged)


def _named(spec: PartitionSpec) -> list:
    return [a for entry in spec for a in _entry_names(entry)]


class LoweredBody:
    """A top-level shard_map's body as :func:`run_traced` under ``bt.jit``,
    compiled for the placed arguments' signature: the partitioned program
    runs on every device at once and returns the global outputs."""

    global_outputs = True

    def __init__(self, compiled: Any) -> None:
        self.compiled = compiled

    def run(self, placed: list) -> Any:
        return self.compiled(*placed)


def lower_body(
    f: Callable[..., Any],
    mesh: Mesh,
    placed: list,
    specs: list,
    treedef: Any,
    out_specs: Any,
    out_specs_of: Callable[[Any, Any], list],
    check_vma: bool = True,
) -> LoweredBody | None:
    """The body of a top-level shard_map that the per-device compile
    refused (a collective in a loop, cond or vmap of the body) as one
    partitioned program, or None when a trace cannot express it either (it
    reads a value on the host, donates inside, or calls a collective where
    a vmap cannot batch it): it then runs per device on threads."""
    paths = [()] * len(placed)

    def global_fn(*leaves: Any) -> Any:
        return run_traced(
            f, mesh, specs, out_specs, list(leaves), treedef, paths, out_specs_of,
            check_vma,
        )

    donations = _donation.inlined_donations()
    try:
        compiled = _jit.jit(global_fn).lower(*placed).compile()
    except hook.CollectiveNestedError:
        # A collective in a nested trace no rule takes (a custom_jvp
        # function's body): on the threads each device's trace would exchange its
        # tracers, an error that says less than this one.
        raise
    except Exception:  # the threads run it (and raise what it raises)
        return None
    if _donation.inlined_donations() != donations:
        return None  # a trace ignores donation; on the threads it is real
    return LoweredBody(compiled)


_shard_map.traced_runner = run_traced
_shard_map.body_lowerer = lower_body
