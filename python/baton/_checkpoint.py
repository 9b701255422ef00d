"""``bt.checkpoint`` (``bt.remat``), ``bt.checkpoint_policies``,
``bt.ad_checkpoint.checkpoint_name``, ``bt.lax.stop_gradient`` and
``bt.saved_residuals``: controlling what the backward pass keeps.

``checkpoint(fun)`` traces ``fun`` into a call (``op_attrs.h`` CallAttrs
kCheckpoint) carrying the policy: reverse-mode differentiation keeps the
call's operands and what the policy saves, and recomputes the rest of the
body in the backward pass (``compiler/transforms/vjp.h``). Outside a trace
it just runs ``fun``.

Policies are the values of ``checkpoint_policies``, not arbitrary
functions: baton decides saveability in C++ from the policy's kind (JAX's
policies are predicates over primitives; a custom predicate raises
NotImplementedError).
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable

import optree

from baton import _batching_hook as hook
from baton import _dtypes, _residual_sources, tree
from baton._autodiff import _differentiable, _Flat, _flat_args
from baton._baton import Array
from baton._subtrace import (
    aval_of,
    check_args,
    fun_name,
    int_tuple,
    is_tracing,
    replaced,
    trace,
    transforms,
)

__all__ = [
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "print_saved_residuals",
    "remat",
    "saved_residuals",
    "stop_gradient",
]

_MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")


class CheckpointPolicy:
    """One of ``bt.checkpoint_policies``: which values of a checkpointed
    function the forward pass keeps for the backward pass."""

    __slots__ = ("dst", "kind", "names", "src")

    def __init__(
        self,
        kind: str,
        names: tuple[str, ...] = (),
        src: str | None = None,
        dst: str | None = None,
    ) -> None:
        self.kind = kind
        self.names = tuple(names)
        self.src = src
        self.dst = dst

    def _spec(self) -> tuple:
        return (self.kind, list(self.names), self.src, self.dst)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"{self!r} is a baton checkpoint policy, applied by bt.checkpoint in "
            "C++; it cannot be called as a predicate"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CheckpointPolicy) and self._spec() == other._spec()

    def __hash__(self) -> int:
        return hash((self.kind, self.names, self.src, self.dst))

    def __repr__(self) -> str:
        if self.kind in ("save_only_these_names", "save_any_names_but_these"):
            return f"{self.kind}({', '.join(map(repr, self.names))})"
        if self.kind == "offload_dot_with_no_batch_dims":
            return f"offload_dot_with_no_batch_dims({self.src!r}, {self.dst!r})"
        return self.kind


def _save_only_these_names(*names: str) -> CheckpointPolicy:
    """Saves only the values named with ``checkpoint_name`` in ``names``."""
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"save_only_these_names: names must be str, not {n!r}")
    return CheckpointPolicy("save_only_these_names", names)


def _save_any_names_but_these(*names: str) -> CheckpointPolicy:
    """Saves every value named with ``checkpoint_name`` except those in
    ``names`` (nothing unnamed), as JAX's policy of that name::

        policy = bt.checkpoint_policies.save_any_names_but_these("b")
        bt.checkpoint(f, policy=policy)   # keeps f's named values but "b"

    baton applies name policies in C++ as a list of names to save:
    ``checkpoint`` collects the names its body uses while tracing it and
    saves those not listed here (``save_only_these_names`` of the
    complement)."""
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"save_any_names_but_these: names must be str, not {n!r}")
    return CheckpointPolicy("save_any_names_but_these", names)


def _offload_dot_with_no_batch_dims(
    offload_src: str, offload_dst: str
) -> CheckpointPolicy:
    """Like ``dots_with_no_batch_dims_saveable``, but the saved values are
    moved to memory kind ``offload_dst`` (e.g. "pinned_host") between the
    passes and back to ``offload_src`` for the backward pass."""
    for k in (offload_src, offload_dst):
        if k not in _MEMORY_KINDS:
            raise ValueError(
                f"offload_dot_with_no_batch_dims: unknown memory kind {k!r}; "
                f"expected one of {', '.join(_MEMORY_KINDS)}"
            )
    return CheckpointPolicy(
        "offload_dot_with_no_batch_dims", (), offload_src, offload_dst
    )


def _unsupported(name: str) -> Callable[..., Any]:
    def policy(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"checkpoint_policies.{name} is not supported by baton; use one of "
            "everything_saveable, nothing_saveable, dots_saveable, "
            "dots_with_no_batch_dims_saveable, save_only_these_names, "
            "offload_dot_with_no_batch_dims"
        )

    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=CheckpointPolicy("everything_saveable"),
    nothing_saveable=CheckpointPolicy("nothing_saveable"),
    dots_saveable=CheckpointPolicy("dots_saveable"),
    checkpoint_dots=CheckpointPolicy("dots_saveable"),
    dots_with_no_batch_dims_saveable=CheckpointPolicy(
        "dots_with_no_batch_dims_saveable"
    ),
    checkpoint_dots_with_no_batch_dims=CheckpointPolicy(
        "dots_with_no_batch_dims_saveable"
    ),
    save_only_these_names=_save_only_these_names,
    offload_dot_with_no_batch_dims=_offload_dot_with_no_batch_dims,
    save_anything_except_these_names=_unsupported("save_anything_except_these_names"),
    save_any_names_but_these=_save_any_names_but_these,
    save_and_offload_only_these_names=_unsupported("save_and_offload_only_these_names"),
    save_from_both_policies=_unsupported("save_from_both_policies"),
)
checkpoint_policies.__doc__ = "The policies bt.checkpoint accepts (as in JAX)."


# The names checkpoint_name gives while a checkpoint body is traced, one
# set per body being traced (innermost last).
_NAME_COLLECTORS: list[set] = []


def _policy_spec(policy: Any, body_names: set | None = None) -> Any:
    """What the C++ call carries for ``policy`` (None: nothing_saveable);
    ``body_names``: the names the body uses (for save_any_names_but_these)."""
    if policy is None:
        return None
    if isinstance(policy, CheckpointPolicy):
        if policy.kind == "save_any_names_but_these":
            keep = sorted((body_names or set()) - set(policy.names))
            return ("save_only_these_names", keep, None, None)
        return policy._spec()
    raise NotImplementedError(
        f"checkpoint: policy {policy!r} is not one of bt.checkpoint_policies; "
        "baton applies policies in C++ and does not support custom predicate "
        "functions"
    )


def checkpoint(
    fun: Callable[..., Any] | None = None,
    *,
    prevent_cse: bool = True,
    policy: Any = None,
    static_argnums: int | tuple[int, ...] = (),
) -> Any:
    """``fun`` whose intermediate values are recomputed in the backward pass
    instead of kept (DESIGN.md 5.1): reverse-mode differentiation keeps the
    arguments and what ``policy`` saves (default: nothing). Same values and
    derivatives as ``fun``; less memory between the passes, more compute.
    ``static_argnums``: arguments passed as Python values (not traced)."""
    if fun is None:
        return functools.partial(
            checkpoint,
            prevent_cse=prevent_cse,
            policy=policy,
            static_argnums=static_argnums,
        )
    _policy_spec(policy)  # refuses a custom predicate before any call
    try:
        statics = int_tuple(static_argnums)
    except (TypeError, ValueError):
        raise TypeError(
            "checkpoint: static_argnums must be an int or a sequence of ints, "
            f"got {static_argnums!r}"
        ) from None
    name = fun_name(fun)

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        n = len(args)
        bad = [i for i in statics if not -n <= i < n]
        if bad:
            # ValueError, as jax.checkpoint raises; checked before anything
            # runs, traced or not.
            raise ValueError(
                f"checkpoint({name}): static_argnums {statics} contains "
                f"{bad[0]}, but the function was called with {n} positional "
                f"argument(s); static_argnums must be in [-{n}, {n}) (static "
                "arguments are passed by position)"
            )
        if not is_tracing():
            return fun(*args, **kwargs)
        static = {i + n if i < 0 else i for i in statics}
        dyn_idx = [i for i in range(n) if i not in static]
        leaves, in_tree = tree.flatten(([args[i] for i in dyn_idx], kwargs))
        check_args(leaves, f"checkpoint({name})")
        cell: dict = {}

        def body_fn(*ts: Any) -> list:
            dyn, kw = tree.unflatten(in_tree, list(ts))
            out_leaves, cell["tree"] = tree.flatten(
                fun(*replaced(args, dyn_idx, dyn), **kw)
            )
            return out_leaves

        body_names: set = set()
        _NAME_COLLECTORS.append(body_names)
        round_ = hook.round_here()
        try:
            body = trace(body_fn, [aval_of(x) for x in leaves], name)
        except hook.NestedRuleError:
            # A collective over a vmap axis (or a custom_vmap call) inside,
            # called directly in a vmapped function: the checkpoint of the
            # vmapped function (baton/_transform_batching.py).
            batcher = hook.transform_batchers.get("checkpoint")
            if round_ is None or batcher is None:
                raise
            return batcher(
                lambda *d, **kw: fun(*replaced(args, dyn_idx, d), **kw),
                checkpoint(prevent_cse=prevent_cse, policy=policy),
                round_,
                [args[i] for i in dyn_idx],
                kwargs,
            )
        finally:
            _NAME_COLLECTORS.pop()
        for outer in _NAME_COLLECTORS:  # an enclosing checkpoint uses them too
            outer.update(body_names)
        outs = transforms.emit_call(
            "checkpoint",
            list(leaves) + list(body.lifted),
            body=body.program,
            policy=_policy_spec(policy, body_names),
            name=name,
            weak=body.out_weak,
        )
        return tree.unflatten(cell["tree"], outs)

    return checkpointed


remat = checkpoint


def _identity_call(kind: str, x: Any, name: str = "") -> Any:
    """``x`` (a pytree) with each leaf passed through a one-operand call of
    ``kind`` in the current trace (outside a trace: ``x`` itself)."""
    if not is_tracing():
        return x

    def one(leaf: Any) -> Any:
        weak = aval_of(leaf)[2]
        return transforms.emit_call(kind, [leaf], name=name, weak=[weak])[0]

    return tree.map(one, x)


def checkpoint_name(x: Any, name: str) -> Any:
    """``x`` (a pytree of arrays) named ``name`` for
    ``checkpoint_policies.save_only_these_names`` and
    ``save_any_names_but_these`` (the identity otherwise)::

        h = checkpoint_name(bnp.tanh(x @ w), "h")
    """
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a str, not {name!r}")
    if _NAME_COLLECTORS and is_tracing():
        _NAME_COLLECTORS[-1].add(name)
    return _identity_call("name", x, name)


def stop_gradient(x: Any) -> Any:
    """``x`` (a pytree of arrays) with zero derivative: differentiation
    treats it as a constant. The identity on values."""
    return _identity_call("stop_gradient", x)


def _saved(fun: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[list, _Flat]:
    """The C++ residuals of ``fun`` at ``args`` and the traced function."""

    def f(*a: Any) -> Any:
        return fun(*a, **kwargs)

    what = f"saved_residuals({fun_name(fun)})"
    flat = _Flat(f, *_flat_args(args, what), False, what)
    wrt = flat.wrt(_differentiable(flat.leaves, "saved_residuals", True))
    _, _, residuals = transforms.vjp(flat.main, wrt)
    return residuals, flat


def saved_residuals(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> list:
    """The values reverse-mode differentiation of ``fun`` at ``args`` keeps
    from the forward pass for the backward pass, as ``(shape, dtype, what)``
    tuples: ``what`` is "argument i" for an argument kept as it is, else the
    op that computed it (and its ``checkpoint_name``). Differentiates with
    respect to every floating-point argument; nothing runs.

    Example::

        bt.saved_residuals(lambda x: bnp.sin(bnp.sin(x)), 1.0)
        # [((), dtype('float32'), 'output of sine'), ((), ..., 'argument 0')]
    """
    residuals, flat = _saved(fun, args, kwargs)
    return [
        (tuple(shape), _dtypes.SUPPORTED[dtype], _describe(kept, flat))
        for shape, dtype, kept in residuals
    ]


def _describe(kept: str, flat: _Flat) -> str:
    """The C++ description of a residual, with "argument i" of a
    closed-over value (a parameter past the arguments' leaves) said as
    such."""
    if not kept.startswith("argument "):
        return kept
    try:
        i = int(kept.split()[1]) - len(flat.leaves)
    except (IndexError, ValueError):
        return kept
    if i < 0:
        return kept
    v = flat.traced.lifted[i]
    return (
        "a closed-over array" if isinstance(v, Array) else "a closed-over traced value"
    )


def _argument_names(fun: Callable[..., Any], args: tuple) -> list[str]:
    """How JAX names each leaf of ``args``: ``x``, ``params[0]['w']``."""
    try:
        params = [
            p.name
            for p in inspect.signature(fun).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    names: list[str] = []
    for i, a in enumerate(args):
        root = params[i] if i < len(params) else f"args[{i}]"
        accessors, _, _ = optree.tree_flatten_with_accessor(
            a, none_is_leaf=False, namespace=tree.NAMESPACE
        )
        names.extend(acc.codify(root) for acc in accessors)
    return names


def print_saved_residuals(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Prints what reverse-mode differentiation of ``fun`` at ``args`` keeps
    for the backward pass, one line per value, in JAX's format::

        >>> bt.ad_checkpoint.print_saved_residuals(lambda x: bnp.sin(bnp.sin(x)), 1.0)
        f32[] from the argument x
        f32[] output of sin from /path/to/file.py:1:40 (<lambda>)

    Lines are ``<dtype>[<dims>] <source>`` with JAX's short dtype names
    (``f32``, ``bf16``, ``i32``); the source is ``from the argument <name>``
    (its pytree path), ``from a constant`` (a closed-over array), or
    ``output of <primitive>`` / ``named '<name>'`` with the user's line,
    column and function (``from <file>:<line>:<col> (<function>)``),
    arguments first, as JAX prints them.

    Deliberate differences: baton's differentiation keeps different values
    than JAX's in places (e.g. for ``sin(sin(x))`` JAX keeps the two
    ``cos`` values, baton the argument and the inner ``sin``); primitive
    names are JAX's spelling of baton's ops. The source line is found by
    recording the user's calls into baton during the trace
    (``baton/_residual_sources.py``); a value computed where that record
    cannot see it is printed without ``from <file>...``.
    """
    with _residual_sources.recording() as rec:
        residuals, flat = _saved(fun, args, kwargs)
    arg_names = _argument_names(fun, args)
    first: list[str] = []
    rest: list[str] = []
    for shape, dtype, kept in residuals:
        dims = ",".join(str(d) for d in shape)
        short = f"{_residual_sources.jax_dtype(dtype)}[{dims}]"
        described = _describe(kept, flat)
        if described.startswith("argument "):
            i = int(described.split()[1])
            name = arg_names[i] if i < len(arg_names) else f"args[{i}]"
            first.append(f"{short} from the argument {name}")
            continue
        if described.startswith("a closed-over"):
            first.append(f"{short} from a constant")
            continue
        what = described.removeprefix("output of ")
        name = None
        if " named '" in what:
            what, name = what.split(" named '", 1)
            name = name[:-1]
        prim = _residual_sources.jax_primitive(what)
        where = rec.source(prim, tuple(shape), _dtypes.SUPPORTED[dtype], name)
        src = f" from {where}" if where else ""
        if name is not None:
            rest.append(f"{short} named '{name}'{src}")
        else:
            rest.append(f"{short} output of {prim}{src}")
    arg_lines = sorted(
        (line for line in first if " from the argument " in line),
        key=lambda line: arg_names.index(line.split(" from the argument ", 1)[1])
        if line.split(" from the argument ", 1)[1] in arg_names else len(arg_names),
    )
    for line in [*[x for x in first if x not in arg_lines], *arg_lines, *rest]:
        print(line)
