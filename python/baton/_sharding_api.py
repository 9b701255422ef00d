"""JAX's newer sharding functions on baton's eager sharded arrays:
``reshard``, ``lax.with_sharding_constraint``, ``auto_axes`` /
``explicit_axes``, the ``out_sharding=`` of ``bnp.dot`` / ``bnp.matmul`` and
the sharding ``bt.typeof`` reports (DESIGN 5.6).

baton's compiled programs run on one device (a sharded argument runs shard
by shard only where that is the whole computation, baton/_sharded_call.py),
so each of these acts on concrete arrays, between programs:

- ``reshard(x, s)`` / ``with_sharding_constraint(x, s)``: ``x`` placed as
  ``s`` says (``bt.device_put``; an array already placed so is returned
  as it is). On a mesh whose axes are all ``Explicit``,
  ``with_sharding_constraint`` is an assertion, as in JAX.
- ``out_sharding=``: the operands are gathered onto one device of the
  target mesh, the product computed there and the result placed as
  ``out_sharding`` says -- JAX's values and placement, not its
  communication pattern (the whole operands pass through one device).
- ``auto_axes`` / ``explicit_axes``: run the function with those mesh axes
  switched to ``Auto`` / ``Explicit`` (the current mesh, ``bt.set_mesh``)
  and reshard its inputs / outputs as JAX does.

Inside ``bt.jit`` (a traced value) each raises NotImplementedError: a
program cannot move data between devices.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from baton import _baton, _device_put, tree
from baton import sharding as _sharding_module
from baton._baton import lax as _lax
from baton._sharded_array import ShardedArray, is_sharded
from baton._sharded_put import is_sharding
from baton.sharding import (
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    current_mesh,
    set_mesh,
    sharding_of,
)

__all__ = [
    "auto_axes",
    "explicit_axes",
    "reshard",
    "type_sharding",
    "with_out_sharding",
    "with_sharding_constraint",
]


def _is_spec_or_sharding(s: Any) -> bool:
    return isinstance(s, PartitionSpec) or is_sharding(s)


def _per_leaf(xs: Any, shardings: Any, what: str) -> tuple[list, Any, list]:
    leaves, treedef = tree.flatten(xs)
    if _is_spec_or_sharding(shardings):
        targets = [sharding_of(shardings, what)] * len(leaves)
    else:
        targets = [
            sharding_of(s, what)
            for s in tree.leaves(shardings, is_leaf=_is_spec_or_sharding)
        ]
        if len(targets) != len(leaves):
            raise ValueError(
                f"{what}: {len(targets)} sharding(s) for {len(leaves)} array(s); give "
                "one sharding, or a pytree of them matching the arrays"
            )
    return leaves, treedef, targets


def leaf_targets(xs: Any, shardings: Any, what: str) -> list:
    """Per leaf of ``xs``, the sharding ``shardings`` asks for it, or None:
    jit's ``in_shardings`` / ``out_shardings``, which are one sharding (or
    spec) for every leaf, or a prefix of ``xs``'s structure (a tuple, list
    or dict of them) where None leaves a part as it is."""
    if shardings is None:
        return [None] * len(tree.leaves(xs))
    if _is_spec_or_sharding(shardings):
        return [sharding_of(shardings, what)] * len(tree.leaves(xs))
    if isinstance(shardings, (tuple, list)) and isinstance(xs, (tuple, list)):
        if len(shardings) != len(xs):
            raise ValueError(
                f"{what}: {len(shardings)} entries for {len(xs)} values; give one "
                "sharding, or one entry (a sharding or None) per value"
            )
        return [t for x, sh in zip(xs, shardings) for t in leaf_targets(x, sh, what)]
    if isinstance(shardings, dict) and isinstance(xs, dict):
        extra = set(shardings) - set(xs)
        if extra:
            raise ValueError(f"{what}: keys {sorted(extra)} are not among the values'")
        # tree.flatten orders a dict's leaves by sorted key
        return [t for k in sorted(xs) for t in leaf_targets(xs[k], shardings.get(k), what)]
    raise ValueError(
        f"{what}: {type(shardings).__name__} does not match the structure of the "
        f"values ({type(xs).__name__}); give one sharding, or a tuple, list or dict "
        "of them (None to leave a part as it is)"
    )


def place(xs: Any, shardings: Any, what: str) -> Any:
    """``xs`` with each leaf resharded where :func:`leaf_targets` asks (a
    leaf already placed so is not copied)."""
    targets = leaf_targets(xs, shardings, what)
    leaves, treedef = tree.flatten(xs)
    return tree.unflatten(
        treedef,
        [
            x if t is None else _device_put.device_put(x, t, may_alias=True)
            for x, t in zip(leaves, targets)
        ],
    )


def reshard(xs: Any, out_shardings: Any) -> Any:
    """``xs`` (an array or pytree) placed as ``out_shardings`` says: one
    sharding or PartitionSpec for every leaf, or a pytree of them matching
    ``xs``; a bare PartitionSpec is on the current mesh (``bt.set_mesh``).
    A leaf already placed so is returned as it is (nothing is copied).
    Inside ``bt.jit``: as :func:`with_sharding_constraint` there.

    Example::

        with bt.set_mesh(bt.make_mesh((4,), ("i",))):
            x = bt.device_put(np.arange(8.0), P("i"))
            y = bt.reshard(x, P())          # every device holds all 8
    """
    leaves, treedef, targets = _per_leaf(xs, out_shardings, "reshard")
    if _lax.is_tracing() or any(isinstance(v, _lax.Tracer) for v in leaves):
        # Inside jit: the layout the partitioned program gives the value.
        return tree.unflatten(
            treedef, [_constrain_traced(v, s, "reshard") for v, s in zip(leaves, targets)]
        )
    return tree.unflatten(
        treedef,
        [_device_put.device_put(x, s, may_alias=True) for x, s in zip(leaves, targets)],
    )


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` placed as ``shardings`` says (JAX's
    ``lax.with_sharding_constraint``). On concrete arrays: a reshard, except
    on a mesh whose axes are all ``Explicit``, where -- as in JAX -- it
    asserts that ``x`` is already placed so (AssertionError otherwise; use
    :func:`reshard` to move it). Inside ``bt.jit`` (and grad, vmap): the
    value is laid out so when the program is partitioned over the mesh of
    its sharded arguments (its derivatives alike; a vmapped batch dimension
    keeps the layout it has, as JAX leaves it unconstrained); a program of
    unsharded arguments runs on one device and the constraint does nothing
    there.

    Example::

        mesh = bt.make_mesh((4,), ("i",))
        x = bt.device_put(np.arange(8.0), NamedSharding(mesh, P("i")))
        y = bt.lax.with_sharding_constraint(x, NamedSharding(mesh, P()))
    """
    what = "with_sharding_constraint"
    leaves, treedef, targets = _per_leaf(x, shardings, what)
    if _lax.is_tracing() or any(isinstance(v, _lax.Tracer) for v in leaves):
        return tree.unflatten(
            treedef, [_constrain_traced(v, s, what) for v, s in zip(leaves, targets)]
        )
    out = []
    for leaf, s in zip(leaves, targets):
        if isinstance(s, NamedSharding) and _all_explicit(s.mesh):
            have = type_sharding(leaf)
            have_spec = PartitionSpec() if have is None else have.spec
            if _trim(have_spec) != _trim(s.spec):
                raise AssertionError(
                    "`with_sharding_constraint` acts as an assert when all axes of "
                    f"mesh are of type `Explicit`. The array sharding: "
                    f"{have_spec} did not match the "
                    f"sharding provided: {s.spec}. Please use "
                    "`bt.sharding.reshard` to shard your input to the sharding you "
                    "want."
                )
            out.append(leaf)
            continue
        out.append(_device_put.device_put(leaf, s, may_alias=True))
    return tree.unflatten(treedef, out)


def _constrain_traced(x: Any, s: Any, what: str) -> Any:
    """``x`` through a sharding-constraint call in the current trace
    (compiler/op_attrs.h CallKind::kShardingConstraint), naming the mesh
    axes of ``s``'s spec per dimension."""
    if not isinstance(s, NamedSharding):
        raise NotImplementedError(
            f"{what} inside a traced function takes a NamedSharding or a "
            f"PartitionSpec (on the current mesh), not {s!r}"
        )
    ndim = len(x.shape) if hasattr(x, "shape") else 0
    if len(s.spec) > ndim:
        raise ValueError(
            f"{what}: {s.spec} names {len(s.spec)} dimensions for a value of "
            f"shape {tuple(x.shape)}"
        )
    axes = [list(s.spec.axes_of(d)) for d in range(ndim)]
    weak = isinstance(x, _lax.Tracer) and x.weak_type
    return _baton.transforms.emit_call(
        "sharding_constraint", [x], weak=[weak], sharding=axes
    )[0]


def _all_explicit(mesh: Mesh) -> bool:
    return all(t is AxisType.Explicit for t in mesh.axis_types)


def _trim(spec: Any) -> tuple:
    parts = list(spec)
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


class TypeSharding(NamedSharding):
    """What ``bt.typeof(x).sharding`` is: a NamedSharding whose spec keeps
    only the mesh's ``Explicit`` axes (an ``Auto`` axis is not part of an
    array's type, as in JAX), one entry per dimension."""

    __slots__ = ()

    def spec_trimmed(self) -> tuple:
        return _trim(self.spec)


def type_sharding(x: Any) -> Any:
    """The sharding in ``x``'s type (``bt.typeof(x).sharding``): for a
    sharded array a :class:`TypeSharding` of its mesh; None for anything
    else (a single-device array's type carries no mesh in baton)."""
    if not is_sharded(x) or not isinstance(x.sharding, NamedSharding):
        return None
    s = x.sharding
    explicit = set(s.mesh.explicit_axes)
    parts: list = []
    for d in range(len(x.shape)):
        axes = tuple(a for a in s.spec.axes_of(d) if a in explicit)
        parts.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return TypeSharding(s.mesh, PartitionSpec(*parts))


def with_out_sharding(
    compute: Callable[..., Any], operands: tuple, out_sharding: Any, what: str
) -> Any:
    """``compute(*operands)`` placed as ``out_sharding`` says (see the module
    docstring): sharded operands are gathered onto the first device of the
    target sharding first."""
    target = sharding_of(out_sharding, what)
    if isinstance(target, NamedSharding):
        types = dict(zip(target.mesh.axis_names, target.mesh.axis_types))
        for d in range(len(target.spec)):
            for a in target.spec.axes_of(d):
                if types[a] is not AxisType.Explicit:
                    raise ValueError(
                        f"PartitionSpec passed to {what} cannot contain axis names "
                        f"that are of type Auto or Manual. Got PartitionSpec: "
                        f"{target.spec} with axis name: {a} of type: {types[a]} "
                        "(as in JAX: build the mesh with axis_types=(AxisType."
                        "Explicit, ...), or reshard the result instead)"
                    )
    if _lax.is_tracing() or any(isinstance(x, _lax.Tracer) for x in operands):
        # Inside jit: the result laid out so when the program is partitioned.
        return _constrain_traced(compute(*operands), target, f"{what}(out_sharding=...)")
    device = sorted(target.device_set, key=lambda d: d.id)[0]
    if isinstance(target, NamedSharding):
        device = target.mesh.devices.flat[0]
    here = [
        _device_put.device_put(x, device) if isinstance(x, ShardedArray) else x
        for x in operands
    ]
    out = compute(*here)
    return _device_put.device_put(out, target)


def _mesh_with(axes: Any, kind: AxisType, shardings: Any, what: str) -> tuple:
    """(the mesh to use, the same mesh with ``axes`` of type ``kind``)."""
    mesh = current_mesh()
    for s in tree.leaves(shardings, is_leaf=_is_spec_or_sharding):
        if isinstance(s, NamedSharding):
            if mesh is not None and s.mesh.devices.shape != mesh.devices.shape:
                raise ValueError(
                    f"{what}: the context mesh {mesh} must match the mesh of the "
                    f"shardings {s.mesh}; use `with bt.set_mesh(mesh):`"
                )
            mesh = mesh or s.mesh
    if mesh is None:
        return None, None
    names = (
        mesh.axis_names
        if axes is None
        else ((axes,) if isinstance(axes, str) else tuple(axes))
    )
    for n in names:
        if n not in mesh.shape:
            raise ValueError(f"{what}: {n!r} is not an axis of the mesh {mesh}")
    types = tuple(
        kind if n in names else t for n, t in zip(mesh.axis_names, mesh.axis_types)
    )
    return mesh, Mesh(mesh.devices, mesh.axis_names, types)


def _respec(x: Any, mesh: Mesh) -> Any:
    """``x`` on ``mesh`` (the same devices, other axis types), its spec kept."""
    if isinstance(x, ShardedArray) and isinstance(x.sharding, NamedSharding):
        s = x.sharding
        if s.mesh.devices.shape == mesh.devices.shape and all(
            a is b for a, b in zip(s.mesh.devices.flat, mesh.devices.flat)
        ):
            return ShardedArray(
                x.shape,
                x.dtype,
                NamedSharding(mesh, s.spec, memory_kind=s.memory_kind),
                x._shards,
                x._impl,  # the same axis names, sizes and devices
            )
    return x


def auto_axes(
    f: Callable[..., Any] | None = None,
    /,
    *,
    axes: Any = None,
    out_sharding: Any = None,
) -> Any:
    """``f`` run with mesh axes ``axes`` (default: all) of the current mesh
    switched to ``AxisType.Auto``; its outputs are resharded to
    ``out_sharding`` (required: here or as a keyword of the call).

    Example::

        mesh = bt.make_mesh((4,), ("i",), axis_types=(AxisType.Explicit,))
        with bt.set_mesh(mesh):
            g = bt.sharding.auto_axes(lambda x: x * 2, out_sharding=P("i"))
    """
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def run(*args: Any, **kwargs: Any) -> Any:
        target = out_sharding
        if target is None:
            if "out_sharding" not in kwargs:
                raise TypeError("Missing required keyword argument: 'out_sharding'")
            target = kwargs.pop("out_sharding")
        mesh, new = _mesh_with(axes, AxisType.Auto, target, "auto_axes")
        if mesh is None:
            return f(*args, **kwargs)
        with set_mesh(new):
            out = f(*tree.map(lambda a: _respec(a, new), args), **kwargs)
        out = reshard(out, _on(target, mesh))
        return tree.map(lambda a: _respec(a, mesh), out)

    return run


def explicit_axes(
    f: Callable[..., Any] | None = None,
    /,
    *,
    axes: Any = None,
    in_sharding: Any = None,
) -> Any:
    """``f`` run with mesh axes ``axes`` (default: all) of the current mesh
    switched to ``AxisType.Explicit``, its arguments first resharded to
    ``in_sharding`` (required: here or as a keyword of the call). Needs a
    current mesh (``bt.set_mesh``), as in JAX.

    Example::

        with bt.set_mesh(bt.make_mesh((4,), ("i",))):
            g = bt.sharding.explicit_axes(lambda x: x * 2, in_sharding=P("i"))
    """
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def run(*args: Any, **kwargs: Any) -> Any:
        target = in_sharding
        if target is None:
            if "in_sharding" not in kwargs:
                raise TypeError("Missing required keyword argument: 'in_sharding'")
            target = kwargs.pop("in_sharding")
        mesh, new = _mesh_with(axes, AxisType.Explicit, None, "explicit_axes")
        if mesh is None:
            raise ValueError(
                "Context mesh cannot be empty. Please use `bt.set_mesh` API to "
                "enter into a mesh context when using `explicit_axes` API."
            )
        with set_mesh(new):
            placed = reshard(args, _on(target, new))
            out = f(*placed, **kwargs)
        return tree.map(lambda a: _respec(a, mesh), out)

    return run


def _on(shardings: Any, mesh: Mesh) -> Any:
    """``shardings`` with bare PartitionSpecs made NamedShardings of ``mesh``."""
    return tree.map(
        lambda s: (
            NamedSharding(mesh, s)
            if isinstance(s, PartitionSpec)
            else NamedSharding(mesh, s.spec, memory_kind=s.memory_kind)
            if isinstance(s, NamedSharding)
            else s
        ),
        shardings,
        is_leaf=_is_spec_or_sharding,
    )


# JAX's jax.sharding.reshard / auto_axes / explicit_axes: names of
# bt.sharding, which sits below this module (the arrays' layer) and so
# cannot import them itself.
for _name in ("reshard", "auto_axes", "explicit_axes"):
    setattr(_sharding_module, _name, globals()[_name])
    if _name not in _sharding_module.__all__:
        _sharding_module.__all__.append(_name)
