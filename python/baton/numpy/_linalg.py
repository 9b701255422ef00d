"""Products of ``baton.numpy``: matmul, dot, vdot, inner, outer,
tensordot, einsum. All become ``lax.dot_general`` (after promoting the
operands to a common dtype), plus transposes and reshapes. A contracted
size mismatch in matmul / dot / tensordot / inner is a TypeError (as in
JAX); einsum's is a ValueError (as in JAX).

einsum supports explicit and implicit (no ``->``) subscripts over any
number of operands, contracted left to right; not supported
(NotImplementedError): ellipsis (``...``) and a label repeated within one
operand (diagonals).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops, _sharding_api
from baton._baton import lax

__all__ = ["dot", "einsum", "inner", "matmul", "outer", "tensordot", "vdot"]


def _matmul(a: Any, b: Any) -> Any:
    return lax.matmul(a, b)


def _options(
    name: str, a: Any, b: Any, precision: Any, preferred_element_type: Any
) -> tuple[Any, Any]:
    """Checks JAX's ``precision=`` (None, a ``lax.Precision`` or its string
    name, or a pair of them: baton's float32 products are always full
    float32, so every precision gives the same values) and applies
    ``preferred_element_type=`` (the operands are cast to it, so products
    accumulate and come out in that dtype)."""
    from baton._lax_precision import Precision

    ps = precision if isinstance(precision, (tuple, list)) else (precision,)
    if len(ps) not in (1, 2):
        raise ValueError(
            f"{name}: `precision` must be None, a lax.Precision or a pair of "
            f"them, not {precision!r}"
        )
    for p in ps:
        if p is not None and not isinstance(p, Precision):
            try:
                Precision(p)
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
    if preferred_element_type is None:
        return a, b
    from baton.numpy._casts import astype

    return astype(a, preferred_element_type), astype(b, preferred_element_type)


def matmul(
    a: Any,
    b: Any,
    /,
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """numpy's matmul (the ``@`` operator): 1-D operands are vectors, batch
    dimensions broadcast. ``precision`` / ``preferred_element_type`` as in
    JAX (see ``_options``). ``out_sharding`` (a sharding, or a bare
    PartitionSpec on the current mesh): the result placed so, computed on
    one device of its mesh from the gathered operands
    (baton/_sharding_api.py); not inside ``bt.jit``."""
    if out_sharding is not None:
        return _sharding_api.with_out_sharding(
            lambda x, y: matmul(
                x, y, precision=precision, preferred_element_type=preferred_element_type
            ),
            (a, b),
            out_sharding,
            "matmul",
        )
    a, b = _options("matmul", a, b, precision, preferred_element_type)
    sa, sb = _ops.shape_of(a), _ops.shape_of(b)
    if not sa or not sb:
        raise ValueError("matmul: input operand does not have enough dimensions (0-d)")
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        raise TypeError(  # a TypeError, as in JAX
            f"matmul: contracted dimensions differ: {sa} @ {sb} ({ka} != {kb}); "
            "the last axis of the first operand must match the second-to-last "
            "(or only) axis of the second"
        )
    return _ops.apply(_matmul, (a, b))


def _dot_general(a: Any, b: Any, *, dims: Any, perm: Any) -> Any:
    x, y = _ops.promote(a, b)
    r = lax.dot_general(x, y, dims)
    return r if perm is None else lax.transpose(r, perm)


def _contract(a: Any, b: Any, ca: tuple[int, ...], cb: tuple[int, ...]) -> Any:
    sa, sb = _ops.shape_of(a), _ops.shape_of(b)
    for i, j in zip(ca, cb):
        if sa[i] != sb[j]:
            raise TypeError(  # a TypeError, as in JAX
                f"shapes {sa} and {sb} not aligned: dimension {i} ({sa[i]}) != "
                f"dimension {j} ({sb[j]}); the contracted axes must have equal sizes"
            )
    dims = ((tuple(ca), tuple(cb)), ((), ()))
    return _ops.apply(_dot_general, (a, b), (("dims", dims), ("perm", None)))


def dot(
    a: Any,
    b: Any,
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """numpy's dot: scalars multiply; otherwise a's last axis contracts with
    b's second-to-last (its only one for 1-D b). ``out_sharding`` as for
    :func:`matmul`.

    Example::

        mesh = bt.make_mesh((4,), ("i",))
        x = bt.device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P("i")))
        y = bnp.dot(x, np.ones((4, 2), np.float32),
                    out_sharding=NamedSharding(mesh, P("i")))   # (8, 2), split
    """
    if out_sharding is not None:
        return _sharding_api.with_out_sharding(
            lambda x, y: dot(
                x, y, precision=precision, preferred_element_type=preferred_element_type
            ),
            (a, b),
            out_sharding,
            "dot",
        )
    a, b = _options("dot", a, b, precision, preferred_element_type)
    sa, sb = _ops.shape_of(a), _ops.shape_of(b)
    if not sa or not sb:
        from baton.numpy._elementwise import multiply

        return multiply(a, b)
    return _contract(a, b, (len(sa) - 1,), (0 if len(sb) == 1 else len(sb) - 2,))


def vdot(
    a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    """The dot product of the flattened operands, ``a`` conjugated when
    complex (numpy's and JAX's vdot)."""
    from baton.numpy._casts import conj
    from baton.numpy._shapes import ravel

    a, b = _options("vdot", a, b, precision, preferred_element_type)
    return dot(conj(ravel(a)), ravel(b))


def inner(
    a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    """Contraction over the last axes of both."""
    a, b = _options("inner", a, b, precision, preferred_element_type)
    sa, sb = _ops.shape_of(a), _ops.shape_of(b)
    if not sa or not sb:
        from baton.numpy._elementwise import multiply

        return multiply(a, b)
    return _contract(a, b, (len(sa) - 1,), (len(sb) - 1,))


def outer(a: Any, b: Any) -> Any:
    """The outer product of the flattened operands."""
    from baton.numpy._shapes import ravel, reshape

    return _contract(reshape(ravel(a), (-1, 1)), reshape(ravel(b), (1, -1)), (1,), (0,))


def tensordot(
    a: Any,
    b: Any,
    axes: Any = 2,
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Sum of products over ``axes`` (an int N: a's last N with b's first
    N; or a pair of axis lists)."""
    a, b = _options("tensordot", a, b, precision, preferred_element_type)
    sa, sb = _ops.shape_of(a), _ops.shape_of(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        ca = tuple(range(len(sa) - n, len(sa)))
        cb = tuple(range(n))
    else:
        xa, xb = axes
        xa = (xa,) if isinstance(xa, (int, np.integer)) else tuple(xa)
        xb = (xb,) if isinstance(xb, (int, np.integer)) else tuple(xb)
        if len(xa) != len(xb):
            raise ValueError("tensordot: the two axis lists differ in length")
        ca = tuple(_ops.normalize_axis(i, len(sa)) for i in xa)
        cb = tuple(_ops.normalize_axis(i, len(sb)) for i in xb)
    return _contract(a, b, ca, cb)


# ---- einsum ----


def _parse_einsum(subscripts: str, n: int) -> tuple[list[str], str]:
    s = subscripts.replace(" ", "")
    if "." in s:
        raise NotImplementedError("einsum: ellipsis ('...') is not supported")
    if "->" in s:
        lhs, out = s.split("->")
    else:
        lhs = s
        counts: dict[str, int] = {}
        for c in lhs.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        out = "".join(sorted(c for c, k in counts.items() if k == 1))
    ins = lhs.split(",")
    if len(ins) != n:
        raise ValueError(
            f"einsum: {len(ins)} operand subscripts in {subscripts!r} but {n} operands"
        )
    for term in [*ins, out]:
        if not all(c.isalpha() for c in term):
            raise ValueError(f"einsum: invalid subscript in {subscripts!r}")
        if len(set(term)) != len(term):
            raise NotImplementedError(
                f"einsum: the label repeated in {term!r} (a diagonal) is not supported"
            )
    for c in out:
        if c not in lhs:
            raise ValueError(
                f"einsum: output label {c!r} does not appear in the inputs"
            )
    return ins, out


def _sum_out(x: Any, labels: str, keep: set[str]) -> tuple[Any, str]:
    """Sums away the labels of x that nothing else needs."""
    drop = tuple(i for i, c in enumerate(labels) if c not in keep)
    if not drop:
        return x, labels
    from baton.numpy._reductions import sum as _sum

    return _sum(x, axis=drop), "".join(c for c in labels if c in keep)


def einsum(
    subscripts: str, *operands: Any, optimize: Any = None, precision: Any = None
) -> Any:
    """Einstein summation (e.g. ``"ij,jk->ik"``, ``"bij,bjk->bik"``,
    ``"i,i->"``): each pair of operands becomes one dot_general."""
    if not operands:
        raise ValueError("einsum: at least one operand is required")
    ins, out = _parse_einsum(subscripts, len(operands))
    sizes: dict[str, int] = {}
    for term, x in zip(ins, operands):
        s = _ops.shape_of(x)
        if len(s) != len(term):
            raise ValueError(
                f"einsum: operand with subscripts {term!r} has {len(s)} dimensions"
            )
        for c, d in zip(term, s):
            if sizes.setdefault(c, d) != d:
                raise ValueError(
                    f"einsum: label {c!r} has sizes {sizes[c]} and {d} in different "
                    "operands"
                )
    from baton.numpy._shapes import transpose

    xs = list(operands)
    terms = list(ins)

    def needed(skip: int) -> set[str]:
        need = set(out)
        for k, t in enumerate(terms):
            if k != skip:
                need |= set(t)
        return need

    x, lx = _sum_out(xs[0], terms[0], needed(0))
    for k in range(1, len(xs)):
        rest = set(out).union(*terms[k + 1 :]) if k + 1 < len(terms) else set(out)
        y, ly = _sum_out(xs[k], terms[k], set(lx) | rest)
        x, lx = _sum_out(x, lx, set(ly) | rest)
        shared = [c for c in lx if c in ly]
        batch = [c for c in shared if c in rest]
        contract = [c for c in shared if c not in rest]
        dims = (
            (
                tuple(lx.index(c) for c in contract),
                tuple(ly.index(c) for c in contract),
            ),
            (tuple(lx.index(c) for c in batch), tuple(ly.index(c) for c in batch)),
        )
        res = (
            batch
            + [c for c in lx if c not in shared]
            + [c for c in ly if c not in shared]
        )
        x = _ops.apply(_dot_general, (x, y), (("dims", dims), ("perm", None)))
        lx = "".join(res)
    x, lx = _sum_out(x, lx, set(out))
    if lx != out:
        x = transpose(x, [lx.index(c) for c in out])
    elif isinstance(x, (np.ndarray, list)) or _ops.is_scalar(x):
        from baton.numpy._creation import asarray

        x = asarray(x)
    return x
