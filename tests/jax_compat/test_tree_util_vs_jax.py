"""bt.tree / bt.tree_util against jax.tree / jax.tree_util: the same leaves,
key paths and keystr text, for the same trees."""

import collections
import dataclasses

import numpy as np
import pytest

jax = pytest.importorskip("jax")
from jax import tree_util as jtu  # noqa: E402

import baton as bt  # noqa: E402
from baton import tree_util as btu  # noqa: E402

Point = collections.namedtuple("Point", "x y")

TREES = [
    {"b": [1, (2, None)], "a": Point(3, 4)},
    [1, [2, [3, {"z": 4, "y": (5,)}]]],
    {0: "i", 2: "j", 1: "k"},
    collections.OrderedDict([("b", 1), ("a", 2)]),
    (),
    None,
    7,
    {"w": np.ones(2), "nested": {"c": [np.zeros(1)], "b": 3.0}},
]


def _describe_paths(mod, tree):
    pairs, _ = mod.tree_flatten_with_path(tree)
    return [
        (repr(p), mod.keystr(p), mod.keystr(p, simple=True, separator="/"))
        for p, _ in pairs
    ]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_paths_keystr_and_leaves(tree):
    assert _describe_paths(btu, tree) == _describe_paths(jtu, tree)
    b_leaves = btu.tree_leaves(tree)
    j_leaves = jtu.tree_leaves(tree)
    assert len(b_leaves) == len(j_leaves)
    for b, j in zip(b_leaves, j_leaves):
        assert b is j
    assert bt.tree.structure(tree).num_leaves == jax.tree.structure(tree).num_leaves


def test_key_classes_print_alike():
    for b, j in [
        (btu.DictKey("a"), jtu.DictKey("a")),
        (btu.DictKey(3), jtu.DictKey(3)),
        (btu.SequenceKey(2), jtu.SequenceKey(2)),
        (btu.GetAttrKey("w"), jtu.GetAttrKey("w")),
        (btu.FlattenedIndexKey(1), jtu.FlattenedIndexKey(1)),
    ]:
        assert (repr(b), str(b)) == (repr(j), str(j))


def test_custom_nodes_and_partial():
    def make(mod):
        class Box:
            def __init__(self, a, b):
                self.a, self.b = a, b

        mod.register_pytree_node(
            Box, lambda x: ((x.a, x.b), None), lambda _, c: Box(*c)
        )

        @dataclasses.dataclass
        class Layer:
            w: object
            b: object
            name: str = "l"

        mod.register_dataclass(Layer, data_fields=["w", "b"], meta_fields=["name"])

        def f(x, y, z=0):
            return x + y + z

        return [Box(1, {"k": 2}), Layer(3, [4]), mod.Partial(f, 5, z=6)]

    assert _describe_paths(btu, make(btu)) == _describe_paths(jtu, make(jtu))


def test_map_with_path_reduce_transpose_all():
    tree = {"b": [1, 2], "a": (3,)}
    f = lambda p, x: f"{jtu.keystr(p)}={x}"  # noqa: E731
    g = lambda p, x: f"{btu.keystr(p)}={x}"  # noqa: E731
    assert bt.tree.map_with_path(g, tree) == jax.tree.map_with_path(f, tree)
    add = lambda a, b: a + b  # noqa: E731
    assert bt.tree.reduce(add, tree) == jax.tree.reduce(add, tree)
    assert bt.tree.reduce(add, tree, 100) == jax.tree.reduce(add, tree, 100)
    for t in ([1, 0], [], [[True]]):
        assert bt.tree.all(t) == jax.tree.all(t)
    nested = [(1, 2), (3, 4), (5, 6)]
    b = bt.tree.transpose(bt.tree.structure([0] * 3), bt.tree.structure((0, 0)), nested)
    j = jax.tree.transpose(
        jax.tree.structure([0] * 3), jax.tree.structure((0, 0)), nested
    )
    assert b == j
    with pytest.raises(TypeError):
        jax.tree.transpose(
            jax.tree.structure([0] * 3),
            jax.tree.structure((0, 0)),
            [(1, 2), (3,), (5, 6)],
        )
    with pytest.raises(TypeError):
        bt.tree.transpose(
            bt.tree.structure([0] * 3),
            bt.tree.structure((0, 0)),
            [(1, 2), (3,), (5, 6)],
        )


def test_jax_tree_names_exist():
    for name in (
        "map",
        "leaves",
        "structure",
        "flatten",
        "unflatten",
        "flatten_with_path",
        "leaves_with_path",
        "map_with_path",
        "reduce",
        "transpose",
        "all",
    ):
        assert hasattr(jax.tree, name) and callable(getattr(bt.tree, name)), name
    for name in (
        "tree_map",
        "tree_leaves",
        "tree_structure",
        "tree_flatten",
        "tree_unflatten",
        "tree_flatten_with_path",
        "tree_map_with_path",
        "tree_leaves_with_path",
        "tree_reduce",
        "tree_transpose",
        "tree_all",
        "register_pytree_node",
        "register_pytree_node_class",
        "register_pytree_with_keys",
        "register_dataclass",
        "keystr",
        "Partial",
        "DictKey",
        "SequenceKey",
        "GetAttrKey",
        "FlattenedIndexKey",
        "treedef_is_leaf",
        "treedef_children",
        "all_leaves",
    ):
        assert hasattr(jtu, name) and hasattr(btu, name), name
