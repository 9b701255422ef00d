# ruff: noqa -- published code, kept as published (imports aside)
"""The JAX "Advanced automatic differentiation" tutorial (the autodiff
cookbook, docs/advanced-autodiff.md): Jacobians with jacfwd/jacrev, the
Hessian as jacfwd(jacrev(f)), jvp, vjp, Hessian-vector products and
per-example gradients with vmap, its code cells in order, ported to baton by
changing the imports (lines marked `# JAX: ...` carry the original).

Outside issue 9, and changed where marked: `jax.random` (issue 10) is
replaced by numpy's RandomState (float32 draws). The values the tutorial
prints are module globals that tests/jax_compat/test_ports.py compares.
"""

import numpy as np  # not in the tutorial: stands in for jax.random (issue 10)

import baton as jax  # JAX: import jax
import baton.numpy as jnp  # JAX: import jax.numpy as jnp
from baton import grad, jit, vmap  # JAX: from jax import grad, jit, vmap
from baton import jacfwd, jacrev  # JAX: from jax import jacfwd, jacrev
from baton import jvp, vjp  # JAX: from jax import jvp, vjp

# was: key = random.key(0)
rng = np.random.RandomState(0)

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
# was: key, W_key, b_key = random.split(key, 3)
W = rng.standard_normal((3,)).astype(np.float32)  # was: random.normal(W_key, (3,))
b = np.float32(rng.standard_normal())  # was: random.normal(b_key, ())

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

J = jacfwd(f)(W)
print("jacfwd result, with shape", J.shape)
print(J)

J_rev = jacrev(f)(W)  # was: J = jacrev(f)(W)
print("jacrev result, with shape", J_rev.shape)
print(J_rev)

def hessian(f):
    return jacfwd(jacrev(f))

H = hessian(f)(W)
print("hessian, with shape", H.shape)
print(H)

# Push forward the vector `v` along `f` evaluated at `W`
v = rng.standard_normal(W.shape).astype(np.float32)  # was: random.normal(subkey, W.shape)
y, u = jvp(f, (W,), (v,))

y_vjp, vjp_fun = vjp(f, W)  # was: y, vjp_fun = vjp(f, W)
u_ct = rng.standard_normal(y_vjp.shape).astype(np.float32)  # was: u = random.normal(subkey, y.shape)
# Pull back the covector `u` along `f` evaluated at `W`
v_pulled = vjp_fun(u_ct)  # was: v = vjp_fun(u)

def hvp(f, x, v):
    return grad(lambda x: jnp.vdot(grad(f)(x), v))(x)

def hvp_fwd_rev(f, primals, tangents):  # was: def hvp(f, primals, tangents):
  return jvp(grad(f), primals, tangents)[1]

def f2(X):  # was: def f(X):
  return jnp.sum(jnp.tanh(X)**2)

X = rng.standard_normal((30, 40)).astype(np.float32)  # was: random.normal(key, (30, 40))
V = rng.standard_normal((30, 40)).astype(np.float32)
hvp_rev_rev = hvp(f2, X, V)
hvp_fwd = hvp_fwd_rev(f2, (X,), (V,))
# was: print(jnp.allclose(hvp_rev_rev, hvp_fwd, 1e-4, 1e-4)) -- jnp.allclose is issue 11
print(np.allclose(hvp_rev_rev, hvp_fwd, 1e-4, 1e-4))

# Per-example gradients (docs: "Per-example gradients"), with predict's loss
def example_loss(W, b, x, t):
    p = predict(W, b, x)
    return -(t * jnp.log(p) + (1 - t) * jnp.log(1 - p))

perex_grads = jit(vmap(grad(example_loss), in_axes=(None, None, 0, 0)))
per_example = perex_grads(W, b, inputs, targets)
print(per_example)
