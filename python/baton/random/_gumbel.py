"""``gumbel`` and ``categorical`` (the Gumbel-max trick), as JAX does them.

``gumbel`` is -log(-log(u)) for u uniform in [tiny, 1) (mode 'low', JAX's
default), or, in mode 'high', from two uniforms combined into one with
twice the resolution near 0 and -log(-log1p(-x)). The uniform draws are
JAX's bit for bit and the logarithms are XLA's float32 ones
(``_float_ops.log32`` / ``log1p32``; 16-bit floats computed in float32 and
rounded), so the results are JAX's bit for bit -- except float16, whose log
in XLA is not the float32 one rounded (1-2 ulp apart for ~7% of values),
and float64, which uses baton's log.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from baton import _ops
from baton._baton import lax
from baton.random import _float_ops, _keys, _ranking, _samplers

_F32 = np.dtype(np.float32)


def log(x: Any, dtype: np.dtype) -> Any:
    """XLA's CPU log for dtype (float32 arithmetic for 16-bit floats)."""
    if dtype == np.dtype(np.float64):
        return lax.log(x)
    return lax.astype(_float_ops.log32(lax.astype(x, _F32)), dtype)


def exp(x: Any, dtype: np.dtype) -> Any:
    """XLA's CPU exp for dtype (float32 arithmetic for 16-bit floats)."""
    if dtype == np.dtype(np.float64):
        return lax.exp(x)
    return lax.astype(_float_ops.exp32(lax.astype(x, _F32)), dtype)


def _log1p(x: Any, dtype: np.dtype) -> Any:
    if dtype == np.dtype(np.float64):
        u = lax.add(x, 1.0)
        corrected = lax.true_divide(lax.mul(lax.log(u), x), lax.sub(u, 1.0))
        return lax.select(lax.eq(u, 1.0), x, corrected)
    return lax.astype(_float_ops.log1p32(lax.astype(x, _F32)), dtype)


def gumbel_core(data: Any, shape: tuple[int, ...], dtype: np.dtype, mode: str) -> Any:
    """Gumbel draws for a single key's data (lax values of dtype)."""
    info = ml_dtypes.finfo(dtype)
    tiny = np.array(info.tiny, dtype)
    if mode == "low":
        u = _samplers.uniform_core(
            data, lax.constant(tiny), lax.constant(np.array(1.0, dtype)), shape, dtype
        )
        return lax.neg(log(lax.neg(log(u, dtype)), dtype))
    both = _samplers.uniform_core(
        data, lax.zeros((), dtype), lax.full((), 1.0, dtype), (2, *shape), dtype
    )
    end = (1, *shape)
    high = lax.reshape(lax.slice(both, (0,) * len(end), end), shape)
    low = lax.reshape(lax.slice(both, (1,) + (0,) * len(shape), (2, *shape)), shape)
    fine = lax.add(lax.add(high, lax.mul(low, float(2.0 ** -int(info.nmant)))), tiny)
    x = lax.select(lax.ge(high, 0.5), high, fine)
    return lax.neg(log(lax.neg(_log1p(lax.neg(x), dtype)), dtype))


def _check_mode(mode: Any) -> str:
    mode = "low" if mode is None else mode
    if mode not in ("high", "low"):
        raise ValueError(f"gumbel: mode must be 'high' or 'low', got {mode!r}")
    return mode


def _gumbel_impl(
    data: Any, *, shape: tuple[int, ...], dtype: np.dtype, mode: str
) -> Any:
    return gumbel_core(data, shape, dtype, mode)


def gumbel(key: Any, shape: Any = (), dtype: Any = None, mode: Any = None) -> Any:
    """Standard Gumbel floats of ``shape``/``dtype``; ``mode`` 'low'
    (default, as JAX's) or 'high' (twice the uniform resolution)."""
    data, _ = _keys.single_key(key, "gumbel")
    shape = _keys.canonical_shape(shape, "gumbel")
    d = _samplers.float_dtype(dtype, "gumbel")
    mode = _check_mode(mode)
    return _ops.apply(
        _gumbel_impl, (data,), (("shape", shape), ("dtype", d), ("mode", mode))
    )


def _categorical_impl(
    data: Any,
    logits: Any,
    *,
    shape: tuple[int, ...],
    batch_shape: tuple[int, ...],
    axis: int,
    replace: bool,
    mode: str,
) -> Any:
    from baton import numpy as bnp

    if not _ops.is_float(np.dtype(logits.dtype)):
        logits = lax.astype(logits, _F32)  # integer logits: as JAX, float32
    d = np.dtype(logits.dtype)
    nd = len(logits.shape)
    prefix = shape[: len(shape) - len(batch_shape)]
    if replace:
        logits_shape = list(shape[len(shape) - len(batch_shape) :])
        logits_shape.insert(axis, logits.shape[axis])
        full = (*prefix, *logits_shape)
        g = gumbel_core(data, full, d, mode)
        dims = tuple(range(len(prefix), len(prefix) + nd))
        lg = (
            lax.broadcast_in_dim(logits, full, dims)
            if prefix
            else lax.broadcast_to(logits, full)
        )
        return bnp.argmax(lax.add(g, lg), axis=len(prefix) + axis)
    k = int(np.prod(prefix, dtype=np.int64))
    if k > logits.shape[axis]:
        raise ValueError(
            f"Number of samples without replacement ({k}) cannot exceed number of "
            f"categories ({logits.shape[axis]})."
        )
    noisy = lax.add(logits, gumbel_core(data, tuple(logits.shape), d, mode))
    moved = bnp.moveaxis(noisy, axis, -1)
    top = _ranking.top_k_indices(moved, k)  # batch_shape + (k,)
    # JAX puts the k draws first: (k, *batch_shape), then the shape.
    nb = len(batch_shape)
    top = lax.transpose(top, (nb, *range(nb)))
    return lax.reshape(top, shape)


def categorical(
    key: Any,
    logits: Any,
    axis: int = -1,
    shape: Any = None,
    replace: bool = True,
    mode: Any = None,
) -> Any:
    """Category indices drawn with probabilities softmax(logits, axis)
    (Gumbel-max; without replacement Gumbel-top-k); result shape ``shape``
    (default: logits' shape without ``axis``)."""
    data, _ = _keys.single_key(key, "categorical")
    lshape = _ops.shape_of(logits)
    ax = _ops.normalize_axis(axis, len(lshape))
    batch_shape = tuple(s for i, s in enumerate(lshape) if i != ax)
    if shape is None:
        shape = batch_shape
    else:
        shape = _keys.canonical_shape(shape, "categorical")
        _samplers._check_param_shapes("categorical", shape, np.empty(batch_shape))
    ld = _ops.dtype_of(logits)
    if ld is None or not _ops.is_float(ld):
        logits = _samplers._host_or_traced(logits, _F32)
    static = (
        ("shape", shape),
        ("batch_shape", batch_shape),
        ("axis", ax),
        ("replace", bool(replace)),
        ("mode", _check_mode(mode)),
    )
    return _ops.apply(_categorical_impl, (data, logits), static)
