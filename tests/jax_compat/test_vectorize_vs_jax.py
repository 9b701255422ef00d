"""bt.numpy.vectorize against jax.numpy.vectorize (x64 off): scalar cores
and gufunc signatures (``"(n),(n)->()"`` as optax uses at import), loop
dimensions that broadcast, several outputs, errors."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

rng = np.random.default_rng(11)


def f32(*shape):
    return rng.uniform(-2, 2, shape).astype(np.float32)


def same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


CASES = [
    # signature, baton function, jax function, argument shapes
    ("(n),(n)->()", bnp.dot, jnp.dot, [(4, 3), (3,)]),
    ("(n),(n)->()", bnp.dot, jnp.dot, [(2, 1, 3), (5, 3)]),
    ("(n),(n)->()", bnp.dot, jnp.dot, [(3,), (3,)]),
    ("(m,n),(n)->(m)", bnp.matmul, jnp.matmul, [(2, 1, 5, 3), (4, 3)]),
    ("(m,n),(n,k)->(m,k)", bnp.matmul, jnp.matmul, [(3, 2, 4), (1, 4, 5)]),
    ("(n)->()", bnp.sum, jnp.sum, [(1, 6, 1, 4)]),
    ("(n)->(n)", bnp.cumsum, jnp.cumsum, [(2, 5)]),
    ("()->()", lambda x: x * 2 + 1, lambda x: x * 2 + 1, [(3, 2)]),
]


@pytest.mark.parametrize("sig,fb,fj,shapes", CASES, ids=[c[0] for c in CASES])
def test_signature_matches_jax(sig, fb, fj, shapes):
    args = [f32(*s) for s in shapes]
    want = jnp.vectorize(fj, signature=sig)(*args)
    same(bnp.vectorize(fb, signature=sig)(*args), want)
    same(bt.jit(bnp.vectorize(fb, signature=sig))(*args), want)


def test_several_outputs_and_size_one_loop_dimensions():
    def stats(x):
        return x.mean(), x - x.mean()

    a = f32(1, 3, 1, 5)
    sig = "(n)->(),(n)"
    same(bnp.vectorize(stats, signature=sig)(a), jnp.vectorize(stats, signature=sig)(a))


def test_grad_and_vmap_through_vectorize():
    a, b = f32(4, 3), f32(3)
    vb = bnp.vectorize(bnp.dot, signature="(n),(n)->()")
    vj = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
    same(bt.grad(lambda x: vb(x, b).sum())(a), jax.grad(lambda x: vj(x, b).sum())(a))
    c = f32(2, 3)
    same(
        bt.vmap(vb, in_axes=(None, 0))(a[0], c),
        jax.vmap(vj, in_axes=(None, 0))(a[0], c),
    )


def test_excluded_and_none_arguments():
    a = f32(4, 3)
    g = bnp.vectorize(
        lambda x, k, scale: bnp.sum(x) * len(k) * scale,
        excluded={1, "scale"},
        signature="(n)->()",
    )
    h = jnp.vectorize(
        lambda x, k, scale: jnp.sum(x) * len(k) * scale,
        excluded={1, "scale"},
        signature="(n)->()",
    )
    same(g(a, "ab", scale=2.0), h(a, "ab", scale=2.0))
    # None with a scalar core is passed through, as in JAX.
    same(bnp.vectorize(lambda x, y: x if y is None else y)(a, None), a)


def test_signature_errors():
    vb = bnp.vectorize(bnp.dot, signature="(n),(n)->()")
    with pytest.raises(ValueError, match="core dimension 'n'"):
        vb(f32(4, 3), f32(4))
    with pytest.raises(ValueError, match="fewer than the 1 core"):
        vb(np.float32(1), f32(3))
    with pytest.raises(ValueError, match="do not broadcast"):
        vb(f32(2, 3), f32(4, 3))
    with pytest.raises(ValueError, match="output 0 has shape"):
        bnp.vectorize(lambda x: x, signature="(n)->()")(f32(3))
    with pytest.raises(ValueError, match="has 2 outputs"):
        bnp.vectorize(lambda x: x.sum(), signature="(n)->(),()")(f32(3))
    with pytest.raises(TypeError, match="1 input"):
        bnp.vectorize(bnp.sum, signature="(n)->()")(f32(3), f32(3))
    with pytest.raises(TypeError, match="not in `excluded`"):
        bnp.vectorize(bnp.sum, signature="(n)->()")(f32(3), axis=0)
    for bad in ("n->()", "(n),(n)", "(n)->(m", "(n;m)->()"):
        with pytest.raises(ValueError, match="not a valid gufunc signature"):
            bnp.vectorize(bnp.sum, signature=bad)
