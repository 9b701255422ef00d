# ruff: noqa -- published code, kept as published (imports aside)
"""An Adam training step: `jax.example_libraries.optimizers.adam` (its
init/update/get_params functions, retyped as published) driving the MNIST
MLP of mnist_classifier_fromscratch.py, with the training step written as
the optimizers module's docstring shows (`jax.value_and_grad` of the loss,
`opt_update(step, grads, opt_state)`), jitted. Ported to baton by changing
the imports (lines marked `# JAX: ...` carry the original).

Outside issue 9, and changed where marked: the `@optimizer` decorator maps
the per-array functions over a pytree with `jax.tree_util` (issue 11); here
`_over_list` maps them over the flat list of parameter arrays instead. The
step index `i` is a traced int under jit, as in the original.
"""

import numpy as np
import numpy.random as npr

import baton as jax  # JAX: import jax
import baton.numpy as jnp  # JAX: import jax.numpy as jnp
from baton import jit  # JAX: from jax import jit
from _issue11 import logsumexp  # JAX: from jax.scipy.special import logsumexp
import synthetic_datasets as datasets  # was: from examples import datasets


def make_schedule(scalar_or_schedule):
  if callable(scalar_or_schedule):
    return scalar_or_schedule
  elif jnp.ndim(scalar_or_schedule) == 0:
    return lambda _: scalar_or_schedule
  else:
    raise TypeError(type(scalar_or_schedule))


def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
  """Construct optimizer triple for Adam. (optimizers.py, without @optimizer)"""
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


def _over_list(opt_maker):
  """Not in the original: @optimizer's job (issue 11: tree_util), for a flat
  list of arrays."""
  def make(*args, **kwargs):
    init, update, get_params = opt_maker(*args, **kwargs)
    def tree_init(xs):
      return [init(x) for x in xs]
    def tree_update(i, grads, states):
      return [update(i, g, s) for g, s in zip(grads, states)]
    def tree_get_params(states):
      return [get_params(s) for s in states]
    return tree_init, tree_update, tree_get_params
  return make


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


def loss_fn(flat_params, batch):  # mnist's loss over the flat list of arrays
  params = list(zip(flat_params[::2], flat_params[1::2]))
  inputs, targets = batch
  preds = predict(params, inputs)
  return -jnp.mean(jnp.sum(preds * targets, axis=1))


def main(num_steps=3, layer_sizes=(784, 512, 512, 10), batch_size=128):
  train_images, train_labels, _, _ = datasets.mnist()
  params = init_random_params(0.1, list(layer_sizes))
  # float32 as JAX makes them (issue 11, DESIGN 5.4); flattened (issue 11).
  flat = [p.astype(np.float32) for wb in params for p in wb]

  opt_init, opt_update, get_params = _over_list(adam)(1e-3)
  opt_state = opt_init(flat)

  @jit
  def step(step, opt_state, batch):
    value, grads = jax.value_and_grad(loss_fn)(get_params(opt_state), batch)
    opt_state = opt_update(step, grads, opt_state)
    return value, opt_state

  values = []
  for i in range(num_steps):
    batch = (train_images[i * batch_size:(i + 1) * batch_size],
             train_labels[i * batch_size:(i + 1) * batch_size])
    value, opt_state = step(i, opt_state, batch)
    values.append(value)
  return {"values": values, "params": get_params(opt_state)}


if __name__ == "__main__":
  print(main())
