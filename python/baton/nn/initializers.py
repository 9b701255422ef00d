"""``bt.nn.initializers``: ``jax.nn.initializers``' parameter initializers.

An initializer is a function ``init(key, shape, dtype=float32) -> Array``;
the builders (``normal(stddev)``, ``glorot_uniform()`` ...) return one.
``zeros`` and ``ones`` are initializers themselves, as in JAX. Random ones
draw with ``bt.random`` (``normal``, ``uniform``, ``truncated_normal``)
and scale exactly as JAX does, so a model initialised with the same key
starts from the same parameters (within ``bt.random``'s agreement with
``jax.random``). ``variance_scaling`` computes fans as JAX:
``in_axis=-2``, ``out_axis=-1``, the other axes a receptive field. Real
dtypes only (complex initialisation is not supported).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

__all__ = [
    "constant",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]

Initializer = Callable[..., Any]

# The standard deviation of a standard normal truncated to (-2, 2).
_TRUNCATED_STDDEV = 0.87962566103423978


def _random() -> Any:
    from baton import random

    return random


def _dtype(dtype: Any) -> np.dtype:
    d = np.dtype(np.float32 if dtype is None else dtype)
    if d.kind == "c":
        raise NotImplementedError("initializers: baton has no complex dtypes")
    return d


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def zeros(key: Any, shape: Any, dtype: Any = None) -> Any:
    """An array of zeros (``key`` is unused)."""
    import baton.numpy as bnp

    return bnp.zeros(_shape(shape), _dtype(dtype))


def ones(key: Any, shape: Any, dtype: Any = None) -> Any:
    """An array of ones (``key`` is unused)."""
    import baton.numpy as bnp

    return bnp.ones(_shape(shape), _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling arrays with ``value``."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        import baton.numpy as bnp

        return bnp.full(_shape(shape), value, _dtype(dtype))

    return init


def uniform(scale: float = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing uniformly from ``[0, scale)``."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        d = _dtype(dtype)
        return _random().uniform(key, _shape(shape), d) * np.asarray(scale, d)

    return init


def normal(stddev: float = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing from a normal with mean 0 and ``stddev``."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        d = _dtype(dtype)
        return _random().normal(key, _shape(shape), d) * np.asarray(stddev, d)

    return init


def truncated_normal(
    stddev: float = 1e-2, dtype: Any = None, lower: float = -2.0, upper: float = 2.0
) -> Initializer:
    """An initializer drawing from a normal truncated to ``(lower, upper)``
    and then scaled by ``stddev`` (no variance correction, as JAX)."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        d = _dtype(dtype)
        draw = _random().truncated_normal(key, lower, upper, _shape(shape), d)
        return draw * np.asarray(stddev, d)

    return init


def _size(shape: tuple[int, ...], axes: int | Sequence[int]) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(
    shape: tuple[int, ...],
    in_axis: int | Sequence[int],
    out_axis: int | Sequence[int],
    batch_axis: int | Sequence[int],
) -> tuple[float, float]:
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"variance_scaling: can't compute input and output sizes of a "
            f"{len(shape)}-dimensional weights tensor with the default in_axis; "
            "it must be at least 2-D, or pass in_axis explicitly"
        )
    in_size = _size(shape, in_axis)
    out_size = _size(shape, out_axis)
    batch_size = _size(shape, batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def variance_scaling(
    scale: float,
    mode: str,
    distribution: str,
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
    dtype: Any = None,
) -> Initializer:
    """An initializer whose draws have variance ``scale / n``.

    ``mode``: ``n`` is ``"fan_in"``, ``"fan_out"``, ``"fan_avg"`` (their
    mean) or ``"fan_geo_avg"`` (geometric mean). ``distribution``:
    ``"truncated_normal"`` (to two standard deviations, rescaled so the
    variance is exact), ``"normal"`` or ``"uniform"`` (on ``[-a, a)``).
    """
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(
            f"variance_scaling: invalid mode {mode!r}; use 'fan_in', 'fan_out', "
            "'fan_avg' or 'fan_geo_avg'"
        )
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(
            f"variance_scaling: invalid distribution {distribution!r}; use "
            "'truncated_normal', 'normal' or 'uniform'"
        )

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        shape = _shape(shape)
        d = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        n = {
            "fan_in": fan_in,
            "fan_out": fan_out,
            "fan_avg": (fan_in + fan_out) / 2,
            "fan_geo_avg": (fan_in * fan_out) ** 0.5,
        }[mode]
        variance = np.asarray(scale / n, d)  # rounded to d first, as JAX
        rnd = _random()
        if distribution == "truncated_normal":
            stddev = np.sqrt(variance) / np.asarray(_TRUNCATED_STDDEV, d)
            return rnd.truncated_normal(key, -2, 2, shape, d) * stddev
        if distribution == "normal":
            return rnd.normal(key, shape, d) * np.sqrt(variance)
        return rnd.uniform(key, shape, d, -1) * np.sqrt(3 * variance)

    return init


def _builder(scale: float, mode: str, distribution: str, doc: str) -> Any:
    def build(
        in_axis: int | Sequence[int] = -2,
        out_axis: int | Sequence[int] = -1,
        batch_axis: int | Sequence[int] = (),
        dtype: Any = None,
    ) -> Initializer:
        return variance_scaling(
            scale, mode, distribution, in_axis, out_axis, batch_axis, dtype
        )

    build.__doc__ = doc
    return build


glorot_uniform = _builder(
    1.0, "fan_avg", "uniform", "``variance_scaling(1.0, 'fan_avg', 'uniform')``."
)
glorot_normal = _builder(
    1.0,
    "fan_avg",
    "truncated_normal",
    "``variance_scaling(1.0, 'fan_avg', 'truncated_normal')``.",
)
lecun_uniform = _builder(
    1.0, "fan_in", "uniform", "``variance_scaling(1.0, 'fan_in', 'uniform')``."
)
lecun_normal = _builder(
    1.0,
    "fan_in",
    "truncated_normal",
    "``variance_scaling(1.0, 'fan_in', 'truncated_normal')``.",
)
he_uniform = _builder(
    2.0, "fan_in", "uniform", "``variance_scaling(2.0, 'fan_in', 'uniform')``."
)
he_normal = _builder(
    2.0,
    "fan_in",
    "truncated_normal",
    "``variance_scaling(2.0, 'fan_in', 'truncated_normal')``.",
)
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal
for _name in (
    "glorot_uniform",
    "glorot_normal",
    "lecun_uniform",
    "lecun_normal",
    "he_uniform",
    "he_normal",
):
    globals()[_name].__name__ = globals()[_name].__qualname__ = _name
del _name
