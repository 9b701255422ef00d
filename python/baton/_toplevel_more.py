"""More of JAX's top level: ``pmap``, ``fwd_and_bwd``, ``set_mesh``,
``reshard``, ``make_array_from_single_device_arrays``,
``make_array_from_process_local_data`` (``baton/__init__.py`` imports
``__all__``).

Where baton differs:

- ``pmap(f, axis_name)``: runs ``f`` once per device on the slices of its
  arguments along ``in_axes`` (the mapped size must not exceed the local
  device count; ``devices=`` picks them), through ``bt.shard_map`` over a
  one-axis mesh named ``axis_name``, so ``lax.psum(x, axis_name)`` and the
  other collectives work inside; the result is a ``bt.ShardedArray`` split
  over those devices along ``out_axes``. Inside ``bt.jit``, ``grad`` or
  ``vmap`` it is, as ``shard_map`` there, a vmap over the axis
  (``baton/_shard_map_trace.py``); ``backend=`` must be None or baton's
  backend; ``donate_argnums`` is accepted and donates nothing.
- ``fwd_and_bwd``: ``fwd`` returns ``(out, residuals)`` whose residuals are
  the primal arguments (baton's pullbacks are not pytrees of arrays, so
  they cannot leave a jitted function); ``bwd`` recomputes the forward
  pass inside its own compiled program. Values are JAX's; the memory and
  time trade-off differs.
- ``set_mesh(mesh)``: a global setter and a context manager, as in JAX: it
  makes ``mesh`` the current mesh (``bt.shard_map`` without ``mesh=``,
  ``reshard`` with a bare PartitionSpec).
- ``reshard(xs, out_shardings)``: baton/_sharding_api.py.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Sequence
from typing import Any, Callable

import numpy as np

from baton import _device_queries, _jit, tree
from baton import numpy as bnp
from baton._autodiff import vjp
from baton._baton import Array
from baton._baton import lax as _lax
from baton._shard_map import shard_map
from baton._sharded_array import ShardedArray, placement
from baton._sharding_api import reshard
from baton.sharding import (
    Mesh,
    PartitionSpec,
    SingleDeviceSharding,
    set_mesh,
)

__all__ = [
    "fwd_and_bwd",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "pmap",
    "reshard",
    "set_mesh",
]


# ---- fwd_and_bwd ----


def fwd_and_bwd(
    fun: Callable[..., Any],
    argnums: int | Sequence[int],
    has_aux: bool = False,
    jitted: bool = True,
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The forward and backward passes of ``fun`` as two functions:
    ``fwd(*primals)`` gives ``(fun(*primals), residuals)`` (``(out,
    residuals, aux)`` with ``has_aux``) and ``bwd(residuals, cotangent)``
    the cotangents of the arguments ``argnums`` names (one value for an int
    ``argnums``, a tuple otherwise), each compiled once with ``jitted``."""
    if not callable(fun):
        raise TypeError(f"fwd_and_bwd: fun must be callable, not {type(fun).__name__}")
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(operator.index(a) for a in argnums)

    def partial_of(args: tuple) -> tuple[Callable[..., Any], list]:
        def f(*dyn: Any) -> Any:
            full = list(args)
            for i, v in zip(nums, dyn):
                full[i] = v
            return fun(*full)

        return f, [args[i] for i in nums]

    def fwd(*args: Any) -> Any:
        for i in nums:
            if not -len(args) <= i < len(args):
                raise ValueError(
                    f"fwd_and_bwd: argnums {i} out of range for {len(args)} arguments"
                )
        out = fun(*args)
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError("fwd_and_bwd: has_aux=True needs fun to return (out, aux)")
            return out[0], args, out[1]
        return out, args

    def bwd(residuals: Any, cotangent: Any) -> Any:
        f, dyn = partial_of(tuple(residuals))
        if has_aux:
            _, pullback, _ = vjp(f, *dyn, has_aux=True)
        else:
            _, pullback = vjp(f, *dyn)
        g = pullback(cotangent)
        return g[0] if single else g

    if jitted:
        return _jit.jit(fwd), _jit.jit(bwd)
    return fwd, bwd


# ---- meshes and shardings ----


def make_array_from_single_device_arrays(
    shape: Sequence[int], sharding: Any, arrays: Sequence[Any], *, dtype: Any = None
) -> Any:
    """The global array of ``shape`` whose shards are ``arrays`` (one baton
    Array per device of ``sharding`` in this process, each on its device,
    holding the block ``sharding`` places there). Nothing is copied."""
    shape = tuple(operator.index(s) for s in shape)
    arrays = list(arrays)
    if not arrays and dtype is None:
        raise ValueError(
            "make_array_from_single_device_arrays: dtype is required when arrays is empty"
        )
    for a in arrays:
        if not isinstance(a, Array):
            raise TypeError(
                "make_array_from_single_device_arrays: arrays must be baton Arrays "
                f"on single devices, not {type(a).__name__}"
            )
    if dtype is not None and arrays and any(np.dtype(a.dtype) != np.dtype(dtype) for a in arrays):
        raise ValueError("make_array_from_single_device_arrays: arrays differ from dtype")
    if isinstance(sharding, SingleDeviceSharding):
        if len(arrays) != 1 or tuple(arrays[0].shape) != shape:
            raise ValueError(
                "make_array_from_single_device_arrays: a SingleDeviceSharding takes "
                f"one array of shape {shape}"
            )
        return arrays[0]
    where = placement(sharding, shape)
    by_device = {}
    for a in arrays:
        if a.device in by_device:
            raise ValueError(
                f"make_array_from_single_device_arrays: two arrays on {a.device}"
            )
        by_device[a.device] = a
    datas = []
    for device, index, _ in where:
        a = by_device.pop(device, None)
        if a is None:
            raise ValueError(
                f"make_array_from_single_device_arrays: no array on {device}, which "
                "the sharding places a shard on"
            )
        want = tuple(
            len(range(*s.indices(n))) for s, n in zip(index, shape)
        ) + shape[len(index):]
        if tuple(a.shape) != want:
            raise ValueError(
                f"make_array_from_single_device_arrays: the array on {device} has "
                f"shape {tuple(a.shape)}; the sharding's shard there has shape {want}"
            )
        datas.append(a)
    if by_device:
        raise ValueError(
            "make_array_from_single_device_arrays: arrays on devices the sharding "
            f"does not use: {list(by_device)}"
        )
    out = ShardedArray.from_shards(shape, sharding, datas)
    return out


def make_array_from_process_local_data(
    sharding: Any, local_data: Any, global_shape: Sequence[int] | None = None
) -> Any:
    """The global array that ``sharding`` places, from this process's data.
    baton runs one process per array, so the local data is the whole
    array: ``global_shape`` (default its shape) must equal its shape."""
    data = np.asarray(local_data)
    if global_shape is not None and tuple(global_shape) != data.shape:
        raise ValueError(
            f"make_array_from_process_local_data: global_shape {tuple(global_shape)} "
            f"differs from the local data's shape {data.shape}; with one process "
            "the local data is the whole array"
        )
    return _jit.device_put(data, sharding)


# ---- pmap ----


def _axes(value: Any, n: int, what: str) -> list:
    if value is None or isinstance(value, int):
        return [value] * n
    value = list(value)
    if len(value) != n:
        raise ValueError(f"pmap: {what} has {len(value)} entries for {n} arguments")
    return value


def pmap(
    fun: Callable[..., Any],
    axis_name: Any = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: int | Iterable[int] = (),
    devices: Sequence[Any] | None = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Iterable[int] = (),
) -> Callable[..., Any]:
    """``fun`` mapped over the leading axis (``in_axes``) of its arguments,
    one slice per local device, collectives over ``axis_name`` (see the
    module docstring)."""
    if not callable(fun):
        raise TypeError(f"pmap: fun must be callable, not {type(fun).__name__}")
    if backend is not None and backend != _device_queries.default_backend():
        raise ValueError(f"pmap: backend {backend!r} is not baton's")
    del donate_argnums
    static = {static_broadcasted_argnums} if isinstance(static_broadcasted_argnums, int) \
        else set(static_broadcasted_argnums)
    name = axis_name if axis_name is not None else "_pmap_axis"

    @functools.wraps(fun)
    def mapped(*args: Any) -> Any:
        dyn_idx = [i for i in range(len(args)) if i not in static]
        dyn = [args[i] for i in dyn_idx]
        axes = _axes(in_axes, len(dyn), "in_axes")
        sizes = set()
        moved = []
        for a, ax in zip(dyn, axes):
            if ax is None:
                moved.append(a)
                continue
            leaves, td = tree.flatten(a)
            new = []
            for leaf in leaves:
                arr = leaf if isinstance(leaf, (Array, _lax.Tracer)) else np.asarray(leaf)
                if arr.ndim == 0:
                    raise ValueError("pmap: a mapped argument must have an axis to map")
                ax_n = ax % arr.ndim
                sizes.add(arr.shape[ax_n])
                if ax_n != 0:
                    arr = bnp.moveaxis(arr, ax_n, 0)
                new.append(arr)
            moved.append(tree.unflatten(td, new))
        if axis_size is not None:
            sizes.add(axis_size)
        if len(sizes) != 1:
            raise ValueError(
                f"pmap got inconsistent sizes for array axes to be mapped: {sorted(sizes)}"
            )
        n = sizes.pop()
        devs = list(devices) if devices is not None else _device_queries.local_devices()
        if n > len(devs):
            raise ValueError(
                f"compiling computation that requires {n} logical devices, but only "
                f"{len(devs)} devices are available (num_replicas={n})"
            )
        mesh = Mesh(np.array(devs[:n], dtype=object), (name,))
        in_specs = tuple(PartitionSpec() if ax is None else PartitionSpec(name) for ax in axes)

        def body(*blocks: Any) -> Any:
            call = list(args)
            for i, b, ax in zip(dyn_idx, blocks, axes):
                call[i] = b if ax is None else tree.map(lambda x: x[0], b)
            out = fun(*call)
            return tree.map(lambda x: _expand(x), out)

        out = shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=PartitionSpec(name))(
            *moved
        )
        return _out_axes(out, out_axes)

    return mapped


def _expand(x: Any) -> Any:
    return bnp.expand_dims(bnp.asarray(x), 0)


def _out_axes(out: Any, out_axes: Any) -> Any:
    if out_axes == 0:
        return out
    if out_axes is None:
        return tree.map(lambda x: x[0], out)
    return tree.map(lambda x: bnp.moveaxis(x, 0, out_axes), out)
