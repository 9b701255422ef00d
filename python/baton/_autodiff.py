"""Automatic differentiation: ``bt.grad``, ``value_and_grad``, ``vjp`` and
``jvp``, with JAX's names, arguments and results (DESIGN.md section 5.1;
the Jacobians are in ``_jacobians.py``).

Each traces the function into a program (``_subtrace.trace``) and
differentiates the program in C++ (``compiler/transforms/jvp.h``,
``vjp.h``): reverse mode splits it into a forward program that also returns
the residuals and a backward program that takes them, both inlined into the
trace that uses them, so under ``bt.jit`` the whole step is one program whose
buffer assignment frees each residual after its last use.

Where baton differs from JAX:
- Outside ``bt.jit`` a transformed function still traces: it runs through a
  fresh ``bt.jit`` of itself at every call (``_eager_transform.run_eagerly``), so
  Python control flow on traced values raises as under ``jit``.
- baton has no ``float0``: the cotangent (``vjp``, ``grad(allow_int=True)``)
  and the tangent output (``jvp``) of an integer or bool value are zeros of
  that value's own dtype; ``jvp`` accepts a tangent of the primal's shape in
  any dtype for integer primals and ignores it.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from baton import _batching_hook as hook
from baton import tree
from baton._baton import lax as _lax
from baton._eager_transform import run_eagerly, transformation
from baton._subtrace import (
    Tracer,
    argnums_partial,
    aval_of,
    check_args,
    check_holomorphic,
    check_outputs,
    dtype_of,
    dtype_str,
    fun_name,
    inline,
    is_array_like,
    is_float,
    is_inexact,
    is_python_scalar,
    is_tracing,
    normalize_argnums,
    shape_of,
    trace,
    transforms,
)

__all__ = ["grad", "jvp", "value_and_grad", "vjp"]


# ---- tracing a function for differentiation ----


def _flat_args(primals: tuple, what: str) -> tuple[list, Any]:
    """The leaves and structure of ``primals``, checked to be array-like."""
    leaves, in_tree = tree.flatten(tuple(primals))
    check_args(leaves, what)
    return leaves, in_tree


class _Flat:
    """``fun`` traced on the flat leaves of its arguments (from
    :func:`_flat_args`): the program's outputs are the leaves of ``fun``'s
    output, then (has_aux) those of its aux value."""

    def __init__(
        self,
        fun: Callable[..., Any],
        leaves: list,
        in_tree: Any,
        has_aux: bool,
        what: str,
        check_out: Callable[[Any], None] | None = None,
    ) -> None:
        self.leaves, self.in_tree = leaves, in_tree
        self.avals = [aval_of(x) for x in leaves]
        self.out_tree = None
        self.aux_tree = None
        self.n_out = 0

        def flat_fn(*tracers: Any) -> list:
            args = tree.unflatten(self.in_tree, tracers)
            r = fun(*args)
            if has_aux:
                if not isinstance(r, (tuple, list)) or len(r) != 2:
                    raise TypeError(
                        "expected function with aux output to return a two-element "
                        f"tuple, but got type {type(r)} with value {r!r}"
                    )
                r, aux = r
            if check_out is not None:
                check_out(r)
            out_leaves, self.out_tree = tree.flatten(r)
            check_outputs(out_leaves, what)
            self.n_out = len(out_leaves)
            if not has_aux:
                return out_leaves
            aux_leaves, self.aux_tree = tree.flatten(aux)
            check_outputs(aux_leaves, what + " (aux)")
            return out_leaves + aux_leaves

        self.traced = trace(flat_fn, self.avals, what, values=leaves)
        self.has_aux = has_aux
        self.operands = list(self.leaves) + list(self.traced.lifted)
        program = self.traced.program
        n = program.num_outputs
        self.main = (
            program.with_outputs(list(range(self.n_out))) if has_aux else program
        )
        self.aux_program = (
            program.with_outputs(list(range(self.n_out, n))) if has_aux else None
        )

    @property
    def out_weak(self) -> list:
        """Which of ``fun``'s output leaves (aux excluded) are weakly typed."""
        return self.traced.out_weak[: self.n_out]

    def wrt(self, explicit: list[bool]) -> list[bool]:
        """A mask over the arguments' leaves extended to the program's
        parameters: closed-over values are never differentiated."""
        return explicit + [False] * len(self.traced.lifted)

    def aux(self) -> Any:
        """The aux value, computed in the current trace (jit's common
        subexpression elimination merges it with the differentiated
        program's forward pass)."""
        if not self.has_aux:
            return None
        leaves = inline(
            self.aux_program, self.operands, self.traced.out_weak[self.n_out :]
        )
        return tree.unflatten(self.aux_tree, leaves)


def _differentiable(leaves: list, what: str, allow_int: bool) -> list[bool]:
    """Which leaves get derivatives; TypeError (as JAX) for integer ones
    unless allow_int."""
    mask = []
    for leaf in leaves:
        d = dtype_of(leaf)
        if not is_inexact(d) and not allow_int:
            raise TypeError(
                f"{what} requires real- or complex-valued inputs (input dtype that "
                f"is a sub-dtype of np.inexact), but got {dtype_str(d)}. If you "
                "want to use Boolean- or integer-valued inputs, use vjp or set "
                "allow_int to True."
            )
        mask.append(is_inexact(d))
    return mask


def _is_weak(x: Any) -> bool:
    """Whether ``x`` takes the dtype of where it is used (JAX's weak type)."""
    return is_python_scalar(x) or (isinstance(x, Tracer) and x.weak_type)


def _as_value(x: Any, shape: tuple, dtype: np.dtype, what: str) -> Any:
    """A user's cotangent / tangent leaf as a Tracer of (shape, dtype):
    Python scalars and weak values take the dtype, as JAX's weak types do."""
    if not is_array_like(x):
        raise TypeError(f"{what}: expected an array, got {type(x).__name__}")
    if shape_of(x) != tuple(shape):
        raise ValueError(
            f"{what}: shape {shape_of(x)} must be the same as the shape of the "
            f"corresponding primal value {tuple(shape)}"
        )
    d = dtype_of(x)
    if d != dtype and not _is_weak(x) and is_inexact(dtype):
        raise TypeError(
            f"{what}: dtype {dtype_str(d)} is not the expected dtype "
            f"{dtype_str(dtype)} of the corresponding primal value"
        )
    t = _lax.as_tracer(x) if not is_python_scalar(x) else _lax.full((), x, dtype)
    return t if np.dtype(t.dtype) == dtype else _lax.astype(t, dtype)


# ---- vjp ----


class _Backward:
    """What a pullback needs besides the residuals: the backward program and
    the primal structure (immutable; shared by the pullback and its jitted
    backward, which must not reference the residuals)."""

    def __init__(self, flat: _Flat, wrt: list[bool], bwd: Any) -> None:
        self.bwd = bwd
        self.out_tree = flat.out_tree
        self.out_avals = [(tuple(a[0]), np.dtype(a[1])) for a in flat.main.output_avals]
        self.in_tree = flat.in_tree
        self.in_avals = [(tuple(a[0]), np.dtype(a[1])) for a in flat.avals]
        self.in_weak = [a[2] for a in flat.avals]
        self.wrt = wrt

    def __call__(self, residuals: list, cts: list) -> tuple:
        """Runs inside a trace: cotangent leaves in, per-primal cotangents."""
        cts = [
            _as_value(c, s, d, "vjp pullback cotangent")
            for c, (s, d) in zip(cts, self.out_avals)
        ]
        weak = [w for w, m in zip(self.in_weak, self.wrt) if m]
        grads = inline(self.bwd, list(residuals) + cts, weak) if any(self.wrt) else []
        it = iter(grads)
        leaves = []
        for m, (shape, d) in zip(self.wrt, self.in_avals):
            # Leaves that are not differentiated: zeros of their own dtype
            # (baton has no float0).
            leaves.append(next(it) if m else _lax.zeros(shape, d))
        return tree.unflatten(self.in_tree, leaves)


class _Pullback:
    """The function ``vjp`` returns: the backward half of a vjp with the
    residuals it reads (Tracers while tracing; Arrays after an eager
    ``bt.vjp``, held here only, so they are freed when this object dies --
    by reference counting: nothing here forms a cycle)."""

    def __init__(self, backward: _Backward, residuals: list) -> None:
        self.backward = backward
        self.residuals = residuals
        self._jitted = None

    def __call__(self, *args: Any) -> tuple:
        if len(args) != 1:
            raise TypeError(
                "The function returned by `vjp` must be called with a single "
                f"argument (a cotangent like the primal output), got {len(args)}"
            )
        ct_leaves, ct_tree = tree.flatten(args[0])
        if ct_tree != self.backward.out_tree:
            raise TypeError(
                f"Tree structure of cotangent input {ct_tree}, does not match "
                f"structure of primal output {self.backward.out_tree}."
            )
        if is_tracing():
            return self.backward(self.residuals, ct_leaves)
        if self._jitted is None:
            from baton._jit import jit

            self._jitted = jit(self.backward)
        return self._jitted(list(self.residuals), list(ct_leaves))


def _vjp_traced(
    fun: Callable[..., Any],
    primals: tuple,
    has_aux: bool,
    what: str,
    allow_int: bool = True,
    check_out: Callable[[Any], None] | None = None,
) -> tuple[Any, _Pullback, Any]:
    """``(out, pullback, aux)`` of ``fun`` at ``primals`` in the current
    trace: the forward pass is inlined here, the pullback holds its
    residuals."""
    leaves, in_tree = _flat_args(primals, what)
    explicit = _differentiable(leaves, what, allow_int)  # before tracing, as JAX
    with hook.reverse_mode():  # custom_vmap calls refuse (_batching_hook)
        flat = _Flat(fun, leaves, in_tree, has_aux, what, check_out)
    fwd, bwd, residuals = transforms.vjp(flat.main, flat.wrt(explicit))
    outs = inline(fwd, flat.operands, flat.out_weak + [False] * len(residuals))
    out = tree.unflatten(flat.out_tree, outs[: flat.n_out])
    pullback = _Pullback(_Backward(flat, explicit, bwd), outs[flat.n_out :])
    return out, pullback, flat.aux()


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """``(out, vjp_fn)`` (``(out, vjp_fn, aux)`` with ``has_aux``):
    ``vjp_fn(cotangent)`` returns one cotangent per primal, as a tuple.

    Outside a trace the forward pass runs now and its residuals are kept as
    baton Arrays by ``vjp_fn`` (``bt.saved_residuals`` lists them); they are
    freed when ``vjp_fn`` is dropped. ``vjp_fn`` compiles its backward
    program on its first call and reuses it.
    """
    name = f"vjp({fun_name(fun)})"
    if is_tracing():
        round_ = hook.round_here()
        try:
            out, pb, aux = _vjp_traced(fun, primals, has_aux, name)
        except hook.NestedRuleError:
            # fun calls a collective over a vmap axis (or a custom_vmap
            # function): directly in a bt.vmap body the pullback is the
            # vmapped function's (baton/_transform_batching.py).
            batcher = hook.transform_batchers.get("vjp")
            if round_ is None or batcher is None:
                raise
            out, pb, aux = batcher(fun, has_aux, primals)
    else:
        holder: list = []

        def forward(*p: Any) -> tuple:
            o, pullback, a = _vjp_traced(fun, p, has_aux, name)
            holder.append(pullback)
            return o, a, pullback.residuals

        out, aux, residuals = run_eagerly(forward, primals, {}, name)
        pb = holder[0]
        pb.residuals = list(residuals)
    return (out, pb, aux) if has_aux else (out, pb)


# ---- grad ----


def _scalar_output_check(what: str, holomorphic: bool = False) -> Callable[[Any], None]:
    """A check that ``fun``'s output is a float scalar, or a complex one
    with ``holomorphic`` (TypeError, as JAX)."""

    def check(out: Any) -> None:
        leaves = tree.leaves(out)
        if len(leaves) != 1 or not is_array_like(leaves[0]) or out is not leaves[0]:
            raise TypeError(
                "Gradient only defined for scalar-output functions. Output was "
                f"{out!r}."
            )
        shape = shape_of(out)
        if shape != ():
            raise TypeError(
                "Gradient only defined for scalar-output functions. Output had "
                f"shape: {shape}."
            )
        d = dtype_of(out)
        if holomorphic:
            check_holomorphic([out], what, "outputs")
        elif np.dtype(d).kind == "c":
            raise TypeError(
                f"{what} requires real-valued outputs (output dtype that is a "
                f"sub-dtype of np.floating), but got {dtype_str(d)}. For "
                "holomorphic differentiation, pass holomorphic=True. For "
                "differentiation of non-holomorphic functions involving complex "
                "outputs, use jax.vjp directly."
            )
        elif not is_float(d):
            raise TypeError(
                f"{what} requires real-valued outputs (output dtype that is a "
                f"sub-dtype of np.floating), but got {dtype_str(d)}. For "
                "differentiation of functions with integer outputs, use jax.vjp "
                "directly."
            )

    return check


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: tuple = (),
) -> Callable[..., Any]:
    """``fun`` -> a function returning ``(fun(*args), gradient)`` (with
    ``has_aux``: ``((value, aux), gradient)``). The gradient is with respect
    to the positional arguments ``argnums`` (an int: that argument's
    gradient; a tuple: a tuple of them), each shaped like its argument.
    ``fun`` must return a float scalar; differentiating with respect to an
    integer or bool argument raises TypeError unless ``allow_int`` (then its
    gradient is zeros of its dtype)."""
    return _grad_impl(
        fun, argnums, has_aux, holomorphic, allow_int, reduce_axes, "value_and_grad"
    )


def grad(
    fun: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: tuple = (),
) -> Callable[..., Any]:
    """``fun`` -> a function returning its gradient with respect to the
    positional arguments ``argnums`` (``(gradient, aux)`` with ``has_aux``);
    see :func:`value_and_grad`. Works eagerly (tracing ``fun`` at each
    call) and under ``bt.jit``; nests with every transformation."""
    return _grad_impl(
        fun, argnums, has_aux, holomorphic, allow_int, reduce_axes, "grad"
    )


def _grad_impl(
    fun: Callable[..., Any],
    argnums: Any,
    has_aux: bool,
    holomorphic: bool,
    allow_int: bool,
    reduce_axes: tuple,
    kind: str,
) -> Callable[..., Any]:
    """``grad`` (kind "grad") or ``value_and_grad`` (kind
    "value_and_grad"); messages about ``fun`` itself say "grad", as JAX."""
    if reduce_axes:
        raise NotImplementedError(f"{kind}: reduce_axes is not supported")
    what = "grad"
    if not callable(fun):
        raise TypeError(f"{what}: expected a function, not {type(fun).__name__}")
    normalize_argnums(argnums, 1 << 30, what)  # type errors now, range at call

    def traced_call(*args: Any, **kwargs: Any) -> Any:
        round_ = hook.round_here()
        try:
            return grad_call(*args, **kwargs)
        except hook.NestedRuleError:
            # fun calls a custom_vmap function or a collective over a vmap
            # axis: directly in a bt.vmap body the gradient is taken of the
            # vmapped function instead (baton/_transform_batching.py).
            batcher = hook.transform_batchers.get("grad")
            if round_ is None or batcher is None:
                raise
        return batcher(
            fun, argnums, has_aux, holomorphic, allow_int, kind, round_,
            transformed, args, kwargs,
        )

    def grad_call(*args: Any, **kwargs: Any) -> Any:
        f, dyn, was_int = argnums_partial(fun, args, kwargs, argnums, what)
        if holomorphic:
            check_holomorphic(tree.leaves(dyn), what, "inputs")
        out, pb, aux = _vjp_traced(
            f, dyn, has_aux, what, allow_int, _scalar_output_check(what, holomorphic)
        )
        g = pb(_lax.full((), 1, out.dtype))
        g = g[0] if was_int else g
        if kind == "value_and_grad":
            return ((out, aux), g) if has_aux else (out, g)
        return (g, aux) if has_aux else g

    transformed = transformation(fun, f"{kind}({fun_name(fun)})", traced_call)
    return transformed


# ---- jvp ----


def _jvp_traced(
    fun: Callable[..., Any],
    primals: tuple,
    tangents: tuple,
    has_aux: bool,
    what: str,
) -> tuple:
    """``(out, tangent_out, aux)`` of ``fun`` at ``primals`` along
    ``tangents``, computed in the current trace."""
    p_leaves, p_tree = tree.flatten(tuple(primals))
    t_leaves, t_tree = tree.flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(
            "primal and tangent arguments to jvp must have the same tree "
            f"structure; primals have tree structure {p_tree} whereas tangents "
            f"have tree structure {t_tree}."
        )
    check_args(p_leaves, what)
    check_args(t_leaves, what)
    flat = _Flat(fun, p_leaves, p_tree, has_aux, what)
    has_tangent = [is_inexact(dtype_of(x)) for x in p_leaves]
    tans = []
    for p, t, m in zip(p_leaves, t_leaves, has_tangent):
        if shape_of(p) != shape_of(t):
            raise ValueError(
                "jvp called with different primal and tangent shapes; got "
                f"primal shape {shape_of(p)} and tangent shape {shape_of(t)}"
            )
        if not m:
            continue  # no tangent for integer and bool primals
        d = dtype_of(p)
        if dtype_of(t) != d and not _is_weak(t):
            raise TypeError(
                "primal and tangent arguments to jvp do not match; dtypes must "
                f"be equal. Got primal dtype {dtype_str(d)} and so expected "
                f"tangent dtype {dtype_str(d)}, but got tangent dtype "
                f"{dtype_str(dtype_of(t))} instead."
            )
        tans.append(_as_value(t, shape_of(p), d, what))
    program = transforms.jvp(flat.main, flat.wrt(has_tangent))
    weak = flat.out_weak
    outs = inline(program, flat.operands + tans, weak + weak)
    n = flat.n_out
    out = tree.unflatten(flat.out_tree, outs[:n])
    tan_out = tree.unflatten(flat.out_tree, outs[n:])
    return out, tan_out, flat.aux()


def jvp(
    fun: Callable[..., Any],
    primals: Any,
    tangents: Any,
    has_aux: bool = False,
) -> tuple:
    """``(fun(*primals), tangent of the output)``: forward mode, the
    directional derivative along ``tangents`` (a tuple or list like
    ``primals``, each tangent of its primal's shape and dtype); with
    ``has_aux``: ``(out, tangent_out, aux)``."""
    for what, v in (("primal", primals), ("tangent", tangents)):
        if not isinstance(v, (tuple, list)):
            raise TypeError(
                f"{what} arguments to jvp must be tuples or lists; found "
                f"{type(v).__name__}."
            )
    name = f"jvp({fun_name(fun)})"

    def run(p: tuple, t: tuple) -> tuple:
        round_ = hook.round_here()
        try:
            return _jvp_traced(fun, p, t, has_aux, name)
        except hook.NestedRuleError:
            # fun calls a custom_vmap function or a collective over a vmap
            # axis: directly in a bt.vmap body this is the jvp of the
            # vmapped function instead (baton/_transform_batching.py).
            batcher = hook.transform_batchers.get("jvp")
            if round_ is None or batcher is None:
                raise
        return batcher(fun, has_aux, round_, run, p, t)

    args = (tuple(primals), tuple(tangents))
    out, tan, aux = run(*args) if is_tracing() else run_eagerly(run, args, {}, name)
    return (out, tan, aux) if has_aux else (out, tan)
