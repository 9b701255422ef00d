"""What the special functions share: their arguments as float Tracers, and
``baton.numpy`` (this package is above it)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops


def bnp() -> Any:
    """``baton.numpy``, imported on first use."""
    import baton.numpy as bnp

    return bnp


def as_float(x: Any) -> Any:
    """x as a Tracer of a float dtype (integers and bools: float32)."""
    t = _ops.as_tracer(x)
    return t if _ops.is_float(np.dtype(t.dtype)) else t.astype(np.float32)


def nan_tangent(t: Any) -> Any:
    """The tangent of an argument a function has no derivative in (JAX
    raises): NaN where the argument is perturbed, 0 where it is not, so a
    derivative taken in the other arguments stays exact and one taken in
    this one is NaN, never a silent zero."""
    bnp_ = bnp()
    return bnp_.where(t != 0, t * np.nan, 0.0)
