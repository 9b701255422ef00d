# ruff: noqa -- published code, kept as published (imports aside)
"""The JAX tutorial "Control flow and logical operators with JIT"
(docs/control-flow.md, https://docs.jax.dev/en/latest/control-flow.html,
Apache-2.0), its code cells in order, ported to baton by changing the
imports only (the lines marked `# JAX: ...` carry the original).

The cells the tutorial marks as raising an exception (Python `if` on a
traced value, a traced shape) are run inside `try` / `except` of the error
class JAX documents, and what was caught is recorded: a ported `except`
clause must catch baton's error too. Values the tutorial prints are module
globals that tests/jax_compat/test_ports.py compares between the two
libraries.
"""

import baton as jax  # JAX: import jax
import baton.numpy as jnp  # JAX: import jax.numpy as jnp
from baton import grad, jit, lax  # JAX: from jax import grad, jit, lax


def f(x):
  if x < 3:
    return 3. * x ** 2
  else:
    return -4 * x

grad_below = grad(f)(2.)  # ok!
grad_above = grad(f)(4.)  # ok!
print(grad_below, grad_above)


@jit
def f(x):
  for i in range(3):
    x = 2 * x
  return x

unrolled = f(3)
print(unrolled)


@jit
def g(x):
  y = 0.
  for i in range(x.shape[0]):
    y = y + x[i]
  return y

summed = g(jnp.array([1., 2., 3.]))
print(summed)


@jit
def f(x):
  if x < 3:
    return 3. * x ** 2
  else:
    return -4 * x

caught = []
try:
  f(2)
except jax.errors.TracerBoolConversionError as e:
  caught.append("TracerBoolConversionError")


def f(x):
  if x < 3:
    return 3. * x ** 2
  else:
    return -4 * x

f = jit(f, static_argnames='x')

static_value = f(2.)
print(static_value)


def f(x, n):
  y = 0.
  for i in range(n):
    y = y + x[i]
  return y

f = jit(f, static_argnames='n')

static_n = f(jnp.array([2., 3., 4.]), 2)
print(static_n)


def example_fun(length, val):
  return jnp.ones((length,)) * val
# un-jit'd works fine
eager_ones = example_fun(5, 4)
print(eager_ones)

bad_example_jit = jit(example_fun)
# this will fail:
try:
  bad_example_jit(10, 4)
except TypeError as e:
  caught.append("TypeError")

# static_argnames tells JAX to recompile on changes at these argument positions:
good_example_jit = jit(example_fun, static_argnames='length')
# first compile
ones_10 = good_example_jit(10, 4)
print(ones_10)
# recompiles
ones_5 = good_example_jit(5, 4)
print(ones_5)


@jit
def f(x):
  print(x)
  y = 2 * x
  print(y)
  return y

printed = f(2)


operand = jnp.array([0.])
cond_true = lax.cond(True, lambda x: x+1, lambda x: x-1, operand)
cond_false = lax.cond(False, lambda x: x+1, lambda x: x-1, operand)
print(cond_true, cond_false)

init_val = 0
cond_fun = lambda x: x < 10
body_fun = lambda x: x+1
while_result = lax.while_loop(cond_fun, body_fun, init_val)
print(while_result)

init_val = 0
start = 0
stop = 10
body_fun = lambda i,x: x+i
fori_result = lax.fori_loop(start, stop, body_fun, init_val)
print(fori_result)


def python_check_positive_even(x):
  is_even = x % 2 == 0
  # `and` short-circults, so when `is_even` is `False`, `x > 0` is not evaluated.
  return is_even and (x > 0)

@jit
def jax_check_positive_even(x):
  is_even = x % 2 == 0
  # `logical_and` does not short circuit, so `x > 0` is always evaluated.
  return jnp.logical_and(is_even, x > 0)

python_positive_even = python_check_positive_even(24)
jax_positive_even = jax_check_positive_even(24)
print(python_positive_even, jax_positive_even)

x = jnp.array([-1, 2, 5])
where_values = jnp.where(x > 0, x, 0)
print(where_values)

select_values = lax.select(x > 0, x, jnp.zeros_like(x))
print(select_values)
