"""jit of sharded arguments: the program is partitioned over the mesh
(DESIGN 5.6, issue 37).

When a jitted function gets sharded arguments -- elementwise, a sum, a dot,
an MLP layer, arguments with different shardings, an unsharded array next
to sharded ones -- :func:`call` traces it on the global shapes and hands
the program to C++
(``_baton.compile_spmd``, jit/spmd_executable.h): sharding propagation
decides each value's layout over the mesh, the program is cut into
per-device stages with the collectives between them (all-reduce of partial
sums, all-gather, slicing), and each stage is compiled for every device.
The outputs are ShardedArrays laid out as propagation decided (a sum is
replicated, ``x @ w`` keeps the rows of ``x`` split). Unsharded arrays and
scalars are read whole on every device (copied to each).

A call donating nothing passes each argument's C++ sharded array
(``ShardedArray._impl``; an unsharded value as a replicated one) to
``SpmdExecutable.run`` and wraps the C++ sharded arrays it returns, whose
blocks become the outputs' shards. A donating call passes per-device blocks
and the donated blocks' markers to ``execute`` (below).

A mesh spanning processes (``bt.distributed``) runs each process's devices
here; communication that needs other processes' blocks goes through the
process group (every process must make the same calls: SPMD).

Donation: a donated sharded argument (``donate_argnums`` or ``bt.donate``)
arrives as a ShardedDonated, every shard already taken by the caller
(_sharded_call._take_donations: all or nothing). Its blocks go to the
compute stage that reads it last, compiled with them donated, so an output
of the same block size is written over them on every device (the
parameter update of a training step in place); the donated array is
consumed once the call has checked its arguments.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from typing import Any

import numpy as np

from baton import _abstract_eval, _baton, _device_put, _sharding_api, distributed, tree
from baton._sharded_array import (
    ShardedArray,
    ShardedDonated,
    blocks_impl,
    is_sharded,
    mesh_devices,
    placement,
    spec_dims,
)

# Per jitted function: {signature: _Compiled}.
_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _Compiled:
    __slots__ = ("dynamic", "exe", "lifted", "mesh", "out_avals", "out_def", "outputs")

    def __init__(self, exe: Any, dynamic: list, lifted: list, out_avals: list, out_def: Any,
                 mesh: Any = None):
        self.exe = exe
        self.mesh = mesh
        self.dynamic = dynamic
        self.lifted = lifted
        self.out_avals = out_avals
        self.out_def = out_def
        # Per output: (global shape, sharding, each local block's (device,
        # index, replica id)) -- the same every call, so made once here.
        self.outputs = []
        if mesh is not None:
            from baton.sharding import NamedSharding

            for dims, aval in zip(exe.output_shardings, out_avals):
                shape = tuple(aval[0])
                sharding = NamedSharding(mesh, _spec(dims, mesh))
                self.outputs.append((shape, sharding, placement(sharding, shape)))


def _spec(dims: list, mesh: Any) -> Any:
    """The PartitionSpec of per-dimension axis indices (trailing Nones left out)."""
    from baton.sharding import PartitionSpec

    names = list(mesh.axis_names)
    parts: list = []
    for axes in dims:
        if not axes:
            parts.append(None)
        elif len(axes) == 1:
            parts.append(names[axes[0]])
        else:
            parts.append(tuple(names[a] for a in axes))
    while parts and parts[-1] is None:
        parts.pop()
    return PartitionSpec(*parts)


def _signature(leaves: list, donated: set) -> Any:
    key = []
    for i, leaf in enumerate(leaves):
        if is_sharded(leaf):
            s = leaf.sharding
            key.append(("S", leaf.shape, np.dtype(leaf.dtype), s.mesh, tuple(s.spec),
                        i in donated))
        elif hasattr(leaf, "dtype") and hasattr(leaf, "shape"):
            key.append(("A", tuple(np.shape(leaf)), np.dtype(leaf.dtype)))
        else:
            key.append(("V", type(leaf), leaf))
    return tuple(key)


def compile_for(jitted: Any, kwargs: dict, leaves: list, rebuild: Any, names: list,
                donated_leaves: set) -> Any:
    """The partitioned program of ``jitted`` for these leaves (compiled once
    per signature; `donated_leaves` the positions a call would donate):
    what ``f.lower(*sharded).compile()`` wraps. Consumes nothing."""
    name = getattr(jitted, "__name__", "jit")
    mesh, devices, _, _ = _mesh_of(jitted, leaves, names, name)
    return _compile(jitted, kwargs, leaves, rebuild, mesh, devices, name, donated_leaves)


def _mesh_of(jitted: Any, leaves: list, names: list, name: str) -> tuple:
    """(mesh, its devices, this process's, whether it spans processes) of
    the sharded leaves, which must share one mesh of NamedShardings."""
    sharded = [i for i, leaf in enumerate(leaves) if is_sharded(leaf)]
    mesh = getattr(leaves[sharded[0]].sharding, "mesh", None)
    for i in sharded:
        leaf = leaves[i]
        if isinstance(leaf, ShardedArray):
            leaf._check_live()
        if not hasattr(leaf.sharding, "mesh"):
            raise ValueError(
                f"{name}: argument {names[i]} has sharding {leaf.sharding}; a "
                "partitioned call needs NamedShardings. Put it with "
                "bt.device_put(x, NamedSharding(mesh, P(...)))."
            )
        if leaf.sharding.mesh != mesh:
            raise ValueError(
                f"{name}: argument {names[i]} is on mesh {leaf.sharding.mesh} but "
                f"{names[sharded[0]]} on {mesh}; put them on one mesh. Nothing was "
                "consumed."
            )
    devices = list(mesh.devices.flat)
    local = [d for d in devices if isinstance(d, _baton.Device)]
    spans = len(local) != len(devices)
    if spans and distributed._group is None:
        raise ValueError(
            f"{name}: the mesh has other processes' devices but this process "
            "has no process group; call bt.distributed.initialize first. "
            "Nothing was consumed."
        )
    return mesh, devices, local, spans


def call(jitted: Any, kwargs: dict, leaves: list, rebuild: Any, names: list) -> Any:
    """Runs ``jitted`` partitioned over the mesh of its sharded arguments
    (donated ones as ShardedDonated markers, taken by the caller)."""
    name = getattr(jitted, "__name__", "jit")
    mesh, devices, local, spans = _mesh_of(jitted, leaves, names, name)
    compiled = _compile(jitted, kwargs, leaves, rebuild, mesh, devices, name)
    values = [leaves[i] for i in compiled.dynamic] + list(compiled.lifted)
    _check_unusable_donations(compiled, leaves, names, name)
    if any(isinstance(v, ShardedDonated) for v in values):
        result = _execute_donating(compiled, values, local, spans, name)
    else:
        result = _run(compiled, values, mesh, local, spans)
    return tree.unflatten(compiled.out_def, result)


def _locked(spans: bool, method: Any, *args: Any) -> Any:
    """``method(*args)``; across processes under the group's lock (its
    collectives, one caller at a time)."""
    if spans:
        with distributed._lock:
            return method(*args)
    return method(*args)


def _run(compiled: _Compiled, values: list, mesh: Any, local: list, spans: bool) -> list:
    """A call donating nothing: the arguments' C++ sharded arrays (an
    unsharded value replicated, its copy on each device) go to
    ``SpmdExecutable.run``, whose results become the outputs' storage."""
    args = []
    for v in values:
        if isinstance(v, ShardedArray):
            args.append(v._impl)
        else:
            blocks = [_device_put.on_device(v, d) for d in local]
            shape = tuple(np.shape(v))
            dtype = blocks[0].dtype if blocks else np.result_type(v)
            args.append(blocks_impl(shape, dtype, mesh, [[] for _ in shape], blocks))
    outs = _locked(spans, compiled.exe.run, args)
    return [
        ShardedArray.from_impl(impl, sharding, where)
        for impl, (_, sharding, where) in zip(outs, compiled.outputs)
    ]


def _execute_donating(compiled: _Compiled, values: list, local: list, spans: bool,
                      name: str) -> list:
    """A call donating sharded arguments: per-device blocks and each
    donated block's marker go to ``SpmdExecutable.execute``, which spends
    the markers (run takes no donations)."""
    per_device, donated = [], []
    for v in values:
        if isinstance(v, ShardedDonated):
            markers = [s.data for s in v._shards if isinstance(s.device, _baton.Device)]
            per_device.append([])  # the markers carry the blocks
            donated.append(markers)
        elif is_sharded(v):
            per_device.append([s.data for s in v.addressable_shards])
            donated.append([])
        else:
            per_device.append([_device_put.on_device(v, d) for d in local])
            donated.append([])
    outs = _locked(spans, compiled.exe.execute, per_device, donated)
    for v in values:
        if isinstance(v, ShardedDonated):
            for s in v._shards:
                if isinstance(s.device, _baton.Device):
                    s.data._set_target(name)
    return [
        ShardedArray.from_placement(shape, sharding, where, blocks)
        for blocks, (shape, sharding, where) in zip(outs, compiled.outputs)
    ]


def _check_unusable_donations(compiled: Any, leaves: list, names: list, name: str) -> None:
    """As for a single-device call: donated arguments no output can reuse
    are reported with DonationWarning (freed after the call), or refused in
    bt.config's "error" donation mode with nothing consumed."""
    what = [
        f"argument {names[compiled.dynamic[p]]}"
        for p in compiled.exe.unusable_donations
        if p < len(compiled.dynamic)
        and isinstance(leaves[compiled.dynamic[p]], ShardedDonated)
    ]
    if not what:
        return
    from baton._config import config
    from baton.errors import DonationError, DonationWarning

    refused = config.read("donation") == "error"
    msg = _baton._unusable_donation_message(
        name, what, per_device=True, refused=refused
    )
    if refused:
        raise DonationError(msg)
    warnings.warn(msg, DonationWarning, stacklevel=5)


def _output_layouts(jitted: Any, traced: Any, out_def: Any, mesh: Any) -> list:
    """Per output, the layout jit's ``out_shardings`` asks for on this mesh
    (per-dimension axis indices), or None (propagation's choice; a sharding
    on another mesh is applied after the call)."""
    wanted = getattr(jitted, "_out_shardings", None)
    avals = traced.program.output_avals
    if wanted is None:
        return [None] * len(avals)
    skeleton = tree.unflatten(out_def, list(range(len(avals))))
    targets = _sharding_api.leaf_targets(skeleton, wanted, "jit out_shardings")
    out = []
    for t, aval in zip(targets, avals):
        if t is None or getattr(t, "mesh", None) != mesh:
            out.append(None)
        else:
            out.append(spec_dims(t.spec, len(aval[0]), mesh))
    return out


def _compile(jitted: Any, kwargs: dict, leaves: list, rebuild: Any, mesh: Any,
             devices: list, name: str, donated_leaves: Any = None) -> _Compiled:
    """The partitioned program for these leaves, compiled once per
    signature. Donated: the ShardedDonated leaves, or `donated_leaves` (the
    positions ``lower`` is told of, before anything is taken)."""
    if donated_leaves is None:
        donated_leaves = {i for i, leaf in enumerate(leaves)
                          if isinstance(leaf, ShardedDonated)}
    key = _signature(leaves, donated_leaves)
    per_fn = _compiled.setdefault(jitted, {})
    try:
        hit = per_fn.get(key)
    except TypeError:  # an unhashable static value
        key, hit = None, None
    if hit is not None:
        return hit
    a, k = rebuild(list(leaves))
    static_names = [n for n in k if n in jitted._static_names]
    fun = functools.partial(jitted._fun, **{n: k.pop(n) for n in static_names})
    traced, out_def = _abstract_eval._trace(fun, a, k, frozenset(jitted._static_nums))
    dynamic = [i for i, leaf in enumerate(leaves) if _abstract_eval._aval(leaf) is not None]
    shardings = []
    for i in dynamic:
        leaf = leaves[i]
        ndim = len(np.shape(leaf)) if not is_sharded(leaf) else len(leaf.shape)
        shardings.append(spec_dims(leaf.sharding.spec, ndim, mesh) if is_sharded(leaf)
                         else [[] for _ in range(ndim)])
    for v in traced.lifted:
        if is_sharded(v):
            raise ValueError(
                f"{name}: the function captures a sharded array; pass it as an "
                "argument instead."
            )
        shardings.append([[] for _ in range(len(np.shape(v)))])
    donated = [i in donated_leaves and is_sharded(leaves[i]) for i in dynamic]
    donated += [False] * len(traced.lifted)
    local = mesh_devices(mesh)
    if all(d is not None for d in local):
        exe = _baton.compile_spmd(
            traced.program, list(mesh.axis_names), list(mesh.axis_sizes), shardings,
            local, name, out_shardings=_output_layouts(jitted, traced, out_def, mesh),
            donated=donated,
        )
    else:
        exe = _baton.compile_spmd(
            traced.program, list(mesh.axis_names), list(mesh.axis_sizes), shardings,
            local, name, [int(d.process_index) for d in devices],
            distributed._process_index(), distributed._group,
            _output_layouts(jitted, traced, out_def, mesh), donated,
            exchange=distributed._exchange,
        )
    compiled = _Compiled(exe, dynamic, list(traced.lifted),
                         list(traced.program.output_avals), out_def, mesh)
    if key is not None:
        per_fn[key] = compiled
    return compiled
