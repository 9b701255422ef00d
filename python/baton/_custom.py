"""``bt.custom_jvp`` and ``bt.custom_vjp``: functions with user-defined
derivative rules, as in JAX (``defjvp`` / ``defjvps``, ``defvjp``,
``nondiff_argnums``).

Called outside a trace, the function just runs. Inside one, the function
and its rules are traced into programs and emitted as one call group
(``op_attrs.h`` CallAttrs kCustomJvp / kCustomVjp): the transformations use
the rules (``compiler/transforms/``), everything else the body.

The body and the rules all take the call's operands: the differentiated
arguments, then every value that the function or its rules close over
(outer Tracers, baton Arrays; see ``_subtrace``). Beyond JAX, which raises
for it, derivatives with respect to closed-over traced values are computed
from the body itself (forward mode: its JVP with respect to them is added
to the rule's tangents; reverse mode: the backward rule recomputes the body
from the primal values and takes its VJP with respect to them); where the
body has an op without a derivative rule, they are zero.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import Any, Callable

from baton import _batching_hook as hook
from baton import tree
from baton._baton import lax as _lax
from baton._subtrace import (
    Traced,
    Tracer,
    aval_of,
    check_args,
    check_outputs,
    dtype_of,
    dtype_str,
    fun_name,
    inline,
    int_tuple,
    is_array_like,
    is_float,
    is_python_scalar,
    is_tracing,
    replaced,
    resolve_kwargs,
    shape_of,
    trace,
    transforms,
    unique_lifted,
)

__all__ = ["custom_jvp", "custom_vjp"]


# The custom functions whose rules are being traced on this thread. A rule
# that calls its own function (``f(x)`` inside ``f``'s jvp rule, the usual
# way to get the primal output) runs the plain function there: a call cannot
# contain itself, and the rule only needs its values.
_in_rules = threading.local()


def _rules_active() -> set:
    """The ids of the custom functions whose rules this thread is tracing."""
    s = getattr(_in_rules, "ids", None)
    if s is None:
        s = _in_rules.ids = set()
    return s


@contextlib.contextmanager
def _tracing_rules(f: Any) -> Iterator[None]:
    """Marks ``f``'s rules as being traced (see ``_in_rules``)."""
    _rules_active().add(id(f))
    try:
        yield
    finally:
        _rules_active().discard(id(f))


class _Split:
    """A call's positional arguments split into the differentiated ones
    (flattened) and the nondiff_argnums ones (passed as they are)."""

    def __init__(self, args: tuple, nondiff: tuple[int, ...], what: str) -> None:
        n = len(args)
        self.nondiff = sorted({i + n if i < 0 else i for i in nondiff})
        for i in self.nondiff:
            if not 0 <= i < n:
                raise ValueError(
                    f"{what}: nondiff_argnums contains {i}, but the function was "
                    f"called with {n} positional arguments"
                )
        self.args = args
        self.diff_idx = [i for i in range(n) if i not in self.nondiff]
        self.diff = tuple(args[i] for i in self.diff_idx)
        self.leaves, self.in_tree = tree.flatten(self.diff)
        check_args(self.leaves, what)
        self.avals = [aval_of(x) for x in self.leaves]

    def nondiff_args(self) -> list:
        """The nondiff_argnums arguments, in order."""
        return [self.args[i] for i in self.nondiff]

    def full(self, diff_values: Any) -> list:
        """All positional arguments, with ``diff_values`` for the
        differentiated ones."""
        return replaced(self.args, self.diff_idx, diff_values)

    def unflatten(self, leaves: Any) -> tuple:
        """Flat leaves back in the structure of the differentiated arguments."""
        return tree.unflatten(self.in_tree, list(leaves))

    def call(self, fn: Callable[..., Any], leaves: Any) -> Any:
        """``fn`` on all the arguments, the differentiated ones from flat
        ``leaves``."""
        return fn(*self.full(self.unflatten(leaves)))


def _out_leaves(out: Any, what: str) -> tuple[list, Any]:
    """The leaves and structure of a function's or rule's output, checked to
    be array-like."""
    leaves, treedef = tree.flatten(out)
    check_outputs(leaves, what)
    return leaves, treedef


def _conform(
    x: Any,
    aval: tuple,
    what: str,
    shape_error: type = ValueError,
    tangent: bool = False,
) -> Any:
    """A rule's output leaf as a value of ``aval``'s shape and dtype (weak
    values and Python scalars convert; anything else must match).

    ``shape_error``: the class raised for a shape mismatch (JAX raises
    TypeError for a custom_jvp rule's outputs, ValueError for a custom_vjp
    bwd rule's). ``tangent``: ``x`` is a tangent of a floating-point (or
    complex) primal, so an integer or boolean ``x`` (a Python int
    included) is a TypeError, as in JAX: it has no tangent type."""
    shape, dtype = tuple(aval[0]), aval[1]
    if not is_array_like(x):
        raise TypeError(f"{what}: expected an array, got {type(x).__name__}")
    if shape_of(x) != shape:
        raise shape_error(
            f"{what}: got shape {shape_of(x)}, expected {shape} (the shape of the "
            "corresponding primal value); return a value of that shape"
        )
    inexact = is_float(dtype) or str(dtype).startswith("complex")
    if tangent and inexact and dtype_of(x).kind in "biu":
        raise TypeError(
            f"{what}: got dtype {dtype_str(dtype_of(x))}, expected {dtype} (the "
            "tangent type of the corresponding primal value); an integer or "
            f"boolean tangent is not allowed for a {dtype} primal, return a "
            f"{dtype} tangent"
        )
    t = _lax.full((), x, dtype) if is_python_scalar(x) else _lax.as_tracer(x)
    if dtype_str(t.dtype) != dtype:
        weak = isinstance(x, Tracer) and x.weak_type
        if not weak and is_float(dtype_of(t)) and is_float(dtype):
            raise TypeError(
                f"{what}: got dtype {dtype_of(t)}, expected {dtype} (the dtype of "
                "the corresponding primal value)"
            )
        t = _lax.astype(t, dtype)
    return t


class _CustomFunction:
    """What ``custom_jvp`` and ``custom_vjp`` share: the wrapped function,
    its ``nondiff_argnums``, method binding, and a call that runs ``fun``
    outside a trace (or inside its own rules) and otherwise emits the custom
    call (``_emit``, per subclass)."""

    kind = ""  # "custom_jvp" / "custom_vjp": the call's kind, in messages

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Any = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = int_tuple(nondiff_argnums)

    def _missing_rules(self, name: str) -> str | None:
        """The AttributeError message if the rules are not defined yet, else
        None."""
        raise NotImplementedError

    def _emit(self, s: _Split, body: Traced, out_tree: Any, name: str) -> list:
        """The call's outputs in the current trace, given the traced body."""
        raise NotImplementedError

    def __getattr__(self, name: str) -> Any:
        # Unknown attributes come from the wrapped function, as in JAX (so
        # ``@f.def_vmap`` reaches a custom_vmap function inside a custom_vjp).
        fun = self.__dict__.get("fun")
        if fun is None:
            raise AttributeError(name)
        return getattr(fun, name)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = fun_name(self.fun)
        missing = self._missing_rules(name)
        if missing is not None:
            raise AttributeError(missing)
        what = f"{self.kind}({name})"
        args = resolve_kwargs(self.fun, args, kwargs, what)
        if not is_tracing() or id(self) in _rules_active():
            return self.fun(*args)
        in_vmap_body = hook.round_here() is not None
        try:
            # Reverse mode uses the rules: the body is not differentiated.
            with hook.derivative_defined():
                return self._traced_call(args, name, what)
        except hook.CollectiveNestedError:
            raise
        except hook.NestedRuleError:
            # The body calls a custom_vmap function: under bt.vmap this call
            # is batched in Python (_custom_batching), as JAX batches it.
            if not in_vmap_body or not _batchers:
                raise
        return self._batched_call(args, name, what)

    def _batched_call(self, args: tuple, name: str, what: str) -> Any:
        """This call under bt.vmap, batched by the rule that
        ``_custom_batching`` registered (see ``_batching_hook``)."""
        s = _Split(args, self.nondiff_argnums, what)
        for x in tree.leaves(s.nondiff_args()):
            if isinstance(x, Tracer):
                raise NotImplementedError(
                    f"{what}: under bt.vmap, a function whose body calls a "
                    "custom_vmap function is batched in Python, which needs its "
                    "nondiff_argnums arguments to be static (not traced) values"
                )
        rule = _batchers[0](self, s.nondiff_args(), s.diff_idx)

        def body(*diff: Any) -> Any:
            return self(*s.full(diff))

        got = hook.intercept(s.leaves, s.in_tree, rule, body, what)
        if got is None:  # not reached: this runs in a vmap body
            return self.fun(*args)
        out_tree, outs = got
        return tree.unflatten(out_tree, outs)

    def _traced_call(self, args: tuple, name: str, what: str) -> Any:
        """This call emitted into the current trace as a custom call."""
        s = _Split(args, self.nondiff_argnums, what)
        cell: dict = {}

        def body_fn(*ts: Any) -> list:
            leaves, cell["out_tree"] = _out_leaves(s.call(self.fun, ts), what)
            return leaves

        # values: the arguments the parameters stand for, so that outside
        # bt.jit (an eager grad / jvp binds its arguments) the function and
        # its rules may branch on them in Python, as JAX's eager
        # differentiation evaluates them on concrete values.
        body = trace(body_fn, s.avals, name, values=s.leaves)
        out_tree = cell["out_tree"]
        return tree.unflatten(out_tree, self._emit(s, body, out_tree, name))


# How a custom_jvp / custom_vjp function whose body has a custom_vmap call
# is batched: registered by baton._custom_batching (a layer above), called
# as batcher(f, nondiff_args, diff_positions) -> vmap rule.
_batchers: list = []


def register_batcher(batcher: Callable[..., Any]) -> None:
    """Sets how custom functions with custom_vmap calls are batched."""
    _batchers[:] = [batcher]


class _Operands:
    """A custom call's operands: the differentiated leaves, then the union of
    the values the body and its rules close over (``lifted``, float Tracers
    of them marked in ``mask``: derivatives can flow into those, never into
    Arrays); and the body as a program over all of them."""

    def __init__(self, s: _Split, body: Traced, rules: list[Traced], name: str) -> None:
        self.lifted, (pb, *self.rule_pos) = unique_lifted(
            body.lifted, *(r.lifted for r in rules)
        )
        self.n = n = len(s.leaves)
        self.nl = len(self.lifted)
        self.params = s.avals + [aval_of(v) for v in self.lifted]
        self.values = list(s.leaves) + self.lifted
        self.mask = [
            isinstance(v, Tracer) and is_float(dtype_of(v)) for v in self.lifted
        ]
        pick = list(range(n)) + [n + p for p in pb]

        def body_fn(*ps: Any) -> list:
            return inline(body.program, [ps[i] for i in pick])

        self.body = trace(body_fn, self.params, name).program

    def closure_derivative(self, transform: Callable[..., Any]) -> Any:
        """``transform`` (``transforms.jvp`` / ``vjp``) of the body with
        respect to the closed-over values in ``mask``; None when there are
        none, or the body has an op without a derivative rule (then their
        derivatives are zero)."""
        if not any(self.mask):
            return None
        try:
            return transform(self.body, [False] * self.n + self.mask)
        except NotImplementedError:
            return None


# ---- custom_jvp ----


class custom_jvp(_CustomFunction):
    """A function with a custom JVP rule (``@bt.custom_jvp``, then
    ``@f.defjvp`` on ``jvp(primals, tangents) -> (out, tangent_out)``, or
    ``f.defjvps(*per_argument_rules)``). ``nondiff_argnums``: arguments
    passed to ``jvp`` first, as they are, and not differentiated. Reverse
    mode differentiates the rule (it must be linear in the tangents)."""

    kind = "custom_jvp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Any = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Any:
        """Sets the rule ``jvp(*nondiff, primals, tangents) -> (out,
        tangent_out)`` and returns it (so it can be used as a decorator)."""
        if symbolic_zeros:
            raise NotImplementedError("custom_jvp: symbolic_zeros is not supported")
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """One rule per argument, ``rule(tangent, primal_out, *primals)``; the
        output tangent is their sum (None: the argument has no effect)."""
        if self.nondiff_argnums:
            raise TypeError("Can't use defjvps with nondiff_argnums.")

        def jvp(primals: tuple, tangents: tuple) -> tuple:
            out = self.fun(*primals)
            contribs = [
                rule(t, out, *primals)
                for rule, t in zip(jvps, tangents)
                if rule is not None
            ]
            if not contribs:
                return out, tree.map(lambda o: o * 0, out)
            return out, functools.reduce(
                lambda a, b: tree.map(lambda x, y: x + y, a, b), contribs
            )

        self.defjvp(jvp)

    def _missing_rules(self, name: str) -> str | None:
        if self.jvp is not None:
            return None
        return f"No JVP defined for custom_jvp function {name} using defjvp."

    def _emit(self, s: _Split, body: Traced, out_tree: Any, name: str) -> list:
        what = f"custom_jvp({name})"
        n = len(s.leaves)
        out_avals = body.program.output_avals
        n_out = len(out_avals)

        def rule_fn(*ts: Any) -> list:
            primals, tangents = s.unflatten(ts[:n]), s.unflatten(ts[n:])
            r = self.jvp(*s.nondiff_args(), primals, tangents)
            if not isinstance(r, (tuple, list)) or len(r) != 2:
                raise TypeError(
                    f"Custom JVP rule {fun_name(self.jvp)} for function {name} must "
                    "produce a pair (list or tuple of length two) representing "
                    f"primal and tangent outputs, but got {r!r}."
                )
            out, tan = r
            out_leaves, t1 = _out_leaves(out, what)
            tan_leaves, t2 = _out_leaves(tan, what)
            if t1 != out_tree or t2 != out_tree:
                raise TypeError(
                    f"Custom JVP rule {fun_name(self.jvp)} for function {name} must "
                    "produce primal and tangent outputs with equal container "
                    f"(pytree) structures and equal to the structure of the "
                    f"function's output {out_tree}, but got {t1} and {t2}."
                )
            # TypeError for a shape (or dtype) mismatch, as JAX raises.
            outs = [
                _conform(x, a, what + " primal output", TypeError)
                for x, a in zip(out_leaves, out_avals)
            ]
            tans = [
                _conform(x, a, what + " tangent output", TypeError, tangent=True)
                for x, a in zip(tan_leaves, out_avals)
            ]
            return outs + tans

        with _tracing_rules(self):
            # The primals are bound to the call's arguments (concrete where
            # those are, see __call__); the tangents stand for nothing known.
            rule = trace(
                rule_fn,
                s.avals + s.avals,
                f"{name} jvp rule",
                values=list(s.leaves) + [None] * n,
            )
        ops = _Operands(s, body, [rule], name)
        (pr,) = ops.rule_pos
        nl = ops.nl
        # Tangents of closed-over traced values: the body's own JVP with
        # respect to them, added to the rule's output tangents.
        closure_jvp = ops.closure_derivative(transforms.jvp)

        def full_rule(*ps: Any) -> list:
            prim, tan = list(ps[: n + nl]), list(ps[n + nl :])
            r = inline(rule.program, prim[:n] + tan[:n] + [prim[n + p] for p in pr])
            outs, tans = r[:n_out], r[n_out:]
            if closure_jvp is not None:
                lt = [t for t, m in zip(tan[n:], ops.mask) if m]
                extra = inline(closure_jvp, prim + lt)[n_out:]
                tans = [
                    t + e if is_float(dtype_of(t)) else t for t, e in zip(tans, extra)
                ]
            return outs + tans

        rule2 = trace(full_rule, ops.params + ops.params, f"{name} jvp rule").program
        return transforms.emit_call(
            "custom_jvp",
            ops.values,
            body=ops.body,
            rule=rule2,
            name=name,
            weak=body.out_weak,
        )


# ---- custom_vjp ----


class custom_vjp(_CustomFunction):
    """A function with a custom VJP rule (``@bt.custom_vjp``, then
    ``f.defvjp(fwd, bwd)``): ``fwd(*args) -> (out, residuals)`` and
    ``bwd(residuals, cotangent) -> tuple`` with one cotangent per argument
    (None for zero). ``nondiff_argnums``: arguments not differentiated,
    passed to ``bwd`` first. Forward mode (``jvp``) of a custom_vjp function
    raises TypeError, as in JAX."""

    kind = "custom_vjp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Any = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(
        self,
        fwd: Callable[..., Any],
        bwd: Callable[..., Any],
        symbolic_zeros: bool = False,
        optimize_remat: bool = False,
    ) -> None:
        """Sets the rules ``fwd(*args) -> (out, residuals)`` and
        ``bwd(*nondiff, residuals, cotangent) -> tuple`` of cotangents."""
        if symbolic_zeros:
            raise NotImplementedError("custom_vjp: symbolic_zeros is not supported")
        self.fwd = fwd
        self.bwd = bwd

    def _missing_rules(self, name: str) -> str | None:
        if self.fwd is not None:
            return None
        return f"No VJP defined for custom_vjp function {name} using defvjp."

    def _emit(self, s: _Split, body: Traced, out_tree: Any, name: str) -> list:
        what = f"custom_vjp({name})"
        n = len(s.leaves)
        out_avals = body.program.output_avals
        n_out = len(out_avals)
        cell: dict = {}

        def fwd_fn(*ts: Any) -> list:
            r = s.call(self.fwd, ts)
            if not isinstance(r, (tuple, list)) or len(r) != 2:
                raise TypeError(
                    f"Custom VJP fwd rule {fun_name(self.fwd)} for function {name} "
                    "must produce a pair (list or tuple of length two) where the "
                    "first element represents the primal output (equal to the "
                    "output of the custom_vjp-decorated function) and the second "
                    f"element represents residuals, but got {r!r}."
                )
            out, res = r
            out_leaves, t = _out_leaves(out, what)
            if t != out_tree:
                raise TypeError(
                    f"Custom VJP fwd rule {fun_name(self.fwd)} for function {name} "
                    "must produce a pair where the first element has the same "
                    f"structure as the function's output {out_tree}, but got {t}."
                )
            res_leaves, cell["res_tree"] = _out_leaves(res, what + " residuals")
            outs = [
                _conform(x, a, what + " fwd output")
                for x, a in zip(out_leaves, out_avals)
            ]
            return outs + res_leaves

        with _tracing_rules(self):
            fwd = trace(fwd_fn, s.avals, f"{name} fwd rule", values=s.leaves)
        res_tree = cell["res_tree"]
        res_avals = [
            (tuple(a[0]), a[1], w, None)
            for a, w in zip(fwd.program.output_avals[n_out:], fwd.out_weak[n_out:])
        ]
        ct_avals = [(tuple(a[0]), a[1], False, None) for a in out_avals]
        r = len(res_avals)

        def bwd_fn(*ts: Any) -> list:
            res = tree.unflatten(res_tree, list(ts[:r]))
            ct = tree.unflatten(out_tree, list(ts[r:]))
            g = self.bwd(*s.nondiff_args(), res, ct)
            return [
                _conform(x, a, what + " bwd output")
                for x, a in zip(_bwd_leaves(g, s, fun_name(self.bwd)), s.avals)
            ]

        with _tracing_rules(self):
            bwd = trace(bwd_fn, res_avals + ct_avals, f"{name} bwd rule")
        ops = _Operands(s, body, [fwd, bwd], name)
        pf, pw = ops.rule_pos
        # Cotangents of closed-over traced values: the backward rule
        # recomputes the body from the primal values (passed on as
        # residuals) and takes its VJP with respect to them; unused, jit's
        # dead-code elimination drops it.
        closure_vjp = ops.closure_derivative(transforms.vjp)
        nw = len(pw)
        n_prim = n + ops.nl if closure_vjp is not None else 0

        def fwd_rule(*ps: Any) -> list:
            outs = inline(fwd.program, list(ps[:n]) + [ps[n + p] for p in pf])
            extra = [ps[n + p] for p in pw]
            if closure_vjp is not None:
                extra += list(ps)
            return list(outs) + extra

        fwd_program = trace(fwd_rule, ops.params, f"{name} fwd rule").program
        bwd_in = [
            (tuple(a[0]), a[1], False, None) for a in fwd_program.output_avals[n_out:]
        ]

        def bwd_rule(*ps: Any) -> list:
            res = list(ps[:r])
            w = list(ps[r : r + nw])
            prim = list(ps[r + nw : r + nw + n_prim])
            ct = list(ps[r + nw + n_prim :])
            g = inline(bwd.program, res + ct + w)
            lz = [_lax.zeros(a[0], a[1]) for a in ops.params[n:]]
            if closure_vjp is not None:
                cfwd, cbwd, _ = closure_vjp
                fo = inline(cfwd, prim)
                lg = iter(inline(cbwd, list(fo[n_out:]) + ct))
                lz = [next(lg) if m else z for m, z in zip(ops.mask, lz)]
            return list(g) + lz

        bwd_program = trace(bwd_rule, bwd_in + ct_avals, f"{name} bwd rule").program
        return transforms.emit_call(
            "custom_vjp",
            ops.values,
            body=ops.body,
            rule=fwd_program,
            rule2=bwd_program,
            name=name,
            weak=body.out_weak,
        )


def _bwd_leaves(g: Any, s: _Split, bwd_name: str) -> list:
    """The leaves of a bwd rule's output ``g`` (one cotangent per
    differentiated argument, None for zeros), checked against the arguments'
    structure."""
    if not isinstance(g, (tuple, list)) or len(g) != len(s.diff):
        raise TypeError(
            f"Custom VJP bwd rule {bwd_name} must produce an output "
            "with the same container (pytree) structure as the args tuple "
            "of the primal function, and in particular must produce a tuple "
            "of length equal to the number of arguments to the primal "
            f"function, but got bwd output {g!r} for {len(s.diff)} "
            "differentiated argument(s)."
        )
    leaves = []
    for gi, arg in zip(g, s.diff):
        arg_leaves, arg_tree = tree.flatten(arg)
        if gi is None:
            leaves.extend(_lax.zeros(shape_of(x), dtype_of(x)) for x in arg_leaves)
            continue
        g_leaves, g_tree = tree.flatten(gi)
        if g_tree != arg_tree:
            raise TypeError(
                f"Custom VJP bwd rule {bwd_name} must produce an output "
                "with the same container (pytree) structure as the args "
                f"tuple of the primal function, but got {g_tree} for an "
                f"argument of structure {arg_tree}."
            )
        leaves.extend(g_leaves)
    return leaves
