"""``bt.lax`` control flow: ``fori_loop``, ``while_loop``, ``scan``, ``cond``,
``switch`` and ``map`` (DESIGN.md section 5.2), as in ``jax.lax``.

Each traces its functions once, into programs nested in the current trace
(``_subtrace``), and emits one control-flow op (``compiler/op_attrs.h``
WhileAttrs, ScanAttrs, CaseAttrs) that the executor runs without leaving
the compiled program. Values the functions close over (outer Tracers,
baton Arrays) become operands of the op that do not change from one
iteration to the next. Carries may be any pytree of arrays; they keep their
structure, shapes and dtypes, or tracing fails with ``TypeError`` naming
both types, as in JAX.

Memory: a loop's carries are updated in place. The executor keeps each
carry in one buffer for the whole loop (the initial value's own, when it
dies at the loop -- donate it to a jitted function to make that so), and
the body writes each new carry over the old one where its ops can
(``region_step.h``). ``scan`` writes its stacked outputs straight into
their final buffers. ``bt.jit(fun, require_in_place=True)`` turns any carry
or update that would need a copy into ``bt.InPlaceError`` at compile time.

``fori_loop`` with bounds known when tracing (Python or numpy ints) is a
``scan`` (so it can be differentiated in reverse mode, as in JAX); with
traced bounds, a ``while_loop``. ``unroll`` is accepted for compatibility
and does not change what runs.

Outside a trace each function runs through a fresh ``bt.jit`` of itself
(``_eager_transform.run_eagerly``); the functions and static arguments are closed
over, the arrays traced.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from baton import _batching_hook as hook
from baton import _ref_state, tree
from baton._baton import lax as _lax
from baton._subtrace import (
    Tracer,
    aval_of,
    fun_name,
    inline,
    is_python_scalar,
    is_tracing,
    trace,
    transforms,
    unique_lifted,
)

__all__ = ["cond", "fori_loop", "map", "scan", "switch", "while_loop"]


# ---- helpers ----


def _eager(fn: Callable[..., Any], name: str, *dynamic: Any) -> Any:
    """``fn(*dynamic)`` through a fresh ``bt.jit`` (outside any trace)."""
    from baton._jit import jit

    leaves, treedef = tree.flatten(dynamic)

    def run(*ls: Any) -> Any:
        return fn(*tree.unflatten(treedef, list(ls)))

    run.__name__ = run.__qualname__ = name
    return jit(run)(*leaves)


def _as_tracer(x: Any, what: str) -> Any:
    """``x`` as a Tracer of the current trace; a TypeError naming ``what``
    for a value that is not an array (None, a string, an arbitrary object)
    rather than the binding's signature."""
    if isinstance(x, Tracer):
        return x
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(
            f"{what} must be an array or a Python/numpy scalar, got {type(x).__name__}"
        )
    try:
        return _lax.as_tracer(x)
    except TypeError as e:
        msg = str(e)
        if msg.startswith("as_tracer: "):  # the binding's reason, our name
            raise TypeError(f"{what}: {msg[len('as_tracer: ') :]}") from None
        if "incompatible function arguments" not in msg:
            raise
        raise TypeError(
            f"{what} must be an array or a Python/numpy scalar, got {type(x).__name__}"
        ) from None


def _as_tracers(leaves: Sequence[Any], what: str = "a loop value") -> list:
    return [_as_tracer(x, what) for x in leaves]


def _type_str(aval: tuple) -> str:
    shape, dtype, weak = aval[0], aval[1], aval[2]
    s = f"{dtype}[{','.join(str(d) for d in shape)}]"
    return s + "{weak_type=True}" if weak else s


def _check_carry(
    what: str, in_tree: Any, out_tree: Any, in_avals: list, out_leaves: Sequence[Any]
) -> None:
    """TypeError unless the new carry has the initial one's structure and
    types (weak types may differ: the carry's type is the strong one)."""
    if in_tree != out_tree:
        raise TypeError(
            f"{what} must have the same pytree structure as its input, got "
            f"{out_tree} for input {in_tree}"
        )
    for i, (a, x) in enumerate(zip(in_avals, out_leaves)):
        b = aval_of(x)
        if tuple(a[0]) != tuple(b[0]) or a[1] != b[1]:
            raise TypeError(
                f"{what} must have identical types to its input, but carry "
                f"leaf {i} ({_keystr(_path(in_tree, i))}) is {_type_str(b)} "
                f"and enters as {_type_str(a)}"
            )


def _path(treedef: Any, i: int) -> tuple:
    """The key path of leaf ``i`` of ``treedef`` (for messages)."""
    try:
        dummy = tree.unflatten(treedef, list(range(treedef.num_leaves)))
        for path, leaf in tree.flatten_with_path(dummy)[0]:
            if leaf == i:
                return path
    except Exception:
        pass
    return ()


def _keystr(path: tuple) -> str:
    from baton.tree_util import keystr

    return keystr(path) or "the carry"


def _promote_weak(init: list, init_avals: list, out_leaves: Sequence[Any]) -> bool:
    """Where a weakly typed initial carry meets a new carry of another dtype
    of the same shape, casts the initial value to that dtype (as JAX does);
    True when anything changed (the body is traced again)."""
    changed = False
    for i, (a, x) in enumerate(zip(init_avals, out_leaves)):
        b = aval_of(x)
        if a[2] and tuple(a[0]) == tuple(b[0]) and a[1] != b[1]:
            init[i] = _lax.convert_element_type(init[i], b[1])
            changed = True
    return changed


def _over_union(traced: Any, n: int, positions: list, params: list, name: str) -> Any:
    """``traced``'s program taking (its n explicit values, then every value
    of a union of closed-over values) instead of its own closed-over ones."""

    def fn(*ps: Any) -> list:
        return inline(traced.program, list(ps[:n]) + [ps[n + p] for p in positions])

    return trace(fn, params, name).program


def _weak_flags(leaves: Sequence[Any]) -> list:
    return [aval_of(x)[2] for x in leaves]


# ---- scan ----


def _scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
    _split_transpose: bool = False,
) -> tuple[Any, Any]:
    """Loops ``f(carry, x) -> (carry, y)`` over the leading axis of ``xs``,
    as ``jax.lax.scan``: returns the final carry and the ``y``s stacked
    along a new leading axis (iteration t writes slice t, also when
    ``reverse`` runs t from the end).

    >>> def step(c, x):
    ...     return c + x, c * x
    >>> bt.lax.scan(step, 0.0, bt.numpy.arange(4.0))   # (6.0, [0, 1, 3, 6] * x)

    ``xs`` may be None (then ``length`` gives the trip count) or a pytree
    of arrays with equal leading dimensions. The carry keeps its pytree
    structure, shapes and dtypes (``TypeError`` otherwise). The stacked
    outputs are written into their final buffers as the loop runs; the carry
    is updated in place (module docstring).
    """
    del unroll, _split_transpose
    if not callable(f):
        raise TypeError(f"scan: f must be callable, got {type(f).__name__}")
    if not is_tracing():
        return _eager(
            lambda i, x: scan(f, i, x, length=length, reverse=reverse),
            f"scan({fun_name(f)})",
            init,
            xs,
        )
    init_leaves, init_tree = tree.flatten(init)
    x_leaves, x_tree = tree.flatten(xs)
    x_leaves = _as_tracers(x_leaves, "scan: each leaf of xs")
    lengths = {int(x.shape[0]) if x.ndim else None for x in x_leaves}
    if None in lengths:
        raise ValueError(
            "scan got value with no leading axis to scan over: every leaf of "
            "xs must be an array with a leading dimension"
        )
    if length is not None:
        length = operator.index(length)
        if lengths and lengths != {length}:
            raise ValueError(
                f"scan got `length` argument of {length} which disagrees with "
                f"leading axis sizes {sorted(lengths)}"
            )
    elif len(lengths) > 1:
        raise ValueError(
            f"scan got values with different leading axis sizes: {sorted(lengths)}"
        )
    elif not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided")
    else:
        length = lengths.pop()
    carries = _as_tracers(init_leaves, "scan: each leaf of init")
    x_avals = [((tuple(x.shape[1:])), *aval_of(x)[1:]) for x in x_leaves]
    nc = len(carries)
    name = f"scan({fun_name(f)})"
    cell: dict = {}

    def body_fn(*ts: Any) -> list:
        c = tree.unflatten(init_tree, list(ts[:nc]))
        x = tree.unflatten(x_tree, list(ts[nc:]))
        out = f(c, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(
                f"scan body output must be a pair (carry, y), got {type(out).__name__}"
            )
        c_leaves, c_tree = tree.flatten(out[0])
        y_leaves, cell["y_tree"] = tree.flatten(out[1])
        cell["c_tree"], cell["c_leaves"] = c_tree, c_leaves
        return list(c_leaves) + list(y_leaves)

    for _ in range(2):
        c_avals = [aval_of(c) for c in carries]
        try:
            body = trace(body_fn, c_avals + x_avals, name)
        except hook.NestedRuleError:
            if hook.round_here() is None or length == 0:
                raise
            # A collective over a vmap axis (or a custom_vmap call) in the
            # body of a scan made directly in a vmapped function: the
            # loop is unrolled there, each step's call batched by its rule.
            return _unrolled_scan(
                f, init_tree, carries, x_tree, x_leaves, length, reverse
            )
        if cell["c_tree"] != init_tree or not _promote_weak(
            carries, c_avals, cell["c_leaves"]
        ):
            break
    _check_carry(
        "scan body function carry output",
        init_tree,
        cell["c_tree"],
        c_avals,
        cell["c_leaves"],
    )
    out_weak = [a[2] and w for a, w in zip(c_avals, body.out_weak[:nc])] + list(
        body.out_weak[nc:]
    )
    # No carries and no ys: emit_control_flow emits nothing, unless the body
    # prints (then the loop runs for its effects).
    outs = transforms.emit_control_flow(
        "scan",
        carries + x_leaves + list(body.lifted),
        [body.program],
        num_carries=nc,
        num_xs=len(x_leaves),
        length=length,
        reverse=bool(reverse),
        weak=out_weak,
    )
    return (
        tree.unflatten(init_tree, outs[:nc]),
        tree.unflatten(cell["y_tree"], outs[nc:]),
    )


def _unrolled_scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init_tree: Any,
    carries: list,
    x_tree: Any,
    x_leaves: list,
    length: int,
    reverse: bool,
) -> tuple[Any, Any]:
    """``scan`` as ``length`` calls of ``f`` in the trace in progress (a
    vmap body, where calls with a batching rule are batched: the body
    could not be traced on its own), the ``y``s stacked in order."""
    c = tree.unflatten(init_tree, carries)
    ys: list = [None] * length
    for t in reversed(range(length)) if reverse else range(length):
        x = tree.unflatten(
            x_tree,
            [
                _lax.reshape(
                    _lax.slice(v, [t] + [0] * (v.ndim - 1), [t + 1, *v.shape[1:]]),
                    tuple(v.shape[1:]),
                )
                for v in x_leaves
            ],
        )
        c, ys[t] = _pair(f(c, x))
    y_leaves = [tree.flatten(y)[0] for y in ys]
    y_tree = tree.flatten(ys[0])[1]
    stacked = [
        _lax.concatenate(
            [
                _lax.reshape(_lax.as_tracer(col[t]), (1, *col[t].shape))
                for t in range(length)
            ],
            0,
        )
        for col in (list(z) for z in zip(*y_leaves))
    ]
    return c, tree.unflatten(y_tree, stacked)


# ---- while_loop / fori_loop ----


def _while_loop(
    cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any
) -> Any:
    """``val = body_fun(val)`` while ``cond_fun(val)`` is true, as
    ``jax.lax.while_loop``; returns the last ``val``.

    >>> bt.lax.while_loop(lambda x: x < 100, lambda x: x * 2, 1)   # 128

    ``cond_fun`` returns a boolean scalar; ``body_fun`` returns a value of
    ``init_val``'s pytree structure, shapes and dtypes (``TypeError``
    otherwise). The carry is updated in place (module docstring). Not
    differentiable in reverse mode (the trip count is not known when
    tracing), as in JAX; ``fori_loop`` with static bounds is.
    """
    if not is_tracing():
        return _eager(
            lambda v: while_loop(cond_fun, body_fun, v),
            f"while_loop({fun_name(body_fun)})",
            init_val,
        )
    init_leaves, init_tree = tree.flatten(init_val)
    carries = _as_tracers(init_leaves, "while_loop: each leaf of init_val")
    n = len(carries)
    cell: dict = {}

    def cond_fn(*ts: Any) -> list:
        p = cond_fun(tree.unflatten(init_tree, list(ts)))
        leaves = tree.leaves(p)
        if (
            len(leaves) != 1
            or aval_of(leaves[0])[0] != ()
            or str(aval_of(leaves[0])[1]) != "bool"
        ):
            got = (
                ", ".join(_type_str(aval_of(x)) for x in leaves)
                if all(hasattr(x, "shape") or is_python_scalar(x) for x in leaves)
                else type(p).__name__
            )
            raise TypeError(
                f"cond_fun must return a boolean scalar, but got output type(s) [{got}]"
            )
        return leaves

    def body_fn(*ts: Any) -> list:
        out = body_fun(tree.unflatten(init_tree, list(ts)))
        leaves, cell["tree"] = tree.flatten(out)
        cell["leaves"] = leaves
        return leaves

    name = fun_name(body_fun)
    round_ = hook.round_here()
    try:
        for _ in range(2):
            avals = [aval_of(c) for c in carries]
            body = trace(body_fn, avals, f"while_loop body({name})")
            if cell["tree"] != init_tree or not _promote_weak(
                carries, avals, cell["leaves"]
            ):
                break
        _check_carry("body_fun output", init_tree, cell["tree"], avals, cell["leaves"])
        cond = trace(cond_fn, avals, f"while_loop cond({fun_name(cond_fun)})")
    except hook.NestedRuleError:
        # A collective over a vmap axis (or a custom_vmap call) in a loop
        # made directly in a vmapped function: the loop runs over the
        # batched carry there (baton/_transform_batching.py).
        batcher = hook.transform_batchers.get("while_loop")
        if round_ is None or batcher is None:
            raise
        return batcher(cond_fun, body_fun, init_val, round_)
    lifted, (pc, pb) = unique_lifted(cond.lifted, body.lifted)
    params = avals + [aval_of(v) for v in lifted]
    cond_p = _over_union(cond, n, pc, params, "while_loop cond")
    body_p = _over_union(body, n, pb, params, f"while_loop body({name})")
    weak = [a[2] and w for a, w in zip(avals, body.out_weak)]
    outs = transforms.emit_control_flow(
        "while", carries + lifted, [cond_p, body_p], num_carries=n, weak=weak
    )
    return tree.unflatten(init_tree, outs)


def _static_int(x: Any) -> int | None:
    """x as a Python int when it is known while tracing, else None."""
    if isinstance(x, Tracer) or hasattr(x, "__jax_array__"):
        return None
    if isinstance(x, (bool, int, np.integer)) or (
        isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu"
    ):
        return int(x)
    return None


def _x64() -> bool:
    from baton import _dtypes

    return _dtypes.x64_enabled()


def _fits(value: int, dtype: np.dtype) -> bool:
    info = np.iinfo(dtype)
    return int(info.min) <= value <= int(info.max)


def _check_bound(what: str, value: int, dtype: np.dtype) -> None:
    """OverflowError (as JAX raises for a bound it cannot convert) unless
    ``value`` fits the loop counter's dtype: the counter takes every value
    up to ``upper``, and would wrap around silently past the dtype's range."""
    if _fits(value, dtype):
        return
    info = np.iinfo(dtype)
    hint = (
        ""
        if _x64() or dtype.itemsize >= 8
        else ", or enable 64-bit types (bt.config.update('enable_x64', True)) "
        "for an int64 counter"
    )
    raise OverflowError(
        f"fori_loop: {what} bound {value} does not fit the loop counter's dtype "
        f"{dtype.name} (range [{info.min}, {info.max}]); use bounds in that "
        f"range{hint}"
    )


def _fori_loop(
    lower: Any,
    upper: Any,
    body_fun: Callable[[Any, Any], Any],
    init_val: Any,
    *,
    unroll: int | bool | None = None,
) -> Any:
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``, as
    ``jax.lax.fori_loop``; returns the last ``val``.

    >>> bt.lax.fori_loop(0, 10, lambda i, x: x + i, 0)   # 45

    Bounds known when tracing make it a ``scan`` (differentiable in reverse
    mode); traced bounds a ``while_loop``. The carry is updated in place: a
    jitted loop over a donated 64 MiB carry needs no second copy. The
    counter is int32 (int64 with 64-bit types on, for bounds past int32); a
    bound outside its range raises ``OverflowError`` rather than letting the
    counter wrap around.
    """
    del unroll
    if not callable(body_fun):
        raise TypeError(
            f"fori_loop: body_fun must be callable, got {type(body_fun).__name__}"
        )
    for what, b in (("lower", lower), ("upper", upper)):
        if b is None:
            raise TypeError(
                f"fori_loop: {what} is None; pass an integer scalar (a Python "
                "int or an integer array of shape ())"
            )
    lo, hi = _static_int(lower), _static_int(upper)
    # A Python int bound becomes a weakly typed int32 (int64 with 64-bit
    # types on): out of that range it cannot be converted (OverflowError, as
    # in JAX), whatever the other bound is.
    widest = np.dtype(np.int64 if _x64() else np.int32)
    for what, b in (("lower", lower), ("upper", upper)):
        if isinstance(b, int) and not _fits(int(b), widest):
            _check_bound(what, int(b), widest)
    if not is_tracing():
        if lo is not None and hi is not None:
            return _eager(
                lambda v: fori_loop(lo, hi, body_fun, v),
                f"fori_loop({fun_name(body_fun)})",
                init_val,
            )
        return _eager(
            lambda a, b, v: fori_loop(a, b, body_fun, v),
            f"fori_loop({fun_name(body_fun)})",
            lower,
            upper,
            init_val,
        )
    # The carry's leaves as values of this trace (errors name fori_loop).
    init_leaves, init_tree = tree.flatten(init_val)
    init_val = tree.unflatten(
        init_tree, _as_tracers(init_leaves, "fori_loop: each leaf of init_val")
    )
    if lo is not None and hi is not None:
        dtype = np.result_type(
            *[
                np.asarray(b).dtype
                if isinstance(b, (np.integer, np.ndarray))
                else np.int32
                for b in (lower, upper)
            ]
        )
        if dtype == np.int64:
            dtype = np.dtype(np.int32)
        if _x64() and dtype == np.int32 and not (_fits(lo, dtype) and _fits(hi, dtype)):
            dtype = np.dtype(np.int64)  # 64-bit types on: a wider counter
        for what, b in (("lower", lo), ("upper", hi)):
            _check_bound(what, b, dtype)
        i0 = _lax.convert_element_type(_lax.as_tracer(lo), dtype.name)

        def step(carry: Any, _: Any) -> tuple:
            i, v = carry
            v = body_fun(i, v)  # first: the body's reads of i come before i + 1
            return (i + 1, v), None

        (_, out), _ = scan(step, (i0, init_val), None, length=builtins.max(hi - lo, 0))
        return out
    lo_t = _as_tracer(lower, "fori_loop: lower")
    hi_t = _as_tracer(upper, "fori_loop: upper")
    lo_a, hi_a = aval_of(lo_t), aval_of(hi_t)
    if lo_a[1] != hi_a[1] and not (lo_a[2] or hi_a[2]):
        raise TypeError(
            "lower and upper arguments to fori_loop must have equal types, got "
            f"{lo_a[1]} and {hi_a[1]}"
        )
    dtype = np.dtype(hi_a[1] if lo_a[2] else lo_a[1])
    if dtype.kind not in "iu":
        raise TypeError(
            f"fori_loop: lower and upper must be integers, got {dtype.name}"
        )
    for what, b in (("lower", lo), ("upper", hi)):
        if b is not None:
            _check_bound(what, b, dtype)
    lo_t = _lax.convert_element_type(lo_t, dtype.name)
    hi_t = _lax.convert_element_type(hi_t, dtype.name)

    def w_cond(c: Any) -> Any:
        return c[0] < c[1]

    def w_body(c: Any) -> Any:
        i, h, v = c
        v = body_fun(i, v)
        return (i + 1, h, v)

    return while_loop(w_cond, w_body, (lo_t, hi_t, init_val))[2]


# ---- cond / switch ----


def _branches_program(
    branches: Sequence[Callable[..., Any]], operands: tuple, what: str
) -> tuple[list, list, Any, list]:
    """Traces every branch over ``operands``; returns (programs over the
    operand leaves + the union of closed-over values, operand values, output
    tree, output weak flags). TypeError unless all return one structure of
    one set of types."""
    op_leaves, op_tree = tree.flatten(operands)
    op_leaves = _as_tracers(op_leaves, f"{what}: each operand leaf")
    avals = [aval_of(x) for x in op_leaves]
    n = len(op_leaves)
    traced, trees, leaves_of = [], [], []
    for k, br in enumerate(branches):
        cell: dict = {}

        def fn(*ts: Any, br: Any = br, cell: dict = cell) -> list:
            out = br(*tree.unflatten(op_tree, list(ts)))
            leaves, cell["tree"] = tree.flatten(out)
            cell["leaves"] = leaves
            return leaves

        traced.append(trace(fn, avals, f"{what} branch {k}({fun_name(br)})"))
        trees.append(cell["tree"])
        leaves_of.append(cell["leaves"])
    names = "true_fun and false_fun" if what == "cond" else "branches"
    # Messages list cond's branches true first (they are traced false first,
    # index 0 being false).
    shown = [1, 0] if what == "cond" else list(range(len(branches)))
    for k in shown[1:]:
        if trees[k] != trees[shown[0]]:
            raise TypeError(
                f"{names} output must have same type structure, got "
                f"{trees[shown[0]]} and {trees[k]}"
            )
    # Types: equal shapes and dtypes (weak types may differ: the result is
    # weak only where every branch's is), as JAX.
    out_avals = [[aval_of(x) for x in ls] for ls in leaves_of]
    for i in range(len(out_avals[0])):
        col = [out_avals[k][i] for k in shown]
        if len({(tuple(a[0]), a[1]) for a in col}) > 1:
            raise TypeError(
                f"{names} output must have identical types, got "
                + " and ".join(_type_str(a) for a in col)
            )
    lifted, positions = unique_lifted(*(t.lifted for t in traced))
    params = avals + [aval_of(v) for v in lifted]
    programs = []
    for k, t in enumerate(traced):

        def fn(*ps: Any, t: Any = t, pos: list = positions[k]) -> list:
            return inline(t.program, list(ps[:n]) + [ps[n + p] for p in pos])

        programs.append(trace(fn, params, f"{what} branch {k}").program)
    weak = [all(a[i][2] for a in out_avals) for i in range(len(out_avals[0]))]
    return programs, op_leaves + lifted, trees[0], weak


def _index_tracer(index: Any, what: str) -> Any:
    if index is None:
        raise TypeError(
            f"{what} is None; pass a scalar (a bool or integer array, or a "
            "Python bool/int)"
        )
    t = _as_tracer(index, what)
    if tuple(t.shape) != ():
        raise TypeError(
            f"{what} must be a scalar, got an array of shape {tuple(t.shape)}"
        )
    return t


def _cond(
    pred: Any,
    true_fun: Callable[..., Any],
    false_fun: Callable[..., Any],
    *operands: Any,
    operand: Any = None,
) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, as
    ``jax.lax.cond``: both branches are traced, one runs. ``pred`` is a
    scalar boolean (or number: nonzero is true).

    >>> bt.lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x)

    Both branches return the same pytree structure, shapes and dtypes
    (``TypeError`` otherwise, as JAX; weak types may differ).
    """
    if operand is not None:
        operands = (*operands, operand)
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("cond: true_fun and false_fun must be callable")
    if pred is None:
        # TypeError, as jax.lax.cond raises for it.
        raise TypeError(
            "cond: pred is None; pass a scalar predicate (a bool or number "
            "array of shape (), or a Python bool/int)"
        )
    if not is_tracing():
        return _eager(
            lambda p, ops: cond(p, true_fun, false_fun, *ops),
            "cond",
            pred,
            operands,
        )
    p = _index_tracer(pred, "Pred")
    if str(p.dtype) != "bool":
        p = _lax.ne(p, _lax.zeros((), str(p.dtype)))
    index = _lax.convert_element_type(p, "int32")
    return _switch(index, [false_fun, true_fun], operands, "cond")


def _switch_entry(
    index: Any,
    branches: Sequence[Callable[..., Any]],
    *operands: Any,
    operand: Any = None,
) -> Any:
    """``branches[index](*operands)``, as ``jax.lax.switch``: every branch
    is traced, one runs; ``index`` is clamped to ``[0, len(branches) - 1]``.

    >>> bt.lax.switch(k, [lambda v: v, lambda v: v * 2, jnp.sin], x)
    """
    if operand is not None:
        operands = (*operands, operand)
    branches = list(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if not all(callable(b) for b in branches):
        raise TypeError("switch: every branch must be callable")
    if index is None:
        raise TypeError(
            "switch: index is None; pass an integer scalar (an integer array "
            "of shape (), or a Python int)"
        )
    if not is_tracing():
        return _eager(
            lambda i, ops: switch(i, branches, *ops), "switch", index, operands
        )
    i = _index_tracer(index, "Branch index")
    kind = np.dtype(i.dtype).kind if str(i.dtype) != "bool" else "b"
    if kind not in "iu":
        raise TypeError(f"Branch index must be an integer scalar, got {i.dtype}")
    i = _lax.convert_element_type(i, "int32")
    if len(branches) == 1:
        return branches[0](*operands)
    return _switch(i, branches, operands, "switch")


def _switch(index: Any, branches: list, operands: tuple, what: str) -> Any:
    try:
        programs, values, out_tree, weak = _branches_program(branches, operands, what)
    except hook.NestedRuleError:
        if hook.round_here() is None:
            raise
        # A collective over a vmap axis (or a custom_vmap call) in a branch
        # of a cond made directly in a vmapped function: every branch is
        # computed there, each call batched by its rule, and the index
        # selects (as vmap of a cond with a batched predicate does).
        return _selected_branches(index, branches, operands, what)
    outs = transforms.emit_control_flow("case", [index, *values], programs, weak=weak)
    return tree.unflatten(out_tree, outs)


def _selected_branches(index: Any, branches: list, operands: tuple, what: str) -> Any:
    """Every branch's result, the one ``index`` (clamped) picks selected
    leaf by leaf."""
    outs = [tree.flatten(br(*operands)) for br in branches]
    out_tree = outs[0][1]
    for leaves, t in outs[1:]:
        if t != out_tree:
            raise TypeError(
                f"{what}: the branches' outputs must have the same structure, "
                f"got {out_tree} and {t}"
            )
    last = _lax.full((), len(branches) - 1, "int32")
    k = _lax.minimum(_lax.maximum(index, _lax.zeros((), "int32")), last)
    picked = []
    for i in range(len(outs[0][0])):
        acc = _lax.as_tracer(outs[-1][0][i])
        for b in range(len(branches) - 2, -1, -1):
            v = _lax.as_tracer(outs[b][0][i])
            is_b = _lax.eq(k, _lax.full((), b, "int32"))
            acc = _lax.select(
                _lax.broadcast_in_dim(is_b, tuple(v.shape), []), v, acc
            )
        picked.append(acc)
    return tree.unflatten(out_tree, picked)


# ---- map ----


# ---- bt.Refs used by the functions (_ref_state) ----
#
# Each public function runs its implementation; when a function it traces
# writes to bt.Refs created outside it, it runs again with those Refs'
# values as extra carries / operands and outputs (outside any trace: as
# donated arguments of the fresh jit), and the new values go back into the
# Refs.


def _pair(out: Any) -> tuple:
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(
            f"scan body output must be a pair (carry, y), got {type(out).__name__}"
        )
    return out[0], out[1]


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
    _split_transpose: bool = False,
) -> tuple[Any, Any]:
    return _ref_state.threading_refs(
        lambda: _scan(f, init, xs, length, reverse, unroll, _split_transpose),
        lambda refs: _scan_refs(refs, f, init, xs, length, reverse),
    )


def _scan_refs(
    refs: list, f: Any, init: Any, xs: Any, length: Any, reverse: bool
) -> Any:
    name = f"scan({fun_name(f)})"
    if not is_tracing():
        return _ref_state.eager_threaded(
            refs,
            _eager,
            lambda i, x: scan(f, i, x, length=length, reverse=reverse),
            name,
            init,
            xs,
        )

    def step(c: Any, x: Any) -> tuple:
        c0, vals = c
        _ref_state.bind_all(refs, vals)
        c1, y = _pair(f(c0, x))
        return (c1, _ref_state.finals_of(refs, name)), y

    step.__name__ = step.__qualname__ = fun_name(f)
    init2 = (init, _ref_state.values_of(refs, name))
    (c, vals), ys = _scan(step, init2, xs, length, reverse)
    _ref_state.write_all(refs, vals, name)
    return c, ys


def while_loop(
    cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any
) -> Any:
    return _ref_state.threading_refs(
        lambda: _while_loop(cond_fun, body_fun, init_val),
        lambda refs: _while_refs(refs, cond_fun, body_fun, init_val),
    )


def _while_refs(refs: list, cond_fun: Any, body_fun: Any, init_val: Any) -> Any:
    name = f"while_loop({fun_name(body_fun)})"
    if not is_tracing():
        return _ref_state.eager_threaded(
            refs, _eager, lambda v: while_loop(cond_fun, body_fun, v), name, init_val
        )

    def cond2(v: Any) -> Any:
        c, vals = v
        _ref_state.bind_all(refs, vals)
        p = cond_fun(c)
        if any(r._value is not t for r, t in zip(refs, vals)):
            raise ValueError(
                f"while_loop({fun_name(cond_fun)}): cond_fun writes to a bt.Ref; "
                "the loop condition may read Refs but not update them (move the "
                "update into body_fun)"
            )
        return p

    def body2(v: Any) -> Any:
        c, vals = v
        _ref_state.bind_all(refs, vals)
        c1 = body_fun(c)
        return c1, _ref_state.finals_of(refs, name)

    cond2.__name__ = cond2.__qualname__ = fun_name(cond_fun)
    body2.__name__ = body2.__qualname__ = fun_name(body_fun)
    out, vals = _while_loop(cond2, body2, (init_val, _ref_state.values_of(refs, name)))
    _ref_state.write_all(refs, vals, name)
    return out


def fori_loop(
    lower: Any,
    upper: Any,
    body_fun: Callable[[Any, Any], Any],
    init_val: Any,
    *,
    unroll: int | bool | None = None,
) -> Any:
    return _ref_state.threading_refs(
        lambda: _fori_loop(lower, upper, body_fun, init_val, unroll=unroll),
        lambda refs: _fori_refs(refs, lower, upper, body_fun, init_val),
    )


def _fori_refs(refs: list, lower: Any, upper: Any, body_fun: Any, init_val: Any) -> Any:
    if is_tracing():
        # Traced, fori_loop is a scan or while_loop, which thread the Refs.
        return _fori_loop(lower, upper, body_fun, init_val)
    name = f"fori_loop({fun_name(body_fun)})"
    lo, hi = _static_int(lower), _static_int(upper)
    if lo is not None and hi is not None:
        return _ref_state.eager_threaded(
            refs, _eager, lambda v: fori_loop(lo, hi, body_fun, v), name, init_val
        )
    return _ref_state.eager_threaded(
        refs,
        _eager,
        lambda a, b, v: fori_loop(a, b, body_fun, v),
        name,
        lower,
        upper,
        init_val,
    )


def _threaded_branch(refs: list, br: Any, what: str) -> Any:
    def run(vals: list, *ops: Any) -> tuple:
        _ref_state.bind_all(refs, vals)
        out = br(*ops)
        return out, _ref_state.finals_of(refs, what)

    run.__name__ = run.__qualname__ = fun_name(br)
    return run


def cond(
    pred: Any,
    true_fun: Callable[..., Any],
    false_fun: Callable[..., Any],
    *operands: Any,
    operand: Any = None,
) -> Any:
    return _ref_state.threading_refs(
        lambda: _cond(pred, true_fun, false_fun, *operands, operand=operand),
        lambda refs: _cond_refs(refs, pred, true_fun, false_fun, operands, operand),
    )


def _cond_refs(
    refs: list, pred: Any, true_fun: Any, false_fun: Any, operands: tuple, operand: Any
) -> Any:
    if operand is not None:
        operands = (*operands, operand)
    if not is_tracing():
        return _ref_state.eager_threaded(
            refs,
            _eager,
            lambda p, ops: cond(p, true_fun, false_fun, *ops),
            "cond",
            pred,
            operands,
        )
    out, vals = _cond(
        pred,
        _threaded_branch(refs, true_fun, "cond"),
        _threaded_branch(refs, false_fun, "cond"),
        _ref_state.values_of(refs, "cond"),
        *operands,
    )
    _ref_state.write_all(refs, vals, "cond")
    return out


def switch(
    index: Any,
    branches: Sequence[Callable[..., Any]],
    *operands: Any,
    operand: Any = None,
) -> Any:
    return _ref_state.threading_refs(
        lambda: _switch_entry(index, branches, *operands, operand=operand),
        lambda refs: _switch_refs(refs, index, branches, operands, operand),
    )


def _switch_refs(
    refs: list, index: Any, branches: Any, operands: tuple, operand: Any
) -> Any:
    if operand is not None:
        operands = (*operands, operand)
    branches = list(branches)
    if not is_tracing():
        return _ref_state.eager_threaded(
            refs,
            _eager,
            lambda i, ops: switch(i, branches, *ops),
            "switch",
            index,
            operands,
        )
    out, vals = _switch_entry(
        index,
        [_threaded_branch(refs, b, "switch") for b in branches],
        _ref_state.values_of(refs, "switch"),
        *operands,
    )
    _ref_state.write_all(refs, vals, "switch")
    return out


for _public, _impl in (
    (scan, _scan),
    (while_loop, _while_loop),
    (fori_loop, _fori_loop),
    (cond, _cond),
    (switch, _switch_entry),
):
    _public.__doc__ = (_impl.__doc__ or "") + """
    bt.Refs: the functions may read and update Refs created outside them
    (``x_ref[i] += 1`` in a loop body), as in JAX; the Refs' values are
    threaded through as extra carries / operands (updated in place), and
    their final values are in the Refs afterwards.
    """
del _public, _impl


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:
    """``f`` applied to each slice of ``xs`` along its leading axis, the
    results stacked, as ``jax.lax.map`` (a ``scan`` without a carry: each
    result is written into its slice of the final buffer).
    """
    if batch_size is not None:
        raise NotImplementedError("lax.map: batch_size is not supported")
    _, ys = scan(lambda c, x: (c, f(x)), (), xs)
    return ys
