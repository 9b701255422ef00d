"""One implementation per operation, run traced or eagerly.

Every operation of ``baton.numpy``, the Array operators, indexing and
``.at[]`` is a function written against ``bt.lax`` (it works on Tracers).
:func:`apply` runs it:

- while a function is being traced (``bt.jit``), it is called directly: its
  lax calls become part of that program (baton Arrays are captured as hidden
  arguments, numpy data as snapshot constants, Python scalars stay weakly
  typed);
- otherwise (eager use on baton Arrays, numpy data, scalars) it runs through
  a ``bt.jit`` of the implementation, one per (implementation, static
  parameters), cached here; the jit caches one program per argument
  signature, so each op is compiled once per shapes and dtypes and a later
  call costs a dict lookup plus the jit call.

Weakly typed Python scalars in eager calls are passed as 0-d arrays of the
dtype they would take next to the other operands (``x * 2`` passes a 0-d
array of x's dtype), which promotes exactly as the weak scalar would, so
``x * 2`` and ``x * 3`` share one program. Python lists and tuples of numbers
become int32 / float32 / bool arrays (JAX's defaults); numpy data keeps its
dtype.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from baton import _baton, _dtypes
from baton._baton import Array, Donated, lax
from baton._config import config as _config
from baton._config_states import check_transfer
from baton._sharded_array import is_sharded
from baton.errors import TypePromotionError

_config_values = _config._values  # read on hot paths without a call

Tracer = lax.Tracer
_is_tracing = lax.is_tracing

# ---- dtype promotion (mirrors baton/core/dtype.cc promote_types) ----

_BOOL = np.dtype(np.bool_)
_INT32 = np.dtype(np.int32)
_INT64 = np.dtype(np.int64)
_INT16 = np.dtype(np.int16)
_FLOAT32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)
_BF16 = _dtypes.bfloat16


def is_float(d: np.dtype) -> bool:
    return d.kind == "f" or d == _BF16


def is_int(d: np.dtype) -> bool:
    return d.kind in "iu"


def is_complex(d: np.dtype) -> bool:
    return d.kind == "c"


def is_inexact(d: np.dtype) -> bool:
    """Floating or complex (numpy's ``inexact``)."""
    return is_float(d) or d.kind == "c"


_COMPLEX64 = np.dtype(np.complex64)
_COMPLEX128 = np.dtype(np.complex128)
_FLOAT64 = np.dtype(np.float64)


def complex_of(d: np.dtype) -> np.dtype:
    """The complex dtype whose parts hold ``d`` (float64 and complex128 ->
    complex128; everything else -> complex64)."""
    return _COMPLEX128 if d in (_FLOAT64, _COMPLEX128) else _COMPLEX64


def real_of(d: np.dtype) -> np.dtype:
    """The dtype of a complex dtype's parts (``d`` itself if not complex)."""
    if d == _COMPLEX64:
        return _FLOAT32
    if d == _COMPLEX128:
        return _FLOAT64
    return d


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """JAX's promotion (with 64-bit types enabled), as baton's C++ core does
    it: bool < integers < floats < complex (a complex type with float64
    gives complex128); float16 with bfloat16 gives float32;
    signed with unsigned gives a signed type wide enough."""
    if a == b:
        return a
    if _config_values["numpy_dtype_promotion"] == "strict":
        _refuse_promotion(a, b)
    if a == _BOOL:
        return b
    if b == _BOOL:
        return a
    if is_complex(a) or is_complex(b):
        ra, rb = real_of(a), real_of(b)
        if is_float(ra) and is_float(rb):
            parts = promote_types(ra, rb)
        else:
            parts = ra if is_float(ra) else rb
        return complex_of(parts)
    fa, fb = is_float(a), is_float(b)
    if fa and fb:
        if {a, b} == {_F16, _BF16}:
            return _FLOAT32
        return a if a.itemsize >= b.itemsize else b
    if fa:
        return a
    if fb:
        return b
    ua, ub = a.kind == "u", b.kind == "u"
    if ua == ub:
        return a if a.itemsize >= b.itemsize else b
    u, s = (a, b) if ua else (b, a)
    if s.itemsize > u.itemsize:
        return s
    return _INT16 if u.itemsize == 1 else _INT64


def weak_dtype(value: Any, other: np.dtype | None) -> np.dtype:
    """The dtype a weakly typed Python scalar (or weakly typed tracer) takes
    next to a value of dtype ``other`` (None: its own default, bool / int32 /
    float32, or the tracer's dtype)."""
    if isinstance(value, bool):
        return _BOOL if other is None else other
    if isinstance(value, int):
        return _INT32 if other is None or other == _BOOL else other
    if isinstance(value, float):
        return _FLOAT32 if other is None or not is_inexact(other) else other
    if isinstance(value, complex):
        if other is None:
            return _COMPLEX64
        return other if is_complex(other) else complex_of(other)
    if isinstance(value, Tracer) and value.weak_type:
        # A weakly typed tracer (a Python scalar argument under jit) takes
        # the other operand's dtype as the scalar it stands for would.
        d = np.dtype(value.dtype)
        if d == _BOOL:
            return _BOOL if other is None else other
        if d.kind in "iu":
            return d if other is None or other == _BOOL else other
        if d.kind == "c":
            if other is None or is_complex(other):
                return d if other is None else other
            return complex_of(other)
        return d if other is None or not is_inexact(other) else other
    raise TypeError(f"{type(value).__name__} is not a Python scalar")


def _refuse_promotion(a: np.dtype, b: np.dtype) -> None:
    raise TypePromotionError(
        f"Input dtypes ({str(a)!r}, {str(b)!r}) have no available implicit dtype "
        "promotion path when jax_numpy_dtype_promotion=strict. Try explicitly "
        "casting inputs to the desired output type, or set "
        "jax_numpy_dtype_promotion=standard."
    )


def check_rank_promotion(name: str, *xs: Any) -> None:
    """JAX's ``numpy_rank_promotion`` check for a binary operation:
    operands of different nonzero ranks warn or raise when it says so."""
    mode = _config_values["numpy_rank_promotion"]
    if mode == "allow":
        return
    shapes = [tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)
              for x in xs]
    if len({len(s) for s in shapes if s}) < 2:
        return
    text = " ".join(str(s) for s in shapes)
    msg = (
        f"Operands could not be broadcast together for {name} on shapes {text} "
        f"and with the config option jax_numpy_rank_promotion='{mode}'. For more "
        "information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html."
    )
    if mode == "raise":
        raise ValueError(msg)
    import warnings

    warnings.warn(
        f"Following NumPy automatic rank promotion for {name} on shapes {text}. "
        "Set the jax_numpy_rank_promotion config option to 'allow' to disable "
        "this warning; for more information, see "
        "https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
        stacklevel=3,
    )


def is_scalar(x: Any) -> bool:
    """A weakly typed Python scalar (not a numpy scalar, which is strong)."""
    t = type(x)
    return (
        t is int
        or t is float
        or t is bool
        or t is complex
        or (isinstance(x, (int, float, complex)) and not isinstance(x, np.generic))
    )


def is_weak(x: Any) -> bool:
    """A weakly typed operand: a Python scalar, or a Tracer of one (a Python
    scalar passed to a jitted function)."""
    if isinstance(x, Tracer):
        return bool(getattr(x, "weak_type", False))
    return is_scalar(x)


def _weak_kind(x: Any) -> Any:
    """A Python scalar standing for weak operand x's kind."""
    if not isinstance(x, Tracer):
        return x
    k = np.dtype(x.dtype).kind
    return True if k == "b" else (0 if k in "iu" else (0j if k == "c" else 0.0))


def _abstract_value(x: Any) -> bool:
    """An object that only describes an array (``bt.ShapeDtypeStruct`` or a
    library's equivalent): ``shape`` and ``dtype`` attributes, no data
    (neither ``__array__`` nor a length). ``*_like`` functions accept it,
    as in JAX."""
    return (
        hasattr(x, "shape")
        and hasattr(x, "dtype")
        and not hasattr(x, "__array__")
        and not hasattr(x, "__len__")
        and not isinstance(x, (type, np.generic))
    )


def dtype_of(x: Any) -> np.dtype | None:
    """x's dtype; None for a weakly typed operand."""
    if isinstance(x, Tracer):
        return None if is_weak(x) else np.dtype(x.dtype)
    if isinstance(x, (Array, Donated, np.ndarray, np.generic)) or is_sharded(x):
        return np.dtype(x.dtype)
    if is_scalar(x):
        return None
    if _abstract_value(x):
        return np.dtype(x.dtype)
    return host_array(x).dtype


def result_dtype(*xs: Any) -> np.dtype:
    """The dtype numpy/JAX promotion gives these operands (weak ones take
    the strong operands' type)."""
    strong = None
    weak: list[Any] = []
    for x in xs:
        d = dtype_of(x)
        if d is None:
            weak.append(_weak_kind(x))
        else:
            strong = d if strong is None else promote_types(strong, d)
    for w in weak:
        strong = weak_dtype(w, strong)
    return _FLOAT32 if strong is None else strong


# ---- host data ----

_NAMES: dict[np.dtype, str] = {}  # baton's names of dtypes seen (dtype.name is slow)


def host_array(x: Any) -> np.ndarray:
    """numpy data for a non-Array operand: numpy arrays keep their dtype
    (64-bit data becomes 32-bit with x64 off, as in JAX); Python scalars,
    lists and tuples follow JAX's defaults (int32, float32, complex64);
    object and string data raise TypeError."""
    if type(x) is np.ndarray and x.dtype in _NAMES and x.dtype not in _dtypes.NARROW:
        return x  # a supported dtype (seen before)
    if isinstance(x, np.ndarray):
        a = x
    elif isinstance(x, np.generic):
        a = np.asarray(x)
    elif isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"expected an array or a number, not {type(x).__name__}")
    else:
        try:
            a = np.asarray(x)
        except ValueError as e:  # ragged lists
            raise ValueError(
                f"cannot make an array of {type(x).__name__}: {e}"
            ) from None
        if a.dtype == np.int64 and not isinstance(x, np.ndarray):
            if a.size and (a.min() < -(2**31) or a.max() >= 2**31):
                raise OverflowError(
                    "a Python int in this list does not fit in int32; pass a numpy "
                    "array with an explicit dtype (e.g. np.int64)"
                )
            a = a.astype(np.int32)
        elif a.dtype == np.float64 and not hasattr(x, "__array__"):
            a = a.astype(np.float32)
        elif a.dtype == np.complex128 and not hasattr(x, "__array__"):
            a = a.astype(np.complex64)
    if a.dtype.kind == "O":
        raise TypeError(
            f"cannot use a {type(x).__name__} of Python objects as an array (ragged "
            "or mixed data?)"
        )
    a = _dtypes.narrow_host(a)
    _NAMES[a.dtype] = _dtypes.name_of(a.dtype)  # TypeError for uint16, ...
    return a


# ---- eager dispatch ----

# (implementation, static parameters) -> bt.jit of it, oldest first.
MAX_EAGER_FUNCTIONS = 4096
_eager_fns: dict[tuple[Callable[..., Any], tuple[Any, ...]], Any] = {}


def _jitted(impl: Callable[..., Any], static: tuple[tuple[str, Any], ...]) -> Any:
    from baton._jit import jit

    kwargs = dict(static)

    def run(*args: Any) -> Any:
        return impl(*args, **kwargs)

    name = getattr(impl, "op_name", None) or getattr(impl, "__name__", "op").lstrip("_")
    run.__name__ = run.__qualname__ = name
    j = jit(run)
    if len(_eager_fns) >= MAX_EAGER_FUNCTIONS:
        # The oldest entry goes (with its programs): bounded by static
        # parameters that keep changing (slice bounds, reshape targets).
        del _eager_fns[next(iter(_eager_fns))]
    _eager_fns[(impl, static)] = j
    return j


def _eager_operand(x: Any) -> Any:
    if isinstance(x, (Array, Donated)) or is_sharded(x):
        return x
    if (
        isinstance(x, (tuple, list))
        and x
        and all(isinstance(e, (Array, Tracer)) for e in x)
    ):
        raise TypeError(
            "a list of arrays is not an array operand here; use bnp.stack or "
            "bnp.concatenate"
        )
    return host_array(x)


def apply(
    impl: Callable[..., Any],
    args: tuple[Any, ...],
    static: tuple[tuple[str, Any], ...] = (),
    weak_ref: tuple[int, ...] | None = None,
) -> Any:
    """Runs ``impl(*args, **dict(static))``: directly while tracing, else
    through the cached jit (see the module docstring).

    ``args`` are array operands (Arrays, Tracers, numpy data, scalars, or
    pytrees of them); ``static`` are hashable Python parameters (axes,
    dtypes, index plans), part of the cache key. ``weak_ref`` lists the
    operands whose dtypes Python scalars are weakly typed against (default:
    all others).
    """
    if _is_tracing():
        return impl(*args, **dict(static))
    try:
        fn = _eager_fns[(impl, static)]
    except KeyError:
        fn = _jitted(impl, static)
    except TypeError:
        raise TypeError(
            f"{getattr(impl, '__name__', 'op').lstrip('_')}: unhashable "
            f"parameters {static!r}"
        ) from None
    ref: np.dtype | None = None
    scalars = None
    host = None
    device = None
    conv = list(args)
    for i, a in enumerate(args):
        t = type(a)
        if t is Array:
            d = a.dtype
            if device is None:
                device = a.device
        elif t is int or t is float or t is bool or t is complex:
            if scalars is None:
                scalars = [i]
            else:
                scalars.append(i)
            continue
        elif isinstance(a, Tracer):
            # A Tracer outside its trace: let lax say that it escaped.
            return impl(*args, **dict(static))
        else:
            if is_scalar(a):
                conv[i] = (
                    float(a)
                    if isinstance(a, float)
                    else complex(a)
                    if isinstance(a, complex)
                    else int(a)
                )
                if scalars is None:
                    scalars = [i]
                else:
                    scalars.append(i)
                continue
            conv[i] = a = _eager_operand(a)
            if isinstance(a, np.ndarray):
                if host is None:
                    host = [i]
                else:
                    host.append(i)
            d = np.dtype(a.dtype)
        if weak_ref is None or i in weak_ref:
            ref = d if ref is None else (d if ref == d else promote_types(ref, d))
    if scalars is not None:
        if ref is None:
            # Only scalars: they take the strongest of their default dtypes.
            for i in scalars:
                if weak_ref is None or i in weak_ref:
                    ref = weak_dtype(args[i], ref)
        for i in scalars:
            conv[i] = _put(_scalar_array(conv[i], weak_dtype(conv[i], ref)), device)
    if host is not None:
        for i in host:
            conv[i] = _put(conv[i], device)
    return fn(*conv)


# Bounds of the integer dtypes, for weak Python ints.
_INT_BOUNDS = {
    np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32)
}


def _scalar_array(value: Any, d: np.dtype) -> np.ndarray:
    """A weak Python scalar as a 0-d array of the dtype it takes (an int
    that does not fit raises OverflowError, as in numpy and JAX)."""
    bounds = _INT_BOUNDS.get(d)
    if (
        bounds is not None
        and type(value) is int
        and not bounds[0] <= value <= bounds[1]
    ):
        raise OverflowError(
            f"Python int {value} does not fit in {d.name}; pass a numpy array with "
            "an explicit dtype (e.g. np.int64) instead"
        )
    return np.asarray(value, d)


def _put(a: np.ndarray, device: Any) -> Array:
    """Host data as a device array on ``device`` (a snapshot copy; faster
    than leaving numpy leaves to the jit call)."""
    if _config_values["transfer_guard_host_to_device"] != "allow":
        check_transfer("host_to_device", False, f"{a.dtype}{list(a.shape)}")
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    d = a.dtype
    name = _NAMES.get(d)
    if name is None:
        name = _NAMES[d] = _dtypes.name_of(d)  # TypeError for unsupported dtypes
    return _baton._put_numpy(a, name, device, "device", False)


def eager_cache_size() -> int:
    """Programs compiled for eager operations so far (each op, static
    parameters and argument signature once)."""
    return sum(fn._cache_size() for fn in _eager_fns.values())


def clear_eager_cache() -> None:
    """Drops every compiled eager operation."""
    _eager_fns.clear()


def _register_clearer() -> None:
    from baton import _jit

    _jit.register_cache_clearer(clear_eager_cache)


_register_clearer()


# ---- helpers for implementations (they run on Tracers) ----


def unchanged(x: Any) -> Any:
    """x as the result of an op that leaves it as it is (a reshape to its
    own shape, x[...], astype to its dtype): a deleted or donated Array
    raises DeletedArrayError there, as every other use of it does."""
    if isinstance(x, Array):
        x._check_live()
    return x


def as_tracer(x: Any, dtype: np.dtype | None = None) -> Any:
    """x as a Tracer of the current trace; a Python scalar takes ``dtype``
    (its weak type's result) instead of its default."""
    if is_scalar(x) and dtype is not None:
        return lax.full((), x, dtype)
    if isinstance(x, Tracer):
        return x if dtype is None or x.dtype == dtype else lax.astype(x, dtype)
    t = lax.as_tracer(x)
    return t if dtype is None or t.dtype == dtype else lax.astype(t, dtype)


def promote(*xs: Any, to: np.dtype | None = None) -> list[Any]:
    """The operands as Tracers of one dtype (``to``, else numpy/JAX
    promotion with weak scalars)."""
    d = result_dtype(*xs) if to is None else to
    return [as_tracer(x, d) for x in xs]


def normalize_axis(axis: int, ndim: int, what: str = "axis") -> int:
    import operator

    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(
            f"{what} {a} is out of bounds for an array of dimension {ndim}"
        )
    return a + ndim if a < 0 else a


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """None (all axes) or a sorted tuple of distinct non-negative axes."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis in {tuple(axis)}")
        return tuple(sorted(axes))
    return (normalize_axis(axis, ndim),)


def shape_of(x: Any) -> tuple[int, ...]:
    if isinstance(x, (Array, Tracer, np.ndarray, np.generic)):
        return tuple(x.shape)
    if is_scalar(x):
        return ()
    if _abstract_value(x):
        return tuple(int(n) for n in x.shape)
    return tuple(host_array(x).shape)


__all__ = [
    "apply",
    "as_tracer",
    "clear_eager_cache",
    "dtype_of",
    "eager_cache_size",
    "host_array",
    "is_scalar",
    "promote",
    "promote_types",
    "result_dtype",
    "weak_dtype",
]

_ = _baton  # the extension is loaded first
