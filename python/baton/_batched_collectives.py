"""Collectives over a ``bt.vmap`` axis: ``bt.vmap(f, axis_name="i")`` with
``bt.lax.psum(x, "i")`` ... inside ``f``, as in JAX.

A vmapped body is traced on one example (``_vmap``), so a collective over
the vmap's axis, which needs every example's value, cannot be computed in
that trace. It is a call with a batching rule instead (``_batching_hook``'s
rounds, as ``custom_vmap``): the round stops at it, ``vmap`` batches the
program computing its operand, and the rule computes the collective on the
batched operand (batch dimension first) in the enclosing trace -- a sum
over the batch dimension for ``psum``, the batch itself for
``all_gather``, a gather along it for ``ppermute`` ... -- whose result the
next round takes as a value (batched or not). A collective over an axis
of an enclosing vmap passes through an inner vmap's rule unchanged (its
dimensions shifted past the inner batch dimension) and is taken by the
vmap that binds the axis. ``axis_index`` needs no round: each named vmap
gives its body the example's index as a value (``Round.index``).
``all_gather`` and ``psum_scatter`` over several axes are composed of one
per axis (``baton/_collectives.py``).

Cost: the vmapped function is traced once more per collective (one round
each). A collective over an enclosing vmap's axis stops the inner vmap's
round and then the outer one's, whose next round traces the inner vmap
again from its start: k collectives over the outer axis of two nested
named vmaps (a shard_map on a 2-D mesh) trace the body about k^2 / 2 times
(20 of them: 231 traces; over the inner axis: 21).

Numerics: a sum over the examples is one reduction of the batched
operand, not a fixed pairwise order as shard_map's combine; values agree
to rounding.

This is also how ``shard_map`` runs inside a traced function
(``_shard_map_trace``): its body is vmapped over the mesh axes.

A ``lax.scan`` (``fori_loop`` of known bounds) made directly in the
vmapped body whose body calls a collective is unrolled there, and a
``cond`` / ``switch`` computes every branch there and selects
(``_control_flow``): each call is then batched by its rule.

A ``grad`` / ``value_and_grad`` / ``jvp`` / ``vjp`` / ``checkpoint`` /
``while_loop`` made directly in the vmapped body whose function calls a
collective is itself batched by a rule (``_transform_batching``): the
transformation of the vmapped function (so are ``jacrev`` / ``jacfwd`` /
``hessian``, made of those).

Limits: a collective inside any other trace nested in the vmapped body
(a ``custom_jvp`` / ``custom_vjp`` function's body or rule,
``custom_root``) raises NotImplementedError. ``all_to_all``, ``ppermute`` and
``pbroadcast`` name one vmap axis.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

import baton.numpy as bnp
from baton import _batching_hook as hook
from baton import tree
from baton._baton import lax as _lax

__all__ = ["applies", "axis_index", "axis_size", "call", "names_of"]


def names_of(axis_name: Any) -> tuple:
    """The axis names of a collective's ``axis_name`` (a name or a tuple)."""
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def applies(axis_name: Any, what: str) -> bool:
    """Whether ``axis_name`` names vmap axes in progress (every name: a mix
    of vmap and shard_map axes is refused)."""
    bound = hook.named_rounds()
    if not bound:
        return False
    names = names_of(axis_name)
    inside = [n for n in names if n in bound]
    if not inside:
        return False
    if len(inside) != len(names):
        missing = [n for n in names if n not in bound]
        raise NameError(
            f"{what}: unbound axis name {missing[0]!r}; the vmap axes in scope "
            f"are {sorted(map(str, bound))} (a collective names the axes of "
            "enclosing vmaps, or of a shard_map's mesh, not both)"
        )
    return True


def axis_size(axis_name: Any) -> int:
    """The product of the named vmap axes' sizes."""
    bound = hook.named_rounds()
    return math.prod(bound[n].size for n in names_of(axis_name))


def axis_index(axis_name: Any) -> Any:
    """The example's index along the named vmap axes (int32; several names:
    major to minor, as a mesh group's index)."""
    bound = hook.named_rounds()
    index = None
    for n in names_of(axis_name):
        r = bound[n]
        index = r.index if index is None else index * np.int32(r.size) + r.index
    return index


# One collective on one leaf over one vmap axis: (x, batched, n, axis) ->
# (result, result batched). ``x`` has its batch dimension first when
# batched.
Rule = Callable[[Any, bool, int, Any], tuple]


def call(x: Any, axis_name: Any, what: str, rule_for: Callable[[Any], Rule]) -> Any:
    """The collective ``what`` over ``axis_name`` (vmap axes, ``applies``)
    on each leaf of ``x``: ``rule_for(axis)`` gives its rule for the
    innermost vmap's axis, which is ``axis_name``'s or not (then the rule
    passes it through)."""
    r = hook.round_here()
    if r is None and hook.is_suspended():
        # No round applies (the trace of a rule's plain function, for its
        # output structure): the collective over examples all equal to x.
        r = hook.named_rounds()[names_of(axis_name)[0]]
        one = rule_for(r.axis_name)
        return tree.map(lambda v: one(v, False, r.size, r.axis_name)[0], x)
    if r is None:
        raise hook.nested_error(
            what,
            f"{what} over the axis {axis_name!r} (of a bt.vmap, or of the mesh "
            "of a shard_map, which runs as a vmap over its axes) is called "
            "inside a trace nested in the mapped function that baton cannot "
            "batch with it (a custom_jvp / custom_vjp function's body or rule, "
            "custom_root, a vjp's pullback called in a nested trace): baton "
            "batches that nested trace whole, so "
            "the collective cannot see the other examples there. Call it "
            "directly in the vmapped function, or inside a grad, "
            "value_and_grad, jvp, vjp, jacrev, jacfwd, hessian, checkpoint, "
            "while_loop, scan, fori_loop or cond called there (those are "
            "batched with it), or take the "
            "transformation outside the vmap / shard_map.",
        )
    one = rule_for(r.axis_name)
    leaves, treedef = tree.flatten(x)

    def rule(n: int, in_batched: list, *xs: Any) -> tuple:
        outs, flags = [], []
        for v, b in zip(xs, in_batched):
            o, ob = one(v, bool(b), n, r.axis_name)
            outs.append(o)
            flags.append(ob)
        return outs, flags

    def body(*xs: Any) -> list:
        return [one(v, False, r.size, r.axis_name)[0] for v in xs]

    out = hook.call_with_rule(tuple(leaves), rule, body, what)
    return tree.unflatten(treedef, list(out))


def _others(names: tuple, axis: Any) -> tuple:
    return tuple(n for n in names if n != axis)


def _expand(x: Any, n: int) -> Any:
    """An unbatched ``x`` as a batch of ``n`` equal examples."""
    x = _lax.as_tracer(x)
    return bnp.broadcast_to(x[None], (n, *x.shape))


def reduce_rule(
    names: tuple, op: str, again: Callable[[Any, tuple], Any]
) -> Callable[[Any], Rule]:
    """psum / pmax / pmin: the batch combined along its dimension, then the
    other names (``again``); unbatched, psum multiplies by the size."""

    def rule_for(axis: Any) -> Rule:
        def one(x: Any, batched: bool, n: int, axis: Any = axis) -> tuple:
            if axis not in names:
                return again(x, names), batched
            if batched:
                combine = {"sum": bnp.sum, "max": bnp.max, "min": bnp.min}[op]
                out = combine(x, axis=0)
            else:
                out = x * n if op == "sum" else x
            rest = _others(names, axis)
            return (again(out, rest) if rest else out), False

        return one

    return rule_for


def _single(names: tuple, what: str) -> Any:
    if len(names) != 1:
        raise NotImplementedError(
            f"{what} over several vmap axes {names} is not supported; name one "
            "axis (nest the collectives instead)"
        )
    return names[0]


def _dim(d: int, rank: int, what: str) -> int:
    if not -rank <= d < rank:
        raise ValueError(f"{what}: axis {d} is out of range for rank {rank}")
    return d % rank


def _rank(x: Any, batched: bool) -> int:
    """The rank of one example of ``x``."""
    return len(np.shape(x)) - (1 if batched else 0)


def all_gather_rule(
    names: tuple, axis_arg: int, tiled: bool, again: Callable[..., Any]
) -> Callable[[Any], Rule]:
    """Every example's ``x`` stacked on ``axis_arg`` (tiled: concatenated)."""
    name = _single(names, "all_gather")

    def rule_for(axis: Any) -> Rule:
        def one(x: Any, batched: bool, n: int, axis: Any = axis) -> tuple:
            dim = _dim(axis_arg, _rank(x, batched) + (0 if tiled else 1), "all_gather")
            if axis != name:
                return again(x, dim + 1 if batched else dim), batched
            x = x if batched else _expand(x, n)
            out = bnp.moveaxis(x, 0, dim)
            if tiled:
                shape = list(out.shape)
                shape[dim : dim + 2] = [shape[dim] * shape[dim + 1]]
                out = bnp.reshape(out, shape)
            return out, False

        return one

    return rule_for


def psum_scatter_rule(
    names: tuple, dim_arg: int, tiled: bool, again: Callable[..., Any]
) -> Callable[[Any], Rule]:
    """The sum over the examples, example i keeping block i along
    ``dim_arg``."""
    name = _single(names, "psum_scatter")

    def rule_for(axis: Any) -> Rule:
        def one(x: Any, batched: bool, n: int, axis: Any = axis) -> tuple:
            dim = _dim(dim_arg, _rank(x, batched), "psum_scatter")
            if axis != name:
                return again(x, dim + 1 if batched else dim), batched
            s = bnp.sum(x, axis=0) if batched else x * n
            _check_split(s.shape[dim], n, tiled, "psum_scatter", dim)
            if tiled:
                shape = list(s.shape)
                shape[dim : dim + 1] = [n, shape[dim] // n]
                s = bnp.reshape(s, shape)
            return bnp.moveaxis(s, dim, 0), True

        return one

    return rule_for


def _check_split(size: int, n: int, tiled: bool, what: str, dim: int) -> None:
    if (tiled and size % n) or (not tiled and size != n):
        need = "divisible by" if tiled else "equal to"
        raise ValueError(
            f"{what}: dimension {dim} of size {size} cannot be split over the "
            f"{n} examples of the vmap axis (a size {need} the axis size is "
            f"needed; tiled={tiled})"
        )


def all_to_all_rule(
    names: tuple, split_arg: int, concat_arg: int, tiled: bool, again: Callable[..., Any]
) -> Callable[[Any], Rule]:
    """Example i's block j along ``split_arg`` goes to example j, which
    joins what it receives along ``concat_arg`` in example order."""
    name = _single(names, "all_to_all")

    def rule_for(axis: Any) -> Rule:
        def one(x: Any, batched: bool, n: int, axis: Any = axis) -> tuple:
            split = _dim(split_arg, _rank(x, batched), "all_to_all")
            concat = _dim(concat_arg, _rank(x, batched), "all_to_all")
            if axis != name:
                shift = 1 if batched else 0
                return again(x, split + shift, concat + shift), batched
            x = x if batched else _expand(x, n)
            # x: [i, ...]; example j's result joins block j of every i.
            _check_split(x.shape[1 + split], n, tiled, "all_to_all", split)
            if not tiled:
                t = bnp.moveaxis(x, 1 + split, 0)  # [j, i, rest]
                return bnp.moveaxis(t, 1, 1 + concat), True
            shape = list(x.shape)
            m = shape[1 + split] // n
            shape[1 + split : 2 + split] = [n, m]
            t = bnp.moveaxis(bnp.reshape(x, shape), 1 + split, 0)  # [j, i, ...]
            # i joins the concat dimension of the example, major.
            t = bnp.moveaxis(t, 1, 1 + concat)
            shape = list(t.shape)
            shape[1 + concat : 3 + concat] = [shape[1 + concat] * shape[2 + concat]]
            return bnp.reshape(t, shape), True

        return one

    return rule_for


def permute_rule(
    names: tuple, sources: list, again: Callable[[Any], Any], what: str
) -> Callable[[Any], Rule]:
    """Example k gets example ``sources[k]``'s ``x`` (-1: zeros)."""
    name = _single(names, what)

    def rule_for(axis: Any) -> Rule:
        def one(x: Any, batched: bool, n: int, axis: Any = axis) -> tuple:
            if axis != name:
                return again(x), batched
            if len(set(sources)) == 1 and sources[0] >= 0:  # a broadcast
                return (x[sources[0]] if batched else x), False
            x = x if batched else _expand(x, n)
            take = np.array([max(s, 0) for s in sources], np.int32)
            out = x[take]
            if min(sources) < 0:
                keep = np.array([s >= 0 for s in sources]).reshape(
                    (n,) + (1,) * (x.ndim - 1)
                )
                out = bnp.where(keep, out, bnp.zeros_like(out))
            return out, True

        return one

    return rule_for
