# ruff: noqa -- a port: its imports mirror the JAX original line for line
"""An MNIST classifier built with `jax.example_libraries.stax` and trained
with `jax.example_libraries.optimizers`, in the style of the
`examples/mnist_classifier.py` of the JAX repository (a `stax.serial` MLP
of Dense / Relu / LogSoftmax, `optimizers.momentum`, a jitted `update` over
a shuffled batch stream), written for this port; a second model adds the
routing layers (`FanOut`, `parallel`, `FanInConcat`), `Dropout` with an
`rng`, `adam` on a schedule and `clip_grads`.

Ported to baton by changing the imports (lines marked `# JAX: ...` carry
the original). The data are synthetic_datasets.py (nothing can be
downloaded). `main()` returns what the test compares.
"""

import itertools

import numpy.random as npr

import baton as jax  # JAX: import jax
import baton.numpy as jnp  # JAX: import jax.numpy as jnp
from baton import grad, jit, random  # JAX: from jax import grad, jit, random
from baton.example_libraries import optimizers, stax  # JAX: from jax.example_libraries import optimizers, stax
from baton.example_libraries.stax import Dense, LogSoftmax, Relu  # JAX: from jax.example_libraries.stax import Dense, LogSoftmax, Relu
import synthetic_datasets as datasets  # was: from examples import datasets


def loss(predict, params, batch, **kwargs):
  inputs, targets = batch
  preds = predict(params, inputs, **kwargs)
  return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(predict, params, batch):
  inputs, targets = batch
  target_class = jnp.argmax(targets, axis=1)
  predicted_class = jnp.argmax(predict(params, inputs), axis=1)
  return jnp.mean(predicted_class == target_class)


def batch_stream(images, labels, batch_size, seed=0):
  rng = npr.RandomState(seed)
  n = images.shape[0]
  num_batches = -(-n // batch_size)
  while True:
    perm = rng.permutation(n)
    for i in range(num_batches):
      idx = perm[i * batch_size:(i + 1) * batch_size]
      yield images[idx], labels[idx]


def train_mlp(num_epochs, batch_size, hidden=128):
  """The stax MLP with SGD + momentum."""
  init_random_params, predict = stax.serial(
      Dense(hidden), Relu, Dense(hidden), Relu, Dense(10), LogSoftmax)
  train_images, train_labels, test_images, test_labels = datasets.mnist()
  opt_init, opt_update, get_params = optimizers.momentum(1e-3, mass=0.9)

  @jit
  def update(i, opt_state, batch):
    params = get_params(opt_state)
    return opt_update(i, grad(lambda p, b: loss(predict, p, b))(params, batch), opt_state)

  _, init_params = init_random_params(random.PRNGKey(0), (-1, 28 * 28))
  opt_state = opt_init(init_params)
  batches = batch_stream(train_images, train_labels, batch_size)
  steps = itertools.count()
  num_batches = -(-train_images.shape[0] // batch_size)
  for _ in range(num_epochs):
    for _ in range(num_batches):
      opt_state = update(next(steps), opt_state, next(batches))
  params = get_params(opt_state)
  return {
      "params": jax.tree.leaves(params),
      "train_acc": accuracy(predict, params, (train_images, train_labels)),
      "test_acc": accuracy(predict, params, (test_images, test_labels)),
      "test_loss": loss(predict, params, (test_images, test_labels)),
  }


def train_branchy(num_steps, batch_size):
  """Two Dense branches concatenated, Dropout, Adam on a decaying step."""
  init_fun, apply_fun = stax.serial(
      stax.FanOut(2),
      stax.parallel(stax.serial(Dense(64), stax.Tanh), stax.serial(Dense(32), stax.Gelu)),
      stax.FanInConcat(),
      stax.Dropout(0.9),
      Dense(10),
      LogSoftmax)
  train_images, train_labels, _, _ = datasets.mnist()
  schedule = optimizers.exponential_decay(1e-3, decay_steps=2, decay_rate=0.5)
  opt_init, opt_update, get_params = optimizers.adam(schedule)
  key = random.PRNGKey(1)
  key, init_key = random.split(key)
  out_shape, params = init_fun(init_key, (-1, 784))
  opt_state = opt_init(params)

  @jit
  def step(i, opt_state, batch, rng):
    params = get_params(opt_state)
    value, grads = jax.value_and_grad(
        lambda p: loss(apply_fun, p, batch, rng=rng))(params)
    grads = optimizers.clip_grads(grads, 1.0)
    return value, opt_update(i, grads, opt_state)

  values = []
  batches = batch_stream(train_images, train_labels, batch_size, seed=1)
  for i in range(num_steps):
    key, rng = random.split(key)
    value, opt_state = step(i, opt_state, next(batches), rng)
    values.append(value)
  state = optimizers.unpack_optimizer_state(opt_state)
  return {
      "out_shape": out_shape,
      "values": values,
      "params": jax.tree.leaves(get_params(optimizers.pack_optimizer_state(state))),
  }


def main(num_epochs=2, batch_size=128, num_steps=4):
  return {"mlp": train_mlp(num_epochs, batch_size),
          "branchy": train_branchy(num_steps, batch_size)}


if __name__ == "__main__":
  results = main()
  print("MLP train accuracy", results["mlp"]["train_acc"],
        "test accuracy", results["mlp"]["test_acc"])
  print("branchy losses", results["branchy"]["values"])
