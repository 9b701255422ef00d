"""``bt.custom_batching``: functions with a user-defined ``vmap`` rule
(``custom_vmap``, ``sequential_vmap``), as ``jax.custom_batching``.

Under ``bt.vmap`` a ``custom_vmap`` function called in the vmapped
function is not batched: its rule ``rule(axis_size, in_batched, *args) ->
(out, out_batched)`` is called on the batched arguments (``_batching_hook``
describes how ``vmap`` cuts the call out of its trace). Anywhere else the
function runs as it is: outside any trace, under ``bt.jit``, under
``bt.jvp`` (whose derivative is the body's, as in JAX), and under
``bt.jvp`` of a ``bt.vmap`` (the rule's, as in JAX).

``custom_jvp`` / ``custom_vjp`` functions whose body calls a
``custom_vmap`` function (JAX's documented way to give a function both
rules) are batched here, in Python, when called in a vmapped function: the
batched function is a new custom function whose body is ``vmap`` of the
body, and whose rules are ``vmap`` of the rules (cotangents of unbatched
arguments summed over the batch), which is how JAX batches them. ``grad`` / ``value_and_grad`` / ``jvp`` called directly in a vmapped
function over such a function are computed on the vmapped function
(``_transform_batching``).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from baton import _batching_hook as hook
from baton import tree
from baton._baton import lax as _lax
from baton._control_flow import map as _lax_map
from baton._custom import _tracing_rules, custom_jvp, custom_vjp, register_batcher
from baton._subtrace import (
    Tracer,
    check_args,
    dtype_of,
    fun_name,
    resolve_kwargs,
    shape_of,
)
from baton._vmap import vmap

__all__ = ["custom_vmap", "sequential_vmap"]


class custom_vmap:
    """A function with a custom ``vmap`` rule, as ``jax.custom_batching.
    custom_vmap``: under ``bt.vmap`` the rule set with :meth:`def_vmap` is
    called instead of batching the function; elsewhere the function runs.

    Example::

        @bt.custom_batching.custom_vmap
        def f(x, y):
            return x + y

        @f.def_vmap
        def f_vmap_rule(axis_size, in_batched, xs, ys):
            assert all(in_batched)
            return xs * ys, True

        bt.vmap(f)(bnp.arange(3), bnp.arange(1, 4))   # [0, 2, 6]: the rule
        f(2, 3)                                         # 5: the function

    The rule takes the batch size, a list with one pytree of bools per
    argument (whether each leaf is batched; batched ones have the batch
    dimension first) and the arguments, and returns the output and a pytree
    of bools of the output's structure (False: that leaf is the same for
    every example and is broadcast). As in JAX, the rule is not called when
    no argument is batched, and reverse-mode differentiation (``grad``,
    ``vjp``) raises ValueError unless a ``custom_vjp`` is around the
    ``custom_vmap`` (docs/jax_surface.md says how baton decides).
    """

    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., Any] | None = None

    def __getattr__(self, name: str) -> Any:
        # JAX forwards unknown attributes to the wrapped function.
        fun = self.__dict__.get("fun")
        if fun is None:
            raise AttributeError(name)
        return getattr(fun, name)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)

    def def_vmap(self, vmap_rule: Callable[..., Any]) -> Callable[..., Any]:
        """Sets the rule ``vmap_rule(axis_size, in_batched, *args) -> (out,
        out_batched)`` and returns it unchanged (usable as a decorator).

        Example::

            @f.def_vmap
            def rule(axis_size, in_batched, xs):
                return bnp.sum(xs, axis=0), False   # one value for all
        """
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = fun_name(self.fun)
        try:
            args = resolve_kwargs(self.fun, args, kwargs, f"custom_vmap({name})")
        except TypeError as e:
            raise TypeError(
                "The input arguments to the custom_vmap-decorated function "
                f"{name} could not be resolved to positional-only arguments. "
                f"Binding failed with the error:\n{e}"
            ) from e
        if not self.vmap_rule:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {name} using "
                "def_vmap."
            )
        leaves, in_tree = tree.flatten(tuple(args))
        check_args(leaves, f"custom_vmap({name})")
        got = hook.intercept(leaves, in_tree, self.vmap_rule, self.fun, name)
        if got is None:
            if hook.in_reverse_mode() and any(isinstance(x, Tracer) for x in leaves):
                raise ValueError(
                    f"custom_vmap function {name} does not support reverse-mode "
                    "autodiff (grad, vjp, value_and_grad, jacrev, hessian), as in "
                    "JAX; to differentiate it, wrap it in a custom_vjp: "
                    "bt.custom_vjp(bt.custom_batching.custom_vmap(f)) with defvjp "
                    "(forward mode, bt.jvp, differentiates the function)"
                )
            return self.fun(*args)
        out_tree, outs = got
        return tree.unflatten(out_tree, outs)


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """``f`` as a ``custom_vmap`` function whose rule runs ``f`` once per
    example, in a loop (``bt.lax.map``), stacking the results: for
    functions that should not be batched, as ``jax.custom_batching.
    sequential_vmap``.

    Example::

        @bt.custom_batching.sequential_vmap
        def f(x):
            return x + 1

        bt.vmap(f)(bnp.arange(3))   # [1, 2, 3], from three calls of f

    Unbatched arguments are passed to every call as they are; every output
    is batched. Inside the loop ``f`` runs its body (a ``vmap`` around the
    ``vmap`` batches that loop's body as a whole).
    """
    cf = custom_vmap(f)

    @cf.def_vmap
    def rule(axis_size: int, in_batched: list, *args: Any) -> tuple:
        leaves, treedef = tree.flatten(list(args))
        flags = tree.leaves(in_batched)
        mapped = [x for x, b in zip(leaves, flags) if b]

        def one(xs: list) -> Any:
            it = iter(xs)
            full = [next(it) if b else x for x, b in zip(leaves, flags)]
            with hook.suspended():
                return cf(*tree.unflatten(treedef, full))

        out = _lax_map(one, mapped)
        return out, tree.map(lambda _: True, out)

    return cf


# ---- custom_jvp / custom_vjp functions batched in Python ----


def _in_axes(in_batched: list) -> tuple:
    return tuple(tree.map(lambda b: 0 if b else None, list(in_batched)))


def _per_example_zeros(args: tuple, in_batched: list) -> list:
    """Per-example zero cotangents of each argument (a pytree each)."""
    return [
        tree.map(
            lambda x, b: _lax.zeros(shape_of(x)[1:] if b else shape_of(x), dtype_of(x)),
            a,
            ib,
        )
        for a, ib in zip(args, in_batched)
    ]


def _batch_custom_jvp(f: custom_jvp, nondiff: list, positions: list) -> Callable:
    """The vmap rule of custom_jvp ``f`` over its differentiated arguments
    (``nondiff``: the other arguments, at ``positions``' complement)."""

    def full(diff: tuple) -> list:
        out = list(nondiff)
        for p, d in zip(positions, diff):
            out.insert(p, d)
        return out

    def rule(n: int, in_batched: list, *diff: Any) -> tuple:
        axes = _in_axes(in_batched)

        def body(*d: Any) -> Any:
            return vmap(lambda *e: f.fun(*full(e)), in_axes=axes, axis_size=n)(*d)

        g = custom_jvp(body)
        g.__name__ = f"vmap({fun_name(f.fun)})"

        @g.defjvp
        def g_jvp(primals: tuple, tangents: tuple) -> tuple:
            def one(p: tuple, t: tuple) -> Any:
                with _tracing_rules(f):
                    return f.jvp(*nondiff, p, t)

            return vmap(one, in_axes=(axes, axes), axis_size=n)(primals, tangents)

        out = g(*diff)
        return out, tree.map(lambda _: True, out)

    return rule


def _batch_custom_vjp(f: custom_vjp, nondiff: list, positions: list) -> Callable:
    """The vmap rule of custom_vjp ``f`` (see :func:`_batch_custom_jvp`)."""

    def full(diff: tuple) -> list:
        out = list(nondiff)
        for p, d in zip(positions, diff):
            out.insert(p, d)
        return out

    def rule(n: int, in_batched: list, *diff: Any) -> tuple:
        axes = _in_axes(in_batched)
        zeros = _per_example_zeros(diff, in_batched)

        def body(*d: Any) -> Any:
            return vmap(lambda *e: f.fun(*full(e)), in_axes=axes, axis_size=n)(*d)

        def fwd(*d: Any) -> Any:
            def one(*e: Any) -> Any:
                with _tracing_rules(f):
                    return f.fwd(*full(e))

            return vmap(one, in_axes=axes, axis_size=n)(*d)

        def bwd(res: Any, ct: Any) -> tuple:
            def one(r: Any, c: Any) -> tuple:
                with _tracing_rules(f):
                    g = f.bwd(*nondiff, r, c)
                if not isinstance(g, (tuple, list)) or len(g) != len(diff):
                    return g  # custom_vjp's own check reports it
                return tuple(z if gi is None else gi for gi, z in zip(g, zeros))

            cts = vmap(one, in_axes=(0, 0), axis_size=n)(res, ct)
            if not isinstance(cts, (tuple, list)) or len(cts) != len(diff):
                return cts
            # An unbatched argument's cotangent: the sum over the examples.
            return tuple(
                tree.map(lambda c, b: c if b else _lax.sum(c, [0]), ci, bi)
                for ci, bi in zip(cts, in_batched)
            )

        g = custom_vjp(body)
        g.__name__ = f"vmap({fun_name(f.fun)})"
        g.defvjp(fwd, bwd)
        out = g(*diff)
        return out, tree.map(lambda _: True, out)

    return rule


def _batcher(f: Any, nondiff: list, positions: list) -> Callable:
    if isinstance(f, custom_vjp):
        return _batch_custom_vjp(f, nondiff, positions)
    return _batch_custom_jvp(f, nondiff, positions)


register_batcher(_batcher)
