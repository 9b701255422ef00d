"""``bt.Ref``: JAX's mutable array references (``jax.new_ref``, the
``jax.ref`` module; https://docs.jax.dev/en/latest/array_refs.html).

    x_ref = bt.new_ref(bnp.zeros(3))     # a Ref owning one buffer (a copy of x)
    x_ref[1] = 5.0                       # written into that buffer, now
    x_ref[...] += 1                      # read, add, write back
    bt.freeze(x_ref)                     # its final value; x_ref is invalid

Memory: a Ref owns exactly one buffer. ``new_ref(x)`` copies ``x`` once
(so writes never show through ``x``, as in JAX). Outside a trace every write
(``ref[idx] = v``, ``addupdate``, ``swap``) runs a small compiled update with
the Ref's buffer donated, so it is overwritten in place: no second buffer,
however many writes. A read returns a new Array (a snapshot, unaffected by
later writes). ``freeze(ref)`` hands the buffer over as the result (no
copy); ``free_ref(ref)`` releases it at once.

``bt.jit``: Refs may be passed as arguments (anywhere in the argument
pytrees). Their buffers go to the call donated, the function sees the same
Ref objects holding the parameters, and their final values -- in the same
buffers where the program updates in place -- are in the caller's Refs when
the call returns. Refs may also be created inside the function (functional
updates in the program) and used in ``lax.fori_loop`` / ``while_loop`` /
``scan`` / ``map`` / ``cond`` / ``switch`` bodies (their values are threaded
through as carries). A Ref the function closes over works too: the first
call finds it (reads it as a captured array, writes its final value back)
and later calls pass it to a twin of the function taking it as a donated
argument (``_jit._JittedWithRefs``). A jitted function cannot return a Ref
(ValueError, as JAX).

Differentiation: a Ref created inside the differentiated function is an
ordinary intermediate value (``grad`` of ``freeze(ref)`` works); writes to a
Ref from outside the function raise (JAX raises for differentiated values;
baton for any). ``kind="no_grad_no_remat"`` stops gradients through what is
written into the Ref.

Index rules, as JAX's Refs: a written value must have exactly the shape
``ref[idx]`` has (no broadcasting) and the Ref's dtype (Python scalars and
integer values are cast as JAX casts them), else ValueError.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _dtypes, _indexing, _ref_state
from baton._baton import Array, Donated
from baton._baton import lax as _lax
from baton._checkpoint import stop_gradient as _stop_gradient
from baton._index_plan import parse as _parse
from baton._jit import jit

Tracer = _lax.Tracer

__all__ = [
    "AbstractRef",
    "Ref",
    "addupdate",
    "empty_ref",
    "free_ref",
    "freeze",
    "get",
    "new_ref",
    "set",
    "swap",
]

_KINDS = (None, "no_grad_no_remat")


# ---- the in-place updates run outside a trace (the buffer donated) ----


def _write_impl(x: Any, v: Any, *values: Any, plan: Any, mode: str) -> Any:
    v = _lax.convert_element_type(v, _dtypes.name_of(np.dtype(x.dtype)))
    return _indexing.scatter_impl(x, v, *values, plan=plan, mode=mode)


def _swap_impl(x: Any, v: Any, *values: Any, plan: Any) -> Any:
    old = _indexing.gather_impl(x, *values, plan=plan)
    return old, _write_impl(x, v, *values, plan=plan, mode="set")


_write = jit(_write_impl, static_argnames=("plan", "mode"), donate_argnums=0)
_swap = jit(_swap_impl, static_argnames=("plan",), donate_argnums=0)


# ---- values written into a Ref: JAX's rules ----


def _is_py_scalar(v: Any) -> bool:
    return isinstance(v, (bool, int, float, complex)) and not isinstance(v, np.generic)


def _value_type(v: Any) -> tuple[tuple[int, ...], np.dtype, bool]:
    """(shape, dtype, weak) of a value to write (host data canonicalized)."""
    if _is_py_scalar(v):
        return (), np.dtype(_dtypes.python_scalar_dtype(v)), True
    if isinstance(v, Tracer):
        return tuple(v.shape), np.dtype(v.dtype), bool(v.weak_type)
    if isinstance(v, Array):
        return tuple(v.shape), np.dtype(v.dtype), False
    if isinstance(v, Ref):
        raise TypeError("a bt.Ref cannot be written into a Ref; write ref[...] instead")
    a = np.asarray(v)
    return tuple(a.shape), _dtypes.canonical(a.dtype), False


def _is_float(d: np.dtype) -> bool:
    return d.kind == "f" or d == _dtypes.bfloat16


def _checked(ref: Ref, v: Any, out_shape: tuple, fname: str) -> None:
    """ValueError, as JAX's, unless ``v`` may be written where the index
    selects ``out_shape``: its dtype must be the Ref's (for set / swap, a
    weakly typed float into a float Ref and any integer into an integer
    Ref are cast), and its shape exactly ``out_shape``."""
    shape, d, weak = _value_type(v)
    rd = np.dtype(ref.dtype)
    cast = fname == "swap" and (
        (weak and _is_float(rd) and _is_float(d))
        or (rd.kind in "iu" and d.kind in "iu")
    )
    if d != rd and not cast:
        raise ValueError(
            f"Invalid dtype for `{fname}`. Ref dtype: {_dtypes.name_of(rd)}. "
            f"Value dtype: {d.name}."
        )
    if tuple(shape) != tuple(out_shape):
        raise ValueError(
            f"Invalid shape for `{fname}`. Ref shape: {tuple(ref.shape)}. "
            f"Expected shape: {tuple(out_shape)}. Value shape: {tuple(shape)}."
        )


def _key(idx: Any) -> Any:
    return Ellipsis if idx is None or (isinstance(idx, tuple) and not idx) else idx


def _as_value(ref: Ref, v: Any) -> Any:
    """``v`` as a Tracer of the Ref's dtype (inside a trace)."""
    t = v if isinstance(v, Tracer) else _lax.as_tracer(v)
    d = _dtypes.name_of(np.dtype(ref.dtype))
    if str(t.dtype) != d:
        t = _lax.convert_element_type(t, d)
    if ref._kind == "no_grad_no_remat":
        t = _stop_gradient(t)
    return t


def _update(ref: Ref, idx: Any, v: Any, mode: str, fname: str, what: str) -> Any:
    """Writes ``v`` at ``idx`` (mode set / add); returns the old values at
    ``idx`` when ``fname`` is swap."""
    value = _ref_state.read(ref, what)
    key = _key(idx)
    p = _parse(key, tuple(value.shape))
    _checked(ref, v, p.out_shape, fname)
    if isinstance(value, Tracer) or _lax.is_tracing():
        old = _indexing.getitem(value, key) if fname == "swap" else None
        if isinstance(value, Array):  # a Ref of no trace, used in one
            value = _lax.as_tracer(value)
        t = _as_value(ref, v)
        if key is Ellipsis and mode == "set":
            new = _ref_state.fresh(t)  # a buffer of its own, not v's
        else:
            new = _indexing.update(value, key, t, mode)
        _ref_state.write(ref, new, what)
        return old
    # Outside any trace: in place, the buffer donated to the update.
    values = _indexing._eager_values(p.values, tuple(value.shape))
    if fname == "swap":
        old, new = _swap(value, v, *values, plan=p.plan)
    else:
        old, new = None, _write(value, v, *values, plan=p.plan, mode=mode)
    _ref_state.write(ref, new, what)
    return old


# ---- the Ref ----


class AbstractRef:
    """The type of a Ref: its value's shape and dtype (``inner_aval``), as
    ``jax.ref.AbstractRef``.

    >>> bt.typeof(bt.new_ref(bnp.zeros(3)))
    Ref{float32[3]}
    """

    __slots__ = ("inner_aval", "kind", "memory_space")

    def __init__(
        self, inner_aval: Any, memory_space: Any = None, kind: Any = None
    ) -> None:
        self.inner_aval = inner_aval
        self.memory_space = memory_space
        self.kind = kind

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.inner_aval.shape)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.inner_aval.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def str_short(self) -> str:
        return f"{_dtypes.name_of(self.dtype)}[{','.join(str(d) for d in self.shape)}]"

    def __repr__(self) -> str:
        return f"Ref{{{self.str_short()}}}"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, AbstractRef)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.memory_space == other.memory_space
            and self.kind == other.kind
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.memory_space, self.kind))


class Ref(_ref_state.RefBase):
    """A mutable array reference (``jax.Ref``): made by :func:`new_ref`.

    >>> r = bt.new_ref(bnp.arange(5))
    >>> r[3] = 100
    >>> r
    Ref([  0,   1,   2, 100,   4], dtype=int32)
    >>> r[1:3]
    Array([1, 2], dtype=int32)

    Reads (``r[idx]``) return Arrays; writes (``r[idx] = v``, ``r[idx] += v``,
    :meth:`addupdate`) update the Ref's buffer in place. A Ref is a pytree
    leaf; it can be passed to (not returned from) ``bt.jit`` functions.
    """

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("bt.Ref cannot be constructed directly; use bt.new_ref(value)")

    @classmethod
    def _make(cls, value: Any, frame: Any, kind: Any) -> Ref:
        r = object.__new__(cls)
        _ref_state.RefBase.__init__(r, value, frame, kind)
        return r

    def _peek(self) -> Any:
        return _ref_state.read(self, "bt.Ref")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._peek().shape)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self._peek().dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def aval(self) -> AbstractRef:
        from baton._abstract_eval import ShapeDtypeStruct

        return AbstractRef(ShapeDtypeStruct(self.shape, self.dtype), kind=self._kind)

    @property
    def sharding(self) -> Any:
        v = self._peek()
        if isinstance(v, Tracer):
            raise AttributeError("a traced bt.Ref has no sharding")
        return v.sharding

    @property
    def at(self) -> Any:
        raise NotImplementedError(
            "Ref.at (indexed views of a Ref) is not supported by baton; index the "
            "Ref directly: ref[idx] reads, ref[idx] = v writes"
        )

    def __getitem__(self, idx: Any) -> Any:
        return get(self, idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        set(self, idx, value)

    def addupdate(self, x: Any, idx: Any = ()) -> None:
        """``self[idx] += x`` in one update (``jax.ref.addupdate``).

        >>> r = bt.new_ref(bnp.zeros(3))
        >>> r.addupdate(bnp.ones(3))
        >>> r.addupdate(2.0, 1)
        >>> r
        Ref([1., 3., 1.], dtype=float32)
        """
        addupdate(self, idx, x)

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of unsized object")
        return shape[0]

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "a bt.Ref is not converted to numpy implicitly; read it first: "
            "np.asarray(ref[...])"
        )

    def __copy__(self) -> Ref:
        raise TypeError(
            "a bt.Ref owns its buffer and is not copied; make another one with "
            "bt.new_ref(ref[...])"
        )

    def __deepcopy__(self, memo: Any) -> Ref:
        return self.__copy__()

    def __reduce__(self) -> Any:
        return self.__copy__()

    def __repr__(self) -> str:
        if self._state != _ref_state.LIVE:
            return f"Ref(<{self._state}>)"
        if self._frame is None:
            _ref_state._sync(self)  # a buffer a failed call did not take
        v = self._value
        if isinstance(v, Tracer):
            return f"Ref(traced {_dtypes.name_of(np.dtype(v.dtype))}{list(v.shape)})"
        if isinstance(v, Donated) or v.is_deleted():
            return "Ref(<buffer in a call>)"
        return "Ref" + repr(v)[len("Array") :]

    __str__ = __repr__


# ---- the functions ----


def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Ref:
    """A mutable array reference holding ``init_val`` (``jax.new_ref``).

    >>> x = bnp.arange(3.0)
    >>> r = bt.new_ref(x)
    >>> r[0] = 10.0
    >>> r[...], x
    (Array([10., 1., 2.], dtype=float32), Array([0., 1., 2.], dtype=float32))

    Outside a trace the Ref owns a copy of ``init_val`` (one buffer; ``x``
    never changes). ``kind="no_grad_no_remat"`` stops gradients through the
    values written into it. ``memory_space`` other than None is not
    supported (NotImplementedError).
    """
    if kind not in _KINDS:
        raise ValueError(
            f"new_ref: kind must be None or 'no_grad_no_remat', not {kind!r}"
        )
    if memory_space is not None:
        raise NotImplementedError(
            "new_ref: memory_space is not supported by baton; put the value in "
            "the memory you want first (bt.device_put(x, memory_kind=...))"
        )
    if isinstance(init_val, Ref):
        raise TypeError("new_ref: init_val is a bt.Ref; pass its value (ref[...])")
    if not (
        isinstance(init_val, (Tracer, Array, np.ndarray, np.generic))
        or _is_py_scalar(init_val)
        or hasattr(init_val, "__array__")
    ) or isinstance(init_val, (list, tuple, dict)):
        raise TypeError(
            f"new_ref: init_val must be an array or a scalar, not "
            f"{type(init_val).__name__} (one Ref holds one array; make one Ref "
            "per leaf)"
        )
    frame = _ref_state.current()
    if frame is not None:
        t = init_val if isinstance(init_val, Tracer) else _lax.as_tracer(init_val)
        if kind == "no_grad_no_remat":
            t = _stop_gradient(t)
        return Ref._make(t, frame, kind)
    from baton import numpy as bnp

    a = bnp.asarray(init_val)
    if a is init_val:
        a = a.copy()
    return Ref._make(a, None, kind)


def empty_ref(ty: Any, memory_space: Any = None) -> Ref:
    """A Ref of ``ty``'s shape and dtype (``ty``: a ShapeDtypeStruct, an
    array or anything with ``shape`` and ``dtype``) whose values are not
    set: write before reading (``jax.ref.empty_ref``).

    >>> r = bt.empty_ref(bt.ShapeDtypeStruct((3,), bnp.float32))
    >>> r[...] = bnp.ones(3)

    Outside a trace the buffer is allocated and not initialized (JAX has
    no eager rule for it); in a trace it is zeros.
    """
    if memory_space is not None:
        raise NotImplementedError("empty_ref: memory_space is not supported by baton")
    if isinstance(ty, AbstractRef):
        ty = ty.inner_aval
    try:
        shape = tuple(int(d) for d in ty.shape)
        dtype = _dtypes.canonicalize(ty.dtype)
    except AttributeError:
        raise TypeError(
            f"empty_ref: expected a type with shape and dtype (e.g. "
            f"bt.ShapeDtypeStruct), not {type(ty).__name__}"
        ) from None
    frame = _ref_state.current()
    if frame is not None:
        return Ref._make(_lax.zeros(shape, _dtypes.name_of(dtype)), frame, None)
    from baton._creation import empty

    return Ref._make(empty(shape, dtype), None, None)


def get(ref: Ref, idx: Any = None) -> Any:
    """``ref[idx]`` (``jax.ref.get``; ``idx=None`` reads all of it): an
    Array, a snapshot unaffected by later writes.

    >>> bt.ref.get(bt.new_ref(bnp.arange(5)), slice(1, 3))
    Array([1, 2], dtype=int32)
    """
    _check_ref(ref, "get")
    value = _ref_state.read(ref, "bt.Ref read")
    out = _indexing.getitem(value, _key(idx))
    if out is value and isinstance(value, Array):
        out = value.copy()  # the caller's own array, not the Ref's buffer
    return out


def set(ref: Ref, idx: Any, value: Any) -> None:
    """``ref[idx] = value`` (``jax.ref.set``; ``idx=None``: all of it).

    >>> r = bt.new_ref(bnp.zeros(3))
    >>> bt.ref.set(r, 1, 5.0)
    >>> r
    Ref([0., 5., 0.], dtype=float32)
    """
    _check_ref(ref, "set")
    _update(ref, idx, value, "set", "swap", "bt.Ref write")


def swap(ref: Ref, idx: Any, value: Any) -> Any:
    """Writes ``value`` at ``idx`` and returns what was there
    (``jax.ref.swap``).

    >>> r = bt.new_ref(bnp.arange(5))
    >>> bt.ref.swap(r, 3, 10)
    Array(3, dtype=int32)
    """
    _check_ref(ref, "swap")
    return _update(ref, idx, value, "set", "swap", "bt.ref.swap")


def addupdate(ref: Ref, idx: Any, x: Any) -> None:
    """``ref[idx] += x`` (``jax.ref.addupdate``): ``x`` must have the
    Ref's dtype and the shape of ``ref[idx]``.

    >>> r = bt.new_ref(bnp.zeros(3))
    >>> bt.ref.addupdate(r, 1, 5.0)
    """
    _check_ref(ref, "addupdate")
    _update(ref, idx, x, "add", "addupdate", "bt.ref.addupdate")


def freeze(ref: Ref) -> Any:
    """Invalidates ``ref`` and returns its final value (``jax.ref.freeze``);
    using ``ref`` afterwards raises ValueError.

    >>> r = bt.new_ref(bnp.arange(5))
    >>> r[3] = 100
    >>> bt.freeze(r)
    Array([  0,   1,   2, 100,   4], dtype=int32)

    Outside a trace the Ref's buffer itself becomes the result (no copy).
    """
    _check_ref(ref, "freeze")
    value = _ref_state.read(ref, "bt.freeze")
    _ref_state.set_state(ref, _ref_state.FROZEN, "bt.freeze")
    if ref._frame is None:
        ref._value = None  # the buffer is the caller's now
    return value


def free_ref(ref: Ref) -> tuple:
    """Invalidates ``ref`` (``jax.ref.free_ref``); outside a trace its buffer
    is released now. Returns ``()``.

    >>> r = bt.new_ref(bnp.zeros(1000))
    >>> bt.free_ref(r)
    ()
    """
    _check_ref(ref, "free_ref")
    value = _ref_state.read(ref, "bt.free_ref")
    _ref_state.set_state(ref, _ref_state.FREED, "bt.free_ref")
    if ref._frame is None:
        ref._value = None
        if isinstance(value, Array):
            value.delete()
    return ()


def _check_ref(ref: Any, what: str) -> None:
    if not isinstance(ref, Ref):
        raise TypeError(f"{what} must be called on a bt.Ref, not {type(ref).__name__}")
