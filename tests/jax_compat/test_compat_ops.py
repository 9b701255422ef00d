"""Every op family under every transformation, baton against JAX.

For each program of `_programs.PROGRAMS` (elementwise, broadcasting,
reductions, shape ops, indexing and `.at[]`, dot_general/einsum,
conversions) and each transformation (the forward value under jit, grad,
value_and_grad, vjp, jvp, jacfwd, jacrev, hessian, vmap, vmap of grad, and
grad under jit with the int inputs traced), both libraries get the same
numpy inputs and must give the same pytree of arrays to float32 rounding.

Scalar losses are `sum(f(*x) * W)` with a fixed numpy weight W of f's
output shape, so that every output element matters with its own weight.
"""

from __future__ import annotations

import numpy as np
import pytest
from _jaxcompat import JAX, run_both
from _programs import PROGRAMS, Program


def _weights(prog: Program) -> np.ndarray:
    """The cotangent / loss weights: f's output shape, from JAX's eval_shape."""
    f = prog.build(JAX)
    out = JAX.api.eval_shape(f, *prog.floats, *prog.ints)
    rng = np.random.default_rng(len(prog.name) + 100)
    return rng.uniform(-1, 1, size=out.shape).astype(np.float32)


def _bound(L, prog: Program):
    """f of the float inputs only, the int inputs closed over as L's arrays:
    indices taken from them are traced in both libraries (JAX folds numpy
    ones into static indices, and baton, following numpy for static
    indices, raises IndexError for an out-of-range static `.at[]` index
    where JAX drops the update: DESIGN 3)."""
    f = prog.build(L)
    ints = tuple(L.np.asarray(i) for i in prog.ints)
    return lambda *floats: f(*floats, *ints)


def _loss(L, prog: Program, w: np.ndarray):
    g = _bound(L, prog)
    return lambda *floats: L.np.sum(g(*floats) * w)


def _argnums(prog: Program):
    n = len(prog.floats)
    return 0 if n == 1 else tuple(range(n))


def _tangents(prog: Program):
    rng = np.random.default_rng(7)
    return tuple(
        rng.uniform(-1, 1, size=np.shape(x)).astype(np.float32) for x in prog.floats
    )


def _t_value(L, prog, w):
    return L.api.jit(prog.build(L))(*prog.floats, *prog.ints)


def _t_grad(L, prog, w):
    return L.api.grad(_loss(L, prog, w), argnums=_argnums(prog))(*prog.floats)


def _t_value_and_grad(L, prog, w):
    vg = L.api.value_and_grad(_loss(L, prog, w), argnums=_argnums(prog))
    return vg(*prog.floats)


def _t_vjp(L, prog, w):
    out, vjp_fn = L.api.vjp(_bound(L, prog), *prog.floats)
    return out, vjp_fn(w)


def _t_jvp(L, prog, w):
    return L.api.jvp(_bound(L, prog), prog.floats, _tangents(prog))


def _t_jacfwd(L, prog, w):
    return L.api.jacfwd(_bound(L, prog), argnums=_argnums(prog))(*prog.floats)


def _t_jacrev(L, prog, w):
    return L.api.jacrev(_bound(L, prog), argnums=_argnums(prog))(*prog.floats)


def _t_hessian(L, prog, w):
    if not prog.hessian:
        pytest.skip("too large for a Hessian")
    return L.api.hessian(_loss(L, prog, w), argnums=0)(*prog.floats)


def _t_vmap(L, prog, w):
    return L.api.vmap(prog.build(L))(*prog.batched)


def _t_vmap_grad(L, prog, w):
    f = prog.build(L)

    def loss(*args):
        return L.np.sum(f(*args) * w)

    return L.api.vmap(L.api.grad(loss, argnums=_argnums(prog)))(*prog.batched)


def _t_jit_grad_traced_ints(L, prog, w):
    n = len(prog.floats)
    f = prog.build(L)

    def step(*args):
        def loss(*floats):
            return L.np.sum(f(*floats, *args[n:]) * w)

        return L.api.value_and_grad(loss, argnums=_argnums(prog))(*args[:n])

    return L.api.jit(step)(*prog.floats, *prog.ints)


TRANSFORMS = {
    "value": _t_value,
    "grad": _t_grad,
    "value_and_grad": _t_value_and_grad,
    "vjp": _t_vjp,
    "jvp": _t_jvp,
    "jacfwd": _t_jacfwd,
    "jacrev": _t_jacrev,
    "hessian": _t_hessian,
    "vmap": _t_vmap,
    "vmap_grad": _t_vmap_grad,
    "jit_grad": _t_jit_grad_traced_ints,
}


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_program(prog: Program, transform: str) -> None:
    w = _weights(prog)
    t = TRANSFORMS[transform]
    run_both(lambda L: lambda: t(L, prog, w))
