"""Printing arrays with numpy's print options: array_repr, array_str,
get_printoptions, set_printoptions, printoptions (host-side: a traced value
cannot be printed inside a jit, use ``bt.debug.print``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops
from baton._baton import Array, lax
from baton.errors import ConcretizationTypeError

Tracer = lax.Tracer

__all__ = [
    "array_repr",
    "array_str",
    "get_printoptions",
    "printoptions",
    "set_printoptions",
]


# ---- printing (numpy's print options) ----


def _host(a: Any) -> np.ndarray:
    if isinstance(a, Tracer):
        raise ConcretizationTypeError(
            "printing a traced value inside a jit is not possible; use "
            "bt.debug.print or return it"
        )
    return np.asarray(a) if isinstance(a, Array) else _ops.host_array(a)


def array_repr(
    arr: Any,
    max_line_width: Any = None,
    precision: Any = None,
    suppress_small: Any = None,
) -> str:
    """numpy's repr of ``arr``'s values."""
    return np.array_repr(_host(arr), max_line_width, precision, suppress_small)


def array_str(
    a: Any,
    max_line_width: Any = None,
    precision: Any = None,
    suppress_small: Any = None,
) -> str:
    """numpy's str of ``a``'s values."""
    return np.array_str(_host(a), max_line_width, precision, suppress_small)


def get_printoptions() -> dict[str, Any]:
    """numpy's current print options (baton prints through numpy)."""
    return np.get_printoptions()


def set_printoptions(*args: Any, **kwargs: Any) -> None:
    """Sets numpy's print options (see ``numpy.set_printoptions``)."""
    return np.set_printoptions(*args, **kwargs)


def printoptions(*args: Any, **kwargs: Any) -> Any:
    """A context manager setting numpy's print options for its block."""
    return np.printoptions(*args, **kwargs)
