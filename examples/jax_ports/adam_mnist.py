# ruff: noqa -- published code, kept as published (imports aside)
"""An Adam training step: `jax.example_libraries.optimizers` (Apache-2.0) --
`OptimizerState`, the `@optimizer` pytree decorator, `adam` and
`make_schedule` / `constant`, as jax 0.10's optimizers.py writes them --
driving the MNIST MLP of mnist_classifier_fromscratch.py (its
`init_random_params`, `predict` and `loss`), with the training step written
as the optimizers module's docstring shows (`jax.value_and_grad` of the
loss, `opt_update(step, grads, opt_state)`), jitted. The step index `i` is
a traced int under jit, as in the original.

Ported to baton by changing the imports (lines marked `# JAX: ...` carry
the original). Not one published program but a composition of published
pieces, so more differs than imports, and only this: the pieces are
retyped without their docstrings and type annotations; `unzip2` is defined
here and the builtin `map` / `zip` are used, where optimizers.py imports
`unzip2`, `safe_map` and `safe_zip` from the private `jax._src.util`; the
data are synthetic_datasets.py (nothing can be downloaded); and `main()`,
the driver, is this port's own (the test compares what it returns). The
numpy float64 initial parameters go in uncast, as in
mnist_classifier_fromscratch.py: JAX's x64-off default makes them float32,
and baton's does too.
"""

import functools
from functools import partial
from collections import namedtuple

import numpy.random as npr

import baton as jax  # JAX: import jax
import baton.numpy as jnp  # JAX: import jax.numpy as jnp
from baton import jit  # JAX: from jax import jit
from baton.scipy.special import logsumexp  # JAX: from jax.scipy.special import logsumexp
import synthetic_datasets as datasets  # was: from examples import datasets


def constant(step_size):
  def schedule(i):
    return step_size
  return schedule


def make_schedule(scalar_or_schedule):
  if callable(scalar_or_schedule):
    return scalar_or_schedule
  elif jnp.ndim(scalar_or_schedule) == 0:
    return constant(scalar_or_schedule)
  else:
    raise TypeError(type(scalar_or_schedule))


OptimizerState = namedtuple("OptimizerState",
                            ["packed_state", "tree_def", "subtree_defs"])
jax.tree_util.register_pytree_node(
    OptimizerState,
    lambda xs: ((xs.packed_state,), (xs.tree_def, xs.subtree_defs)),
    lambda data, xs: OptimizerState(xs[0], data[0], data[1]))


def unzip2(xys):
  xs = []
  ys = []
  for x, y in xys:
    xs.append(x)
    ys.append(y)
  return tuple(xs), tuple(ys)


def optimizer(opt_maker):
  """Decorator to make an optimizer defined for arrays generalize to containers."""
  @functools.wraps(opt_maker)
  def tree_opt_maker(*args, **kwargs):
    init, update, get_params = opt_maker(*args, **kwargs)

    @functools.wraps(init)
    def tree_init(x0_tree):
      x0_flat, tree = jax.tree.flatten(x0_tree)
      initial_states = [init(x0) for x0 in x0_flat]
      states_flat, subtrees = unzip2(map(jax.tree.flatten, initial_states))
      return OptimizerState(states_flat, tree, subtrees)

    @functools.wraps(update)
    def tree_update(i, grad_tree, opt_state):
      states_flat, tree, subtrees = opt_state
      grad_flat, tree2 = jax.tree.flatten(grad_tree)
      if tree2 != tree:
        msg = ("optimizer update function was passed a gradient tree that did "
               "not match the parameter tree structure with which it was "
               "initialized: parameter tree {} and grad tree {}.")
        raise TypeError(msg.format(tree, tree2))
      states = map(jax.tree.unflatten, subtrees, states_flat)
      new_states = map(partial(update, i), grad_flat, states)
      new_states_flat, subtrees2 = unzip2(map(jax.tree.flatten, new_states))
      for subtree, subtree2 in zip(subtrees, subtrees2):
        if subtree2 != subtree:
          msg = ("optimizer update function produced an output structure that "
                 "did not match its input structure: input {} and output {}.")
          raise TypeError(msg.format(subtree, subtree2))
      return OptimizerState(new_states_flat, tree, subtrees)

    @functools.wraps(get_params)
    def tree_get_params(opt_state):
      states_flat, tree, subtrees = opt_state
      states = map(jax.tree.unflatten, subtrees, states_flat)
      params = map(get_params, states)
      return jax.tree.unflatten(tree, params)

    return tree_init, tree_update, tree_get_params
  return tree_opt_maker


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
  """Construct optimizer triple for Adam."""
  step_size = make_schedule(step_size)
  def init(x0):
    m0 = jnp.zeros_like(x0)
    v0 = jnp.zeros_like(x0)
    return x0, m0, v0
  def update(i, g, state):
    x, m, v = state
    m = (1 - b1) * g + b1 * m  # First  moment estimate.
    v = (1 - b2) * jnp.square(g) + b2 * v  # Second moment estimate.
    mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))  # Bias correction.
    vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
    x = x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps)
    return x, m, v
  def get_params(state):
    x, _, _ = state
    return x
  return init, update, get_params


def init_random_params(scale, layer_sizes, rng=npr.RandomState(0)):
  return [(scale * rng.randn(m, n), scale * rng.randn(n))
          for m, n, in zip(layer_sizes[:-1], layer_sizes[1:])]

def predict(params, inputs):
  activations = inputs
  for w, b in params[:-1]:
    outputs = jnp.dot(activations, w) + b
    activations = jnp.tanh(outputs)

  final_w, final_b = params[-1]
  logits = jnp.dot(activations, final_w) + final_b
  return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, batch):
  inputs, targets = batch
  preds = predict(params, inputs)
  return -jnp.mean(jnp.sum(preds * targets, axis=1))


def main(num_steps=3, layer_sizes=(784, 512, 512, 10), batch_size=128):
  train_images, train_labels, _, _ = datasets.mnist()
  params = init_random_params(0.1, list(layer_sizes))

  opt_init, opt_update, get_params = adam(1e-3)
  opt_state = opt_init(params)

  @jit
  def step(step, opt_state, batch):
    value, grads = jax.value_and_grad(loss)(get_params(opt_state), batch)
    opt_state = opt_update(step, grads, opt_state)
    return value, opt_state

  values = []
  for i in range(num_steps):
    batch = (train_images[i * batch_size:(i + 1) * batch_size],
             train_labels[i * batch_size:(i + 1) * batch_size])
    value, opt_state = step(i, opt_state, batch)
    values.append(value)
  # The parameter arrays in flattening order (the test compares them).
  return {"values": values, "params": jax.tree.flatten(get_params(opt_state))[0]}


if __name__ == "__main__":
  print(main())
