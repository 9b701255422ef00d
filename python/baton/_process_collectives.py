"""Collectives whose groups span processes (``bt.distributed``, DESIGN 5.6).

Inside ``bt.shard_map`` over a mesh of devices of several processes, a
collective whose group includes another process's devices goes over the
network -- Gloo's TCP transport through ``bt.distributed`` (baton calls
Gloo; it does not move bytes itself). Every collective of the call is one
network operation per process: the process's devices meet in the
shard_map's exchange, the last to arrive stacks their values on the host and
runs it, and each device takes its part of the answer. Since every device
takes part in every collective in the same order (SPMD), the processes issue
the same network operations in the same order.

- Reductions (``psum``/``pmean``/``pmax``/``pmin``) whose groups each hold
  one device of every process, slot by slot the same on every process (the
  data-parallel layout: one mesh axis over the processes), are one Gloo
  all-reduce of the stacked values: the bytes moved are an all-reduce's.
- Everything else is one all-gather of every device's value, after which
  each device combines its group's values locally in group order (more
  bytes, the same results).

Each process must hold the same number of the mesh's devices.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton._shard_map import DeviceContext


def _member(mesh: Any, pos: dict) -> tuple:
    return tuple(sorted(pos.items()))


def _by_process(mesh: Any) -> dict[int, list[tuple]]:
    """Each process's mesh positions (sorted-tuple form), in mesh order."""
    out: dict[int, list[tuple]] = {}
    for device, pos in mesh.device_positions():
        out.setdefault(int(getattr(device, "process_index", 0)), []).append(
            _member(mesh, pos)
        )
    return out


def crosses_processes(ctx: DeviceContext, members: list) -> bool:
    """Whether some member of the group is another process's device."""
    mesh = ctx.mesh
    me = _process_of(mesh, _member(mesh, ctx.position))
    return any(_process_of(mesh, m) != me for m in members)


def _process_of(mesh: Any, member: tuple) -> int:
    pos = dict(member)
    device = mesh.devices[tuple(pos[a] for a in mesh.axis_names)]
    return int(getattr(device, "process_index", 0))


def _layout(ctx: DeviceContext, what: str) -> tuple[dict, list, int]:
    procs = _by_process(ctx.mesh)
    sizes = {len(v) for v in procs.values()}
    if len(sizes) != 1:
        raise NotImplementedError(
            f"{what}: the mesh holds {sorted((p, len(v)) for p, v in procs.items())} "
            "(process, devices); collectives across processes need the same number "
            "of mesh devices in every process"
        )
    from baton import _device_queries

    if sorted(procs) != list(range(_device_queries.process_count())):
        raise NotImplementedError(
            f"{what}: the mesh has devices of processes {sorted(procs)} of "
            f"{_device_queries.process_count()}; a collective across processes needs "
            "a mesh over every process's devices"
        )
    mine = procs[_device_queries.process_index()]
    return procs, mine, mine.index(_member(ctx.mesh, ctx.position))


def _group_key(member: tuple, names: tuple) -> tuple:
    return tuple((a, i) for a, i in member if a not in names)


def _host_stack(values: list, what: str) -> np.ndarray:
    shapes = {(tuple(v.shape), np.dtype(v.dtype)) for v in values}
    if len(shapes) != 1:
        raise ValueError(
            f"{what}: the devices passed different arrays {sorted(map(str, shapes))}; "
            "each must pass the same shape and dtype"
        )
    return np.stack([np.asarray(v) for v in values])


def allreduce_eligible(ctx: DeviceContext, names: tuple) -> bool:
    """Whether a reduction over ``names`` is one all-reduce of every
    process's stacked values (see the module docstring)."""
    procs = _by_process(ctx.mesh)
    if len({len(v) for v in procs.values()}) != 1:
        return False
    slots = list(zip(*procs.values()))  # slot j of every process
    for slot in slots:
        if len({_group_key(m, names) for m in slot}) != 1:
            return False
    # each group exactly one device per process
    groups: dict = {}
    for members in procs.values():
        for m in members:
            groups.setdefault(_group_key(m, names), 0)
            groups[_group_key(m, names)] += 1
    return all(n == len(procs) for n in groups.values())


def allreduce(ctx: DeviceContext, x: Any, op: str, what: str) -> np.ndarray:
    """This device's slot of the all-reduce of every process's stacked
    values (host memory)."""
    from baton import distributed

    _, mine, me = _layout(ctx, what)

    def combine(values: list) -> np.ndarray:
        return distributed._allreduce(_host_stack(values, what), op, in_place=True)

    out = ctx.exchange.swap(("net", ctx.count), mine, me, x, what, combine)
    return out[me]


def gather_group(ctx: DeviceContext, members: list, x: Any, what: str) -> list:
    """The group's values in group order: this device's ``x`` and host
    copies of the others', from one all-gather over the processes."""
    from baton import distributed

    procs, mine, me = _layout(ctx, what)
    order = sorted(procs)

    def combine(values: list) -> dict:
        gathered = distributed._allgather(_host_stack(values, what))
        return {m: gathered[p][j] for p in order for j, m in enumerate(procs[p])}

    table = ctx.exchange.swap(("net", ctx.count), mine, me, x, what, combine)
    own = _member(ctx.mesh, ctx.position)
    return [x if m == own else table[m] for m in members]
