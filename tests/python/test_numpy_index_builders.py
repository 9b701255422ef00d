"""baton.numpy's index builders and grids (_index_tricks: tril_indices ...
indices, linspace/logspace/geomspace dtypes, meshgrid, ix_, unravel_index),
trim_zeros, apply_along_axis / apply_over_axes against numpy, eager and
inside jit."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton.errors import ConcretizationTypeError

from _arrange_check import both, check, sample

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64


# ---- index builders ----


def test_index_builders_match_numpy_with_int32():
    cases = [
        (lambda m: m.tril_indices(3), None),
        (lambda m: m.tril_indices(3, 1, 4), None),
        (lambda m: m.triu_indices(4, -1), None),
        (lambda m: m.triu_indices(3, 0, 2), None),
        (lambda m: m.tril_indices_from(np.ones((2, 5)), 1), None),
        (lambda m: m.triu_indices_from(np.ones((4, 3))), None),
        (lambda m: m.diag_indices(3), None),
        (lambda m: m.diag_indices(2, 4), None),
        (lambda m: m.diag_indices_from(np.ones((3, 3, 3))), None),
        (lambda m: m.indices((2, 3)), None),
        (lambda m: m.indices((2, 0, 3)), None),
        (lambda m: m.indices((2, 3), sparse=True), None),
        (lambda m: m.indices(()), None),
        (lambda m: m.unravel_index(np.array([5, 0, 23], np.int32), (2, 3, 4)), None),
        (lambda m: m.unravel_index(7, (4, 2)), None),
        (
            lambda m: m.ravel_multi_index(
                (np.array([1, 0], np.int32), np.array([2, 1], np.int32)), (2, 3)
            ),
            None,
        ),
        (
            lambda m: m.ravel_multi_index(
                (np.array([1, 0], np.int32), np.array([2, 1], np.int32)),
                (2, 3),
                order="F",
            ),
            None,
        ),
        (
            lambda m: m.ravel_multi_index(
                (np.array([1, 5], np.int32), np.array([-2, 1], np.int32)),
                (2, 3),
                mode="wrap",
            ),
            None,
        ),
        (
            lambda m: m.ravel_multi_index(
                (np.array([1, 5], np.int32), np.array([-2, 1], np.int32)),
                (2, 3),
                mode="clip",
            ),
            None,
        ),
        (lambda m: m.mgrid[0:3, 1:5:2], None),
        (lambda m: m.ogrid[0:3, 1:5:2], None),
        (lambda m: m.mgrid[-2:2], None),
    ]
    for fn, _ in cases:
        want = fn(np)
        want = (
            [np.asarray(w).astype(np.int32) for w in want]
            if isinstance(want, (tuple, list))
            else np.asarray(want).astype(np.int32)
        )
        check(fn(bnp), want)
        check(bt.jit(lambda fn=fn: fn(bnp))(), want)


def test_float_grids_match_numpy_in_float32():
    cases = [
        lambda m: m.tri(3, 5, 1),
        lambda m: m.tri(4, k=-1),
        lambda m: m.tri(0),
        lambda m: m.mgrid[0:1:5j],
        lambda m: m.mgrid[0:1:3j, 0:2:0.5],
        lambda m: m.ogrid[0:3:4j, 1:2:2j],
        lambda m: m.r_[0:3, 5, 1:2:3j],
        lambda m: m.fromfunction(lambda i, j: i * 10 + j, (2, 3)),
        lambda m: m.geomspace(1, 1000, 7),
        lambda m: m.geomspace(-2, -256, 8, endpoint=False),
        lambda m: m.logspace(0, 3, 7, base=2.0),
        lambda m: m.logspace(1, -1, 5),
    ]
    for fn in cases:
        want = fn(np)
        want = (
            [np.asarray(w, np.float32) for w in want]
            if isinstance(want, (tuple, list))
            else np.asarray(want, np.float32)
        )
        for got in (fn(bnp), bt.jit(lambda fn=fn: fn(bnp))()):
            if isinstance(want, list):
                for g, w in zip(got, want):
                    np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)
            else:
                assert got.dtype == np.float32
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_space_dtypes():
    got = bnp.geomspace(1, 1000, 4, dtype=np.int32)
    check(got, np.geomspace(1, 1000, 4).astype(np.int32))
    got = bnp.logspace(0, 3, 4, dtype=bnp.int32)
    check(got, np.array([1, 10, 100, 1000], np.int32))
    check(
        bnp.fromfunction(lambda i: i * 2, (3,), dtype=int),
        np.array([0, 2, 4], np.int32),
    )


def test_meshgrid_and_ix_():
    x, y, z = (
        np.arange(3, dtype=np.float32),
        np.arange(2, dtype=np.int32),
        np.ones(4, np.int8),
    )
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            want = np.meshgrid(x, y, z, indexing=indexing, sparse=sparse)
            got = both(
                lambda a, b, c, i=indexing, s=sparse: tuple(
                    bnp.meshgrid(a, b, c, indexing=i, sparse=s)
                ),
                x,
                y,
                z,
            )
            for g in got:
                check(g, want)
    assert bnp.meshgrid() == []
    check(bnp.meshgrid(x)[0], x)
    a = sample(np.float32)
    want = a[np.ix_([0, 1], [2, 0], [3])]
    check(bt.device_put(a)[bnp.ix_([0, 1], [2, 0], [3])], want)
    check(bt.jit(lambda x: x[bnp.ix_([0, 1], [2, 0], [3])])(a), want)
    check(bnp.ix_(np.array([True, False, True]))[0], np.array([0, 2], np.int32))
    check(
        bt.jit(lambda i: bnp.asarray(a)[bnp.ix_(i, i)])(np.array([1, 0], np.int32)),
        a[np.ix_([1, 0], [1, 0])],
    )


def test_unravel_index_traced_clamps_like_jax():
    jnp = pytest.importorskip("jax.numpy")
    i = np.array([5, 100, -1, 0], np.int32)
    want = jnp.unravel_index(i, (2, 3))
    check(
        bt.jit(lambda i: bnp.unravel_index(i, (2, 3)))(i), [np.asarray(w) for w in want]
    )
    i8 = np.array([5, 2], np.int8)
    got = bnp.unravel_index(i8, (2, 3))
    check(got, [np.array([1, 0], np.int8), np.array([2, 2], np.int8)])


def test_trim_zeros():
    for v, trim in (
        ([0, 0, 1, 0, 2, 0], "fb"),
        ([0, 0, 1, 0, 2, 0], "f"),
        ([0, 0, 1, 0, 2, 0], "b"),
        ([0, 0], "fb"),
        ([], "fb"),
        ([3], "b"),
    ):
        a = np.array(v, np.float32)
        check(bnp.trim_zeros(a, trim), np.trim_zeros(a, trim))
        check(bnp.trim_zeros(bt.device_put(a), trim), np.trim_zeros(a, trim))
    m = np.zeros((4, 5), np.int32)
    m[1, 2] = m[2, 3] = 1
    check(bnp.trim_zeros(m), np.trim_zeros(m))
    check(bnp.trim_zeros(m, axis=1), np.trim_zeros(m, axis=1))
    with pytest.raises(ConcretizationTypeError, match="trim_zeros"):
        bt.jit(bnp.trim_zeros)(np.array([0, 1, 0], np.float32))


def test_apply_along_and_over_axes():
    a = sample(np.float32)
    for axis, f in (
        (1, lambda v: v * v.sum()),
        (2, lambda v: v.max()),
        (0, lambda v: bnp.stack([v, -v])),
    ):
        fn = f if axis != 0 else (lambda v: np.stack([v, -v]))
        want = np.apply_along_axis(fn if axis == 0 else f, axis, a)
        for got in both(lambda x, f=f, ax=axis: bnp.apply_along_axis(f, ax, x), a):
            check(got, want)
    for axes in ([0, 2], [1], (-1, 0)):
        want = np.apply_over_axes(np.sum, a, axes)
        for got in both(lambda x, ax=axes: bnp.apply_over_axes(bnp.sum, x, ax), a):
            check(got, want)


def test_unstack_and_fliplr_on_jit_tracer_keep_dtypes():
    a = sample(ml_dtypes.bfloat16)
    for got in both(lambda x: bnp.unstack(x), a):
        check(got, list(a))
    assert bnp.unstack(np.zeros((0, 2), np.float32)) == ()
