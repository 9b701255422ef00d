"""Activation functions and normalisations of ``bt.nn`` (``jax.nn``'s).

Each is a composition of baton.numpy operations run through
``_ops.apply``: eagerly one compiled program per shape and dtype, inlined
while tracing, differentiable by ``bt.grad`` with JAX's derivative at the
kinks (``relu'(0) = 0``, ``relu6'(0) = relu6'(6) = 0``,
``leaky_relu'(0) = 1``, ``elu'(0) = 1``, ``softplus'(0) = 0.5``).
Integer inputs compute in float32; float dtypes are kept.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton.scipy import _softmax, special
from baton.scipy._softmax import axis_arg as _axis_arg

__all__ = [
    "celu",
    "elu",
    "gelu",
    "hard_tanh",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "logsumexp",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "standardize",
    "swish",
]

logsumexp = special.logsumexp

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _bnp() -> Any:
    import baton.numpy as bnp

    return bnp


def _float(x: Any) -> Any:
    t = _ops.as_tracer(x)
    return t if _ops.is_float(np.dtype(t.dtype)) else t.astype(np.float32)


def _unary(impl: Any, doc: str) -> Any:
    name = impl.__name__.lstrip("_")

    def fn(x: Any) -> Any:
        return _ops.apply(impl, (x,))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _relu(x: Any) -> Any:
    t = _ops.as_tracer(x)
    return _bnp().where(t > 0, t, 0)


def _relu6(x: Any) -> Any:
    bnp = _bnp()
    t = _ops.as_tracer(x)
    inside = bnp.where(t > 0, t, 0)
    return bnp.where(t < 6, inside, 6)


def _sigmoid(x: Any) -> Any:
    return lax.logistic(_float(x))


def _silu(x: Any) -> Any:
    t = _float(x)
    return t * lax.logistic(t)


def _softplus(x: Any) -> Any:
    bnp = _bnp()
    t = _float(x)
    a = bnp.abs(t)
    # max(t, 0) written as (t + |t|) / 2 so that the derivative at 0 is 1/2.
    return (t + a) * 0.5 + bnp.log1p(bnp.exp(-a))


def _log_sigmoid(x: Any) -> Any:
    return -_softplus(-_float(x))


def _soft_sign(x: Any) -> Any:
    t = _float(x)
    return t / (_bnp().abs(t) + 1.0)


def _hard_tanh(x: Any) -> Any:
    bnp = _bnp()
    t = _ops.as_tracer(x)
    return bnp.where(t > 1, 1, bnp.where(t < -1, -1, t))


relu = _unary(_relu, "``max(x, 0)``; the derivative at 0 is 0 (as JAX).")
relu6 = _unary(_relu6, "``min(max(x, 0), 6)``; the derivative at 0 and 6 is 0.")
sigmoid = _unary(_sigmoid, "The logistic function ``1 / (1 + exp(-x))``.")
silu = _unary(_silu, "``x * sigmoid(x)`` (also ``swish``).")
swish = silu
softplus = _unary(_softplus, "``log(1 + exp(x))``, computed stably.")
log_sigmoid = _unary(_log_sigmoid, "``log(sigmoid(x)) = -softplus(-x)``.")
soft_sign = _unary(_soft_sign, "``x / (|x| + 1)``.")
hard_tanh = _unary(_hard_tanh, "``x`` clipped to ``[-1, 1]``.")


def _elu(x: Any, *, alpha: float) -> Any:
    bnp = _bnp()
    t = _float(x)
    pos = t > 0
    return bnp.where(pos, t, alpha * bnp.expm1(bnp.where(pos, 0.0, t)))


def elu(x: Any, alpha: float = 1.0) -> Any:
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""
    return _ops.apply(_elu, (x,), (("alpha", float(alpha)),))


def selu(x: Any) -> Any:
    """Scaled ELU: ``scale * elu(x, alpha)`` with the self-normalising
    constants (alpha 1.6733, scale 1.0507)."""
    return _ops.apply(_selu, (x,))


def _selu(x: Any) -> Any:
    return _SELU_SCALE * _elu(x, alpha=_SELU_ALPHA)


def _celu(x: Any, *, alpha: float) -> Any:
    bnp = _bnp()
    t = _float(x)
    pos = t > 0
    return bnp.where(pos, t, alpha * bnp.expm1(bnp.where(pos, 0.0, t) / alpha))


def celu(x: Any, alpha: float = 1.0) -> Any:
    """``x`` where positive, else ``alpha * (exp(x / alpha) - 1)``."""
    return _ops.apply(_celu, (x,), (("alpha", float(alpha)),))


def _leaky_relu(x: Any, *, negative_slope: float) -> Any:
    t = _float(x)
    return _bnp().where(t >= 0, t, negative_slope * t)


def leaky_relu(x: Any, negative_slope: float = 1e-2) -> Any:
    """``x`` where ``x >= 0``, else ``negative_slope * x``."""
    return _ops.apply(_leaky_relu, (x,), (("negative_slope", float(negative_slope)),))


def _gelu(x: Any, *, approximate: bool) -> Any:
    bnp = _bnp()
    t = _float(x)
    if approximate:
        inner = math.sqrt(2.0 / math.pi) * (t + 0.044715 * (t * t * t))
        return t * (0.5 * (1.0 + bnp.tanh(inner)))
    from baton.scipy._special_math import _erf_impl

    return t * (_erf_impl(t * (1.0 / math.sqrt(2.0))) + 1.0) * 0.5


def gelu(x: Any, approximate: bool = True) -> Any:
    """The Gaussian error linear unit ``x * Phi(x)``.

    ``approximate=True`` (JAX's default) uses the tanh form
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``; ``False`` the erf
    form ``x (1 + erf(x / sqrt 2)) / 2`` (baton's erf: absolute error
    < 1e-6).
    """
    return _ops.apply(_gelu, (x,), (("approximate", bool(approximate)),))


def _no_where(name: str, where: Any) -> None:
    if where is not None:
        raise NotImplementedError(
            f"{name}: where= is not supported; mask the input with "
            "bnp.where(mask, x, -inf) instead"
        )


def softmax(x: Any, axis: int | tuple[int, ...] | None = -1, where: Any = None) -> Any:
    """``exp(x) / sum(exp(x), axis)``, computed stably (the max is
    subtracted first)."""
    _no_where("softmax", where)
    return _ops.apply(_softmax.softmax, (x,), (("axis", _axis_arg(axis)),))


def log_softmax(
    x: Any, axis: int | tuple[int, ...] | None = -1, where: Any = None
) -> Any:
    """``x - logsumexp(x, axis, keepdims=True)``, computed stably."""
    _no_where("log_softmax", where)
    return _ops.apply(_softmax.log_softmax, (x,), (("axis", _axis_arg(axis)),))


def _standardize(
    x: Any, *stats: Any, axis: Any, epsilon: float, has_mean: bool, has_var: bool
) -> Any:
    bnp = _bnp()
    t = _float(x)
    given = list(stats)
    mean = given.pop(0) if has_mean else bnp.mean(t, axis=axis, keepdims=True)
    if has_var:
        variance = given.pop(0)
    else:
        # E[x^2] - E[x]^2, as JAX computes it.
        variance = bnp.mean(t * t, axis=axis, keepdims=True) - mean * mean
    return (t - mean) * lax.rsqrt(_ops.as_tracer(variance + epsilon))


def standardize(
    x: Any,
    axis: int | tuple[int, ...] | None = -1,
    mean: Any = None,
    variance: Any = None,
    epsilon: float = 1e-5,
    where: Any = None,
) -> Any:
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis`` (mean and
    variance computed there, as ``E[x^2] - E[x]^2``, unless given)."""
    _no_where("standardize", where)
    stats = tuple(v for v in (mean, variance) if v is not None)
    return _ops.apply(
        _standardize,
        (x, *stats),
        (
            ("axis", _axis_arg(axis)),
            ("epsilon", float(epsilon)),
            ("has_mean", mean is not None),
            ("has_var", variance is not None),
        ),
    )


def _one_hot(x: Any, *, num_classes: int, dtype: Any, axis: int) -> Any:
    bnp = _bnp()
    t = _ops.as_tracer(x)
    ndim = len(t.shape) + 1
    ax = axis + ndim if axis < 0 else axis
    if not 0 <= ax < ndim:
        raise ValueError(
            f"one_hot: axis {axis} is out of range for a result of {ndim} dimensions"
        )
    shape = [1] * ndim
    shape[ax] = num_classes
    classes = lax.iota(np.dtype(t.dtype), tuple(shape), ax)
    hot = bnp.expand_dims(t, ax) == classes
    return hot.astype(dtype)


def one_hot(
    x: Any, num_classes: int, *, dtype: Any = np.float32, axis: int = -1
) -> Any:
    """``x``'s integers as one-hot vectors of length ``num_classes`` along
    ``axis`` (a new axis); values outside ``[0, num_classes)`` give all
    zeros."""
    if not isinstance(num_classes, (int, np.integer)) or isinstance(num_classes, bool):
        raise TypeError(
            f"one_hot: num_classes must be a Python int (a static value), got "
            f"{type(num_classes).__name__}; pass it as a static argument under jit"
        )
    static = (
        ("num_classes", int(num_classes)),
        ("dtype", np.dtype(dtype)),
        ("axis", int(axis)),
    )
    return _ops.apply(_one_hot, (x,), static)
