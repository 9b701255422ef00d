"""``gaussian_kde`` (``jax.scipy.stats.gaussian_kde``): a Gaussian kernel
density estimate, as JAX's -- a frozen pytree of ``neff``, ``dataset``,
``weights``, ``covariance`` and ``inv_cov``, so it passes through
``bt.jit`` and ``bt.vmap`` -- with the same bandwidths ('scott',
'silverman', a scalar or a callable), the kernel evaluated in the
Cholesky-whitened coordinates of ``inv_cov``, and ``resample`` drawing
with ``bt.random`` as JAX draws (the same key gives JAX's samples).

As in JAX, ``integrate_box`` (only ``integrate_box_1d`` is supported) and
``set_bandwidth`` raise NotImplementedError, and complex data is refused.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from baton import _ops
from baton.scipy.stats._functions import bnp


def _inexact(*xs: Any) -> list[Any]:
    d = _ops.result_dtype(*xs)
    if not _ops.is_float(d):
        d = np.dtype(np.float32)
    return [bnp().asarray(x).astype(d) for x in xs]


def _check_real(x: Any, what: str) -> None:
    d = getattr(x, "dtype", None)
    d = np.dtype(d) if d is not None else np.asarray(x).dtype
    if np.issubdtype(d, np.complexfloating):
        raise NotImplementedError(f"gaussian_kde does not support complex {what}")


def _kernel_eval(
    points: Any, values: Any, xi: Any, precision: Any, *, in_log: bool
) -> Any:
    """Sum (or logsumexp) over the data of ``values * N(xi; point,
    precision^-1)``, shape ``(m, 1)``."""
    from baton.scipy import linalg, special

    n = bnp()
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if tuple(precision.shape) != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = linalg.cholesky(precision, lower=True)
    points = n.dot(points, whitening)
    xi = n.dot(xi, whitening)
    log_norm = n.sum(n.log(n.diag(whitening))) - 0.5 * d * math.log(2 * math.pi)
    diff = points[None, :, :] - xi[:, None, :]
    arg = log_norm - 0.5 * n.sum(diff * diff, axis=-1)  # (m, n)
    if in_log:
        return special._logsumexp(
            n.log(values[None, :, :]) + arg[:, :, None],
            None,
            axis=1,
            keepdims=False,
            return_sign=False,
        )
    return n.sum(values[None, :, :] * n.exp(arg)[:, :, None], axis=1)


def _convolve(chol: Any, norm: Any, target: Any, weights: Any, mean: Any) -> Any:
    from baton.scipy import linalg

    n = bnp()
    diff = target - mean[:, None]
    alpha = linalg.cho_solve(chol, diff)
    arg = 0.5 * n.sum(diff * alpha, axis=0)
    return norm * n.sum(n.exp(-arg) * weights)


# The pytree children, in JAX's order.
_FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")


class gaussian_kde:
    """A Gaussian kernel density estimate of ``dataset`` (shape ``(d, n)``,
    or ``(n,)`` for one dimension), with optional ``weights`` (length n)
    and bandwidth ``bw_method``: 'scott' (default), 'silverman', a scalar
    factor or a callable of the estimate."""

    __slots__ = ("covariance", "dataset", "inv_cov", "neff", "weights")

    def __init__(
        self,
        dataset: Any,
        bw_method: str | Any | Callable[[Any], Any] | None = None,
        weights: Any = None,
    ):
        n_ = bnp()
        _check_real(dataset, "data")
        dataset = n_.atleast_2d(dataset)
        if not math.prod(dataset.shape) > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            dataset, weights = _inexact(dataset, weights)
            weights = n_.atleast_1d(weights)
            weights = weights / n_.sum(weights)
            if len(weights.shape) != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if weights.shape[0] != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = _inexact(dataset)
            weights = n_.full((n,), 1.0 / n, dtype=dataset.dtype)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / n_.sum(weights**2))
        bw_method = "scott" if bw_method is None else bw_method
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = n_.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = n_.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif np.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError(
                "`bw_method` should be 'scott', 'silverman', a scalar, or a callable."
            )
        data_cov = n_.atleast_2d(
            n_.cov(dataset, rowvar=1, bias=False, aweights=weights)
        )
        data_inv_cov = n_.linalg.inv(data_cov)
        self._set("covariance", data_cov * factor**2)
        self._set("inv_cov", data_inv_cov / factor**2)

    def _set(self, name: str, value: Any) -> Any:
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"gaussian_kde is frozen: cannot assign to {name!r}")

    def __repr__(self) -> str:
        return f"gaussian_kde(d={self.d}, n={self.n})"

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        """The pytree children: ``(neff, dataset, weights, covariance,
        inv_cov)``."""
        return (
            self.neff,
            self.dataset,
            self.weights,
            self.covariance,
            self.inv_cov,
        ), None

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Any) -> gaussian_kde:
        """The estimate from its pytree children."""
        del aux_data
        kde = cls.__new__(cls)
        for name, value in zip(_FIELDS, children):
            kde._set(name, value)
        return kde

    @property
    def d(self) -> int:
        """The number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        """The number of data points."""
        return self.dataset.shape[1]

    def _reshape_points(self, points: Any) -> Any:
        _check_real(points, "coordinates")
        points = bnp().atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = bnp().reshape(points, (self.d, 1))
            else:
                raise ValueError(
                    f"points have dimension {d}, dataset has dimension {self.d}"
                )
        return points

    def _eval(self, points: Any, in_log: bool) -> Any:
        points = self._reshape_points(points)
        args = _inexact(self.dataset.T, self.weights[:, None], points.T, self.inv_cov)
        return _ops.apply(_kernel_eval, tuple(args), (("in_log", in_log),))[:, 0]

    def evaluate(self, points: Any) -> Any:
        """The density at ``points`` (shape ``(d, m)``; ``(m,)`` in one
        dimension)."""
        return self._eval(points, False)

    def __call__(self, points: Any) -> Any:
        return self.evaluate(points)

    def pdf(self, x: Any) -> Any:
        """The density at ``x`` (``evaluate``)."""
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Any:
        """The log density at ``x`` (a logsumexp over the kernels)."""
        return self._eval(x, True)

    def _cho(self, cov: Any) -> tuple[Any, Any]:
        from baton.scipy import linalg

        n_ = bnp()
        chol = linalg.cho_factor(self.covariance + cov)
        norm = math.sqrt(2 * math.pi) ** self.d * n_.prod(n_.diag(chol[0]))
        return chol, 1.0 / norm

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the density times the Gaussian ``N(mean,
        cov)``."""
        n_ = bnp()
        mean = n_.atleast_1d(n_.squeeze(n_.asarray(mean)))
        cov = n_.atleast_2d(cov)
        if tuple(mean.shape) != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if tuple(cov.shape) != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol, norm = self._cho(cov)
        return _convolve(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The probability mass between the scalars ``low`` and ``high``
        (one-dimensional estimates only)."""
        from baton.scipy import special

        n_ = bnp()
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError(
                "the limits of integration in integrate_box_1d must be scalars"
            )
        sigma = n_.squeeze(n_.sqrt(self.covariance))
        lo = n_.squeeze((low - self.dataset) / sigma)
        hi = n_.squeeze((high - self.dataset) / sigma)
        return n_.sum(self.weights * (special.ndtr(hi) - special.ndtr(lo)))

    def integrate_kde(self, other: gaussian_kde) -> Any:
        """The integral of the product of this density and ``other``'s."""
        from baton._vmap import vmap

        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol, norm = self._cho(other.covariance)
        sm, lg = (self, other) if self.n < other.n else (other, self)
        fn = lambda m: _convolve(chol, norm, lg.dataset, lg.weights, m)  # noqa: E731
        result = vmap(fn, in_axes=1)(sm.dataset)
        return bnp().sum(result * sm.weights)

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """``shape`` new points (shape ``(d, *shape)``): data points chosen
        by weight plus Gaussian noise of the kernel's covariance; the same
        key gives JAX's samples."""
        from baton import random
        from baton.scipy import linalg

        n_ = bnp()
        shape = tuple(shape)
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        # jax.random.multivariate_normal with a zero mean (method 'cholesky').
        factor = linalg.cholesky(self.covariance, lower=True)
        z = random.normal(eps_key, (*shape, self.d), dtype=self.dataset.dtype)
        eps = n_.matmul(z, factor.T)
        # As JAX: the noise's axes all reversed (.T), so a shape of more
        # than one dimension broadcasts as it does there.
        return self.dataset[:, ind] + n_.transpose(eps)

    def integrate_box(
        self, low_bounds: Any, high_bounds: Any, maxpts: Any = None
    ) -> Any:
        """Not supported, as in JAX: use ``integrate_box_1d``."""
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError(
            "only 1D box integrations are supported; use `integrate_box_1d`"
        )

    def set_bandwidth(self, bw_method: Any = None) -> Any:
        """Not supported, as in JAX (the estimate is frozen)."""
        del bw_method
        raise NotImplementedError(
            "dynamically changing the bandwidth method is not supported"
        )


def _register() -> None:
    from baton import tree_util

    tree_util.register_pytree_node_class(gaussian_kde)


_register()
