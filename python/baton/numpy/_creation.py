"""Array creation of ``baton.numpy``.

Outside a trace these make device arrays directly (no compilation): numpy
data is copied (a snapshot), ``asarray`` of a baton Array returns it
unchanged. Inside a function traced by ``bt.jit`` they make values of the
program instead: fills and ranges become broadcast scalars or iotas, host
data a constant (snapshotted, stored once).

Default dtypes follow jax.numpy: Python ints int32, Python floats (and
``linspace``) float32, ``zeros``/``ones``/``empty``/``eye`` float32.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from baton import _config_states, _creation, _device_put, _dlpack, _dtypes, _ops
from baton._config import config as _config
from baton._baton import Array, lax
from baton._jit import device_put

Tracer = lax.Tracer
_F32 = np.dtype(np.float32)

__all__ = [
    "arange",
    "array",
    "asarray",
    "copy",
    "empty",
    "empty_like",
    "eye",
    "from_dlpack",
    "frombuffer",
    "fromstring",
    "full",
    "full_like",
    "identity",
    "linspace",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]


def _dt(dtype: Any) -> np.dtype | None:
    return None if dtype is None else _dtypes.canonicalize(dtype)


def _shape(shape: Any) -> tuple[int, ...]:
    return _creation._shape(shape)


def _astype(x: Any, dtype: np.dtype) -> Any:
    if x.dtype == dtype:
        return _ops.unchanged(x)
    return _ops.apply(_astype_impl, (x,), (("dtype", dtype),))


def _astype_impl(x: Any, *, dtype: np.dtype) -> Any:
    return lax.astype(x, dtype)


def _contains_traced(obj: Any) -> bool:
    if isinstance(obj, (Array, Tracer)):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_contains_traced(o) for o in obj)
    return False


# array() of a list holding traced values stacks them. These two lax-level
# helpers keep this module below numpy/_shapes (whose operations take what
# asarray() makes), as numpy.stack and numpy.reshape would do it.
def _reshape(a: Any, *, shape: tuple[int, ...]) -> Any:
    return lax.reshape(_ops.as_tracer(a), shape)


def _stacked(*rows: Any) -> Any:
    return lax.concatenate(
        [lax.reshape(_ops.as_tracer(r), (1, *r.shape)) for r in rows], 0
    )


def _stack(rows: list[Any]) -> Any:
    if len({tuple(r.shape) for r in rows}) != 1:
        raise ValueError("all input arrays must have the same shape")
    return _ops.apply(_stacked, tuple(rows))


def array(object: Any, dtype: Any = None, copy: bool = True, ndmin: int = 0) -> Any:
    """A new array from ``object`` (numpy data, nested lists, scalars, a
    baton Array): always a copy (a snapshot of numpy data). Python data
    follows JAX's defaults (int -> int32, float -> float32); inside a trace
    a Python scalar gives a weakly typed value, as in JAX."""
    d = _dt(dtype)
    if isinstance(object, (Array, Tracer)):
        out = _ops.unchanged(object) if d is None else _astype(object, d)
        if out is object and copy and isinstance(out, Array):
            out = out.copy()
    elif isinstance(object, (list, tuple)) and _contains_traced(object):
        out = _stack([array(o) for o in object])
        if d is not None:
            out = _astype(out, d)
    elif _ops.is_scalar(object) and d is None and _ops._is_tracing():
        # A Python scalar stays weakly typed, as JAX's jnp.array(0.5): a
        # bfloat16 value times jnp.asarray(0.5) stays bfloat16.
        out = lax.as_tracer(object)
    else:
        if _ops.is_scalar(object):
            a = _dtypes.python_scalar_to_numpy(object, d)
        else:
            a = _ops.host_array(object)
            if d is not None:
                a = a.astype(d)
        out = _put(np.array(a, copy=True))
    if ndmin > len(out.shape):
        new = (1,) * (ndmin - len(out.shape)) + tuple(out.shape)
        out = _ops.apply(_reshape, (out,), (("shape", new),))
    return out


def _put(a: np.ndarray) -> Any:
    if _ops._is_tracing():
        return lax.constant(a)
    if _config.read("transfer_guard_host_to_device") != "allow":
        _config_states.check_transfer(
            "host_to_device", False, f"{a.dtype}{list(a.shape)} (baton.numpy.array)"
        )
    return _device_put.device_put(a)


def asarray(a: Any, dtype: Any = None, copy: bool | None = None) -> Any:
    """``a`` as an array: a baton Array (or Tracer) of the right dtype is
    returned unchanged; numpy data is copied (a snapshot)."""
    if isinstance(a, (Array, Tracer)):
        d = _dt(dtype)
        out = _ops.unchanged(a) if d is None else _astype(a, d)
        if copy and out is a and isinstance(a, Array):
            out = a.copy()
        return out
    return array(a, dtype)


def copy(a: Any) -> Any:
    """A copy of ``a``."""
    return array(a, copy=True)


def _traced_full(shape: tuple[int, ...], fill_value: Any, d: np.dtype) -> Any:
    return lax.full(shape, fill_value, d)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value`` (a scalar or an
    array broadcast to shape). dtype: the fill value's (Python scalars:
    bool / int32 / float32)."""
    dims = _shape(shape)
    d = _dt(dtype)
    if d is None:
        d = _ops.result_dtype(fill_value)
    if _ops._is_tracing() or isinstance(fill_value, (Array, Tracer)):
        return _ops.apply(_fill_impl, (fill_value,), (("shape", dims), ("dtype", d)))
    return _creation.full(dims, fill_value, d, device=device)


def _fill_impl(v: Any, *, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return lax.full(shape, v, dtype)


def zeros(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array of zeros (float32 by default)."""
    return full(shape, 0, _F32 if dtype is None else dtype, device=device)


def ones(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array of ones (float32 by default)."""
    return full(shape, 1, _F32 if dtype is None else dtype, device=device)


def empty(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array with unspecified contents (zeros inside a trace)."""
    d = _F32 if dtype is None else _dt(dtype)
    if _ops._is_tracing():
        return zeros(shape, d)
    return _creation.empty(_shape(shape), d, device=device)


def _like(a: Any, dtype: Any, shape: Any) -> tuple[tuple[int, ...], np.dtype, Any]:
    s = _ops.shape_of(a) if shape is None else _shape(shape)
    d = _dt(dtype)
    if d is None:
        # A weakly typed operand: a Python scalar (its default dtype) or a
        # Tracer of one, which has a dtype of its own (``_ops.dtype_of``
        # says None for both: "weak").
        d = _ops.dtype_of(a)
        if d is None:
            d = np.dtype(a.dtype) if isinstance(a, Tracer) else _ops.weak_dtype(a, None)
    device = a.device if isinstance(a, Array) else None
    return s, d, device


def _filled_like(a: Any, fill: Any, dtype: Any, shape: Any) -> Any:
    """``fill`` in a's shape and dtype (unless given). Like JAX, the result
    of a weakly typed Tracer ``a`` (a Python scalar passed to a jitted
    function) without ``dtype`` is weakly typed too, so it still takes the
    other operand's dtype in arithmetic."""
    s, d, dev = _like(a, dtype, shape)
    weak = (
        dtype is None
        and isinstance(a, Tracer)
        and _ops.is_weak(a)
        and s == ()
        and _ops.is_scalar(fill)
    )
    if weak:
        kind = {"b": bool, "i": int, "u": int}.get(d.kind, float)
        t = lax.as_tracer(kind(fill))
        return t if np.dtype(t.dtype) == d else full(s, fill, d)
    return full(s, fill, d, device=dev)


def zeros_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Zeros with a's shape and dtype (unless given)."""
    return _filled_like(a, 0, dtype, shape)


def ones_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Ones with a's shape and dtype (unless given)."""
    return _filled_like(a, 1, dtype, shape)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    """``fill_value`` with a's shape and dtype (unless given)."""
    return _filled_like(a, fill_value, dtype, shape)


def empty_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Unspecified contents with a's shape and dtype (unless given)."""
    s, d, dev = _like(a, dtype, shape)
    return empty(s, d, device=dev)


def _host_or_traced(values: np.ndarray) -> Any:
    return (
        lax.constant(values) if _ops._is_tracing() else _device_put.device_put(values)
    )


def _static_number(x: Any, what: str) -> Any:
    if isinstance(x, Array) and x.ndim == 0:
        return x.item()  # a concrete scalar array has a value, as in JAX
    if isinstance(x, (Array, Tracer)):
        raise TypeError(
            f"{what} must be a static Python number (the result's shape depends on "
            "it), not an array"
        )
    return x


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    """Evenly spaced values in [start, stop) (numpy's arange; ints give
    int32 and floats float32 unless dtype is given)."""
    start = _static_number(start, "arange: start")
    if stop is None:
        start, stop = 0, start
    stop = _static_number(stop, "arange: stop")
    step = 1 if step is None else _static_number(step, "arange: step")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    d = _dt(dtype)
    if d is None:
        d = _ops.result_dtype(
            *(v if _ops.is_scalar(v) else np.asarray(v) for v in (start, stop, step))
        )
    if all(
        isinstance(v, (int, np.integer)) for v in (start, stop, step)
    ) and _ops.is_int(d):
        n = max(0, -(-(int(stop) - int(start)) // int(step)))
        if _ops._is_tracing():
            t = lax.iota(d, (n,))
            if step != 1:
                t = lax.mul(t, int(step))
            return t if start == 0 else lax.add(t, int(start))

    def values() -> np.ndarray:
        return np.arange(
            start, stop, step, dtype=np.float64 if _ops.is_float(d) else None
        ).astype(d)

    if _ops._is_tracing():
        return lax.constant(values())
    n = len(range(0, _arange_count(start, stop, step)))
    return _creation.fill_from_host((n,), d, None, "device", values)


def _arange_count(start: Any, stop: Any, step: Any) -> int:
    """numpy's arange length: ceil((stop - start) / step), at least 0."""
    if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        return max(0, -(-(int(stop) - int(start)) // int(step)))
    return max(0, int(np.ceil((float(stop) - float(start)) / float(step))))


def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """``num`` evenly spaced values from start to stop (float32 unless
    dtype is given), computed in float64 as numpy does."""
    if axis != 0:
        raise NotImplementedError("linspace: only axis=0 is supported")
    start = _static_number(start, "linspace: start")
    stop = _static_number(stop, "linspace: stop")
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    d = _F32 if dtype is None else _dt(dtype)

    def values() -> np.ndarray:
        v = np.linspace(start, stop, num, endpoint=endpoint, dtype=np.float64)
        return (np.floor(v) if _ops.is_int(d) else v).astype(d)

    if _ops._is_tracing():
        out = lax.constant(values())
    else:
        out = _creation.fill_from_host((num,), d, None, "device", values)
    if not retstep:
        return out
    div = (num - 1) if endpoint else num
    step = (
        (np.float64(stop) - np.float64(start)) / div if div > 0 else np.float64("nan")
    )
    return out, step


def _eye(*, n: int, m: int, k: int, dtype: np.dtype) -> Any:
    rows = lax.iota(np.int32, (n, m), 0)
    cols = lax.iota(np.int32, (n, m), 1)
    return lax.astype(lax.eq(lax.add(rows, k), cols), dtype)


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """An N x M array with ones on the k-th diagonal (float32 by default)."""
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    d = _F32 if dtype is None else _dt(dtype)
    k = operator.index(k)
    if _ops._is_tracing():
        return _eye(n=n, m=m, k=k, dtype=d)
    if n < 0 or m < 0:
        raise ValueError(f"eye: negative dimensions are not allowed: ({n}, {m})")
    return _creation.fill_from_host(
        (n, m), d, None, "device", lambda: np.eye(n, m, k, dtype=d)
    )


def identity(n: int, dtype: Any = None) -> Any:
    """The n x n identity (float32 by default)."""
    return eye(n, dtype=dtype)


# ---- host-side constructors ----


def _from_host(a: np.ndarray, dtype: Any) -> Any:
    d = _dtypes.canonicalize(dtype)
    return asarray(np.ascontiguousarray(a).astype(d, copy=False))


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An array from an object with ``__dlpack__`` (see ``bt.from_dlpack``)."""
    out = _dlpack.from_dlpack(x)
    if copy:
        out = out.copy()
    if device is not None:
        out = device_put(out, device)
    return out


def frombuffer(
    buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0
) -> Any:
    """A 1-D array of the bytes in ``buffer`` read as ``dtype`` (float:
    float32 with 64-bit types off)."""
    return _from_host(
        np.frombuffer(buffer, dtype=dtype, count=count, offset=offset), dtype
    )


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """A 1-D array of the numbers in text ``string`` separated by ``sep``
    (read on the host)."""
    if not sep:
        raise ValueError(
            "fromstring: `sep` must be a non-empty separator; for binary data "
            "use bnp.frombuffer"
        )
    return _from_host(np.fromstring(string, dtype=dtype, count=count, sep=sep), dtype)
