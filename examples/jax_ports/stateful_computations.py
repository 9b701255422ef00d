# ruff: noqa -- published code, kept as published (imports aside)
"""The JAX tutorial "Stateful computations" (docs/stateful-computations.md,
https://docs.jax.dev/en/latest/stateful-computations.html, Apache-2.0), its
code cells in order, ported to baton by changing the imports only (the lines
marked `# JAX: ...` carry the original).

The counter under jit (state passed in and out explicitly), then the
linear regression: `jax.random` keys and normal draws, a `NamedTuple` of
parameters as a pytree, `jax.grad` of the loss with respect to it, a jitted
update with `jax.tree.map`, 1000 steps. The values the tutorial prints are
module globals that tests/jax_compat/test_ports.py compares between the two
libraries (the plot cell is left out: matplotlib is not a dependency).
"""

import baton as jax  # JAX: import jax
import baton.numpy as jnp  # JAX: import jax.numpy as jnp
from typing import NamedTuple


class Counter:
  """A simple counter."""

  def __init__(self):
    self.n = 0

  def count(self) -> int:
    """Increments the counter and returns the new value."""
    self.n += 1
    return self.n

  def reset(self):
    """Resets the counter to zero."""
    self.n = 0


counter = Counter()

for _ in range(3):
  print(counter.count())

counter.reset()
fast_count = jax.jit(counter.count)

jit_counts = []
for _ in range(3):
  jit_counts.append(fast_count())
  print(jit_counts[-1])

CounterState = int


class CounterV2:

  def count(self, n: CounterState) -> tuple[int, CounterState]:
    # You could just return n+1, but here we separate its role as
    # the output and as the counter state for didactic purposes.
    return n+1, n+1

  def reset(self) -> CounterState:
    return 0


counter = CounterV2()
state = counter.reset()

for _ in range(3):
  value, state = counter.count(state)
  print(value)

state = counter.reset()
fast_count = jax.jit(counter.count)

functional_counts = []
for _ in range(3):
  value, state = fast_count(state)
  functional_counts.append(value)
  print(value)


class Params(NamedTuple):
  weight: jnp.ndarray
  bias: jnp.ndarray


def init(rng) -> Params:
  """Returns the initial model params."""
  weights_key, bias_key = jax.random.split(rng)
  weight = jax.random.normal(weights_key, ())
  bias = jax.random.normal(bias_key, ())
  return Params(weight, bias)


def loss(params: Params, x: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
  """Computes the least squares error of the model's predictions on x against y."""
  pred = params.weight * x + params.bias
  return jnp.mean((pred - y) ** 2)


LEARNING_RATE = 0.005


@jax.jit
def update(params: Params, x: jnp.ndarray, y: jnp.ndarray) -> Params:
  """Performs one SGD update step on params using the given data."""
  grad = jax.grad(loss)(params, x, y)

  # If we were using Adam or another stateful optimizer,
  # we would also do something like
  #
  #   updates, new_optimizer_state = optimizer(grad, optimizer_state)
  #
  # and then use `updates` instead of `grad` to actually update the params.
  # (And we'd include `new_optimizer_state` in the output, naturally.)

  new_params = jax.tree.map(
      lambda param, g: param - g * LEARNING_RATE, params, grad)

  return new_params


rng = jax.random.key(42)

# Generate true data from y = w*x + b + noise
true_w, true_b = 2, -1
x_rng, noise_rng = jax.random.split(rng)
xs = jax.random.normal(x_rng, (128, 1))
noise = jax.random.normal(noise_rng, (128, 1)) * 0.5
ys = xs * true_w + true_b + noise

# Fit regression
params = init(rng)
initial_params = params
for _ in range(1000):
  params = update(params, xs, ys)

print(f"w: {params.weight:<.2f}, b: {params.bias:<.2f}")
