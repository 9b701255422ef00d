# ruff: noqa -- published code, kept as published (imports aside)
"""The JAX tutorial "Automatic differentiation" (docs/automatic-differentiation.md,
https://docs.jax.dev/en/latest/automatic-differentiation.html), its code
cells in order, ported to baton by changing the imports (the lines marked
`# JAX: ...` carry the original).

Outside issue 9, and changed where marked: `jax.random` (issue 10) draws the
initial W, b and the random direction; numpy's RandomState draws them here
instead (float32, as jax.random.normal returns), and `jax.test_util.
check_grads` is left out. The values the tutorial prints are module globals,
which tests/jax_compat/test_ports.py compares between the two libraries.
"""

import numpy as np  # not in the tutorial: stands in for jax.random (issue 10)

import baton as jax  # JAX: import jax
import baton.numpy as jnp  # JAX: import jax.numpy as jnp
from baton import grad  # JAX: from jax import grad

grad_tanh = grad(jnp.tanh)
print(grad_tanh(2.0))

print(grad(grad(jnp.tanh))(2.0))
print(grad(grad(grad(jnp.tanh)))(2.0))

f = lambda x: x**3 + 2*x**2 - 3*x + 1

dfdx = jax.grad(f)

d2fdx = jax.grad(dfdx)
d3fdx = jax.grad(d2fdx)
d4fdx = jax.grad(d3fdx)

print(dfdx(1.))
print(d2fdx(1.))
print(d3fdx(1.))
print(d4fdx(1.))

# was: key = jax.random.key(1701)
rng = np.random.RandomState(1701)

def sigmoid(x):
  return 0.5 * (jnp.tanh(x / 2) + 1)

# Outputs probability of a label being true.
def predict(W, b, inputs):
  return sigmoid(jnp.dot(inputs, W) + b)

# Build a toy dataset.
inputs = jnp.array([[0.52, 1.12,  0.77],
                    [0.88, -1.08, 0.15],
                    [0.52, 0.06, -1.30],
                    [0.74, -2.49, 1.39]])
targets = jnp.array([True, True, False, True])

# Training loss is the negative log-likelihood of the training examples.
def loss(W, b):
  preds = predict(W, b, inputs)
  label_probs = preds * targets + (1 - preds) * (1 - targets)
  return -jnp.sum(jnp.log(label_probs))

# Initialize random model coefficients
# was: key, W_key, b_key = jax.random.split(key, 3)
# was: W = jax.random.normal(W_key, (3,))
# was: b = jax.random.normal(b_key, ())
W = rng.standard_normal((3,)).astype(np.float32)
b = np.float32(rng.standard_normal())

# Differentiate `loss` with respect to the first positional argument:
W_grad = grad(loss, argnums=0)(W, b)
print(f'{W_grad=}')

# Since argnums=0 is the default, this does the same thing:
W_grad = grad(loss)(W, b)
print(f'{W_grad=}')

# But you can choose different values too, and drop the keyword:
b_grad = grad(loss, 1)(W, b)
print(f'{b_grad=}')

# Including tuple values
W_grad, b_grad = grad(loss, (0, 1))(W, b)
print(f'{W_grad=}')
print(f'{b_grad=}')

def loss2(params_dict):
    preds = predict(params_dict['W'], params_dict['b'], inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))

dict_grads = grad(loss2)({'W': W, 'b': b})  # was printed directly
print(dict_grads)

loss_value, Wb_grad = jax.value_and_grad(loss, (0, 1))(W, b)
print('loss value', loss_value)
print('loss value', loss(W, b))

# Set a step size for finite differences calculations
eps = 1e-4

# Check b_grad with scalar finite differences
b_grad_numerical = (loss(W, b + eps / 2.) - loss(W, b - eps / 2.)) / eps
print('b_grad_numerical', b_grad_numerical)
print('b_grad_autodiff', grad(loss, 1)(W, b))

# Check W_grad with finite differences in a random direction
# was: key, subkey = jax.random.split(key)
# was: vec = jax.random.normal(subkey, W.shape)
vec = rng.standard_normal(W.shape).astype(np.float32)
unitvec = vec / jnp.sqrt(jnp.vdot(vec, vec))
W_grad_numerical = (loss(W + eps / 2. * unitvec, b) - loss(W - eps / 2. * unitvec, b)) / eps
print('W_dirderiv_numerical', W_grad_numerical)
print('W_dirderiv_autodiff', jnp.vdot(grad(loss)(W, b), unitvec))
W_dirderiv_autodiff = jnp.vdot(grad(loss)(W, b), unitvec)  # was printed only
