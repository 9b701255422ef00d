"""``bt.lax`` outside a trace: each function runs now, as in JAX.

The C++ lax functions build programs and need a trace. Called with
concrete operands outside one (``lax.add(x, 1.0)``, ``lax.fori_loop(0, 3,
body, x)`` at the top level of a script), the wrappers here run them
through ``bt.jit``:

- operations (everything but control flow) compile once per combination of
  their static arguments (shapes, axes, dtypes, Python scalars: the leaves
  that are not arrays) and are reused, like ``baton.numpy``'s eager calls
  (``_ops.apply``); arrays (baton Arrays, numpy arrays) are the arguments;
- control flow (``cond``, ``switch``, ``fori_loop``, ``while_loop``,
  ``scan``, ``map``) takes Python functions whose closures may hold other
  arrays each call, so it is traced afresh every call
  (``_eager_transform.run_eagerly``), never reused stale.

Inside a trace, or with a Tracer operand, the wrapped function is called
as it is.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from baton import _ref_state, tree
from baton._baton import Array, Donated
from baton._baton import lax as _lax
from baton._eager_transform import run_eagerly
from baton._sharded_array import is_sharded

# Compiled eager operations, oldest first; bounded as _ops' cache is.
_compiled: dict = {}
_MAX_COMPILED = 512


def _is_dynamic(leaf: Any) -> bool:
    return isinstance(leaf, (Array, Donated, np.ndarray)) or is_sharded(leaf)


def _has_tracer(leaves: list) -> bool:
    return any(isinstance(leaf, _lax.Tracer) for leaf in leaves)


def _operation(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` (a lax operation) that runs compiled when called eagerly."""

    @functools.wraps(fn)
    def eager(*args: Any, **kwargs: Any) -> Any:
        if _lax.is_tracing():
            return fn(*args, **kwargs)
        leaves, treedef = tree.flatten((args, kwargs), is_leaf=lambda x: x is None)
        if _has_tracer(leaves):
            return fn(*args, **kwargs)  # raises its own error for an escaped one
        dyn = [i for i, leaf in enumerate(leaves) if _is_dynamic(leaf)]
        dyn_set = set(dyn)
        static = tuple(
            (i, type(leaf), leaf) for i, leaf in enumerate(leaves) if i not in dyn_set
        )
        key = (fn, treedef, static)
        try:
            jitted = _compiled.get(key)
        except TypeError:  # an unhashable static argument: trace afresh
            return run_eagerly(fn, args, kwargs, name)
        if jitted is None:
            jitted = _compile(fn, name, leaves, treedef, dyn)
            if len(_compiled) >= _MAX_COMPILED:
                del _compiled[next(iter(_compiled))]
            _compiled[key] = jitted
        return jitted(*[leaves[i] for i in dyn])

    return eager


def _compile(
    fn: Callable[..., Any], name: str, leaves: list, treedef: Any, dyn: list
) -> Any:
    from baton._jit import jit

    template = list(leaves)
    for i in dyn:
        template[i] = None  # the arrays of this call are not kept alive

    def run(*arrays: Any) -> Any:
        filled = list(template)
        for i, a in zip(dyn, arrays):
            filled[i] = a
        a, k = tree.unflatten(treedef, filled)
        return fn(*a, **k)

    run.__name__ = run.__qualname__ = name
    return jit(run)


def _control_flow(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` (a control-flow function taking Python callables) that is
    traced afresh and run when called eagerly."""

    @functools.wraps(fn)
    def eager(*args: Any, **kwargs: Any) -> Any:
        if _lax.is_tracing():
            return fn(*args, **kwargs)
        # bt.Refs living outside any trace that the functions update: run
        # again with their buffers as (donated) arguments (_ref_state).
        return _ref_state.threading_refs(
            lambda: run_eagerly(fn, args, kwargs, name),
            lambda refs: _ref_state.eager_threaded(
                refs,
                lambda run, nm, markers: run_eagerly(run, (markers,), {}, nm),
                lambda: fn(*args, **kwargs),
                name,
            ),
        )

    return eager


CONTROL_FLOW = ("cond", "switch", "fori_loop", "while_loop", "scan", "map")
# Functions that are not operations on arrays (trace queries, capture).
# stop_gradient is the identity eagerly (baton/_checkpoint.py) already.
NOT_OPERATIONS = frozenset(
    {"is_tracing", "capture", "as_tracer", "constant", "stop_gradient"}
)


def eager(name: str, fn: Any) -> Any:
    """The ``bt.lax`` entry for ``name``: ``fn`` wrapped to run eagerly."""
    if not callable(fn) or isinstance(fn, type) or name in NOT_OPERATIONS:
        return fn
    if name in CONTROL_FLOW:
        return _control_flow(fn, f"lax.{name}")
    return _operation(fn, f"lax.{name}")
