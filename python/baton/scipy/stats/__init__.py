"""``bt.scipy.stats``: ``jax.scipy.stats``' distributions that baton's
special functions support, one module each, with JAX's function names and
parameters (``loc``/``scale`` where JAX has them):

- ``norm``, ``logistic``, ``expon``, ``uniform``, ``laplace``, ``cauchy``,
  ``gumbel_r``, ``gumbel_l``, ``pareto``: densities, CDFs, survival and
  quantile functions as JAX has them;
- ``gamma``, ``beta``, ``chi2``: densities and CDFs (``cdf``, ``logcdf``,
  ``sf``, ``logsf``, through the incomplete gamma / beta functions);
  ``t``: ``logpdf`` / ``pdf``; ``gennorm`` (``logpdf``, ``pdf``, ``cdf``),
  ``truncnorm`` (densities and CDFs), ``vonmises``, ``wrapcauchy``
  (``logpdf``, ``pdf``);
- ``bernoulli`` (``logpmf``, ``pmf``, ``cdf``, ``ppf``), ``poisson``
  (``logpmf``, ``pmf``, ``cdf``, ``entropy``), ``geom``, ``binom``,
  ``nbinom``, ``betabinom`` (``logpmf``, ``pmf``);
- ``multivariate_normal`` (``logpdf``, ``pdf``; Cholesky-based),
  ``dirichlet`` (``logpdf``, ``pdf``), ``multinomial`` (``logpmf``,
  ``pmf``);
- functions of samples: ``mode``, ``rankdata``, ``sem`` (``_core.py``);
  ``gaussian_kde`` (``_kde.py``).

Every function works eagerly, under ``bt.jit`` and ``bt.vmap``, and is
differentiable by ``bt.grad``.
"""

from baton.scipy.stats import (
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from baton.scipy.stats._core import ModeResult as ModeResult
from baton.scipy.stats._core import mode, rankdata, sem
from baton.scipy.stats._kde import gaussian_kde

__all__ = [
    "bernoulli",
    "beta",
    "betabinom",
    "binom",
    "cauchy",
    "chi2",
    "dirichlet",
    "expon",
    "gamma",
    "gaussian_kde",
    "gennorm",
    "geom",
    "gumbel_l",
    "gumbel_r",
    "laplace",
    "logistic",
    "mode",
    "multinomial",
    "multivariate_normal",
    "nbinom",
    "norm",
    "pareto",
    "poisson",
    "rankdata",
    "sem",
    "t",
    "truncnorm",
    "uniform",
    "vonmises",
    "wrapcauchy",
]
