"""Python-level methods of ``bt.Array``.

The class itself is the C++ binding (``baton._baton.Array``: metadata,
delete, readiness, copy, host views, DLPack, buffer protocol). This module
attaches what is simplest in Python: repr, numpy conversion, scalars,
``len``, copies, pickling. Later layers attach theirs the same way, each in
its own module -- operators, indexing and ``.at[]``, ``astype``/``reshape``/
reductions -- with :func:`attach`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from baton import _baton, _numpy_interop, _transfer

Array = _baton.Array


def attach(name: str, fn: Callable[..., Any] | property) -> None:
    """Installs ``fn`` as ``Array.<name>`` (a method or property)."""
    setattr(Array, name, fn)


def _repr(self: Any) -> str:
    dtype = self.dtype.name
    kind = "" if self.memory_kind == "device" else f", memory_kind={self.memory_kind}"
    if self.is_deleted():
        how = self._consumed
        state = "deleted" if how == "deleted" else f"deleted: {how}"
        return f"Array(<{state}>, shape={self.shape}, dtype={dtype}{kind})"
    try:
        values = _numpy_interop.numpy_values(self)
    except Exception as e:  # e.g. a failed producer or a writable view
        return (
            f"Array(<unavailable: {type(e).__name__}: {e}>, shape={self.shape}, "
            f"dtype={dtype}{kind})"
        )
    body = np.array2string(values, separator=", ", prefix="Array(")
    return f"Array({body}, dtype={dtype}{kind})"


def _str(self: Any) -> str:
    if self.is_deleted():
        return _repr(self)
    return str(_numpy_interop.numpy_values(self))


def _one_element(self: Any, what: str) -> Any:
    if self.size != 1:
        raise TypeError(
            f"only one-element arrays can be converted to Python {what}; this "
            f"array has shape {self.shape}"
        )
    return _numpy_interop.item(self)


def _float(self: Any) -> float:
    return float(_one_element(self, "float"))


def _int(self: Any) -> int:
    return int(_one_element(self, "int"))


def _complex(self: Any) -> complex:
    return complex(_one_element(self, "complex"))


def _bool(self: Any) -> bool:
    if self.size != 1:
        raise ValueError(
            f"the truth value of an array with {self.size} elements is ambiguous; "
            "use .any() or .all()"
        )
    return bool(_numpy_interop.item(self))


def _index(self: Any) -> int:
    if self.ndim != 0 or self.dtype.kind not in "iu":
        raise TypeError(
            "only integer scalar arrays can be converted to an index; this is "
            f"{self.dtype.name}{self.shape}"
        )
    return int(_numpy_interop.item(self))


def _len(self: Any) -> int:
    if self.ndim == 0:
        raise TypeError("len() of unsized object (a 0-d array)")
    return self.shape[0]


def _format(self: Any, spec: str) -> str:
    """``format(x, spec)``: a 0-d array formats as its value (``f"{x:.2f}"``),
    as JAX's does: with an empty spec too, as its numpy scalar formats, so
    ``"{}".format(x)`` of a float32 0-d array writes the float's shortest
    float64 repr (``-175.5615997314453``), not ``str(x)`` (``-175.5616``).
    Any other empty spec is ``str(x)``, which also describes a deleted
    array. A format spec applied to a deleted array raises
    DeletedArrayError rather than formatting its description."""
    if not spec:
        if self.ndim == 0 and not self.is_deleted():
            return format(_numpy_interop.numpy_values(self)[()], spec)
        return str(self)
    self._check_live()  # DeletedArrayError, saying how it was consumed
    if self.ndim == 0:
        return format(_numpy_interop.item(self), spec)
    return format(str(self), spec)


def _deepcopy(self: Any, memo: dict) -> Any:
    return self.copy()


def _rebuild(values: np.ndarray, memory_kind: str) -> Any:
    return _transfer.put(values, memory_kind=memory_kind)


def _reduce(self: Any) -> Any:
    # Pickles the values; unpickling puts them on device 0, same memory kind.
    return (_rebuild, (_numpy_interop.numpy_copy(self), self.memory_kind))


def _host_view(self: Any, writable: bool = False) -> _numpy_interop.HostView:
    return _numpy_interop.HostView(self, writable)


_host_view.__doc__ = _numpy_interop.HostView.__doc__


def _tolist(self: Any) -> Any:
    """The values as nested Python lists (bfloat16/float16 as floats)."""
    return _numpy_interop.tolist(self)


def _item(self: Any, *args: Any) -> Any:
    """One element as a Python scalar (like numpy's ``item``)."""
    return _numpy_interop.item(self, *args)


for _name, _fn in {
    "__repr__": _repr,
    "__str__": _str,
    "__array__": _numpy_interop.array_dunder,
    "__float__": _float,
    "__int__": _int,
    "__complex__": _complex,
    "__bool__": _bool,
    "__index__": _index,
    "__len__": _len,
    "__format__": _format,
    "__copy__": lambda self: self.copy(),
    "__deepcopy__": _deepcopy,
    "__reduce__": _reduce,
    "host_view": _host_view,
    "tolist": _tolist,
    "item": _item,
}.items():
    attach(_name, _fn)
del _name, _fn


# ---- the jax.Array methods that are baton.numpy functions ----


def numpy_methods(bnp: Any) -> dict[str, Any]:
    """``jax.Array``'s methods that call a ``jax.numpy`` function on the
    array (``x.take(i)`` is ``jnp.take(x, i)``), for both ``Array`` and
    ``Tracer`` (``baton._operators`` attaches them with the operators).
    ``real`` / ``imag`` are properties: baton has real dtypes only, so
    ``x.real`` is ``x`` and ``x.imag`` zeros of its dtype."""

    def method(name: str) -> Callable[..., Any]:
        fn = getattr(bnp, name)

        def m(self: Any, *args: Any, **kwargs: Any) -> Any:
            return fn(self, *args, **kwargs)

        m.__name__ = name
        m.__qualname__ = f"Array.{name}"
        m.__doc__ = f"``bt.numpy.{name}(self, ...)``.\n\n{fn.__doc__ or ''}"
        return m

    def compress(self: Any, condition: Any, axis: Any = None, **kwargs: Any) -> Any:
        """``bt.numpy.compress(condition, self, axis)``."""
        return bnp.compress(condition, self, axis, **kwargs)

    out: dict[str, Any] = {
        name: method(name)
        for name in (
            "argpartition",
            "argsort",
            "choose",
            "conj",
            "conjugate",
            "cumprod",
            "cumsum",
            "diagonal",
            "nonzero",
            "ptp",
            "repeat",
            "searchsorted",
            "sort",
            "take",
            "trace",
        )
    }
    out["compress"] = compress
    out["real"] = property(bnp.real, doc="The real part: the array itself.")
    out["imag"] = property(
        bnp.imag, doc="The imaginary part: zeros (baton has real dtypes only)."
    )
    return out
