"""The softmax kernels ``bt.nn.softmax`` / ``log_softmax`` and
``bt.scipy.special.softmax`` / ``log_softmax`` share (traced: run through
``_ops.apply`` with a static ``axis``), so one eager program serves both.

Here, below both packages: ``baton.nn`` builds on ``baton.scipy.special``,
which must not import it back.
"""

from __future__ import annotations

from typing import Any

from baton._checkpoint import stop_gradient
from baton.scipy._float_args import as_float
from baton.scipy._float_args import bnp as _bnp


def axis_arg(axis: Any) -> Any:
    """An axis argument as a hashable static: None, an int or a tuple."""
    if axis is None or isinstance(axis, int):
        return axis
    return tuple(int(a) for a in axis)


def softmax(x: Any, *, axis: Any) -> Any:
    bnp = _bnp()
    t = as_float(x)
    shift = stop_gradient(bnp.max(t, axis=axis, keepdims=True))
    e = bnp.exp(t - shift)
    return e / bnp.sum(e, axis=axis, keepdims=True)


def log_softmax(x: Any, *, axis: Any) -> Any:
    bnp = _bnp()
    t = as_float(x)
    shifted = t - stop_gradient(bnp.max(t, axis=axis, keepdims=True))
    return shifted - bnp.log(bnp.sum(bnp.exp(shifted), axis=axis, keepdims=True))
