"""``bt.scipy.special``: ``jax.scipy.special``'s common functions.

``logsumexp`` (with ``b=``, ``return_sign=``), ``expit``, ``logit``,
``xlogy``, ``xlog1py``, and the approximations ``erf``, ``erfc``,
``erfinv``, ``gammaln`` (float32 accuracy, bounds stated in
``baton/scipy/_special_math.py``). Every function works eagerly, under
``bt.jit`` and ``bt.vmap``, and is differentiable by ``bt.grad``; each runs
eagerly as one compiled program per shape and dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops
from baton._checkpoint import stop_gradient
from baton._custom import custom_jvp
from baton.scipy._special_math import erf, erfc, erfinv, gammaln

__all__ = [
    "erf",
    "erfc",
    "erfinv",
    "expit",
    "gammaln",
    "logit",
    "logsumexp",
    "xlog1py",
    "xlogy",
]


def _bnp() -> Any:
    import baton.numpy as bnp

    return bnp


def _float(x: Any) -> Any:
    """x as a Tracer of a float dtype (integers and bools: float32)."""
    t = _ops.as_tracer(x)
    return t if _ops.is_float(np.dtype(t.dtype)) else t.astype(np.float32)


def _axes(axis: Any) -> Any:
    if axis is None or isinstance(axis, int):
        return axis
    return tuple(int(a) for a in axis)


def _logsumexp(a: Any, b: Any, *, axis: Any, keepdims: bool, return_sign: bool) -> Any:
    bnp = _bnp()
    a = _float(a)
    if b is not None:
        a, b = _ops.promote(a, _float(b))
        a = bnp.where(b != 0, a, -np.inf)
    amax = bnp.max(a, axis=axis, keepdims=True)
    # The max only shifts for stability: no gradient flows through it, and
    # an all -inf (or inf) slice shifts by 0.
    amax = stop_gradient(bnp.where(bnp.isfinite(amax), amax, 0.0))
    e = bnp.exp(a - amax)
    if b is not None:
        e = e * b
    s = bnp.sum(e, axis=axis, keepdims=keepdims)
    sign = bnp.sign(s)
    out = bnp.log(bnp.abs(s)) + (amax if keepdims else bnp.squeeze(amax, axis=axis))
    if return_sign:
        return out, sign
    if b is not None:
        out = bnp.where(sign < 0, np.nan, out)
    return out


def logsumexp(
    a: Any,
    axis: int | tuple[int, ...] | None = None,
    b: Any = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: Any = None,
) -> Any:
    """``log(sum(b * exp(a), axis))``, computed stably (the max is
    subtracted first and gets no gradient, as in JAX).

    ``b`` scales each term (broadcast against ``a``); a negative sum gives
    NaN unless ``return_sign=True``, which returns ``(log|sum|, sign)``.
    ``where=`` is not supported (NotImplementedError).
    """
    if where is not None:
        raise NotImplementedError(
            "logsumexp: where= is not supported; mask with "
            "bnp.where(mask, a, -inf) instead"
        )
    static = (
        ("axis", _axes(axis)),
        ("keepdims", bool(keepdims)),
        ("return_sign", bool(return_sign)),
    )
    if b is None:
        return _ops.apply(_logsumexp_no_b, (a,), static)
    return _ops.apply(_logsumexp, (a, b), static)


def _logsumexp_no_b(a: Any, **static: Any) -> Any:
    return _logsumexp(a, None, **static)


def _expit(x: Any) -> Any:
    from baton._baton import lax

    return lax.logistic(_float(x))


def expit(x: Any) -> Any:
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    return _ops.apply(_expit, (x,))


def _logit(x: Any) -> Any:
    bnp = _bnp()
    x = _float(x)
    return bnp.log(x / (1.0 - x))


def logit(x: Any) -> Any:
    """The inverse of :func:`expit`: ``log(x / (1 - x))``."""
    return _ops.apply(_logit, (x,))


@custom_jvp
def _xlogy_rule(x: Any, y: Any) -> Any:
    bnp = _bnp()
    ok = x != 0
    # Where x == 0 the result is 0 (even for y == 0).
    safe_x = bnp.where(ok, x, 1.0)
    safe_y = bnp.where(ok, y, 1.0)
    return bnp.where(ok, safe_x * bnp.log(safe_y), 0.0)


@_xlogy_rule.defjvp
def _xlogy_jvp(primals: Any, tangents: Any) -> Any:
    (x, y), (tx, ty) = primals, tangents
    return _xlogy_rule(x, y), tx * _bnp().log(y) + ty * x / y  # as JAX


@custom_jvp
def _xlog1py_rule(x: Any, y: Any) -> Any:
    bnp = _bnp()
    ok = x != 0
    safe_x = bnp.where(ok, x, 1.0)
    safe_y = bnp.where(ok, y, 0.0)
    return bnp.where(ok, safe_x * bnp.log1p(safe_y), 0.0)


@_xlog1py_rule.defjvp
def _xlog1py_jvp(primals: Any, tangents: Any) -> Any:
    (x, y), (tx, ty) = primals, tangents
    return _xlog1py_rule(x, y), tx * _bnp().log1p(y) + ty * x / (1.0 + y)


def _xlogy(x: Any, y: Any) -> Any:
    return _xlogy_rule(*_ops.promote(_float(x), _float(y)))


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, with 0 where ``x == 0`` (also for ``y == 0``); the
    derivative is JAX's (``log(y)`` in x, ``x / y`` in y)."""
    return _ops.apply(_xlogy, (x, y))


def _xlog1py(x: Any, y: Any) -> Any:
    return _xlog1py_rule(*_ops.promote(_float(x), _float(y)))


def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, with 0 where ``x == 0`` (also for ``y == -1``)."""
    return _ops.apply(_xlog1py, (x, y))
