"""JAX's error classes (DESIGN 5.4): what a ported `except` clause catches."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton import errors


def _traced(f):
    return lambda: bt.jit(f)(np.float32(1.0))


def test_hierarchy():
    assert issubclass(errors.TracerBoolConversionError, errors.ConcretizationTypeError)
    assert issubclass(errors.ConcretizationTypeError, TypeError)
    assert issubclass(errors.TracerIntegerConversionError, TypeError)
    assert issubclass(errors.TracerArrayConversionError, TypeError)
    assert issubclass(errors.NonConcreteBooleanIndexError, IndexError)


def test_bool_of_tracer():
    with pytest.raises(errors.TracerBoolConversionError, match="Python bool") as e:
        _traced(lambda x: 1 if x > 0 else 0)()
    assert "lax.where" in str(e.value)  # baton's advice stays


def test_int_float_index_array_of_tracer():
    with pytest.raises(errors.ConcretizationTypeError, match="Python int"):
        _traced(lambda x: int(x))()
    with pytest.raises(errors.ConcretizationTypeError, match="Python float"):
        _traced(lambda x: float(x))()
    with pytest.raises(errors.TracerIntegerConversionError, match="index"):
        bt.jit(lambda i: [1, 2][i])(np.int32(0))
    with pytest.raises(errors.TracerArrayConversionError, match="numpy"):
        _traced(lambda x: np.asarray(x))()


def test_under_jitted_grad_too():
    # Called eagerly, grad knows its argument (as JAX's does): no error.
    assert float(bt.grad(lambda x: x if x > 0 else -x)(-1.0)) == -1.0
    with pytest.raises(errors.TracerBoolConversionError):
        bt.jit(bt.grad(lambda x: x if x > 0 else -x))(1.0)


def test_traced_boolean_mask():
    x = bt.device_put(np.arange(6, dtype=np.float32))
    with pytest.raises(errors.NonConcreteBooleanIndexError, match=r"bnp\.where"):
        bt.jit(lambda x: x[x > 2])(x)
    with pytest.raises(IndexError):
        bt.jit(lambda x: x[x > 2])(x)


def test_contraction_mismatch_is_type_error():
    a = bnp.ones((2, 3))
    for f in (
        lambda: bnp.dot(a, a),
        lambda: bnp.matmul(a, a),
        lambda: a @ a,
        lambda: bt.jit(lambda x: x @ x)(a),
        lambda: bt.jit(lambda x: bnp.dot(x, x))(a),
        lambda: bnp.dot(bnp.ones(3), bnp.ones(2)),
        lambda: bnp.tensordot(a, a, axes=1),
    ):
        with pytest.raises(TypeError, match=r"differ|not aligned"):
            f()
    with pytest.raises(ValueError, match="sizes"):  # einsum: ValueError, as JAX
        bnp.einsum("ij,jk", a, a)
