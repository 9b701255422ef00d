"""Small families of baton.numpy functions against jax.numpy (x64 off) and
numpy: dtype casts and complex accessors (_casts), window functions
(_windows), nonzero / flatnonzero / argwhere (_nonzero), isin, piecewise,
vectorize, unwrap, poly / polydiv, isdtype, the host constructors and
printing (_printing)."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton.errors import ConcretizationTypeError

rng = np.random.default_rng(7)
A = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
I = rng.integers(-3, 3, (3, 4)).astype(np.int32)


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6, equal_nan=True)


@pytest.mark.parametrize("x", [A, I, np.array([True, False])])
def test_complex_accessors_and_angle(x):
    for n in ("real", "imag", "conj", "conjugate", "angle"):
        same(getattr(bnp, n)(x), getattr(jnp, n)(x))
        same(bt.jit(getattr(bnp, n))(x), jax.jit(getattr(jnp, n))(x))
    same(bnp.angle(A, deg=True), jnp.angle(A, deg=True))
    z = np.array([-0.0, 0.0, np.nan, -3.0], np.float32)
    same(bnp.angle(z), jnp.angle(z))


def test_astype_and_invert():
    same(bnp.astype(A, np.int32), jnp.astype(A, np.int32))
    same(bt.jit(lambda x: bnp.astype(x, bnp.float32))(I), jnp.astype(I, jnp.float32))
    same(bnp.bitwise_invert(I), jnp.bitwise_invert(I))
    with pytest.raises(TypeError):
        bnp.astype(A, None)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("m", [0, 1, 2, 7])
def test_windows(name, m):
    same(getattr(bnp, name)(m), getattr(jnp, name)(m))
    same(bt.jit(lambda: getattr(bnp, name)(m))(), getattr(jnp, name)(m))


def test_windows_reject_non_int():
    with pytest.raises(TypeError, match="M"):
        bnp.hanning(2.5)


def test_nonzero_family_eager():
    for x in (I, A > 0, np.zeros((2, 2), np.float32)):
        for g, w in zip(bnp.nonzero(x), jnp.nonzero(x)):
            same(g, w)
        same(bnp.flatnonzero(x), jnp.flatnonzero(x))
        same(bnp.argwhere(x), jnp.argwhere(x))


def test_nonzero_family_sized_jit():
    for size, fill in ((3, None), (20, 9), (5, (7, 8))):
        want = jax.jit(lambda x: jnp.nonzero(x, size=size, fill_value=fill))(I)
        got = bt.jit(lambda x: bnp.nonzero(x, size=size, fill_value=fill))(I)
        for g, w in zip(got, want):
            same(g, w)
        same(bnp.nonzero(I, size=size, fill_value=fill)[0], want[0])
    f = 9
    same(
        bt.jit(lambda x: bnp.flatnonzero(x, size=6, fill_value=f))(I),
        jnp.flatnonzero(I, size=6, fill_value=f),
    )
    same(
        bt.jit(lambda x: bnp.argwhere(x, size=15, fill_value=-1))(I),
        jnp.argwhere(I, size=15, fill_value=-1),
    )


def test_nonzero_errors():
    with pytest.raises(ConcretizationTypeError, match="size"):
        bt.jit(bnp.nonzero)(I)
    with pytest.raises(ConcretizationTypeError):
        bt.jit(bnp.argwhere)(I)
    with pytest.raises(ValueError, match="0-d"):
        bnp.nonzero(np.float32(1))
    with pytest.raises(ValueError, match="fill_value"):
        bnp.nonzero(I, size=2, fill_value=(1, 2, 3))


def test_isin():
    t = np.array([1, -2, 5], np.int32)
    for inv in (False, True):
        same(bnp.isin(I, t, invert=inv), jnp.isin(I, t, invert=inv))
        same(
            bt.jit(lambda a, b: bnp.isin(a, b, invert=inv))(I, t),
            jnp.isin(I, t, invert=inv),
        )
    same(bnp.isin(I, np.zeros((0,), np.int32)), jnp.isin(I, np.zeros((0,), np.int32)))
    same(bnp.isin(A, A[0]), jnp.isin(A, A[0]))


def test_piecewise():
    fs = [lambda x: x * 2, lambda x: x - 1, 5.0]
    conds = [A > 0, A > 1]
    same(bnp.piecewise(A, conds, fs), jnp.piecewise(A, conds, fs))
    same(bnp.piecewise(A, conds, fs[:2]), jnp.piecewise(A, conds, fs[:2]))
    same(
        bt.jit(lambda x: bnp.piecewise(x, [x < 0], [lambda v: -v, lambda v: v]))(A),
        jnp.piecewise(A, [A < 0], [lambda v: -v, lambda v: v]),
    )
    same(bnp.piecewise(I, [I > 0], [1.7]), jnp.piecewise(I, [I > 0], [1.7]))
    with pytest.raises(ValueError, match="funclist"):
        bnp.piecewise(A, [A > 0], [1, 2, 3])


def test_vectorize():
    def f(x, y, scale=1.0):
        return x * y * scale if x.ndim == 0 else None

    vb = bnp.vectorize(f, excluded={"scale"})
    vj = jnp.vectorize(f, excluded={"scale"})
    same(vb(A, A[0], scale=2.0), vj(A, A[0], scale=2.0))
    same(bt.jit(lambda a, b: vb(a, b))(A, A[:, :1]), vj(A, A[:, :1]))
    g = bnp.vectorize(lambda x, k: x + len(k), excluded={1})
    same(g(I, "abc"), I + 3)
    same(bnp.vectorize(lambda x: x * 2)(np.float32(3)), jnp.float32(6))
    # signature=: tests/jax_compat/test_vectorize_vs_jax.py


def test_unwrap():
    p = np.cumsum(rng.uniform(-4, 4, (3, 8)), axis=1).astype(np.float32)
    same(bnp.unwrap(p), jnp.unwrap(p))
    same(bnp.unwrap(p, axis=0), jnp.unwrap(p, axis=0))
    same(bnp.unwrap(p, discont=4.0), jnp.unwrap(p, discont=4.0))
    same(bnp.unwrap(p, period=3.0), jnp.unwrap(p, period=3.0))
    same(bt.jit(bnp.unwrap)(p), jax.jit(jnp.unwrap)(p))
    ip = np.array([0, 5, 10, 2], np.int32)
    same(bnp.unwrap(ip), jnp.unwrap(ip))


def test_poly_polydiv():
    r = np.array([1.0, -2.0, 0.5], np.float32)
    same(bnp.poly(r), jnp.poly(r))
    same(bt.jit(bnp.poly)(r), jax.jit(jnp.poly)(r))
    same(bnp.poly(np.array([1, 2], np.int32)), jnp.poly(np.array([1, 2], np.int32)))
    same(bnp.poly(np.zeros((0,), np.float32)), jnp.poly(np.zeros((0,), np.float32)))
    u = np.array([1.0, -2.0, 0.5, 4.0], np.float32)
    for v in (
        np.array([2.0, 1.0], np.float32),
        np.array([3.0], np.float32),
        u,
        np.ones(5, np.float32),
    ):
        for g, w in zip(bnp.polydiv(u, v), jnp.polydiv(u, v)):
            same(g, w)
        for g, w in zip(bt.jit(bnp.polydiv)(u, v), jax.jit(jnp.polydiv)(u, v)):
            same(g, w)
    with pytest.raises(NotImplementedError):
        bnp.poly(np.eye(2, dtype=np.float32))


@pytest.mark.parametrize(
    "kind",
    [
        "bool",
        "signed integer",
        "unsigned integer",
        "integral",
        "real floating",
        "complex floating",
        "numeric",
        ("bool", "real floating"),
        np.int32,
    ],
)
@pytest.mark.parametrize(
    "d", [np.bool_, np.int8, np.uint32, np.float32, np.float16, np.int32]
)
def test_isdtype(d, kind):
    assert bnp.isdtype(d, kind) == jnp.isdtype(d, kind)


def test_isdtype_bad_kind():
    with pytest.raises(ValueError, match="kind"):
        bnp.isdtype(np.float32, "floaty")


def test_host_constructors():
    same(
        bnp.frombuffer(A.tobytes(), dtype=np.float32),
        jnp.frombuffer(A.tobytes(), dtype=np.float32),
    )
    same(
        bnp.frombuffer(I.tobytes(), dtype=np.int32, count=3, offset=4),
        jnp.frombuffer(I.tobytes(), dtype=np.int32, count=3, offset=4),
    )
    same(bnp.fromstring("1 2.5 -3", sep=" "), jnp.fromstring("1 2.5 -3", sep=" "))
    same(
        bnp.fromstring("1,2", dtype=np.int32, sep=","),
        jnp.fromstring("1,2", dtype=np.int32, sep=","),
    )
    with pytest.raises(ValueError, match="sep"):
        bnp.fromstring("12", sep="")
    same(bnp.from_dlpack(A), jnp.from_dlpack(A))


def test_printing():
    x = bnp.asarray(A)
    assert bnp.array_repr(x) == np.array_repr(A)
    assert bnp.array_str(x, precision=2) == np.array_str(A, precision=2)
    old = bnp.get_printoptions()
    assert old == np.get_printoptions()
    with bnp.printoptions(precision=2):
        assert bnp.get_printoptions()["precision"] == 2
    assert bnp.get_printoptions() == old
    bnp.set_printoptions(precision=old["precision"])
    with pytest.raises(ConcretizationTypeError):
        bt.jit(lambda v: bnp.array_str(v))(x)
