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


# ---- dict order: JAX rebuilds dicts (and defaultdicts) in sorted key order,
# OrderedDicts in their own order; baton's results have the same key order.


def _key_order(x):
    """Every mapping's keys, in order, depth first: the printed shape of x."""
    if isinstance(x, dict):  # dict, defaultdict, OrderedDict
        return (type(x).__name__, [(k, _key_order(v)) for k, v in x.items()])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_key_order(v) for v in x])
    return "*"


def _ordered_trees():
    return [
        {"weights": np.ones(2, np.float32), "biases": np.zeros(2, np.float32)},
        {
            "z": {"w": np.ones(1, np.float32), "b": [np.ones(1, np.float32)]},
            "a": ({"y": np.ones(1, np.float32), "x": np.ones(1, np.float32)},),
        },
        collections.defaultdict(
            list, {"q": np.ones(1, np.float32), "p": np.ones(1, np.float32)}
        ),
        collections.OrderedDict(
            [("n", np.ones(1, np.float32)), ("m", {"d": 1.0, "c": 2.0})]
        ),
        {"outer": collections.OrderedDict([("b", {"y": 1.0, "x": 2.0}), ("a", 3.0)])},
    ]


@pytest.mark.parametrize("i", range(len(_ordered_trees())))
def test_dict_order_of_map_unflatten_as_jax(i):
    tree = _ordered_trees()[i]
    want = _key_order(jax.tree.map(lambda x: x, tree))
    assert _key_order(bt.tree.map(lambda x: x, tree)) == want
    assert _key_order(btu.tree_map(lambda x: x, tree)) == want
    assert _key_order(bt.tree.map(lambda x, y: x, tree, tree)) == want
    leaves, treedef = bt.tree.flatten(tree)
    assert _key_order(bt.tree.unflatten(treedef, leaves)) == want
    assert _key_order(btu.tree_unflatten(treedef, leaves)) == want
    assert _key_order(treedef.unflatten(leaves)) == want
    assert _key_order(bt.tree.structure(tree).unflatten(leaves)) == want
    assert _key_order(bt.tree.map_with_path(lambda p, x: x, tree)) == want
    j_leaves = jax.tree.leaves(tree)
    assert [np.asarray(a).tolist() for a in leaves] == [
        np.asarray(a).tolist() for a in j_leaves
    ]
    if isinstance(tree, collections.defaultdict):  # rebuilt with its factory
        assert bt.tree.map(lambda x: x, tree).default_factory is list


def test_dict_order_of_transpose_as_jax():
    outer = [0, 0]
    inner = {"y": 0, "x": 0}
    value = [{"y": 1, "x": 2}, {"x": 3, "y": 4}]
    got = bt.tree.transpose(bt.tree.structure(outer), bt.tree.structure(inner), value)
    want = jax.tree.transpose(
        jax.tree.structure(outer), jax.tree.structure(inner), value
    )
    assert _key_order(got) == _key_order(want)
    assert got == want


def _params():
    return {
        "weights": np.arange(6, dtype=np.float32).reshape(3, 2),
        "biases": np.ones(3, np.float32),
        "layer": {"w": np.ones(3, np.float32), "b": np.zeros(3, np.float32)},
    }


def _loss(mod):
    def f(p):
        return (
            mod.numpy.sum(p["weights"])
            + mod.numpy.sum(p["biases"] * p["layer"]["w"])
            + mod.numpy.sum(p["layer"]["b"])
        )

    return f


def _identity_tree(mod):
    def f(p):
        return {"z": p["weights"] * 2, "a": {"y": p["biases"], "x": p["biases"]}}

    return f


def test_dict_order_of_grad_jit_vmap_outputs_as_jax():
    import jax.numpy

    import baton.numpy  # noqa: F401

    p = _params()
    want = _key_order(jax.grad(_loss(jax))(p))
    assert want == _key_order(bt.grad(_loss(bt))(p))
    _, got_g = bt.value_and_grad(_loss(bt))(p)
    assert _key_order(got_g) == want

    want = _key_order(jax.jit(_identity_tree(jax))(p))
    fn = bt.jit(_identity_tree(bt))
    assert _key_order(fn(p)) == want
    assert _key_order(fn(p)) == want  # the cached (C++) call path too

    # Inside jit / vmap / grad the function sees its dict argument in sorted
    # key order, as in JAX (here: the order of the outputs).
    def in_order(d):
        return tuple(d[k] for k in d if k != "layer")

    want = [np.shape(x) for x in jax.jit(in_order)(p)]
    assert [np.shape(x) for x in bt.jit(in_order)(p)] == want
    assert [np.shape(x) for x in bt.vmap(in_order)(p)] == [
        np.shape(x) for x in jax.vmap(in_order)(p)
    ]

    want = _key_order(jax.vmap(_identity_tree(jax))(p))
    assert _key_order(bt.vmap(_identity_tree(bt))(p)) == want

    j = jax.jit(_identity_tree(jax))(p)
    b = bt.jit(_identity_tree(bt))(p)
    for x, y in zip(jax.tree.leaves(j), bt.tree.leaves(b)):
        np.testing.assert_allclose(np.asarray(y), np.asarray(x))
