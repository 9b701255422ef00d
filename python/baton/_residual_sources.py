"""Where a saved residual was computed, in JAX's terms, for
``bt.ad_checkpoint.print_saved_residuals``.

baton's programs carry no source locations, so the user's source lines are
recorded while the function is traced for the listing: a profile hook
(``sys.setprofile``) sees each call the user's code makes into baton
(``jnp.sin(x)``, ``checkpoint_name(h, "h")``, and the operators of
``Tracer`` -- ``x @ w``, ``a + b`` -- which are wrapped by Python functions
for the duration of the trace) and what it returned. A residual is
attributed to the first unused recorded call with its primitive (as JAX
names it), shape and dtype -- the value named ``name`` for a named one.
A residual computed by something the hook cannot see (an op inside a
baton function called from a baton function) is listed without a source.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from baton import _dtypes, tree
from baton._baton import lax as _lax

__all__ = ["Recorder", "jax_dtype", "jax_primitive", "recording"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__))

# baton's op display names (core/op_codes.cc) -> JAX's primitive names.
_PRIMITIVES = {
    "negate": "neg",
    "exponential": "exp",
    "sine": "sin",
    "cosine": "cos",
    "round_nearest_even": "round",
    "log_plus_one": "log1p",
    "exponential_minus_one": "expm1",
    "subtract": "sub",
    "multiply": "mul",
    "divide": "div",
    "power": "pow",
    "maximum": "max",
    "minimum": "min",
    "remainder": "rem",
    "convert": "convert_element_type",
    "select": "select_n",
    "reduce sum": "reduce_sum",
    "reduce prod": "reduce_prod",
    "reduce max": "reduce_max",
    "reduce min": "reduce_min",
    "scatter set": "scatter",
    "scatter add": "scatter-add",
    "scatter mul": "scatter-mul",
    "scatter min": "scatter-min",
    "scatter max": "scatter-max",
    "checkpoint": "checkpoint",
}

# The names of the baton functions user code calls -> the primitive whose
# output they return (when not the same name).
_CALLS = {
    "matmul": "dot_general",
    "dot": "dot_general",
    "einsum": "dot_general",
    "tensordot": "dot_general",
    "inner": "dot_general",
    "vdot": "dot_general",
    "dot_general": "dot_general",
    "add": "add",
    "subtract": "sub",
    "multiply": "mul",
    "divide": "div",
    "true_divide": "div",
    "negative": "neg",
    "power": "pow",
    "maximum": "max",
    "minimum": "min",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arctan2": "atan2",
    "sum": "reduce_sum",
    "max": "reduce_max",
    "min": "reduce_min",
    "prod": "reduce_prod",
    "astype": "convert_element_type",
    "where": "select_n",
}

# Tracer operators wrapped while recording: dunder -> the primitive.
_OPERATORS = {
    "__add__": "add", "__radd__": "add",
    "__sub__": "sub", "__rsub__": "sub",
    "__mul__": "mul", "__rmul__": "mul",
    "__truediv__": "div", "__rtruediv__": "div",
    "__matmul__": "dot_general", "__rmatmul__": "dot_general",
    "__pow__": "pow", "__rpow__": "pow",
    "__neg__": "neg",
    "astype": "convert_element_type",
}

_SHORT = {
    "bfloat16": "bf16", "float16": "f16", "float32": "f32", "float64": "f64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "complex64": "c64", "complex128": "c128", "bool": "bool",
}


def jax_dtype(dtype: Any) -> str:
    """JAX's short dtype name (``f32``, ``bf16``, ``i32``, ``bool``)."""
    name = _dtypes.name_of(np.dtype(dtype))
    return _SHORT.get(name, name)


def jax_primitive(display: str) -> str:
    """JAX's name of the primitive baton displays as ``display``."""
    if display.startswith("compare "):
        return display.split(" ", 1)[1].lower()
    return _PRIMITIVES.get(display, display)


def _is_user(frame: Any) -> bool:
    filename = frame.f_code.co_filename
    if filename.startswith("<frozen"):
        return False
    return not os.path.abspath(filename).startswith(_PACKAGE)


def _location(frame: Any) -> str:
    code = frame.f_code
    line, col = frame.f_lineno, None
    try:
        positions = list(code.co_positions())
        pos = positions[frame.f_lasti // 2]
        if pos[0] is not None:
            line, col = pos[0], pos[2]
    except (AttributeError, IndexError):
        pass
    where = f"{code.co_filename}:{line}" + (f":{col}" if col is not None else "")
    return f"{where} ({getattr(code, 'co_qualname', code.co_name)})"


class Recorder:
    """The calls from user code into baton seen while recording, each as
    (primitive, shape, dtype, checkpoint name, location), in call order."""

    def __init__(self) -> None:
        self.records: list[list] = []  # [primitive, shape, dtype, name, where, used]
        self._pending: dict[int, tuple[str, str | None, str]] = {}

    def hook(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            caller = frame.f_back
            if caller is None or _is_user(frame) or not _is_user(caller):
                return
            code = frame.f_code
            fname = getattr(code, "co_qualname", code.co_name).rsplit(".", 1)[-1]
            if code.co_freevars:
                # A function made by a factory (bt.numpy's elementwise ones
                # are closures over an ``impl`` named as the function).
                local = frame.f_locals
                made = local.get("name")
                impl = getattr(local.get("impl"), "__name__", None)
                if isinstance(made, str) and "name" in code.co_freevars:
                    fname = made
                elif isinstance(impl, str) and "impl" in code.co_freevars:
                    fname = impl
            if fname.startswith("_op_"):
                prim = fname[4:]
            else:
                prim = _CALLS.get(fname, fname)
            name = None
            if prim == "checkpoint_name":
                n = frame.f_locals.get("name")
                name = n if isinstance(n, str) else None
            self._pending[id(frame)] = (prim, name, _location(caller))
        elif event == "return":
            got = self._pending.pop(id(frame), None)
            if got is None:
                return
            prim, name, where = got
            for leaf in tree.leaves(arg) if arg is not None else ():
                if isinstance(leaf, _lax.Tracer):
                    self.records.append(
                        [prim, tuple(leaf.shape), np.dtype(leaf.dtype), name, where,
                         False]
                    )

    def source(
        self, prim: str, shape: tuple, dtype: Any, name: str | None
    ) -> str | None:
        """The location of the first unused record matching a residual."""
        dtype = np.dtype(dtype)
        for r in self.records:
            if r[5] or r[1] != tuple(shape) or r[2] != dtype:
                continue
            if name is not None:
                if r[0] != "checkpoint_name" or r[3] != name:
                    continue
            elif r[0] != prim:
                continue
            r[5] = True
            return r[4]
        return None


def _wrap_operator(dunder: str, prim: str, original: Any) -> Any:
    def op(self: Any, *other: Any, **kwargs: Any) -> Any:
        return original(self, *other, **kwargs)

    op.__name__ = op.__qualname__ = f"_op_{prim}"
    op.__code__ = op.__code__.replace(co_name=f"_op_{prim}", co_qualname=f"_op_{prim}")
    return op


@contextmanager
def recording() -> Iterator[Recorder]:
    """Records user calls into baton (see the module docstring) while the
    ``with`` body runs on this thread."""
    rec = Recorder()
    tracer_type = _lax.Tracer
    saved = {}
    for dunder, prim in _OPERATORS.items():
        original = tracer_type.__dict__.get(dunder)
        if original is None:
            continue
        saved[dunder] = original
        setattr(tracer_type, dunder, _wrap_operator(dunder, prim, original))
    previous = sys.getprofile()
    sys.setprofile(rec.hook)
    try:
        yield rec
    finally:
        sys.setprofile(previous)
        for dunder, original in saved.items():
            setattr(tracer_type, dunder, original)
