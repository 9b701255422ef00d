"""``bt.lax.reduce_window`` and ``reduce_window_shape_tuple`` (JAX's
names and signatures), composed from other baton operations.

The operand is padded with the init value (``lax.pad``: ``padding`` at the
edges, ``base_dilation - 1`` between elements, as XLA's ReduceWindow
does); each window offset's strided view (``lax.slice``, the offset scaled
by ``window_dilation``) is then folded into the result with the
computation. ``lax.add``/``mul``/``max``/``min`` (baton's, JAX's, numpy's
or ``operator``'s) are recognised and folded with baton's elementwise op;
any other computation -- a Python function of two scalars, or of two
tuples for several operands -- is called on the whole views, so it must be
built of elementwise operations (as a ``jax.lax.reduce_window`` body is).
The init value is folded in once per window unless it is the op's identity
(XLA's semantics). Gradients and vmap come from the operations used.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

import baton.numpy as bnp
from baton import _ops, tree
from baton._baton import lax
from baton._lax_conv import _dilate_dim, _stride_dim, padtype_to_pads


def _t(x: Any) -> Any:
    return _ops.as_tracer(x)


def reduce_window_shape_tuple(
    operand_shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> tuple[int, ...]:
    """The result shape of ``reduce_window`` with explicit ``(low, high)``
    padding (JAX's function)."""
    shape = [int(d) for d in operand_shape]
    window = [int(w) for w in window_dimensions]
    if base_dilation is not None:
        shape = [_dilate_dim(d, int(b)) for d, b in zip(shape, base_dilation)]
    if window_dilation is not None:
        window = [_dilate_dim(w, int(r)) for w, r in zip(window, window_dilation)]
    padded = [d + int(lo) + int(hi) for d, (lo, hi) in zip(shape, padding)]
    return tuple(
        _stride_dim(p, w, int(s)) for p, w, s in zip(padded, window, window_strides)
    )


def _monoid(computation: Callable) -> str | None:
    """'add', 'mul', 'max' or 'min' when ``computation`` is a known
    elementwise function of that monoid: ``operator``'s, ``baton.numpy``'s
    or ``bt.lax``'s (unwrapped from its eager wrapper). ``bt.lax.max`` and
    ``min`` count as JAX's elementwise ``lax.max``/``lax.min``, which is
    what reduce_window code passes."""
    fn = getattr(computation, "__wrapped__", computation)
    known: dict[str, tuple[Any, ...]] = {
        "add": (operator.add, bnp.add, lax.add),
        "mul": (operator.mul, bnp.multiply, lax.mul),
        "max": (bnp.maximum, lax.maximum, lax.max),
        "min": (bnp.minimum, lax.minimum, lax.min),
    }
    for name, fns in known.items():
        if any(fn is f for f in fns):
            return name
    return None


_APPLY = {
    "add": lax.add,
    "mul": lax.mul,
    "max": lax.maximum,
    "min": lax.minimum,
}


def _chooser(kind: str, dtype: np.dtype) -> Callable[[Any, Any], Any]:
    """max or min of (acc, v) as a choice: ``v`` replaces ``acc`` only when
    strictly better (or NaN, which max and min propagate), so of equal
    elements the first in the window is chosen and alone gets the
    gradient -- JAX's rule for max and min pooling (select_and_scatter)."""
    better = lax.gt if kind == "max" else lax.lt
    is_float = (
        np.issubdtype(np.dtype(dtype), np.floating) or np.dtype(dtype).kind == "V"
    )

    def choose(acc: Any, v: Any) -> Any:
        take = better(v, acc)
        if is_float:
            take = lax.bitwise_or(take, lax.ne(v, v))
        return lax.select(take, v, acc)

    return choose


def _identity(kind: str, dtype: np.dtype) -> Any:
    if kind == "add":
        return 0
    if kind == "mul":
        return 1
    if dtype == np.bool_:
        return kind == "min"
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.min if kind == "max" else info.max
    return -np.inf if kind == "max" else np.inf


def _is_identity(kind: str, init: Any, dtype: np.dtype) -> bool:
    if isinstance(init, lax.Tracer):
        return False
    try:
        v = np.asarray(init)
    except Exception:
        return False
    if v.shape != ():
        return False
    return bool(v == _identity(kind, dtype))


def _ints(values: Any, n: int, what: str) -> tuple[int, ...]:
    try:
        out = tuple(operator.index(v) for v in values)
    except TypeError as e:
        raise TypeError(
            f"reduce_window: {what} must be a sequence of ints, got {values!r}"
        ) from e
    if len(out) != n:
        raise ValueError(
            f"reduce_window: {what} must have one entry per operand dimension "
            f"({n}), got {values!r}"
        )
    return out


def reduce_window(
    operand: Any,
    init_value: Any,
    computation: Callable,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Reduction over padded, strided, dilated windows (JAX's
    ``reduce_window``, XLA's ReduceWindow).

    ``operand`` an array or a pytree of arrays of one shape, ``init_value``
    a scalar or the same pytree of scalars, ``computation`` the reduction of
    two values (two pytrees): ``lax.add``, ``lax.max``, ... or any function
    built of elementwise operations. ``padding`` ``'VALID'``, ``'SAME'``,
    ``'SAME_LOWER'`` or ``(low, high)`` pairs, filled with the init value.
    """
    flat, treedef = tree.flatten(operand)
    flat_init, init_def = tree.flatten(init_value)
    if treedef != init_def:
        raise ValueError(
            "Operands must have the same tree structure as init_values: "
            f"{treedef} vs. {init_def}"
        )
    if not flat:
        raise ValueError("reduce_window must have at least one operand.")
    xs = [_t(x) for x in flat]
    shape = tuple(int(d) for d in xs[0].shape)
    for x in xs[1:]:
        if tuple(x.shape) != shape:
            raise ValueError(
                f"reduce_window: the operands must have one shape, got "
                f"{shape} and {tuple(x.shape)}"
            )
    nd = len(shape)
    window = _ints(window_dimensions, nd, "window_dimensions")
    strides = (
        (1,) * nd
        if window_strides is None
        else _ints(window_strides, nd, "window_strides")
    )
    base = (
        (1,) * nd
        if base_dilation is None
        else _ints(base_dilation, nd, "base_dilation")
    )
    wdil = (
        (1,) * nd
        if window_dilation is None
        else _ints(window_dilation, nd, "window_dilation")
    )
    if any(v < 1 for v in strides + base + wdil):
        raise ValueError("reduce_window: strides and dilations must be positive")
    if any(w < 0 for w in window):
        raise ValueError(f"reduce_window: window_dimensions must be >= 0, got {window}")
    if isinstance(padding, str):
        eff = [_dilate_dim(w, r) for w, r in zip(window, wdil)]
        pads = tuple(padtype_to_pads(shape, eff, strides, padding))
    else:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        if len(pads) != nd:
            raise ValueError(
                f"reduce_window: padding must have one (low, high) pair per "
                f"operand dimension ({nd}), got {padding}"
            )
    inits = []
    for x, v in zip(xs, flat_init):
        if isinstance(v, lax.Tracer):
            if tuple(v.shape) != ():
                raise ValueError(
                    "reduce_window: init values must be scalars, got shape "
                    f"{tuple(v.shape)}"
                )
            inits.append(lax.convert_element_type(v, x.dtype))
        else:
            a = np.asarray(v)
            if a.shape != ():
                raise ValueError(
                    f"reduce_window: init values must be scalars, got shape {a.shape}"
                )
            inits.append(lax.full((), a.item(), x.dtype))
    out_shape = reduce_window_shape_tuple(shape, window, strides, pads, base, wdil)
    kind = _monoid(computation) if len(xs) == 1 else None

    offsets = list(itertools.product(*(range(w) for w in window)))
    if 0 in out_shape or not offsets:
        outs = [lax.broadcast_to(v, out_shape) for v in inits]
        return tree.unflatten(treedef, outs)
    dilate = any(p != (0, 0) for p in pads) or any(b != 1 for b in base)
    lows = tuple(lo for lo, _ in pads)
    highs = tuple(hi for _, hi in pads)
    interior = tuple(b - 1 for b in base)

    def view(x: Any, offset: tuple[int, ...], slicer: Any = lax.slice) -> Any:
        start = [o * r for o, r in zip(offset, wdil)]
        limit = [s + (n - 1) * st + 1 for s, n, st in zip(start, out_shape, strides)]
        return slicer(x, start, limit, strides)

    if kind is not None:
        # Padding and holes hold the op's identity; the init is folded once.
        dt = xs[0].dtype
        x = xs[0]
        if dilate:
            x = lax.pad(x, lax.full((), _identity(kind, dt), dt), lows, highs, interior)
        op = _APPLY[kind]
        fold = _chooser(kind, dt) if kind in ("max", "min") else op
        acc = None
        for off in offsets:
            v = view(x, off)
            acc = v if acc is None else fold(acc, v)
        if not _is_identity(kind, flat_init[0], dt):
            acc = op(lax.broadcast_to(inits[0], out_shape), acc)
        return tree.unflatten(treedef, [acc])

    # Any other computation: padding and holes are no elements (XLA skips
    # them), so each offset's view is folded in only where it is real.
    padded = []
    for x in xs:
        if dilate:
            x = lax.pad(x, lax.full((), 0, x.dtype), lows, highs, interior)
        padded.append(x)
    real = np.ones(shape, np.bool_)
    if dilate:
        real = _np_pad(real, lows, highs, interior)

    def np_slice(a: np.ndarray, start: list, limit: list, st: tuple) -> np.ndarray:
        return a[tuple(slice(b, e, s) for b, e, s in zip(start, limit, st))]

    acc = [lax.broadcast_to(v, out_shape) for v in inits]
    for off in offsets:
        mask = view(real, off, np_slice)
        if not mask.any():
            continue
        vs = tree.unflatten(treedef, [view(x, off) for x in padded])
        new = computation(tree.unflatten(treedef, acc), vs)
        got, got_def = tree.flatten(new)
        if got_def != treedef:
            raise ValueError(
                "reduce_window output must have the same tree structure as the "
                f"operands {treedef} vs. {got_def}"
            )
        got = [lax.convert_element_type(_t(g), x.dtype) for g, x in zip(got, xs)]
        if mask.all():
            acc = got
        else:
            acc = [lax.select(mask, g, a) for g, a in zip(got, acc)]
    return tree.unflatten(treedef, acc)


def _np_pad(
    a: np.ndarray,
    lows: tuple[int, ...],
    highs: tuple[int, ...],
    interior: tuple[int, ...],
) -> np.ndarray:
    """numpy's ``a`` padded as ``lax.pad`` pads (False fill, negative crops)."""
    for d, (lo, hi, it) in enumerate(zip(lows, highs, interior)):
        if it:
            n = a.shape[d]
            shape = list(a.shape)
            shape[d] = n + (n - 1) * it if n else 0
            b = np.zeros(shape, a.dtype)
            idx = [slice(None)] * a.ndim
            idx[d] = slice(None, None, it + 1)
            b[tuple(idx)] = a
            a = b
        widths = [(0, 0)] * a.ndim
        widths[d] = (max(lo, 0), max(hi, 0))
        a = np.pad(a, widths)
        idx = [slice(None)] * a.ndim
        idx[d] = slice(max(-lo, 0), a.shape[d] - max(-hi, 0))
        a = a[tuple(idx)]
    return a


__all__ = ["reduce_window", "reduce_window_shape_tuple"]

# Not operations on arrays: bt.lax leaves them unwrapped.
NOT_OPERATIONS = frozenset({"reduce_window_shape_tuple"})
# Take a Python function: traced afresh on each eager call.
TAKES_FUNCTIONS = frozenset({"reduce_window"})
