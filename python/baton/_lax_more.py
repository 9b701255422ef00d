"""More of ``jax.lax``'s names, composed from other baton operations:
``associative_scan``, ``reduce``, ``index_take``, ``mulhi``,
``scatter_apply``, ``approx_max_k``/``approx_min_k``, ``ragged_dot``,
``round`` with JAX's ``RoundingMethod``, ``dot_general`` with JAX's keyword
arguments, ``optimization_barrier``, ``platform_dependent``, ``composite``,
``stage``, ``shape_as_value`` and the ``DotDimensionNumbers`` /
``PrecisionLike`` type aliases.

Functions taking a Python callable (TAKES_FUNCTIONS) are traced afresh on
each eager call by ``baton.lax``; the rest run compiled, as every
``bt.lax`` operation does.
"""

from __future__ import annotations

import enum
import functools
import math
import operator
from collections.abc import Sequence
from typing import Any, Callable, Union

import numpy as np

import baton.numpy as bnp
from baton import _ops, tree
from baton._baton import lax
from baton._control_flow import while_loop
from baton._lax_math import (
    reduce_and,
    reduce_max,
    reduce_min,
    reduce_or,
    reduce_prod,
    reduce_sum,
)
from baton._lax_precision import Precision
from baton._lax_scatter import ScatterDimensionNumbers, _scatter
from baton._lax_slicing import rev, top_k
from baton._lax_window import _APPLY, _is_identity, _monoid

_I32 = np.dtype(np.int32)

# The dimension numbers of dot_general: ((lhs_contracting, rhs_contracting),
# (lhs_batch, rhs_batch)), as in JAX.
DotDimensionNumbers = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]

# What a ``precision=`` argument may be (JAX's alias, less the DotAlgorithm
# classes baton does not have).
PrecisionLike = Union[
    None, str, Precision, tuple[str, str], tuple[Precision, Precision]
]


def _t(x: Any) -> Any:
    return _ops.as_tracer(x)


# ---- contractions ----


def dot_general(
    lhs: Any,
    rhs: Any,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """The general tensor contraction (JAX's ``dot_general``):
    ``dimension_numbers`` is ``((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch))``; the result's dimensions are the batch ones,
    then lhs's free ones, then rhs's. ``precision`` is accepted (float32 is
    always contracted in full float32); ``preferred_element_type`` is the
    accumulation and result dtype. ``out_sharding`` must be None."""
    if out_sharding is not None:
        raise ValueError("dot_general: out_sharding is not supported; leave it None")
    a, b = _t(lhs), _t(rhs)
    if preferred_element_type is not None:
        pt = np.dtype(preferred_element_type)
        a, b = lax.convert_element_type(a, pt), lax.convert_element_type(b, pt)
    return lax.dot_general(a, b, dimension_numbers)


def ragged_dot(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Grouped matrix products (JAX's ``ragged_dot``): ``lhs`` ``(m, k)``'s
    rows are split into consecutive groups of ``group_sizes`` ``(g,)``
    rows, and group i is multiplied by ``rhs[i]`` (``rhs`` ``(g, k, n)``);
    rows past the groups' total give zeros. Result ``(m, n)``."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not supported")
    if out_sharding is not None:
        raise ValueError("ragged_dot: out_sharding is not supported; leave it None")
    a, b, gs = _t(lhs), _t(rhs), _t(group_sizes)
    if len(a.shape) != 2 or len(b.shape) != 3 or len(gs.shape) != 1:
        raise TypeError(
            "ragged_dot: lhs must be (m, k), rhs (g, k, n) and group_sizes (g,), "
            f"got shapes {tuple(a.shape)}, {tuple(b.shape)}, {tuple(gs.shape)}"
        )
    m, k = int(a.shape[0]), int(a.shape[1])
    g, k2, _ = (int(d) for d in b.shape)
    if k != k2 or int(gs.shape[0]) != g:
        raise TypeError(
            f"ragged_dot: shapes {tuple(a.shape)}, {tuple(b.shape)} and "
            f"{tuple(gs.shape)} do not agree (k and g must match)"
        )
    if not np.issubdtype(gs.dtype, np.integer):
        raise TypeError(f"ragged_dot: group_sizes must be integers, got {gs.dtype}")
    if preferred_element_type is not None:
        pt = np.dtype(preferred_element_type)
        a, b = lax.convert_element_type(a, pt), lax.convert_element_type(b, pt)
    sizes = lax.convert_element_type(gs, _I32)
    ends = bnp.cumsum(sizes)
    starts = lax.sub(ends, sizes)
    rows = lax.iota(_I32, (g, m), 1)
    inside = lax.bitwise_and(
        lax.ge(rows, lax.broadcast_in_dim(starts, (g, m), (0,))),
        lax.lt(rows, lax.broadcast_in_dim(ends, (g, m), (0,))),
    )
    dt = np.result_type(a.dtype, b.dtype)
    mask = lax.convert_element_type(inside, dt)  # (g, m)
    per_group = lax.dot_general(a, b, (((1,), (1,)), ((), ())))  # (m, g, n)
    out = lax.dot_general(mask, per_group, (((0,), (1,)), ((1,), (0,))))  # (m, n)
    return lax.convert_element_type(out, dt)


class RaggedDotDimensionNumbers:
    """The dimensions of a ``ragged_dot_general`` (JAX's class):
    ``dot_dimension_numbers`` as ``dot_general``'s, the lhs's one ragged
    dimension and the rhs's group dimension (none or one)."""

    __slots__ = (
        "dot_dimension_numbers",
        "lhs_ragged_dimensions",
        "rhs_group_dimensions",
    )

    def __init__(
        self,
        dot_dimension_numbers: Any,
        lhs_ragged_dimensions: Any,
        rhs_group_dimensions: Any,
    ) -> None:
        object.__setattr__(
            self,
            "dot_dimension_numbers",
            tuple(
                tuple(tuple(int(d) for d in s) for s in t)
                for t in dot_dimension_numbers
            ),
        )
        object.__setattr__(
            self, "lhs_ragged_dimensions", tuple(int(d) for d in lhs_ragged_dimensions)
        )
        object.__setattr__(
            self, "rhs_group_dimensions", tuple(int(d) for d in rhs_group_dimensions)
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("RaggedDotDimensionNumbers is immutable")

    def _key(self) -> tuple:
        return (
            self.dot_dimension_numbers,
            self.lhs_ragged_dimensions,
            self.rhs_group_dimensions,
        )

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, RaggedDotDimensionNumbers) and self._key() == other._key()
        )

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            "RaggedDotDimensionNumbers("
            f"dot_dimension_numbers={self.dot_dimension_numbers}, "
            f"lhs_ragged_dimensions={self.lhs_ragged_dimensions}, "
            f"rhs_group_dimensions={self.rhs_group_dimensions})"
        )


def ragged_dot_general(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
    precision: Any = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Ragged matrix products (JAX's ``ragged_dot_general``), in its three
    modes by the kind of the lhs's ragged dimension: non-contracting (the
    rhs has a group dimension; ``[b.., m.., k..] x [g, b.., k.., n..] ->
    [b.., m.., n..]``), contracting (``-> [g, b.., m.., n..]``, one product
    per group's slice of the contraction) or batch (a plain
    ``dot_general``, as JAX computes it). ``group_sizes`` is ``[b.., x..,
    g]`` (``x``: the lhs's dimensions of the ragged one's kind outside it)
    or ``[g]``. Computed as masked products, one per group."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported")
    if out_sharding is not None:
        raise ValueError(
            "ragged_dot_general: out_sharding is not supported; leave it None"
        )
    dn = ragged_dot_dimension_numbers
    if not isinstance(dn, RaggedDotDimensionNumbers):
        raise TypeError(
            "ragged_dot_general: ragged_dot_dimension_numbers must be a "
            f"RaggedDotDimensionNumbers, got {type(dn).__name__}"
        )
    a, b, gs = _t(lhs), _t(rhs), _t(group_sizes)
    if preferred_element_type is not None:
        pt = np.dtype(preferred_element_type)
        a, b = lax.convert_element_type(a, pt), lax.convert_element_type(b, pt)
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    if len(dn.lhs_ragged_dimensions) != 1:
        raise ValueError(
            "ragged_dot_general: lhs must have exactly one ragged dimension"
        )
    r = dn.lhs_ragged_dimensions[0] % len(a.shape)
    groups = dn.rhs_group_dimensions
    if len(groups) > 1:
        raise ValueError("ragged_dot_general: rhs may have at most one group dimension")
    if not np.issubdtype(np.dtype(gs.dtype), np.integer):
        raise TypeError(
            f"ragged_dot_general: group_sizes must be integers, got {gs.dtype}"
        )
    dt = np.result_type(a.dtype, b.dtype)
    if r in lb:
        if groups:
            raise ValueError(
                "ragged_dot_general: a ragged batch dimension takes no rhs group "
                "dimension"
            )
        return lax.convert_element_type(lax.dot_general(a, b, ((lc, rc), (lb, rb))), dt)
    g = int(gs.shape[-1])
    nd = len(a.shape)
    if r in lc:
        kind = [d for d in lc if d < r]
    else:
        if not groups:
            raise ValueError(
                "ragged_dot_general: a ragged non-contracting dimension needs an "
                "rhs group dimension"
            )
        kind = [d for d in range(r) if d not in lc and d not in lb]
    outer = [*lb, *kind]  # the lhs dimensions group_sizes runs over, then g
    gshape = (*(int(a.shape[d]) for d in outer), g)
    sizes = lax.convert_element_type(gs, _I32)
    if tuple(sizes.shape) != gshape:
        if tuple(sizes.shape) != (g,):
            raise ValueError(
                f"ragged_dot_general: group_sizes must have shape {gshape} or ({g},), "
                f"got {tuple(sizes.shape)}"
            )
        sizes = lax.broadcast_in_dim(sizes, gshape, (len(gshape) - 1,))
    ends = bnp.cumsum(sizes, axis=-1)
    starts = lax.sub(ends, sizes)
    full = (*(int(d) for d in a.shape), g)
    where = (*outer, nd)
    pos = lax.iota(_I32, full, r)
    inside = lax.bitwise_and(
        lax.ge(pos, lax.broadcast_in_dim(starts, full, where)),
        lax.lt(pos, lax.broadcast_in_dim(ends, full, where)),
    )
    masked = lax.mul(
        lax.broadcast_in_dim(a, full, tuple(range(nd))),
        lax.convert_element_type(inside, a.dtype),
    )  # lhs with a trailing group dimension
    if r in lc:
        out = lax.dot_general(masked, b, ((lc, rc), (lb, rb)))
        # [b.., m.., g, n..] -> [g, b.., m.., n..]
        gpos = len(lb) + (nd - len(lc) - len(lb))
        perm = (gpos, *(d for d in range(len(out.shape)) if d != gpos))
        return lax.convert_element_type(lax.transpose(out, perm), dt)
    gdim = groups[0] % len(b.shape)
    out = lax.dot_general(masked, b, ((lc, rc), ((*lb, nd), (*rb, gdim))))
    # [b.., g, m.., n..]: the groups summed.
    return lax.convert_element_type(lax.sum(out, len(lb)), dt)


# ---- integer and float arithmetic ----


def _mulhi_unsigned(a: Any, b: Any, bits: int) -> Any:
    """High half of the unsigned ``bits``-bit products, in ``bits``-bit
    arithmetic: schoolbook multiplication on half words."""
    h = bits // 2
    d = a.dtype
    mask = lax.full((), (1 << h) - 1, d)
    sh = lax.full((), h, d)
    a0, a1 = lax.bitwise_and(a, mask), lax.shift_right_logical(a, sh)
    b0, b1 = lax.bitwise_and(b, mask), lax.shift_right_logical(b, sh)
    lo = lax.mul(a0, b0)
    t = lax.add(lax.mul(a1, b0), lax.shift_right_logical(lo, sh))
    t2 = lax.add(lax.mul(a0, b1), lax.bitwise_and(t, mask))
    return lax.add(
        lax.add(lax.mul(a1, b1), lax.shift_right_logical(t, sh)),
        lax.shift_right_logical(t2, sh),
    )


def mulhi(x: Any, y: Any, /) -> Any:
    """The high half of the integer products ``x * y`` (the bits above the
    dtype's width of the double-width product), for signed and unsigned
    integers, as JAX's ``mulhi``."""
    a, b = _t(x), _t(y)
    if a.dtype != b.dtype:
        raise TypeError(
            f"mulhi: operands must have one dtype, got {a.dtype} and {b.dtype}"
        )
    d = np.dtype(a.dtype)
    if not np.issubdtype(d, np.integer):
        raise TypeError(f"mulhi: operands must be integers, got {d}")
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    a, b = lax.broadcast_to(a, shape), lax.broadcast_to(b, shape)
    bits = d.itemsize * 8
    if bits <= 16:
        wide = np.dtype(np.int32)
        p = lax.mul(
            lax.convert_element_type(a, wide), lax.convert_element_type(b, wide)
        )
        return lax.convert_element_type(
            lax.shift_right_arithmetic(p, lax.full((), bits, wide)), d
        )
    u = np.dtype(f"uint{bits}")
    if d == u:
        return _mulhi_unsigned(a, b, bits)
    ua, ub = lax.convert_element_type(a, u), lax.convert_element_type(b, u)
    hi = _mulhi_unsigned(ua, ub, bits)
    zero = lax.full((), 0, u)
    hi = lax.sub(
        hi, lax.select(lax.lt(a, lax.full((), 0, d)), ub, lax.broadcast_to(zero, shape))
    )
    hi = lax.sub(
        hi, lax.select(lax.lt(b, lax.full((), 0, d)), ua, lax.broadcast_to(zero, shape))
    )
    return lax.convert_element_type(hi, d)


def _finfo(d: np.dtype) -> Any:
    try:
        return np.finfo(d)
    except ValueError:  # bfloat16 and other ml_dtypes floats
        import ml_dtypes

        return ml_dtypes.finfo(d)


def _reduce_precision_value(x: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """XLA's ReducePrecision on a float Tracer, by exact arithmetic: the
    significand rounded to ``mantissa_bits`` (to nearest even, at the
    exponent of x, subnormals at the smallest one), then values whose
    rounded exponent is past the narrow format's range become infinities
    and those below its smallest normal signed zeros; NaN stays NaN."""
    d = np.dtype(x.dtype)
    info = _finfo(d)
    work = d if d.itemsize >= 4 else np.dtype(np.float32)  # 16-bit: exact in float32
    t = lax.convert_element_type(x, work)
    y = t
    if mantissa_bits < int(info.nmant):
        _, e = bnp.frexp(t)
        e = lax.sub(e, lax.full((), 1, e.dtype))  # floor(log2 |t|)
        lowest = lax.full((), int(info.minexp), e.dtype)  # subnormals: emin's ulp
        k = lax.sub(lax.maximum(e, lowest), lax.full((), mantissa_bits, e.dtype))
        y = bnp.ldexp(lax.round(bnp.ldexp(t, lax.neg(k))), k)
    if exponent_bits < int(info.nexp):
        rb = (1 << (exponent_bits - 1)) - 1
        _, e2 = bnp.frexp(y)
        e2 = lax.sub(e2, lax.full((), 1, e2.dtype))
        inf = lax.full((), np.inf, work)
        finite = lax.lt(lax.abs(y), inf)
        over = lax.bitwise_and(finite, lax.gt(e2, lax.full((), rb, e2.dtype)))
        under = lax.bitwise_and(finite, lax.le(e2, lax.full((), -rb, e2.dtype)))
        signed_inf = lax.select(
            lax.lt(y, lax.full((), 0, work)),
            lax.neg(lax.broadcast_to(inf, tuple(y.shape))),
            lax.broadcast_to(inf, tuple(y.shape)),
        )
        y = lax.select(over, signed_inf, y)
        y = lax.select(under, lax.mul(y, lax.full((), 0, work)), y)
    y = lax.select(lax.ne(t, t), t, y)
    return lax.convert_element_type(y, d)


def _reduce_precision_fwd(x: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    return _reduce_precision_value(x, exponent_bits, mantissa_bits), None


def _reduce_precision_bwd(
    exponent_bits: int, mantissa_bits: int, _res: Any, ct: Any
) -> tuple:
    return (_reduce_precision_value(_t(ct), exponent_bits, mantissa_bits),)


_reduce_precision_rule: Any = None


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """``operand`` rounded to a float format of ``exponent_bits`` and
    ``mantissa_bits`` and back (JAX's ``reduce_precision``, e.g. ``(8, 7)``
    for bfloat16's values in float32): the significand rounded to nearest
    even, out-of-range values to infinities, values below the format's
    smallest normal to signed zeros, NaN kept. As in JAX its derivative
    rounds the cotangent the same way."""
    global _reduce_precision_rule
    exponent_bits, mantissa_bits = (
        operator.index(exponent_bits),
        operator.index(mantissa_bits),
    )
    if exponent_bits < 1:
        raise ValueError(
            f"reduce_precision: exponent_bits must be >= 1, got {exponent_bits}"
        )
    if mantissa_bits < 0:
        raise ValueError(
            f"reduce_precision: mantissa_bits must be >= 0, got {mantissa_bits}"
        )
    x = _t(operand)
    if (
        not np.issubdtype(np.dtype(x.dtype), np.floating)
        and np.dtype(x.dtype).kind != "V"
    ):
        raise TypeError(f"reduce_precision: operand must be a float, got {x.dtype}")
    if _reduce_precision_rule is None:
        from baton._custom import custom_vjp

        rule = custom_vjp(_reduce_precision_value, nondiff_argnums=(1, 2))
        rule.defvjp(_reduce_precision_fwd, _reduce_precision_bwd)
        _reduce_precision_rule = rule
    return _reduce_precision_rule(x, exponent_bits, mantissa_bits)


class RoundingMethod(enum.IntEnum):
    """How ``round`` treats halves (JAX's enum)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: Any, rounding_method: Any = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Elementwise rounding to an integral value (JAX's ``lax.round``):
    halves away from zero by default, to even with
    ``RoundingMethod.TO_NEAREST_EVEN``."""
    t = _t(x)
    if not np.issubdtype(np.dtype(t.dtype), np.floating):
        raise TypeError(f"round: operand must be a float, got {t.dtype}")
    method = RoundingMethod(int(rounding_method))
    if method == RoundingMethod.TO_NEAREST_EVEN:
        return lax.round(t)
    zero = lax.full((), 0, t.dtype)
    neg = lax.lt(t, zero)
    whole = lax.select(neg, lax.ceil(t), lax.floor(t))  # truncation
    half = lax.ge(lax.abs(lax.sub(t, whole)), lax.full((), 0.5, t.dtype))
    step = lax.select(
        neg, lax.full(t.shape, -1, t.dtype), lax.full(t.shape, 1, t.dtype)
    )
    return lax.select(half, lax.add(whole, step), whole)


# ---- scans and reductions with a computation ----


def _interleave(a: Any, b: Any, axis: int) -> Any:
    """a[0], b[0], a[1], b[1], ... along ``axis`` (a has as many elements
    as b, or one more)."""
    na, nb = int(a.shape[axis]), int(b.shape[axis])
    tail = None
    if na == nb + 1:
        start = [0] * len(a.shape)
        limit = list(a.shape)
        limit[axis] = nb
        start_t = list(start)
        start_t[axis] = nb
        tail = lax.slice(a, start_t, list(a.shape))
        a = lax.slice(a, start, limit)
    shape = list(a.shape)
    both = lax.concatenate(
        [
            lax.reshape(a, (*shape[: axis + 1], 1, *shape[axis + 1 :])),
            lax.reshape(b, (*shape[: axis + 1], 1, *shape[axis + 1 :])),
        ],
        axis + 1,
    )
    shape[axis] = 2 * nb
    out = lax.reshape(both, tuple(shape))
    return out if tail is None else lax.concatenate([out, tail], axis)


def _slice_axis(
    x: Any, start: int, stop: int | None, axis: int, stride: int = 1
) -> Any:
    n = int(x.shape[axis])
    start, stop, _ = slice(start, stop).indices(n)
    starts = [0] * len(x.shape)
    limits = list(x.shape)
    strides = [1] * len(x.shape)
    starts[axis], limits[axis], strides[axis] = start, max(stop, start), stride
    return lax.slice(x, starts, limits, strides)


def associative_scan(
    fn: Callable, elems: Any, reverse: bool = False, axis: int = 0
) -> Any:
    """The inclusive scan of ``elems`` (an array or pytree of arrays of one
    length along ``axis``) with the associative ``fn`` of two pytrees, in
    O(log n) parallel steps (JAX's ``associative_scan``; the same
    odd/even recursion, so non-associative functions give JAX's values)."""
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    flat, treedef = tree.flatten(elems)
    if not flat:
        return elems
    flat = [_t(e) for e in flat]
    nd = len(flat[0].shape)
    if not -nd <= axis < nd:
        raise ValueError(f"associative_scan: axis {axis} is out of range for rank {nd}")
    axis = operator.index(axis) % nd
    num = int(flat[0].shape[axis])
    if any(int(e.shape[axis]) != num for e in flat[1:]):
        raise ValueError(
            "Array inputs to associative_scan must have the same first dimension. "
            f"(saw: {[tuple(e.shape) for e in flat]})"
        )

    if reverse:
        flat = [rev(e, (axis,)) for e in flat]

    def combine(a: list, b: list) -> list:
        c = fn(tree.unflatten(treedef, a), tree.unflatten(treedef, b))
        out, out_def = tree.flatten(c)
        if out_def != treedef:
            raise ValueError(
                f"associative_scan: fn returned structure {out_def}, expected {treedef}"
            )
        return [_t(o) for o in out]

    def scan(es: list) -> list:
        n = int(es[0].shape[axis])
        if n < 2:
            return es
        reduced = combine(
            [_slice_axis(e, 0, n - 1, axis, 2) for e in es],
            [_slice_axis(e, 1, None, axis, 2) for e in es],
        )
        odd = scan(reduced)
        if n % 2 == 0:
            even = combine(
                [_slice_axis(e, 0, int(e.shape[axis]) - 1, axis) for e in odd],
                [_slice_axis(e, 2, None, axis, 2) for e in es],
            )
        else:
            even = combine(odd, [_slice_axis(e, 2, None, axis, 2) for e in es])
        even = [
            lax.concatenate([_slice_axis(e, 0, 1, axis), r], axis)
            for e, r in zip(es, even)
        ]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(flat)
    if reverse:
        out = [rev(e, (axis,)) for e in out]
    return tree.unflatten(treedef, out)


_REDUCERS = {
    "add": reduce_sum,
    "mul": reduce_prod,
    "max": reduce_max,
    "min": reduce_min,
}


def reduce(
    operands: Any,
    init_values: Any,
    computation: Callable,
    dimensions: Sequence[int],
    out_sharding: Any = None,
) -> Any:
    """Reduction of ``operands`` (an array or a pytree of arrays of one
    shape) over ``dimensions`` with ``computation`` of two values (two
    pytrees), starting from ``init_values`` (JAX's ``reduce``).
    ``lax.add``/``mul``/``max``/``min`` (and ``bitwise_and``/``or`` on
    bools) use baton's reductions; any other computation must be built of
    elementwise operations and is applied in a pairwise tree over the
    reduced elements, then once with the init value."""
    if out_sharding is not None:
        raise ValueError("reduce: out_sharding is not supported; leave it None")
    flat, treedef = tree.flatten(operands)
    flat_init, init_def = tree.flatten(init_values)
    if treedef != init_def:
        raise ValueError(
            "reduce: operands and init_values must have the same tree structure, "
            f"got {treedef} and {init_def}"
        )
    if not flat:
        raise ValueError("reduce: at least one operand is needed")
    xs = [_t(x) for x in flat]
    shape = tuple(int(d) for d in xs[0].shape)
    if any(tuple(x.shape) != shape for x in xs[1:]):
        raise ValueError(
            "reduce: the operands must have one shape, got "
            f"{[tuple(x.shape) for x in xs]}"
        )
    nd = len(shape)
    dims = tuple(
        sorted(
            {operator.index(d) % nd if nd else operator.index(d) for d in dimensions}
        )
    )
    if any(not 0 <= d < nd for d in dims):
        raise ValueError(
            f"reduce: dimensions {tuple(dimensions)} out of range for rank {nd}"
        )
    inits = []
    for x, v in zip(xs, flat_init):
        vt = _t(v)
        if tuple(vt.shape) != ():
            raise ValueError(
                f"reduce: init values must be scalars, got shape {tuple(vt.shape)}"
            )
        inits.append(lax.convert_element_type(vt, x.dtype))
    kind = _monoid(computation) if len(xs) == 1 else None
    fn = getattr(computation, "__wrapped__", computation)
    if len(xs) == 1 and np.dtype(xs[0].dtype) == np.bool_:
        if fn in (lax.bitwise_and, bnp.logical_and, operator.and_):
            kind = "and"
        elif fn in (lax.bitwise_or, bnp.logical_or, operator.or_):
            kind = "or"
    if kind is not None:
        x = xs[0]
        if kind in ("and", "or"):
            r = (reduce_and if kind == "and" else reduce_or)(x, dims)
            ident = kind == "and"
            v = flat_init[0]
            if isinstance(v, lax.Tracer) or np.asarray(v) != ident:
                op = lax.bitwise_and if kind == "and" else lax.bitwise_or
                r = op(lax.broadcast_to(inits[0], tuple(r.shape)), r)
            return tree.unflatten(treedef, [r])
        r = _REDUCERS[kind](x, dims)
        if not _is_identity(kind, flat_init[0], np.dtype(x.dtype)):
            r = _APPLY[kind](lax.broadcast_to(inits[0], tuple(r.shape)), r)
        return tree.unflatten(treedef, [r])

    # Any other computation: a pairwise tree over each reduced dimension.
    def apply(a: list, b: list) -> list:
        c = computation(tree.unflatten(treedef, a), tree.unflatten(treedef, b))
        out, out_def = tree.flatten(c)
        if out_def != treedef:
            raise ValueError(
                f"reduce: computation returned structure {out_def}, expected {treedef}"
            )
        return [lax.convert_element_type(_t(o), x.dtype) for o, x in zip(out, xs)]

    acc = xs
    for d in reversed(dims):
        while int(acc[0].shape[d]) > 1:
            n = int(acc[0].shape[d])
            half = n // 2
            lo = [_slice_axis(e, 0, half, d) for e in acc]
            hi = [_slice_axis(e, half, 2 * half, d) for e in acc]
            merged = apply(lo, hi)
            if n % 2:
                merged = [
                    lax.concatenate([m, _slice_axis(e, 2 * half, n, d)], d)
                    for m, e in zip(merged, acc)
                ]
            acc = merged
    out_shape = tuple(s for i, s in enumerate(shape) if i not in dims)
    result = [lax.broadcast_to(v, out_shape) for v in inits]
    if all(shape[d] > 0 for d in dims):
        acc = [lax.reshape(e, out_shape) for e in acc]
        result = apply(result, acc)
    return tree.unflatten(treedef, result)


# ---- indexing ----


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """``src`` at the index vectors ``idxs`` (one integer array per axis of
    ``axes``, wrapped modulo the axis size): result ``idxs[0].shape`` plus
    the dimensions of ``src`` not in ``axes`` (JAX's ``index_take``)."""
    x = _t(src)
    axes = [operator.index(a) for a in axes]
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes")
    nd = len(x.shape)
    if len(set(axes)) != len(axes) or any(not 0 <= a < nd for a in axes):
        raise ValueError(
            f"index_take: axes {tuple(axes)} must be distinct dimensions of rank {nd}"
        )
    rest = [d for d in range(nd) if d not in axes]
    x = lax.transpose(x, (*axes, *rest))
    wrapped = tuple(
        bnp.mod(lax.convert_element_type(_t(i), _I32), int(x.shape[k]))
        for k, i in enumerate(idxs)
    )
    return x[wrapped]


def scatter_apply(
    operand: Any,
    scatter_indices: Any,
    func: Callable,
    dimension_numbers: Any,
    *,
    update_shape: Sequence[int] = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: Any = None,
) -> Any:
    """``operand`` with the elementwise ``func`` applied at the scattered
    positions (JAX's ``scatter_apply``): once per update element that lands
    there, so a position indexed twice gets ``func(func(x))``. ``func`` is
    applied to whole arrays and must be elementwise."""
    x = _t(operand)
    dn = ScatterDimensionNumbers(*dimension_numbers)
    ones = lax.full(tuple(int(d) for d in update_shape), 1, _I32)
    counts = _scatter(
        lax.full(tuple(x.shape), 0, _I32), scatter_indices, ones, dn, mode, "add"
    )
    most = lax.max(counts) if math.prod(x.shape) else lax.full((), 0, _I32)

    def cond(state: Any) -> Any:
        return lax.lt(state[0], most)

    def body(state: Any) -> Any:
        i, y = state
        y2 = lax.convert_element_type(_t(func(y)), x.dtype)
        return lax.add(i, 1), lax.select(lax.gt(counts, i), y2, y)

    return while_loop(cond, body, (lax.full((), 0, _I32), x))[1]


# ---- top-k ----


def _approx_k(
    operand: Any,
    k: int,
    reduction_dimension: int,
    largest: bool,
    name: str,
    recall_target: float,
    aggregate_to_topk: bool,
) -> tuple[Any, Any]:
    x = _t(operand)
    nd = len(x.shape)
    if not -nd <= reduction_dimension < nd:
        raise ValueError(
            f"{name}: reduction_dimension {reduction_dimension} out of range "
            f"for rank {nd}"
        )
    if not 0 < recall_target <= 1:
        raise ValueError(
            f"{name}: recall_target must be in (0, 1], got {recall_target}"
        )
    axis = reduction_dimension % nd
    k = operator.index(k)
    if not 0 <= k <= int(x.shape[axis]):
        raise ValueError(f"{name}: k={k} is outside 0..{int(x.shape[axis])}")
    d = np.dtype(x.dtype)
    if largest:
        vals, idx = top_k(x, k, axis=axis)
        return vals, idx
    # The k smallest: the largest of an order-reversing map of x.
    if np.issubdtype(d, np.integer):
        keys = lax.bitwise_not(x)
    elif d == np.bool_:
        keys = lax.bitwise_not(x)
    else:
        keys = lax.neg(x)
    _, idx = top_k(keys, k, axis=axis)
    vals = bnp.take_along_axis(x, idx, axis=axis)
    return vals, idx


def approx_max_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> tuple[Any, Any]:
    """``(values, indices)`` of the k largest entries along
    ``reduction_dimension``, largest first (JAX's ``approx_max_k``): baton
    computes them exactly (recall 1, as JAX's own CPU and GPU fallback)."""
    return _approx_k(
        operand,
        k,
        reduction_dimension,
        True,
        "approx_max_k",
        recall_target,
        aggregate_to_topk,
    )


def approx_min_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> tuple[Any, Any]:
    """``(values, indices)`` of the k smallest entries along
    ``reduction_dimension``, smallest first (JAX's ``approx_min_k``),
    computed exactly."""
    return _approx_k(
        operand,
        k,
        reduction_dimension,
        False,
        "approx_min_k",
        recall_target,
        aggregate_to_topk,
    )


# ---- implicitly differentiated solves ----


def _zeros_like_tree(t: Any) -> Any:
    return tree.map(lambda v: lax.full(tuple(_t(v).shape), 0, _t(v).dtype), t)


def _split_aux(out: Any, has_aux: bool, what: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(
            f"{what}: with has_aux=True the solve must return (solution, aux)"
        )
    return out[0], out[1]


def _implicit(
    primal: Callable[[Any], Any],
    linear_fn: Callable[..., Any],
    example: Any,
    arg: Any,
    arg_gets_cotangent: bool,
    transpose_solve: Callable[[Any, Any, Any], Any],
    has_aux: bool,
    what: str,
) -> Any:
    """``primal(arg)`` as a ``custom_vjp`` function whose reverse-mode
    derivative is implicit: with ``x = primal(arg)``, the cotangent ``xbar``
    gives ``lam = transpose_solve(x, consts, xbar)``, ``arg`` the cotangent
    ``lam`` (when ``arg_gets_cotangent``) and the values ``linear_fn``
    closes over ``-d/dconsts <lam, linear_fn(x; consts)>``. Everything else
    ``primal`` closes over (the solver's own values) is held constant."""
    from baton._custom import custom_vjp
    from baton._toplevel_ad import closure_convert

    lin_conv, lin_consts = closure_convert(linear_fn, example)
    primal_conv, primal_consts = closure_convert(primal, arg)
    arg_leaves, arg_tree = tree.flatten(arg)
    n_arg, n_lin = len(arg_leaves), len(lin_consts)
    cell: dict = {}

    def body(*flat: Any) -> Any:
        a = tree.unflatten(arg_tree, list(flat[:n_arg]))
        out = primal_conv(a, *flat[n_arg + n_lin :])
        x, aux = _split_aux(out, has_aux, what)
        x_leaves, cell["x_tree"] = tree.flatten(x)
        aux_leaves, cell["aux_tree"] = tree.flatten(aux)
        cell["n_x"] = len(x_leaves)
        return (*x_leaves, *aux_leaves)

    f = custom_vjp(body)

    def fwd(*flat: Any) -> Any:
        out = body(*flat)
        return out, (out[: cell["n_x"]], flat[n_arg : n_arg + n_lin], flat)

    def bwd(res: Any, ct: Any) -> tuple:
        x_leaves, lc, flat = res
        x = tree.unflatten(cell["x_tree"], list(x_leaves))
        xbar = tree.unflatten(
            cell["x_tree"],
            [
                lax.full(tuple(v.shape), 0, v.dtype) if c is None else c
                for v, c in zip(x_leaves, ct[: cell["n_x"]])
            ],
        )
        lam = transpose_solve(x, lc, xbar)
        lam_leaves = tree.leaves(lam)
        if n_lin:
            from baton._autodiff import vjp

            _, pull = vjp(lambda *c: lin_conv(x, *c), *lc)
            lin_bar = [lax.neg(g) for g in pull(lam)]
        else:
            lin_bar = []
        arg_bar = (
            lam_leaves
            if arg_gets_cotangent
            else tree.leaves(_zeros_like_tree(flat[:n_arg]))
        )
        rest = [
            lax.full(tuple(_t(v).shape), 0, _t(v).dtype) for v in flat[n_arg + n_lin :]
        ]
        return (*arg_bar, *lin_bar, *rest)

    f.defvjp(fwd, bwd)
    out = f(*arg_leaves, *lin_consts, *primal_consts)
    x = tree.unflatten(cell["x_tree"], list(out[: cell["n_x"]]))
    if has_aux:
        return x, tree.unflatten(cell["aux_tree"], list(out[cell["n_x"] :]))
    return x


def _transpose_map(fn: Callable[[Any], Any], at: Any) -> Callable[[Any], Any]:
    """The transpose of the linear map ``fn`` (its VJP at ``at``)."""
    from baton._autodiff import vjp

    _, pull = vjp(fn, at)
    return lambda y: pull(y)[0]


def custom_linear_solve(
    matvec: Callable[[Any], Any],
    b: Any,
    solve: Callable[[Callable, Any], Any],
    transpose_solve: Callable[[Callable, Any], Any] | None = None,
    symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """``solve(matvec, b)``, the solution x of the linear system ``matvec(x)
    = b``, differentiated implicitly (JAX's ``custom_linear_solve``): the
    reverse-mode cotangent ``xbar`` gives ``lam = transpose_solve(vecmat,
    xbar)`` (``vecmat`` the transpose of ``matvec``; ``solve`` itself when
    ``symmetric``), ``b`` the cotangent ``lam`` and the values ``matvec``
    closes over ``-lam . d matvec(x)``; the solver's iterations are never
    differentiated. Reverse mode only (``bt.grad``, ``bt.vjp``): baton's
    custom rules have no forward-mode form for it. Without
    ``transpose_solve`` (and not ``symmetric``) there is no implicit rule:
    derivatives, if taken, are those of the solver's own operations."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    if not lax.is_tracing() or transpose_solve is None:
        # Without transpose_solve there is no implicit rule (JAX's raises
        # when differentiated): any derivative is the solver's own.
        return solve(matvec, b)
    from baton._toplevel_ad import closure_convert

    lin_conv, _ = closure_convert(matvec, b)
    tsolve = transpose_solve

    def ts(x: Any, lc: Any, xbar: Any) -> Any:
        vecmat = _transpose_map(lambda v: lin_conv(v, *lc), x)
        lam = tsolve(vecmat, xbar)
        return _split_aux(lam, has_aux, "custom_linear_solve")[0]

    return _implicit(
        lambda bb: solve(matvec, bb),
        matvec,
        b,
        b,
        True,
        ts,
        has_aux,
        "custom_linear_solve",
    )


def custom_root(
    f: Callable[[Any], Any],
    initial_guess: Any,
    solve: Callable[[Callable, Any], Any],
    tangent_solve: Callable[[Callable, Any], Any],
    has_aux: bool = False,
) -> Any:
    """``solve(f, initial_guess)``, a root x of ``f``, differentiated by the
    implicit function theorem (JAX's ``custom_root``): the cotangent
    ``xbar`` gives ``lam = tangent_solve(J^T, xbar)`` (``J`` the Jacobian
    of ``f`` at x) and the values ``f`` closes over ``-lam . df``; the
    initial guess gets none and the solver's iterations are never
    differentiated. Reverse mode only, as ``custom_linear_solve``."""
    if not lax.is_tracing():
        return solve(f, initial_guess)
    from baton._toplevel_ad import closure_convert

    f_conv, _ = closure_convert(f, initial_guess)

    def ts(x: Any, lc: Any, xbar: Any) -> Any:
        jt = _transpose_map(lambda y: f_conv(y, *lc), x)  # v -> J^T v
        return tangent_solve(jt, xbar)

    return _implicit(
        lambda g: solve(f, g),
        f,
        initial_guess,
        initial_guess,
        False,
        ts,
        has_aux,
        "custom_root",
    )


# ---- program structure ----


def optimization_barrier(operand: Any, /) -> Any:
    """``operand`` (a pytree) unchanged (JAX's ``optimization_barrier``).
    baton's compiler does not move work across program points the way
    XLA's rematerialisation and CSE passes do, so the barrier has nothing to
    stop; the values are the operand's."""
    return tree.map(lambda x: _t(x) if lax.is_tracing() else x, operand)


def stage(x: Any, /) -> Any:
    """``x`` lifted into the current trace (a Tracer), or a baton Array
    outside one (JAX's ``stage``)."""
    if lax.is_tracing():
        return _t(x)
    return bnp.asarray(x)


def shape_as_value(shape: Sequence[int]) -> Any:
    """A shape as an integer array (JAX's ``shape_as_value``; baton's
    shapes are always constants): int32, int64 for dimensions past it."""
    dims = [operator.index(d) for d in shape]
    big = any(d > np.iinfo(np.int32).max for d in dims)
    return np.asarray(dims, np.int64 if big else np.int32)


def _platform() -> str:
    dev = lax._trace_device() if lax.is_tracing() else None
    if dev is None:
        from baton._device_queries import default_backend

        return default_backend()
    return str(getattr(dev, "platform", "cpu"))


def platform_dependent(
    *args: Any, default: Callable | None = None, **per_platform: Callable
) -> Any:
    """``per_platform[platform](*args)`` for the platform the code runs on
    (``'cpu'``, ``'cuda'``, ...; the trace's device inside ``bt.jit``), else
    ``default(*args)`` (JAX's ``platform_dependent``). Only the chosen
    branch is traced: baton compiles for one known device."""
    for name, fn in per_platform.items():
        if not callable(fn):
            raise TypeError(
                f"lax.platform_dependent: the '{name}' branch must be a callable."
            )
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    if default is not None and not callable(default):
        raise TypeError(
            "lax.platform_dependent: the 'default' branch must be a callable."
        )
    platform = _platform()
    names = {platform, "cuda" if platform == "gpu" else platform}
    for name in names:
        if name in per_platform:
            return per_platform[name](*args)
    if default is None:
        raise ValueError(
            f"lax.platform_dependent: no branch for platform {platform!r} and no "
            f"default (branches: {sorted(per_platform)})"
        )
    return default(*args)


def composite(decomposition: Callable, name: str, version: int = 0) -> Callable:
    """``decomposition`` as a named composite operation (JAX's
    ``composite``): calling the result runs the decomposition, whose
    operations are what baton compiles (it has no composite ops to keep
    whole); ``name`` and ``version`` are recorded on the function."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"composite: name must be a non-empty string, got {name!r}")

    @functools.wraps(decomposition)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return decomposition(*args, **kwargs)

    wrapped.composite_name = name  # type: ignore[attr-defined]
    wrapped.composite_version = int(version)  # type: ignore[attr-defined]
    return wrapped


__all__ = [
    "DotDimensionNumbers",
    "PrecisionLike",
    "RaggedDotDimensionNumbers",
    "RoundingMethod",
    "approx_max_k",
    "approx_min_k",
    "associative_scan",
    "composite",
    "custom_linear_solve",
    "custom_root",
    "dot_general",
    "index_take",
    "mulhi",
    "optimization_barrier",
    "platform_dependent",
    "ragged_dot",
    "ragged_dot_general",
    "reduce",
    "reduce_precision",
    "round",
    "scatter_apply",
    "shape_as_value",
    "stage",
]

# Not operations on arrays: bt.lax leaves them unwrapped.
NOT_OPERATIONS = frozenset(
    {
        "DotDimensionNumbers",
        "PrecisionLike",
        "RaggedDotDimensionNumbers",
        "RoundingMethod",
        "composite",
        "shape_as_value",
        "stage",
        "optimization_barrier",
    }
)
# Take a Python function: traced afresh on each eager call.
TAKES_FUNCTIONS = frozenset(
    {
        "associative_scan",
        "custom_linear_solve",
        "custom_root",
        "platform_dependent",
        "reduce",
        "scatter_apply",
    }
)
# Replace the C++ bindings of these names (JAX's signatures).
OVERRIDES = frozenset({"dot_general", "round"})
