"""Operators and array methods of ``bt.Array`` (and the ones ``bt.lax.Tracer``
lacks), attached with ``_array_methods.attach``.

Arithmetic ``+ - * / // % **`` (and reflected forms), unary ``- + abs ~``,
comparisons (elementwise, returning bool arrays), ``& | ^``, ``@``; indexing
``x[key]`` and ``x.at[key]``; ``astype``, ``reshape``, ``T``, ``mT``,
``transpose``, ``ravel``, ``flatten``, ``squeeze``, ``swapaxes``, ``sum``,
``mean``, ``max``, ``min``, ``prod``, ``any``, ``all``, ``var``, ``std``,
``argmax``, ``argmin``, ``clip``, ``round``, ``dot``; iteration over the first
axis. Each is a ``baton.numpy`` function: eager on Arrays (compiled once per
signature), traced inside ``bt.jit``. Python scalars are weakly typed
(``x * 2`` keeps x's dtype). Operands of other types (lists, strings, ...)
give ``NotImplemented``, so Python raises its usual TypeError.

Arrays are immutable: ``x[i] = v`` raises TypeError pointing to
``x = x.at[i].set(v)``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import baton.numpy as bnp
from baton import _array_methods, _dslice, _indexing, _ops
from baton._at import IndexUpdateHelper
from baton._baton import Array, lax
from baton._sharded_array import ShardedArray

Tracer = lax.Tracer


def _operand(x: Any) -> bool:
    t = type(x)
    return (
        t is Array
        or t is int
        or t is float
        or t is bool
        or t is complex
        or isinstance(x, (Tracer, Array, np.ndarray, np.generic, int, float, complex))
        or isinstance(x, ShardedArray)
    )


def _binary(
    fn: Callable[[Any, Any], Any], reflected: bool = False
) -> Callable[..., Any]:
    if reflected:

        def op(self: Any, other: Any) -> Any:
            if not _operand(other):
                return NotImplemented
            return fn(other, self)

    else:

        def op(self: Any, other: Any) -> Any:
            if not _operand(other):
                return NotImplemented
            return fn(self, other)

    return op


_BINARY = {
    "add": bnp.add,
    "sub": bnp.subtract,
    "mul": bnp.multiply,
    "truediv": bnp.true_divide,
    "floordiv": bnp.floor_divide,
    "mod": bnp.mod,
    "pow": bnp.power,
    "and": bnp.bitwise_and,
    "or": bnp.bitwise_or,
    "xor": bnp.bitwise_xor,
    "matmul": bnp.matmul,
}
_COMPARE = {
    "eq": bnp.equal,
    "ne": bnp.not_equal,
    "lt": bnp.less,
    "le": bnp.less_equal,
    "gt": bnp.greater,
    "ge": bnp.greater_equal,
}


def _divmod(self: Any, other: Any) -> Any:
    if not _operand(other):
        return NotImplemented
    return bnp.floor_divide(self, other), bnp.mod(self, other)


def _rdivmod(self: Any, other: Any) -> Any:
    if not _operand(other):
        return NotImplemented
    return bnp.floor_divide(other, self), bnp.mod(other, self)


# ---- methods ----


def _getitem(self: Any, key: Any) -> Any:
    if _dslice.has_slice(key):  # bt.ds: a traced start
        self, key = _dslice.apply(self, key)
    return _indexing.getitem(self, key)


def _setitem(self: Any, key: Any, value: Any) -> None:
    raise TypeError(
        f"{type(self).__name__} objects are immutable: instead of x[idx] = v use "
        "x = x.at[idx].set(v) (inside bt.jit, with x donated or computed there, it "
        "updates x's buffer in place)"
    )


def _iter(self: Any) -> Any:
    if not self.shape:
        raise TypeError("iteration over a 0-d array")
    for i in range(self.shape[0]):
        yield self[i]


def _at(self: Any) -> IndexUpdateHelper:
    """Functional updates: ``x.at[idx].set(v)`` (also add, multiply, min,
    max, get); see ``baton._at``."""
    return IndexUpdateHelper(self)


def _astype(self: Any, dtype: Any, copy: bool = False) -> Any:
    """The values converted to ``dtype`` (floats to integers truncate)."""
    out = bnp.asarray(self, dtype)
    if copy and out is self and isinstance(self, Array):
        out = self.copy()
    return out


def _reshape(self: Any, *shape: Any, order: str = "C") -> Any:
    """The same elements in a new shape: ``x.reshape(2, 3)`` or
    ``x.reshape((2, 3))``; one dimension may be -1."""
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = shape[0]
    return bnp.reshape(self, shape, order)


def _transpose(self: Any, *axes: Any) -> Any:
    """Dimensions permuted: ``x.transpose()`` reverses them,
    ``x.transpose(1, 0, 2)`` or ``x.transpose((1, 0, 2))`` permutes."""
    if not axes or (len(axes) == 1 and axes[0] is None):
        return bnp.transpose(self)
    if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        axes = axes[0]
    return bnp.transpose(self, axes)


def _T(self: Any) -> Any:
    return bnp.transpose(self)


def _mT(self: Any) -> Any:
    if self.ndim < 2:
        raise ValueError("mT needs an array of at least 2 dimensions")
    return bnp.swapaxes(self, -1, -2)


def _squeeze(self: Any, axis: Any = None) -> Any:
    return bnp.squeeze(self, axis)


def _swapaxes(self: Any, axis1: int, axis2: int) -> Any:
    return bnp.swapaxes(self, axis1, axis2)


def _ravel(self: Any, order: str = "C") -> Any:
    return bnp.ravel(self, order)


def _method(fn: Callable[..., Any]) -> Callable[..., Any]:
    def m(self: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)

    m.__name__ = fn.__name__
    m.__doc__ = fn.__doc__
    return m


def _round(self: Any, decimals: int = 0, out: None = None) -> Any:
    return bnp.round(self, decimals, out)


def _clip(self: Any, min: Any = None, max: Any = None) -> Any:
    return bnp.clip(self, min, max)


def _tracer_copy(self: Any) -> Any:
    return self  # values of a trace are immutable


_METHODS: dict[str, Any] = {
    "__getitem__": _getitem,
    "__setitem__": _setitem,
    "__iter__": _iter,
    "at": property(_at),
    "astype": _astype,
    "reshape": _reshape,
    "transpose": _transpose,
    "T": property(_T, doc="The transpose (dimensions reversed)."),
    "mT": property(_mT, doc="The last two dimensions swapped."),
    "ravel": _ravel,
    "flatten": _ravel,
    "squeeze": _squeeze,
    "swapaxes": _swapaxes,
    "sum": _method(bnp.sum),
    "prod": _method(bnp.prod),
    "mean": _method(bnp.mean),
    "max": _method(bnp.max),
    "min": _method(bnp.min),
    "any": _method(bnp.any),
    "all": _method(bnp.all),
    "var": _method(bnp.var),
    "std": _method(bnp.std),
    "argmax": _method(bnp.argmax),
    "argmin": _method(bnp.argmin),
    "clip": _clip,
    "round": _round,
    "dot": _method(bnp.dot),
    "__divmod__": _divmod,
    "__rdivmod__": _rdivmod,
    "__neg__": lambda self: bnp.negative(self),
    "__pos__": lambda self: _ops.unchanged(self),
    "__abs__": lambda self: bnp.absolute(self),
    "__invert__": lambda self: bnp.invert(self),
}
for _name, _fn in _BINARY.items():
    _METHODS[f"__{_name}__"] = _binary(_fn)
    _METHODS[f"__r{_name}__"] = _binary(_fn, reflected=True)
for _name, _fn in _COMPARE.items():
    _METHODS[f"__{_name}__"] = _binary(_fn)
_METHODS.update(_array_methods.numpy_methods(bnp))  # take, sort, real, ...

# Array: all of them. numpy defers to Array's reflected operators
# (np_array + x gives a baton Array), as it does for JAX arrays.
for _name, _fn in _METHODS.items():
    _array_methods.attach(_name, _fn)
Array.__array_priority__ = 100

# Tracer: what the binding does not define itself (its own operators and
# astype / reshape / T follow the same lax semantics).
for _name, _fn in _METHODS.items():
    if _name not in Tracer.__dict__:
        setattr(Tracer, _name, _fn)
# ShardedArray: the same operators, partitioned over the mesh
# (baton/_sharded_call.py); indexing updates and iteration are not offered.
for _name, _fn in _METHODS.items():
    if (
        _name not in ("__setitem__", "__iter__", "at")
        and _name not in ShardedArray.__dict__
    ):
        setattr(ShardedArray, _name, _fn)

if "copy" not in Tracer.__dict__:
    Tracer.copy = _tracer_copy

del _name, _fn
_ = _ops
