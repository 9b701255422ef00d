"""shard_map's output check (JAX's ``check_vma``): which mesh axes each
output of the mapped function *varies* over, found by tracing it once.

An out spec that leaves a mesh axis out promises the output is the same on
every device along it (``bt.shard_map`` then keeps one value per block). JAX
checks that promise statically, through the "varying manual axes" (vma) of
each value; so does baton:

- an input varies over the mesh axes its in spec names; a value computed
  from others varies over the union of theirs; a constant, a closed-over
  array or a static argument varies over none;
- ``psum`` / ``pmean`` / ``pmax`` / ``pmin`` over axes give a value that no
  longer varies over them; ``all_gather``, ``psum_scatter``,
  ``all_to_all``, ``ppermute`` and ``pshuffle`` give one that varies over
  them (as in JAX 0.10.2, where an all-gathered value is still varying);
  ``pbroadcast`` keeps its operand's; ``axis_index(a)`` varies over ``a``;
  ``pcast(x, a, to="varying")`` adds ``a``.

How: :func:`trace_collectives` traces the function once on Tracers shaped like
one device's blocks (``_subtrace.trace``, nothing runs). Each collective,
seeing the thread's context in analysis mode (``ctx.vma``, a
:class:`VmaTrace`), stands for the other devices' values with a fresh
scalar parameter of the program broadcast to the value's shape, and records
the value it was given as an extra output. The program's data flow (read
from its text: each statement's operands) then says which parameters every
output depends on, and the parameters' vmas follow in the order the
collectives ran.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from baton import _subtrace, tree

# How a collective's result varies over its axes, from its operand's vma:
# reductions remove the axes, pbroadcast keeps the operand's (JAX gives its
# result the operand's type), the others add them.
_REMOVES = frozenset({"psum", "pmean", "pmax", "pmin"})
_KEEPS = frozenset({"pbroadcast"})


class NeedMoreParameters(Exception):
    """The trace ran out of placeholder parameters (internal: retraced)."""


class VmaTrace:
    """What the collectives of one analysis trace record (``ctx.vma``)."""

    def __init__(self, placeholders: list) -> None:
        self._free = list(placeholders)  # scalar float32 Tracers
        self.used = 0
        # (kind, axes, operand, attrs): attrs what a collective that moves
        # blocks was asked (dimension, tiled ...; baton/_collectives.py).
        self.records: list[tuple[str, tuple, Any, dict]] = []

    def stand_in(
        self, kind: str, axes: tuple, operand: Any, attrs: dict | None = None
    ) -> Any:
        """A fresh scalar parameter standing for a collective's result (the
        caller broadcasts it to the result's shape and dtype); ``operand``,
        the value the collective was given, is recorded."""
        if self.used >= len(self._free):
            raise NeedMoreParameters
        p = self._free[self.used]
        self.used += 1
        if not hasattr(operand, "dtype"):
            operand = np.asarray(operand)  # a Python scalar
        self.records.append((kind, tuple(axes), operand, dict(attrs or {})))
        return p


_STMT = re.compile(r"^  (%\d+(?:\s*,\s*%\d+)*)\s*=\s*([\w.\-]+)\(")
_REF = re.compile(r"%\d+")


def _operands(line: str, start: int) -> list[str]:
    """The %refs inside the parentheses opening at ``line[start - 1]``."""
    depth, i = 1, start
    while i < len(line) and depth:
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        i += 1
    return _REF.findall(line[start:i])


def dependencies(text: str) -> tuple[list[str], list[set]]:
    """From a program's text: its parameter names in order, and for each
    output the set of parameter names it depends on."""
    lines = text.splitlines()
    header = lines[0]
    params_part, _, outs_part = header.partition(") -> (")
    params = _REF.findall(params_part)
    outs = _REF.findall(outs_part)
    deps: dict[str, set] = {p: {p} for p in params}
    for line in lines[1:]:
        m = _STMT.match(line)
        if not m:
            continue  # a nested region's line (its own numbering), or a brace
        d: set = set()
        operands = _operands(line, m.end())
        if m.group(2) == "case":
            # lax.cond / switch: JAX 0.10.2 types the result by its
            # branches' outputs only, not by the branch index.
            operands = operands[1:]
        for r in operands:
            d |= deps.get(r, set())
        for lhs in _REF.findall(m.group(1)):
            deps[lhs] = d
    return params, [deps.get(o, set()) for o in outs]


def trace_collectives(
    f: Callable[..., Any],
    in_avals: list,
    in_vmas: list,
    rebuild: Callable[[list], tuple],
    install: Callable[[Any], Any],
    placeholders: int,
    values: list | None = None,
) -> tuple[Any, list[frozenset], list]:
    """Traces ``f(*rebuild(tracers))`` and returns (its output treedef, the
    vma of each output leaf, the collectives it called in order as
    ``(kind, axes, operand, attrs)`` -- what shard_map's compiled path,
    baton/_shard_map_compile.py, builds its second trace from).
    ``install(vma_trace)`` is a context manager putting the analysis context
    on this thread; ``values`` (one device's arguments), where given, let
    the body read concrete values of what it computes from them
    (``float(x.sum())``; collectives' results read as zeros there)."""
    while True:
        try:
            return _trace_once(
                f, in_avals, in_vmas, rebuild, install, placeholders, values
            )
        except NeedMoreParameters:
            placeholders *= 2


def _trace_once(
    f: Callable[..., Any],
    in_avals: list,
    in_vmas: list,
    rebuild: Callable[[list], tuple],
    install: Callable[[Any], Any],
    placeholders: int,
    values: list | None,
) -> tuple[Any, list[frozenset], list]:
    n_in = len(in_avals)
    scalar = ((), "float32", False, None)
    state: dict = {}

    def body(*tracers: Any) -> list:
        vt = VmaTrace(list(tracers[n_in:]))
        with install(vt):
            out = f(*rebuild(list(tracers[:n_in])))
        flat, out_def = tree.flatten(out)
        state["def"], state["n_out"], state["vt"] = out_def, len(flat), vt
        state["kept"] = [i for i, x in enumerate(flat) if _is_value(x)]
        kept = [flat[i] for i in state["kept"]]
        return kept + [record[2] for record in vt.records]

    if values is not None:
        values = list(values) + [np.float32(0)] * placeholders
    traced = _subtrace.trace(
        body, list(in_avals) + [scalar] * placeholders, "shard_map_check", values
    )
    params, deps = dependencies(traced.program.as_text())
    vt = state["vt"]
    vma: dict[str, frozenset] = {}
    for name, v in zip(params[:n_in], in_vmas):
        vma[name] = frozenset(v)
    for name in params[n_in + placeholders :]:  # closed-over arrays
        vma[name] = frozenset()
    n_kept = len(state["kept"])
    ph_names = params[n_in : n_in + placeholders]
    for k, (kind, axes, _, _) in enumerate(vt.records):
        got = _union(vma.get(p, frozenset()) for p in deps[n_kept + k])
        if kind in _REMOVES:
            vma[ph_names[k]] = got - set(axes)
        elif kind in _KEEPS:
            vma[ph_names[k]] = got
        else:
            vma[ph_names[k]] = got | set(axes)
    result = [frozenset()] * state["n_out"]
    for j, i in enumerate(state["kept"]):
        result[i] = _union(vma.get(p, frozenset()) for p in deps[j])
    return state["def"], result, vt.records


def _is_value(x: Any) -> bool:
    return isinstance(x, _subtrace.Tracer) or _subtrace.is_array_like(x)


def _union(sets: Any) -> frozenset:
    out: set = set()
    for s in sets:
        out |= s
    return frozenset(out)
