"""bt.typing, bt.core, bt.dtypes and bt.flatten_util against jax.typing,
jax.core, jax.dtypes and jax.flatten_util: the names libraries written for
JAX (optax, chex) use, with the same values."""

import collections
from typing import Any

import ml_dtypes
import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import flatten_util as jfu  # noqa: E402

import baton as bt  # noqa: E402
import baton.numpy as bnp  # noqa: E402
from baton import core, dtypes, flatten_util  # noqa: E402
from baton import typing as bttyping  # noqa: E402

# ---- typing


def test_typing_names_and_members():
    import jax.typing as jtyping

    for name in ("ArrayLike", "DTypeLike"):
        assert hasattr(jtyping, name) and hasattr(bttyping, name), name
    for x in (bt.ones(2), np.ones(2), np.float32(1), np.bool_(True), 1, 1.0, True, 2j):
        assert isinstance(x, bttyping.ArrayLike), type(x)
    for x in ("a", [1.0], None):
        assert not isinstance(x, bttyping.ArrayLike)
        assert not isinstance(x, jtyping.ArrayLike)
    assert set(bttyping.DTypeLike.__args__[:3]) == {str, type[Any], np.dtype}
    assert len(bttyping.DTypeLike.__args__) == len(jtyping.DTypeLike.__args__)

    seen = []
    bt.jit(lambda x: seen.append(isinstance(x, bttyping.ArrayLike)) or x)(bt.ones(2))
    assert seen == [True]


# ---- core.Tracer


def test_core_tracer_is_the_class_of_traced_values():
    import jax.core

    def check(mod, tracer_cls):
        seen = []

        def f(x):
            seen.append(isinstance(x, tracer_cls))
            return x * 2

        x = np.ones(3, np.float32)
        mod.jit(f)(x)
        mod.grad(lambda v: f(v).sum())(x)
        mod.vmap(f)(x)
        mod.jvp(f, (x,), (x,))
        return seen

    assert check(bt, core.Tracer) == check(jax, jax.core.Tracer) == [True] * 4
    assert not isinstance(bt.ones(2), core.Tracer)
    assert not isinstance(jnp.ones(2), jax.core.Tracer)


# ---- dtypes

DTYPES = [
    "float64",
    "int64",
    "uint64",
    "complex128",
    "float32",
    "bfloat16",
    "float16",
    "int8",
    "uint8",
    "int16",
    "int32",
    "uint32",
    "bool",
    float,
    int,
    bool,
    complex,
    np.float64,
    np.int64,
    np.dtype("float16"),
]


@pytest.mark.parametrize("d", DTYPES, ids=str)
def test_canonicalize_dtype_as_jax(d):
    assert dtypes.canonicalize_dtype(d) == jax.dtypes.canonicalize_dtype(d)


def test_canonicalize_dtype_with_x64():
    bt.config.update("enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        for d in DTYPES:
            if d in ("uint64", "complex128", complex):
                continue
            assert dtypes.canonicalize_dtype(d) == jax.dtypes.canonicalize_dtype(d), d
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize(
    "a,b",
    [
        ("bfloat16", np.floating),
        ("bfloat16", np.inexact),
        ("bfloat16", np.integer),
        (np.float32, np.floating),
        (np.int8, np.signedinteger),
        (np.uint8, np.signedinteger),
        (np.int32, np.number),
        (np.bool_, np.integer),
        (np.float32, np.float32),
        (np.float32, np.float64),
        (np.complex64, np.complexfloating),
        (np.float32, "prng_key"),
        ("bfloat16", "extended"),
    ],
    ids=str,
)
def test_issubdtype_as_jax(a, b):
    def resolve(mod, x):
        return getattr(mod, x) if x in ("prng_key", "extended") else x

    assert dtypes.issubdtype(resolve(dtypes, a), resolve(dtypes, b)) == (
        jax.dtypes.issubdtype(resolve(jax.dtypes, a), resolve(jax.dtypes, b))
    )


def test_typed_keys_are_prng_keys():
    bkey = bt.random.key(0)
    jkey = jax.random.key(0)
    assert dtypes.issubdtype(bkey.dtype, dtypes.prng_key)
    assert jax.dtypes.issubdtype(jkey.dtype, jax.dtypes.prng_key)
    assert dtypes.issubdtype(bkey.dtype, dtypes.extended)
    assert not dtypes.issubdtype(bkey.dtype, np.floating)
    assert not dtypes.issubdtype(bt.random.PRNGKey(0).dtype, dtypes.prng_key)


@pytest.mark.parametrize(
    "args",
    [
        (1.0,),
        (1,),
        (True,),
        (np.int8, 2),
        (np.int8, 2.0),
        (np.float16, np.float32),
        ("bfloat16", np.float16),
        (np.int32, np.uint8),
        (float,),
        (np.ones(2, np.int8), 3),
        (np.ones(2, np.float64),),
        ("float64", 1),
    ],
    ids=str,
)
@pytest.mark.filterwarnings("ignore:Explicitly requested dtype")
def test_result_type_as_jax(args):
    assert dtypes.result_type(*args) == jax.dtypes.result_type(*args)
    got = dtypes.result_type(*args, return_weak_type_flag=True)
    want = jax.dtypes.result_type(*args, return_weak_type_flag=True)
    assert got == want


def test_result_type_of_arrays_and_weak_values():
    b = dtypes.result_type(bt.ones(2, bnp.int8), 2.0, return_weak_type_flag=True)
    j = jax.dtypes.result_type(jnp.ones(2, jnp.int8), 2.0, return_weak_type_flag=True)
    assert b == j


def test_dtype_constants_and_info():
    assert dtypes.bfloat16 is jax.dtypes.bfloat16 is ml_dtypes.bfloat16
    assert dtypes.float0 == jax.dtypes.float0
    for d in ("float32", "bfloat16", "float16"):
        assert dtypes.finfo(d).eps == jax.dtypes.finfo(d).eps
        assert dtypes.finfo(d).max == jax.dtypes.finfo(d).max
    for d in ("int8", "int32", "uint32"):
        assert dtypes.iinfo(d).max == jax.dtypes.iinfo(d).max
        assert dtypes.iinfo(d).min == jax.dtypes.iinfo(d).min
    for x in (1.0, 1, True, np.int8(3), np.float16(1), 1j):
        assert dtypes.scalar_type_of(x) is jax.dtypes.scalar_type_of(x)
    for d in ("float32", "bfloat16", "int8", "bool", "float64"):
        assert dtypes.itemsize_bits(d) == jax.dtypes.itemsize_bits(d)
    assert issubclass(dtypes.TypePromotionError, ValueError)
    assert issubclass(jax.dtypes.TypePromotionError, ValueError)


def test_dtypes_names_exist():
    for name in (
        "bfloat16",
        "canonicalize_dtype",
        "extended",
        "finfo",
        "float0",
        "iinfo",
        "issubdtype",
        "itemsize_bits",
        "prng_key",
        "result_type",
        "scalar_type_of",
        "TypePromotionError",
    ):
        assert hasattr(jax.dtypes, name) and hasattr(dtypes, name), name


# ---- flatten_util.ravel_pytree

RAVEL_TREES = [
    {"b": np.ones((2, 2), np.float64), "a": np.arange(3), "c": 1.0, "d": (True,)},
    [np.ones(3, np.float32), np.arange(4, dtype=np.int32).reshape(2, 2)],
    {"w": np.full((2,), 2, np.int8), "v": np.ones(2, np.int8)},
    [np.ones(2, ml_dtypes.bfloat16), np.ones(1, np.float16)],
    collections.OrderedDict([("z", np.ones(1, np.float32)), ("y", np.zeros(2))]),
    {},
    [],
    np.float32(4.5),
]


def _tree_of_numpy(t):
    return jax.tree.map(np.asarray, t)


@pytest.mark.parametrize("i", range(len(RAVEL_TREES)))
def test_ravel_pytree_as_jax(i):
    tree = RAVEL_TREES[i]
    bflat, bunravel = flatten_util.ravel_pytree(tree)
    jflat, junravel = jfu.ravel_pytree(tree)
    assert bflat.shape == jflat.shape
    assert np.dtype(bflat.dtype) == np.dtype(jflat.dtype)
    np.testing.assert_array_equal(np.asarray(bflat), np.asarray(jflat))

    back = bunravel(bflat)
    want = junravel(jflat)
    assert bt.tree.structure(back) == bt.tree.structure(want)
    for x, y in zip(bt.tree.leaves(back), jax.tree.leaves(want)):
        assert x.shape == y.shape
        assert np.dtype(x.dtype) == np.dtype(y.dtype)
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_unravel_checks_shape_and_dtype():
    flat, unravel = flatten_util.ravel_pytree({"a": np.ones(3, np.float32)})
    with pytest.raises(ValueError, match="3 elements"):
        unravel(flat[:2])
    # One leaf dtype: the pieces keep the vector's dtype (JAX does not cast).
    jflat, junravel = jfu.ravel_pytree({"a": np.ones(3, np.float32)})
    want = junravel(jflat.astype(jnp.int32))["a"]
    got = unravel(flat.astype(bnp.int32))["a"]
    assert np.dtype(got.dtype) == np.dtype(want.dtype) == np.int32
    # Mixed dtypes: the vector must have the promoted dtype.
    mixed = {"a": np.ones(3, np.float32), "b": np.ones(2, np.int32)}
    jflat, junravel = jfu.ravel_pytree(mixed)
    with pytest.raises(TypeError):
        junravel(jflat.astype(jnp.int32))
    flat, unravel = flatten_util.ravel_pytree(mixed)
    with pytest.raises(TypeError, match="dtype int32"):
        unravel(flat.astype(bnp.int32))


def test_ravel_pytree_under_grad_and_jit():
    params = {"w": np.ones(2, np.float32), "b": np.float32(2.0)}

    def loss(mod, fu):
        def f(p):
            flat, _ = fu.ravel_pytree(p)
            return (flat**2).sum()

        return f

    bg = bt.grad(loss(bt, flatten_util))(params)
    jg = jax.grad(loss(jax, jfu))(params)
    for x, y in zip(bt.tree.leaves(bg), jax.tree.leaves(jg)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y))

    def roundtrip(fu):
        def f(p):
            flat, unravel = fu.ravel_pytree(p)
            return unravel(flat * 3)

        return f

    b = bt.jit(roundtrip(flatten_util))(params)
    j = jax.jit(roundtrip(jfu))(params)
    assert list(b) == list(j)
    for x, y in zip(bt.tree.leaves(b), jax.tree.leaves(j)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y))
