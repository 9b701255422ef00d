"""Property-based tests: a refused call consumes nothing (DESIGN R2, R4 and
section 3), on one device. tests/sharding/test_property_refusals_sharded.py
has the sharded counterpart.

Each example builds three pytree arguments of arrays (random structure,
shapes, dtypes and memory kinds), donates some of them -- by
``donate_argnums``, by ``donate_argnames`` or at the call site with
``bt.donate`` -- passes some by keyword, and injects one reason for a
refusal at a random argument and leaf:

- jit: a live host view on a donated leaf (``bt.donate`` of a viewed array
  included), the same array donated twice, an array donated and also passed
  undonated, a deleted array, an unusable donation in ``"error"`` mode;
- ``device_put(v, into=x)``: a shape, dtype or memory-kind mismatch, a live
  host view on ``into``, ``into`` deleted.

After the refused call: the expected exception class, every array involved
live (``is_deleted()`` False) with its values, and ``bytes_in_use`` of every
device and memory kind unchanged. Then the reason is removed (views dropped,
an alias replaced by a copy, the deleted array by a fresh one, the mode set
back to "warn") and the same call must succeed and consume what it donates.
"""

import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import baton as bt

import _property_strategies as P
from _property_strategies import assert_values_equal, examples, returns_memory

DTYPES = tuple(
    np.dtype(d)
    for d in (np.float32, np.int32, np.int8, np.uint8, np.float16, ml_dtypes.bfloat16)
)
# The function below returns no output of this dtype, so a donated leaf of
# it is an unusable donation ("error" mode refuses it).
UNUSABLE = np.dtype(np.int16)
NAMES = ("a0", "a1", "a2")
HOW = (None, "argnums", "argnames", "callsite")
JIT_REFUSALS = ("view", "twice", "donated_and_undonated", "deleted", "error_mode")
INTO_REFUSALS = ("shape", "dtype", "kind", "view", "deleted")
# np.asarray is a zero-copy view only of memory the host can address: on an
# accelerator it copies device memory out, so there a "view" refusal views an
# array in pinned_host memory instead (host-addressable on every platform).
HOST_VIEWS_DEVICE_MEMORY = bt.devices()[0]._host_addressable("device")


def viewable_kind(kind):
    """The memory kind to give an array that a "view" refusal views."""
    if kind in (None, "device") and not HOST_VIEWS_DEVICE_MEMORY:
        return "pinned_host"
    return kind


def body(a0, a1, a2):
    leaves = bt.tree.leaves((a0, a1, a2))
    return [a + a for a in leaves if a.dtype != UNUSABLE]


def doubled(values):
    with np.errstate(over="ignore", invalid="ignore"):
        return [v + v for v in values if v.dtype != UNUSABLE]


def leaf_values(dtype=None):
    dtype_st = st.just(dtype) if dtype is not None else st.sampled_from(DTYPES)
    return st.tuples(dtype_st, P.shapes(max_dims=3, max_side=4)).flatmap(
        lambda ds: P.math_values(ds[0], ds[1])
    )


def build(struct, leaves):
    """An argument of `struct` holding `leaves` (a leaf alone if just one)."""
    if struct == "leaf" and len(leaves) == 1:
        return leaves[0]
    if struct == "tuple":
        return tuple(leaves)
    if struct == "dict":
        return {f"k{i}": leaf for i, leaf in enumerate(leaves)}
    return list(leaves)


@st.composite
def jit_cases(draw):
    """Three arguments (as lists of leaf slots), how each is donated, how
    many are passed by position, and one refusal. A slot is a numpy array
    (a fresh device array of its values) or ("alias", arg, slot): the very
    array of another slot."""
    how = [draw(st.sampled_from(HOW), label=f"how {n}") for n in NAMES]
    if not any(how):
        how[draw(st.integers(0, 2))] = draw(st.sampled_from(HOW[1:]))
    slots = [draw(st.lists(leaf_values(), min_size=1, max_size=3)) for _ in NAMES]
    structs = [draw(st.sampled_from(("leaf", "list", "tuple", "dict"))) for _ in NAMES]
    donated = [k for k in range(3) if how[k]]
    undonated = [k for k in range(3) if not how[k]]
    refusals = [r for r in JIT_REFUSALS if r != "donated_and_undonated" or undonated]
    refusal = draw(st.sampled_from(refusals), label="refusal")
    if refusal == "deleted":
        arg = draw(st.integers(0, 2), label="arg")
    else:
        arg = draw(st.sampled_from(donated), label="arg")
    slot = draw(st.integers(0, len(slots[arg]) - 1), label="slot")
    if refusal == "twice":  # (arg, slot) again in a donated argument
        other = draw(st.sampled_from(donated))
        at = draw(st.integers(0, len(slots[other])))
        if other == arg and at <= slot:
            slot += 1
        slots[other].insert(at, ("alias", arg, slot))
    elif refusal == "donated_and_undonated":
        other = draw(st.sampled_from(undonated))
        at = draw(st.integers(0, len(slots[other])))
        slots[other].insert(at, ("alias", arg, slot))
    elif refusal == "error_mode":
        shape = draw(P.shapes(min_dims=1, max_dims=2, min_side=1, max_side=4))
        unusable = draw(P.math_values(UNUSABLE, shape))
        slot = draw(st.integers(0, len(slots[arg])))
        slots[arg].insert(slot, unusable)
    n_pos = draw(st.integers(0, 3), label="positional")
    return how, slots, structs, n_pos, refusal, arg, slot


def _is_alias_of(s, arg):
    """Whether slot `s` is an alias of a slot of argument `arg`."""
    return isinstance(s, tuple) and s[1] == arg


def unique(arrays):
    """`arrays` without repeats (an alias is the same Array object)."""
    seen, out = set(), []
    for a in arrays:
        if id(a) not in seen:
            seen.add(id(a))
            out.append(a)
    return out


def snapshot(arrays):
    """numpy copies of the arrays' values, to compare after the call."""
    return [np.array(bt.device_get(a)) for a in arrays]


def assert_untouched(arrays, values):
    """Every array is live and holds the values it had before the call."""
    for a, v in zip(arrays, values):
        assert not a.is_deleted(), a
        assert_values_equal(bt.device_get(a), v)


def expected_error(how, refusal, arg, slots):
    """The class the contract gives the refusal (DESIGN R4, section 3)."""
    if refusal in ("view", "error_mode"):
        return bt.DonationError
    if refusal == "deleted":
        # Undonated or bt.donate(deleted): a use of a consumed array; in a
        # donated position also a DonationError (DeletedArrayDonationError).
        return (
            bt.DonationError
            if how[arg] in ("argnums", "argnames")
            else (bt.DeletedArrayError)
        )
    # An alias: with bt.donate(x) the other occurrence is a use of a consumed
    # array (DeletedArrayError) -- unless both are in bt.donate's pytree,
    # which refuses the duplicate (DonationError).
    holders = [k for k in range(3) for s in slots[k] if _is_alias_of(s, arg)]
    callsite = [k for k in (arg, *holders) if how[k] == "callsite"]
    if callsite and len(callsite) < 1 + len(holders):
        return bt.DeletedArrayError
    return bt.DonationError


@given(case=jit_cases())
@returns_memory
def test_a_refused_jit_call_consumes_nothing(case):
    how, slots, structs, n_pos, refusal, arg, slot = case
    f = bt.jit(
        body,
        donate_argnums=[k for k in range(3) if how[k] == "argnums"],
        donate_argnames=[NAMES[k] for k in range(3) if how[k] == "argnames"],
    )
    leaves = [[None] * len(s) for s in slots]
    for k, ss in enumerate(slots):  # fresh arrays first, then their aliases
        for i, s in enumerate(ss):
            if isinstance(s, np.ndarray):
                viewed = refusal == "view" and (k, i) == (arg, slot)
                kind = viewable_kind(None) if viewed else None
                leaves[k][i] = bt.device_put(s, memory_kind=kind)
    for k, ss in enumerate(slots):
        for i, s in enumerate(ss):
            if isinstance(s, tuple):
                leaves[k][i] = leaves[s[1]][s[2]]
    target = leaves[arg][slot]
    arrays = unique([a for ls in leaves for a in ls])
    values = snapshot(arrays)

    def call():
        trees = [build(structs[k], leaves[k]) for k in range(3)]
        callsite = [k for k in range(3) if how[k] == "callsite"]
        if callsite:  # one bt.donate: all or nothing
            marked = bt.donate(tuple(trees[k] for k in callsite))
            for k, m in zip(callsite, marked):
                trees[k] = m
        return f(*trees[:n_pos], **{NAMES[k]: trees[k] for k in range(n_pos, 3)})

    views = [np.asarray(target)] if refusal == "view" else []
    if refusal == "deleted":
        target.delete()
        arrays = [a for a in arrays if a is not target]
        values = snapshot(arrays)
    if refusal == "error_mode":
        bt.config.update("donation", "error")
    bt.effects_barrier()
    before = P.usage()
    try:
        with pytest.raises(expected_error(how, refusal, arg, slots)):
            call()
    finally:
        bt.config.update("donation", "warn")
    bt.effects_barrier()
    assert P.usage() == before
    assert_untouched(arrays, values)

    # The reason removed, the same call succeeds.
    del views
    for k, ss in enumerate(slots):  # an alias becomes a copy
        for i, s in enumerate(ss):
            if isinstance(s, tuple):
                leaves[k][i] = target.copy()
    if refusal == "deleted":
        leaves[arg][slot] = bt.device_put(slots[arg][slot])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bt.DonationWarning)
        outs = bt.block_until_ready(call())
    warned = [w for w in caught if issubclass(w.category, bt.DonationWarning)]
    del caught
    if refusal == "error_mode":
        assert warned, "an unusable donation in warn mode warns"
    del warned
    for k in range(3):
        for a in leaves[k]:
            assert a.is_deleted() == bool(how[k]), (k, how[k], a)
    want = doubled(
        [
            s if isinstance(s, np.ndarray) else slots[s[1]][s[2]]
            for ss in slots
            for s in ss
        ]
    )
    assert len(outs) == len(want)
    for o, w in zip(outs, want):
        assert_values_equal(bt.device_get(o), w)


@st.composite
def into_cases(draw):
    olds = draw(st.lists(leaf_values(), min_size=1, max_size=3), label="into")
    kinds = [draw(st.sampled_from(P.KINDS)) for _ in olds]
    news = [draw(P.math_values(o.dtype, o.shape)) for o in olds]
    struct = draw(st.sampled_from(("leaf", "list", "tuple", "dict")))
    source = draw(st.sampled_from(("numpy", "array")), label="source")
    refusal = draw(st.sampled_from(INTO_REFUSALS), label="refusal")
    at = draw(st.integers(0, len(olds) - 1), label="leaf")
    bad = news[at]
    if refusal == "shape":
        how = draw(st.sampled_from(["stack", "newaxis"] + ["ravel"] * (bad.ndim != 1)))
        bad = {"stack": lambda: np.stack([bad, bad]), "newaxis": lambda: bad[None]}.get(
            how, lambda: bad.reshape(-1)
        )()
    elif refusal == "dtype":
        other = draw(st.sampled_from([d for d in DTYPES if d != bad.dtype]))
        with np.errstate(invalid="ignore", over="ignore"):
            bad = bad.astype(other)
    kind = None
    if refusal == "kind":
        kind = draw(st.sampled_from([k for k in P.KINDS if k != kinds[at]]))
    return olds, kinds, news, struct, source, refusal, at, bad, kind


INTO_ERRORS = {
    "shape": ValueError,
    "dtype": ValueError,
    "kind": ValueError,
    "view": bt.DonationError,
    "deleted": bt.DeletedArrayError,
}


@examples(60)
@given(case=into_cases())
@returns_memory
def test_a_refused_device_put_into_consumes_nothing(case):
    olds, kinds, news, struct, source, refusal, at, bad, kind = case
    if refusal == "view":
        kinds = list(kinds)
        kinds[at] = viewable_kind(kinds[at])
    into = [bt.device_put(o, memory_kind=k) for o, k in zip(olds, kinds)]
    srcs = list(news)
    srcs[at] = bad
    if source == "array":
        srcs = [bt.device_put(s) for s in srcs]
    target = into[at]
    views = [np.asarray(target)] if refusal == "view" else []
    if refusal == "deleted":
        target.delete()
    arrays = [a for a in into if not a.is_deleted()]
    if source == "array":
        arrays += srcs
    values = snapshot(arrays)
    bt.effects_barrier()
    before = P.usage()
    with pytest.raises(INTO_ERRORS[refusal]):
        bt.device_put(build(struct, srcs), memory_kind=kind, into=build(struct, into))
    bt.effects_barrier()
    assert P.usage() == before
    assert_untouched(arrays, values)

    # The reason removed, the same call succeeds in place.
    del views
    srcs[at] = bt.device_put(news[at]) if source == "array" else news[at]
    if refusal == "deleted":
        into[at] = bt.device_put(olds[at], memory_kind=kinds[at])
    out = bt.device_put(build(struct, srcs), into=build(struct, into))
    out = bt.block_until_ready(bt.tree.leaves(out))
    assert all(a.is_deleted() for a in into)
    for o, n, k in zip(out, news, kinds):
        assert o.memory_kind == k
        assert_values_equal(bt.device_get(o), n)


def test_a_bad_argument_before_a_call_site_marker_gives_it_back():
    # Found by the property above: parsing stopped at the deleted x, and the
    # marker of y, after it, kept y's storage (freed when dropped).
    f = bt.jit(lambda a, b: (a + a, b + b))
    x = bt.device_put(np.zeros(3, np.float32))
    y = bt.device_put(np.ones(3, np.float32))
    x.delete()
    with pytest.raises(bt.DeletedArrayError):
        f(x, bt.donate(y))  # refused: y must be given back
    assert not y.is_deleted()
    np.testing.assert_array_equal(np.asarray(y), np.ones(3, np.float32))
