"""Strategies and checks shared by the property-based tests (test_property_*.py).

- Host data: numpy arrays of every dtype baton supports, in every layout a
  user hands over (C and F order, transposed, negative strides, strided,
  broadcast with zero strides, misaligned), 0-d and 0-size included.
- ``examples(n)``: a test's example count in the "ci" profile, scaled up
  in the "long" one (the profiles are registered in conftest.py).
- ``returns_memory``: every property runs under it; an example must leave
  ``bytes_in_use`` of every device and memory kind where it found it, and
  no user array alive, with the garbage collector off (baton releases by
  reference counting alone, DESIGN R1).

Only numpy data is generated (never baton Arrays), so nothing a strategy
makes holds device memory while an example runs.
"""

from __future__ import annotations

import functools
import gc
import os

import ml_dtypes
import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import baton as bt

from _util import ALL_DTYPES as _ALL

KINDS = ("device", "pinned_host", "unpinned_host")

ALL_DTYPES = tuple(np.dtype(d) for d in _ALL)
F32, I32, BOOL = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_)

# Every layout `host_arrays` can produce.
LAYOUTS = ("C", "F", "transposed", "negative", "strided", "broadcast", "misaligned")

_LONG = os.environ.get("BATON_HYPOTHESIS_PROFILE", "ci") == "long"


def examples(n: int):
    """settings(max_examples=...): n in the ci profile, 25 n in "long"."""
    return settings(max_examples=n * 25 if _LONG else n)


# ---- memory ----


def usage() -> dict:
    """bytes_in_use of every device and memory kind."""
    return {
        (d.id, k): bt.memory_stats(d, k)["bytes_in_use"]
        for d in bt.devices()
        for k in KINDS
    }


def _live_ids() -> set:
    return {a._id for a in bt.live_arrays()}


def returns_memory(fn):
    """Runs one example with gc off; afterwards no array it made may be
    alive and, once the compiled programs (and the constants they hold)
    are dropped, bytes_in_use of every device and kind is back at its
    baseline. The example must wait for what it computes (np.asarray,
    block_until_ready): dropped storage is released when the last handle
    is gone *and* its work is done. Both measurements follow
    bt.effects_barrier(): on an accelerator work the example did not wait
    for may still be queued when it returns (a jitted call whose output is
    its input, a copy's staging), and storage it uses returns when it ends.

    Leaks are looked for twice: live_arrays() before clearing the caches
    (a cache holding a user's array would be a leak), bytes after."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            bt.clear_caches()
            bt.effects_barrier()
            live_before, before = _live_ids(), usage()
            fn(*args, **kwargs)  # its locals die when it returns
            leaked = [a for a in bt.live_arrays() if a._id not in live_before]
            assert not leaked, f"arrays still alive after the example: {leaked}"
            del leaked
            bt.clear_caches()
            bt.effects_barrier()
            after = usage()
        finally:
            if gc_was_enabled:
                gc.enable()
        diff = {k: after[k] - before[k] for k in before if after[k] != before[k]}
        assert not diff, f"bytes_in_use not back at baseline (delta per kind): {diff}"

    return wrapper


def footprint(nbytes: int, kind: str = "device") -> int:
    """What an nbytes buffer adds to bytes_in_use (the allocator may round up)."""
    before = usage()[(0, kind)]
    x = bt.empty((nbytes,), np.uint8, memory_kind=kind)
    grown = usage()[(0, kind)] - before
    del x
    return grown


# ---- shapes and values ----


def shapes(min_dims=0, max_dims=4, min_side=0, max_side=5):
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def _uint_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"u{dtype.itemsize}")


def raw_values(dtype: np.dtype, shape) -> st.SearchStrategy:
    """C-contiguous arrays with every bit pattern of dtype: floats come from
    random bits (NaNs with payloads, signalling NaNs, infinities, -0.0,
    subnormals); bools are 0 or 1."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return hnp.arrays(BOOL, shape)
    if dtype.kind in "iu":
        return hnp.arrays(dtype, shape)
    return hnp.arrays(_uint_of(dtype), shape).map(lambda a: a.view(dtype))


def math_values(dtype: np.dtype, shape, lo=-100.0, hi=100.0) -> st.SearchStrategy:
    """Arrays for math against numpy: floats in [lo, hi] plus 0, -0, inf,
    -inf and nan; ints over their whole range; bools."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return hnp.arrays(BOOL, shape)
    if dtype.kind in "iu":
        return hnp.arrays(dtype, shape)
    width = 8 * dtype.itemsize if dtype.kind == "f" else 32  # bfloat16: via f32
    finite = st.floats(lo, hi, width=width)
    special = st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan])
    elements = st.one_of(finite, finite, finite, special)
    if dtype == ml_dtypes.bfloat16:
        return hnp.arrays(F32, shape, elements=elements).map(lambda a: a.astype(dtype))
    return hnp.arrays(dtype, shape, elements=elements)


@st.composite
def laid_out(draw, values, shape, layouts=LAYOUTS):
    """A numpy array of `shape` whose values come from `values(shape)` and
    whose memory layout is one of `layouts` (the array may be a read-only
    view: "broadcast" has zero strides)."""
    shape = tuple(shape)
    nd = len(shape)
    layout = draw(st.sampled_from(layouts))
    if layout == "C" or (nd == 0 and layout != "misaligned"):
        return draw(values(shape))
    if layout == "F":
        return np.asfortranarray(draw(values(shape)))
    if layout == "transposed":
        perm = tuple(draw(st.permutations(range(nd))))
        inverse = np.argsort(perm)
        base = draw(values(tuple(shape[int(i)] for i in inverse)))
        return base.transpose(perm)
    if layout == "negative":
        flip = draw(st.sets(st.integers(0, nd - 1), min_size=1))
        base = draw(values(shape))
        return base[tuple(slice(None, None, -1 if i in flip else 1) for i in range(nd))]
    if layout == "strided":
        steps = draw(st.lists(st.integers(1, 3), min_size=nd, max_size=nd))
        base_shape = tuple(k * (s - 1) + 1 if s else 0 for s, k in zip(shape, steps))
        base = draw(values(base_shape))
        return base[tuple(slice(None, None, k) for k in steps)]
    if layout == "broadcast":
        ones = draw(st.lists(st.booleans(), min_size=nd, max_size=nd))
        lead = draw(st.integers(0, nd))  # leading dims the base lacks
        base_shape = tuple(1 if o else s for s, o in zip(shape, ones))[lead:]
        return np.broadcast_to(draw(values(base_shape)), shape)
    # "misaligned": the data starts one byte past an aligned address.
    src = draw(values(shape))
    buf = np.empty(src.nbytes + 1, np.uint8)
    out = buf[1:].view(src.dtype).reshape(shape)
    out[...] = src
    return out


def host_arrays(dtypes=ALL_DTYPES, shape=None, values=raw_values, layouts=LAYOUTS):
    """(array) strategies over dtypes x shapes x layouts."""
    shape_st = shapes() if shape is None else st.just(tuple(shape))

    @st.composite
    def strategy(draw):
        d = draw(st.sampled_from(tuple(np.dtype(t) for t in dtypes)))
        s = draw(shape_st)
        return draw(laid_out(lambda sh: values(d, sh), s, layouts))

    return strategy()


def bits(a: np.ndarray) -> np.ndarray:
    """a's bytes as unsigned integers (bitwise comparison, NaN payloads)."""
    a = np.asarray(a, order="C")  # (np.ascontiguousarray makes 0-d arrays 1-d)
    if a.dtype == BOOL:
        return a.view(np.uint8)
    return a.view(_uint_of(a.dtype))


def assert_bitwise_equal(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(bits(got), bits(want))


def assert_values_equal(got, want, rtol=0.0, atol=0.0) -> None:
    """Same shape and dtype; values equal (NaN matches NaN, a -0.0/0.0
    difference is not looked at) or within tolerance."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype.kind == "f" or got.dtype == ml_dtypes.bfloat16:
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


# ---- shape programs (test_property_shapes.py, test_property_jit.py) ----

MAX_SIZE = 1024  # elements: shape ops that would grow past this are not drawn


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0] if n else [0, 1, 2, 3]


def _axis(nd, draw, extra=0):
    return draw(st.integers(-(nd + extra), nd + extra - 1))


@st.composite
def shape_ops(draw, shape):
    """One shape operation valid for an array of `shape`, as a tuple
    (apply it with `apply_shape_op`)."""
    nd, size = len(shape), int(np.prod(shape))
    names = ["reshape", "transpose", "expand_dims", "broadcast_to", "ravel", "stack"]
    if nd:
        names += [
            "swapaxes",
            "moveaxis",
            "flip",
            "concatenate",
            "split",
            "take",
            "index",
        ]
    if 1 in shape:
        names.append("squeeze")
    name = draw(st.sampled_from(names))
    if name == "reshape":
        dims, rest = [], size
        for _ in range(draw(st.integers(0, 3))):
            d = draw(st.sampled_from(_divisors(rest)))
            dims.append(d)
            rest = rest // d if d else rest
        dims.append(rest if size else draw(st.integers(0, 3)))
        if size == 0 and 0 not in dims:
            dims[draw(st.integers(0, len(dims) - 1))] = 0
        dims = list(draw(st.permutations(dims)))
        if size and draw(st.booleans()):
            dims[draw(st.integers(0, len(dims) - 1))] = -1
        return ("reshape", tuple(dims))
    if name == "transpose":
        return (
            "transpose",
            draw(st.one_of(st.none(), st.permutations(range(nd)).map(tuple))),
        )
    if name == "swapaxes":
        return ("swapaxes", _axis(nd, draw), _axis(nd, draw))
    if name == "moveaxis":
        return ("moveaxis", _axis(nd, draw), _axis(nd, draw))
    if name == "expand_dims":
        return ("expand_dims", _axis(nd + 1, draw))
    if name == "squeeze":
        ones = [i for i, d in enumerate(shape) if d == 1]
        return ("squeeze", draw(st.one_of(st.none(), st.sampled_from(ones))))
    if name == "flip":
        return ("flip", draw(st.one_of(st.none(), st.integers(-nd, nd - 1))))
    if name == "broadcast_to":
        lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
        new = lead + tuple(draw(st.integers(0, 3)) if d == 1 else d for d in shape)
        if int(np.prod(new)) > MAX_SIZE:
            new = shape
        return ("broadcast_to", new)
    if name == "ravel":
        return ("ravel",)
    if name == "stack":
        if 2 * size > MAX_SIZE:
            return ("ravel",)
        return ("stack", _axis(nd + 1, draw))
    if name == "concatenate":
        axis = _axis(nd, draw)
        other = list(shape)
        other[axis] = draw(st.integers(0, 3))
        if size + int(np.prod(other)) > MAX_SIZE:
            return ("ravel",)
        return ("concatenate", axis, tuple(other))
    if name == "split":
        axis = _axis(nd, draw)
        n = shape[axis]
        cuts = sorted(draw(st.lists(st.integers(-n - 1, n + 1), max_size=3)))
        pieces = len(cuts) + 1
        return ("split", tuple(cuts), axis, draw(st.integers(0, pieces - 1)))
    if name == "take":
        axis = _axis(nd, draw)
        n = shape[axis]
        idx = draw(st.lists(st.integers(-n, n - 1), max_size=4)) if n else []
        return ("take", tuple(idx), axis)
    key = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    return ("index", key)


def other_operand(shape, dtype):
    """The second operand of "concatenate": fixed values of shape / dtype."""
    return (np.arange(int(np.prod(shape))) % 7 - 3).astype(dtype).reshape(shape)


def apply_shape_op(np_like, x, op):
    """op (from shape_ops) applied with np_like = numpy or baton.numpy."""
    name, args = op[0], op[1:]
    if name == "reshape":
        return np_like.reshape(x, args[0])
    if name == "transpose":
        return np_like.transpose(x, args[0])
    if name in ("swapaxes", "moveaxis"):
        return getattr(np_like, name)(x, *args)
    if name in ("expand_dims", "squeeze", "flip"):
        return getattr(np_like, name)(x, args[0])
    if name == "broadcast_to":
        return np_like.broadcast_to(x, args[0])
    if name == "ravel":
        return np_like.ravel(x)
    if name == "stack":
        return np_like.stack([x, x], axis=args[0])
    if name == "concatenate":
        return np_like.concatenate([x, other_operand(args[1], x.dtype)], axis=args[0])
    if name == "split":
        return np_like.split(x, list(args[0]), axis=args[1])[args[2]]
    if name == "take":
        return np_like.take(x, np.asarray(args[0], np.int64), axis=args[1])
    return x[args[0]]


def result_shape(shape, op):
    """The shape op gives (numpy's rule), from a dummy array."""
    return apply_shape_op(np, np.zeros(shape, np.int8), op).shape


@st.composite
def shape_programs(draw, shape, max_ops=6):
    """A list of shape ops, each valid for the shape the previous ones give."""
    ops = []
    for _ in range(draw(st.integers(1, max_ops))):
        op = draw(shape_ops(shape))
        shape = result_shape(shape, op)
        ops.append(op)
    return ops
