"""Where a ``bt.Ref``'s value lives while functions are traced, and how
Refs cross ``bt.jit`` calls and traced functions (``_ref`` is the Ref
itself: its reads, writes, freeze and free).

A Ref is a box holding one value: a baton Array outside any trace, a Tracer
inside one. Tracing is functional, so inside a trace a write replaces the
box's value with the updated Tracer. What this module adds is bookkeeping
of *which trace* that Tracer belongs to:

- every trace is a :class:`Frame` (``bt.jit``'s trace of a function; each
  nested trace of ``_subtrace.trace``: a loop body, a cond branch, the
  function under grad / vmap / checkpoint);
- a Ref created in a frame, or bound there (a jit argument, a loop carry),
  is *local* to it; a Ref from an enclosing frame may be read (its Tracer
  becomes a value the nested program closes over), and a write to it is
  recorded. When the frame closes, every Ref it rebound gets its old value
  back; if the frame wrote to Refs from outside it, :class:`RefEffects`
  names them. ``lax`` control flow catches that and traces its functions
  again with those Refs' values threaded through as extra carries /
  operands and outputs (``threading_refs``), so ``x_ref[i] += 1`` inside a
  ``fori_loop`` body works as in JAX. Other transformations let it reach
  the user, whose message says what to do instead.

``bt.jit`` with Refs among its arguments (``jit_flatten``, ``bind_argument``,
``with_ref_outputs``): the call path flattens each Ref into a donation
marker of its buffer (so the program may update it in place), the trace
binds the caller's Ref to the parameter's Tracer, the final values of the
argument Refs become extra outputs, and rebuilding the output stores them
back into the caller's Refs -- on every call, traced or cached. A user's
jitted function that uses Refs living outside any trace (closed over) gets
``closure_outputs`` on the call that finds them, and ``_jit`` switches it
to passing them as arguments from then on.

Thread-safety: frames and pending write-backs belong to the calling thread;
a Ref must not be used by two threads at once.
"""

from __future__ import annotations

import threading
import warnings
import weakref
from typing import Any, Callable

import optree

from baton import _baton
from baton._baton import Donated
from baton._baton import lax as _lax
from baton.errors import DonationError, DonationWarning

Tracer = _lax.Tracer

__all__ = [
    "Frame",
    "RefBase",
    "RefEffects",
    "bind",
    "current",
    "jit_flatten",
    "pop",
    "push",
    "threading_refs",
]

LIVE, FROZEN, FREED = "live", "frozen", "freed"

_local = threading.local()


def _stack() -> list:
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def _pending() -> list:
    p = getattr(_local, "pending", None)
    if p is None:
        p = _local.pending = []
    return p


# Set once the first Ref is made: until then the jit call path does not
# look for Refs among the argument leaves (no cost for programs without).
_made_any = False


class RefBase:
    """The state of a Ref (``_ref.Ref`` adds its operations)."""

    __slots__ = ("__weakref__", "_frame", "_kind", "_marker", "_state", "_value")

    def __init__(self, value: Any, frame: Frame | None, kind: str | None) -> None:
        global _made_any
        _made_any = True
        self._value = value
        self._frame = frame
        self._kind = kind
        self._marker: Donated | None = None
        self._state = LIVE


class Frame:
    """One trace: the Refs it rebound (their old values, restored when it
    closes), the Refs from outside it that it wrote to, and (outermost frame
    only) the eager Refs used inside."""

    __slots__ = (
        "arg_params",
        "args",
        "closure_ok",
        "eager_touched",
        "kind",
        "name",
        "parent",
        "saved",
        "written",
    )

    def __init__(self, kind: str, name: str, parent: Frame | None) -> None:
        self.kind = kind  # "jit" (a user's jit), "internal" (baton's), "trace"
        self.name = name
        self.parent = parent
        self.saved: dict[int, tuple] = {}  # id(ref) -> (ref, value, frame, state)
        self.written: list = []  # Refs from outside written here, in order
        self.eager_touched: list = []  # Refs living outside any trace, used here
        self.args: list = []  # jit frames: the argument Refs bound, in order
        self.arg_params: list = []  # and the parameter Tracer each was bound to
        self.closure_ok = False  # a jit frame whose closed-over Refs are handled

    def _save(self, ref: RefBase) -> None:
        if id(ref) not in self.saved:
            self.saved[id(ref)] = (ref, ref._value, ref._frame, ref._state)

    def restore(self) -> None:
        for ref, value, frame, state in reversed(list(self.saved.values())):
            ref._value, ref._frame, ref._state = value, frame, state
        self.saved.clear()


def current() -> Frame | None:
    """The innermost trace's frame (None outside any trace)."""
    s = _stack()
    return s[-1] if s else None


def push(kind: str, name: str) -> Frame:
    s = _stack()
    f = Frame(kind, name, s[-1] if s else None)
    s.append(f)
    return f


class RefEffects(ValueError):
    """A traced function used Refs created outside it in a way its
    transformation cannot carry (see the module docstring). ``refs`` are
    those Refs, ``frame`` the trace that found them."""

    def __init__(
        self, message: str, frame: Frame, refs: list, closure: bool = False
    ) -> None:
        super().__init__(message)
        self.frame = frame
        self.refs = refs
        self.closure = closure  # Refs a jitted function closes over


def describe(ref: RefBase) -> str:
    v = ref._value
    try:
        import numpy as np

        return f"Ref{{{np.dtype(v.dtype).name}{list(v.shape)}}}".replace(" ", "")
    except Exception:
        return "Ref"


def _effects_message(frame: Frame, refs: list, closure: bool) -> str:
    what = ", ".join(describe(r) for r in refs)
    if closure:
        return (
            f"jit({frame.name}): the function uses bt.Ref(s) it closes over "
            f"({what}). A compiled function cannot read or update a Ref created "
            "outside it and not passed to it (the program is reused on later "
            "calls). Pass the Ref as an argument instead: f(ref, ...)."
        )
    return (
        f"{frame.name}: the function writes to bt.Ref(s) created outside it "
        f"({what}). baton threads Refs through bt.jit arguments and lax control "
        "flow (fori_loop, while_loop, scan, map, cond, switch), not through "
        "this transformation (grad, vjp, jvp, vmap, checkpoint, custom rules, "
        "eval_shape, ...). Create the Ref inside the function (and return "
        "bt.freeze(ref)), or pass the values in and out explicitly."
    )


def pop(frame: Frame, failed: bool = False) -> None:
    """Closes ``frame`` (the innermost): restores the Refs it rebound and,
    unless the trace ``failed``, raises RefEffects for Refs from outside it
    that it wrote (or, for a user's jit, used while they live outside any
    trace)."""
    s = _stack()
    assert s and s[-1] is frame, "ref frames closed out of order"
    s.pop()
    frame.restore()
    if failed:
        return
    if frame.closure_ok:
        return
    if frame.kind == "jit" and frame.eager_touched:
        raise RefEffects(
            _effects_message(frame, frame.eager_touched, True),
            frame,
            list(frame.eager_touched),
            closure=True,
        )
    if frame.written:
        refs = list(frame.written)
        raise RefEffects(_effects_message(frame, refs, False), frame, refs)


def _in(ref: RefBase, refs: list) -> bool:
    return any(r is ref for r in refs)


def framed(
    fn: Callable[..., Any], name: str, kind: str = "trace"
) -> Callable[..., Any]:
    """``fn`` run in a frame of its own (what ``_subtrace.trace`` traces)."""

    def run(*args: Any) -> Any:
        frame = push(kind, name)
        try:
            out = fn(*args)
        except BaseException:
            pop(frame, failed=True)
            raise
        pop(frame)
        return out

    return run


def _is_outer(frame: Frame | None, of: Frame) -> bool:
    """Whether ``frame`` is ``of`` or encloses it (None: outside any trace)."""
    if frame is None:
        return True
    f: Frame | None = of
    while f is not None:
        if f is frame:
            return True
        f = f.parent
    return False


def _sync(ref: RefBase) -> None:
    """A Ref outside any trace whose buffer went to a jit call that failed
    before taking it: the buffer comes back."""
    m = ref._marker
    if m is not None and ref._frame is None:
        if not m.used:
            _baton._jit_undonate(m)
        ref._marker = None


def check_live(ref: RefBase, what: str) -> None:
    if ref._state == FROZEN:
        raise ValueError(
            f"{what}: this bt.Ref was frozen (bt.freeze returned its final value "
            "and invalidated it); it can no longer be read or written. Make a "
            "new one with bt.new_ref(value)."
        )
    if ref._state == FREED:
        raise ValueError(
            f"{what}: this bt.Ref was freed (bt.free_ref released its buffer); "
            "it can no longer be read or written."
        )


def read(ref: RefBase, what: str) -> Any:
    """The value a read sees (a Tracer of this or an enclosing trace, or an
    Array outside any trace)."""
    check_live(ref, what)
    f = current()
    if ref._frame is None:
        _sync(ref)
        if f is not None:
            root = _stack()[0]
            if not _in(ref, root.eager_touched):
                root.eager_touched.append(ref)
    elif f is None or not _is_outer(ref._frame, f):
        raise ValueError(
            f"{what}: this bt.Ref belongs to a trace that has finished (it was "
            "created or bound inside a traced function and kept after it "
            "returned); use bt.freeze(ref) inside the function and return the "
            "value instead."
        )
    return ref._value


def write(ref: RefBase, value: Any, what: str) -> None:
    """Makes ``value`` the Ref's value (inside a trace: a Tracer of the
    current trace), recording writes to Refs from outside the trace."""
    check_live(ref, what)
    f = current()
    if f is None:
        ref._value = value
        return
    if ref._frame is not f:
        read(ref, what)  # a Ref of a finished trace raises; eager ones are noted
        f._save(ref)
        if not _in(ref, f.written):
            f.written.append(ref)
    ref._value = value
    ref._frame = f


def set_state(ref: RefBase, state: str, what: str) -> None:
    """Freezes or frees a Ref (only where it lives: the current trace, or
    outside any trace)."""
    check_live(ref, what)
    f = current()
    if f is not None and ref._frame is not f:
        raise ValueError(
            f"{what}: this bt.Ref was created outside the traced function "
            f"{f.name}; a Ref can be frozen or freed only in the function that "
            "created it. Read its value (ref[...]) instead, or do this after "
            "the traced function returns."
        )
    if f is not None and _in(ref, f.args):
        raise ValueError(
            f"{what}: this bt.Ref is an argument of the jitted function "
            f"{f.name}; it cannot be frozen or freed inside it (the caller's "
            "Ref receives its final value). Read it (ref[...]) instead, or "
            "freeze it after the call."
        )
    if f is not None:
        f._save(ref)
    ref._state = state


def bind(ref: RefBase, value: Any) -> None:
    """Makes ``ref`` local to the current frame with ``value`` (a parameter
    Tracer); its old value comes back when the frame closes."""
    f = current()
    assert f is not None
    check_live(ref, "bt.Ref")
    f._save(ref)
    ref._value = value
    ref._frame = f


# ---- bt.jit with Ref arguments ----


class _RefSlot:
    """A Ref argument in the structure the jit call path hashes and
    flattens: one leaf (the Ref's donated buffer)."""

    __slots__ = ("marker",)

    def __init__(self, marker: Any) -> None:
        self.marker = marker


optree.register_pytree_node(
    _RefSlot,
    lambda s: ((s.marker,), None),
    lambda _, children: children[0],
    namespace="baton",
)


def _marker_of(ref: RefBase) -> Any:
    check_live(ref, "jit argument")
    if ref._frame is not None:
        raise ValueError(
            "jit: a bt.Ref of a traced function was passed to a jitted function "
            "outside that trace"
        )
    m = ref._marker
    pending = _pending()
    if m is not None and not m.used:
        # Unclaimed: passed twice in this call (the call path refuses the
        # same marker twice), or left by a call that failed before running.
        pending[:] = [w for w in pending if w() is not ref]
        pending.append(weakref.ref(ref))
        return m
    ref._marker = None
    m = _baton._donate(ref._value)
    ref._marker = m
    pending.append(weakref.ref(ref))  # weak: a lowered call never writes back
    return m


def jit_flatten(
    arg: Any,
    is_leaf: Any = None,
    *,
    none_is_leaf: bool = False,
    namespace: str = "",
) -> tuple:
    """optree.tree_flatten for the jit call path: Refs become one-leaf
    nodes holding a donation marker of their buffer."""
    leaves, treedef = optree.tree_flatten(
        arg, is_leaf, none_is_leaf=none_is_leaf, namespace=namespace
    )
    if not _made_any:
        return leaves, treedef
    for leaf in leaves:
        if isinstance(leaf, RefBase):
            break
    else:
        return leaves, treedef

    def slot(x: Any) -> Any:
        return _RefSlot(_marker_of(x)) if isinstance(x, RefBase) else x

    arg = optree.tree_map(
        slot, arg, is_leaf=is_leaf, none_is_leaf=none_is_leaf, namespace=namespace
    )
    return optree.tree_flatten(
        arg, is_leaf, none_is_leaf=none_is_leaf, namespace=namespace
    )


def bind_argument(ref: RefBase, tracer: Any) -> RefBase:
    """A Ref argument of the function jit traces: bound to its parameter."""
    bind(ref, tracer)
    f = current()
    if _in(ref, f.args):
        raise ValueError(
            f"jit({f.name}): the same bt.Ref was passed twice; only one "
            "reference to a mutable array may be passed as an argument"
        )
    f.args.append(ref)
    f.arg_params.append(tracer)
    return ref


def fresh(t: Any) -> Any:
    """``t`` recomputed (the same values in a buffer of its own): a Ref's
    final value must not be another argument, another Ref's value or an
    output of the call, or they would share storage afterwards."""
    import numpy as np

    d = np.dtype(t.dtype)
    if d.kind in "biu":
        return _lax.bitwise_not(_lax.bitwise_not(t))
    return _lax.neg(_lax.neg(t))


def _unshared(out: Any, finals: list, params: list, own: list) -> tuple:
    """``finals`` (one per Ref) and ``out`` (a pytree) with every value
    that would share a buffer with another (an argument other than the
    Ref's own parameter ``own[i]`` (None: it has none), another Ref's final
    value, an output) recomputed."""
    seen: set = set()
    finals = list(finals)
    for i, v in enumerate(finals):
        other_param = any(v is p and p is not own[i] for p in params)
        if other_param or id(v) in seen:
            finals[i] = v = fresh(v)
        seen.add(id(v))
    if seen:
        leaves, treedef = optree.tree_flatten(
            out, none_is_leaf=False, namespace="baton"
        )
        if any(id(x) in seen for x in leaves):
            out = optree.tree_unflatten(
                treedef,
                [
                    fresh(x) if id(x) in seen and isinstance(x, Tracer) else x
                    for x in leaves
                ],
            )
    return out, finals


class _RefOutputs:
    """A traced function's output plus its argument Refs' final values;
    rebuilding it stores those values into the caller's Refs."""

    __slots__ = ("finals", "out")

    def __init__(self, out: Any, finals: list) -> None:
        self.out = out
        self.finals = finals


def _write_back(n: int, children: tuple) -> Any:
    out, finals = children[0], children[1:]
    if n and all(type(v) is _baton.Array for v in finals):
        pending = _pending()
        if len(pending) < n:
            raise RuntimeError("jit: lost track of the bt.Ref arguments of this call")
        refs = [w() for w in pending[-n:]]  # alive: the call's arguments hold them
        del pending[:]
        for ref, v in zip(refs, finals):
            ref._value = v
            ref._marker = None
    return out


optree.register_pytree_node(
    _RefOutputs,
    lambda r: ((r.out, *r.finals), len(r.finals)),
    _write_back,
    namespace="baton",
)


def with_ref_outputs(out: Any, frame: Frame, params: list) -> Any:
    """``out`` plus the final values of ``frame``'s argument Refs
    (``params``: the traced function's parameter Tracers)."""
    if not frame.args:
        return out
    finals = []
    for ref in frame.args:
        if ref._state != LIVE or ref._frame is not frame:
            raise ValueError(
                f"jit({frame.name}): a bt.Ref argument was frozen or freed inside "
                "the function; the caller's Ref must receive its final value. "
                "Read it (ref[...]) instead, or freeze it after the call."
            )
        finals.append(ref._value)
    out, finals = _unshared(out, finals, params, frame.arg_params)
    return _RefOutputs(out, finals)


class _ClosureSink:
    """Where the values a traced function wrote into Refs it closes over
    go when its output is rebuilt (``done`` runs after: the jitted
    function drops the program that captured their old buffers)."""

    __slots__ = ("done", "refs")

    def __init__(self, refs: list, done: Callable[[], None]) -> None:
        self.refs = refs
        self.done = done


class _ClosureOutputs:
    __slots__ = ("finals", "out", "sink")

    def __init__(self, out: Any, finals: list, sink: _ClosureSink) -> None:
        self.out = out
        self.finals = finals
        self.sink = sink


def _closure_write_back(sink: _ClosureSink, children: tuple) -> Any:
    out, finals = children[0], children[1:]
    if all(type(v) is _baton.Array for v in finals):
        for ref, v in zip(sink.refs, finals):
            if ref._state == LIVE and ref._frame is None:
                ref._value = v
        sink.done()
    return out


optree.register_pytree_node(
    _ClosureOutputs,
    lambda c: ((c.out, *c.finals), c.sink),
    _closure_write_back,
    namespace="baton",
)


def closure_outputs(out: Any, frame: Frame, done: Callable[[], None]) -> Any:
    """``out`` plus the final values of the Refs living outside any trace
    that ``frame`` (a user's jit) wrote; rebuilding it stores them there."""
    refs = [r for r in frame.written if r._frame is frame and r._state == LIVE]
    finals = [r._value for r in refs]
    arg_finals: list = []
    if isinstance(out, _RefOutputs):  # Ref arguments too
        out, arg_finals = out.out, out.finals
    own = list(frame.arg_params) + [None] * len(finals)
    out, both = _unshared(out, arg_finals + finals, list(frame.arg_params), own)
    if arg_finals:
        out = _RefOutputs(out, both[: len(arg_finals)])
    frame.closure_ok = True
    return _ClosureOutputs(out, both[len(arg_finals) :], _ClosureSink(refs, done))


def returned_ref_error(name: str) -> ValueError:
    return ValueError(
        f"function {name} traced for jit returned a mutable array reference "
        "(bt.Ref), but mutable array references cannot be returned. Return "
        "its value (ref[...] or bt.freeze(ref)) instead."
    )


# ---- lax control flow ----


def threading_refs(plain: Callable[[], Any], threaded: Callable[[list], Any]) -> Any:
    """``plain()``; if a function it traces writes to Refs from outside
    (RefEffects from a trace directly inside this one), ``threaded(refs)``
    with those Refs, widened until nothing new is found."""
    parent = current()
    refs: list = []
    while True:
        try:
            return threaded(refs) if refs else plain()
        except RefEffects as e:
            if e.frame.parent is not parent:
                raise
            new = [r for r in e.refs if not _in(r, refs)]
            if not new:
                raise
            refs.extend(new)


def values_of(refs: list, what: str) -> list:
    return [read(r, what) for r in refs]


def bind_all(refs: list, values: Any) -> None:
    for r, v in zip(refs, values):
        bind(r, v)


def finals_of(refs: list, what: str) -> list:
    """The values of Refs bound in the current frame (a loop body's new
    carries)."""
    f = current()
    out = []
    for r in refs:
        if r._state != LIVE or r._frame is not f:
            raise ValueError(
                f"{what}: a bt.Ref created outside the function was frozen or "
                "freed inside it; freeze it after the loop or cond instead."
            )
        out.append(r._value)
    return out


def write_all(refs: list, values: Any, what: str) -> None:
    for r, v in zip(refs, values):
        write(r, v, what)


def eager_threaded(
    refs: list, eager: Callable[..., Any], fn: Callable[..., Any], name: str, *dyn: Any
) -> Any:
    """``eager(run, name, ...)`` (a fresh jit of ``run``) for a control-flow
    call outside any trace whose functions use Refs living outside any
    trace: their buffers go in donated (updated in place) and come back
    into the Refs."""
    markers = []
    try:
        for r in refs:
            check_live(r, name)
            _sync(r)
            markers.append(_baton._donate(r._value))
    except BaseException:
        for m in markers:
            _baton._jit_undonate(m)
        raise

    def run(vals: list, *d: Any) -> Any:
        bind_all(refs, vals)
        out = fn(*d)
        return _unshared(out, finals_of(refs, name), list(vals), list(vals))

    try:
        with warnings.catch_warnings():
            # Where the program cannot update a Ref's buffer in place (a cond
            # branch's result, say) the old buffer is freed after the call:
            # what a Ref write means, nothing to warn about.
            warnings.simplefilter("ignore", DonationWarning)
            out, finals = eager(run, name, markers, *dyn)
    except DonationError:
        # bt.config donation mode "error" refused before consuming anything:
        # run with the buffers undonated (a new buffer per Ref).
        values = [_baton._jit_undonate(m) for m in markers]
        out, finals = eager(run, name, values, *dyn)
    except BaseException:
        for m in markers:
            if not m.used:
                _baton._jit_undonate(m)
        raise
    for r, v in zip(refs, finals):
        r._value = v
    return out
