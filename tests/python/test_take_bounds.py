"""jnp.take's modes and x[i] read out-of-range indices inside the gather
(core/gather_bounds.h): the compiled program is one gather -- no compare,
select or add around it -- and values, derivatives and batching are those
of the semantics jax.numpy defines (negatives wrap once; then 'fill' reads
the fill value, x[i] and 'clip' clamp)."""

from __future__ import annotations

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

N = 8
IDX = np.array([0, -1, 7, 8, -8, -9, 3, 100, -100], np.int32)


def _reference(x: np.ndarray, idx: np.ndarray, mode: str, fill: float) -> np.ndarray:
    """jax.numpy.take along axis 0 as its docs define the modes."""
    n = x.shape[0]
    j = np.where(idx < 0, idx + n, idx)
    if mode == "fill":
        inside = (j >= 0) & (j < n)
        got = x[np.clip(j, 0, n - 1)]
        return np.where(inside.reshape((-1,) + (1,) * (x.ndim - 1)), got, fill)
    return x[np.clip(j, 0, n - 1)]  # x[i] and 'raise' with traced indices


def _ops_of(f, *args) -> list[str]:
    text = bt.jit(f).lower(*args).compile().as_text()
    return [line.split("=")[1].split("(")[0].strip() for line in text.splitlines()
            if line.strip().startswith("%") and "=" in line]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.float16])
def test_take_fill_is_one_gather_with_jax_values(dtype):
    x = (np.arange(N * 3).reshape(N, 3) % 5).astype(dtype)
    xs, idx = bt.device_put(x), bt.device_put(IDX)
    got = np.asarray(bt.jit(lambda a, i: bnp.take(a, i, axis=0))(xs, idx))
    fill = {np.float32: np.nan, np.float16: np.nan, np.int32: np.iinfo(np.int32).min,
            np.bool_: True}[dtype]
    np.testing.assert_array_equal(got, _reference(x, IDX, "fill", fill))
    assert _ops_of(lambda a, i: bnp.take(a, i, axis=0), xs, idx) == ["gather"]


def test_a_given_fill_value_and_x_of_i():
    x = np.arange(N, dtype=np.float32) * 1.5
    xs, idx = bt.device_put(x), bt.device_put(IDX)
    got = bnp.take(xs, idx, fill_value=-3.0)
    np.testing.assert_array_equal(np.asarray(got), _reference(x, IDX, "fill", -3.0))
    got = bt.jit(lambda a, i: a[i])(xs, idx)
    np.testing.assert_array_equal(np.asarray(got), _reference(x, IDX, "clip", 0))
    assert _ops_of(lambda a, i: a[i], xs, idx) == ["gather"]
    # complex64 (8 bytes) fills with NaN + NaN j inside the gather too.
    c = (np.arange(N) * (1 + 2j)).astype(np.complex64)
    got = bnp.take(bt.device_put(c), idx)
    np.testing.assert_array_equal(
        np.asarray(got), _reference(c, IDX, "fill", complex(np.nan, np.nan)))
    assert _ops_of(lambda a, i: bnp.take(a, i), bt.device_put(c), idx) == ["gather"]
    # A fill the dtype cannot hold is refused, as before.
    with pytest.raises(ValueError, match="does not fit uint8"):
        bnp.take(bt.device_put(np.arange(N, dtype=np.uint8)), idx, fill_value=-1)


def test_derivatives_drop_what_was_filled_and_add_wrapped_indices():
    x = bt.device_put(np.arange(N, dtype=np.float32))
    idx = bt.device_put(IDX)
    # Each in-range position gets one per index reading it (0 twice: 0 and
    # -8; 7 twice: 7 and -1; 3 once); filled reads contribute nothing.
    g = bt.grad(lambda a: bnp.nansum(bnp.take(a, idx) * 2.0))(x)
    np.testing.assert_array_equal(np.asarray(g), [4, 0, 0, 2, 0, 0, 0, 4])
    # x[i]: out-of-range reads clamp, so their cotangent lands on the edge.
    g = bt.grad(lambda a: a[idx].sum())(x)
    want = np.zeros(N, np.float32)
    np.add.at(want, np.clip(np.where(IDX < 0, IDX + N, IDX), 0, N - 1), 1)
    np.testing.assert_array_equal(np.asarray(g), want)
    # The tangent of a filled element is 0, not the fill.
    _, t = bt.jvp(lambda a: bnp.take(a, idx), (x,), (bnp.ones_like(x),))
    inside = (IDX >= -N) & (IDX < N)
    np.testing.assert_array_equal(np.asarray(t), inside.astype(np.float32))


def test_vmap_over_the_table_and_the_indices():
    rng = np.random.default_rng(0)
    xb = rng.standard_normal((4, N)).astype(np.float32)
    ib = rng.integers(-2 * N, 2 * N, (4, 6)).astype(np.int32)
    x, i = bt.device_put(xb), bt.device_put(ib)
    both = bt.vmap(lambda a, j: bnp.take(a, j))(x, i)
    want = np.stack([_reference(xb[b], ib[b], "fill", np.nan) for b in range(4)])
    np.testing.assert_array_equal(np.asarray(both), want)
    both = bt.vmap(lambda a, j: a[j])(x, i)
    want = np.stack([_reference(xb[b], ib[b], "clip", 0) for b in range(4)])
    np.testing.assert_array_equal(np.asarray(both), want)
    # Indices batched, one table; table batched, one index vector.
    got = bt.vmap(lambda j: bnp.take(x[0], j))(i)
    want = np.stack([_reference(xb[0], ib[b], "fill", np.nan) for b in range(4)])
    np.testing.assert_array_equal(np.asarray(got), want)
    got = bt.vmap(lambda a: bnp.take(a, i[0]))(x)
    want = np.stack([_reference(xb[b], ib[0], "fill", np.nan) for b in range(4)])
    np.testing.assert_array_equal(np.asarray(got), want)
