"""``bt.tree_util``: ``jax.tree_util``'s names over ``bt.tree``.

    from baton import tree_util
    leaves, treedef = tree_util.tree_flatten({"b": 1, "a": [2, 3]})  # [2, 3, 1]

The ``tree_*`` functions are ``bt.tree``'s (``tree_map`` is ``bt.tree.map``
...). Registering a class as a pytree node: :func:`register_pytree_node`
(``flatten(x) -> (children, aux)``, ``unflatten(aux, children) -> x``),
:func:`register_pytree_with_keys` (children with their keys),
:func:`register_pytree_node_class` (a class with ``tree_flatten`` /
``tree_unflatten``) and :func:`register_dataclass`. Key paths use
``DictKey`` / ``SequenceKey`` / ``GetAttrKey`` / ``FlattenedIndexKey`` and
print with :func:`keystr` exactly as in JAX. :func:`register_static`
makes a hashable class a node with no children (static under ``bt.jit``).
:func:`flatten_one_level` / :func:`flatten_one_level_with_keys` take one
node apart; :data:`default_registry` is the registry these use (baton's
own, as ``jax.tree_util.default_registry`` is JAX's). :class:`Partial` is a
``functools.partial`` that is a pytree (its arguments are leaves, its
function is static), so it can be passed to and returned from ``bt.jit``.
"""

from __future__ import annotations

import collections
import functools
import warnings
from collections.abc import Iterable
from typing import Any, Callable

import optree

from baton import tree
from baton._tree_keys import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    SequenceKey,
    keystr,
)
from baton.tree import NAMESPACE, PyTreeDef, register_dataclass

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "default_registry",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]

tree_all = tree.all
tree_broadcast = tree.broadcast
tree_flatten = tree.flatten
tree_flatten_with_path = tree.flatten_with_path
tree_leaves = tree.leaves
tree_leaves_with_path = tree.leaves_with_path
tree_map = tree.map
tree_map_with_path = tree.map_with_path
tree_reduce = tree.reduce
tree_reduce_associative = tree.reduce_associative
tree_structure = tree.structure
tree_transpose = tree.transpose
tree_unflatten = tree.unflatten


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` is that of a single leaf."""
    return treedef.is_leaf()


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The treedefs of the root's children."""
    return list(treedef.children())


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose children have ``treedefs``."""
    return optree.treespec_tuple(
        list(treedefs), none_is_leaf=False, namespace=NAMESPACE
    )


def all_leaves(
    iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None
) -> bool:
    """Whether every element of ``iterable`` is a leaf."""
    return all(tree.structure(x, is_leaf).is_leaf() for x in iterable)


def _check_type(nodetype: Any, what: str) -> None:
    if not isinstance(nodetype, type):
        raise TypeError(f"{what}: expected a class, got {nodetype!r}")


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable[Any], Any]],
    unflatten_func: Callable[[Any, Iterable[Any]], Any],
    flatten_with_keys_func: Callable[[Any], tuple[Iterable[Any], Any]] | None = None,
) -> None:
    """Makes instances of ``nodetype`` pytree nodes.

    ``flatten_func(x)`` returns ``(children, aux_data)``: children are
    subtrees, ``aux_data`` is static (hashable, compared with ``==`` by
    ``bt.jit``); ``unflatten_func(aux_data, children)`` rebuilds ``x``.
    Children's key paths are ``FlattenedIndexKey(i)``, or the keys that
    ``flatten_with_keys_func(x) -> ([(key, child), ...], aux_data)`` gives.
    Registering a class twice raises ValueError.
    """
    _check_type(nodetype, "register_pytree_node")
    if flatten_with_keys_func is not None:
        register_pytree_with_keys(
            nodetype, flatten_with_keys_func, unflatten_func, flatten_func
        )
        return

    def flatten(x: Any) -> tuple[Any, Any]:
        children, aux = flatten_func(x)
        return tuple(children), aux

    _register(nodetype, flatten, unflatten_func)


def _register(nodetype: type, flatten: Any, unflatten: Any) -> None:
    with warnings.catch_warnings():
        # A namedtuple class registered as its own node (as JAX allows, e.g.
        # jax.example_libraries.optimizers.OptimizerState): optree warns.
        warnings.filterwarnings(
            "ignore", message=".*subclass of `collections.namedtuple`"
        )
        optree.register_pytree_node(nodetype, flatten, unflatten, namespace=NAMESPACE)


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]],
    unflatten_func: Callable[[Any, Iterable[Any]], Any],
    flatten_func: Callable[[Any], tuple[Iterable[Any], Any]] | None = None,
) -> None:
    """Like :func:`register_pytree_node`, with each child's key:
    ``flatten_with_keys(x)`` returns ``([(key, child), ...], aux_data)``;
    the keys appear in key paths (``DictKey("w")``, ``GetAttrKey("w")``...).
    ``flatten_func`` is accepted for JAX compatibility (unused)."""
    _check_type(nodetype, "register_pytree_with_keys")

    def flatten(x: Any) -> tuple[Any, Any, Any]:
        pairs, aux = flatten_with_keys(x)
        pairs = list(pairs)
        return tuple(c for _, c in pairs), aux, tuple(k for k, _ in pairs)

    _register(nodetype, flatten, unflatten_func)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: ``cls`` defines ``tree_flatten(self) -> (children,
    aux_data)`` and the classmethod ``tree_unflatten(aux_data, children)``."""
    _check_type(cls, "register_pytree_node_class")
    for name in ("tree_flatten", "tree_unflatten"):
        if not hasattr(cls, name):
            raise TypeError(
                f"register_pytree_node_class: {cls.__name__} has no {name}; define "
                "tree_flatten(self) -> (children, aux_data) and the classmethod "
                "tree_unflatten(cls, aux_data, children)"
            )
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: ``cls`` defines ``tree_flatten_with_keys(self) ->
    ([(key, child), ...], aux_data)`` and the classmethod
    ``tree_unflatten(aux_data, children)``."""
    _check_type(cls, "register_pytree_with_keys_class")
    for name in ("tree_flatten_with_keys", "tree_unflatten"):
        if not hasattr(cls, name):
            raise TypeError(
                f"register_pytree_with_keys_class: {cls.__name__} has no {name}"
            )
    register_pytree_with_keys(
        cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten
    )
    return cls


class Partial(functools.partial):
    """``functools.partial`` as a pytree: ``args`` and ``keywords`` are its
    children (leaves: arrays), ``func`` is static. So a function with bound
    array arguments can cross ``bt.jit`` / ``bt.vmap`` boundaries, as
    ``jax.tree_util.Partial``."""


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)


def register_static(cls: type) -> type:
    """Registers ``cls`` (hashable) as a pytree node with no children: its
    instances are static, so ``bt.jit`` compares them with ``==`` and
    retraces for a new value instead of tracing them. Returns ``cls`` (a
    decorator)."""
    _check_type(cls, "register_static")
    register_pytree_with_keys(cls, lambda obj: ((), obj), lambda obj, _: obj)
    return cls


def _builtin_meta(x: Any, keys: list[Any]) -> tuple[str, Any] | None:
    """(how JAX's registry returns the children, its node data) for the
    built-in node types; None for the others."""
    t = type(x)
    if x is None:
        return "tuple", None
    if t is tuple or t is list:
        return t.__name__, None
    if t is dict:
        return "tuple", tuple(k.key for k in keys)
    if t is collections.OrderedDict:
        return "list", tuple(k.key for k in keys)
    if t is collections.defaultdict:
        return "list", (x.default_factory, tuple(k.key for k in keys))
    if isinstance(x, tuple) and hasattr(t, "_fields"):  # a namedtuple
        return "list", t
    return None


def _one_level(tree_: Any) -> tuple[list[Any], list[Any], Any, str] | None:
    """(children, keys, node data, container of the children) of the root
    of ``tree_``; None when it is a leaf."""
    if tree_ is not None and tree.structure(tree_).is_leaf():
        return None
    pairs, _ = tree.flatten_with_path(tree_, lambda x: x is not tree_)
    children = [x for _, x in pairs]
    keys = [p[0] for p, _ in pairs]
    builtin = _builtin_meta(tree_, keys)
    if builtin is not None:
        kind, meta = builtin
    else:
        out = optree.tree_flatten_one_level(
            tree_, none_is_leaf=False, namespace=NAMESPACE
        )
        kind, meta = "list", out.metadata
    return children, keys, meta, kind


def flatten_one_level(tree: Any) -> tuple[Any, Any]:
    """``(children, node_data)`` of the root of ``tree``, a pytree node
    (built-in or registered): ``flatten_one_level({"b": [1], "a": 2})`` is
    ``((2, [1]), ("a", "b"))``. The children are subtrees; node_data is
    what JAX's registry gives for the built-in containers (dict keys,
    namedtuple class...) and the aux data of registered classes. A leaf
    raises ValueError."""
    out = _one_level(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    children, _, meta, kind = out
    return (tuple(children) if kind == "tuple" else children), meta


def flatten_one_level_with_keys(tree: Any) -> tuple[Any, Any]:
    """``([(key, child), ...], node_data)``: :func:`flatten_one_level` with
    each child's key (``DictKey``, ``SequenceKey``, ``GetAttrKey``,
    ``FlattenedIndexKey``, or a registered class's own)."""
    out = _one_level(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    children, keys, meta, kind = out
    pairs = list(zip(keys, children))
    # JAX gives tuples for None, tuples, lists and dicts, lists otherwise.
    if kind == "tuple" or type(tree) is list:
        return tuple(pairs), meta
    return pairs, meta


def is_tree_node(typ: type) -> bool:
    """Whether the type ``typ`` itself is registered as a pytree node:
    the built-in containers (tuple, list, dict, None's type, OrderedDict,
    defaultdict; baton's also deque), namedtuple classes and registered
    classes."""
    if isinstance(typ, type) and issubclass(typ, tuple) and hasattr(typ, "_fields"):
        return True
    return typ in optree.register_pytree_node.get(namespace=NAMESPACE)


class _Registry:
    """baton's pytree registry with the methods of JAX's
    ``PyTreeRegistry``: flatten, flatten_with_path, flatten_one_level,
    flatten_one_level_with_keys (None for a leaf), is_node, register_node,
    register_dataclass_node. Registrations are baton's (namespace
    ``baton``)."""

    def flatten(
        self, tree_: Any, leaf_predicate: Callable[[Any], bool] | None = None
    ) -> tuple[list[Any], PyTreeDef]:
        """``(leaves, treedef)``, as :func:`tree_flatten`."""
        return tree.flatten(tree_, leaf_predicate)

    def flatten_one_level(self, tree_: Any) -> tuple[Any, Any] | None:
        """:func:`flatten_one_level`, None for a leaf."""
        return None if _one_level(tree_) is None else flatten_one_level(tree_)

    def flatten_one_level_with_keys(self, tree_: Any) -> tuple[Any, Any] | None:
        """:func:`flatten_one_level_with_keys`, None for a leaf."""
        if _one_level(tree_) is None:
            return None
        return flatten_one_level_with_keys(tree_)

    def is_node(self, typ: type) -> bool:
        """:func:`is_tree_node`."""
        return is_tree_node(typ)

    def register_node(
        self,
        typ: type,
        to_iterable: Callable[[Any], tuple[Iterable[Any], Any]],
        from_iterable: Callable[[Any, Iterable[Any]], Any],
        to_iterable_with_keys: Callable[[Any], tuple[Iterable[Any], Any]] | None = None,
    ) -> None:
        """:func:`register_pytree_node`."""
        register_pytree_node(typ, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(
        self, typ: type, data_fields: Iterable[str], meta_fields: Iterable[str]
    ) -> None:
        """:func:`register_dataclass` with these fields."""
        register_dataclass(typ, list(data_fields), list(meta_fields))

    def __repr__(self) -> str:
        return "baton.tree_util.default_registry"


default_registry = _Registry()
