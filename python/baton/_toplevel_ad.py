"""JAX's top-level differentiation helpers that build on the core
transformations: ``custom_gradient``, ``closure_convert``, ``linearize``
and ``linear_transpose`` (re-exported by ``baton._toplevel``).

- ``custom_gradient(fun)``: ``fun(*args)`` returns ``(out, vjp_fn)``; the
  result is a ``custom_vjp`` function whose backward rule is ``vjp_fn``.
  ``vjp_fn`` closes over values of the forward pass: it is traced right
  there, inside the forward rule, so that what it closes over becomes the
  residuals (the way ``closure_convert`` hoists closed-over values).
- ``closure_convert(fun, *example_args)``: ``(converted, consts)`` with
  ``converted(*args, *consts) == fun(*args)``; ``consts`` are the traced
  values (and baton Arrays) ``fun`` closes over, empty outside a trace.
- ``linearize(fun, *primals)``: ``(out, f_jvp)``; ``f_jvp(*tangents)`` is the
  JVP at ``primals`` (baton recomputes the forward pass at each call of
  ``f_jvp`` instead of keeping a linearized program; the values are JAX's).
- ``linear_transpose(fun, *primals)``: the transpose of a linear ``fun``,
  taken as its VJP at zeros of the primals' shapes and dtypes (``primals``
  may be arrays or ``ShapeDtypeStruct``); it returns a tuple of cotangents.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from baton import _batching_hook as hook
from baton import tree
from baton._autodiff import jvp, vjp
from baton._custom import custom_vjp
from baton._subtrace import (
    aval_of,
    check_args,
    check_outputs,
    fun_name,
    inline,
    is_tracing,
    shape_of,
    trace,
)

__all__ = ["closure_convert", "custom_gradient", "linear_transpose", "linearize"]


def _flat_avals(leaves: list) -> list:
    return [aval_of(x) for x in leaves]


# ---- custom_gradient ----


def custom_gradient(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun(*args) -> (out, vjp_fn)`` as a function with that gradient:
    ``vjp_fn(cotangent_of_out)`` returns one cotangent per argument (a
    tuple; a single value is accepted for one argument, as JAX does)."""
    name = fun_name(fun)
    cell: dict = {}

    @custom_vjp
    @functools.wraps(fun)
    def f(*args: Any) -> Any:
        return fun(*args)[0]

    def fwd(*args: Any) -> tuple:
        r = fun(*args)
        if not isinstance(r, (tuple, list)) or len(r) != 2:
            raise TypeError(
                f"custom_gradient({name}): the function must return a pair "
                f"(output, vjp_fn), got {type(r).__name__}"
            )
        out, vjp_fn = r
        if not callable(vjp_fn):
            raise TypeError(
                f"custom_gradient({name}): the second element of the returned "
                f"pair must be a function (vjp_fn), got {type(vjp_fn).__name__}"
            )
        out_leaves, out_tree = tree.flatten(out)
        check_outputs(out_leaves, f"custom_gradient({name})")
        ct_avals = [(*aval_of(x)[:2], False, None) for x in out_leaves]
        n_args = len(args)

        def bwd_flat(*cts: Any) -> list:
            g = vjp_fn(tree.unflatten(out_tree, list(cts)))
            if n_args == 1 and not isinstance(g, (tuple, list)):
                g = (g,)
            if not isinstance(g, (tuple, list)) or len(g) != n_args:
                raise TypeError(
                    f"custom_gradient({name}): vjp_fn must return one cotangent "
                    f"per argument ({n_args}), got {g!r}"
                )
            # None (a zero cotangent) is passed on as such to custom_vjp.
            cell["none"] = [gi is None for gi in g]
            leaves, cell["g_tree"] = tree.flatten([gi for gi in g if gi is not None])
            return leaves

        # Traced here, inside the forward rule: what vjp_fn closes over (the
        # forward pass's values) is lifted, and returned as the residuals.
        traced = trace(bwd_flat, ct_avals, f"{name} vjp_fn")
        cell["bwd"] = traced
        return out, list(traced.lifted)

    def bwd(res: list, ct: Any) -> tuple:
        traced = cell["bwd"]
        g = inline(traced.program, tree.leaves(ct) + list(res), traced.out_weak)
        given = iter(tree.unflatten(cell["g_tree"], g))
        return tuple(None if none else next(given) for none in cell["none"])

    f.defvjp(fwd, bwd)
    return f


# ---- closure_convert ----


def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple:
    """``(converted, consts)``: ``converted(*args, *consts)`` computes
    ``fun(*args)`` for arguments of the example arguments' structure,
    shapes and dtypes, with the traced values ``fun`` closes over passed
    explicitly (so a ``custom_vjp`` function can take them as arguments)."""
    if not is_tracing():
        # Nothing traced to close over: JAX's consts are empty here too.
        def converted(*args: Any) -> Any:
            return fun(*args)

        functools.update_wrapper(converted, fun)
        return converted, []
    leaves, in_tree = tree.flatten(tuple(example_args))
    check_args(leaves, f"closure_convert({fun_name(fun)})")
    cell: dict = {}

    def flat_fn(*ts: Any) -> list:
        out = fun(*tree.unflatten(in_tree, list(ts)))
        out_leaves, cell["out_tree"] = tree.flatten(out)
        check_outputs(out_leaves, f"closure_convert({fun_name(fun)})")
        return out_leaves

    traced = trace(flat_fn, _flat_avals(leaves), fun_name(fun))
    consts = list(traced.lifted)
    n = len(leaves)

    def converted(*args_and_consts: Any) -> Any:
        args, cs = (
            args_and_consts[: len(example_args)],
            args_and_consts[len(example_args) :],
        )
        if len(cs) != len(consts):
            raise TypeError(
                f"closure_convert({fun_name(fun)}): expected {len(example_args)} "
                f"arguments and {len(consts)} consts, got {len(args_and_consts)} "
                "values"
            )
        a_leaves, a_tree = tree.flatten(tuple(args))
        if a_tree != in_tree or len(a_leaves) != n:
            raise TypeError(
                f"closure_convert({fun_name(fun)}): arguments of structure "
                f"{a_tree}, expected {in_tree} (the example arguments')"
            )
        outs = inline(traced.program, a_leaves + list(cs), traced.out_weak)
        return tree.unflatten(cell["out_tree"], outs)

    functools.update_wrapper(converted, fun)
    return converted, consts


# ---- linearize, linear_transpose ----


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """``(fun(*primals), f_jvp)`` (with ``has_aux``: ``(out, f_jvp, aux)``):
    ``f_jvp(*tangents)`` is the JVP of ``fun`` at ``primals`` along
    ``tangents`` (one per primal, each of its primal's structure)."""
    # Linearizing is the first half of reverse mode, which custom_vmap
    # functions refuse, as in JAX (_batching_hook).
    with hook.reverse_mode():
        if has_aux:
            out, _, aux = jvp(fun, primals, _zeros_like_tree(primals), has_aux=True)
        else:
            out, _ = jvp(fun, primals, _zeros_like_tree(primals))

    def f_jvp(*tangents: Any) -> Any:
        if len(tangents) != len(primals):
            raise TypeError(
                f"linearized function takes {len(primals)} tangent(s), one per "
                f"primal, got {len(tangents)}"
            )
        r = jvp(fun, primals, tangents, has_aux=has_aux)
        return r[1]

    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


def _zeros_like_tree(primals: tuple) -> tuple:
    """Zero tangents for ``primals`` (weak scalars: their own dtype)."""

    def z(x: Any) -> Any:
        d = x.dtype if hasattr(x, "dtype") else aval_of(x)[1]
        return np.zeros(shape_of(x), d)

    return tuple(tree.map(z, p) for p in primals)


def linear_transpose(
    fun: Callable[..., Any], *primals: Any, reduce_axes: tuple = ()
) -> Callable:
    """The transpose of the linear function ``fun`` whose arguments have the
    structure, shapes and dtypes of ``primals`` (arrays or
    ``ShapeDtypeStruct``): ``f_t(cotangent) -> tuple`` of one cotangent per
    argument. ``fun`` must be linear (it is not checked)."""
    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes is not supported")
    leaves, in_tree = tree.flatten(tuple(primals))
    avals = [(tuple(x.shape), np.dtype(x.dtype)) for x in leaves]
    for _s, d in avals:
        if d.kind not in "fc":
            raise TypeError(
                f"linear_transpose only supports [float or complex] -> [float or "
                f"complex], and integer -> integer functions, but got {d}"
            )

    def f_t(ct: Any) -> tuple:
        zeros = tree.unflatten(in_tree, [np.zeros(s, d) for s, d in avals])
        out, pullback = vjp(fun, *zeros)
        o_leaves, o_tree = tree.flatten(out)
        c_leaves, c_tree = tree.flatten(ct)
        if o_tree != c_tree:
            raise TypeError(
                f"cotangent tree does not match function output tree: {c_tree} "
                f"vs. {o_tree}"
            )
        for o, c in zip(o_leaves, c_leaves):
            if shape_of(o) != shape_of(c):
                raise TypeError(
                    f"cotangent shape {shape_of(c)} does not match the function "
                    f"output's {shape_of(o)}"
                )
        return tuple(pullback(ct))

    return f_t
