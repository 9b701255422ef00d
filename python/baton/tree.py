"""Pytrees: nested containers of arrays (``bt.tree``), built on optree.

Containers are dicts (flattened in sorted key order), lists, tuples,
namedtuples, ``None`` (an empty subtree, never a leaf) and dataclasses
registered with :func:`register_dataclass`. Everything else is a leaf.
Registrations live in baton's own optree namespace, so they do not leak
into (or depend on) other libraries that use optree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any, Callable

import optree

NAMESPACE = "baton"

PyTreeDef = optree.PyTreeSpec

__all__ = [
    "PyTreeDef",
    "flatten",
    "flatten_with_path",
    "keystr",
    "leaves",
    "map",
    "register_dataclass",
    "structure",
    "unflatten",
]


def flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """Returns ``(leaves, treedef)``; ``unflatten(treedef, leaves)`` inverts it."""
    return optree.tree_flatten(tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuilds the tree described by ``treedef`` from ``leaves``."""
    return optree.tree_unflatten(treedef, leaves)


def leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, in flattening order."""
    return optree.tree_leaves(tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The treedef of ``tree``."""
    return optree.tree_structure(tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``f`` applied leaf by leaf to ``tree`` and the same-shaped ``rest``."""
    return optree.tree_map(
        f, tree, *rest, is_leaf=is_leaf, none_is_leaf=False, namespace=NAMESPACE
    )


def flatten_with_path(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[tuple[Any, ...]], list[Any], PyTreeDef]:
    """Returns ``(paths, leaves, treedef)``; a path is a tuple of keys/indices."""
    return optree.tree_flatten_with_path(
        tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE
    )


def keystr(path: Sequence[Any]) -> str:
    """``('a', 0)`` -> ``"['a'][0]"`` (for error messages)."""
    return "".join(f"[{k!r}]" if isinstance(k, str) else f"[{k}]" for k in path)


def register_dataclass(
    cls: type | None = None,
    *,
    meta_fields: Sequence[str] = (),
    data_fields: Sequence[str] | None = None,
) -> Any:
    """Registers dataclass ``cls`` as a pytree node and returns it.

    Every field is data (a subtree) unless named in ``meta_fields`` (static
    values, compared with ``==`` and hashed by jit). ``data_fields`` may list
    the data fields explicitly (as in JAX); fields in neither list are
    data. Usable as a decorator: ``@bt.tree.register_dataclass`` or
    ``@functools.partial(bt.tree.register_dataclass, meta_fields=("n",))``.
    Unflattening does not call ``__init__`` / ``__post_init__`` (fields are
    set directly, which works for frozen dataclasses too).
    """
    if cls is None:
        return lambda c: register_dataclass(
            c, meta_fields=meta_fields, data_fields=data_fields
        )
    if not dataclasses.is_dataclass(cls) or not isinstance(cls, type):
        raise TypeError(f"register_dataclass: {cls!r} is not a dataclass type")
    names = [f.name for f in dataclasses.fields(cls)]
    meta = tuple(meta_fields)
    for n in meta:
        if n not in names:
            raise ValueError(f"register_dataclass: {cls.__name__} has no field {n!r}")
    if data_fields is None:
        data = tuple(n for n in names if n not in meta)
    else:
        data = tuple(data_fields)
        for n in data:
            if n not in names:
                raise ValueError(
                    f"register_dataclass: {cls.__name__} has no field {n!r}"
                )
        overlap = set(data) & set(meta)
        if overlap:
            raise ValueError(
                f"register_dataclass: fields {sorted(overlap)} are listed as both "
                "data and meta"
            )
        missing = [n for n in names if n not in data and n not in meta]
        data = data + tuple(missing)

    def flatten_fn(
        obj: Any,
    ) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[str, ...]]:
        children = tuple(getattr(obj, n) for n in data)
        aux = tuple(getattr(obj, n) for n in meta)
        return children, aux, data

    def unflatten_fn(aux: tuple[Any, ...], children: Iterable[Any]) -> Any:
        obj = cls.__new__(cls)
        for n, v in zip(data, children):
            object.__setattr__(obj, n, v)
        for n, v in zip(meta, aux):
            object.__setattr__(obj, n, v)
        return obj

    optree.register_pytree_node(
        cls,
        flatten_fn,
        unflatten_fn,
        path_entry_type=optree.GetAttrEntry,
        namespace=NAMESPACE,
    )
    return cls
