"""More of ``jax.nn``'s activations: the hard, sparse and smooth variants
(``hard_sigmoid``, ``hard_silu``/``hard_swish``, ``sparse_plus``,
``sparse_sigmoid``, ``squareplus``, ``mish``), ``glu``, ``identity``,
``tanh``, ``log1mexp`` and ``logmeanexp``. Compositions of baton.numpy
operations run through ``_ops.apply``, as in ``_activations``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton.nn._activations import _axis_arg, _float, _relu6, _softplus, _unary
from baton.scipy import special

__all__ = [
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "identity",
    "log1mexp",
    "logmeanexp",
    "mish",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "tanh",
]


def _bnp() -> Any:
    import baton.numpy as bnp

    return bnp


def _hard_sigmoid(x: Any) -> Any:
    return _relu6(_ops.as_tracer(x) + 3.0) / 6.0


def _hard_silu(x: Any) -> Any:
    t = _ops.as_tracer(x)
    return t * _hard_sigmoid(t)


def _mish(x: Any) -> Any:
    t = _float(x)
    return t * _bnp().tanh(_softplus(t))


def _sparse_plus(x: Any) -> Any:
    bnp = _bnp()
    t = _float(x)
    return bnp.where(t <= -1.0, 0.0, bnp.where(t >= 1.0, t, (t + 1.0) * (t + 1.0) / 4))


def _sparse_sigmoid(x: Any) -> Any:
    return 0.5 * _bnp().clip(_float(x) + 1.0, 0.0, 2.0)


def _tanh(x: Any) -> Any:
    return lax.tanh(_float(x))


def _log1mexp(x: Any) -> Any:
    bnp = _bnp()
    t = _float(x)
    return bnp.where(
        t < math.log(2.0), bnp.log(-bnp.expm1(-t)), bnp.log1p(-bnp.exp(-t))
    )


hard_sigmoid = _unary(_hard_sigmoid, "``relu6(x + 3) / 6``.")
hard_silu = _unary(_hard_silu, "``x * hard_sigmoid(x)`` (also ``hard_swish``).")
hard_swish = hard_silu
mish = _unary(_mish, "``x * tanh(softplus(x))``.")
sparse_plus = _unary(_sparse_plus, "0 below -1, x above 1, ``(x + 1)**2 / 4`` between.")
sparse_sigmoid = _unary(_sparse_sigmoid, "``clip(x + 1, 0, 2) / 2``.")
tanh = _unary(_tanh, "The hyperbolic tangent (integers give float32).")
log1mexp = _unary(_log1mexp, "``log(1 - exp(-x))``, accurate for small and large x.")


def identity(x: Any) -> Any:
    """``x`` itself (as an array)."""
    return _bnp().asarray(x)


def _squareplus(x: Any, b: Any) -> Any:
    bnp = _bnp()
    t, bb = _ops.promote(_float(x), b)
    return (t + bnp.sqrt(t * t + bb)) / 2


def squareplus(x: Any, b: Any = 4) -> Any:
    """``(x + sqrt(x**2 + b)) / 2``, a smooth ReLU."""
    return _ops.apply(_squareplus, (x, b))


def _glu(x: Any, *, axis: int) -> Any:
    bnp = _bnp()
    t = _ops.as_tracer(x)
    a, g = bnp.split(t, 2, axis=axis)
    return a * lax.logistic(_float(g))


def glu(x: Any, axis: int = -1) -> Any:
    """The gated linear unit: ``x``'s halves along ``axis``, the first
    times the sigmoid of the second."""
    size = _ops.shape_of(x)[axis]
    if size % 2:
        raise ValueError(f"glu: axis size must be divisible by 2, got {size}")
    return _ops.apply(_glu, (x,), (("axis", int(axis)),))


def _logmeanexp(x: Any, *, axis: Any, keepdims: bool) -> Any:
    bnp = _bnp()
    t = _float(x)
    nd = len(t.shape)
    axes = _ops.normalize_axes(axis, nd)
    count = int(
        np.prod([t.shape[a] for a in (axes if axes is not None else range(nd))])
    )
    lse = special._logsumexp(t, None, axis=axis, keepdims=keepdims, return_sign=False)
    return lse - bnp.log(bnp.asarray(count, dtype=lse.dtype))


def logmeanexp(
    x: Any, axis: Any = None, where: Any = None, keepdims: bool = False
) -> Any:
    """``log(mean(exp(x), axis))``, computed stably (``where=`` is not
    supported)."""
    if where is not None:
        raise NotImplementedError("logmeanexp: where= is not supported")
    return _ops.apply(
        _logmeanexp, (x,), (("axis", _axis_arg(axis)), ("keepdims", bool(keepdims)))
    )
