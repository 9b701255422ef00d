"""``bt.shard_map``'s body compiled once for every device of the mesh
(issue 37): no per-device Python thread, one program per device run by the
SPMD executable (``jit/spmd_executable.h``), as jit runs a partitioned
program.

Which bodies: those whose collectives (any of baton/_collectives.py's:
``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``,
``all_to_all``, ``ppermute``, ``pbroadcast``, ``axis_index``, ``pcast``)
are called in the body itself or in a jitted function it calls (not inside
a ``grad``, ``vmap``, ``cond`` or loop of it), with every argument given a
PartitionSpec. On a mesh spanning processes each process runs its devices'
stages and the collectives exchange blocks through the ``bt.distributed``
group, as a partitioned jit does; every call first checks that all
processes run the same exchanges (processes that traced different
collectives -- psum here, pmax there -- fail alike on every rank, nothing
exchanged). Any other body runs as
before, once per device on its own thread (baton/_shard_map.py): a body
that reads a value on the host (``float(x.sum())``) must run per device,
and so must one that donates inside (a jitted call's ``donate_argnums``: a
trace would ignore it). ``compiled()`` says which way a
signature went (``None`` until it was called).

How: the body is traced twice on Tracers shaped like one device's blocks.
The first trace (shard_map's output check, baton/_shard_map_vma.py) stands
for each collective's result with a placeholder and records the value it
was given. The second gives each collective a parameter of exactly its
result's type, and returns the values the collectives combine as extra
outputs. ``compiler::PartitionShardMapBody`` (compiler/shard_map_body.h)
turns that program into compute stages with each collective between the
stage computing its operand and the first stage reading its result: the
reductions as all-reduces, the others as collective stages whose
per-device programs assemble the members' blocks -- and the executable
compiles each stage once per device.
``axis_index`` becomes a parameter each device is given its own index for.
The compiled program is kept per argument signature.

Numerics: a group's values are combined in mesh order by one member and
copied to the others, so every member holds the same bytes, as on the
threads.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from baton import (
    _baton,
    _device_put,
    _donation,
    _shard_map_vma,
    _subtrace,
    distributed,
    tree,
)
from baton.sharding import _group_index

# Collectives the compiled body combines with an all-reduce, by op.
_COMBINES = {"psum": "sum", "pmean": "sum", "pmax": "max", "pmin": "min"}
# Collectives that move blocks: their kind in compiler::SpmdCollective's
# terms (pbroadcast is a permutation from one source to every member).
_MOVES = {
    "all_gather": "all_gather",
    "psum_scatter": "psum_scatter",
    "all_to_all": "all_to_all",
    "ppermute": "ppermute",
    "pbroadcast": "ppermute",
}
# Collectives that need no communication: axis_index (a parameter per
# device) and pcast (the value itself; only the output check sees it).
_LOCAL = frozenset({"axis_index", "pcast"})


class NotCompilable(Exception):
    """The body cannot be compiled once (it then runs per device)."""


class ExactStandIns:
    """``ctx.vma`` of the second trace: each collective gets a parameter of
    its result's exact type (``pcast`` its operand), in the order the first
    trace recorded them."""

    exact = True

    def __init__(self, placeholders: list, expected: list) -> None:
        self._placeholders = placeholders
        self._expected = expected  # (kind, axes, aval, attrs) per collective
        self.used = 0
        self.records: list[tuple[str, tuple, Any, dict]] = []

    def stand_in(
        self, kind: str, axes: tuple, operand: Any, attrs: dict | None = None
    ) -> Any:
        k = len(self.records)
        attrs = dict(attrs or {})
        if k >= len(self._expected) or self._expected[k][:2] != (kind, tuple(axes)):
            raise NotCompilable("the collectives differ from the first trace's")
        if (
            _subtrace.aval_of(operand)[:2] != self._expected[k][2][:2]
            or attrs != self._expected[k][3]
        ):
            raise NotCompilable(f"{kind}: it was called otherwise in the first trace")
        self.records.append((kind, tuple(axes), operand, attrs))
        if kind == "pcast":
            return operand
        p = self._placeholders[self.used]
        self.used += 1
        return p


class CompiledBody:
    """One signature's compiled body: the executable, the output treedef,
    and how to make each device's arguments."""

    def __init__(
        self,
        exe: Any,
        out_def: Any,
        axis_index: list,
        lifted: list,
        mesh: Any,
        spans: bool,
    ) -> None:
        self.exe = exe
        self._spans = spans  # the mesh has other processes' devices
        self.out_def = out_def
        self._axis_index = axis_index  # per axis_index parameter: its axes
        self._lifted = lifted
        self._mesh = mesh

    def run(self, placed: list, devices: list) -> list:
        """Each device's outputs (pytrees like the body's), for ``placed``
        (the arguments as ShardedArrays) on ``devices`` ((device, position)
        of this process, in mesh order)."""
        per_device = [[s.data for s in p._shards] for p in placed]
        for names in self._axis_index:
            per_device.append(
                [
                    _device_put.device_put(np.int32(_group_index(self._mesh, pos, names)), d)
                    for d, pos in devices
                ]
            )
        for v in self._lifted:
            per_device.append([_device_put.on_device(v, d) for d, _ in devices])
        if self._spans:
            with distributed._lock:  # the group's collectives, one caller at a time
                outs = self.exe.execute(per_device, [])
        else:
            outs = self.exe.execute(per_device, [])
        return [
            tree.unflatten(self.out_def, [blocks[j] for blocks in outs])
            for j in range(len(devices))
        ]


def recorded(records: list) -> list:
    """``(kind, axes, aval, attrs)`` of each collective a trace recorded
    (``_shard_map_vma.trace_collectives``'s ``(kind, axes, operand,
    attrs)``)."""
    return [
        (kind, axes, _subtrace.aval_of(operand), attrs)
        for kind, axes, operand, attrs in records
    ]


def _result_shape(kind: str, shape: tuple, n: int, attrs: dict) -> tuple:
    """The shape collective ``kind`` makes of an operand of ``shape`` in a
    group of ``n`` (compiler::ResultShape checks it again)."""
    dims = list(shape)
    if kind == "all_gather":
        if attrs["tiled"]:
            dims[attrs["dimension"]] *= n
        else:
            dims.insert(attrs["dimension"], n)
    elif kind == "psum_scatter":
        if attrs["tiled"]:
            dims[attrs["dimension"]] //= n
        else:
            del dims[attrs["dimension"]]
    elif kind == "all_to_all":
        if attrs["tiled"]:
            dims[attrs["dimension"]] //= n
            dims[attrs["concat"]] *= n
        else:
            del dims[attrs["dimension"]]
            dims.insert(attrs["concat"], n)
    return tuple(dims)


def compile_body(
    f: Callable[..., Any],
    mesh: Any,
    placed: list,
    treedef: Any,
    install: Callable[[Any], Any],
    devices: list,
    expected: list | None = None,
) -> CompiledBody:
    """The body compiled for every device of ``mesh`` (``placed``: every
    argument a ShardedArray of the mesh; ``install(stand_ins)``: a context
    manager putting a shard_map context in trace mode on this thread;
    ``expected``: the collectives a trace of the body recorded, from
    :func:`recorded`, else it is traced for them first). NotCompilable when
    it cannot be (see the module docstring)."""
    in_avals = [
        (tuple(p._shards[0].data.shape), p._shards[0].data.dtype.name, False, None)
        for p in placed
    ]
    n_in = len(in_avals)

    def rebuild(tracers: list) -> tuple:
        return tree.unflatten(treedef, list(tracers))

    if expected is None:
        try:
            _, _, records = _shard_map_vma.trace_collectives(
                lambda *a: f(*a), in_avals, [frozenset()] * n_in, rebuild, install, 8
            )
        except Exception as e:  # reads a value on the host ...
            raise NotCompilable(f"the body cannot be traced: {e}") from None
        expected = recorded(records)
    for kind, _, _, _ in expected:
        if kind not in _COMBINES and kind not in _MOVES and kind not in _LOCAL:
            raise NotCompilable(f"{kind} is not compiled yet")
    placeholder_avals = [
        (
            _result_shape(kind, aval[0], math.prod(mesh.shape[a] for a in axes), attrs),
            aval[1],
            aval[2],
            None,
        )
        for kind, axes, aval, attrs in expected
        if kind != "pcast"
    ]
    state: dict = {}

    def body(*tracers: Any) -> list:
        stand_ins = ExactStandIns(list(tracers[n_in:]), expected)
        with install(stand_ins):
            out = f(*rebuild(list(tracers[:n_in])))
        flat, out_def = tree.flatten(out)
        if not all(_subtrace.is_array_like(x) for x in flat):
            raise NotCompilable("the body returns something that is not an array")
        if len(stand_ins.records) != len(expected):
            raise NotCompilable("the collectives differ from the first trace's")
        state["def"], state["n_out"], state["records"] = out_def, len(flat), stand_ins.records
        combined = [
            op for kind, _, op, _ in stand_ins.records if kind not in _LOCAL
        ]
        return list(flat) + combined

    donations = _donation.inlined_donations()
    try:
        traced = _subtrace.trace(body, in_avals + placeholder_avals, "shard_map_body")
    except NotCompilable:
        raise
    except Exception as e:
        raise NotCompilable(f"the body cannot be traced: {e}") from None
    if _donation.inlined_donations() != donations:
        # A trace ignores donation; on the devices' threads it is real.
        raise NotCompilable("the body donates inside (a jitted call's donate_argnums)")
    axis_of = {a: i for i, a in enumerate(mesh.axis_names)}
    collectives, axis_index = [], []
    param, operand = n_in, state["n_out"]
    for kind, axes, _, attrs in state["records"]:
        if kind == "pcast":
            continue
        if kind == "axis_index":
            axis_index.append(axes)
        else:
            collectives.append(
                (
                    param,
                    operand,
                    [axis_of[a] for a in axes],
                    _COMBINES.get(kind) or _MOVES[kind],
                    attrs.get("dimension", 0),
                    attrs.get("concat", 0),
                    attrs.get("tiled", False),
                    list(attrs.get("sources", [])),
                )
            )
            operand += 1
        param += 1
    everywhere = list(mesh.devices.flat)
    local = [d if isinstance(d, _baton.Device) else None for d in everywhere]
    spans = any(d is None for d in local)
    where: tuple = ()
    if spans:
        if distributed._group is None:
            raise NotCompilable("the mesh spans processes without a process group")
        where = (
            [int(d.process_index) for d in everywhere],
            distributed._process_index(),
            distributed._group,
            distributed._exchange,
        )
    try:
        exe = _baton.compile_shard_map(
            traced.program,
            list(mesh.axis_names),
            [int(mesh.shape[a]) for a in mesh.axis_names],
            collectives,
            local,
            getattr(f, "__name__", "shard_map"),
            *where,
        )
    except ValueError as e:  # a program the partitioner refuses
        raise NotCompilable(f"the body's program cannot be partitioned: {e}") from None
    return CompiledBody(exe, state["def"], axis_index, list(traced.lifted), mesh, spans)
