"""baton.numpy's products (matmul, dot, vdot, inner, outer, tensordot,
einsum) against numpy, with a tolerance that depends on the dtype."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [
    np.int8,
    np.int32,
    np.int64,
    np.uint8,
    np.float16,
    BF16,
    np.float32,
    np.float64,
]


def _name(d):
    return np.dtype(d).name


def sample(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    d = np.dtype(dtype)
    if d.kind in "iu":
        return rng.integers(0 if d.kind == "u" else -3, 4, shape).astype(d)
    return rng.standard_normal(shape).astype(d)


def close(got, want, dtype):
    d = np.dtype(dtype)
    assert got.dtype == d, (got.dtype, d)
    g = np.asarray(got).astype(np.float64)
    if d.kind in "iu":
        np.testing.assert_array_equal(g, want.astype(d).astype(np.float64))
        return
    rtol = {np.dtype(np.float16): 1e-2, BF16: 5e-2, np.dtype(np.float32): 1e-5}.get(
        d, 1e-12
    )
    np.testing.assert_allclose(g, want, rtol=rtol, atol=rtol * np.abs(want).max())


def both(fn, *args):
    eager = fn(*[bt.device_put(a) for a in args])
    traced = bt.jit(fn)(*args)
    return eager, traced


MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((2, 3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((33, 70), (70, 17)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES, ids=str)
def test_matmul(sa, sb, dtype):
    a, b = sample(sa, dtype, 1), sample(sb, dtype, 2)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    for got in both(bnp.matmul, a, b):
        close(got, want, dtype)
    close(bt.device_put(a) @ bt.device_put(b), want, dtype)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, BF16], ids=_name)
@pytest.mark.parametrize(
    "sa, sb",
    [
        ((3, 4), (4, 5)),
        ((4,), (4,)),
        ((2, 3, 4), (5, 4, 6)),
        ((3, 4), (4,)),
        ((), (3,)),
    ],
    ids=str,
)
def test_dot(sa, sb, dtype):
    a, b = sample(sa, dtype, 3), sample(sb, dtype, 4)
    want = np.dot(a.astype(np.float64), b.astype(np.float64))
    for got in both(bnp.dot, a, b):
        close(got, want, dtype)


def test_vdot_inner_outer_tensordot():
    a, b = sample((3, 4), np.float32, 5), sample((3, 4), np.float32, 6)
    close(bnp.vdot(a, b), np.vdot(a, b).astype(np.float64), np.float32)
    close(bnp.inner(a, b), np.inner(a.astype(np.float64), b), np.float32)
    close(bnp.outer(a[0], b[1]), np.outer(a[0].astype(np.float64), b[1]), np.float32)
    c = sample((4, 3, 5), np.float32, 7)
    close(
        bnp.tensordot(a, c, axes=([0, 1], [1, 0])),
        np.tensordot(a.astype(np.float64), c, ([0, 1], [1, 0])),
        np.float32,
    )
    close(
        bnp.tensordot(a, b.T, axes=1),
        np.tensordot(a.astype(np.float64), b.T, 1),
        np.float32,
    )


EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(6,), (6,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk->ki", [(3, 4), (4, 5)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ijk,k->ij", [(2, 3, 4), (4,)]),
]


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float16], ids=_name)
@pytest.mark.parametrize("spec, shapes", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum(spec, shapes, dtype):
    ops = [sample(s, dtype, i) for i, s in enumerate(shapes)]
    want = np.einsum(spec, *[o.astype(np.float64) for o in ops])
    for got in both(lambda *xs: bnp.einsum(spec, *xs), *ops):
        close(got, np.asarray(want), dtype)


def test_products_promote():
    got = bnp.matmul(np.ones((2, 3), np.int8), np.ones((3, 2), np.float16))
    assert got.dtype == np.float16
    got = bnp.einsum("ij,jk->ik", np.ones((2, 3), BF16), np.ones((3, 2), np.float16))
    assert got.dtype == np.float32


def test_product_errors():
    with pytest.raises(TypeError, match="matmul"):  # TypeError as in JAX
        bnp.matmul(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(TypeError, match="not aligned"):
        bnp.dot(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="sizes"):
        bnp.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(NotImplementedError, match="ellipsis"):
        bnp.einsum("...ij,jk", np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(NotImplementedError, match="diagonal"):
        bnp.einsum("ii->i", np.ones((3, 3)))
    with pytest.raises(ValueError, match="operand"):
        bnp.einsum("ij,jk->ik", np.ones((2, 3)))
    with pytest.raises(ValueError, match="0-d"):
        bnp.matmul(np.float32(2), np.ones(3))
