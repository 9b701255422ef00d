"""``bt.jacfwd``, ``bt.jacrev`` (``bt.jacobian``) and ``bt.hessian``, built
from the other transformations as JAX builds them: ``jacfwd`` is ``vmap`` of
``jvp`` over the standard basis of the inputs, ``jacrev`` ``vmap`` of the
``vjp`` function over the standard basis of the outputs, ``hessian``
``jacfwd(jacrev(f))``. For an output leaf of shape S and an input leaf of
shape T the Jacobian block has shape S + T, nested as JAX nests them (output
structure outside, input structure inside).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from baton import tree
from baton._autodiff import jvp, vjp
from baton._baton import lax as _lax
from baton._eager_transform import transformation
from baton._subtrace import (
    argnums_partial,
    dtype_of,
    dtype_str,
    fun_name,
    is_float,
    check_holomorphic,
    shape_of,
)
from baton._vmap import vmap

__all__ = ["hessian", "jacfwd", "jacobian", "jacrev"]


# ---- Jacobians and the Hessian ----


def _basis(leaves: list) -> tuple[list, list[int]]:
    """The standard basis of the space of ``leaves``: for each leaf, an
    array of shape (N,) + leaf.shape, N the total size; and the sizes."""
    sizes = [int(np.prod(shape_of(x), dtype=np.int64)) for x in leaves]
    n = sum(sizes)
    rows = _lax.iota(np.int32, (n, n), 0)
    cols = _lax.iota(np.int32, (n, n), 1)
    eye = _lax.eq(rows, cols)
    out = []
    at = 0
    for x, size in zip(leaves, sizes):
        block = _lax.slice(eye, (0, at), (n, at + size))
        block = _lax.astype(block, dtype_of(x))
        out.append(_lax.reshape(block, (n, *shape_of(x))))
        at += size
    return out, sizes


def _blocks(t: Any, axis: int, sizes: list[int], shapes: list[tuple]) -> list:
    """``t`` cut along ``axis`` (0 or -1) into consecutive pieces of
    ``sizes``, piece k reshaped to ``shapes[k]``."""
    shape = list(shape_of(t))
    axis = axis % len(shape)
    blocks = []
    at = 0
    for size, block_shape in zip(sizes, shapes):
        start = [0] * len(shape)
        limit = list(shape)
        start[axis], limit[axis] = at, at + size
        blocks.append(_lax.reshape(_lax.slice(t, start, limit), tuple(block_shape)))
        at += size
    return blocks


def _real_inputs(leaves: list, what: str, holomorphic: bool = False) -> None:
    """TypeError (as JAX) for an integer or bool input leaf, and for a
    complex one unless ``holomorphic`` (which requires complex inputs)."""
    if holomorphic:
        check_holomorphic(leaves, what, "inputs")
        return
    for x in leaves:
        d = dtype_of(x)
        if not is_float(d):
            hint = (
                "For holomorphic differentiation, pass holomorphic=True."
                if np.dtype(d).kind == "c"
                else "If you want to use Boolean- or integer-valued inputs, use "
                "vjp or set allow_int to True."
            )
            raise TypeError(
                f"{what} requires real-valued inputs (input dtype that is a "
                f"sub-dtype of np.floating), but got {dtype_str(d)}. {hint}"
            )


def jacfwd(
    fun: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by forward mode (``vmap`` of ``jvp`` over the
    standard basis of the inputs): for an output leaf of shape S and an
    input leaf of shape T, a block of shape S + T, nested as JAX nests them
    (output structure, then input structure). With ``holomorphic=True``
    the inputs must be complex (the complex derivative of a holomorphic
    ``fun``)."""

    def jac(*args: Any, **kwargs: Any) -> Any:
        f, dyn, was_int = argnums_partial(fun, args, kwargs, argnums, "jacfwd")
        in_leaves, in_tree = tree.flatten(dyn)
        _real_inputs(in_leaves, "jacfwd", holomorphic)
        basis, sizes = _basis(in_leaves)

        def push(*tangent_leaves: Any) -> Any:
            tangents = tree.unflatten(in_tree, tangent_leaves)
            r = jvp(f, dyn, tangents, has_aux=has_aux)
            return r[1] if not has_aux else (r[1], r[2])

        out_axes = (-1, None) if has_aux else -1
        pushed = vmap(push, out_axes=out_axes)(*basis)
        if has_aux:
            pushed, aux = pushed

        def per_input(t: Any) -> Any:
            # An output's stacked tangents, shape S + (N,): one block of
            # shape S + T per input leaf.
            out_shape = shape_of(t)[:-1]
            shapes = [(*out_shape, *shape_of(x)) for x in in_leaves]
            r = tree.unflatten(in_tree, _blocks(t, -1, sizes, shapes))
            return r[0] if was_int else r

        y_jac = tree.map(per_input, pushed)
        return (y_jac, aux) if has_aux else y_jac

    return transformation(fun, f"jacfwd({fun_name(fun)})", jac)


def jacrev(
    fun: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by reverse mode (``vmap`` of the ``vjp``
    function over the standard basis of the outputs); shaped as
    :func:`jacfwd`'s (``holomorphic=True``: complex inputs and outputs)."""

    def jac(*args: Any, **kwargs: Any) -> Any:
        f, dyn, was_int = argnums_partial(fun, args, kwargs, argnums, "jacrev")
        in_leaves, in_tree = tree.flatten(dyn)
        if holomorphic:
            _real_inputs(in_leaves, "jacrev", True)
        elif not allow_int:
            _real_inputs(in_leaves, "jacrev")
        r = vjp(f, *dyn, has_aux=has_aux)
        y, pullback = r[0], r[1]
        out_leaves, out_tree = tree.flatten(y)
        if holomorphic:
            check_holomorphic(out_leaves, "jacrev", "outputs")
        for o in out_leaves if not holomorphic else ():
            if not is_float(dtype_of(o)):
                raise TypeError(
                    "jacrev requires real-valued outputs (output dtype that is a "
                    f"sub-dtype of np.floating), but got {dtype_str(dtype_of(o))}."
                )
        basis, sizes = _basis(out_leaves)

        def pull(*ct_leaves: Any) -> Any:
            return pullback(tree.unflatten(out_tree, ct_leaves))

        pulled = vmap(pull)(*basis)  # tuple over dyn args, leaves (M,) + T
        # Each input's stacked cotangents, shape (M,) + T: one block of
        # shape S + T per output leaf.
        per_in = [
            _blocks(g, 0, sizes, [(*shape_of(o), *shape_of(x)) for o in out_leaves])
            for x, g in zip(in_leaves, tree.leaves(pulled))
        ]
        per_out = []
        for k in range(len(out_leaves)):
            rr = tree.unflatten(in_tree, [blocks[k] for blocks in per_in])
            per_out.append(rr[0] if was_int else rr)
        y_jac = tree.unflatten(out_tree, per_out)
        return (y_jac, r[2]) if has_aux else y_jac

    return transformation(fun, f"jacrev({fun_name(fun)})", jac)


jacobian = jacrev


def hessian(
    fun: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """``jacfwd(jacrev(fun, argnums, has_aux), argnums, has_aux)``: for a
    scalar function of x with shape T, an array of shape T + T."""
    return jacfwd(
        jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
        argnums,
        has_aux=has_aux,
        holomorphic=holomorphic,
    )
