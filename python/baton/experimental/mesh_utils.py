"""``jax.experimental.mesh_utils`` under baton: the device arrays a
:class:`baton.sharding.Mesh` is built from.

baton's devices have no physical topology to follow (CPU devices, or one
accelerator per process), so a mesh takes the devices in ``bt.devices()``
order, as JAX does for CPU and GPU devices.

Example::

    from baton.experimental import mesh_utils
    devices = mesh_utils.create_device_mesh((2, 4))   # a 2 x 4 array
    mesh = bt.sharding.Mesh(devices, ("data", "model"))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from baton import _device_queries

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]


def create_device_mesh(
    mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    contiguous_submeshes: bool = False,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """An array of shape ``mesh_shape`` holding ``devices`` (default: every
    device of ``bt.devices()``) in order. ``ValueError`` when their number is
    not the product of ``mesh_shape``. ``contiguous_submeshes`` and
    ``allow_split_physical_axes`` are accepted for JAX's signature: without a
    physical topology they change nothing."""
    del contiguous_submeshes, allow_split_physical_axes
    shape = tuple(int(s) for s in mesh_shape)
    if devices is None:
        devices = _device_queries.devices()
    devices = list(devices)
    if math.prod(shape) != len(devices):
        raise ValueError(
            f"create_device_mesh: a mesh of shape {shape} needs {math.prod(shape)} "
            f"devices, but {len(devices)} were given; pass devices= or change "
            "mesh_shape"
        )
    out = np.empty(len(devices), dtype=object)
    out[:] = devices
    return out.reshape(shape)


def create_hybrid_device_mesh(
    mesh_shape: Sequence[int],
    dcn_mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    process_is_granule: bool = False,
    should_sort_granules_by_key: bool = True,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """A mesh over several processes: each process's devices form a mesh of
    ``mesh_shape`` (its "granule"), and the granules are laid out as
    ``dcn_mesh_shape``; the result's shape is their elementwise product, as
    in JAX. Granules are the processes (``Device.process_index``), in order."""
    del process_is_granule, should_sort_granules_by_key, allow_split_physical_axes
    shape = tuple(int(s) for s in mesh_shape)
    dcn = tuple(int(s) for s in dcn_mesh_shape)
    if len(shape) != len(dcn):
        raise ValueError(
            f"create_hybrid_device_mesh: mesh_shape {shape} and dcn_mesh_shape "
            f"{dcn} must have the same number of axes"
        )
    if devices is None:
        devices = _device_queries.devices()
    by_process: dict[int, list] = {}
    for d in devices:
        by_process.setdefault(int(getattr(d, "process_index", 0)), []).append(d)
    granules = [by_process[p] for p in sorted(by_process)]
    if len(granules) != math.prod(dcn):
        raise ValueError(
            f"create_hybrid_device_mesh: dcn_mesh_shape {dcn} needs "
            f"{math.prod(dcn)} processes' devices, but the devices come from "
            f"{len(granules)} process(es)"
        )
    meshes = [create_device_mesh(shape, g) for g in granules]
    index = np.arange(len(meshes)).reshape(dcn)

    def nest(ix: Any) -> Any:
        return meshes[int(ix)] if np.ndim(ix) == 0 else [nest(i) for i in ix]

    return np.block(nest(index))
