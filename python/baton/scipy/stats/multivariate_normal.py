"""The multivariate normal density (``jax.scipy.stats.multivariate_normal``),
by a Cholesky factor of ``cov`` and a triangular solve."""

from __future__ import annotations

import math
from typing import Any

from baton import _ops
from baton.scipy.stats._functions import bnp, inexact


def _logpdf_impl(x: Any, mean: Any, cov: Any) -> Any:
    n_ = bnp()
    x, mean, cov = inexact(x, mean, cov)
    if not mean.shape:
        d = x - mean
        return -0.5 * d * d / cov - 0.5 * (math.log(2 * math.pi) + n_.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if not cov.shape:
        return -0.5 * n_.sum(y * y, axis=-1) / cov - n / 2 * (
            math.log(2 * math.pi) + n_.log(cov)
        )
    if len(cov.shape) < 2 or tuple(cov.shape[-2:]) != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    from baton import lax_linalg

    chol = lax_linalg.cholesky(cov)
    lead = n_.broadcast_shapes(tuple(y.shape[:-1]), tuple(cov.shape[:-2]))
    chol_b = n_.broadcast_to(chol, (*lead, n, n))
    rhs = n_.expand_dims(n_.broadcast_to(y, (*lead, n)), -1)
    z = lax_linalg.triangular_solve(chol_b, rhs, left_side=True, lower=True)
    z = n_.reshape(z, (*lead, n))
    log_det = n_.sum(n_.log(n_.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * n_.sum(z * z, axis=-1) - n / 2 * math.log(2 * math.pi) - log_det


def _pdf_impl(x: Any, mean: Any, cov: Any) -> Any:
    return bnp().exp(_logpdf_impl(x, mean, cov))


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    """Log of the multivariate normal density of ``x`` (``...,n``) with
    ``mean`` and covariance ``cov`` (a matrix, or a scalar times I)."""
    if allow_singular is not None:
        raise NotImplementedError(
            "allow_singular argument of multivariate_normal.logpdf"
        )
    return _ops.apply(_logpdf_impl, (x, mean, cov))


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    """The multivariate normal density of ``x`` with ``mean`` and ``cov``."""
    return _ops.apply(_pdf_impl, (x, mean, cov))
