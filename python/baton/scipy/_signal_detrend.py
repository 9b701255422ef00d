"""``detrend`` of ``bt.scipy.signal`` (its own module so that the spectral
estimators of ``_signal_spectral`` detrend segments without importing
``signal``), and the inexact-dtype promotion the module shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton._config import config

__all__ = ["detrend"]


def _inexact(*xs: Any) -> list:
    """The operands as Tracers of their common float dtype (integers and
    bools: float32, or float64 when x64 is on and one is 64-bit)."""
    ts = [_ops.as_tracer(x) for x in xs]
    dt = np.result_type(*(np.dtype(t.dtype) for t in ts))
    if not np.issubdtype(dt, np.inexact):
        x64 = bool(config.read("enable_x64"))
        wide = any(np.dtype(t.dtype).itemsize == 8 for t in ts)
        dt = np.dtype(np.float64 if x64 and wide else np.float32)
    return [lax.convert_element_type(t, dt) for t in ts]


def _detrend(data: Any, *, axis: int, kind: str, bp: tuple[int, ...]) -> Any:
    (x,) = _inexact(data)
    nd = len(x.shape)
    if kind == "constant":
        import baton.numpy as bnp

        return lax.sub(x, bnp.mean(x, axis=axis, keepdims=True))
    n = int(x.shape[axis])
    perm = (axis, *(d for d in range(nd) if d != axis))
    y = lax.transpose(x, perm)
    rest = tuple(int(d) for d in y.shape[1:])
    cols = int(np.prod(rest)) if rest else 1
    y = lax.reshape(y, (n, cols))
    pieces = []
    dt = np.dtype(y.dtype)
    for lo, hi in zip(bp[:-1], bp[1:]):
        npts = hi - lo
        seg = lax.slice(y, (lo, 0), (hi, cols))
        if npts == 1:
            # One point: the least-squares line passes through it.
            pieces.append(lax.full((1, cols), 0, dt))
            continue
        # The least-squares line through (t_i, y_i), t_i = i / npts (JAX's
        # design matrix [1, t]), in closed form about the means.
        t = np.arange(1, npts + 1, dtype=np.float64) / npts
        tc = (t - t.mean()).astype(dt)
        tcol = lax.reshape(lax.constant(tc), (npts, 1))
        mean = lax.div(lax.sum(seg, 0, keepdims=True), lax.full((), npts, dt))
        centred = lax.sub(seg, mean)
        denom = float(np.sum((t - t.mean()) ** 2))
        slope = lax.div(
            lax.sum(lax.mul(centred, tcol), 0, keepdims=True), lax.full((), denom, dt)
        )
        pieces.append(lax.sub(centred, lax.mul(tcol, slope)))
    out = pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, 0)
    out = lax.reshape(out, (n, *rest))
    inverse = tuple(int(i) for i in np.argsort(perm))
    return lax.transpose(out, inverse)


def detrend(
    data: Any,
    axis: int = -1,
    type: str = "linear",
    bp: int | Sequence[int] | np.ndarray = 0,
    overwrite_data: None = None,
) -> Any:
    """``data`` less its least-squares trend along ``axis``
    (``scipy.signal.detrend``): ``type='constant'`` removes the mean,
    ``'linear'`` a straight line fitted on each segment between the
    breakpoints ``bp``."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    shape = _ops.shape_of(data)
    nd = len(shape)
    if not -nd <= axis < nd:
        raise ValueError(f"detrend: axis {axis} is out of range for rank {nd}")
    axis = axis % nd
    n = int(shape[axis])
    bps: tuple[int, ...] = ()
    if type == "linear":
        arr = np.sort(np.unique(np.r_[0, np.asarray(bp, dtype=np.int64).ravel(), n]))
        if arr[0] < 0 or arr[-1] > n:
            raise ValueError(
                "Breakpoints must be non-negative and less than length of data "
                "along given axis."
            )
        bps = tuple(int(b) for b in arr)
    return _ops.apply(_detrend, (data,), (("axis", axis), ("bp", bps), ("kind", type)))
