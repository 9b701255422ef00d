"""``bt.nn.dot_product_attention``: JAX's scaled dot-product attention, as
its "xla" implementation computes it (``jax/_src/nn/functions.py``).

``query`` (B, T, N, H), ``key`` / ``value`` (B, S, K, H) with N a multiple
of K (grouped-query attention: query heads ``k*G .. k*G+G-1`` attend with
key/value head k); 3-D operands are one batch. Logits are computed in
float32 or wider (``promote_types(query.dtype, float32)``), scaled by
``scale`` (default ``1/sqrt(H)``), ``bias`` added; ``mask`` (bool),
``is_causal``, ``local_window_size`` ((left, right) or one int for both)
and the per-batch ``query_seq_lengths`` / ``key_value_seq_lengths`` set
excluded logits to ``-0.7 * finfo(dtype).max`` (capped at float32's
range), as JAX does; softmax runs in float32, the probabilities take the
key's dtype; output rows past a query sequence length are zeroed.
``implementation`` None or "xla"; "cudnn" (a GPU kernel of JAX's) is not
part of baton. ``return_residual`` also returns the log-sum-exp of the
logits, (B, T, N), as JAX's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import numpy as bnp
from baton.nn._activations import softmax
from baton.scipy.special import logsumexp

__all__ = ["dot_product_attention"]


def _ensure_4d(t: Any) -> Any:
    t = bnp.asarray(t)
    return t.reshape((1,) * (4 - t.ndim) + tuple(t.shape)) if t.ndim < 4 else t


def _check(t: Any, shape: list[int], dtype: Any, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    for i in range(t.ndim):
        if shape[i] != -1 and t.shape[i] != shape[i]:
            raise ValueError(f"{name} shape should be {shape}: but got {tuple(t.shape)}")


def _grouped(t: Any, n: int, k: int) -> Any:
    """A (B, N or 1, T, S) bias or mask as (B, K, G or 1, T, S)."""
    if t is None:
        return None
    tb, tn, tt, ts = t.shape
    if tn == 1:
        return t.reshape(tb, 1, 1, tt, ts)
    if tn != n:
        raise ValueError(f"bias/mask heads must be 1 or {n}, got {tn}")
    return t.reshape(tb, k, n // k, tt, ts)


def dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    bias: Any = None,
    mask: Any = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    query_seq_lengths: Any = None,
    key_value_seq_lengths: Any = None,
    local_window_size: int | tuple[int, int] | None = None,
    implementation: str | None = None,
    return_residual: bool = False,
) -> Any:
    """Scaled dot-product attention (see the module docstring):
    ``softmax(query @ key^T * scale + bias, masked) @ value``."""
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise NotImplementedError(
                "dot_product_attention: implementation='cudnn' (JAX's cuDNN kernel) "
                "is not part of baton; use None or 'xla'"
            )
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out_shape = tuple(bnp.asarray(query).shape)
    q = _ensure_4d(query)
    k = _ensure_4d(key)
    v = _ensure_4d(value)
    bias = _ensure_4d(bias) if bias is not None else None
    mask = _ensure_4d(mask) if mask is not None else None
    q_len = bnp.asarray(query_seq_lengths) if query_seq_lengths is not None else None
    kv_len = (
        bnp.asarray(key_value_seq_lengths) if key_value_seq_lengths is not None else None
    )
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    B, S, K, H = k.shape
    _check(v, [B, S, K, H], k.dtype, "value")
    _check(q, [B, -1, -1, H], k.dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_len, [B], np.dtype("int32"), "query_seq_lengths")
    _check(kv_len, [B], np.dtype("int32"), "key_value_seq_lengths")
    N = q.shape[2]
    T = q.shape[1]
    if N % K != 0:
        raise ValueError(
            "The number of query heads must be a multiple of key/value heads, but "
            f"got {N} vs {K}"
        )
    G = N // K
    scale_val = (1.0 / np.sqrt(H)) if scale is None else scale
    logits_dtype = bnp.promote_types(q.dtype, np.float32)

    qg = q.reshape(B, T, K, G, H).astype(logits_dtype)
    logits = bnp.einsum("btkgh,bskh->bkgts", qg, k.astype(logits_dtype))
    logits = logits * bnp.asarray(scale_val, logits_dtype)
    bias_g = _grouped(bias, N, K)
    if bias_g is not None:
        logits = (logits + bias_g).astype(logits_dtype)

    keep = None

    def both(m: Any) -> Any:
        return m if keep is None else bnp.logical_and(keep, m)

    mask_g = _grouped(mask, N, K)
    if mask_g is not None:
        keep = both(mask_g)
    if is_causal:
        keep = both(bnp.tril(bnp.ones((T, S), bool)))
    if local_window_size is not None:
        left, right = local_window_size
        qpos = np.arange(T)[:, None]
        kpos = np.arange(S)[None, :]
        keep = both(bnp.asarray((qpos <= kpos + left) & (qpos >= kpos - right)))
    if q_len is not None or kv_len is not None:
        pad = bnp.ones((B, 1, 1, 1, 1), bool)
        if q_len is not None:
            pad = bnp.logical_and(
                pad, (bnp.arange(T)[None, :, None] < q_len[:, None, None])[:, None, None]
            )
        if kv_len is not None:
            pad = bnp.logical_and(
                pad, (bnp.arange(S)[None, None, :] < kv_len[:, None, None])[:, None, None]
            )
        keep = both(pad)
    if keep is not None:
        big = min(float(bnp.finfo(logits_dtype).max), float(np.finfo(np.float32).max))
        logits = bnp.where(keep, logits, bnp.asarray(-0.7 * big, logits_dtype))

    logits32 = logits.astype(np.float32)
    probs = softmax(logits32, axis=-1).astype(k.dtype)
    encoded = bnp.einsum("bkgts,bskh->btkgh", probs, v)
    if q_len is not None:
        rows = (bnp.arange(T)[None, :] < q_len[:, None]).astype(encoded.dtype)
        encoded = encoded * rows[:, :, None, None, None]
    encoded = encoded.reshape(out_shape)
    if return_residual:
        lse = logsumexp(logits32, axis=-1).astype(k.dtype)  # (B, K, G, T)
        lse = bnp.moveaxis(lse, 3, 1).reshape(B, T, N)
        return encoded, lse
    return encoded
