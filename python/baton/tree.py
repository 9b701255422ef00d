"""Pytrees: nested containers of arrays (``bt.tree``), built on optree.

Containers are dicts (flattened in sorted key order, and rebuilt in that
order, as JAX does), lists, tuples,
namedtuples, ``None`` (an empty subtree, never a leaf), dataclasses
registered with :func:`register_dataclass` and classes registered with
``bt.tree_util.register_pytree_node``. Everything else is a leaf.
Registrations live in baton's own optree namespace, so they do not leak
into (or depend on) other libraries that use optree.

The names are ``jax.tree``'s: ``map leaves structure flatten unflatten
flatten_with_path leaves_with_path map_with_path reduce transpose all``.
Key paths are tuples of ``DictKey`` / ``SequenceKey`` / ``GetAttrKey`` /
``FlattenedIndexKey`` (``bt.tree_util``), printed by :func:`keystr` as JAX
prints them. A treedef is an ``optree.PyTreeSpec`` (``num_leaves``,
``children()``, ``unflatten()``, ``flatten_up_to()`` as JAX's
``PyTreeDef``; its repr differs).

Dict order is JAX's: a ``dict`` or ``defaultdict`` is flattened in sorted
key order and every treedef baton hands out rebuilds it in sorted key
order (``bt.tree.map(f, {"w": w, "b": b})`` is ``{"b": ..., "w": ...}``);
an ``OrderedDict`` keeps its own order. (optree alone would rebuild a dict
in the insertion order it was flattened from; :func:`_canonical` rewrites
such treedefs.)
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
from collections.abc import Iterable, Sequence
from typing import Any, Callable

import optree

from baton._tree_keys import KeyPath, from_accessor, keystr

NAMESPACE = "baton"

PyTreeDef = optree.PyTreeSpec

__all__ = [
    "PyTreeDef",
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "keystr",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "register_dataclass",
    "static",
    "structure",
    "transpose",
    "unflatten",
]

_NO_INIT = object()

_SORTED_KINDS = (optree.PyTreeKind.DICT, optree.PyTreeKind.DEFAULTDICT)
# treedef -> the treedef rebuilding its dicts in sorted key order, or None
# when the structure has no dict / defaultdict node (the treedef is used as
# it is). Keyed by treedef equality, which ignores dict insertion order.
_CANON: dict[PyTreeDef, PyTreeDef | None] = {}
_CANON_MAX = 4096


def _sorted_dicts(treedef: PyTreeDef) -> tuple[PyTreeDef, bool]:
    """``treedef`` with each dict / defaultdict node rebuilt in sorted key
    order (optree's ``entries()`` order, in which it flattens them), and
    whether it has any such node."""
    found = False

    def node(spec: PyTreeDef) -> PyTreeDef:
        nonlocal found
        if spec.kind not in _SORTED_KINDS:
            return spec
        found = True
        keys = spec.entries()
        rebuilt = spec.unflatten(range(spec.num_children))
        if list(rebuilt) == keys:
            return spec
        leaf = optree.treespec_leaf(
            none_is_leaf=spec.none_is_leaf, namespace=spec.namespace
        )
        children = dict.fromkeys(keys, leaf)
        if spec.kind == optree.PyTreeKind.DICT:
            return optree.treespec_dict(
                children, none_is_leaf=spec.none_is_leaf, namespace=spec.namespace
            )
        return optree.treespec_defaultdict(
            rebuilt.default_factory,
            children,
            none_is_leaf=spec.none_is_leaf,
            namespace=spec.namespace,
        )

    out = treedef.transform(node)
    return out, found


def _canonical(treedef: PyTreeDef) -> PyTreeDef:
    """``treedef`` rebuilding dicts in sorted key order, as JAX's do."""
    if treedef.num_nodes == 1:  # a leaf, None, or an empty container
        return treedef
    try:
        hit = _CANON.get(treedef, _NO_INIT)
    except Exception:  # unhashable / uncomparable node data: no cache
        return _sorted_dicts(treedef)[0]
    if hit is _NO_INIT:
        out, found = _sorted_dicts(treedef)
        if len(_CANON) >= _CANON_MAX:
            _CANON.clear()
        _CANON[treedef] = out if found else None
        return out
    return treedef if hit is None else hit


def flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """Returns ``(leaves, treedef)``; ``unflatten(treedef, leaves)`` inverts it."""
    leaves_, treedef = optree.tree_flatten(
        tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE
    )
    return leaves_, _canonical(treedef)


def unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuilds the tree described by ``treedef`` from ``leaves`` (dicts in
    sorted key order, as JAX)."""
    return optree.tree_unflatten(_canonical(treedef), leaves)


def leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, in flattening order."""
    return optree.tree_leaves(tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The treedef of ``tree``."""
    return _canonical(
        optree.tree_structure(tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)
    )


def map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``f`` applied leaf by leaf to ``tree`` and the same-shaped ``rest``
    (dicts come back in sorted key order, as in JAX)."""
    leaves_, treedef = flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves_])
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(leaves_, *others)])


def flatten_with_path(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Returns ``([(key_path, leaf), ...], treedef)``, as JAX does.

    A key path is a tuple of ``DictKey`` / ``SequenceKey`` / ``GetAttrKey``
    / ``FlattenedIndexKey``; ``keystr(path)`` prints it (``['a'][0]``).
    """
    accessors, leaves_, treedef = optree.tree_flatten_with_accessor(
        tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE
    )
    return [(from_accessor(a), x) for a, x in zip(accessors, leaves_)], _canonical(
        treedef
    )


def leaves_with_path(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> list[tuple[KeyPath, Any]]:
    """``[(key_path, leaf), ...]``: the first half of :func:`flatten_with_path`."""
    return flatten_with_path(tree, is_leaf)[0]


def map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``f(key_path, leaf, *rest_leaves)`` applied leaf by leaf; ``rest``
    have ``tree``'s structure."""
    pairs, treedef = flatten_with_path(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(
        f(path, x, *(o[i] for o in others)) for i, (path, x) in enumerate(pairs)
    )


def reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _NO_INIT,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``functools.reduce(function, leaves(tree)[, initializer])``; an empty
    tree without ``initializer`` raises TypeError (as functools does)."""
    xs = leaves(tree, is_leaf)
    if initializer is _NO_INIT:
        return functools.reduce(function, xs)
    return functools.reduce(function, xs, initializer)


def reduce_associative(
    operation: Callable[[Any, Any], Any],
    tree: Any,
    *,
    identity: Any = _NO_INIT,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """The leaves combined with the associative ``operation`` pairwise, as
    JAX does: the first half's result with the second half's, recursively
    (so a depth of log2(leaves)). An empty tree gives ``identity``; without
    one, TypeError."""
    xs = leaves(tree, is_leaf)

    def halves(seq: list[Any]) -> Any:
        if len(seq) == 1:
            return seq[0]
        mid = len(seq) // 2
        return operation(halves(seq[:mid]), halves(seq[mid:]))

    if not xs:
        if identity is _NO_INIT:
            raise TypeError(
                "reduce_associative: the tree has no leaves; pass identity= "
                "for the result of an empty reduction"
            )
        return identity
    return halves(xs)


def broadcast(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """``full_tree``'s structure with each of its leaves replaced by the
    leaf of ``prefix_tree`` (a prefix of full_tree's structure) above it:
    ``broadcast((1, {"a": 2}), ((3, 4), {"a": [5, 6]}))`` is ``((1, 1),
    {"a": [2, 2]})``. ``is_leaf`` applies to ``prefix_tree``. ValueError
    when prefix_tree is not a prefix of full_tree."""
    out: list[Any] = []
    prefix_leaves, prefix_def = flatten(prefix_tree, is_leaf)
    try:
        subtrees = prefix_def.flatten_up_to(full_tree)
    except ValueError as e:
        raise ValueError(
            f"broadcast: prefix_tree is not a prefix of full_tree: {e}"
        ) from None
    for x, sub in zip(prefix_leaves, subtrees):
        out.extend([x] * structure(sub).num_leaves)
    return structure(full_tree).unflatten(out)


def static(**kwargs: Any) -> Any:
    """``dataclasses.field(**kwargs)`` marked static (``metadata={"static":
    True}`` added to any given): :func:`register_dataclass` makes such a
    field node data, not a child."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


def all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf is truthy (True for an empty tree)."""
    return builtins.all(leaves(tree, is_leaf))


def transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Turns an outer tree of inner trees into an inner tree of outer trees.

    ``pytree_to_transpose`` has structure ``outer_treedef`` with each leaf
    replaced by a tree of structure ``inner_treedef`` (``None``: that of
    the first one). Raises TypeError naming both structures when they do
    not compose.
    """
    outer_treedef = _canonical(outer_treedef)
    inners = outer_treedef.flatten_up_to(pytree_to_transpose)
    if inner_treedef is not None:
        inner_treedef = _canonical(inner_treedef)
    if inner_treedef is None:
        if not inners:
            raise ValueError(
                "transpose: inner_treedef=None needs a non-empty outer tree to "
                "infer the inner structure from; pass inner_treedef"
            )
        inner_treedef = structure(inners[0])
    expected = outer_treedef.compose(inner_treedef)
    got = structure(pytree_to_transpose)
    if got != expected:
        raise TypeError(
            f"transpose: the tree's structure\n{got}\n!= the composition of "
            f"outer and inner treedefs\n{expected}\n(pass the outer and inner "
            "structures the tree was built from)"
        )
    grid = [inner_treedef.flatten_up_to(x) for x in inners]
    columns = [outer_treedef.unflatten(col) for col in zip(*grid)]
    if not grid:  # an empty outer tree: one empty outer tree per inner leaf
        columns = [outer_treedef.unflatten([])] * inner_treedef.num_leaves
    return inner_treedef.unflatten(columns)


def paths_and_leaves(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[tuple[Any, ...]], list[Any], PyTreeDef]:
    """``(raw_paths, leaves, treedef)`` with optree's raw paths (dict keys,
    indices; fast), for baton's own messages: ``keystr`` prints them."""
    paths, leaves_, treedef = optree.tree_flatten_with_path(
        tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE
    )
    return paths, leaves_, _canonical(treedef)


def register_dataclass(
    cls: type | None = None,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> Any:
    """Registers dataclass ``cls`` as a pytree node and returns it (JAX's
    ``register_dataclass``).

    Every field is data (a subtree) unless named in ``meta_fields`` or
    declared ``dataclasses.field(metadata=dict(static=True))`` (static
    values, compared with ``==`` and hashed by jit); ``drop_fields`` are
    neither. ``data_fields`` may list the data fields explicitly; fields in
    no list are data. Usable as a decorator: ``@bt.tree.register_dataclass``
    or ``@functools.partial(bt.tree.register_dataclass, meta_fields=("n",))``.
    Unflattening does not call ``__init__`` / ``__post_init__`` (fields are
    set directly, which works for frozen dataclasses too).
    """
    if cls is None:
        return lambda c: register_dataclass(
            c, data_fields=data_fields, meta_fields=meta_fields, drop_fields=drop_fields
        )
    if not dataclasses.is_dataclass(cls) or not isinstance(cls, type):
        raise TypeError(f"register_dataclass: {cls!r} is not a dataclass type")
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    dropped = tuple(drop_fields)
    if meta_fields is None:
        meta = tuple(
            f.name
            for f in fields
            if f.metadata.get("static", False) and f.name not in dropped
        )
    else:
        meta = tuple(meta_fields)
    for n in (*meta, *dropped):
        if n not in names:
            raise ValueError(f"register_dataclass: {cls.__name__} has no field {n!r}")
    if data_fields is None:
        data = tuple(n for n in names if n not in meta and n not in dropped)
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
        missing = [
            n for n in names if n not in data and n not in meta and n not in dropped
        ]
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
