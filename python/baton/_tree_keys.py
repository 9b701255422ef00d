"""Key paths of pytrees, as JAX writes them (``jax.tree_util.DictKey`` ...).

A key path is a tuple of keys, one per container on the way from the root
to a leaf: ``DictKey`` (a dict entry, printed ``['a']``), ``SequenceKey``
(a list or tuple position, ``[0]``), ``GetAttrKey`` (a namedtuple or
dataclass field, ``.x``) and ``FlattenedIndexKey`` (a child of a node
registered without keys, ``[<flat index 0>]``). ``keystr`` joins them.

baton's pytrees are optree trees; :func:`from_accessor` converts optree's
path entries into these keys.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from typing import Any

import optree

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "SequenceKey",
    "from_accessor",
    "keystr",
]


@dataclasses.dataclass(frozen=True)
class DictKey:
    """The entry ``key`` of a dict (printed ``['a']``)."""

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """Position ``idx`` of a list or tuple (printed ``[0]``)."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The field ``name`` of a namedtuple or dataclass (printed ``.name``)."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """Child ``key`` of a node registered without keys (printed
    ``[<flat index 0>]``)."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = Any  # one of the key classes above, or a user-defined key
KeyPath = tuple  # a tuple of KeyEntry

_KEYS = (DictKey, SequenceKey, GetAttrKey, FlattenedIndexKey)


def _entry_key(entry: optree.PyTreeEntry) -> KeyEntry:
    raw = entry.entry
    if isinstance(raw, _KEYS):  # a node registered with JAX keys
        return raw
    if isinstance(entry, optree.NamedTupleEntry):
        return GetAttrKey(entry.field)
    if isinstance(entry, optree.MappingEntry):
        return DictKey(raw)
    if isinstance(entry, optree.SequenceEntry):
        return SequenceKey(raw)
    if isinstance(entry, optree.GetAttrEntry):
        return GetAttrKey(raw)
    if isinstance(entry, optree.FlattenedEntry):
        return FlattenedIndexKey(raw)
    return raw  # a user-defined key of a node registered with keys


def from_accessor(accessor: optree.PyTreeAccessor) -> KeyPath:
    """The JAX key path of one optree accessor."""
    return tuple(_entry_key(e) for e in accessor)


def _simple(k: Any) -> str:
    if isinstance(k, DictKey):
        return str(k.key)
    if isinstance(k, SequenceKey):
        return str(k.idx)
    if isinstance(k, GetAttrKey):
        return k.name
    if isinstance(k, FlattenedIndexKey):
        return str(k.key)
    return str(k)


def _full(k: Any) -> str:
    if isinstance(k, _KEYS):
        return str(k)
    if isinstance(k, str):  # a raw optree path entry (baton's messages)
        return f"[{k!r}]"
    if isinstance(k, int):
        return f"[{k}]"
    return str(k)


def keystr(keys: Sequence[Any], *, simple: bool = False, separator: str = "") -> str:
    """A key path as text, as JAX prints it: ``['a'][0].x``.

    ``simple=True`` writes each key bare (``a``, ``0``, ``x``), joined by
    ``separator``. Raw entries (a str key, an int index) print as a
    ``DictKey`` / ``SequenceKey`` would.
    """
    if not isinstance(keys, (tuple, list)):
        raise TypeError(
            f"keystr: expected a key path (a tuple of keys), got "
            f"{type(keys).__name__}; pass one path of flatten_with_path's result"
        )
    fmt = _simple if simple else _full
    return separator.join(fmt(k) for k in keys)
