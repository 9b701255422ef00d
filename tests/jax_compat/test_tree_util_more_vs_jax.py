"""bt.tree_util's flatten_one_level(_with_keys), is_tree_node,
register_static, tree_broadcast, tree_reduce_associative and
default_registry against jax.tree_util: the same children, keys, node data,
results and errors for the same trees."""

import collections
import dataclasses

import numpy as np
import pytest

jax = pytest.importorskip("jax")
from jax import tree_util as jtu  # noqa: E402

import baton as bt  # noqa: E402
import baton.numpy as bnp  # noqa: E402
from baton import tree_util as btu  # noqa: E402

Point = collections.namedtuple("Point", "x y")

NODES = [
    {"b": [1, 2], "a": {"c": 3}},
    [1, (2, 3)],
    (1, 2),
    (),
    [],
    {},
    None,
    [None, 1],
    {"a": None},
    Point(1, (2, 3)),
    collections.OrderedDict([("b", 1), ("a", 2)]),
    collections.defaultdict(int, {"b": 1, "a": 2}),
]


@pytest.mark.parametrize("node", NODES, ids=range(len(NODES)))
def test_flatten_one_level(node):
    assert btu.flatten_one_level(node) == jtu.flatten_one_level(node)
    b_children, b_meta = btu.flatten_one_level(node)
    assert type(b_children) is type(jtu.flatten_one_level(node)[0])
    if isinstance(node, Point):  # JAX 0.10.2 names both fields .x here
        b_pairs, b_meta = btu.flatten_one_level_with_keys(node)
        j_pairs, j_meta = jtu.flatten_one_level_with_keys(node)
        assert [c for _, c in b_pairs] == [c for _, c in j_pairs]
        assert [repr(k) for k, _ in b_pairs] == [
            "GetAttrKey(name='x')",
            "GetAttrKey(name='y')",
        ]
        assert b_meta == j_meta
        return
    b = btu.flatten_one_level_with_keys(node)
    j = jtu.flatten_one_level_with_keys(node)
    assert repr(b) == repr(j)
    assert type(b[0]) is type(j[0])
    assert btu.default_registry.flatten_one_level(
        node
    ) == jtu.default_registry.flatten_one_level(node)


def test_flatten_one_level_registered_and_leaves():
    p = btu.Partial(max, np.float32(1.0))
    j = jtu.Partial(max, np.float32(1.0))
    (b_children, b_meta), (j_children, j_meta) = (
        btu.flatten_one_level(p),
        jtu.flatten_one_level(j),
    )
    assert list(b_children) == list(j_children) and b_meta is j_meta is max
    b_keys = [repr(k) for k, _ in btu.flatten_one_level_with_keys(p)[0]]
    j_keys = [repr(k) for k, _ in jtu.flatten_one_level_with_keys(j)[0]]
    assert b_keys == j_keys
    for leaf in (1, 2.5, "s", np.ones(2), bnp.ones(2)):
        with pytest.raises(ValueError, match="can't tree-flatten type"):
            btu.flatten_one_level(leaf)
        with pytest.raises(ValueError, match="can't tree-flatten type"):
            btu.flatten_one_level_with_keys(leaf)
        assert btu.default_registry.flatten_one_level(leaf) is None
        assert btu.default_registry.flatten_one_level_with_keys(leaf) is None
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        jtu.flatten_one_level(1)


def test_is_tree_node():
    types_ = [
        dict,
        list,
        tuple,
        type(None),
        Point,
        int,
        float,
        str,
        collections.OrderedDict,
        collections.defaultdict,
        np.ndarray,
    ]
    assert [btu.is_tree_node(t) for t in types_] == [
        jtu.is_tree_node(t) for t in types_
    ]
    assert btu.is_tree_node(btu.Partial) and jtu.is_tree_node(jtu.Partial)
    assert btu.default_registry.is_node(dict) and not btu.default_registry.is_node(int)


class _Box:
    def __init__(self, v, tag):
        self.v, self.tag = v, tag


def test_default_registry_register_node_and_flatten():
    class BBox(_Box):
        pass

    class JBox(_Box):
        pass

    for reg, cls in ((btu.default_registry, BBox), (jtu.default_registry, JBox)):
        reg.register_node(
            cls, lambda b: ((b.v,), b.tag), lambda tag, ch, cls=cls: cls(ch[0], tag)
        )
    bt_ = btu.default_registry.flatten({"k": BBox([1, 2], "t")})
    jx_ = jtu.default_registry.flatten({"k": JBox([1, 2], "t")})
    assert bt_[0] == jx_[0] == [1, 2]
    assert bt_[1].num_leaves == jx_[1].num_leaves
    back = btu.tree_unflatten(bt_[1], [7, 8])["k"]
    assert isinstance(back, BBox) and back.v == [7, 8] and back.tag == "t"
    assert btu.is_tree_node(BBox) and jtu.is_tree_node(JBox)
    assert (
        btu.flatten_one_level(BBox(3, "u"))[1]
        == jtu.flatten_one_level(JBox(3, "u"))[1]
        == "u"
    )


def test_default_registry_dataclass_node():
    @dataclasses.dataclass
    class BD:
        x: object
        name: str

    @dataclasses.dataclass
    class JD:
        x: object
        name: str

    btu.default_registry.register_dataclass_node(BD, ["x"], ["name"])
    jtu.default_registry.register_dataclass_node(JD, ["x"], ["name"])
    assert (
        btu.tree_leaves(BD([1, 2], "n")) == jtu.tree_leaves(JD([1, 2], "n")) == [1, 2]
    )
    assert btu.tree_map(lambda v: v * 2, BD(3, "n")) == BD(6, "n")


def test_register_static_under_jit():
    @btu.register_static
    class BStr(str):
        pass

    @jtu.register_static
    class JStr(str):
        pass

    assert btu.tree_leaves([BStr("a"), 1]) == [1]
    assert jtu.tree_leaves([JStr("a"), 1]) == [1]
    assert btu.is_tree_node(BStr) and jtu.is_tree_node(JStr)
    traces = []

    @bt.jit
    def f(x, y, s):
        traces.append(s)
        return x + y if s == "add" else x - y

    jf = jax.jit(lambda x, y, s: x + y if s == "add" else x - y)
    x, y = np.float32(5.0), np.float32(2.0)
    for s in ("add", "sub", "add"):
        got, want = f(x, y, BStr(s)), jf(x, y, JStr(s))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    assert traces == ["add", "sub"]  # a new static value retraces, an old one does not
    with pytest.raises(TypeError, match="class"):
        btu.register_static(BStr("x"))


BROADCASTS = [
    ((1, {"a": 2}), ((3, 4), {"a": [5, 6]})),
    (1, {"x": [1, 2], "y": None}),
    ({"b": 1, "a": 2}, {"a": (1, 2), "b": None}),
    ([1, None], [[1, 2], None]),
    (None, None),
    (Point(1, 2), Point((0, 0), [0])),
]


@pytest.mark.parametrize("prefix,full", BROADCASTS, ids=range(len(BROADCASTS)))
def test_tree_broadcast(prefix, full):
    assert btu.tree_broadcast(prefix, full) == jtu.tree_broadcast(prefix, full)
    assert bt.tree.broadcast(prefix, full) == jax.tree.broadcast(prefix, full)


def test_tree_broadcast_is_leaf_and_errors():
    prefix, full = [(1, 2), 3], [[5, 6], [7]]
    leaf = lambda x: isinstance(x, tuple)  # noqa: E731
    assert btu.tree_broadcast(prefix, full, is_leaf=leaf) == jtu.tree_broadcast(
        prefix, full, is_leaf=leaf
    )
    for prefix, full in [((1, 2), (3,)), ({"a": 1}, {"b": 2}), ([1, 2], 3)]:
        with pytest.raises(ValueError):
            jtu.tree_broadcast(prefix, full)
        with pytest.raises(ValueError, match="prefix"):
            btu.tree_broadcast(prefix, full)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_tree_reduce_associative_order(n):
    tree = {"a": list(range(n))}
    pair = lambda a, b: (a, b)  # noqa: E731  shows the grouping
    assert btu.tree_reduce_associative(pair, tree) == jtu.tree_reduce_associative(
        pair, tree
    )
    assert bt.tree.reduce_associative(pair, tree) == jax.tree.reduce_associative(
        pair, tree
    )


def test_tree_reduce_associative_arrays_identity_and_errors():
    xs = [np.arange(3, dtype=np.float32) * i for i in range(4)]
    got = btu.tree_reduce_associative(bnp.add, xs)
    want = jtu.tree_reduce_associative(jax.numpy.add, xs)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    assert btu.tree_reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    assert jtu.tree_reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    leaf = lambda x: isinstance(x, tuple)  # noqa: E731
    t = [(1, 2), [(3,)]]
    assert btu.tree_reduce_associative(lambda a, b: a + b, t, is_leaf=leaf) == (
        jtu.tree_reduce_associative(lambda a, b: a + b, t, is_leaf=leaf)
    )
    with pytest.raises(TypeError):
        jtu.tree_reduce_associative(lambda a, b: a + b, [])
    with pytest.raises(TypeError, match="identity"):
        btu.tree_reduce_associative(lambda a, b: a + b, [])


def test_tree_static_field():
    def make(tree_mod, register):
        @register
        @dataclasses.dataclass
        class Op:
            x: object
            y: object
            op: str = tree_mod.static(default="add")
            tag: str = tree_mod.static(default="t", metadata={"doc": "d"})

        return Op

    BOp, JOp = (
        make(bt.tree, btu.register_dataclass),
        make(jax.tree, jtu.register_dataclass),
    )
    b, j = BOp(1, 2), JOp(1, 2)
    assert bt.tree.leaves(b) == jax.tree.leaves(j) == [1, 2]
    assert [f.metadata["static"] for f in dataclasses.fields(BOp)[2:]] == [True, True]
    assert dataclasses.fields(BOp)[3].metadata["doc"] == "d"
    assert bt.tree.map(lambda v: v * 3, BOp(1, 2, "sub")) == BOp(3, 6, "sub")
    assert bt.tree.structure(BOp(1, 2, "a")) != bt.tree.structure(BOp(1, 2, "b"))
