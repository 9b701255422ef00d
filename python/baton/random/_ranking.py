"""Stable sorting permutations and top-k without a sort primitive.

baton's IR has no sort yet. JAX's ``permutation`` is a stable sort by
random 32-bit keys, and ``choice`` / ``categorical`` without replacement
are a top-k; both only need the permutation, which comparisons give
directly: the sorted position of element i is the number of elements that
must come before it,

    rank[i] = #{j : key[j] < key[i]} + #{j < i : key[j] == key[i]}

(stable: ties keep their order), and the element at sorted position p is
``sum_i i * (rank[i] == p)``. Both are O(n**2) compares and sums per row
(fine for the few thousand elements these samplers see; a sort primitive
would make them O(n log n)). Values are then gathered, so the result equals
what a stable sort gives, bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton._baton import lax

_I32 = np.dtype(np.int32)


def _order(keys: Any, descending: bool) -> Any:
    """Indices that stably sort ``keys`` along the last axis (int32)."""
    n = keys.shape[-1]
    lead = tuple(keys.shape[:-1])
    r = len(lead)
    # ki[..., i, j] = keys[..., i], kj[..., i, j] = keys[..., j]
    ki = lax.broadcast_in_dim(keys, (*lead, n, n), (*range(r), r))
    kj = lax.broadcast_in_dim(keys, (*lead, n, n), (*range(r), r + 1))
    before = lax.gt(kj, ki) if descending else lax.lt(kj, ki)
    i = lax.iota(_I32, (n, n), 0)
    j = lax.iota(_I32, (n, n), 1)
    tie_before = lax.bitwise_and(lax.eq(kj, ki), lax.lt(j, i))
    rank = lax.sum(lax.astype(lax.bitwise_or(before, tie_before), _I32), -1)
    # order[..., p] = sum_i i * (rank[..., i] == p)
    rank_ip = lax.broadcast_in_dim(rank, (*lead, n, n), (*range(r), r))
    hit = lax.eq(rank_ip, lax.iota(_I32, (n, n), 1))
    return lax.sum(lax.mul(lax.astype(hit, _I32), lax.iota(_I32, (n, n), 0)), -2)


def take_rows(x: Any, order: Any) -> Any:
    """x[..., order[..., p]] along the last axis, row by row."""
    n = x.shape[-1]
    lead = tuple(x.shape[:-1])
    rows = int(np.prod(lead, dtype=np.int64))
    k = order.shape[-1]
    base = lax.mul(lax.iota(_I32, (rows, k), 0), n)
    flat_index = lax.add(base, lax.reshape(order, (rows, k)))
    picked = lax.take(lax.reshape(x, (rows * n,)), lax.reshape(flat_index, (rows * k,)))
    return lax.reshape(picked, (*lead, k))


def sort_by_keys(keys: Any, values: Any, axis: int) -> Any:
    """``values`` stably sorted along ``axis`` by ``keys`` (same shape):
    ``lax.sort_key_val(keys, values, axis)[1]``."""
    nd = len(values.shape)
    if nd == 0:
        return values
    perm = [d for d in range(nd) if d != axis] + [axis]
    inverse = list(np.argsort(perm))
    k = lax.transpose(keys, perm)
    v = lax.transpose(values, perm)
    out = take_rows(v, _order(k, descending=False))
    return lax.transpose(out, inverse)


def top_k_indices(x: Any, k: int) -> Any:
    """Indices of the k largest entries along the last axis, largest first
    (ties: lower index first), as ``lax.top_k(x, k)[1]``."""
    order = _order(x, descending=True)
    n = x.shape[-1]
    lead = tuple(x.shape[:-1])
    return lax.slice(order, (0,) * (len(lead) + 1), (*lead, min(k, n)))
