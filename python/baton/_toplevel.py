"""Names of JAX's top level beyond the transformations (DESIGN 5.4):
context managers, environment queries and small helpers, with JAX's names
and signatures. ``baton/__init__.py`` imports everything in ``__all__``.

Where baton differs:

- ``disable_jit()``: inside the block a ``bt.jit`` function runs its Python
  body directly, op by op on concrete arrays (``print`` shows values, Python
  control flow on values works). baton's own transformations still trace
  (``grad`` and ``vmap`` work by tracing, inside the block too).
- ``default_device(device)``: baton places new arrays on the first device
  of its platform, fixed at startup; the block accepts that device (or
  None) and refuses another with ``NotImplementedError`` rather than
  silently ignoring it.
- ``ensure_compile_time_eval()``: inside ``bt.jit``, a value computed only
  from constants can already be made concrete (``bool``, ``int``,
  ``float``, Python ``if``; ``python/src/concrete.cc``), which is what this
  block is for in JAX; the block marks such code and changes nothing else.
- ``pure_callback``: runs the callback at once outside a trace. baton's host
  callbacks (``bt.debug.callback``) cannot return values into a compiled
  program yet, so inside ``bt.jit`` or a transformation it raises
  ``NotImplementedError``.
- ``named_scope`` / ``named_call``: baton's programs carry no name stack;
  they check their arguments, and ``named_call`` renames the function.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import Any, Callable

import numpy as np

from baton import _device_put, _device_queries, _dtypes, _jit, _ref_state, tree
from baton._abstract_eval import ShapeDtypeStruct
from baton._baton import Array
from baton._baton import lax as _lax
from baton._config import config
from baton._config_states import check_transfer
from baton._sharded_array import is_sharded
from baton._sharding_api import type_sharding
from baton._subtrace import aval_of, is_tracing
from baton._toplevel_ad import (
    closure_convert,
    custom_gradient,
    linear_transpose,
    linearize,
)
from baton.sharding import NamedSharding, P

__all__ = [
    "NamedSharding",
    "P",
    "closure_convert",
    "copy_to_host_async",
    "custom_gradient",
    "default_device",
    "disable_jit",
    "enable_x64",
    "ensure_compile_time_eval",
    "float0",
    "host_count",
    "host_id",
    "host_ids",
    "linear_transpose",
    "linearize",
    "make_array_from_callback",
    "named_call",
    "named_scope",
    "process_indices",
    "pure_callback",
    "typeof",
]

# JAX's dtype of the tangent of an integer value. baton gives integer values
# zero tangents of their own dtype instead (see _autodiff), but programs
# compare against it.
float0 = np.dtype([("float0", np.void, 0)])


# ---- disable_jit ----

_state = threading.local()
_patch_lock = threading.Lock()
_patch_users = 0
_compiled_call = _jit.JitFunction.__call__


def _jit_disabled() -> bool:
    return getattr(_state, "disable_jit", False)


_internal = _jit._internal  # eager ops and transformations: still traced


def _hooks_wanted() -> bool:
    v = config._values
    return bool(
        _patch_users > 0
        or v["debug_nans"]
        or v["debug_infs"]
        or v["transfer_guard_host_to_device"] != "allow"
        or v["no_execution"]
    )


def _update_call_hook() -> None:
    """Puts the Python call path in front of the C++ one only while some
    setting needs it (a disable_jit block, debug_nans/infs, a transfer
    guard), so the usual call stays the C++ one."""
    installed = "__call__" in _jit._Jitted.__dict__
    want = _hooks_wanted()
    if want and not installed:
        _jit._Jitted.__call__ = _hooked_call
    elif installed and not want:
        del _jit._Jitted.__call__


def _on_config(name: str, value: Any) -> None:
    if name in ("debug_nans", "debug_infs", "transfer_guard_host_to_device",
                "no_execution"):
        with _patch_lock:
            _update_call_hook()


def _host_leaf(leaf: Any) -> bool:
    return isinstance(leaf, (np.ndarray, np.generic, bool, int, float, complex))


def _invalid_kind(out: Any) -> str | None:
    """"nan" or "inf" when an output Array holds one that the settings
    look for, else None."""
    v = config._values
    for leaf in tree.leaves(out):
        if not isinstance(leaf, Array):
            continue
        kind = np.dtype(leaf.dtype).kind
        if kind not in "fc" and leaf.dtype != _dtypes.bfloat16:
            continue
        a = np.asarray(leaf)
        if kind != "c" and a.dtype.kind not in "fc":
            a = a.astype(np.float32)
        if v["debug_nans"] and np.isnan(a).any():
            return "nan"
        if v["debug_infs"] and np.isinf(a).any():
            return "inf"
    return None


def _hooked_call(self: Any, *args: Any, **kwargs: Any) -> Any:
    internal = _internal(self._fun)
    if _jit_disabled() and not getattr(self, "_binds_arguments", False) and not internal:
        return self._fun(*args, **kwargs)
    v = config._values
    tracing = is_tracing()
    if v["transfer_guard_host_to_device"] != "allow" and not tracing and not internal:
        for leaf in tree.leaves((args, kwargs)):
            if _host_leaf(leaf):
                check_transfer(
                    "host_to_device",
                    False,
                    f"{type(leaf).__name__} argument of jit({self.__name__})",
                )
    if v["no_execution"] and not tracing:
        raise RuntimeError(
            f"baton tried to execute function jit({getattr(self, '__name__', 'fn')}), "
            "but the no_execution config option is set"
        )
    out = _compiled_call(self, *args, **kwargs)
    if (v["debug_nans"] or v["debug_infs"]) and not tracing:
        kind = _invalid_kind(out)
        if kind is not None:
            name = getattr(self, "__name__", "fn")
            if internal:
                raise FloatingPointError(f"invalid value ({kind}) encountered in {name}")
            # As JAX: run the function again op by op, so that the operation
            # that made the value raises (naming itself).
            with disable_jit():
                self._fun(*args, **kwargs)
            raise FloatingPointError(
                f"invalid value ({kind}) encountered in jit({name}). Because "
                "debug_nans / debug_infs is set, the de-optimized function (the "
                "function as if the `jit` decorator were removed) was called to "
                "find the operation, but it did not produce invalid values during "
                "its execution (the compiled program and the op-by-op run differ, "
                "or the value came in through an argument)."
            )
    return out


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """In this block (on this thread) ``bt.jit`` functions run their
    Python bodies op by op instead of compiling."""
    global _patch_users
    prev = _jit_disabled()
    with _patch_lock:
        # Only while some block is open: the compiled call path stays
        # the C++ one otherwise.
        _patch_users += 1
        _update_call_hook()
    _state.disable_jit = bool(disable)
    try:
        yield
    finally:
        _state.disable_jit = prev
        with _patch_lock:
            _patch_users -= 1
            _update_call_hook()


# ---- devices and the environment ----


@contextlib.contextmanager
def default_device(device: Any = None) -> Iterator[None]:
    """New arrays go to ``device`` in this block, on this thread (JAX's
    ``jax.default_device``): creation functions, ``device_put`` without a
    device, and jitted calls with no array arguments. ``device`` is a device
    of this process, a platform's name (its first device), or None (the
    default platform's device 0). Blocks nest; other threads keep their
    own setting."""
    from baton import _baton

    if isinstance(device, str):
        device = _device_queries.local_devices(backend=device)[0]
    elif device is not None and not isinstance(device, _baton.Device):
        raise TypeError(
            f"default_device: expected a device of this process (bt.local_devices()), "
            f"a platform's name or None, not {device!r}"
        )
    previous = _baton._set_thread_default_device(device)
    try:
        yield
    finally:
        _baton._set_thread_default_device(previous)


def process_indices(backend: Any = None) -> list[int]:
    """The indices of the processes (``bt.distributed``), in order."""
    return list(range(_device_queries.process_count()))


def host_count(backend: Any = None) -> int:
    """JAX's older name of ``process_count``."""
    return _device_queries.process_count()


def host_id(backend: Any = None) -> int:
    """JAX's older name of ``process_index``."""
    return _device_queries.process_index()


def host_ids(backend: Any = None) -> list[int]:
    """JAX's older name of ``process_indices``."""
    return process_indices(backend)


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """64-bit dtypes on (or off) in this block (``bt.config``'s
    ``enable_x64``; the previous setting is restored after it)."""
    prev = config.read("enable_x64")
    config.update("enable_x64", bool(new_val))
    try:
        yield
    finally:
        config.update("enable_x64", prev)


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Marks code whose values depend on constants only; see the module
    docstring (inside ``bt.jit`` they can already be made concrete)."""
    yield


def typeof(x: Any) -> Any:
    """The abstract value of ``x``: its shape, dtype and weak type (for a
    ``bt.Ref``, its ``AbstractRef``, printed ``Ref{float32[3]}``). For a
    sharded array its global shape, and ``.sharding`` the NamedSharding
    of its type: the spec keeps the mesh's ``Explicit`` axes only (an
    ``Auto`` axis gives ``P(None, ...)``, as in JAX); None for an unsharded
    array.

    Example::

        bt.typeof(bnp.ones(3))   # ShapeDtypeStruct(shape=(3,), dtype=float32)
    """
    if isinstance(x, _ref_state.RefBase):
        return x.aval
    if is_sharded(x):  # its sharding is part of its type (Explicit axes)
        return ShapeDtypeStruct(x.shape, x.dtype, sharding=type_sharding(x))
    shape, dtype, weak, _ = aval_of(x)
    return ShapeDtypeStruct(shape, np.dtype(getattr(x, "dtype", dtype)), weak_type=weak)


# ---- names ----


def named_call(
    fun: Callable[..., Any], *, name: str | None = None
) -> Callable[..., Any]:
    """``fun`` under another name (``name``, default its own)."""
    if name is None:
        return fun

    @functools.wraps(fun)
    def named(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)

    named.__name__ = named.__qualname__ = name
    return named


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """A name for the ops traced in this block (JAX's name stack; baton's
    programs do not keep it)."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope name must be a string, got {name!r}")
    yield


# ---- host data ----


def copy_to_host_async(x: Any) -> None:
    """Starts copying ``x``'s arrays to the host. baton's host views
    (``np.asarray``) need no copy on its CPU devices, so there is nothing
    to start; kept for JAX's API."""
    for leaf in tree.leaves(x):
        if not isinstance(leaf, Array) and not hasattr(leaf, "shape"):
            raise TypeError(f"copy_to_host_async: not an array: {type(leaf).__name__}")


def make_array_from_callback(
    shape: Any, sharding: Any, data_callback: Callable[[Any], Any], dtype: Any = None
) -> Any:
    """An array of ``shape`` whose data ``data_callback(index)`` returns,
    placed by ``sharding``; ``index`` is a tuple of slices (the whole array:
    baton asks for all of it at once and lets ``device_put`` place it)."""
    shape = tuple(int(s) for s in shape)
    data = np.asarray(data_callback(tuple(slice(None) for _ in shape)))
    if dtype is not None:
        data = data.astype(dtype)
    if data.shape != shape:
        raise ValueError(
            f"make_array_from_callback: the callback returned shape {data.shape} "
            f"for the whole array, expected {shape}"
        )
    from baton._jit import device_put

    return device_put(data, sharding)


def pure_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    vmap_method: str | None = None,
    **kwargs: Any,
) -> Any:
    """``callback(*args, **kwargs)`` on host (numpy) values, its result
    checked against ``result_shape_dtypes`` (a pytree of objects with
    ``shape`` and ``dtype``) and returned as baton arrays. Outside a trace
    only; see the module docstring."""
    if is_tracing():
        raise NotImplementedError(
            "pure_callback inside bt.jit or a transformation: baton's host "
            "callbacks cannot return values into a compiled program yet; call "
            "the function outside bt.jit (bt.debug.callback runs a host "
            "function for its effects)"
        )
    host = tree.map(
        lambda v: np.asarray(v) if hasattr(v, "shape") else v, (args, kwargs)
    )
    out = callback(*host[0], **host[1])
    spec_leaves, spec_tree = tree.flatten(result_shape_dtypes)
    out_leaves, out_tree = tree.flatten(out)
    if out_tree != spec_tree:
        raise TypeError(
            f"pure_callback: the callback returned structure {out_tree}, expected "
            f"{spec_tree} (result_shape_dtypes)"
        )
    results = []
    for o, s in zip(out_leaves, spec_leaves):
        o = np.asarray(o)
        if o.shape != tuple(s.shape) or o.dtype != np.dtype(s.dtype):
            raise RuntimeError(
                "pure_callback: the callback returned a value of shape "
                f"{o.shape} and dtype {o.dtype}, expected {tuple(s.shape)} "
                f"{np.dtype(s.dtype)}"
            )
        results.append(_device_put.device_put(o))
    return tree.unflatten(spec_tree, results)


del _lax


config.add_listener(_on_config)
