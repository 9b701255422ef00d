"""The machinery behind baton's transformations (grad, vjp, jvp, vmap,
checkpoint, custom rules): trace a Python function into a program, transform
the program in C++ (``baton._baton.transforms``), apply the result.

- :func:`trace` runs a function on Tracers in a trace nested in the current
  one (``python/src/trace_frames.h``). Values it uses from outside -- Tracers of
  an enclosing trace, baton Arrays -- become extra parameters of the program
  ("lifted"), returned with it so that whoever applies the program passes
  them; numpy data stays a snapshot constant.
- :func:`inline` re-emits a program into the current trace.

How a transformed function runs outside any trace (through ``bt.jit``) is
``_eager_transform``'s, a layer above ``_jit``, which builds on this module.

Thread-safety: traces belong to the calling thread (as for ``bt.jit``).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from baton import _baton, _dtypes, _ref_state
from baton._baton import Array, Donated
from baton._baton import lax as _lax

Tracer = _lax.Tracer
transforms = _baton.transforms
Program = transforms.Program

is_tracing = _lax.is_tracing

# An aval: (shape tuple, dtype name, weak, memory kind or None).
Aval = tuple


def is_python_scalar(x: Any) -> bool:
    """bool / int / float (weakly typed); numpy scalars are not."""
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


def is_array_like(x: Any) -> bool:
    """A value a traced function can take as an array argument."""
    from baton._sharded_array import is_sharded

    return (
        isinstance(x, (Array, Tracer, Donated, np.ndarray, np.generic))
        or is_python_scalar(x)
        or is_sharded(x)
    )


def aval_of(x: Any) -> Aval:
    """(shape, dtype name, weak, memory kind) of an array-like value."""
    if isinstance(x, Tracer):
        return (tuple(x.shape), _dtypes.name_of(x.dtype), x.weak_type, x.memory_kind)
    if isinstance(x, Array):
        return (tuple(x.shape), _dtypes.name_of(x.dtype), False, x.memory_kind)
    if is_python_scalar(x):
        return ((), _dtypes.python_scalar_dtype(x).name, True, None)
    if isinstance(x, (np.ndarray, np.generic)):
        return (tuple(np.shape(x)), _dtypes.name_of(np.asarray(x).dtype), False, None)
    raise TypeError(
        f"{type(x).__name__} is not a valid baton type: transformed functions "
        "take arrays (baton Arrays, numpy arrays, Python scalars) and pytrees "
        "of them"
    )


def dtype_of(x: Any) -> np.dtype:
    """The numpy dtype of an array-like value (TypeError for anything else)."""
    if isinstance(x, (Tracer, Array, np.ndarray, np.generic)):
        return np.dtype(x.dtype)
    if is_python_scalar(x):
        return np.dtype(_dtypes.python_scalar_dtype(x))
    raise TypeError(f"{type(x).__name__} is not an array")


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of an array-like value (``()`` for a Python scalar)."""
    if is_python_scalar(x):
        return ()
    return tuple(x.shape)


def is_float(d: Any) -> bool:
    """Whether dtype ``d`` is a floating-point dtype (bfloat16 included)."""
    d = np.dtype(d)
    return d.kind == "f" or d == _dtypes.bfloat16


def is_inexact(d: Any) -> bool:
    """Whether dtype ``d`` is floating or complex (numpy's ``inexact``): the
    dtypes that have derivatives."""
    d = np.dtype(d)
    return d.kind in "fc" or d == _dtypes.bfloat16


def dtype_str(d: Any) -> str:
    """baton's name of dtype ``d`` (``float32``, ``bfloat16``), for messages."""
    return _dtypes.name_of(np.dtype(d))


def type_str(x: Any) -> str:
    """``float32[3,4]``, as JAX prints avals in messages."""
    shape = shape_of(x)
    return f"{dtype_str(dtype_of(x))}[{','.join(str(d) for d in shape)}]"


def fun_name(fun: Any) -> str:
    """How programs and messages name ``fun``: its qualified name if it has one."""
    return (
        getattr(fun, "__qualname__", None)
        or getattr(fun, "__name__", None)
        or type(fun).__name__
    )


class Traced:
    """A traced function: its program, the outer values its extra
    parameters stand for, and which outputs are weakly typed."""

    __slots__ = ("lifted", "out_weak", "program")

    def __init__(self, program: Program, lifted: list, out_weak: list) -> None:
        self.program = program
        self.lifted = lifted
        self.out_weak = out_weak


def trace(
    fn: Callable[..., Sequence[Any]],
    avals: Sequence[Aval],
    name: str,
    values: Sequence[Any] | None = None,
) -> Traced:
    """Traces ``fn(*tracers)`` (one Tracer per aval; ``fn`` returns a flat
    sequence of array-likes) in a trace nested in the current one.
    ``values``, where the caller has them, are what the parameters stand for
    (outer Tracers, Arrays, host data): then a value computed from them can
    be made concrete (``bool(x)``; ``python/src/concrete.cc``)."""
    vals = None if values is None else list(values)
    # A frame of its own for bt.Refs: writes to Refs from outside it raise
    # _ref_state.RefEffects (lax control flow threads those Refs through).
    fn = _ref_state.framed(fn, name)
    program, lifted, out_weak = transforms.subtrace(fn, list(avals), name, vals)
    return Traced(program, lifted, out_weak)


def inline(program: Program, operands: Sequence[Any], weak: Any = None) -> list:
    """``program`` applied to ``operands`` inside the current trace; its
    outputs as Tracers (weakly typed where ``weak`` says)."""
    return transforms.inline(program, list(operands), weak)


def unique_lifted(*lists: Sequence[Any]) -> tuple[list, list[list[int]]]:
    """The union of several lifted-value lists (by identity of the value)
    and, for each list, where its entries are in the union."""
    union: list = []
    where: dict = {}
    positions = []
    for values in lists:
        pos = []
        for v in values:
            k = transforms.value_key(v)
            if k not in where:
                where[k] = len(union)
                union.append(v)
            pos.append(where[k])
        positions.append(pos)
    return union, positions


# ---- arguments ----


def check_args(leaves: Sequence[Any], what: str) -> None:
    """TypeError naming ``what`` unless every argument leaf is array-like."""
    for leaf in leaves:
        if not is_array_like(leaf):
            raise TypeError(
                f"{what}: argument of type {type(leaf).__name__} is not a valid "
                "baton type; pass arrays (baton Arrays, numpy arrays, Python "
                "scalars) or pytrees of them"
            )


def check_outputs(leaves: Sequence[Any], what: str) -> None:
    """TypeError naming ``what`` unless every output leaf is array-like."""
    for leaf in leaves:
        if not is_array_like(leaf):
            raise TypeError(
                f"{what}: the function returned a {type(leaf).__name__}; outputs "
                "must be arrays or pytrees of arrays"
            )


def int_tuple(nums: Any) -> tuple[int, ...]:
    """An int or a sequence of ints (``nondiff_argnums``, ``static_argnums``)
    as a tuple of ints."""
    if isinstance(nums, int):
        return (nums,)
    return tuple(int(i) for i in nums)


def replaced(values: Sequence[Any], positions: Sequence[int], new: Any) -> list:
    """``values`` as a list with ``values[positions[k]]`` replaced by
    ``new[k]``."""
    out = list(values)
    for i, v in zip(positions, new):
        out[i] = v
    return out


def normalize_argnums(
    argnums: Any, nargs: int, what: str
) -> tuple[tuple[int, ...], bool]:
    """``argnums`` as non-negative positions among ``nargs`` arguments, and
    whether it was a single int (TypeError / ValueError as JAX)."""
    if isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool):
        nums = (int(argnums),)
        was_int = True
    elif isinstance(argnums, (tuple, list)):
        nums = tuple(int(a) for a in argnums)
        was_int = False
    else:
        raise TypeError(
            f"{what}: argnums must be an int or a tuple of ints, not {argnums!r}"
        )
    out = []
    for a in nums:
        b = a + nargs if a < 0 else a
        if not 0 <= b < nargs:
            raise TypeError(
                f"differentiating with respect to argnums={argnums} requires at "
                f"least {max(a + 1, -a)} positional arguments to be passed by "
                f"the caller, but got only {nargs} positional arguments."
            )
        out.append(b)
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: argnums {argnums} contains duplicates")
    return tuple(out), was_int


def argnums_partial(
    fun: Callable[..., Any], args: tuple, kwargs: dict, argnums: Any, what: str
) -> tuple[Callable[..., Any], tuple, bool]:
    """``fun`` as a function of the arguments ``argnums`` only (the others
    fixed to ``args`` / ``kwargs``), those arguments, and whether
    ``argnums`` was a single int."""
    nums, was_int = normalize_argnums(argnums, len(args), what)

    def partial(*dyn_args: Any) -> Any:
        return fun(*replaced(args, nums, dyn_args), **kwargs)

    return partial, tuple(args[i] for i in nums), was_int


def check_holomorphic(values: list, what: str, role: str) -> None:
    """TypeError (JAX's) unless every leaf of ``values`` is complex: with
    ``holomorphic=True`` the inputs (role "inputs") and outputs ("outputs")
    of the differentiated function must be complex."""
    for x in values:
        d = np.dtype(x.dtype) if hasattr(x, "dtype") else _dtypes.python_scalar_dtype(x)
        if d.kind != "c":
            raise TypeError(
                f"{what} with holomorphic=True requires {role} with complex "
                f"dtype, but got {dtype_str(d)}."
            )


def argument_names(fun: Any, nargs: int) -> list[str]:
    """How messages name positional argument i: its parameter name, else
    ``args[i]``."""
    names = []
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    P = inspect.Parameter
    positional = [
        p.name for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
    ]
    var = next((p.name for p in params if p.kind is P.VAR_POSITIONAL), None)
    for i in range(nargs):
        if i < len(positional):
            names.append(positional[i])
        elif var is not None:
            names.append(f"{var}[{i - len(positional)}]")
        else:
            names.append(f"args[{i}]")
    return names


def resolve_kwargs(fun: Any, args: tuple, kwargs: dict, what: str) -> tuple:
    """Keyword arguments bound to positions (custom_jvp / custom_vjp take
    positional arguments only, as in JAX)."""
    if not kwargs:
        return tuple(args)
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        raise TypeError(
            f"{what}: keyword arguments need a function whose signature can be "
            "inspected; pass them by position"
        ) from None
    ba = sig.bind(*args, **kwargs)
    ba.apply_defaults()
    if ba.kwargs:
        raise TypeError(
            f"{what}: keyword-only arguments ({', '.join(ba.kwargs)}) are not "
            "supported; pass them by position"
        )
    return tuple(ba.args)
