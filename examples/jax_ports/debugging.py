# ruff: noqa -- published code, kept as published (imports aside)
"""The JAX tutorial "Introduction to debugging" (docs/debugging.md,
https://docs.jax.dev/en/latest/debugging.html, Apache-2.0), its code cells
in order, ported to baton by changing the imports only (the lines marked
`# JAX: ...` carry the original).

The cells the tutorial tags `skip-execution` (an interactive debugger
session, a breakpoint that pauses) are left out, as its build leaves them
out; the "Debugging runtime values" summaries after the callback section
(checkify, debug flags) are prose and links to other pages. What the
program prints is compared line by line with JAX's by
tests/jax_compat/test_ports.py.
"""

import baton as jax  # JAX: import jax
import baton.numpy as jnp  # JAX: import jax.numpy as jnp

@jax.jit
def f(x):
  print("print(x) ->", x)
  y = jnp.sin(x)
  print("print(y) ->", y)
  return y

result = f(2.)


@jax.jit
def f(x):
  jax.debug.print("jax.debug.print(x) -> {x}", x=x)
  y = jnp.sin(x)
  jax.debug.print("jax.debug.print(y) -> {y}", y=y)
  return y

result = f(2.)


def f(x):
  jax.debug.print("jax.debug.print(x) -> {}", x)
  y = jnp.sin(x)
  jax.debug.print("jax.debug.print(y) -> {}", y)
  return y

xs = jnp.arange(3.)

result = jax.vmap(f)(xs)


result = jax.lax.map(f, xs)


def f(x):
  jax.debug.print("jax.debug.print(x) -> {}", x)
  return x ** 2

result = jax.grad(f)(1.)


@jax.jit
def f(x, y):
  jax.debug.print("jax.debug.print(x) -> {}", x, ordered=True)
  jax.debug.print("jax.debug.print(y) -> {}", y, ordered=True)
  return x + y

f(1, 2)


def breakpoint_if_nonfinite(x):
  is_finite = jnp.isfinite(x).all()
  def true_fn(x):
    pass
  def false_fn(x):
    jax.debug.breakpoint()
  jax.lax.cond(is_finite, true_fn, false_fn, x)

@jax.jit
def f(x, y):
  z = x / y
  breakpoint_if_nonfinite(z)
  return z

f(2., 1.) # ==> No breakpoint


import logging

def log_value(x):
  logging.warning(f'Logged value: {x}')

@jax.jit
def f(x):
  jax.debug.callback(log_value, x)
  return x

f(1.0);


x = jnp.arange(5.0)
jax.vmap(f)(x);


jax.grad(f)(1.0);
