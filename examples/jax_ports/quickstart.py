# ruff: noqa -- published code, kept as published (imports aside)
"""The JAX "Quickstart" (docs/quickstart.md, https://docs.jax.dev/en/latest/
quickstart.html, Apache-2.0), its code cells in order, ported to baton by
changing the imports only (the lines marked `# JAX: ...` carry the
original). The IPython `%timeit` lines are left out (they are not Python);
the calls they time are kept.

`jax.numpy` with `selu`, `jit`, `grad` of `sum_logistic` against finite
differences, nested `grad(jit(grad(...)))`, `jacobian`, a Hessian from
`jacfwd(jacrev(...))`, `jax.random` draws and `vmap` of a matrix-vector
product checked against manual batching. The printed values are module
globals that tests/jax_compat/test_ports.py compares between the two
libraries.
"""

import baton.numpy as jnp  # JAX: import jax.numpy as jnp
from baton import grad, jit, vmap  # JAX: from jax import grad, jit, vmap
from baton import random  # JAX: from jax import random


def selu(x, alpha=1.67, lmbda=1.05):
  return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


x = jnp.arange(5.0)
selu_small = selu(x)
print(selu_small)

key = random.key(1701)
x = random.normal(key, (1_000_000,))
selu(x).block_until_ready()

selu_jit = jit(selu)
_ = selu_jit(x)  # compiles on first call
selu_large = selu_jit(x).block_until_ready()


def sum_logistic(x):
  return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


x_small = jnp.arange(3.)
derivative_fn = grad(sum_logistic)
derivative = derivative_fn(x_small)
print(derivative)


def first_finite_differences(f, x, eps=1E-3):
  return jnp.array([(f(x + eps * v) - f(x - eps * v)) / (2 * eps)
                   for v in jnp.eye(len(x))])


finite_differences = first_finite_differences(sum_logistic, x_small)
print(finite_differences)

third_derivative = grad(jit(grad(jit(grad(sum_logistic)))))(1.0)
print(third_derivative)

from baton import jacobian  # JAX: from jax import jacobian
jacobian_exp = jacobian(jnp.exp)(x_small)
print(jacobian_exp)

from baton import jacfwd, jacrev  # JAX: from jax import jacfwd, jacrev
def hessian(fun):
  return jit(jacfwd(jacrev(fun)))
hessian_value = hessian(sum_logistic)(x_small)
print(hessian_value)

key1, key2 = random.split(key)
mat = random.normal(key1, (150, 100))
batched_x = random.normal(key2, (10, 100))

def apply_matrix(x):
  return jnp.dot(mat, x)

def naively_batched_apply_matrix(v_batched):
  return jnp.stack([apply_matrix(v) for v in v_batched])

naive = naively_batched_apply_matrix(batched_x)

import numpy as np

@jit
def batched_apply_matrix(batched_x):
  return jnp.dot(batched_x, mat.T)

manual = batched_apply_matrix(batched_x)
np.testing.assert_allclose(naively_batched_apply_matrix(batched_x),
                           batched_apply_matrix(batched_x), atol=1E-4, rtol=1E-4)

@jit
def vmap_batched_apply_matrix(batched_x):
  return vmap(apply_matrix)(batched_x)

vmapped = vmap_batched_apply_matrix(batched_x)
np.testing.assert_allclose(naively_batched_apply_matrix(batched_x),
                           vmap_batched_apply_matrix(batched_x), atol=1E-4, rtol=1E-4)
