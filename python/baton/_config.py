"""``bt.config``: process-wide settings.

``bt.config.update("donation", "warn" | "error")`` chooses what a donation that
no output can use does (DESIGN R4): warn with ``DonationWarning`` (default) or
raise ``DonationError`` before anything runs. Read a setting as an attribute
(``bt.config.donation``). Layers that keep their own copy of a setting (the
C++ jit) subscribe with ``config.add_listener(fn)``; ``fn(name, value)`` runs
on every update. The donation mode is pushed to the C++ runtime
(baton/core/config.h) here.

``bt.config.update("enable_x64", True)`` (JAX's name ``"jax_enable_x64"``
works too; ``BATON_ENABLE_X64=1`` sets it at import) keeps 64-bit numpy data
64-bit; off by default, as in JAX, when it becomes 32-bit as it enters
baton (see ``baton._dtypes``).

``bt.config.update("capture_allocation_stacks", False)``
(``BATON_CAPTURE_ALLOCATION_STACKS=0`` sets it at import) stops capturing the
Python stack of every allocating call; on by default, so that
``bt.profiler.save_memory_profile`` names the Python line of every live
allocation without a recording having been started. The capture keeps code
objects and instruction offsets only (looked up when a profile is written);
its cost per allocation is in README.md (bench/allocation_stacks.py).
Recordings capture stacks either way.

``bt.config.update("jax_num_cpu_devices", n)`` (or ``"num_cpu_devices"``):
baton creates its CPU devices when it is imported, from
``BATON_NUM_CPU_DEVICES`` (default 1), and cannot add or drop devices
afterwards (the devices live in the C++ runtime for the life of the
process). So the call is accepted when ``n`` is the number the process has
(a no-op, so that a ported ``jax.config.update("jax_num_cpu_devices", n)``
run with ``BATON_NUM_CPU_DEVICES=n`` works), and otherwise raises JAX's
"too late" ``RuntimeError``, saying to set ``BATON_NUM_CPU_DEVICES=n``
before importing baton. (JAX refuses any value once its backend has been
initialised, even the current one.)
"""

from __future__ import annotations

import os
from typing import Any, Callable

from baton import _baton, _dtypes

_TRANSFER = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_PRECISIONS = (
    None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64",
)
_CHOICES: dict[str, tuple[Any, ...]] = {
    "donation": ("warn", "error"),
    "enable_x64": (False, True),
    "capture_allocation_stacks": (True, False),
    # JAX's debugging and checking switches (baton._config_states has their
    # context managers; docs/jax_surface.md says what each does in baton).
    "debug_nans": (False, True),
    "debug_infs": (False, True),
    "numpy_rank_promotion": ("allow", "warn", "raise"),
    "numpy_dtype_promotion": ("standard", "strict"),
    "transfer_guard_host_to_device": _TRANSFER,
    "transfer_guard_device_to_host": _TRANSFER,
    "transfer_guard_device_to_device": _TRANSFER,
    "default_matmul_precision": _PRECISIONS,
    "check_tracer_leaks": (False, True),
    "enable_checks": (False, True),
    "no_tracing": (False, True),
    "no_execution": (False, True),
    "explain_cache_misses": (False, True),
    # Fixed in baton: its random generator is JAX's default one
    # (threefry2x32, partitionable), keys are raw uint32 arrays or
    # bt.random.key's typed keys, and key reuse is not tracked.
    "default_prng_impl": ("threefry2x32",),
    "threefry_partitionable": (True,),
    "enable_custom_prng": (False,),
    "debug_key_reuse": (False,),
    # Recorded: baton's softmax has one derivative rule; both JAX rules
    # give the same values.
    "softmax_custom_jvp": (False, True),
    "allow_f16_reductions": (True, False),
    # baton._gc_guard: arrays freed by the cycle collector.
    "array_garbage_collection_guard": ("allow", "log", "fatal"),
    # Raw uint32 keys passed to bt.random: allowed, warned about, refused.
    "legacy_prng_key": ("allow", "warn", "error"),
    # Multi-process operations from a thread other than the guard's raise.
    "thread_guard": (False, True),
}
# JAX's spelling of the same switches (``jax_<name>``), so that a ported
# jax.config.update("jax_enable_x64", True) works unchanged.
_ALIASES = {"jax_" + name: name for name in _CHOICES}
# enable_x64: off by default, as in JAX (tests/python/test_x64.py).
_DEFAULTS: dict[str, Any] = {
    "donation": "warn",
    "enable_x64": os.environ.get("BATON_ENABLE_X64", "0").lower()
    in ("1", "true", "yes", "on"),
    "capture_allocation_stacks": os.environ.get(
        "BATON_CAPTURE_ALLOCATION_STACKS", "1"
    ).lower()
    not in ("0", "false", "no", "off"),
    "debug_nans": False,
    "debug_infs": False,
    "numpy_rank_promotion": "allow",
    "numpy_dtype_promotion": "standard",
    "transfer_guard_host_to_device": "allow",
    "transfer_guard_device_to_host": "allow",
    "transfer_guard_device_to_device": "allow",
    "default_matmul_precision": None,
    "check_tracer_leaks": False,
    "enable_checks": False,
    "no_tracing": False,
    "no_execution": False,
    "explain_cache_misses": False,
    "default_prng_impl": "threefry2x32",
    "threefry_partitionable": True,
    "enable_custom_prng": False,
    "debug_key_reuse": False,
    "softmax_custom_jvp": False,
    "allow_f16_reductions": True,
    "array_garbage_collection_guard": "allow",
    "legacy_prng_key": "allow",
    "thread_guard": False,
}


def _cpu_device_count() -> int:
    return sum(1 for d in _baton._all_devices() if d.platform == "cpu")


def _check_num_cpu_devices(value: Any) -> None:
    """``update("jax_num_cpu_devices", value)``: see the module docstring."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            f"config option 'jax_num_cpu_devices' must be an int, not {value!r}"
        )
    have = _cpu_device_count()
    if value == have or (value == -1 and have == 1):
        return  # what the process has (-1: JAX's "the platform default")
    raise RuntimeError(
        "jax_num_cpu_devices config should be updated before backends are "
        "initialized. baton creates its CPU devices when it is imported "
        f"(this process has {have}, from BATON_NUM_CPU_DEVICES) and cannot "
        f"change their number afterwards: set BATON_NUM_CPU_DEVICES={value} in "
        "the environment before importing baton."
    )


class Config:
    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict(_DEFAULTS))
        object.__setattr__(self, "_listeners", [])

    def update(self, name: str, value: Any) -> None:
        """Sets setting ``name`` to ``value`` (ValueError for unknown ones)."""
        name = _ALIASES.get(name, name)
        if name in ("jax_num_cpu_devices", "num_cpu_devices"):
            _check_num_cpu_devices(value)
            return
        if name not in _CHOICES:
            raise ValueError(
                f"unknown baton config option {name!r}; options: {sorted(_CHOICES)}"
            )
        if not any(value is c or (type(value) is type(c) and value == c)
                   for c in _CHOICES[name]):
            raise ValueError(
                f"config option {name!r} must be one of {_CHOICES[name]}, not {value!r}"
            )
        self._values[name] = value
        for listener in list(self._listeners):
            listener(name, value)

    def read(self, name: str) -> Any:
        if name in ("jax_num_cpu_devices", "num_cpu_devices"):
            return _cpu_device_count()
        try:
            return self._values[_ALIASES.get(name, name)]
        except KeyError:
            raise ValueError(f"unknown baton config option {name!r}") from None

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in ("jax_num_cpu_devices", "num_cpu_devices"):
            return _cpu_device_count()
        name = _ALIASES.get(name, name)
        if name in values:
            return values[name]
        raise AttributeError(f"baton config has no option {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("use bt.config.update(name, value)")

    def add_listener(self, listener: Callable[[str, Any], None]) -> None:
        """Calls ``listener(name, value)`` after every update."""
        self._listeners.append(listener)

    def values(self) -> dict[str, Any]:
        """A copy of every setting (for saving and restoring)."""
        return dict(self._values)

    def __repr__(self) -> str:
        return f"baton.config({self._values})"


def _push_to_runtime(name: str, value: Any) -> None:
    if name == "donation":
        _baton._set_donation_mode(value)
    elif name == "enable_x64":
        _dtypes.set_x64(value)
    elif name == "capture_allocation_stacks":
        _baton._profiler._set_capture_allocation_stacks(value)


config = Config()
config.add_listener(_push_to_runtime)
for _name in _DEFAULTS:
    _push_to_runtime(_name, config.read(_name))
