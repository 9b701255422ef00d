"""Samplers built on matrix factorizations: ``orthogonal`` (Haar-random
orthogonal matrices, Mezzadri's QR method) and ``multivariate_normal``.

The normal draws are JAX's bit for bit (``_samplers``); the factorizations
are baton's (``bt.numpy.linalg``), which agree with LAPACK's to float32
rounding. ``orthogonal`` fixes the signs of its QR factors (it multiplies
Q by the signs of R's diagonal), and the Cholesky factor is unique, so
those results are JAX's to rounding. The 'svd' and 'eigh' factors of
``multivariate_normal`` are determined only up to the sign of each
singular vector / eigenvector, which baton and LAPACK may choose
differently: the samples then have the same distribution as JAX's but are
not the same numbers (see docs/jax_surface.md).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from baton import _dtypes, _ops
from baton.random import _keys, _samplers

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _bnp() -> Any:
    import baton.numpy as bnp

    return bnp


def _index(value: Any, name: str, arg: str) -> int:
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(
            f"{name}: {arg} must be a Python int known when tracing, got "
            f"{type(value).__name__}"
        ) from None
    if v < 0:
        raise ValueError(f"{name}: {arg} must be non-negative, got {v}")
    return v


def orthogonal(
    key: Any,
    n: int,
    shape: Any = (),
    dtype: Any = None,
    m: int | None = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Matrices drawn uniformly from the orthogonal group O(n), of shape
    ``shape + (n, m)`` (``m`` defaults to ``n``; for n != m a
    semi-orthogonal matrix: orthonormal rows if n <= m, columns if
    m <= n). The Q factor of a normal matrix with the signs of R's diagonal
    moved into it (Mezzadri 2007), as JAX computes it."""
    _keys.single_key(key, "orthogonal")
    s = _keys.canonical_shape(shape, "orthogonal")
    d = _samplers.float_dtype(dtype, "orthogonal")
    rows = _index(n, "orthogonal", "n")
    cols = rows if m is None else _index(m, "orthogonal", "m")
    bnp = _bnp()
    z = _samplers.normal(key, (*s, max(rows, cols), min(rows, cols)), d)
    q, r = bnp.linalg.qr(z)
    signs = bnp.sign(bnp.diagonal(r, axis1=-2, axis2=-1))
    x = q * bnp.expand_dims(signs, -2)
    return bnp.swapaxes(x, -1, -2) if rows < cols else x


def _inexact(value: Any) -> Any:
    """``promote_dtypes_inexact`` for one operand: host data and integer
    arrays as float32 (float64 with x64), float arrays as they are."""
    bnp = _bnp()
    weak = _F64 if _samplers._x64() else _F32
    if _ops.is_scalar(value) or isinstance(value, (list, tuple)):
        return bnp.asarray(np.asarray(value).astype(weak))
    d = _ops.dtype_of(value)
    if isinstance(value, (np.ndarray, np.generic)):
        a = np.asarray(value)
        keep = a.dtype in (np.dtype(np.float16), _dtypes.bfloat16) or (
            a.dtype == _F64 and _samplers._x64()
        )
        return bnp.asarray(a if keep else a.astype(weak))
    if d is not None and not _ops.is_float(d):
        return bnp.asarray(value, dtype=weak)
    return value


def multivariate_normal(
    key: Any,
    mean: Any,
    cov: Any,
    shape: Any = None,
    dtype: Any = None,
    method: str = "cholesky",
    *,
    out_sharding: Any = None,
) -> Any:
    """Multivariate normal draws of ``mean`` (shape ``(..., n)``) and
    covariance ``cov`` (``(..., n, n)``, positive definite; 'svd' or
    'eigh' for singular ones): ``mean + factor @ z`` for z standard normal
    and ``factor @ factor.T == cov``. The result has shape ``shape + (n,)``
    (``shape`` defaults to the broadcast batch shapes of mean and cov).
    With the default 'cholesky' the values are JAX's to float32 rounding;
    'svd' and 'eigh' factors are unique only up to column signs (see the
    module docstring)."""
    _keys.single_key(key, "multivariate_normal")
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    bnp = _bnp()
    mean = _inexact(mean)
    cov = _inexact(cov)
    common = np.promote_types(mean.dtype, cov.dtype)
    mean = mean.astype(common) if mean.dtype != common else mean
    cov = cov.astype(common) if cov.dtype != common else cov
    if dtype is None:
        d = np.dtype(common)
    else:
        d = _samplers.float_dtype(dtype, "multivariate_normal")
    mshape = tuple(mean.shape)
    cshape = tuple(cov.shape)
    if len(mshape) < 1:
        raise ValueError(
            "multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
            f"{len(mshape)}"
        )
    if len(cshape) < 2:
        raise ValueError(
            f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {len(cshape)}"
        )
    n = mshape[-1]
    if cshape[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
            f"but got cov.shape == {cshape}."
        )
    if shape is None:
        s = tuple(bnp.broadcast_shapes(mshape[:-1], cshape[:-2]))
    else:
        s = _keys.canonical_shape(shape, "multivariate_normal")
        _samplers._check_param_shapes(
            "multivariate_normal", s, np.empty(mshape[:-1]), np.empty(cshape[:-2])
        )
    if method == "svd":
        u, sv, _ = bnp.linalg.svd(cov)
        factor = u * bnp.sqrt(sv[..., None, :])
    elif method == "eigh":
        w, v = bnp.linalg.eigh(cov)
        factor = v * bnp.sqrt(w[..., None, :])
    else:
        factor = bnp.linalg.cholesky(cov)
    z = _samplers.normal(key, (*s, n), d)
    # factor @ z over the batch (JAX's einsum '...ij,...j->...i').
    return mean + bnp.matmul(factor, z[..., None])[..., 0]
