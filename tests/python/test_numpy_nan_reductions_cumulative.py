"""baton.numpy's NaN-aware reductions, average/ptp/count_nonzero,
cumulative functions and differences against numpy (and jax.numpy where
they differ), eagerly and under bt.jit."""

import numpy as np
import pytest

import baton.numpy as bnp

from _numpy_check import BF16, F16, F32, F64, I32, _name, both, check, sample, tol

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = [pytest.mark.x64, pytest.mark.filterwarnings("ignore::RuntimeWarning")]


# ---- nan reductions ----

NAN_SHAPE = (4, 6, 5)
NAN_AXES = [None, 0, 2, (0, 1), -1]


@pytest.mark.parametrize("dtype", [np.int32, np.int8, F16, F32, F64], ids=_name)
@pytest.mark.parametrize("axis", NAN_AXES, ids=str)
@pytest.mark.parametrize(
    "name", ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]
)
def test_nan_reductions(name, dtype, axis):
    a = sample(NAN_SHAPE, dtype, 1, scale=1.0, nan=0.3)
    if name == "nanprod" and np.dtype(dtype).kind == "f":
        a = (np.sign(a) * (1 + np.abs(a) / 4)).astype(dtype)
    ref = getattr(np, name)
    want = ref(a.astype(np.float64), axis=axis)
    kind = np.dtype(dtype).kind
    if name in ("nansum", "nanprod"):
        out = I32 if np.dtype(dtype) == np.int8 else np.dtype(dtype)
    elif name in ("nanmax", "nanmin"):
        out = np.dtype(dtype)
    else:
        out = F32 if kind == "i" else np.dtype(dtype)
    for got in both(lambda x: getattr(bnp, name)(x, axis=axis), a):
        check(
            got, np.asarray(want).astype(out), out, rtol=tol(out) * 5, atol=tol(out) * 5
        )
    k = bnp.__dict__[name](a, axis=axis, keepdims=True)
    assert (
        k.shape == np.asarray(ref(a.astype(np.float64), axis=axis, keepdims=True)).shape
    )


def test_nan_reductions_all_nan_and_jax():
    jnp = pytest.importorskip("jax.numpy")
    a = np.array([[np.nan, np.nan], [1.0, np.nan], [np.inf, -np.inf]], np.float32)
    for name in (
        "nansum",
        "nanprod",
        "nanmax",
        "nanmin",
        "nanmean",
        "nanvar",
        "nanstd",
        "nanargmax",
        "nanargmin",
    ):
        want = getattr(jnp, name)(a, axis=1)
        for got in both(lambda x: getattr(bnp, name)(x, axis=1), a):  # noqa: B023
            check(got, np.asarray(want), want.dtype)
    check(bnp.nanvar(a, axis=1, ddof=1), np.asarray(jnp.nanvar(a, axis=1, ddof=1)), F32)
    check(bnp.nanmean(np.ones((2, 3), np.int16), axis=0, dtype=F16), np.ones(3), F16)
    check(bnp.nansum(np.ones(4, np.int32), dtype=np.int8), np.int8(4), np.int8)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, F16, F32], ids=_name)
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_nanargmax_nanargmin(dtype, axis, keepdims):
    a = sample((6, 7), dtype, 2, nan=0.25)
    for name in ("nanargmax", "nanargmin"):
        want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
        for got in both(
            lambda x: getattr(bnp, name)(x, axis=axis, keepdims=keepdims),  # noqa: B023
            a,
        ):
            check(got, want, I32)


def test_nan_reduction_errors():
    with pytest.raises(ValueError, match="zero-size array"):
        bnp.nanmax(np.zeros((0, 3)), axis=0)
    with pytest.raises(
        ValueError, match="attempt to get nanargmin of an empty sequence"
    ):
        bnp.nanargmin(np.zeros((0,)))
    with pytest.raises(NotImplementedError, match="out="):
        bnp.nansum(np.ones(2), out=np.ones(2))
    with pytest.raises(np.exceptions.AxisError):
        bnp.nanmean(np.ones(2), axis=1)
    check(bnp.nansum(np.zeros((0, 2), np.float32), axis=0), np.zeros(2), F32)


@pytest.mark.parametrize(
    "dtype", [np.int8, np.int32, np.uint8, F16, F32, F64], ids=_name
)
@pytest.mark.parametrize("axis", [None, 0, (1, 2)], ids=str)
def test_ptp_count_nonzero(dtype, axis):
    a = sample((3, 4, 5), dtype, 3)
    for got in both(lambda x: bnp.ptp(x, axis=axis), a):
        check(got, np.ptp(a, axis=axis), dtype, rtol=tol(dtype), atol=0)
    for got in both(lambda x: bnp.count_nonzero(x, axis=axis, keepdims=True), a):
        check(got, np.count_nonzero(a, axis=axis, keepdims=True), I32)
    check(bnp.count_nonzero(a > 0, axis=axis), np.count_nonzero(a > 0, axis=axis), I32)


def test_ptp_errors():
    with pytest.raises(TypeError, match="ptp: not defined for bool"):
        bnp.ptp(np.ones(3, bool))
    with pytest.raises(ValueError, match="zero-size array"):
        bnp.ptp(np.zeros((0,)))


@pytest.mark.parametrize("dtype", [np.int32, F16, F32, F64], ids=_name)
def test_average(dtype):
    a = sample((4, 5), dtype, 4)
    w = np.abs(sample((4, 5), F32, 5)) + 0.1
    w1 = np.abs(sample((5,), np.int32, 6)) + 1
    out = F32 if np.dtype(dtype).kind == "i" else np.dtype(dtype)
    t = tol(out) * 4
    for got in both(lambda x: bnp.average(x), a):
        check(got, np.average(a.astype(np.float64)), out, rtol=t, atol=t)
    wout = F64 if out == F64 else F32
    for got in both(lambda x, y: bnp.average(x, axis=0, weights=y), a, w):
        check(
            got,
            np.average(a.astype(np.float64), axis=0, weights=w),
            wout,
            rtol=t,
            atol=t,
        )
    for got in both(
        lambda x, y: bnp.average(x, axis=1, weights=y, returned=True), a, w1
    ):
        wa, ws = np.average(a.astype(np.float64), axis=1, weights=w1, returned=True)
        check(got[0], wa, None, rtol=t, atol=t)
        check(got[1], ws, None, rtol=t, atol=t)
    _, cnt = bnp.average(a, axis=1, returned=True, keepdims=True)
    check(cnt, np.full((4, 1), 5.0), out)


def test_average_errors():
    with pytest.raises(TypeError, match="axis must be given"):
        bnp.average(np.ones((2, 3)), weights=np.ones(3))
    with pytest.raises(ValueError, match="not compatible with axis 1"):
        bnp.average(np.ones((2, 3)), axis=1, weights=np.ones(2))


# ---- cumulative ----


@pytest.mark.parametrize(
    "dtype",
    [
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint32,
        F16,
        BF16,
        F32,
        F64,
    ],
    ids=_name,
)
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
def test_cumulative(name, dtype, axis):
    jnp = pytest.importorskip("jax.numpy")
    a = sample((5, 37), dtype, 7, scale=1.0, nan=0.1 if name.startswith("nan") else 0)
    if "prod" in name and np.dtype(dtype).kind == "f":
        a = (np.sign(a) * (1 + np.abs(a) / 40)).astype(dtype)
    d = np.dtype(dtype)
    out = (
        np.dtype(getattr(jnp, name)(np.zeros((1,), dtype if d != BF16 else F32)).dtype)
        if d != BF16
        else BF16
    )
    if d in (F64, np.dtype(np.int64)):
        out = d  # baton keeps 64-bit inputs (x64 behaviour)
    ref = getattr(np, name)
    if out.kind in "iu":
        want = ref(a.astype(np.int64), axis=axis).astype(out)  # wraps as baton's
    else:
        want = ref(a.astype(np.float64), axis=axis)
    for got in both(lambda x: getattr(bnp, name)(x, axis=axis), a):
        check(got, want, out, rtol=tol(out) * 4, atol=tol(out) * 4)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 64, 65, 1000])
def test_cumsum_lengths_and_accuracy(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float32) + 1
    want = np.cumsum(a.astype(np.float64))
    for got in both(bnp.cumsum, a):
        check(got, want, F32, rtol=1e-5, atol=1e-4)
    i = rng.integers(-(2**20), 2**20, n).astype(np.int32)
    for got in both(bnp.cumsum, i):
        check(got, np.cumsum(i).astype(np.int32), I32)


def test_cumsum_large_and_dtype_arg():
    a = np.ones(1 << 16, np.float32) * 0.1
    got = np.asarray(bnp.cumsum(a))
    np.testing.assert_allclose(got, np.cumsum(a.astype(np.float64)), rtol=1e-5)
    check(bnp.cumsum(np.ones(4, np.int8), dtype=np.int32), [1, 2, 3, 4], I32)
    check(bnp.cumprod(np.full(3, 2, np.int32), dtype=F32), [2, 4, 8], F32)
    check(
        bnp.cumsum(np.array([np.inf, -np.inf, 1.0], np.float32)),
        [np.inf, np.nan, np.nan],
    )
    check(bnp.cumsum(np.zeros((2, 0), np.float32), axis=1), np.zeros((2, 0)), F32)
    check(bnp.cumsum(np.float32(3)), [3.0], F32)


def test_cumulative_sum_prod():
    jnp = pytest.importorskip("jax.numpy")
    a = sample((3, 4), np.int32, 8)
    for inc in (False, True):
        for name in ("cumulative_sum", "cumulative_prod"):
            want = getattr(jnp, name)(a, axis=1, include_initial=inc)
            for got in both(
                lambda x: getattr(bnp, name)(x, axis=1, include_initial=inc),  # noqa: B023
                a,
            ):
                check(got, np.asarray(want), want.dtype)
    v = np.array([True, False, True])
    check(bnp.cumulative_sum(v, include_initial=True), [0, 1, 1, 2], I32)
    with pytest.raises(ValueError, match="axis must be given"):
        bnp.cumulative_sum(a)
    with pytest.raises(ValueError, match="at least one dimension"):
        bnp.cumulative_prod(np.float32(2))
    with pytest.raises(np.exceptions.AxisError):
        bnp.cumsum(a, axis=2)


# ---- differences ----


@pytest.mark.parametrize(
    "dtype", [np.bool_, np.int8, np.int32, F16, F32, F64], ids=_name
)
@pytest.mark.parametrize("n", [0, 1, 2, 7])
@pytest.mark.parametrize("axis", [0, -1])
def test_diff(dtype, n, axis):
    a = sample((4, 6), dtype, 9)
    want = np.diff(a, n=n, axis=axis)
    for got in both(lambda x: bnp.diff(x, n=n, axis=axis), a):
        check(got, want, want.dtype, rtol=tol(dtype), atol=tol(dtype))


def test_diff_prepend_append_and_errors():
    a = sample((3, 4), F32, 10)
    want = np.diff(a, axis=1, prepend=0.0, append=a[:, :2])
    for got in both(lambda x: bnp.diff(x, axis=1, prepend=0.0, append=x[:, :2]), a):
        check(got, want, F32)
    check(
        bnp.diff(np.arange(3, dtype=np.int32), prepend=np.int32(7)),
        np.diff(np.arange(3), prepend=7),
        I32,
    )
    with pytest.raises(ValueError, match="non-negative"):
        bnp.diff(a, n=-1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        bnp.diff(np.float32(1))
    with pytest.raises(ValueError, match="does not match"):
        bnp.diff(a, axis=1, append=np.ones((2, 1)))


def test_ediff1d():
    a = sample((3, 4), np.int32, 11)
    want = np.ediff1d(a, to_begin=[-1, -2], to_end=9)
    for got in both(
        lambda x: bnp.ediff1d(x, to_end=9, to_begin=np.array([-1, -2], np.int32)), a
    ):
        check(got, want, I32)
    check(bnp.ediff1d(np.array([1.5], np.float32)), np.zeros((0,)), F32)
    with pytest.raises(TypeError, match="bool"):
        bnp.ediff1d(np.ones(3, bool))


@pytest.mark.parametrize("dtype", [np.int32, F32, F64], ids=_name)
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient(dtype, edge_order):
    f = sample((5, 7), dtype, 12)
    out = F32 if np.dtype(dtype).kind == "i" else np.dtype(dtype)
    t = tol(out) * 10
    want = np.gradient(f.astype(np.float64), edge_order=edge_order)
    for got in both(lambda x: bnp.gradient(x, edge_order=edge_order), f):
        assert isinstance(got, list) and len(got) == 2
        for g, w in zip(got, want):
            check(g, w, out, rtol=t, atol=t)
    want = np.gradient(f.astype(np.float64), 0.5, axis=1, edge_order=edge_order)
    for got in both(lambda x: bnp.gradient(x, 0.5, axis=1, edge_order=edge_order), f):
        check(got, want, out, rtol=t, atol=t)
    x0 = np.cumsum(np.abs(sample((5,), F32, 13)) + 0.3)
    x1 = np.cumsum(np.abs(sample((7,), F32, 14)) + 0.3)
    want = np.gradient(
        f.astype(np.float64),
        x0.astype(np.float64),
        x1.astype(np.float64),
        edge_order=edge_order,
    )
    for got in both(
        lambda a, b, c: bnp.gradient(a, b, c, edge_order=edge_order), f, x0, x1
    ):
        for g, w in zip(got, want):
            check(g, w, out, rtol=t * 10, atol=t * 10)


def test_gradient_errors():
    with pytest.raises(ValueError, match="too small"):
        bnp.gradient(np.ones(2), edge_order=2)
    with pytest.raises(TypeError, match="invalid number of spacing"):
        bnp.gradient(np.ones((3, 3)), 1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="edge_order must be 1 or 2"):
        bnp.gradient(np.ones(3), edge_order=3)
    with pytest.raises(ValueError, match="scalar or 1-D of length 3"):
        bnp.gradient(np.ones(3), np.ones(4))


@pytest.mark.parametrize("dtype", [np.int32, F16, F32, F64], ids=_name)
def test_trapezoid(dtype):
    y = sample((4, 6), dtype, 15)
    out = F32 if np.dtype(dtype).kind == "i" else np.dtype(dtype)
    t = tol(out) * 10
    for got in both(lambda v: bnp.trapezoid(v), y):
        check(got, np.trapezoid(y.astype(np.float64)), out, rtol=t, atol=t)
    for got in both(lambda v: bnp.trapezoid(v, dx=0.5, axis=0), y):
        check(
            got, np.trapezoid(y.astype(np.float64), dx=0.5, axis=0), out, rtol=t, atol=t
        )
    x = np.cumsum(np.abs(sample((6,), F32, 16)))
    for got in both(lambda v, w: bnp.trapezoid(v, w), y, x):
        check(
            got,
            np.trapezoid(y.astype(np.float64), x.astype(np.float64)),
            None,
            rtol=t,
            atol=t,
        )
    x2 = sample((4, 6), F32, 17)
    check(
        bnp.trapezoid(y, x2),
        np.trapezoid(y.astype(np.float64), x2.astype(np.float64)),
        None,
        rtol=t * 10,
        atol=t * 10,
    )
    check(bnp.trapezoid(np.ones((3, 1), dtype)), np.zeros(3), out)
    with pytest.raises(ValueError, match="does not match"):
        bnp.trapezoid(y, np.ones(5))
