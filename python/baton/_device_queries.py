"""JAX's device queries: ``bt.local_devices()``, ``bt.device_count()``,
``bt.local_device_count()``, ``bt.default_backend()``,
``bt.process_index()``, ``bt.process_count()`` (``Array.devices()`` /
``Array.sharding`` are ``_array_sharding``'s).

baton is one process; every device it has is local. A backend is a
platform: ``"cpu"``, ``"cuda"`` (when built with CUDA and a GPU is visible)
or ``"sim"`` (the simulated accelerator for tests). ``BATON_PLATFORMS``
(default ``"cpu,cuda"``) lists them in order of preference; the default
backend is the first listed that has devices, and ``devices()`` without a
backend lists its devices only, as ``jax.devices()`` does.
"""

from __future__ import annotations

from typing import Any

from baton import _baton, _remote_device
from baton._baton import _all_devices, _unavailable_platforms
from baton._baton import devices as _local_device_list

__all__ = [
    "default_backend",
    "device_count",
    "devices",
    "local_device_count",
    "local_devices",
    "process_count",
    "process_index",
]


def local_devices(process_index: int | None = None, backend: str | None = None) -> list:
    """The devices of this process (all of baton's devices)."""
    from baton import distributed

    me = distributed._process_index()
    if process_index not in (None, me):
        raise ValueError(
            f"local_devices: process_index={process_index}, but this is process {me}; "
            "baton lists only this process's devices"
        )
    return _devices(backend)


def devices(backend: str | None = None) -> list:
    """Every device: this process's, and after ``bt.distributed.initialize``
    every other process's too (``RemoteDevice``; process 0's first)."""
    if backend is None or backend == default_backend():
        return _remote_device.global_devices(list(_local_device_list()))
    return _devices(backend)  # another platform's: this process's only


def _devices(backend: str | None) -> list:
    if backend is None:
        return list(_local_device_list())
    out = [d for d in _all_devices() if d.platform == backend]
    if not out:
        have = sorted({d.platform for d in _all_devices()})
        why = _unavailable_platforms.get(backend)
        raise RuntimeError(
            f"backend {backend!r} is not available"
            + (f" ({why})" if why else "")
            + f"; baton has {have}"
            + ("" if why else " (BATON_PLATFORMS chooses the platforms)")
        )
    return out


def device_count(backend: str | None = None) -> int:
    """How many devices baton has, in every process (``BATON_NUM_CPU_DEVICES``
    per process on the CPU backend)."""
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """How many devices this process has (= :func:`device_count`)."""
    return len(_devices(backend))


def default_backend() -> str:
    """The platform of the default device: ``"cpu"`` or ``"cuda"``."""
    return _local_device_list()[0].platform


def process_index() -> int:
    """This process's index in ``bt.distributed``'s group (0 when not initialized).

    Example: ``if bt.process_index() == 0: print("leader")``.
    """
    from baton import distributed

    return distributed._process_index()


def process_count() -> int:
    """The number of processes joined by ``bt.distributed.initialize`` (1 if none).

    Example: ``bt.process_count()`` is 4 under ``tools/launch_processes.py -n 4``.
    """
    from baton import distributed

    return distributed._process_count()


def _device_memory_stats(self: Any, memory_kind: str | None = None) -> dict[str, int]:
    """``jax.Device.memory_stats()``: this device's ``bt.memory_stats`` (its
    default memory kind unless ``memory_kind`` is given)."""
    from baton._baton import memory_stats

    return memory_stats(self, memory_kind or self.default_memory_kind)


_baton.Device.memory_stats = _device_memory_stats
