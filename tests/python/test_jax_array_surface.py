"""What code written for JAX expects of arrays and tracers (issue 38):
``isinstance(tracer, bt.Array)`` as with ``jax.Array``, the jax.Array
methods that are jax.numpy functions (``take``, ``real``/``imag``, ...),
``*_like`` of a ShapeDtypeStruct, ``precision=`` on products, and
``bt.log_compiles()``."""

import logging
import pickle

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton import _baton

X = np.arange(6, dtype=np.float32).reshape(2, 3)


# ---- bt.Array is an abstract base of arrays and tracers --------------------


def test_isinstance_array_holds_for_tracers_of_every_transform():
    seen = []

    def f(x):
        seen.append(
            (
                isinstance(x, bt.Array),
                isinstance(x, bnp.ndarray),
                isinstance(x, bt.core.Tracer),
            )
        )
        return x * 2

    a = bt.device_put(X)
    bt.jit(f)(a)
    bt.grad(lambda x: f(x).sum())(a)
    bt.vmap(f)(a)
    bt.jvp(f, (a,), (a,))
    assert seen and all(s == (True, True, True) for s in seen), seen
    assert isinstance(a, bt.Array) and isinstance(a, bnp.ndarray)
    assert not isinstance(a, bt.core.Tracer)  # the difference stays visible
    assert issubclass(bt.lax.Tracer, bt.Array) and issubclass(type(a), bt.Array)


def test_array_abc_does_not_take_other_data():
    for v in (X, np.float32(1), 1.0, [1.0], None, "x"):
        assert not isinstance(v, bt.Array), type(v)
    assert bnp.ndarray is bt.Array


def test_internal_concrete_class_keeps_tracers_out():
    # baton's own modules test the concrete class, which tracers are not.
    def f(x):
        assert not isinstance(x, _baton.Array)
        return x

    bt.jit(f)(bt.device_put(X))
    assert type(bt.device_put(X)) is _baton.Array


def test_array_class_forwards_to_the_concrete_class_and_cannot_be_made():
    assert bt.Array.sum is _baton.Array.sum
    with pytest.raises(TypeError, match="cannot be created directly"):
        bt.Array()
    with pytest.raises(TypeError, match="cannot be created directly"):
        bt.Array.__new__(bt.Array)
    bt.Array._test_attached = property(lambda self: 7)
    try:
        assert bt.device_put(X)._test_attached == 7
    finally:
        del bt.Array._test_attached
    assert not hasattr(_baton.Array, "_test_attached")
    a = pickle.loads(pickle.dumps(bt.device_put(X)))
    np.testing.assert_array_equal(np.asarray(a), X)


# ---- jax.Array methods -----------------------------------------------------


@pytest.mark.parametrize("traced", [False, True])
def test_numpy_methods_on_arrays_and_tracers(traced):
    idx = np.array([0, 4], np.int32)

    def methods(x):
        return (
            x.real,
            x.imag,
            x.conj(),
            x.take(idx),
            x.take(idx[:1], axis=1),
            x.cumsum(axis=1),
            x.cumprod(),
            x.sort(axis=0),
            x.argsort(),
            x.repeat(2, axis=0),
            x.diagonal(),
            x.trace(),
            x.ptp(),
            x.compress(np.array([False, True]), axis=0),
            x.searchsorted(2.0) if x.ndim == 1 else x.ravel().searchsorted(2.0),
        )

    got = bt.jit(methods)(X) if traced else methods(bt.device_put(X))
    want = (
        X,
        np.zeros_like(X),
        X,
        X.take(idx),
        X.take(idx[:1], axis=1),
        X.cumsum(axis=1),
        X.cumprod(),
        np.sort(X, axis=0),
        X.argsort(),
        X.repeat(2, axis=0),
        X.diagonal(),
        X.trace(),
        np.ptp(X),
        X.compress([False, True], axis=0),
        X.ravel().searchsorted(2.0),
    )
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w)
    assert np.asarray(got[1]).dtype == np.float32


def test_real_and_imag_differentiate_like_identity_and_zero():
    g = bt.grad(lambda x: (x.real * 3 + x.imag).sum())(X)
    np.testing.assert_array_equal(np.asarray(g), np.full_like(X, 3))


# ---- *_like of anything with shape and dtype --------------------------------


def test_like_functions_take_shape_dtype_structs():
    s = bt.ShapeDtypeStruct((2, 3), np.int32)
    for fn, v in ((bnp.zeros_like, 0), (bnp.ones_like, 1)):
        out = fn(s)
        assert out.shape == (2, 3) and out.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), v))
    assert bnp.full_like(s, 7, dtype=np.float32).dtype == np.float32
    assert bt.jit(lambda: bnp.zeros_like(s))().shape == (2, 3)
    tree = {
        "w": bt.ShapeDtypeStruct((4,), np.float32),
        "b": bt.ShapeDtypeStruct((), np.float32),
    }
    zs = bt.tree.map(bnp.zeros_like, tree)
    assert zs["w"].shape == (4,) and zs["b"].shape == ()


# ---- precision= on products -------------------------------------------------


def test_products_accept_jax_precision_arguments():
    P = bt.lax.Precision
    a = X
    for p in (None, P.HIGHEST, "highest", (P.DEFAULT, "high")):
        np.testing.assert_allclose(
            np.asarray(bnp.vdot(a, a, precision=p)), np.vdot(a, a)
        )
        np.testing.assert_allclose(np.asarray(bnp.dot(a, a.T, precision=p)), a @ a.T)
        np.testing.assert_allclose(np.asarray(bnp.matmul(a, a.T, precision=p)), a @ a.T)
        np.testing.assert_allclose(
            np.asarray(bnp.tensordot(a, a, 2, precision=p)), np.tensordot(a, a, 2)
        )
        np.testing.assert_allclose(
            np.asarray(bnp.inner(a, a, precision=p)), np.inner(a, a)
        )
    with pytest.raises(ValueError, match="unknown precision"):
        bnp.dot(a, a.T, precision="fastest-please")
    i8 = a.astype(np.int8)
    out = bnp.dot(i8, i8.T, preferred_element_type=np.float32)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), a @ a.T)


# ---- bt.log_compiles --------------------------------------------------------


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_log_compiles_logs_cache_misses_only():
    h = _Records()
    logger = logging.getLogger("baton.jit")
    logger.addHandler(h)
    try:

        def step(x):
            return x * 2 + 1

        f = bt.jit(step)
        f(X)  # compiled outside the context: not logged
        with bt.log_compiles():
            f(X)  # cached
            assert h.messages == []
            f(X[:1])  # a new shape: traced and compiled
        f(X[:, :1])  # after the context: not logged
        with bt.log_compiles(False):
            f(X[:1, :1])
    finally:
        logger.removeHandler(h)
    assert len(h.messages) == 1, h.messages
    assert h.messages[0].startswith("Finished tracing jit(step) for compilation in ")
