"""JAX's configuration states at the top level: ``bt.debug_nans``,
``bt.numpy_rank_promotion``, ``bt.transfer_guard``, ...

Each is both a context manager and a ``bt.config`` option, as in JAX::

    with bt.debug_nans(True):       # for this block
        f(x)
    bt.config.update("jax_debug_nans", True)   # from now on
    bt.debug_nans.value                        # the current setting

The setting is process-wide (JAX's are thread-local inside a ``with``
block): a block sets it on entry and restores the previous value on exit.
What each setting does in baton (docs/jax_surface.md, "Top level"):

- ``debug_nans`` / ``debug_infs``: a NaN (an infinity) in a floating output
  of an eager operation or of a ``bt.jit`` call raises FloatingPointError.
  For a jitted function the Python body is run again op by op (as JAX's
  "de-optimized" rerun) so that the error names the operation that made
  it ("invalid value (nan) encountered in log").
- ``numpy_rank_promotion``: "warn" / "raise" on a binary ``baton.numpy``
  operation (and the Array operators) that broadcasts operands of
  different nonzero ranks.
- ``numpy_dtype_promotion``: "strict" refuses implicit promotion between
  different dtypes (``TypePromotionError``); weakly typed Python scalars
  still take the other operand's dtype.
- ``transfer_guard`` (all three directions) and the per-direction states:
  host-to-device transfers are numpy or Python values entering an eager
  operation or a ``bt.jit`` call (implicit) and ``bt.device_put`` (explicit);
  device-to-host ones are ``np.asarray`` of an Array on a non-CPU device
  (implicit; on the CPU it is a zero-copy view, not a transfer, as in JAX)
  and ``bt.device_get`` (explicit). "log" logs and "disallow" raises for
  implicit ones; "log_explicit" / "disallow_explicit" for all of them.
- ``default_matmul_precision``: accepted and recorded. baton computes
  float32 matrix products in full float32 always (no TF32 or bfloat16
  passes), which is JAX's "highest"; the setting cannot make them coarser.
- ``check_tracer_leaks`` / ``checking_leaks``: baton always detects a
  Tracer used outside its trace (an escaped tracer raises where it is
  used), so the setting is recorded and changes nothing.
- ``enable_checks``: recorded; baton's internal checks always run.
- ``no_tracing``: a ``bt.jit`` function (of the user's) that would trace
  raises RuntimeError instead; calls that reuse a compiled program run.
- ``no_execution``: running any compiled program (a ``bt.jit`` call or an
  eager operation) raises RuntimeError.
- ``explain_cache_misses``: each time a ``bt.jit`` function of the user's
  traces, a WARNING on the logger ``"baton.jit"`` says why: never called
  before, or how the arguments differ from the closest signature it was
  traced for (structure, shapes, dtypes, weak types, static values).
- ``default_prng_impl`` ("threefry2x32"), ``threefry_partitionable``
  (True), ``enable_custom_prng`` (False), ``debug_key_reuse`` (False):
  what baton's random generator is, JAX's defaults; they read as that and
  refuse another value (ValueError) rather than ignore it.
- ``allow_f16_reductions``: False makes ``lax.reduce_sum`` of a float16
  or bfloat16 operand raise ValueError, as in JAX (``baton.numpy.sum``
  accumulates in float32 and is not affected, as ``jnp.sum``).
- ``softmax_custom_jvp``: recorded; baton's ``nn.softmax`` has one
  derivative rule, whose values are those of both of JAX's.
- ``array_garbage_collection_guard`` ("allow" / "log" / "fatal"): an
  Array freed by Python's cycle collector, not by its last reference, is
  logged (and "fatal" aborts); ``baton._gc_guard`` says how.
- ``legacy_prng_key`` ("allow" default, "warn", "error"): a raw uint32
  key (``bt.random.PRNGKey``'s) passed to a ``bt.random`` function warns
  (UserWarning) or raises ValueError, with JAX's message; typed keys
  (``bt.random.key``) never do, nor do ``PRNGKey`` itself,
  ``wrap_key_data`` and ``clone``, as in JAX. ``key_data`` and
  ``key_impl`` of a raw key do, as in JAX.
- ``thread_guard`` (False): while True, a multi-process operation -- a
  ``bt.distributed`` collective of an initialized process group, which is
  what a collective across processes inside ``bt.shard_map`` runs --
  called from a thread other than the one that set the guard raises
  RuntimeError naming both threads; setting the guard from a second
  thread while another holds it raises RuntimeError, as in JAX.
- ``make_user_context(default)``: a context whose value is part of what a
  compiled program depends on: changing it clears baton's compiled caches
  (``bt.clear_caches()``), so jitted functions trace again, as JAX retraces.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

from baton._config import config

__all__ = [
    "allow_f16_reductions",
    "array_garbage_collection_guard",
    "check_tracer_leaks",
    "checking_leaks",
    "debug_infs",
    "debug_nans",
    "default_matmul_precision",
    "debug_key_reuse",
    "default_prng_impl",
    "enable_checks",
    "enable_custom_prng",
    "legacy_prng_key",
    "explain_cache_misses",
    "make_user_context",
    "no_execution",
    "softmax_custom_jvp",
    "threefry_partitionable",
    "thread_guard",
    "no_tracing",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
]

_logger = logging.getLogger("baton.transfer_guard")


class State:
    """One setting: ``state.value`` reads it; ``with state(new):`` sets it
    for a block; ``bt.config.update("jax_<name>", new)`` sets it."""

    def __init__(self, name: str, doc: str) -> None:
        self._option = name
        self.__name__ = name
        self.__doc__ = doc

    @property
    def name(self) -> str:
        """JAX's name of the option (``"jax_debug_nans"``)."""
        return "jax_" + self._option

    @property
    def value(self) -> Any:
        """The current setting."""
        return config.read(self._option)

    @contextlib.contextmanager
    def __call__(self, new_val: Any = True) -> Iterator[None]:
        prev = config.read(self._option)
        config.update(self._option, new_val)  # ValueError for a bad value
        try:
            yield
        finally:
            config.update(self._option, prev)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __repr__(self) -> str:
        return f"State({self.name}={self.value!r})"


debug_nans = State("debug_nans", "Raise FloatingPointError on a NaN in an output.")
debug_infs = State("debug_infs", "Raise FloatingPointError on an inf in an output.")
numpy_rank_promotion = State(
    "numpy_rank_promotion",
    "'allow', 'warn' or 'raise' on implicit rank promotion in binary ops.",
)
numpy_dtype_promotion = State(
    "numpy_dtype_promotion",
    "'standard' or 'strict' (no implicit promotion between different dtypes).",
)
transfer_guard_host_to_device = State(
    "transfer_guard_host_to_device", "Guard for host-to-device transfers."
)
transfer_guard_device_to_host = State(
    "transfer_guard_device_to_host", "Guard for device-to-host transfers."
)
transfer_guard_device_to_device = State(
    "transfer_guard_device_to_device", "Guard for device-to-device transfers."
)
default_matmul_precision = State(
    "default_matmul_precision",
    "Recorded; baton's float32 matrix products are always full float32.",
)
check_tracer_leaks = State(
    "check_tracer_leaks", "Recorded; baton always detects escaped tracers."
)
enable_checks = State("enable_checks", "Recorded; baton's checks always run.")
no_tracing = State(
    "no_tracing", "A bt.jit function that would trace raises RuntimeError."
)


no_execution = State("no_execution", "Running a compiled program raises RuntimeError.")
explain_cache_misses = State(
    "explain_cache_misses", "Log why a bt.jit function traced again."
)
default_prng_impl = State("default_prng_impl", "'threefry2x32' (fixed in baton).")
threefry_partitionable = State("threefry_partitionable", "True (fixed in baton).")
enable_custom_prng = State("enable_custom_prng", "False (fixed in baton).")
debug_key_reuse = State("debug_key_reuse", "False (fixed in baton).")
allow_f16_reductions = State(
    "allow_f16_reductions", "False: lax.reduce_sum of float16/bfloat16 raises."
)
softmax_custom_jvp = State(
    "softmax_custom_jvp", "Recorded; baton's softmax has one derivative rule."
)
array_garbage_collection_guard = State(
    "array_garbage_collection_guard",
    "'allow', 'log' or 'fatal' when the cycle collector frees an Array "
    "(baton._gc_guard).",
)


legacy_prng_key = State(
    "legacy_prng_key",
    "'allow', 'warn' or 'error' when a raw uint32 key is passed to bt.random.",
)


# The thread that set thread_guard: (ident, name), or None.
_guard_owner: list = [None]


class _ThreadGuard(State):
    """``thread_guard``: a State that also records which thread set it."""

    @contextlib.contextmanager
    def __call__(self, new_val: Any = True) -> Iterator[None]:
        owner = _guard_owner[0]
        me = threading.get_ident()
        if new_val is True and owner is not None and owner[0] != me:
            raise RuntimeError(
                "The thread guard's global thread ID is already set. Nested "
                "thread guards in different threads are not supported."
            )
        with super().__call__(new_val):
            yield


thread_guard = _ThreadGuard(
    "thread_guard",
    "True: a multi-process operation called from another thread than the "
    "one that set the guard raises RuntimeError.",
)


def _track_guard_owner(name: str, value: Any) -> None:
    if name != "thread_guard":
        return
    if not value:
        _guard_owner[0] = None
    elif _guard_owner[0] is None:
        t = threading.current_thread()
        _guard_owner[0] = (t.ident, t.name)


config.add_listener(_track_guard_owner)


# Depth of guard_checked() blocks on this thread.
_checked = threading.local()


@contextlib.contextmanager
def guard_checked() -> Iterator[None]:
    """The part of a multi-process operation that the operation runs on
    worker threads after checking the guard on its caller's thread (the
    device bodies of a ``bt.shard_map`` over several processes): not
    checked again."""
    _checked.depth = getattr(_checked, "depth", 0) + 1
    try:
        yield
    finally:
        _checked.depth -= 1


def check_thread_guard(what: str) -> None:
    """Raises RuntimeError when ``thread_guard`` is set and this thread is
    not the one that set it: called by every multi-process operation
    (``what`` names it).

    Example::

        with bt.thread_guard(True):
            threading.Thread(target=collective).start()  # raises there
    """
    if not config.read("thread_guard") or getattr(_checked, "depth", 0):
        return
    owner = _guard_owner[0]
    t = threading.current_thread()
    if owner is None or owner[0] == t.ident:
        return
    raise RuntimeError(
        f"A multi-process operation ({what}) was called from thread "
        f"{t.name!r} (id {t.ident}). This is not allowed because the thread "
        f"guard was set in thread {owner[1]!r} (id {owner[0]})."
    )


class _UserContext:
    """A setting of the user's that compiled programs depend on (see
    :func:`make_user_context`)."""

    def __init__(self, default_value: Any) -> None:
        self._value = default_value

    @property
    def value(self) -> Any:
        return self._value

    def _set(self, value: Any) -> None:
        if value is self._value or value == self._value:
            self._value = value
            return
        self._value = value
        _clear_compiled()

    @contextlib.contextmanager
    def __call__(self, new_val: Any) -> Iterator[None]:
        prev = self._value
        self._set(new_val)
        try:
            yield
        finally:
            self._set(prev)


# bt.clear_caches, registered by baton._jit (a layer above this one).
_cache_clearer: list = []


def _clear_compiled() -> None:
    for clear in _cache_clearer:
        clear()


def make_user_context(default_value: Any = None) -> _UserContext:
    """A context manager factory whose value compiled programs depend on:
    ``with ctx(v):`` with a value other than the current one makes
    ``bt.jit`` functions trace again (baton clears its compiled caches)."""
    return _UserContext(default_value)


def checking_leaks() -> contextlib.AbstractContextManager[None]:
    """``check_tracer_leaks(True)`` for a block (JAX's shorthand)."""
    return check_tracer_leaks(True)


_DIRECTIONS = (
    "transfer_guard_host_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_device_to_device",
)


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """Sets the guard of all three transfer directions for a block:
    "allow", "log", "disallow", "log_explicit" or "disallow_explicit"."""
    prev = [config.read(d) for d in _DIRECTIONS]
    done = []
    try:
        for d in _DIRECTIONS:
            config.update(d, new_val)
            done.append(d)
        yield
    finally:
        for d, p in zip(done, prev):
            config.update(d, p)


def check_transfer(direction: str, explicit: bool, what: str) -> None:
    """Applies the guard of ``direction`` ("host_to_device", ...) to one
    transfer: logs or raises (RuntimeError, as JAX's runtime error) when
    the setting says so."""
    mode = config.read("transfer_guard_" + direction)
    if mode == "allow":
        return
    if explicit and not mode.endswith("_explicit"):
        return
    text = direction.replace("_to_", "-to-").replace("_", "-")
    if mode.startswith("disallow"):
        raise RuntimeError(f"Disallowed {text} transfer: {what}")
    _logger.warning("%s transfer: %s", text.capitalize(), what)
