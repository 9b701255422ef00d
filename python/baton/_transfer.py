"""Transfers to and from one device (DESIGN R2, R6): the single-device half
of ``bt.device_put`` (:func:`put`, :func:`put_into`), and
``bt.block_until_ready``.

``bt.device_put`` (``_device_put``) sends shardings and sharded values to
``_sharded_put``, everything else here. Leaves are numpy arrays, Python or
numpy scalars, other array-likes (anything ``np.asarray`` accepts), baton
Arrays and ``bt.donate`` markers. Every leaf is validated before anything
is created or consumed, so an error changes nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _baton, _dtypes, tree
from baton._baton import Array, Donated
from baton._memory_kinds import check_kind


class _Host:
    """A leaf on its way from host memory: a C-contiguous numpy array."""

    __slots__ = ("array", "dtype_name", "fresh", "weak")

    def __init__(self, array: np.ndarray, weak: bool, fresh: bool) -> None:
        self.array = array
        self.dtype_name = _dtypes.name_of(array.dtype)
        self.weak = weak  # from a Python scalar: takes `into`'s dtype
        self.fresh = fresh  # a private copy made here (nothing to alias)


def prepare(leaf: Any, path: tuple[Any, ...]) -> Any:
    """Validates one leaf of x; returns an Array, a Donated or a _Host."""
    where = f" (leaf x{tree.keystr(path)})" if path else ""
    if isinstance(leaf, Array):
        leaf._check_live()
        return leaf
    if isinstance(leaf, Donated):
        if leaf.used:
            raise ValueError(
                f"device_put: this donate() marker was already used{where}; a "
                "donated array can be passed to one call only"
            )
        return leaf
    if _dtypes.is_python_scalar(leaf):
        return _Host(_dtypes.python_scalar_to_numpy(leaf), weak=True, fresh=True)
    if isinstance(leaf, (np.ndarray, np.generic)):
        a = np.asarray(leaf)
    elif isinstance(leaf, (str, bytes)) or not (
        hasattr(leaf, "__array__")
        or hasattr(leaf, "__array_interface__")
        or hasattr(leaf, "__dlpack__")
    ):
        raise TypeError(
            f"device_put: cannot put a {type(leaf).__name__} on a device{where}; "
            "leaves must be numpy arrays, scalars or baton Arrays"
        )
    else:
        a = np.asarray(leaf)
    narrow = _dtypes.NARROW.get(a.dtype)
    if narrow is not None:  # 64-bit data with x64 off: a 32-bit copy, as JAX
        return _Host(a.astype(narrow), weak=False, fresh=True)
    _dtypes.name_of(a.dtype)  # TypeError for object/complex/... dtypes
    if not a.flags.c_contiguous:
        return _Host(np.ascontiguousarray(a), weak=False, fresh=True)
    return _Host(a, weak=False, fresh=not isinstance(leaf, np.ndarray))


def _put(leaf: Any, device: Any, memory_kind: str | None, may_alias: bool) -> Array:
    if isinstance(leaf, Array):
        dev = leaf.device if device is None else device
        kind = leaf.memory_kind if memory_kind is None else memory_kind
        if may_alias and dev == leaf.device and kind == leaf.memory_kind:
            return leaf
        return _baton._copy_array(leaf, dev, kind)
    if isinstance(leaf, Donated):
        return leaf._put(device, memory_kind)
    kind = "device" if memory_kind is None else memory_kind
    return _baton._put_numpy(
        leaf.array, leaf.dtype_name, device, kind, may_alias and not leaf.fresh
    )


def put(
    x: Any,
    device: Any = None,
    *,
    memory_kind: str | None = None,
    may_alias: bool = False,
    into: Any = None,
) -> Any:
    """``device_put`` of ``x`` (no sharded leaves) onto one device (None: each
    Array's own, numpy data on the default device)."""
    check_kind(memory_kind)
    if into is not None:
        return put_into(*flatten_into(x, into), device, memory_kind)
    paths, leaves, treedef = tree.paths_and_leaves(x)
    return put_leaves(paths, leaves, treedef, device, memory_kind, may_alias)


def put_leaves(
    paths: list,
    leaves: list,
    treedef: Any,
    device: Any,
    memory_kind: str | None,
    may_alias: bool,
) -> Any:
    """:func:`put` of a flattened pytree (its kind checked)."""
    prepared = [prepare(leaf, p) for p, leaf in zip(paths, leaves)]
    out = [_put(p, device, memory_kind, may_alias) for p in prepared]
    return tree.unflatten(treedef, out)


def flatten_into(x: Any, into: Any) -> tuple:
    """``(paths, leaves, treedef, into_leaves)`` of ``device_put(x, into=into)``;
    ValueError when ``into`` has another structure than ``x``."""
    paths, leaves, treedef = tree.paths_and_leaves(x)
    into_leaves, into_def = tree.flatten(into)
    if into_def != treedef:
        raise ValueError(
            f"device_put(into=...): `into` has structure {into_def} but the value "
            f"has structure {treedef}. Nothing was consumed."
        )
    return paths, leaves, treedef, into_leaves


def put_into(
    paths: list,
    leaves: list,
    treedef: Any,
    into_leaves: list,
    device: Any,
    memory_kind: Any,
) -> Any:
    """Overwrites the single-device Arrays ``into_leaves`` with ``leaves`` (see
    ``device_put``'s ``into=``); everything is checked before anything is
    consumed."""
    prepared = [prepare(leaf, p) for p, leaf in zip(paths, leaves)]
    seen: set[int] = set()
    plan = []
    for path, src, dst in zip(paths, prepared, into_leaves):
        where = f" at x{tree.keystr(path)}" if path else ""
        if not isinstance(dst, Array):
            raise TypeError(
                f"device_put(into=...): `into`{where} is a {type(dst).__name__}, "
                "not a baton Array. Nothing was consumed."
            )
        dst._check_live()
        if dst._id in seen:
            raise ValueError(
                f"device_put(into=...): the same array appears twice in `into`{where}. "
                "Nothing was consumed."
            )
        seen.add(dst._id)
        if device is not None and device != dst.device:
            raise ValueError(
                f"device_put(into=...): `into`{where} is on {dst.device}, not on the "
                f"requested {device}. Nothing was consumed."
            )
        if memory_kind is not None and memory_kind != dst.memory_kind:
            raise ValueError(
                f"device_put(into=...): `into`{where} is in {dst.memory_kind} "
                f"memory, not the requested {memory_kind}. Nothing was consumed."
            )
        if isinstance(src, _Host) and src.weak and src.array.dtype != dst.dtype:
            # Python scalars are weakly typed: they take `into`'s dtype.
            src = _Host(src.array.astype(dst.dtype), weak=True, fresh=True)
        shape = src.array.shape if isinstance(src, _Host) else src.shape
        dtype = src.array.dtype if isinstance(src, _Host) else src.dtype
        if tuple(shape) != dst.shape or dtype != dst.dtype:
            raise ValueError(
                f"device_put(into=...): the new value{where} is "
                f"{np.dtype(dtype).name}{tuple(shape)} but `into` is "
                f"{dst.dtype.name}{dst.shape}; an in-place overwrite needs the same "
                "shape and dtype. Nothing was consumed."
            )
        if dst._is_borrowed:
            raise ValueError(
                f"device_put(into=...): `into`{where} borrows memory it does not "
                "own (may_alias=True or from_dlpack); overwriting it would write "
                "into the lender's data. Nothing was consumed."
            )
        plan.append((src, dst))
    into_at = {dst._id: i for i, (_, dst) in enumerate(plan)}
    for i, (src, _) in enumerate(plan):
        j = into_at.get(src._id, i) if isinstance(src, Array) else i
        if j != i:
            raise ValueError(
                f"device_put(into=...): the value at x{tree.keystr(paths[i])} is "
                f"also overwritten as `into` at x{tree.keystr(paths[j])}; pass a "
                "copy of it (x.copy()). Nothing was consumed."
            )
    if len(plan) > 1:
        # One leaf's refusal must not leave the others consumed.
        for path, (_, dst) in zip(paths, plan):
            n = dst._external_references
            if n:
                raise _baton.DonationError(
                    f"device_put(into=...): `into` at x{tree.keystr(path)} "
                    f"({dst._describe()}) has {n} live host view(s) or DLPack "
                    "export(s); delete them (or let them go out of scope) first. "
                    "Nothing was consumed."
                )
    out = []
    for src, dst in plan:
        if isinstance(src, Array):
            out.append(_baton._copy_array_into(src, dst))
        elif isinstance(src, Donated):
            out.append(src._put_into(dst))
        else:
            out.append(_baton._put_numpy_into(src.array, src.dtype_name, dst))
    return tree.unflatten(treedef, out)


def block_until_ready(x: Any) -> Any:
    """Waits for every baton Array in pytree ``x``; returns ``x``."""
    # Fast paths (a pytree flatten costs more than waiting for a ready array):
    # one array, or a flat list/tuple of arrays.
    if type(x) is Array:
        x.block_until_ready()
        return x
    if type(x) in (list, tuple) and all(type(a) is Array for a in x):
        for a in x:
            a.block_until_ready()
        return x
    for leaf in tree.leaves(x):
        if isinstance(leaf, Array) or hasattr(leaf, "addressable_shards"):
            leaf.block_until_ready()
    return x
