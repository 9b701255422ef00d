"""How baton's transformations run outside any trace: through ``bt.jit``.

- :func:`run_eagerly` runs a transformed function through a fresh
  ``bt.jit`` of itself, so its inputs are traced there and the function, its
  transformation and the use of the result become one compiled program. A
  fresh jit per call means eager transformed functions retrace (and
  recompile) at every call: nothing stale is ever reused, at the cost of the
  compile; wrap them in ``bt.jit`` to compile once.
- :func:`transformation` is the function a transformation returns: traced
  inside a trace, :func:`run_eagerly` outside one.

This sits above ``_jit`` (which itself traces through ``_subtrace``), so the
tracing machinery never imports the compiler that uses it.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from baton import tree
from baton._jit import jit
from baton._subtrace import is_array_like, is_tracing, replaced


def transformation(
    fun: Callable[..., Any], name: str, traced_call: Callable[..., Any]
) -> Callable[..., Any]:
    """The function a transformation returns for ``fun``: inside a trace it
    is ``traced_call``; outside any it runs itself through
    :func:`run_eagerly`."""

    @functools.wraps(fun)
    def transformed(*args: Any, **kwargs: Any) -> Any:
        if not is_tracing():
            return run_eagerly(transformed, args, kwargs, name)
        return traced_call(*args, **kwargs)

    return transformed


def run_eagerly(fn: Callable[..., Any], args: tuple, kwargs: dict, name: str) -> Any:
    """``fn(*args, **kwargs)`` through a fresh ``bt.jit`` (see the module
    docstring). Leaves that are not arrays are passed through unchanged
    (as static values)."""
    leaves, treedef = tree.flatten((args, kwargs))
    dynamic = [i for i, leaf in enumerate(leaves) if is_array_like(leaf)]

    def run(*dyn: Any) -> Any:
        a, k = tree.unflatten(treedef, replaced(leaves, dynamic, dyn))
        return fn(*a, **k)

    run.__name__ = run.__qualname__ = name
    jitted = jit(run)
    # The arguments are known: bound to the trace's parameters, so the
    # function may use Python control flow on its values (concrete.cc); a
    # fresh jit per call, so a trace specialized that way is never reused.
    jitted._binds_arguments = True
    return jitted(*[leaves[i] for i in dynamic])
