"""Property-based tests: a refused call on sharded arrays consumes nothing,
on no shard of any device (DESIGN R2, R4, 5.6). The single-device
counterpart is tests/python/test_property_refusals.py.

jit: three arguments, each a pytree of arrays with one random sharding
(1-d or 2-d mesh, split or replicated) and one global shape, donated by
``donate_argnums``, ``donate_argnames`` or ``bt.donate``, some passed by
keyword; one refusal injected at a random argument, leaf and shard: a host
view on one shard of a donated array, the same array donated twice,
donated and also passed undonated, a deleted array, an unusable donation in
``"error"`` mode. (An argument with another sharding is no refusal: the
call is partitioned over the mesh and donation works there too --
tests/sharding/test_partitioning.py.)

``device_put(v, into=x)`` with ``x`` sharded: a host view on one shard,
a value with another sharding, shape or dtype, a single-device value,
``x`` deleted.

After the refused call: the exception class, every array and every shard
live with its values, ``bytes_in_use`` of every device and memory kind
unchanged; then, the reason removed, the same call succeeds.
"""

import functools
import gc
import os
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import baton as bt
from baton.sharding import NamedSharding, P

KINDS = ("device", "pinned_host", "unpinned_host")
DTYPES = tuple(
    np.dtype(d)
    for d in (np.float32, np.int32, np.int8, np.uint8, np.float16, ml_dtypes.bfloat16)
)
UNUSABLE = np.dtype(np.int16)  # no output has it: an unusable donation
NAMES = ("a0", "a1", "a2")
HOW = (None, "argnums", "argnames", "callsite")
JIT_REFUSALS = (
    "view",
    "twice",
    "donated_and_undonated",
    "deleted",
    "error_mode",
)
INTO_REFUSALS = ("view", "sharding", "shape", "dtype", "single_device", "deleted")
INTO_ERRORS = {
    "view": bt.DonationError,
    "sharding": ValueError,
    "shape": ValueError,
    "dtype": ValueError,
    "single_device": TypeError,
    "deleted": bt.DeletedArrayError,
}
# (mesh shape, axis names) -> the specs drawn for it; every global shape
# drawn is (4 a, 4 b), which each of them divides.
MESHES = {
    ((4,), ("x",)): (P("x"), P(), P(None, "x")),
    ((2, 2), ("x", "y")): (P("x", "y"), P("x"), P(None, "y"), P(("x", "y"))),
}


def examples(n):
    """The settings of tests/python's "ci" profile (conftest.py there);
    25 n examples with BATON_HYPOTHESIS_PROFILE=long."""
    long = os.environ.get("BATON_HYPOTHESIS_PROFILE", "ci") == "long"
    return settings(
        max_examples=25 * n if long else n,
        deadline=None,
        derandomize=not long,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def usage():
    return {
        (d.id, k): bt.memory_stats(d, k)["bytes_in_use"]
        for d in bt.devices()
        for k in KINDS
    }


def returns_memory(fn):
    """No array the example made is alive afterwards and bytes_in_use of
    every device and kind is back at its baseline (gc off: R1)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            bt.clear_caches()
            live = {a._id for a in bt.live_arrays()}
            before = usage()
            fn(*args, **kwargs)
            bt.effects_barrier()
            leaked = [a for a in bt.live_arrays() if a._id not in live]
            assert not leaked, f"arrays still alive after the example: {leaked}"
            del leaked
            bt.clear_caches()
            after = usage()
        finally:
            bt.config.update("donation", "warn")
            if gc_was_enabled:
                gc.enable()
        assert after == before

    return wrapper


def values(dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return hnp.arrays(dtype, shape)
    finite = st.floats(-100, 100, width=16 if dtype.itemsize == 2 else 32)
    special = st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan])
    elems = st.one_of(finite, finite, special)
    return hnp.arrays(np.float32, shape, elements=elems).map(lambda a: a.astype(dtype))


@st.composite
def layouts(draw):
    """(mesh shape, axis names, spec, other spec, global shape)."""
    mesh_key = draw(st.sampled_from(sorted(MESHES)))
    specs = MESHES[mesh_key]
    spec = draw(st.sampled_from(specs))
    other = draw(st.sampled_from([s for s in specs if s != spec]))
    shape = (4 * draw(st.integers(1, 2)), 4 * draw(st.integers(1, 2)))
    return mesh_key, spec, other, shape


def sharding_of(mesh_key, spec):
    return NamedSharding(bt.make_mesh(*mesh_key), spec)


def body(a0, a1, a2):
    leaves = bt.tree.leaves((a0, a1, a2))
    return [a + a for a in leaves if a.dtype != UNUSABLE]


def doubled(arrays):
    with np.errstate(over="ignore", invalid="ignore"):
        return [v + v for v in arrays if v.dtype != UNUSABLE]


def build(struct, leaves):
    if struct == "leaf" and len(leaves) == 1:
        return leaves[0]
    if struct == "dict":
        return {f"k{i}": leaf for i, leaf in enumerate(leaves)}
    return tuple(leaves) if struct == "tuple" else list(leaves)


def unique(arrays):
    seen, out = set(), []
    for a in arrays:
        if id(a) not in seen:
            seen.add(id(a))
            out.append(a)
    return out


def assert_untouched(arrays, copies):
    for a, c in zip(arrays, copies):
        assert not a.is_deleted(), a
        assert not any(s.data.is_deleted() for s in a.addressable_shards), a
        np.testing.assert_array_equal(np.asarray(a).view(np.uint8), c.view(np.uint8))


def copies_of(arrays):
    return [np.array(np.asarray(a)) for a in arrays]


@st.composite
def jit_cases(draw):
    layout = draw(layouts())
    shape = layout[3]
    how = [draw(st.sampled_from(HOW), label=f"how {n}") for n in NAMES]
    if not any(how):
        how[draw(st.integers(0, 2))] = draw(st.sampled_from(HOW[1:]))
    leaf = st.sampled_from(DTYPES).flatmap(lambda d: values(d, shape))
    slots = [draw(st.lists(leaf, min_size=1, max_size=2)) for _ in NAMES]
    structs = [draw(st.sampled_from(("leaf", "list", "tuple", "dict"))) for _ in NAMES]
    donated = [k for k in range(3) if how[k]]
    undonated = [k for k in range(3) if not how[k]]
    refusal = draw(
        st.sampled_from(
            [r for r in JIT_REFUSALS if r != "donated_and_undonated" or undonated]
        ),
        label="refusal",
    )
    if refusal == "deleted":
        arg = draw(st.integers(0, 2), label="arg")
    else:
        arg = draw(st.sampled_from(donated), label="arg")
    slot = draw(st.integers(0, len(slots[arg]) - 1), label="slot")
    shard = draw(st.integers(0, 3), label="shard")
    if refusal in ("twice", "donated_and_undonated"):
        other = draw(st.sampled_from(donated if refusal == "twice" else undonated))
        at = draw(st.integers(0, len(slots[other])))
        if other == arg and at <= slot:
            slot += 1
        slots[other].insert(at, ("alias", arg, slot))
    elif refusal == "error_mode":
        slot = draw(st.integers(0, len(slots[arg])))
        slots[arg].insert(slot, draw(values(UNUSABLE, shape)))
    n_pos = draw(st.integers(0, 3), label="positional")
    return layout, how, slots, structs, n_pos, refusal, arg, slot, shard


def expected_error(how, refusal, arg, slots):
    if refusal in ("view", "error_mode"):
        return bt.DonationError
    if refusal == "deleted":
        return bt.DeletedArrayError
    holders = [k for k in range(3) for s in slots[k] if isinstance(s, tuple)]
    callsite = [k for k in (arg, *holders) if how[k] == "callsite"]
    if callsite and len(callsite) < 1 + len(holders):
        return bt.DeletedArrayError  # a use of an array bt.donate consumed
    return bt.DonationError


@examples(40)
@given(case=jit_cases())
@returns_memory
def test_a_refused_sharded_jit_call_consumes_no_shard(case):
    layout, how, slots, structs, n_pos, refusal, arg, slot, shard = case
    mesh_key, spec, other_spec, _ = layout
    sharding = sharding_of(mesh_key, spec)
    f = bt.jit(
        body,
        donate_argnums=[k for k in range(3) if how[k] == "argnums"],
        donate_argnames=[NAMES[k] for k in range(3) if how[k] == "argnames"],
    )
    leaves = [[None] * len(s) for s in slots]
    for k, ss in enumerate(slots):
        for i, s in enumerate(ss):
            if isinstance(s, np.ndarray):
                leaves[k][i] = bt.device_put(s, sharding)
    for k, ss in enumerate(slots):
        for i, s in enumerate(ss):
            if isinstance(s, tuple):
                leaves[k][i] = leaves[s[1]][s[2]]
    target = leaves[arg][slot]

    def call():
        trees = [build(structs[k], leaves[k]) for k in range(3)]
        callsite = [k for k in range(3) if how[k] == "callsite"]
        if callsite:
            marked = bt.donate(tuple(trees[k] for k in callsite))
            for k, m in zip(callsite, marked):
                trees[k] = m
        return f(*trees[:n_pos], **{NAMES[k]: trees[k] for k in range(n_pos, 3)})

    views = (
        [np.asarray(target.addressable_shards[shard].data)] if refusal == "view" else []
    )
    if refusal == "deleted":
        target.delete()
    arrays = [a for a in unique([a for ls in leaves for a in ls]) if not a.is_deleted()]
    copies = copies_of(arrays)
    if refusal == "error_mode":
        bt.config.update("donation", "error")
    bt.effects_barrier()
    before = usage()
    try:
        with pytest.raises(expected_error(how, refusal, arg, slots)):
            call()
    finally:
        bt.config.update("donation", "warn")
    bt.effects_barrier()
    assert usage() == before
    assert_untouched(arrays, copies)

    # The reason removed, the same call succeeds on every shard.
    del views
    for k, ss in enumerate(slots):
        for i, s in enumerate(ss):
            if isinstance(s, tuple):
                leaves[k][i] = bt.device_put(np.asarray(target), sharding)
    if refusal == "deleted":
        leaves[arg][slot] = bt.device_put(slots[arg][slot], sharding)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DonationWarning)
        outs = bt.block_until_ready(call())
    for k in range(3):
        for a in leaves[k]:
            assert a.is_deleted() == bool(how[k]), (k, how[k], a)
            assert all(
                s.data.is_deleted() == bool(how[k]) for s in a.addressable_shards
            )
    want = doubled(
        [
            s if isinstance(s, np.ndarray) else slots[s[1]][s[2]]
            for ss in slots
            for s in ss
        ]
    )
    assert len(outs) == len(want)
    for o, w in zip(outs, want):
        assert o.sharding == sharding
        np.testing.assert_array_equal(
            np.asarray(o).astype(np.float64), w.astype(np.float64)
        )


@st.composite
def into_cases(draw):
    layout = draw(layouts())
    shape = layout[3]
    dtype = draw(st.sampled_from(DTYPES))
    old = draw(values(dtype, shape))
    new = draw(values(dtype, shape))
    refusal = draw(st.sampled_from(INTO_REFUSALS), label="refusal")
    source = draw(st.sampled_from(("numpy", "sharded")), label="source")
    shard = draw(st.integers(0, 3), label="shard")
    bad = new
    if refusal == "shape":
        bad = draw(st.sampled_from([new[:-1], new[None], new.reshape(-1)]))
    elif refusal == "dtype":
        other = draw(st.sampled_from([d for d in DTYPES if d != dtype]))
        with np.errstate(invalid="ignore", over="ignore"):
            bad = new.astype(other)
    return layout, old, new, bad, refusal, source, shard


@examples(40)
@given(case=into_cases())
@returns_memory
def test_a_refused_sharded_device_put_into_consumes_no_shard(case):
    (mesh_key, spec, other_spec, _), old, new, bad, refusal, source, shard = case
    sharding = sharding_of(mesh_key, spec)
    into = bt.device_put(old, sharding)
    if refusal == "single_device":
        src = bt.device_put(new)
    elif refusal == "sharding":
        src = bt.device_put(new, sharding_of(mesh_key, other_spec))
    elif source == "sharded" and refusal in ("view", "deleted"):
        src = bt.device_put(new, sharding)
    else:
        assume(source == "numpy" or refusal in ("shape", "dtype"))
        src = bad
    views = (
        [np.asarray(into.addressable_shards[shard].data)] if refusal == "view" else []
    )
    if refusal == "deleted":
        into.delete()
    arrays = [a for a in (into, src) if not isinstance(a, np.ndarray)]
    arrays = [a for a in arrays if not a.is_deleted()]
    copies = copies_of(arrays)
    bt.effects_barrier()
    before = usage()
    with pytest.raises(INTO_ERRORS[refusal]):
        bt.device_put(src, into=into)
    bt.effects_barrier()
    assert usage() == before
    assert_untouched(arrays, copies)

    del views
    if refusal == "deleted":
        into = bt.device_put(old, sharding)
    src = bt.device_put(new, sharding) if source == "sharded" else new
    out = bt.device_put(src, into=into).block_until_ready()
    del src
    assert into.is_deleted()
    assert all(s.data.is_deleted() for s in into.addressable_shards)
    assert out.sharding == sharding
    np.testing.assert_array_equal(np.asarray(out).view(np.uint8), new.view(np.uint8))
