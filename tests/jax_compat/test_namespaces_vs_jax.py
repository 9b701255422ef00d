"""bt.lax's added names, bt.scipy.special's and bt.scipy.stats' functions,
bt.nn's added activations and bt.random's transform samplers against JAX:
the same values (float32 rounding, or the stated bound of baton's special
function approximations), shapes and dtypes; a few gradients."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.scipy.special as jss  # noqa: E402
import jax.scipy.stats as jst  # noqa: E402

import baton as bt  # noqa: E402
import baton.lax as blax  # noqa: E402
import baton.scipy.special as bss  # noqa: E402
import baton.scipy.stats as bst  # noqa: E402

F32 = np.float32
RNG = np.random.default_rng(0)
X = np.array([-3.0, -1.5, -0.4, 0.0, 0.3, 1.0, 2.5, 7.0], F32)
POS = np.array([0.05, 0.3, 0.9, 1.0, 1.7, 3.0, 8.0, 30.0], F32)
UNIT = np.array([1e-6, 0.01, 0.2, 0.5, 0.73, 0.99, 0.999999], F32)
APPROX = dict(rtol=2e-5, atol=2e-6)  # baton's erf/gammaln approximations


def _close(b, j, **tol):
    tol = tol or dict(rtol=1e-5, atol=1e-6)
    b, j = np.asarray(b), np.asarray(j)
    assert b.shape == j.shape, (b.shape, j.shape)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    np.testing.assert_allclose(b, j, equal_nan=True, **tol)


def _same(b, j, **tol):
    if isinstance(j, (tuple, list)):
        assert len(b) == len(j)
        for u, v in zip(b, j):
            _same(u, v, **tol)
    else:
        _close(b, j, **tol)


# ---- lax ----

LAX_UNARY = [
    ("sinh", X, {}),
    ("cosh", X, {}),
    ("asinh", X, {}),
    ("acosh", POS + 1, {}),
    ("atanh", UNIT - 0.5, {}),
    ("asin", UNIT - 0.5, {}),
    ("acos", UNIT - 0.5, {}),
    ("square", X, {}),
    ("cbrt", X, {}),
    ("exp2", X, {}),
    ("reciprocal", POS, {}),
    ("is_finite", np.array([1.0, np.inf, -np.inf, np.nan], F32), {}),
    ("erf", X, APPROX),
    ("erfc", X, dict(rtol=2e-5, atol=1e-6)),
    ("erf_inv", UNIT * 2 - 1, dict(rtol=2e-5, atol=1e-5)),
    ("lgamma", POS, APPROX),
    ("digamma", POS, dict(rtol=2e-5, atol=1e-5)),
    ("population_count", np.array([0, 1, 7, 255, -1, 1 << 30], np.int32), {}),
    ("clz", np.array([0, 1, 7, 255, -1, 1 << 30], np.int32), {}),
]


@pytest.mark.parametrize("name,x,tol", LAX_UNARY, ids=[c[0] for c in LAX_UNARY])
def test_lax_unary(name, x, tol):
    _close(getattr(blax, name)(x), getattr(jax.lax, name)(x), **tol)
    _close(bt.jit(getattr(blax, name))(x), getattr(jax.lax, name)(x), **tol)


def test_lax_integer_pow_nextafter_clamp_select_n():
    for y in (0, 1, 2, 3, 5, -2):
        _close(blax.integer_pow(X, y), jax.lax.integer_pow(X, y), rtol=1e-6)
    a = np.array([0.0, 1.0, -1.0, 1e-30, np.inf, 3.0], F32)
    b = np.array([1.0, 2.0, -2.0, 0.0, 0.0, 3.0], F32)
    _close(blax.nextafter(a, b), jax.lax.nextafter(a, b), rtol=0, atol=0)
    _close(blax.clamp(F32(-1), X, F32(2)), jax.lax.clamp(F32(-1), X, F32(2)))
    w = np.array([0, 2, 1, 0, 2, 1, 1, 0], np.int32)
    _close(blax.select_n(w, X, -X, X * 2), jax.lax.select_n(w, X, -X, X * 2))
    _close(blax.select_n(X > 0, X, -X), jax.lax.select_n(X > 0, X, -X))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8])
def test_lax_reductions(dtype):
    x = (RNG.normal(size=(3, 4, 5)) * 3).astype(dtype)
    for name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
        for axes in ((0,), (1, 2), (0, 1, 2)):
            tol = dict(rtol=1e-4) if name == "reduce_prod" else {}
            _close(getattr(blax, name)(x, axes), getattr(jax.lax, name)(x, axes), **tol)
    for axis in (0, 2):
        _close(blax.argmax(x, axis, np.int32), jax.lax.argmax(x, axis, np.int32))
        _close(blax.argmin(x, axis, np.int32), jax.lax.argmin(x, axis, np.int32))
    if dtype != np.float32:
        for name in ("reduce_and", "reduce_or", "reduce_xor"):
            for axes in ((0,), (1, 2)):
                _close(getattr(blax, name)(x, axes), getattr(jax.lax, name)(x, axes))
    b = x > 0
    for name in ("reduce_and", "reduce_or", "reduce_xor"):
        _close(getattr(blax, name)(b, (1,)), getattr(jax.lax, name)(b, (1,)))


@pytest.mark.parametrize(
    "name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]
)
@pytest.mark.parametrize("axis,reverse", [(0, False), (1, True), (1, False)])
def test_lax_cumulative(name, axis, reverse):
    x = RNG.normal(size=(4, 7)).astype(F32)
    _close(
        getattr(blax, name)(x, axis=axis, reverse=reverse),
        getattr(jax.lax, name)(x, axis=axis, reverse=reverse),
        rtol=1e-5,
        atol=1e-5,
    )
    if name in ("cumsum", "cummax"):
        xi = (x * 10).astype(np.int32)
        _close(
            getattr(blax, name)(xi, axis=axis, reverse=reverse),
            getattr(jax.lax, name)(xi, axis=axis, reverse=reverse),
        )


def test_lax_slicing_in_dim():
    x = np.arange(60, dtype=F32).reshape(3, 4, 5)
    cases = [
        ("slice_in_dim", (x, 1, 4), dict(axis=2)),
        ("slice_in_dim", (x, -3, None, 2), dict(axis=2)),
        ("index_in_dim", (x, -1), dict(axis=1)),
        ("index_in_dim", (x, 2), dict(axis=2, keepdims=False)),
        ("dynamic_slice_in_dim", (x, np.int32(3), 2), dict(axis=2)),
        ("dynamic_slice_in_dim", (x, np.int32(-2), 2), dict(axis=1)),
        ("dynamic_index_in_dim", (x, np.int32(1)), dict(axis=0, keepdims=False)),
        (
            "dynamic_update_slice_in_dim",
            (x, np.ones((3, 2, 5), F32), np.int32(3)),
            dict(axis=1),
        ),
        (
            "dynamic_update_index_in_dim",
            (x, np.ones((3, 5), F32), np.int32(-1)),
            dict(axis=1),
        ),
    ]
    for name, args, kw in cases:
        _close(getattr(blax, name)(*args, **kw), getattr(jax.lax, name)(*args, **kw))
    for i in (-4, -1, 0, 2, 9):  # traced starts: wrapped, then clamped
        want = jax.lax.dynamic_slice_in_dim(x, np.int32(i), 2, axis=1)
        got = bt.jit(lambda a, j: blax.dynamic_slice_in_dim(a, j, 2, axis=1))(
            x, np.int32(i)
        )
        _close(got, want)
        u = np.full((3, 2, 5), -1.0, F32)
        want = jax.lax.dynamic_update_slice_in_dim(x, u, np.int32(i), axis=1)
        got = bt.jit(lambda a, b, j: blax.dynamic_update_slice_in_dim(a, b, j, axis=1))(
            x, u, np.int32(i)
        )
        _close(got, want)


def test_lax_shapes():
    x = np.arange(24, dtype=F32).reshape(2, 3, 4)
    pairs = [
        ("broadcast", (x, (2, 1))),
        ("broadcast_to_rank", (x, 5)),
        ("collapse", (x, 1)),
        ("collapse", (x, 0, 2)),
        ("expand_dims", (x, (0, -1))),
        ("squeeze", (x[:, :1], (1,))),
        ("rev", (x, (0, 2))),
        ("tile", (x, (2, 1, 3))),
        ("full_like", (x, 3.5)),
        ("broadcasted_iota", (np.int32, (2, 3), 1)),
    ]
    for name, args in pairs:
        _close(getattr(blax, name)(*args), getattr(jax.lax, name)(*args))
    _same(blax.split(x, (1, 3), axis=2), jax.lax.split(x, (1, 3), axis=2))
    _same(blax.unstack(x, axis=1), jax.lax.unstack(x, axis=1))
    _close(blax.stack([x, x + 1], axis=1), jax.lax.stack([x, x + 1], axis=1))
    assert blax.broadcast_shapes((2, 1), (3,)) == jax.lax.broadcast_shapes((2, 1), (3,))


def test_lax_sort_key_val_top_k():
    k = np.array([[3.0, 1.0, 2.0, 1.0, 5.0], [0.0, -1.0, 4.0, 4.0, 2.0]], F32)
    v = np.arange(10, dtype=np.int32).reshape(2, 5)
    _same(blax.sort_key_val(k, v), jax.lax.sort_key_val(k, v))
    _same(blax.sort_key_val(k, v, dimension=0), jax.lax.sort_key_val(k, v, dimension=0))
    _same(blax.top_k(k, 3), jax.lax.top_k(k, 3))
    _same(bt.jit(lambda a: blax.top_k(a, 2))(k), jax.lax.top_k(k, 2))


def test_lax_dot_batch_matmul():
    a = RNG.normal(size=(3, 4)).astype(F32)
    b = RNG.normal(size=(4, 2)).astype(F32)
    _close(blax.dot(a, b), jax.lax.dot(a, b), rtol=1e-5, atol=1e-5)
    _close(blax.dot(a[0], b), jax.lax.dot(a[0], b), rtol=1e-5, atol=1e-5)
    p = RNG.normal(size=(2, 3, 4)).astype(F32)
    q = RNG.normal(size=(2, 4, 5)).astype(F32)
    _close(blax.batch_matmul(p, q), jax.lax.batch_matmul(p, q), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "name", ["scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max"]
)
@pytest.mark.parametrize("mode", [None, "clip"])
def test_lax_scatter_family(name, mode):
    x = np.arange(1, 13, dtype=F32).reshape(3, 4)
    # Rows at [0], [2], [0], [5] (out of bounds): windows of whole rows.
    idx = np.array([[0], [2], [0], [5]], np.int32)
    upd = RNG.normal(size=(4, 4)).astype(F32)
    dn_j = jax.lax.ScatterDimensionNumbers(
        update_window_dims=(1,),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
    )
    dn_b = blax.ScatterDimensionNumbers(
        update_window_dims=(1,),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
    )
    want = getattr(jax.lax, name)(x, idx, upd, dn_j, mode=mode)
    _close(getattr(blax, name)(x, idx, upd, dn_b, mode=mode), want)
    # Point updates at (row, col) pairs.
    idx2 = np.array([[0, 1], [2, 3], [0, 1], [1, 0]], np.int32)
    upd2 = np.array([10.0, 20.0, 30.0, 40.0], F32)
    dn2 = dict(
        update_window_dims=(),
        inserted_window_dims=(0, 1),
        scatter_dims_to_operand_dims=(0, 1),
    )
    want2 = getattr(jax.lax, name)(
        x, idx2, upd2, jax.lax.ScatterDimensionNumbers(**dn2), mode=mode
    )
    got2 = bt.jit(
        lambda a, i, u: getattr(blax, name)(
            a, i, u, blax.ScatterDimensionNumbers(**dn2), mode=mode
        )
    )(x, idx2, upd2)
    _close(got2, want2)


def test_lax_grads():
    for name in ("sinh", "erf", "square", "cumsum", "cumlogsumexp"):
        bf = lambda v, n=name: getattr(blax, n)(v).sum()  # noqa: E731
        jf = lambda v, n=name: getattr(jax.lax, n)(v).sum()  # noqa: E731
        _close(bt.grad(bf)(X), jax.grad(jf)(X), rtol=2e-5, atol=2e-5)


# ---- scipy.special ----

SPECIAL = [
    ("ndtr", (X,), APPROX),
    (
        "log_ndtr",
        (np.array([-30.0, -12.0, -5.0, -1.0, 0.0, 2.0, 6.0, 10.0], F32),),
        dict(rtol=5e-5, atol=1e-6),
    ),
    ("ndtri", (UNIT,), dict(rtol=2e-5, atol=1e-6)),
    (
        "digamma",
        (np.array([-2.5, -0.5, 0.5, 1.0, 3.0, 10.0, 100.0], F32),),
        dict(rtol=2e-5, atol=2e-6),
    ),
    ("gamma", (np.array([-2.5, -0.5, 0.5, 3.0, 6.5], F32),), dict(rtol=5e-5)),
    ("gammasgn", (np.array([-2.5, -1.5, -0.5, 0.0, 0.5, 3.0], F32),), {}),
    ("loggamma", (POS,), APPROX),
    ("betaln", (POS[:6], POS[:6][::-1].copy()), dict(rtol=1e-4, atol=1e-5)),
    ("beta", (POS[:6], POS[1:7]), dict(rtol=1e-4)),
    ("factorial", (np.array([-1.0, 0.0, 1.0, 4.0, 6.5], F32),), dict(rtol=5e-5)),
    ("entr", (np.array([-1.0, 0.0, 0.5, 3.0], F32),), {}),
    (
        "rel_entr",
        (
            np.array([0.0, 0.0, 1.0, 1.0, -1.0], F32),
            np.array([0.0, 1.0, 0.0, 2.0, 1.0], F32),
        ),
        {},
    ),
    (
        "kl_div",
        (
            np.array([0.0, 0.0, 1.0, 1.0, -1.0], F32),
            np.array([0.0, 1.0, 0.0, 2.0, 1.0], F32),
        ),
        {},
    ),
    ("boxcox", (POS, F32(0.5)), {}),
    ("boxcox", (POS, F32(0.0)), {}),
    ("boxcox1p", (POS, F32(-0.3)), {}),
]


@pytest.mark.parametrize(
    "name,args,tol", SPECIAL, ids=[f"{c[0]}{i}" for i, c in enumerate(SPECIAL)]
)
def test_special(name, args, tol):
    _close(getattr(bss, name)(*args), getattr(jss, name)(*args), **tol)


def test_special_multigammaln_softmax():
    a = np.array([2.0, 3.5, 10.0], F32)
    _close(bss.multigammaln(a, 3), jss.multigammaln(a, 3), rtol=5e-5)
    x = RNG.normal(size=(3, 4)).astype(F32)
    _close(bss.softmax(x), jss.softmax(x))
    _close(bss.log_softmax(x, axis=1), jss.log_softmax(x, axis=1))


def test_special_grads():
    _close(
        bt.grad(lambda v: bss.ndtr(v).sum())(X),
        jax.grad(lambda v: jss.ndtr(v).sum())(X),
        **APPROX,
    )
    _close(
        bt.grad(lambda v: bss.log_ndtr(v).sum())(X),
        jax.grad(lambda v: jss.log_ndtr(v).sum())(X),
        rtol=5e-5,
        atol=5e-6,
    )


# ---- scipy.stats ----

STATS = [
    (
        "norm",
        ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
        (X, F32(0.5), F32(2.0)),
    ),
    ("norm", ("ppf", "isf"), (UNIT, F32(0.5), F32(2.0))),
    ("logistic", ("logpdf", "pdf", "cdf", "sf"), (X, F32(0.5), F32(2.0))),
    ("logistic", ("ppf", "isf"), (UNIT, F32(0.5), F32(2.0))),
    (
        "expon",
        ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
        (X, F32(-1.0), F32(2.0)),
    ),
    ("expon", ("ppf",), (UNIT, F32(-1.0), F32(2.0))),
    ("uniform", ("logpdf", "pdf", "cdf"), (X, F32(-1.0), F32(3.0))),
    ("uniform", ("ppf",), (UNIT, F32(-1.0), F32(3.0))),
    ("laplace", ("logpdf", "pdf", "cdf"), (X, F32(0.5), F32(2.0))),
    (
        "cauchy",
        ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
        (X, F32(0.5), F32(2.0)),
    ),
    ("cauchy", ("ppf", "isf"), (UNIT[1:-1], F32(0.5), F32(2.0))),
    (
        "gumbel_r",
        ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
        (X, F32(0.5), F32(2.0)),
    ),
    ("gumbel_r", ("ppf",), (UNIT, F32(0.5), F32(2.0))),
    (
        "gumbel_l",
        ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
        (X, F32(0.5), F32(2.0)),
    ),
    ("gumbel_l", ("ppf",), (UNIT, F32(0.5), F32(2.0))),
    ("pareto", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), (POS + 1, F32(2.5))),
    ("pareto", ("ppf",), (UNIT, F32(2.5))),
    ("t", ("logpdf", "pdf"), (X, F32(3.0), F32(0.5), F32(2.0))),
    ("gamma", ("logpdf", "pdf"), (POS, F32(2.5), F32(0.0), F32(1.5))),
    ("beta", ("logpdf", "pdf"), (UNIT, F32(2.0), F32(3.5))),
    ("chi2", ("logpdf", "pdf"), (POS, F32(3.0))),
    ("bernoulli", ("logpmf", "pmf"), (np.array([0.0, 1.0, 2.0, -1.0], F32), F32(0.3))),
    (
        "bernoulli",
        ("cdf", "ppf"),
        (np.array([-0.5, 0.0, 0.5, 0.7, 1.0], F32), F32(0.3)),
    ),
    (
        "poisson",
        ("logpmf", "pmf"),
        (np.array([0.0, 1.0, 3.0, 2.5, -1.0, 12.0], F32), F32(3.5)),
    ),
    ("geom", ("logpmf", "pmf"), (np.array([0.0, 1.0, 3.0, 7.0], F32), F32(0.3))),
]


@pytest.mark.parametrize(
    "dist,fns,args", STATS, ids=[f"{c[0]}-{c[1][0]}" for c in STATS]
)
def test_stats(dist, fns, args):
    for fn in fns:
        got = getattr(getattr(bst, dist), fn)(*args)
        want = getattr(getattr(jst, dist), fn)(*args)
        _close(got, want, rtol=5e-5, atol=2e-6)


def test_stats_defaults_jit_and_grad():
    _close(bst.norm.logpdf(X), jst.norm.logpdf(X))
    _close(bt.jit(bst.norm.cdf)(X), jst.norm.cdf(X), **APPROX)
    _close(
        bt.grad(lambda m: bst.norm.logpdf(X, m, 2.0).sum())(F32(0.3)),
        jax.grad(lambda m: jst.norm.logpdf(X, m, 2.0).sum())(F32(0.3)),
    )
    _close(
        bt.grad(lambda d: bst.t.logpdf(X, d).sum())(F32(4.0)),
        jax.grad(lambda d: jst.t.logpdf(X, d).sum())(F32(4.0)),
        rtol=1e-4,
        atol=1e-5,
    )


def test_multivariate_normal():
    a = RNG.normal(size=(3, 3)).astype(F32)
    cov = (a @ a.T + 3 * np.eye(3)).astype(F32)
    mean = np.array([0.5, -1.0, 2.0], F32)
    x = RNG.normal(size=(5, 3)).astype(F32)
    _close(
        bst.multivariate_normal.logpdf(x, mean, cov),
        jst.multivariate_normal.logpdf(x, mean, cov),
        rtol=2e-5,
        atol=2e-5,
    )
    _close(
        bst.multivariate_normal.pdf(x, mean, cov),
        jst.multivariate_normal.pdf(x, mean, cov),
        rtol=5e-5,
        atol=1e-9,
    )
    _close(
        bst.multivariate_normal.logpdf(x, mean, F32(2.0)),
        jst.multivariate_normal.logpdf(x, mean, F32(2.0)),
        rtol=2e-5,
    )
    _close(
        bst.multivariate_normal.logpdf(X, F32(0.5), F32(2.0)),
        jst.multivariate_normal.logpdf(X, F32(0.5), F32(2.0)),
        rtol=2e-5,
    )


# ---- nn ----

NN = [
    ("hard_sigmoid", {}),
    ("hard_silu", {}),
    ("hard_swish", {}),
    ("mish", {}),
    ("sparse_plus", {}),
    ("sparse_sigmoid", {}),
    ("squareplus", {}),
    ("squareplus", {"b": 1.0}),
    ("tanh", {}),
    ("identity", {}),
]


@pytest.mark.parametrize("name,kw", NN, ids=[f"{n}{k}" for n, k in NN])
def test_nn_activations(name, kw):
    bf = lambda x: getattr(bt.nn, name)(x, **kw)  # noqa: E731
    jf = lambda x: getattr(jax.nn, name)(x, **kw)  # noqa: E731
    _close(bf(X), jf(X))
    _close(bt.vmap(bt.grad(bf))(X), jax.vmap(jax.grad(jf))(X))


def test_nn_glu_log1mexp_logmeanexp():
    x = RNG.normal(size=(3, 6)).astype(F32)
    _close(bt.nn.glu(x), jax.nn.glu(x))
    _close(bt.nn.glu(x[:2], axis=0), jax.nn.glu(x[:2], axis=0))
    _close(bt.nn.log1mexp(POS), jax.nn.log1mexp(POS))
    for axis in (None, 0, 1):
        _close(bt.nn.logmeanexp(x, axis=axis), jax.nn.logmeanexp(x, axis=axis))


# ---- random ----

RANDOM = [
    ("exponential", (), dict(rtol=0, atol=0)),
    ("laplace", (), dict(rtol=0, atol=0)),
    ("logistic", (), dict(rtol=0, atol=0)),
    ("cauchy", (), dict(rtol=2e-6, atol=1e-6)),
    ("rademacher", (), dict(rtol=0, atol=0)),
    ("maxwell", (), dict(rtol=2e-6, atol=1e-6)),
    ("pareto", (F32(2.5),), dict(rtol=2e-6, atol=1e-6)),
    ("weibull_min", (F32(1.5), F32(2.0)), dict(rtol=2e-6, atol=1e-6)),
    ("rayleigh", (F32(1.5),), dict(rtol=2e-6, atol=1e-6)),
    ("lognormal", (F32(0.7),), dict(rtol=2e-6, atol=1e-6)),
    ("geometric", (F32(0.3),), dict(rtol=0, atol=0)),
    ("double_sided_maxwell", (F32(0.5), F32(2.0)), dict(rtol=2e-6, atol=1e-6)),
]


@pytest.mark.parametrize("name,params,tol", RANDOM, ids=[c[0] for c in RANDOM])
def test_random_transforms(name, params, tol):
    for seed in (0, 7):
        got = getattr(bt.random, name)(bt.random.PRNGKey(seed), *params, shape=(1000,))
        want = getattr(jax.random, name)(
            jax.random.PRNGKey(seed), *params, shape=(1000,)
        )
        _close(got, want, **tol)
    if name in ("exponential", "laplace", "logistic", "cauchy", "maxwell"):
        got = getattr(bt.random, name)(bt.random.key(3), (4, 5))
        want = getattr(jax.random, name)(jax.random.key(3), (4, 5))
        _close(got, want, **tol)


def test_random_clone():
    k = bt.random.PRNGKey(1)
    _close(bt.random.clone(k), np.asarray(k))


def test_precision_has_jax_members_and_string_forms():
    import jax

    assert [m.name for m in bt.lax.Precision] == [m.name for m in jax.lax.Precision]
    for s in ("default", "high", "highest", "float32", "tensorfloat32", "bfloat16"):
        assert bt.lax.Precision(s).name == jax.lax.Precision(s).name
    assert str(bt.lax.Precision.HIGHEST) == str(jax.lax.Precision.HIGHEST)
    with pytest.raises(ValueError, match="unknown precision"):
        bt.lax.Precision("float64")


def test_weakly_typed_tracers_in_full_like_dtype_and_result_type():
    # A Python scalar passed to a jitted function is a weakly typed tracer:
    # these raised "Tracer is not a Python scalar" (_ops.weak_dtype).
    import jax
    import jax.numpy as jnp

    import baton.numpy as bnp

    def check(lib, np_):
        got = lib.jit(lambda x: lib.lax.full_like(x, 3))(2.0)
        np.testing.assert_array_equal(np.asarray(got), np.float32(3.0))
        assert lib.jit(lambda x: np_.result_type(x) == np.float32)(2.0)
        assert lib.jit(lambda x: lib.lax.dtype(x) == np.int32)(2)
        assert lib.jit(lambda x: lib.lax.full_like(x, 1).dtype == np.bool_)(True)

    check(bt, bnp)
    check(jax, jnp)
