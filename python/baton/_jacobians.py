"""``bt.jacfwd``, ``bt.jacrev`` (``bt.jacobian``) and ``bt.hessian``, built
from the other transformations as JAX builds them: ``jacfwd`` is ``vmap`` of
``jvp`` over the standard basis of the inputs, ``jacrev`` ``vmap`` of the
``vjp`` function over the standard basis of the outputs, ``hessian``
``jacfwd(jacrev(f))``. For an output leaf of shape S and an input leaf of
shape T the Jacobian block has shape S + T, nested as JAX nests them (output
structure outside, input structure inside).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from baton import tree
from baton._autodiff import jvp, vjp
from baton._baton import lax as _lax
from baton._subtrace import (
    dtype_of,
    dtype_str,
    fun_name,
    is_float,
    is_tracing,
    normalize_argnums,
    run_eagerly,
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


def _dyn_args(args: tuple, argnums: Any, what: str) -> tuple:
    nums, was_int = normalize_argnums(argnums, len(args), what)
    dyn = tuple(args[i] for i in nums)

    def partial_of(fun: Callable[..., Any], kwargs: dict) -> Callable[..., Any]:
        def partial(*dyn_args: Any) -> Any:
            full = list(args)
            for i, a in zip(nums, dyn_args):
                full[i] = a
            return fun(*full, **kwargs)

        return partial

    return dyn, was_int, partial_of


def _real_inputs(leaves: list, what: str) -> None:
    for x in leaves:
        d = dtype_of(x)
        if not is_float(d):
            raise TypeError(
                f"{what} requires real-valued inputs (input dtype that is a "
                f"sub-dtype of np.floating), but got {dtype_str(d)}. If you want "
                "to use Boolean- or integer-valued inputs, use vjp or set "
                "allow_int to True."
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
    (output structure, then input structure)."""
    if holomorphic:
        raise NotImplementedError("baton has no complex dtypes (holomorphic=True)")
    name = f"jacfwd({fun_name(fun)})"

    @functools.wraps(fun)
    def jac(*args: Any, **kwargs: Any) -> Any:
        if not is_tracing():
            return run_eagerly(jac, args, kwargs, name)
        dyn, was_int, partial_of = _dyn_args(args, argnums, "jacfwd")
        f = partial_of(fun, kwargs)
        in_leaves, in_tree = tree.flatten(dyn)
        _real_inputs(in_leaves, "jacfwd")
        basis, sizes = _basis(in_leaves)

        def push(*tangent_leaves: Any) -> Any:
            tangents = tree.unflatten(in_tree, tangent_leaves)
            r = jvp(f, dyn, tangents, has_aux=has_aux)
            return r[1] if not has_aux else (r[1], r[2])

        out_axes = (-1, None) if has_aux else -1
        pushed = vmap(push, out_axes=out_axes)(*basis)
        if has_aux:
            pushed, aux = pushed
        y_jac = tree.map(
            lambda t: _split_last(t, in_leaves, sizes, in_tree, was_int), pushed
        )
        return (y_jac, aux) if has_aux else y_jac

    return jac


def _split_last(
    t: Any, in_leaves: list, sizes: list, in_tree: Any, was_int: bool
) -> Any:
    """An output's stacked tangents (shape S + (N,)) split into one block of
    shape S + T per input leaf."""
    out_shape = shape_of(t)[:-1]
    blocks = []
    at = 0
    for x, size in zip(in_leaves, sizes):
        start = [0] * len(out_shape) + [at]
        limit = [*out_shape, at + size]
        b = _lax.slice(t, start, limit)
        blocks.append(_lax.reshape(b, (*out_shape, *shape_of(x))))
        at += size
    r = tree.unflatten(in_tree, blocks)
    return r[0] if was_int else r


def jacrev(
    fun: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by reverse mode (``vmap`` of the ``vjp``
    function over the standard basis of the outputs); shaped as
    :func:`jacfwd`'s."""
    if holomorphic:
        raise NotImplementedError("baton has no complex dtypes (holomorphic=True)")
    name = f"jacrev({fun_name(fun)})"

    @functools.wraps(fun)
    def jac(*args: Any, **kwargs: Any) -> Any:
        if not is_tracing():
            return run_eagerly(jac, args, kwargs, name)
        dyn, was_int, partial_of = _dyn_args(args, argnums, "jacrev")
        f = partial_of(fun, kwargs)
        in_leaves, in_tree = tree.flatten(dyn)
        if not allow_int:
            _real_inputs(in_leaves, "jacrev")
        r = vjp(f, *dyn, has_aux=has_aux)
        y, pullback = r[0], r[1]
        out_leaves, out_tree = tree.flatten(y)
        for o in out_leaves:
            if not is_float(dtype_of(o)):
                raise TypeError(
                    "jacrev requires real-valued outputs (output dtype that is a "
                    f"sub-dtype of np.floating), but got {dtype_str(dtype_of(o))}."
                )
        basis, sizes = _basis(out_leaves)

        def pull(*ct_leaves: Any) -> Any:
            return pullback(tree.unflatten(out_tree, ct_leaves))

        pulled = vmap(pull)(*basis)  # tuple over dyn args, leaves (M,) + T
        pulled_leaves = tree.leaves(pulled)
        per_out = []
        at = 0
        for o, size in zip(out_leaves, sizes):
            blocks = []
            for x, g in zip(in_leaves, pulled_leaves):
                start = [at] + [0] * len(shape_of(x))
                limit = [at + size, *shape_of(x)]
                b = _lax.slice(g, start, limit)
                blocks.append(_lax.reshape(b, (*shape_of(o), *shape_of(x))))
            rr = tree.unflatten(in_tree, blocks)
            per_out.append(rr[0] if was_int else rr)
            at += size
        y_jac = tree.unflatten(out_tree, per_out)
        return (y_jac, r[2]) if has_aux else y_jac

    return jac


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
