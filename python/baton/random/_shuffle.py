"""``permutation`` and ``choice``: JAX's shuffling algorithm.

JAX shuffles by sorting with fresh random 32-bit keys, repeated
ceil(3 ln(n) / ln(2**32 - 1)) times (one round below ~1600 elements,
where key collisions are rare enough; the sort is stable, so colliding
elements keep their relative order). Each round splits the key and draws
``bits(subkey, x.shape)``. baton sorts with ``_ranking`` (no sort
primitive yet), which gives the same permutation.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton.random import _keys, _ranking, _samplers

_I32 = np.dtype(np.int32)
_F32 = np.dtype(np.float32)


def _rounds(size: int) -> int:
    exponent = 3  # JAX's (tjablin's) static stopping rule
    return int(
        np.ceil(exponent * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max))
    )


def _shuffle(data: Any, x: Any, axis: int) -> Any:
    """JAX's ``_shuffle``: x sorted along axis by fresh random keys, in as
    many rounds as its size asks for."""
    shape = tuple(x.shape)
    for _ in range(_rounds(int(np.prod(shape, dtype=np.int64)))):
        keys = _keys._split_impl(data, shape=(2,))
        data = lax.reshape(lax.slice(keys, (0, 0), (1, 2)), (2,))
        sub = lax.reshape(lax.slice(keys, (1, 0), (2, 2)), (2,))
        x = _ranking.sort_by_keys(_keys.random_bits(sub, 32, shape), x, axis)
    return x


def _permutation_impl(data: Any, x: Any, *, axis: int, independent: bool) -> Any:
    if independent or len(x.shape) == 1:
        return _shuffle(data, x, axis)
    order = _shuffle(data, lax.iota(_I32, (x.shape[axis],)), 0)
    return lax.take(x, order, axis)


def _range_permutation_impl(data: Any, *, n: int) -> Any:
    return _shuffle(data, lax.iota(_I32, (n,)), 0)


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of ``range(x)`` (x an int) or of x's slices
    along ``axis`` (``independent``: each 1-D slice along axis shuffled on
    its own); JAX's permutation for the same key."""
    data, _ = _keys.single_key(key, "permutation")
    if _ops.is_scalar(x) or (hasattr(x, "shape") and len(x.shape) == 0):
        d = _ops.dtype_of(x)
        if isinstance(x, float) or (d is not None and d.kind not in "iu"):
            raise TypeError("x must be an integer or at least 1-dimensional")
        try:
            n = operator.index(x) if _ops.is_scalar(x) else int(np.asarray(x))
        except TypeError:
            raise TypeError(
                "permutation: x must be a concrete integer (a traced scalar cannot "
                "give the length)"
            ) from None
        _ops.normalize_axis(axis, 1)
        return _ops.apply(_range_permutation_impl, (data,), (("n", n),))
    nd = len(_ops.shape_of(x))
    ax = _ops.normalize_axis(axis, nd)
    return _ops.apply(
        _permutation_impl, (data, x), (("axis", ax), ("independent", bool(independent)))
    )


def _cumsum_impl(p: Any) -> Any:
    # cum[i] = sum_{j <= i} p[j] (a masked sum: baton has no scan).
    n = p.shape[0]
    rows = lax.broadcast_in_dim(p, (n, n), (1,))
    mask = lax.le(lax.iota(_I32, (n, n), 1), lax.iota(_I32, (n, n), 0))
    return lax.sum(lax.select(mask, rows, lax.zeros((), p.dtype)), 1)


def _weighted_impl(data: Any, p: Any, *, shape: tuple[int, ...]) -> Any:
    """Inverse-CDF draws with replacement: JAX's cumsum + searchsorted."""
    cum = _cumsum_impl(p)
    n = p.shape[0]
    total = lax.reshape(lax.slice(cum, (n - 1,), (n,)), ())
    d = np.dtype(p.dtype)
    u = _samplers.uniform_core(data, lax.zeros((), d), lax.full((), 1.0, d), shape, d)
    r = lax.mul(total, lax.sub(1.0, u))
    # searchsorted(cum, r, side='left') = #{i : cum[i] < r}
    size = int(np.prod(shape, dtype=np.int64))
    flat = lax.reshape(r, (size, 1))
    below = lax.lt(lax.broadcast_in_dim(cum, (size, n), (1,)), flat)
    return lax.reshape(lax.sum(lax.astype(below, _I32), 1), shape)


def _top_k_impl(data: Any, p: Any, *, k: int) -> Any:
    from baton.random import _gumbel

    d = np.dtype(p.dtype)
    g = lax.add(_gumbel.gumbel_core(data, (p.shape[0],), d, "low"), _gumbel.log(p, d))
    return _ranking.top_k_indices(g, k)


def choice(
    key: Any,
    a: Any,
    shape: Sequence[int] = (),
    replace: bool = True,
    p: Any = None,
    axis: int = 0,
) -> Any:
    """Random draws from ``a`` (an int n means range(n); an array: its
    slices along ``axis``), with or without replacement, uniform or with
    probabilities ``p``; JAX's draws. (With p and replacement the
    cumulative sum is a masked sum: for long p its rounding can differ
    from JAX's sequential cumsum in the last bit.)"""
    data, _ = _keys.single_key(key, "choice")
    if not isinstance(shape, Sequence):
        raise TypeError(
            f"shape argument of bt.random.choice must be a sequence, got {shape}"
        )
    shape = _keys.canonical_shape(tuple(shape), "choice")
    from baton import numpy as bnp

    scalar = _ops.is_scalar(a) or (hasattr(a, "shape") and len(a.shape) == 0)
    if scalar:
        n_inputs = operator.index(a) if _ops.is_scalar(a) else int(np.asarray(a))
        arr = None
    else:
        arr = a
        axis = _ops.normalize_axis(axis, len(_ops.shape_of(a)))
        n_inputs = _ops.shape_of(a)[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        dt = _I32 if arr is None else _ops.dtype_of(arr)
        return bnp.zeros(shape, dtype=dt)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size "
            f"{n_inputs}) when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = _samplers.randint(data, shape, 0, n_inputs)
            result = ind if arr is None else bnp.take(arr, ind, axis=axis)
        else:
            perm = permutation(data, n_inputs if arr is None else arr, axis)
            index = (slice(None),) * (0 if arr is None else axis) + (slice(n_draws),)
            result = perm[index]
    else:
        pd = _ops.dtype_of(p) or _F32
        if pd.kind not in "f" and pd != np.dtype("bfloat16"):
            pd = _F32
        p_arr = _samplers._host_or_traced(p, pd)
        if tuple(_ops.shape_of(p_arr)) != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. p "
                f"has shape {_ops.shape_of(p_arr)} and a.shape[axis] is {n_inputs}."
            )
        if replace:
            ind = _ops.apply(_weighted_impl, (data, p_arr), (("shape", shape),))
        else:
            ind = _ops.apply(_top_k_impl, (data, p_arr), (("k", n_draws),))
        result = ind if arr is None else bnp.take(arr, ind, axis=axis)
    if arr is None:
        return bnp.reshape(result, shape)
    ashape = _ops.shape_of(arr)
    return bnp.reshape(result, (*ashape[:axis], *shape, *ashape[axis + 1 :]))
