"""Tracing without running: ``bt.eval_shape``, ``bt.make_jaxpr`` and
``bt.ShapeDtypeStruct`` (JAX's names).

Both trace the function once with Tracers standing for its array arguments
(``_subtrace.trace``): nothing is compiled, run, allocated or consumed.
``make_jaxpr`` shows the traced program as baton's program text (the form
``jit(f).lower(...).as_text()`` prints), not as a JAX jaxpr.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Callable

import numpy as np

from baton import _dtypes, _ref_state, _subtrace, tree
from baton._baton import Array, Donated
from baton._baton import lax as _lax
from baton._sharded_array import is_sharded

__all__ = ["ShapeDtypeStruct", "eval_shape", "make_jaxpr"]


class ShapeDtypeStruct:
    """The shape and dtype of an array, without its values (an argument of
    ``eval_shape`` and what it returns). ``sharding`` is accepted and kept
    for JAX compatibility."""

    __slots__ = ("dtype", "shape", "sharding", "weak_type")

    def __init__(
        self,
        shape: Iterable[int],
        dtype: Any,
        *,
        sharding: Any = None,
        weak_type: bool = False,
    ) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.sharding = sharding
        self.weak_type = bool(weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        dtype = _dtypes.name_of(self.dtype)
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={dtype}{weak})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ShapeDtypeStruct)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))


def _is_abstract(x: Any) -> bool:
    return isinstance(x, ShapeDtypeStruct) or (
        hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, type)
    )


def _aval(x: Any) -> _subtrace.Aval | None:
    """The aval of an array-like leaf, None for a static (non-array) one."""
    if isinstance(x, ShapeDtypeStruct):
        return (x.shape, _dtypes.name_of(x.dtype), x.weak_type, None)
    if isinstance(x, Donated):
        raise TypeError(
            "eval_shape / make_jaxpr: a bt.donate(...) marker is not an argument "
            "here; pass the array itself (nothing is consumed)"
        )
    if is_sharded(x):  # traced as the global array, as in JAX
        return (tuple(x.shape), _dtypes.name_of(x.dtype), False, None)
    if _subtrace.is_array_like(x):
        return _subtrace.aval_of(x)
    if _is_abstract(x):  # e.g. jax.ShapeDtypeStruct or another array type
        return (tuple(x.shape), _dtypes.name_of(np.dtype(x.dtype)), False, None)
    return None


def _trace(
    fun: Callable[..., Any], args: tuple, kwargs: dict, static: frozenset
) -> Any:
    """Traces ``fun``; returns (Traced, output treedef)."""
    dyn_args = [None if i in static else a for i, a in enumerate(args)]
    leaves, treedef = tree.flatten((dyn_args, kwargs))
    avals = [_aval(x) for x in leaves]
    dynamic = [i for i, a in enumerate(avals) if a is not None]
    out_tree: list = []

    def body(*tracers: Any) -> list:
        full = list(leaves)
        for i, t in zip(dynamic, tracers):
            if isinstance(full[i], _ref_state.RefBase):
                _ref_state.bind(full[i], t)  # the Ref itself, holding the Tracer
            else:
                full[i] = t
        a, k = tree.unflatten(treedef, full)
        a = [args[i] if i in static else v for i, v in enumerate(a)]
        out = fun(*a, **k)
        flat, out_def = tree.flatten(out)
        out_tree.append(out_def)
        return [_as_output(x) for x in flat]

    name = _subtrace.fun_name(fun)
    traced = _subtrace.trace(body, [avals[i] for i in dynamic], name)
    return traced, out_tree[0]


def _as_output(x: Any) -> Any:
    if isinstance(x, (_lax.Tracer, Array)) or _subtrace.is_array_like(x):
        return x
    raise TypeError(
        f"eval_shape / make_jaxpr: the function returned a {type(x).__name__}; "
        "outputs must be arrays (or Python scalars) and pytrees of them"
    )


def _out_structs(traced: Any) -> list[ShapeDtypeStruct]:
    avals = traced.program.output_avals
    return [
        ShapeDtypeStruct(shape, dtype, weak_type=weak)
        for (shape, dtype, _kind), weak in zip(avals, traced.out_weak)
    ]


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes ``fun(*args, **kwargs)`` would return, as a
    pytree of ``ShapeDtypeStruct``, found by tracing ``fun`` (nothing runs
    or is allocated).

    Array leaves of the arguments may be ``ShapeDtypeStruct``s (or anything
    with ``.shape`` and ``.dtype``), baton or numpy arrays, or Python
    scalars (weakly typed); other leaves are passed to ``fun`` unchanged.
    """
    traced, out_def = _trace(fun, args, kwargs, frozenset())
    return tree.unflatten(out_def, _out_structs(traced))


class Jaxpr:
    """What ``make_jaxpr(f)(*args)`` returns: the traced program.

    ``str()`` is baton's program text (not JAX's jaxpr syntax);
    ``in_avals`` / ``out_avals`` are lists of ``ShapeDtypeStruct``.
    """

    def __init__(self, traced: Any, in_avals: list) -> None:
        self._traced = traced
        self.in_avals = in_avals
        self.out_avals = _out_structs(traced)

    @property
    def text(self) -> str:
        """The program text (also ``str(self)``)."""
        return self._traced.program.as_text()

    def pretty_print(self) -> str:
        """The program text (JAX's method name)."""
        return self.text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: int | Iterable[int] = (),
    return_shape: bool = False,
) -> Callable[..., Any]:
    """A function that traces ``fun`` on its arguments and returns the
    program (a :class:`Jaxpr`; ``str()`` gives baton's program text), or
    ``(program, out_shapes)`` with ``return_shape=True``. Arguments as for
    :func:`eval_shape`; ``static_argnums`` are passed to ``fun`` unchanged.
    """
    if not callable(fun):
        raise TypeError(f"make_jaxpr: expected a function, got {type(fun).__name__}")
    nums = (static_argnums,) if isinstance(static_argnums, int) else static_argnums
    static_nums = tuple(int(i) for i in nums)

    def traced_fun(*args: Any, **kwargs: Any) -> Any:
        static = frozenset(i + len(args) if i < 0 else i for i in static_nums)
        traced, out_def = _trace(fun, args, kwargs, static)
        dyn = [None if i in static else a for i, a in enumerate(args)]
        in_avals = [
            ShapeDtypeStruct(a[0], a[1], weak_type=a[2])
            for a in (_aval(x) for x in tree.leaves((dyn, kwargs)))
            if a is not None
        ]
        jaxpr = Jaxpr(traced, in_avals)
        if return_shape:
            return jaxpr, tree.unflatten(out_def, list(jaxpr.out_avals))
        return jaxpr

    traced_fun.__name__ = f"make_jaxpr({_subtrace.fun_name(fun)})"
    return traced_fun
