"""bt.tree: pytrees through optree."""

import collections
import dataclasses
import functools

import pytest

import baton as bt

Point = collections.namedtuple("Point", "x y")


def test_builtin_containers():
    tree = {"b": [1, (2, None)], "a": Point(3, 4)}
    leaves, treedef = bt.tree.flatten(tree)
    assert leaves == [3, 4, 1, 2]  # dict keys sorted, None is no leaf
    assert bt.tree.unflatten(treedef, leaves) == tree
    assert bt.tree.leaves(tree) == leaves
    assert bt.tree.map(lambda v: v * 10, tree) == {
        "b": [10, (20, None)],
        "a": Point(30, 40),
    }
    assert bt.tree.map(lambda a, b: a + b, [1, 2], [10, 20]) == [11, 22]
    assert bt.tree.structure([1, 2]) == bt.tree.structure([3, 4])


def test_register_dataclass_with_meta_fields():
    @functools.partial(bt.tree.register_dataclass, meta_fields=("name",))
    @dataclasses.dataclass(frozen=True)
    class Field:
        u: object
        v: object
        name: str

    f = Field(u=1, v=[2, 3], name="f")
    leaves, treedef = bt.tree.flatten(f)
    assert leaves == [1, 2, 3]
    g = bt.tree.unflatten(treedef, [10, 20, 30])
    assert g == Field(u=10, v=[20, 30], name="f")
    assert bt.tree.structure(Field(1, [2, 3], "other")) != treedef
    out = bt.device_put(f)
    assert isinstance(out.u, bt.Array) and out.name == "f"


def test_register_dataclass_errors():
    with pytest.raises(TypeError):
        bt.tree.register_dataclass(int)

    @dataclasses.dataclass
    class C:
        a: int

    with pytest.raises(ValueError):
        bt.tree.register_dataclass(C, meta_fields=("nope",))


def test_paths_and_keystr():
    pairs, _ = bt.tree.flatten_with_path({"a": [1, {"b": 2}]})  # JAX's shape
    assert [bt.tree.keystr(p) for p, _ in pairs] == ["['a'][0]", "['a'][1]['b']"]
    assert [x for _, x in pairs] == [1, 2]
