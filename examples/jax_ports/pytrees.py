# ruff: noqa -- published code, kept as published (imports aside)
"""The JAX tutorial "Pytrees" (docs/working-with-pytrees.md,
https://docs.jax.dev/en/latest/working-with-pytrees.html, Apache-2.0), its
code cells in order, ported to baton by changing the imports only (the lines
marked `# JAX: ...` carry the original).

Leaves of example trees, `jax.tree.map` over one and two trees, the MLP fit
with parameters as a list of dicts (numpy float64 draws, which JAX makes
float32 with x64 off), a custom pytree node, a NamedTuple, the gotchas (shape
tuples are trees, None is not a leaf), transposing a list of trees, and key
paths. What the tutorial prints is kept in module globals that
tests/jax_compat/test_ports.py compares between the two libraries (the plot
cell is left out: matplotlib is not a dependency).
"""

import numpy as np

import baton as jax  # JAX: import jax
import baton.numpy as jnp  # JAX: import jax.numpy as jnp

example_trees = [
    [1, 'a', object()],
    (1, (2, 3), ()),
    [1, {'k1': 2, 'k2': (3, 4)}, 5],
    {'a': 2, 'b': (2, 3)},
    jnp.array([1, 2, 3]),
]

# Print how many leaves the pytrees have.
leaf_counts = []
for pytree in example_trees:
  # This `jax.tree.leaves()` method extracts the flattened leaves from the pytrees.
  leaves = jax.tree.leaves(pytree)
  leaf_counts.append(len(leaves))
  print(f"{repr(pytree):<45} has {len(leaves)} leaves: {leaves}")

list_of_lists = [
    [1, 2, 3],
    [1, 2],
    [1, 2, 3, 4]
]

doubled = jax.tree.map(lambda x: x*2, list_of_lists)
print(doubled)

another_list_of_lists = list_of_lists
summed = jax.tree.map(lambda x, y: x+y, list_of_lists, another_list_of_lists)
print(summed)

np.random.seed(0)  # not in the tutorial: the same draws for both libraries


def init_mlp_params(layer_widths):
  params = []
  for n_in, n_out in zip(layer_widths[:-1], layer_widths[1:]):
    params.append(
        dict(weights=np.random.normal(size=(n_in, n_out)) * np.sqrt(2/n_in),
             biases=np.ones(shape=(n_out,))
            )
    )
  return params


params = init_mlp_params([1, 128, 128, 1])

param_shapes = jax.tree.map(lambda x: x.shape, params)
print(param_shapes)


def forward(params, x):
  *hidden, last = params
  for layer in hidden:
    x = jax.nn.relu(x @ layer['weights'] + layer['biases'])
  return x @ last['weights'] + last['biases']


def loss_fn(params, x, y):
  return jnp.mean((forward(params, x) - y) ** 2)


LEARNING_RATE = 0.0001


@jax.jit
def update(params, x, y):

  grads = jax.grad(loss_fn)(params, x, y)
  # Note that `grads` is a pytree with the same structure as `params`.
  # `jax.grad` is one of the many JAX functions that has
  # built-in support for pytrees.

  # This is handy, because we can apply the SGD update using tree utils:
  return jax.tree.map(
      lambda p, g: p - LEARNING_RATE * g, params, grads
  )


xs = np.random.normal(size=(128, 1))
ys = xs ** 2

for _ in range(1000):
  params = update(params, xs, ys)

fitted = forward(params, xs)
final_loss = loss_fn(params, xs, ys)
print(final_loss)


class MyContainer:
  """A named container."""

  def __init__(self, name: str, a: int, b: int, c: int):
    self.name = name
    self.a = a
    self.b = b
    self.c = c


def flatten_MyContainer(container) -> tuple:
  """Returns an iterable over container contents, and aux data."""
  flat_contents = [container.a, container.b, container.c]

  # we don't want the name to appear as a child, so it is auxiliary data.
  # auxiliary data is usually a description of the structure of a node,
  # e.g., the keys of a dict -- anything that isn't a node's children.
  aux_data = container.name
  return flat_contents, aux_data


def unflatten_MyContainer(
    aux_data: str, flat_contents: list) -> MyContainer:
  """Converts aux data and the flat contents into a MyContainer."""
  return MyContainer(aux_data, *flat_contents)


jax.tree_util.register_pytree_node(
    MyContainer, flatten_MyContainer, unflatten_MyContainer)

container_leaves = jax.tree.leaves([
    MyContainer('Alice', 1, 2, 3),
    MyContainer('Bob', 4, 5, 6)
])
print(container_leaves)

container_sums = jax.tree.map(lambda x: x + 1, [
    MyContainer('Alice', 1, 2, 3),
    MyContainer('Bob', 4, 5, 6)
])
container_sums = [(c.name, c.a, c.b, c.c) for c in container_sums]

from typing import NamedTuple, Any


class MyOtherContainer(NamedTuple):
  name: str
  a: Any
  b: Any
  c: Any


# NamedTuple subclasses are handled as pytree nodes, so
# this will work out-of-the-box.
namedtuple_leaves = jax.tree.leaves([
    MyOtherContainer('Alice', 1, 2, 3),
    MyOtherContainer('Bob', 4, 5, 6)
])
print(namedtuple_leaves)

a_tree = [jnp.zeros((2, 3)), jnp.zeros((3, 4))]

# Try to make another pytree with ones instead of zeros.
shapes = jax.tree.map(lambda x: x.shape, a_tree)
ones_from_shapes = jax.tree.map(jnp.ones, shapes)
print(ones_from_shapes)

none_leaves = jax.tree.leaves([None, None, None])
print(none_leaves)


def tree_transpose(list_of_trees):
  """
  Converts a list of trees of identical structure into a single tree of lists.
  """
  return jax.tree.map(lambda *xs: list(xs), *list_of_trees)


# Convert a dataset from row-major to column-major.
episode_steps = [dict(t=1, obs=3), dict(t=2, obs=4)]
transposed = tree_transpose(episode_steps)
print(transposed)

transposed_builtin = jax.tree.transpose(
  outer_treedef = jax.tree.structure([0 for e in episode_steps]),
  inner_treedef = jax.tree.structure(episode_steps[0]),
  pytree_to_transpose = episode_steps
)
print(transposed_builtin)

import collections

ATuple = collections.namedtuple("ATuple", ('name'))

tree = [1, {'k1': 2, 'k2': (3, 4)}, ATuple('foo')]
flattened, _ = jax.tree_util.tree_flatten_with_path(tree)

key_strings = []
for key_path, value in flattened:
  key_strings.append((jax.tree_util.keystr(key_path), value))
  print(f'Value of tree{jax.tree_util.keystr(key_path)}: {value}')

key_reprs = []
for key_path, _ in flattened:
  key_reprs.append(repr(key_path))
  print(f'Key path of tree{jax.tree_util.keystr(key_path)}: {repr(key_path)}')
