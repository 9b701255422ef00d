"""``bt.scipy.stats``: ``jax.scipy.stats``' distributions that baton's
special functions support, one module each, with JAX's function names and
parameters (``loc``/``scale`` where JAX has them):

- ``norm``, ``logistic``, ``expon``, ``uniform``, ``laplace``, ``cauchy``,
  ``gumbel_r``, ``gumbel_l``, ``pareto``: densities, CDFs, survival and
  quantile functions as JAX has them;
- ``t``, ``gamma``, ``beta``, ``chi2``: ``logpdf`` / ``pdf`` (their CDFs
  need incomplete gamma/beta functions, which baton lacks);
- ``bernoulli`` (``logpmf``, ``pmf``, ``cdf``, ``ppf``), ``poisson``,
  ``geom`` (``logpmf``, ``pmf``);
- ``multivariate_normal`` (``logpdf``, ``pdf``; Cholesky-based).

Every function works eagerly, under ``bt.jit`` and ``bt.vmap``, and is
differentiable by ``bt.grad``.
"""

from baton.scipy.stats import (
    bernoulli,
    beta,
    cauchy,
    chi2,
    expon,
    gamma,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    pareto,
    poisson,
    t,
    uniform,
)

__all__ = [
    "bernoulli",
    "beta",
    "cauchy",
    "chi2",
    "expon",
    "gamma",
    "geom",
    "gumbel_l",
    "gumbel_r",
    "laplace",
    "logistic",
    "multivariate_normal",
    "norm",
    "pareto",
    "poisson",
    "t",
    "uniform",
]
