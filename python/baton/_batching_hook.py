"""Where ``bt.vmap`` hands a call to a user batching rule
(``bt.custom_batching.custom_vmap``) instead of batching its body.

baton's ``vmap`` traces the function once on one example and batches the
program in C++ (``_vmap``), which knows nothing of Python rules. So a call
with a rule is cut out of the trace: ``vmap`` traces the function in
*rounds*. In each round the function runs in the vmap's body trace; the
first ``k`` ruled calls it reaches (found before) return the per-example
values of their known batched results (extra parameters of the round's
program), and the next one stops the round (:class:`Stop`): the round's
program then computes that call's arguments, ``vmap`` batches it, calls the
rule on the batched arguments in the enclosing trace, and runs the next
round. The last round runs the function to its end. The function is thus
traced once more per ruled call, and must reach the same calls in the
same order each time (as a traced function does).

A ruled call is taken over only when it is made directly in the body trace
of the innermost ``vmap`` being traced (``bt.jit`` inside inlines there). In
a trace nested in that body -- a ``grad`` / ``jvp``, a ``lax.scan`` /
``cond`` body, a ``checkpoint`` -- the arguments are values of that trace,
which the vmap's program cannot compute; the call raises
:class:`NestedRuleError` (a NotImplementedError), which the transformation
made directly in the body catches: ``custom_jvp`` / ``custom_vjp``
functions are then batched in Python (``_custom_batching``), so that a
``custom_vjp`` wrapped around a ``custom_vmap`` works as in JAX; ``grad`` /
``value_and_grad`` / ``jvp`` / ``vjp``'s pullback / ``checkpoint`` /
``while_loop`` become ruled calls themselves (:data:`transform_batchers`, ``_transform_batching``),
computed on the vmapped function; a ``scan`` of known length is unrolled
and a ``cond`` computes every branch (``_control_flow``).

Thread-safety: the rounds belong to the thread that traces (thread-local).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, Callable

from baton import tree
from baton._baton import lax as _lax
from baton._subtrace import aval_of, is_array_like, is_tracing, transforms

__all__ = [
    "CollectiveNestedError",
    "NestedRuleError",
    "Round",
    "Stop",
    "call_with_rule",
    "current_frame",
    "derivative_defined",
    "in_reverse_mode",
    "intercept",
    "reverse_mode",
    "round_here",
    "rounds",
    "suspended",
    "transform_batchers",
]

_local = threading.local()


def _stack() -> list:
    """This thread's rounds in progress, innermost last (None: suspended)."""
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def current_frame() -> int:
    """An identity of the innermost trace in progress (a constant made
    there names its frame; the constant is dead and dropped)."""
    return transforms.value_key(_lax.full((), 0, "int32"))[0]


class Round:
    """One tracing round of a ``vmap`` body: its frame, the per-example
    results of the ruled calls already batched (flat leaves and output
    structure, in call order), and how many calls the round has reached.
    A vmap with an ``axis_name`` also records the name, the batch size and
    the example's index along the axis (an int32 Tracer of the body trace),
    for the collectives over it (``_batched_collectives``), and whether
    the axis is a mesh axis of a shard_map with ``check_vma`` (a ``grad``
    inside then differentiates as JAX's shard_map does, values that do not
    vary along the axis shared by the examples: ``_transform_batching``)."""

    def __init__(
        self,
        known: list,
        name: str,
        axis_name: Any = None,
        size: int = 0,
        index: Any = None,
        check_vma: bool = False,
    ) -> None:
        self.frame: int | None = None
        self.known = known  # [(out_tree, leaves, arg_avals)]
        self.reached = 0
        self.name = name
        self.axis_name = axis_name
        self.size = size
        self.index = index
        self.check_vma = check_vma


class Stop(BaseException):
    """Ends a round at a ruled call not batched yet: its flat argument
    leaves, their structure, the rule and the plain function, and the name
    in messages. A BaseException, so that ``except Exception`` in the
    user's function does not stop it."""

    def __init__(
        self,
        round_: Round,
        leaves: list,
        in_tree: Any,
        rule: Callable[..., Any],
        body: Callable[..., Any],
        name: str,
    ) -> None:
        super().__init__(f"vmap round stopped at {name}")
        self.round = round_
        self.leaves = leaves
        self.in_tree = in_tree
        self.rule = rule
        self.body = body
        self.name = name


class NestedRuleError(NotImplementedError):
    """A function with a batching rule called in a trace nested inside a
    ``vmap`` body (see the module docstring)."""


@contextlib.contextmanager
def rounds(round_: Round, probe: Any = None) -> Iterator[Round]:
    """Makes ``round_`` the innermost round while the body is traced; its
    frame is the trace in progress (that of ``probe``, a Tracer of it,
    when given: then no constant is made to find it)."""
    if isinstance(probe, _lax.Tracer):
        round_.frame = transforms.value_key(probe)[0]
    else:
        round_.frame = current_frame()
    stack = _stack()
    stack.append(round_)
    try:
        yield round_
    finally:
        stack.pop()


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """No round applies inside: ruled calls run their body (used where a
    rule itself runs the plain function, e.g. ``sequential_vmap``'s loop)."""
    stack = _stack()
    stack.append(None)
    try:
        yield
    finally:
        stack.pop()


def round_here() -> Round | None:
    """The innermost round if the trace in progress is its body, else None."""
    stack = _stack()
    if not stack or stack[-1] is None or not is_tracing():
        return None
    r = stack[-1]
    return r if r.frame == current_frame() else None


class CollectiveNestedError(NestedRuleError):
    """A collective over a vmap axis in a trace nested in the vmap body
    (``_batched_collectives``) that no transformation there takes over
    (a ``custom_jvp`` / ``custom_vjp`` function's body or rule,
    ``custom_root``)."""


def named_rounds() -> dict:
    """The rounds in progress that bind an axis name, by name (the
    innermost binding of a repeated name wins)."""
    return {r.axis_name: r for r in _stack() if r is not None and r.axis_name is not None}


def is_suspended() -> bool:
    """Whether rounds are suspended here (:func:`suspended`)."""
    stack = _stack()
    return bool(stack) and stack[-1] is None


def in_nested_trace() -> bool:
    """Whether a round is in progress and the current trace is not its body
    (so it is a trace nested inside it)."""
    stack = _stack()
    if not stack or stack[-1] is None or not is_tracing():
        return False
    return stack[-1].frame != current_frame()


def nested_error(name: str, why: str | None = None) -> NestedRuleError:
    """The error for a ruled call in a trace nested in a vmap body (``why``:
    the message, when not that of a custom_vmap function)."""
    if why is not None:
        return CollectiveNestedError(why)
    return NestedRuleError(
        f"{name} has a custom batching rule (custom_vmap) and is called inside "
        "bt.vmap, but within a trace nested in the vmapped function that "
        "baton cannot batch with it (custom_root, a custom rule, or such a "
        "trace inside one made in the vmapped function): baton batches "
        "that nested trace's program as a whole, so it cannot apply the rule "
        "there. Call the function directly in the vmapped function (bt.jit "
        "inside is fine, and so are grad, jvp, checkpoint, scan, while_loop "
        "and cond made there), or wrap the transformation around bt.vmap "
        "instead."
    )


def intercept(
    leaves: list,
    in_tree: Any,
    rule: Callable[..., Any],
    body: Callable[..., Any],
    name: str,
) -> tuple[Any, list] | None:
    """For a call with a batching rule: None when no vmap applies (run the
    body); else (output structure, per-example output leaves) when this
    round knows the call's batched result; else raises :class:`Stop`.
    Raises :class:`NestedRuleError` in a trace nested in a vmap body.

    ``rule(axis_size, in_batched, *args)`` is JAX's custom_vmap rule over
    the call's arguments (``in_tree`` unflattened); ``body(*args)`` is the
    plain function."""
    stack = _stack()
    if not stack or stack[-1] is None or not is_tracing():
        return None
    r = stack[-1]
    if r.frame != current_frame():
        raise nested_error(name)
    k = r.reached
    r.reached += 1
    avals = [aval_of(x)[:2] for x in leaves]
    if k < len(r.known):
        out_tree, outs, known_avals = r.known[k]
        if known_avals != avals:
            raise RuntimeError(
                f"vmap({r.name}): the function called {name} with arguments "
                f"{avals} where an earlier tracing of it called it with "
                f"{known_avals}; vmap traces the function once per custom_vmap "
                "call, so it must make the same calls each time"
            )
        return out_tree, outs
    raise Stop(r, leaves, in_tree, rule, body, name)


# How a transformation called directly in a vmap body, whose trace hit a
# ruled call, is batched instead: kind ("grad", "jvp") -> a function making
# its vmap rule. Registered by baton._transform_batching (a layer above).
transform_batchers: dict = {}


def call_with_rule(
    value: Any, rule: Callable[..., Any], body: Callable[..., Any], name: str
) -> Any:
    """A call over the pytree ``value`` (its leaves array-like) made in a
    vmap body, batched by ``rule(axis_size, in_batched, *value)``
    (``value`` a tuple of the call's arguments); ``body(*value)`` is the
    plain call. See :func:`intercept`."""
    leaves, in_tree = tree.flatten(value)
    if not all(is_array_like(x) for x in leaves):
        raise TypeError(f"{name}: the arguments must be arrays")
    got = intercept(leaves, in_tree, rule, body, name)
    if got is None:
        return body(*value)
    out_tree, outs = got
    return tree.unflatten(out_tree, outs)


# ---- reverse mode: JAX's custom_vmap has none ----
#
# The C++ reverse-mode transform cannot tell a custom_vmap call apart (its
# body is inlined), so refusing it is done here: ``bt.grad`` / ``vjp`` mark
# the tracing of the function they differentiate (``reverse_mode``), and a
# custom_vmap call whose body would run there refuses. Custom functions mark
# their own bodies and rules as ``derivative_defined`` (the derivative comes
# from their rules, never from differentiating those bodies).


def _depth() -> int:
    return getattr(_local, "reverse", 0)


@contextlib.contextmanager
def reverse_mode() -> Iterator[None]:
    """The function being traced here will be differentiated in reverse
    mode."""
    _local.reverse = _depth() + 1
    try:
        yield
    finally:
        _local.reverse -= 1


@contextlib.contextmanager
def derivative_defined() -> Iterator[None]:
    """What is traced here is not differentiated by reverse mode (a custom
    function's body and rules, a trace made only for its structure)."""
    saved = _depth()
    _local.reverse = 0
    try:
        yield
    finally:
        _local.reverse = saved


def in_reverse_mode() -> bool:
    """Whether reverse mode will differentiate what is traced now."""
    return _depth() > 0 and is_tracing()
