"""x.at[idx].set/add/multiply/min/max(v): numpy's semantics for static
indices, JAX's for traced ones (out-of-range updates dropped), repeated
indices accumulating; in place inside jit when the operand is donated
(seed 001)."""

import dataclasses
from typing import Any

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton import _ops

from _util import in_use, seeded_rng

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64

A = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)

KEYS = [
    0,
    -1,
    (1, 2),
    (slice(None), 2),
    (Ellipsis, 1),
    (None, 1),
    (1, None, slice(1, 3)),
    slice(None),
    slice(1, None),
    slice(None, None, -1),
    (slice(None), slice(None, None, -2)),
    (slice(3, 0, -2), 1),
    (slice(1, 2), slice(None, None, 3), -2),
    (slice(None), slice(None), slice(4, None, -3)),
    slice(10, 20),
    ([0, 2],),
    [2, 0, 2, -1],
    (slice(None), [1, 1, 3]),
    ([0, 2], [1, 3]),
    ([0, 0, 2], [1, 1, 3]),
    (0, slice(None), [1, 2]),
    ([0, 1], None, [0, 1]),
    (slice(None), [0, 1], None, [0, 1]),
    (np.array([[0], [2]]), slice(1, 3), np.array([0, 4])),
    ([2, -3], slice(None, None, -1), [[0], [1]]),
    (np.array([True, False, True]),),
    (1, np.array([True, False, True, True])),
    (Ellipsis, [-1, 0, -1]),
]

MODES = {
    "set": None,
    "add": np.add,
    "multiply": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
}


def _expected(key, mode, v):
    want = A.copy()
    if mode == "set":
        want[key] = v
    else:
        MODES[mode].at(want, key, v)  # unbuffered: repeated indices accumulate
    return want


def _key_id(k):
    return repr(k).replace(" ", "")[:40]


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("key", KEYS, ids=_key_id)
def test_static_updates_match_numpy(key, mode):
    rng = seeded_rng(_key_id(key), mode)
    shape = A[key].shape
    # Distinct values for repeated indices under set would make numpy's
    # "last wins" and baton's "one of them wins" differ: use equal ones there.
    v = rng.integers(-5, 6, size=shape).astype(np.float32)
    if mode == "set" and _has_repeats(key):
        v = np.full(shape, 9.0, np.float32)
    want = _expected(key, mode, v)
    x = bt.device_put(A)
    got = getattr(x.at[key], mode)(v)
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(x), A)  # x itself is unchanged
    traced = bt.jit(lambda x, v: getattr(x.at[key], mode)(v))(x, v)
    np.testing.assert_array_equal(np.asarray(traced), want)


def _has_repeats(key):
    return any(
        isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype != bool
        for k in (key if isinstance(key, tuple) else (key,))
    )


def test_set_with_repeated_indices_one_wins():
    x = bt.device_put(np.zeros(4, np.float32))
    got = np.asarray(
        x.at[np.array([1, 1, 1])].set(np.array([5.0, 6.0, 7.0], np.float32))
    )
    assert got[1] in (5.0, 6.0, 7.0)
    assert got[0] == got[2] == got[3] == 0


@pytest.mark.parametrize("mode", ["add", "multiply", "min", "max"])
def test_repeated_indices_accumulate(mode):
    a = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    idx = np.array([0, 2, 0, 0, 2])
    v = np.array([2.0, 3.0, -1.0, 5.0, 0.5], np.float32)
    want = a.copy()
    MODES[mode].at(want, idx, v)
    x = bt.device_put(a)
    np.testing.assert_array_equal(np.asarray(getattr(x.at[idx], mode)(v)), want)
    # Traced indices accumulate the same way.
    f = bt.jit(lambda x, i, v: getattr(x.at[i], mode)(v))
    np.testing.assert_array_equal(np.asarray(f(x, idx, v)), want)


@pytest.mark.parametrize(
    "dtype",
    [
        np.bool_,
        np.int8,
        np.uint8,
        np.int16,
        np.int32,
        np.int64,
        np.uint32,
        np.float16,
        bnp.bfloat16,
        np.float32,
        np.float64,
    ],
)
def test_updates_every_dtype(dtype):
    a = (np.arange(12) % 5).reshape(3, 4).astype(dtype)
    x = bt.device_put(a)
    for key, v in [
        ((1, 2), 3),
        ((slice(None), [0, 0, 3]), 1),
        ((slice(None, None, 2), -1), 2),
    ]:
        vv = np.asarray(v).astype(dtype)
        for mode in ("set", "add", "max"):
            want = a.copy()
            if mode == "set":
                want[key] = vv
            else:
                MODES[mode].at(want, key, vv)
            got = getattr(x.at[key], mode)(v)
            assert got.dtype == a.dtype
            np.testing.assert_array_equal(np.asarray(got), want)


def test_value_converted_to_the_arrays_dtype():
    x = bt.device_put(np.zeros(3, np.int32))
    got = x.at[1].set(2.7)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), [0, 2, 0])
    b = bt.device_put(np.zeros(3, bnp.bfloat16))
    assert b.at[0].add(np.float64(1.5)).dtype == bnp.bfloat16


def test_scalar_and_broadcast_values():
    x = bt.device_put(A)
    want = A.copy()
    want[:, 1] = np.arange(5)
    np.testing.assert_array_equal(
        np.asarray(x.at[:, 1].set(np.arange(5, dtype=np.float32))), want
    )
    want = A.copy()
    want[1:] += 1
    np.testing.assert_array_equal(np.asarray(x.at[1:].add(1)), want)


def test_value_that_does_not_broadcast_is_refused():
    x = bt.device_put(A)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        x.at[0].set(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        x.at[:, 0].add(np.ones((3, 5, 1), np.float32))
    np.testing.assert_array_equal(np.asarray(x), A)


def test_static_out_of_range_is_an_index_error_and_changes_nothing():
    x = bt.device_put(A)
    with pytest.raises(IndexError, match="out of bounds"):
        x.at[3].set(0)
    with pytest.raises(IndexError, match="out of bounds"):
        x.at[:, [0, 4]].add(1)
    with pytest.raises(IndexError, match="out of bounds"):
        bt.jit(lambda x: x.at[0, 0, -6].set(0))(x)
    np.testing.assert_array_equal(np.asarray(x), A)


# ---- traced indices: out-of-range updates are dropped ----


@pytest.mark.parametrize("i", [3, -1, -10, 10, 11, -11, 1000])
@pytest.mark.parametrize("mode", list(MODES))
def test_traced_scalar_update_wraps_negatives_and_drops_out_of_range(i, mode):
    a = np.arange(10, dtype=np.float32) + 1
    want = a.copy()
    if -10 <= i < 10:
        if mode == "set":
            want[i] = 7
        else:
            MODES[mode].at(want, i, 7)
    f = bt.jit(lambda x, i: getattr(x.at[i], mode)(7.0))
    np.testing.assert_array_equal(np.asarray(f(bt.device_put(a), np.int32(i))), want)


def test_traced_index_arrays_drop_out_of_range_entries():
    b = np.zeros((3, 4), np.float32)
    i = np.array([0, 5, -1, 0, -4])
    j = np.array([3, 1, 9, 3, 0])
    got = bt.jit(lambda y, i, j: y.at[i, j].add(1.0))(bt.device_put(b), i, j)
    want = b.copy()
    want[0, 3] = 2  # (5, 1), (-1, 9) and (-4, 0) are out of range: dropped
    np.testing.assert_array_equal(np.asarray(got), want)


def test_traced_scalar_row_update_out_of_range_is_dropped():
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    f = bt.jit(lambda y, i: y.at[i, 1:3].set(0.0))
    np.testing.assert_array_equal(np.asarray(f(bt.device_put(b), np.int32(7))), b)
    want = b.copy()
    want[2, 1:3] = 0
    np.testing.assert_array_equal(np.asarray(f(bt.device_put(b), np.int32(-1))), want)


def test_update_loop_compiles_once():
    a = np.zeros((13, 3), np.float32)  # a fresh shape
    x = bt.device_put(a)
    n = _ops.eager_cache_size()
    for i in range(13):
        x = x.at[i].set(float(i))
        x = x.at[i, 1].add(1)
    assert _ops.eager_cache_size() == n + 2
    want = np.repeat(np.arange(13, dtype=np.float32)[:, None], 3, axis=1)
    want[:, 1] += 1
    np.testing.assert_array_equal(np.asarray(x), want)


# ---- in place inside jit (R3) ----

N = 1 << 18  # 1 MiB of float32


def _analysis(fn, *args, **kw):
    return bt.jit(fn, **kw).lower(*args).compile().memory_analysis()


@pytest.mark.parametrize(
    "update",
    [
        lambda x, i, v: x.at[5].set(v),
        lambda x, i, v: x.at[i].set(v),
        lambda x, i, v: x.at[i].add(v),
        lambda x, i, v: x.at[:].add(v),
        lambda x, i, v: x.at[10:1000].set(v),
        lambda x, i, v: x.at[10:1000].multiply(v),
        lambda x, i, v: x.at[np.array([1, 2, 2])].add(v),
    ],
)
def test_donated_update_is_in_place(update):
    x = bt.zeros((N,), np.float32)
    m = _analysis(update, x, np.int32(3), np.float32(2), donate_argnums=0)
    assert m.alias_size_in_bytes == 4 * N
    assert m.temp_size_in_bytes < 4 * N // 4


def test_strided_update_is_one_in_place_scatter():
    x = bt.zeros((N,), np.float32)
    m = _analysis(lambda x, v: x.at[1::2].add(v), x, np.float32(2), donate_argnums=0)
    assert m.alias_size_in_bytes == 4 * N
    # Temporaries: the scatter's indices and values (half the array each).
    assert m.temp_size_in_bytes <= 4 * N + (64 << 10)


def test_update_of_2d_rows_and_columns_in_place():
    y = bt.zeros((512, 128), np.float32)
    for fn in (
        lambda y, i: y.at[i].set(1.0),
        lambda y, i: y.at[3].add(1.0),
        lambda y, i: y.at[:, 3].add(1.0),
        lambda y, i: y.at[i, 7].max(1.0),
    ):
        m = _analysis(fn, y, np.int32(3), donate_argnums=0)
        assert m.alias_size_in_bytes == y.nbytes
        assert m.temp_size_in_bytes < y.nbytes // 4


def test_update_without_donation_is_a_copy():
    x = bt.zeros((N,), np.float32)
    m = _analysis(lambda x: x.at[5].set(1.0), x)
    assert m.alias_size_in_bytes == 0
    assert m.output_size_in_bytes == 4 * N


def test_updates_of_a_value_computed_inside_are_in_place():
    x = bt.zeros((N,), np.float32)

    def f(x):
        y = x * 2
        y = y.at[3].set(1.0)
        return y.at[:].add(1.0)

    m = _analysis(f, x, donate_argnums=0)
    assert m.alias_size_in_bytes == 4 * N
    assert m.temp_size_in_bytes < 4 * N // 4


# ---- seed 001: a dataclass field updated in place under jit ----


@dataclasses.dataclass
class Field:
    u: Any
    f: Any


bt.tree.register_dataclass(Field)


def update(field):
    return dataclasses.replace(field, u=field.u.at[:].add(field.f))


def test_seed_001_dataclass_field_updated_in_place(no_gc):
    n = 16 * 1024 * 1024  # 64 MiB of float32
    nbytes = 4 * n
    step = bt.jit(update, donate_argnums=0)
    field = Field(bt.zeros((n,), np.float32), bt.device_put(np.float32(1.0)))
    field.u.block_until_ready()

    analysis = step.lower(field).compile().memory_analysis()
    # Every leaf of the donated field is reused: u (64 MiB) and f (4 bytes).
    assert analysis.alias_size_in_bytes == nbytes + 4 == field.u.nbytes + field.f.nbytes
    assert analysis.temp_size_in_bytes < 1 << 20

    base = in_use()
    bt.reset_peak_memory_stats()
    for _ in range(3):
        old_u = field.u
        field = step(field)
        assert old_u.is_deleted()  # its buffer became the new field.u
        del old_u
    field.u.block_until_ready()
    stats = bt.memory_stats()
    assert stats["peak_bytes_in_use"] - base <= 1 << 20
    assert stats["bytes_in_use"] - base <= 1 << 20
    assert float(field.u[0]) == 3.0 and float(field.u[-1]) == 3.0
    assert float(field.u.max()) == 3.0 and float(field.u.min()) == 3.0


def test_seed_001_without_donation_needs_a_second_copy(no_gc):
    n = 1 << 20
    step = bt.jit(update)
    field = Field(bt.zeros((n,), np.float32), 1.0)
    analysis = step.lower(field).compile().memory_analysis()
    assert analysis.alias_size_in_bytes == 0
    new = step(field)
    assert not field.u.is_deleted()
    np.testing.assert_array_equal(np.asarray(new.u[:4]), np.ones(4, np.float32))
