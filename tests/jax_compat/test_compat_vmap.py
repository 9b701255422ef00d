"""vmap's in_axes / out_axes / axis_size variants, baton against JAX, over
ops whose batching rules move axes (reductions, dot_general, gather,
scatter, dynamic slices, reshapes)."""

from __future__ import annotations

import numpy as np
import pytest
from _jaxcompat import rng_floats, run_both

A = rng_floats(1, (3, 4, 5))
B = rng_floats(2, (4, 5))
C = rng_floats(3, (5, 3))


def _body(L):
    np_ = L.np

    def f(x, y):  # x (4, 5) or so, y (4, 5)
        return np_.tanh(x) * y + np_.sum(x, axis=0, keepdims=True)

    return f


@pytest.mark.parametrize(
    "in_axes,out_axes,args",
    [
        ((0, None), 0, lambda: (A, B)),
        ((1, None), 0, lambda: (A.transpose(1, 0, 2), B)),
        ((-1, None), 0, lambda: (A.transpose(1, 2, 0), B)),
        ((0, 0), 1, lambda: (A, np.stack([B, B * 2, B - 1]))),
        ((2, None), -1, lambda: (A.transpose(1, 2, 0), B)),
        ((None, 0), 2, lambda: (B, np.stack([B, B * 2, B - 1]))),
    ],
    ids=["0_none", "1_none", "neg1_none", "0_0_out1", "2_none_outneg1", "none_0_out2"],
)
def test_in_axes_out_axes(in_axes, out_axes, args):
    run_both(
        lambda L: (
            lambda: L.api.vmap(_body(L), in_axes=in_axes, out_axes=out_axes)(*args())
        )
    )


def test_pytree_in_axes_and_outputs():
    tree = {"a": A, "b": B}

    def build(L):
        def f(t):
            return {"s": L.np.sum(t["a"] * t["b"]), "p": (t["a"] + 1, t["b"])}

        return lambda: L.api.vmap(
            f, in_axes=({"a": 0, "b": None},), out_axes={"s": 0, "p": (1, None)}
        )(tree)

    run_both(build)


def test_axis_size_with_no_mapped_inputs():
    run_both(
        lambda L: lambda: L.api.vmap(lambda x: x * 2, in_axes=None, axis_size=3)(B)
    )


def test_out_axes_none_for_unbatched_output():
    run_both(
        lambda L: (
            lambda: L.api.vmap(
                lambda x, y: (x * 2, y + 1), in_axes=(0, None), out_axes=(0, None)
            )(A, B)
        )
    )


@pytest.mark.parametrize(
    "case",
    [
        "dot_batched_lhs",
        "dot_batched_rhs_axis1",
        "einsum",
        "reduce_axis",
        "reshape",
        "transpose",
    ],
)
def test_batching_moves_axes(case):
    def build(L):
        np_, api = L.np, L.api
        if case == "dot_batched_lhs":
            return lambda: api.vmap(lambda x: x @ C)(A)
        if case == "dot_batched_rhs_axis1":
            return lambda: api.vmap(lambda m: B @ m, in_axes=1)(np.stack([C, C * 2], 1))
        if case == "einsum":
            return lambda: api.vmap(
                lambda x, y: np_.einsum("ij,jk->ik", x, y), in_axes=(0, None)
            )(A, C)
        if case == "reduce_axis":
            return lambda: api.vmap(
                lambda x: (np_.max(x, axis=1), np_.mean(x, axis=0)), in_axes=2
            )(A)
        if case == "reshape":
            return lambda: api.vmap(lambda x: x.reshape(5, -1)[::2], in_axes=1)(A)
        return lambda: api.vmap(lambda x: np_.transpose(x) @ C.T, in_axes=1)(A)

    run_both(build)


def test_batched_indices_gather_and_scatter():
    idx = np.array([[0, 2], [3, 3], [1, 0]], np.int32)  # one index pair per lane
    vals = rng_floats(4, (3, 2, 5))

    def build(L):
        api, b = L.api, L.np.asarray(B)
        return lambda: (
            api.vmap(lambda x, i: x[i])(A, idx),  # batched operand and indices
            api.vmap(lambda i: b[i])(idx),  # batched indices only
            api.vmap(lambda x, i, v: x.at[i].add(v))(A, idx, vals),
            api.vmap(lambda i, v: b.at[i].set(v))(idx, vals),
            api.vmap(lambda x, i: x.at[i].max(0.0), in_axes=(None, 0))(b, idx),
        )

    run_both(build)


def test_batched_dynamic_slice_and_update():
    starts = np.array([0, 2, 9], np.int32)  # the last one clamps
    upd = rng_floats(5, (3, 2, 5))

    def build(L):
        lax, api = L.lax, L.api
        return lambda: (
            api.vmap(lambda s: lax.dynamic_slice(B, (s, 0), (2, 5)))(starts),
            api.vmap(lambda x, s, u: lax.dynamic_update_slice(x, u, (s, 0)))(
                A, starts, upd
            ),
        )

    run_both(build)


def test_vmap_under_jit_with_closure_over_traced_value():
    def build(L):
        api = L.api

        @api.jit
        def f(a, b):
            return api.vmap(lambda row: L.np.sum(row * b))(a)

        return lambda: f(A[0], B[0])

    run_both(build)
