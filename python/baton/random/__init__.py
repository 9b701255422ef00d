"""``bt.random``: JAX's random numbers (``jax.random``) on baton.

    import baton as bt

    key = bt.random.PRNGKey(0)            # uint32[2]; bt.random.key(0): typed
    k1, k2 = bt.random.split(key)
    x = bt.random.normal(k1, (3, 4))
    i = bt.random.randint(k2, (5,), 0, 10)

The generator is Threefry-2x32 (``_threefry``) with JAX's default
conventions (threefry2x32, ``jax_threefry_partitionable=True``), so the
same key gives the same numbers as JAX (jax 0.10.2, CPU): ``split``,
``fold_in``, ``bits``, ``uniform``, ``randint``, ``bernoulli``,
``permutation``, ``choice``, ``gumbel``, ``categorical`` and
(``_transforms``) ``exponential``, ``laplace``, ``logistic`` bit for bit,
``cauchy``, ``pareto``, ``weibull_min``, ``rayleigh``, ``lognormal``,
``geometric``, ``rademacher``, ``maxwell``, ``double_sided_maxwell``
within a few ulp; ``gamma``/``loggamma`` (``_gamma``: JAX's per-element
Marsaglia-Tsang loop with its own key splits), the distributions built on
them (``_gamma_family``: ``beta``, ``dirichlet``, ``chisquare``, ``f``,
``t``, ``generalized_normal``, ``ball``; differentiable in their parameters
as in JAX), ``poisson``, ``binomial``, ``multinomial`` (``_discrete``,
bitwise), ``wald``, ``triangular`` and ``orthogonal``,
``multivariate_normal`` (``_matrices``) -- docs/jax_surface.md lists how
close each is and why;
``normal`` and ``truncated_normal`` are promised within 2 ulp and are
bitwise equal on everything tested, because XLA's float32 erf, erf_inv,
log and log1p are evaluated with the same formulas and roundings
(``_float_ops``). One known difference: float16 ``gumbel`` (XLA's float16
log is not its float32 log rounded). Keys are values, never state: the
same key always gives the same numbers, eagerly, under ``bt.jit``,
``bt.vmap`` and inside traced functions.

Not supported (baton lacks the dtypes): ``bits`` of uint16/uint64,
``randint`` of 64-bit integers, float64 ``normal``/``truncated_normal``.
"""

import inspect as _inspect

from baton.random._discrete import binomial, multinomial, poisson
from baton.random._gamma import gamma, loggamma
from baton.random._gamma_family import (
    ball,
    beta,
    chisquare,
    dirichlet,
    f,
    generalized_normal,
    t,
)
from baton.random._gumbel import categorical, gumbel
from baton.random._keys import (
    PRNGKey,
    PRNGKeyArray,
    bits,
    fold_in,
    key,
    key_data,
    key_dtype,
    key_impl,
    split,
    wrap_key_data,
)
from baton.random._matrices import multivariate_normal, orthogonal
from baton.random._samplers import bernoulli, normal, randint, truncated_normal, uniform
from baton.random._shuffle import choice, permutation
from baton.random._transforms import (
    cauchy,
    clone,
    double_sided_maxwell,
    exponential,
    geometric,
    laplace,
    logistic,
    lognormal,
    maxwell,
    pareto,
    rademacher,
    rayleigh,
    triangular,
    wald,
    weibull_min,
)

__all__ = [
    "PRNGKey",
    "PRNGKeyArray",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "clone",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "f",
    "fold_in",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "rayleigh",
    "split",
    "t",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
    "wrap_key_data",
]

# The public functions are the boundary at which jax_legacy_prng_key
# checks the key a caller passes (_keys.public).
from baton.random import _keys

for _name in __all__:
    if _inspect.isfunction(globals()[_name]):
        globals()[_name] = _keys.public(globals()[_name])
del _name
