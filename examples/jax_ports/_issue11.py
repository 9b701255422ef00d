"""Stand-ins for JAX names baton gains in issue 11 (DESIGN 5.4), written with
baton's public API as JAX computes them, so that the ports here can already
run. A port imports them on a line marked `# JAX: <the original import>`;
tests/jax_compat/test_ports.py runs the original line under JAX."""

import baton.numpy as jnp
from baton import lax


def logsumexp(a, axis=None, keepdims=False):
    """jax.scipy.special.logsumexp (real inputs, no `b`/`return_sign`): the
    max is subtracted and stop-gradient'ed, as JAX does."""
    amax = lax.stop_gradient(jnp.max(a, axis=axis, keepdims=True))
    out = jnp.log(jnp.sum(jnp.exp(a - amax), axis=axis, keepdims=True)) + amax
    return out if keepdims else jnp.squeeze(out, axis=axis)
