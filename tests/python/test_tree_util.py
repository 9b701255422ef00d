"""bt.tree's JAX names and bt.tree_util: key paths, registration, Partial."""

import collections
import dataclasses
import functools

import numpy as np
import pytest

import baton as bt
from baton import tree_util as tu

Point = collections.namedtuple("Point", "x y")


def test_flatten_with_path_has_jax_shape_and_keys():
    tree = {"b": [1, (2, Point(3, 4))], "a": None}
    pairs, treedef = bt.tree.flatten_with_path(tree)
    assert [x for _, x in pairs] == [1, 2, 3, 4]
    assert pairs[0][0] == (tu.DictKey("b"), tu.SequenceKey(0))
    assert pairs[3][0] == (
        tu.DictKey("b"),
        tu.SequenceKey(1),
        tu.SequenceKey(1),
        tu.GetAttrKey("y"),
    )
    assert [tu.keystr(p) for p, _ in pairs] == [
        "['b'][0]",
        "['b'][1][0]",
        "['b'][1][1].x",
        "['b'][1][1].y",
    ]
    assert bt.tree.unflatten(treedef, [10, 20, 30, 40]) == {
        "b": [10, (20, Point(30, 40))],
        "a": None,
    }
    assert bt.tree.leaves_with_path([1]) == [((tu.SequenceKey(0),), 1)]


def test_key_reprs_and_keystr_options():
    keys = (
        tu.DictKey("a"),
        tu.SequenceKey(0),
        tu.GetAttrKey("x"),
        tu.FlattenedIndexKey(2),
    )
    assert [repr(k) for k in keys] == [
        "DictKey(key='a')",
        "SequenceKey(idx=0)",
        "GetAttrKey(name='x')",
        "FlattenedIndexKey(key=2)",
    ]
    assert tu.keystr(keys) == "['a'][0].x[<flat index 2>]"
    assert tu.keystr(keys, simple=True, separator="/") == "a/0/x/2"
    assert tu.DictKey("a") == tu.DictKey("a") and hash(tu.DictKey(1)) == hash(
        tu.DictKey(1)
    )
    with pytest.raises(TypeError, match="key path"):
        tu.keystr("a")


def test_dict_keys_sorted():
    assert bt.tree.leaves({"b": 1, "a": 2, "c": 0}) == [2, 1, 0]
    pairs, _ = bt.tree.flatten_with_path({1: "x", 0: "y"})
    assert pairs == [((tu.DictKey(0),), "y"), ((tu.DictKey(1),), "x")]


def test_map_with_path_reduce_all():
    out = bt.tree.map_with_path(
        lambda p, x, y: (tu.keystr(p), x + y), {"a": [1, 2]}, {"a": [10, 20]}
    )
    assert out == {"a": [("['a'][0]", 11), ("['a'][1]", 22)]}
    assert bt.tree.reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert bt.tree.reduce(lambda a, b: a + b, [1, 2], 10) == 13
    with pytest.raises(TypeError):
        bt.tree.reduce(lambda a, b: a + b, [])
    assert bt.tree.all([True, (1, 2)]) and not bt.tree.all([1, 0]) and bt.tree.all([])


def test_transpose():
    outer, inner = bt.tree.structure([0, 0, 0]), bt.tree.structure((0, 0))
    t = [(1, 2), (3, 4), (5, 6)]
    assert bt.tree.transpose(outer, inner, t) == ([1, 3, 5], [2, 4, 6])
    assert bt.tree.transpose(outer, None, t) == ([1, 3, 5], [2, 4, 6])
    with pytest.raises(TypeError, match="transpose"):
        bt.tree.transpose(outer, inner, [(1, 2), (3,), (5, 6)])


def test_tree_util_aliases():
    assert tu.tree_map is bt.tree.map and tu.tree_leaves is bt.tree.leaves
    assert tu.tree_structure([1]) == bt.tree.structure([2])
    leaves, treedef = tu.tree_flatten({"a": 1})
    assert tu.tree_unflatten(treedef, leaves) == {"a": 1}
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert len(tu.treedef_children(tu.tree_structure([1, 2]))) == 2
    assert tu.treedef_tuple([tu.tree_structure(1)] * 2) == tu.tree_structure((1, 2))
    assert tu.all_leaves([1, 2]) and not tu.all_leaves([[1]])


def test_register_pytree_node_gives_flat_index_keys():
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tu.register_pytree_node(Box, lambda x: ((x.a, x.b), "aux"), lambda aux, c: Box(*c))
    pairs, treedef = bt.tree.flatten_with_path([Box(1, 2)])
    assert [tu.keystr(p) for p, _ in pairs] == [
        "[0][<flat index 0>]",
        "[0][<flat index 1>]",
    ]
    (back,) = bt.tree.unflatten(treedef, [5, 6])
    assert (back.a, back.b) == (5, 6)
    out = bt.jit(lambda b: Box(b.a * 2, b.b))(Box(np.float32(1), np.float32(2)))
    assert float(out.a) == 2.0


def test_register_pytree_node_class_and_with_keys():
    @tu.register_pytree_node_class
    class Pair:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten(self):
            return (self.x, self.y), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    assert bt.tree.leaves(Pair(1, [2])) == [1, 2]

    class Named:
        def __init__(self, w):
            self.w = w

    tu.register_pytree_with_keys(
        Named, lambda n: (((tu.GetAttrKey("w"), n.w),), None), lambda aux, c: Named(*c)
    )
    pairs, _ = bt.tree.flatten_with_path(Named(3))
    assert pairs == [((tu.GetAttrKey("w"),), 3)]

    with pytest.raises(TypeError, match="tree_flatten"):
        tu.register_pytree_node_class(type("NoMethods", (), {}))


def test_register_dataclass_jax_signature_and_static_metadata():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Layer:
        w: object
        name: str = dataclasses.field(default="l", metadata=dict(static=True))

    pairs, treedef = bt.tree.flatten_with_path(Layer(1, "n"))
    assert pairs == [((tu.GetAttrKey("w"),), 1)]
    assert bt.tree.structure(Layer(1, "other")) != treedef

    @dataclasses.dataclass
    class Two:
        a: object
        b: object

    tu.register_dataclass(Two, ["a"], ["b"])  # positional, as in JAX
    assert bt.tree.leaves(Two(1, 2)) == [1]


def test_partial_is_a_pytree():
    def f(a, b, c=1):
        return a + b + c

    p = tu.Partial(f, np.float32(1), c=np.float32(3))
    assert isinstance(p, functools.partial) and p(2) == 6
    pairs, _ = bt.tree.flatten_with_path(p)
    assert [tu.keystr(k) for k, _ in pairs] == [
        "[<flat index 0>][0]",
        "[<flat index 1>]['c']",
    ]
    out = bt.jit(lambda q, x: q(x))(p, np.float32(2))
    assert float(out) == 6.0
    doubled = bt.tree.map(lambda v: v * 2, p)
    assert isinstance(doubled, tu.Partial) and float(doubled(0)) == 8.0
