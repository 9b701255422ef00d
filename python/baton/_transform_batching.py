"""``grad`` / ``value_and_grad`` / ``jvp`` / ``vjp`` / ``checkpoint`` /
``while_loop`` called directly in a ``bt.vmap`` body (or a shard_map body
in a trace, a vmap over each mesh axis) whose function reaches a call that
vmap batches by a rule: a ``custom_vmap`` function, or a collective over
the vmap's axis (``psum``, ``all_gather`` ...). Such a call cannot be
batched inside the transformation's nested trace (``_batching_hook``), so
the transformation itself becomes the ruled call: its rule computes it on
the vmapped function, in the trace enclosing the vmap, where the
collectives see every example -- the gradient, jvp or checkpoint of the
vmapped function, a loop over the batched carry; ``vjp`` computes its
outputs in the body and its pullback, a ruled call, on the vmapped
function (``jacrev`` / ``jacfwd`` / ``hessian`` are made of these). A transformation nested
in one of those (``grad`` of ``grad``) is handled likewise one vmap round
further in, and each enclosing vmap (a 2-D mesh) peels its own axis.

Semantics, as JAX's:

- Under ``bt.vmap``, and in a ``shard_map`` with ``check_vma=False``
  (collectives transposed as JAX transposes them there: ``psum`` to
  ``psum``): each example's gradient is its slice of the
  gradient of the sum over the examples of ``vmap(fun)``, every argument
  batched. ``vmap(grad(lambda y: psum(y * y, "i")), axis_name="i")`` is
  ``2 * n * y``, as in JAX.
- Inside a ``shard_map`` with ``check_vma=True`` (values that do not vary
  along a mesh axis are invariant, and an invariant value's cotangent is
  summed over the axis): an argument that does not vary along the axis
  (unbatched) is shared by the examples, so its gradient is the sum of
  theirs; an output that does not vary is counted once, one that varies is
  summed. The gradient of a ``pmean``'d loss with respect to replicated
  parameters is thus the gradient of the global loss on every device.
- ``jvp``: the jvp of the vmapped function, each primal and tangent
  batched where either is (forward mode is the same under both).
- ``vjp``: the pullback as ``grad``'s; a cotangent that differs between
  examples for an output that does not is summed over them (JAX refuses it
  under ``check_vma=True``).
- ``checkpoint``: the checkpoint (same policy) of the vmapped function.
- ``while_loop``: a carry leaf is batched where the initial value's is or
  where the body makes it so; a predicate that differs from example to
  example runs the loop while any holds, and an example whose predicate is
  false keeps its carry (its values still take part in the body's
  collectives), as JAX's vmap of a while_loop does. (A shard_map body's
  loop whose predicate varies between devices would hang in JAX.)

Values the function closes over from the vmap body (the batch it reads,
say) are found by tracing the function once with the rounds suspended
(``_batching_hook.suspended``: the Tracers of the body it captures) and
become arguments of the ruled call, so that vmap batches them; the rule
then runs the function with each of those Tracers, whose trace has
finished by then, standing for its batched value
(``transforms.substituting``, ``python/src/trace_frames.h``).

Cost: the function is traced once more to find what it captures, and the
vmapped function once per collective it calls, in each vmap round.
"""

from __future__ import annotations

from typing import Any, Callable

from baton import _batching_hook as hook
from baton import tree
from baton._baton import lax as _lax
from baton._subtrace import (
    Tracer,
    aval_of,
    fun_name,
    is_array_like,
    trace,
    transforms,
)
from baton._vmap import batched_call

__all__ = ["batch_checkpoint", "batch_grad", "batch_jvp", "batch_vjp", "batch_while"]


def _captures(
    fun: Callable, args: tuple, kwargs: dict, round_: hook.Round
) -> "_Captures":
    """The Tracers of ``round_``'s body trace that ``fun`` closes over
    (found by tracing ``fun(*args, **kwargs)`` with the rounds suspended,
    so that no ruled call stops it)."""
    leaves, in_tree = tree.flatten((args, kwargs))

    def probe(*ts: Any) -> list:
        a, k = tree.unflatten(in_tree, list(ts))
        with hook.suspended(), hook.derivative_defined():
            out = fun(*a, **k)
        return [x for x in tree.leaves(out) if is_array_like(x)]

    traced = trace(probe, [aval_of(x) for x in leaves], f"{fun_name(fun)} (captures)")
    captured = [
        v
        for v in traced.lifted
        if isinstance(v, Tracer) and transforms.value_key(v)[0] == round_.frame
    ]
    return _Captures(captured, round_)


class _Captures:
    """The Tracers of ``round_``'s body trace that a transformed function
    closes over (``captured``, of a trace that has finished when its rule
    runs), and how the function is run with values standing for them
    (see the module docstring)."""

    def __init__(self, captured: list, round_: hook.Round) -> None:
        self.captured = captured
        self.round = round_

    def call(self, fn: Callable, a: tuple, k: dict, values: list) -> Any:
        """``fn(*a, **k)`` with ``values`` standing for the captured."""
        with transforms.substituting(
            list(self.captured), [_lax.as_tracer(v) for v in values]
        ):
            return fn(*a, **k)

    def vmapped(
        self, fn: Callable, in_tree: Any, flags: list, leaves: list, values: list, n: int
    ) -> tuple:
        """``fn`` of the arguments ``in_tree`` unflattens from ``leaves``,
        vmapped over the round's axis (``batched_call``: the output and its
        batched flags), the captured standing for ``values``; ``flags``
        says which of ``leaves`` and then ``values`` are batched."""
        m = len(leaves)

        def one(*xs: Any) -> Any:
            a, k = tree.unflatten(in_tree, list(xs[:m]))
            return self.call(fn, a, k, list(xs[m:]))

        return batched_call(
            one,
            tuple(0 if b else None for b in flags),
            list(leaves) + list(values),
            self.round.axis_name,
            n,
            self.round.check_vma,
        )


def _broadcast(x: Any, n: int) -> Any:
    x = _lax.as_tracer(x)
    shape = tuple(x.shape)
    return _lax.broadcast_in_dim(x, (n, *shape), list(range(1, len(shape) + 1)))


def _first_example(out: Any, flags: Any) -> Any:
    """One example of a rule's output: a batched leaf's first slice."""
    return tree.map(lambda v, b: v[0] if b else v, out, flags)


def _ruled_call(
    value: tuple, rule: Callable, round_: hook.Round, plain: Callable, name: str
) -> Any:
    """``call_with_rule`` of a transformation: without a batched argument
    it runs as ``plain`` in a vmap without a name, and as the rule's first
    example in a named one (whose collectives must see the round's axis,
    ended by then)."""
    if round_.axis_name is None:
        body = plain
    else:
        def body(*v: Any) -> Any:
            flags = tree.map(lambda _: False, v)
            return _first_example(*rule(round_.size, list(flags), *v))

    return hook.call_with_rule(value, rule, body, name)


def batch_grad(
    fun: Callable,
    argnums: Any,
    has_aux: bool,
    holomorphic: bool,
    allow_int: bool,
    kind: str,
    round_: hook.Round,
    plain: Callable,
    args: tuple,
    kwargs: dict,
) -> Any:
    """``grad(fun, argnums, ...)(*args, **kwargs)`` (``kind`` "grad" or
    "value_and_grad") called directly in ``round_``'s vmap body, batched by
    its rule (see the module docstring); ``plain(*args, **kwargs)`` is the
    transformation itself."""
    from baton._autodiff import _scalar_output_check, grad

    captures = _captures(fun, args, kwargs, round_)
    shared = round_.check_vma  # values not varying along the axis are shared

    def rule(n: int, in_batched: list, a: tuple, k: dict, cap: list) -> tuple:
        a_flags, k_flags, cap_flags = in_batched
        if not shared:
            # vmap: each example differentiates its own copy of every argument.
            a, k = tree.map(
                lambda x, b: x if b else _broadcast(x, n), (a, k), (a_flags, k_flags)
            )
            a_flags, k_flags = tree.map(lambda _: True, (a_flags, k_flags))
        flags = tree.leaves((a_flags, k_flags)) + list(cap_flags)
        cell: dict = {}

        def summed(*a2: Any, **k2: Any) -> tuple:
            leaves, in_tree = tree.flatten((a2, k2))
            out, out_flags = captures.vmapped(fun, in_tree, flags, leaves, cap, n)
            value, aux = out if has_aux else (out, None)
            v_flags = out_flags[0] if has_aux else out_flags
            cell["flags"] = out_flags
            batched = any(tree.leaves(v_flags))
            check = _scalar_output_check("grad", holomorphic)
            check(value[0] if batched and value is tree.leaves(value)[0] else value)
            if batched:
                objective = _lax.sum(value)
            else:
                # Does not vary: counted once in a shard_map, once per
                # example (every one the same) under vmap.
                objective = value if shared else value * n
            return objective, (value, aux)

        g, (value, aux) = grad(
            summed, argnums, has_aux=True, holomorphic=holomorphic, allow_int=allow_int
        )(*a, **k)
        out_flags = cell["flags"]
        v_flags, aux_flags = out_flags if has_aux else (out_flags, None)
        g_flags = (
            a_flags[argnums]
            if isinstance(argnums, int)
            else tuple(a_flags[i] for i in argnums)
        )
        if kind == "value_and_grad":
            out = ((value, aux), g) if has_aux else (value, g)
            flags_out = ((v_flags, aux_flags), g_flags) if has_aux else (v_flags, g_flags)
        else:
            out = (g, aux) if has_aux else g
            flags_out = (g_flags, aux_flags) if has_aux else g_flags
        return out, flags_out

    return _ruled_call(
        (tuple(args), dict(kwargs), captures.captured),
        rule,
        round_,
        lambda a, k, cap: captures.call(plain, a, k, cap),
        f"{kind}({fun_name(fun)})",
    )


def batch_jvp(
    fun: Callable,
    has_aux: bool,
    round_: hook.Round,
    plain: Callable,
    primals: tuple,
    tangents: tuple,
) -> Any:
    """``jvp(fun, primals, tangents, has_aux)`` called directly in
    ``round_``'s vmap body, batched by its rule: the jvp of the vmapped
    function; ``plain(primals, tangents)`` is the transformation itself
    (returning ``(out, tangent_out, aux)``)."""
    from baton._autodiff import jvp

    captures = _captures(fun, tuple(primals), {}, round_)

    def rule(n: int, in_batched: list, p: tuple, t: tuple, cap: list) -> tuple:
        p_flags, t_flags, cap_flags = in_batched
        p_leaves, p_tree = tree.flatten((tuple(p), {}))
        t_leaves = tree.leaves(t)
        either = [a or b for a, b in zip(tree.leaves(p_flags), tree.leaves(t_flags))]
        def widened(xs: list, fs: Any) -> list:
            # A leaf batched in the primal or the tangent, in both.
            return [
                x if b or not e else _broadcast(x, n)
                for x, b, e in zip(xs, tree.leaves(fs), either)
            ]

        p2, t2 = widened(p_leaves, p_flags), widened(t_leaves, t_flags)
        flags = either + list(cap_flags)
        cell: dict = {}

        def g(*ps: Any) -> Any:
            out, cell["flags"] = captures.vmapped(fun, p_tree, flags, ps, cap, n)
            return out

        r = jvp(g, tuple(p2), tuple(t2), has_aux=has_aux)
        out_flags = cell["flags"]
        if has_aux:
            o_flags, aux_flags = out_flags
            return r, (o_flags, o_flags, aux_flags)
        return (*r, None), (out_flags, out_flags, None)

    return _ruled_call(
        (tuple(primals), tuple(tangents), captures.captured),
        rule,
        round_,
        lambda p, t, cap: captures.call(plain, (p, t), {}, cap),
        f"jvp({fun_name(fun)})",
    )


def batch_vjp(fun: Callable, has_aux: bool, primals: tuple) -> tuple:
    """``vjp(fun, *primals, has_aux)`` called directly in a vmap body whose
    function reaches a ruled call: ``(out, pullback, aux)``, the outputs
    computed by ``fun`` itself there (its ruled calls batched as any), and
    the pullback a ruled call of the vmap round it is called in: the vjp of
    the vmapped function at the batched primals, with the semantics of
    ``grad`` (module docstring)."""
    out = fun(*primals)
    out, aux = out if has_aux else (out, None)

    def pullback(ct: Any) -> tuple:
        round_ = hook.round_here()
        if round_ is None:
            raise hook.nested_error(
                "vjp",
                f"the pullback of vjp({fun_name(fun)}), whose function calls a "
                "collective over a vmap axis (or a custom_vmap function), is "
                "called inside a trace nested in the vmapped function: call it "
                "directly there (it is then computed on the vmapped function)",
            )
        return _vjp_pullback(fun, has_aux, round_, tuple(primals), ct)

    return out, pullback, aux


def _vjp_pullback(
    fun: Callable, has_aux: bool, round_: hook.Round, primals: tuple, ct: Any
) -> tuple:
    from baton._autodiff import vjp

    captures = _captures(fun, primals, {}, round_)
    shared = round_.check_vma

    def rule(n: int, in_batched: list, p: tuple, c: Any, cap: list) -> tuple:
        p_flags, c_flags, cap_flags = in_batched
        if not shared:
            p = tree.map(lambda x, b: x if b else _broadcast(x, n), p, p_flags)
            p_flags = tree.map(lambda _: True, p_flags)
        p_leaves, p_tree = tree.flatten((tuple(p), {}))
        flags = tree.leaves(p_flags) + list(cap_flags)
        cell: dict = {}

        def vmapped(*ps: Any) -> Any:
            out, cell["flags"] = captures.vmapped(fun, p_tree, flags, ps, cap, n)
            return out

        r = vjp(vmapped, *p_leaves, has_aux=has_aux)
        pullback_b = r[1]
        o_flags = cell["flags"][0] if has_aux else cell["flags"]

        def adjusted(c_leaf: Any, c_b: bool, o_b: bool) -> Any:
            if o_b and not c_b:
                return _broadcast(c_leaf, n)
            if c_b and not o_b:  # the examples' cotangents of a shared value
                return _lax.sum(c_leaf, [0])
            if not o_b and not shared:  # each example's seed, n of them
                return _lax.mul(c_leaf, n)
            return c_leaf

        c_tree = tree.structure(c)
        c2 = tree.unflatten(
            c_tree,
            [
                adjusted(x, bool(cb), bool(ob))
                for x, cb, ob in zip(
                    tree.leaves(c), tree.leaves(c_flags), tree.leaves(o_flags)
                )
            ],
        )
        cts = pullback_b(c2)
        (p_out, _) = tree.unflatten(p_tree, list(cts))
        return tuple(p_out), tuple(p_flags)

    return _ruled_call(
        (primals, ct, captures.captured),
        rule,
        round_,
        lambda p, c, cap: captures.call(
            lambda *a: vjp(fun, *a, has_aux=has_aux)[1](c), p, {}, cap
        ),
        f"vjp({fun_name(fun)}) pullback",
    )


def batch_checkpoint(
    fun: Callable,
    wrap: Callable,
    round_: hook.Round,
    args: list,
    kwargs: dict,
) -> Any:
    """``wrap(fun)(*args, **kwargs)`` (``wrap``: ``checkpoint`` with the
    call's policy) called directly in ``round_``'s vmap body, batched by
    its rule: the checkpoint of the vmapped function, so that what it
    recomputes stays as the user asked."""
    captures = _captures(fun, tuple(args), kwargs, round_)

    def rule(n: int, in_batched: list, a: tuple, k: dict, cap: list) -> tuple:
        a_flags, k_flags, cap_flags = in_batched
        flags = tree.leaves((a_flags, k_flags)) + list(cap_flags)
        leaves, in_tree = tree.flatten((a, k))
        m = len(leaves)
        cell: dict = {}

        def vmapped(*ls: Any) -> Any:  # the arguments' leaves, then captured
            out, cell["flags"] = captures.vmapped(
                fun, in_tree, flags, ls[:m], ls[m:], n
            )
            return out

        return wrap(vmapped)(*leaves, *cap), cell["flags"]

    return _ruled_call(
        (tuple(args), dict(kwargs), captures.captured),
        rule,
        round_,
        lambda a, k, cap: captures.call(wrap(fun), a, k, cap),
        f"checkpoint({fun_name(fun)})",
    )


class _Widen(BaseException):
    """A batched loop's carry must be batched in more leaves (``flags``):
    traced again. A BaseException, so that no ``except Exception`` of the
    user's loop body stops it."""

    def __init__(self, flags: list) -> None:
        super().__init__("while_loop carry widened")
        self.flags = flags


def batch_while(
    cond_fun: Callable, body_fun: Callable, init: Any, round_: hook.Round
) -> Any:
    """``while_loop(cond_fun, body_fun, init)`` called directly in
    ``round_``'s vmap body, batched by its rule: a loop over the batched
    carry in the enclosing trace, whose body and condition are those of
    the vmapped functions. A carry leaf is batched where ``init``'s is or
    where the body makes it so (found by tracing again); with a predicate
    that differs from example to example, the loop runs while any example's
    is true and an example whose predicate is false keeps its carry (its
    values still take part in the body's collectives), as JAX's vmap of a
    while_loop does."""
    from baton._control_flow import while_loop

    both = lambda c: (cond_fun(c), body_fun(c))  # noqa: E731
    captures = _captures(both, (init,), {}, round_)

    def rule(n: int, in_batched: list, init_: Any, cap: list) -> tuple:
        init_flags, cap_flags = in_batched
        leaves, in_tree = tree.flatten(((init_,), {}))
        start = [bool(b) for b in tree.leaves(init_flags)]

        def attempt(flags: list) -> list:
            all_flags = list(flags) + list(cap_flags)
            carry = [
                x if b or not f else _broadcast(x, n)
                for x, b, f in zip(leaves, start, flags)
            ]

            def predicate(c: list) -> tuple:
                return captures.vmapped(cond_fun, in_tree, all_flags, c, cap, n)

            def cond2(c: list) -> Any:
                p, p_batched = predicate(c)
                if not p_batched:
                    return p
                if not all(flags):
                    raise _Widen([True] * len(flags))
                return _lax.gt(_lax.max(_lax.convert_element_type(p, "int32")), 0)

            def body2(c: list) -> list:
                new, new_flags = captures.vmapped(
                    body_fun, in_tree, all_flags, c, cap, n
                )
                new_leaves, new_b = tree.leaves(new), tree.leaves(new_flags)
                if len(new_leaves) != len(flags):
                    raise TypeError(
                        "while_loop: body_fun output and input must have identical "
                        f"types; the carry has {len(flags)} leaves and body_fun "
                        f"returned {len(new_leaves)}"
                    )
                widened = [f or bool(b) for f, b in zip(flags, new_b)]
                if widened != flags:
                    raise _Widen(widened)
                new_leaves = [
                    x if b or not f else _broadcast(x, n)
                    for x, b, f in zip(new_leaves, new_b, flags)
                ]
                p, p_batched = predicate(c)
                if p_batched:  # an example whose loop has ended keeps its carry
                    new_leaves = [
                        _lax.select(
                            _lax.reshape(p, (n,) + (1,) * (len(x.shape) - 1)), x, old
                        )
                        for x, old in zip(new_leaves, c)
                    ]
                return new_leaves

            return while_loop(cond2, body2, carry)

        flags = start
        while True:  # each retry batches more leaves: at most one per leaf
            try:
                out = attempt(flags)
                break
            except _Widen as w:
                flags = w.flags
        (out_init,), _ = tree.unflatten(in_tree, out)
        (flag_init,), _ = tree.unflatten(in_tree, flags)
        return out_init, flag_init

    return _ruled_call(
        (init, captures.captured),
        rule,
        round_,
        lambda i, cap: captures.call(
            lambda v: while_loop(cond_fun, body_fun, v), (i,), {}, cap
        ),
        f"while_loop({fun_name(body_fun)})",
    )


hook.transform_batchers["grad"] = batch_grad
hook.transform_batchers["jvp"] = batch_jvp
hook.transform_batchers["vjp"] = batch_vjp
hook.transform_batchers["checkpoint"] = batch_checkpoint
hook.transform_batchers["while_loop"] = batch_while
