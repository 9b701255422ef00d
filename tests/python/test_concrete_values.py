"""Python control flow on values under bt.grad & co. called outside bt.jit
(python/src/concrete.cc), and bt.lax called eagerly (baton/_eager_lax.py).

As in JAX: a transformation called eagerly knows its arguments, so
``bool(x > 0)`` inside the differentiated function is the concrete answer
and the trace follows the branch Python took; under bt.jit nothing is
known and the JAX error classes stay.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton import errors, lax

from _util import floats, in_use


def piecewise(x):
    if x < 3:
        return 3.0 * x**2
    return -4.0 * x


def test_grad_follows_the_branch_python_takes():
    assert float(bt.grad(piecewise)(2.0)) == 12.0
    assert float(bt.grad(piecewise)(4.0)) == -4.0
    # Each call traces afresh: a later call on the other side is not stale.
    assert float(bt.grad(piecewise)(2.5)) == 15.0


def test_value_and_grad_vjp_jvp_and_jacobians_see_values():
    v, g = bt.value_and_grad(piecewise)(4.0)
    assert (float(v), float(g)) == (-16.0, -4.0)
    out, pullback = bt.vjp(piecewise, 2.0)
    assert float(out) == 12.0 and float(pullback(1.0)[0]) == 12.0
    p, t = bt.jvp(piecewise, (4.0,), (1.0,))
    assert (float(p), float(t)) == (-16.0, -4.0)
    assert float(bt.jacrev(piecewise)(2.0)) == 12.0
    assert float(bt.jacfwd(piecewise)(4.0)) == -4.0


def test_nested_grad_sees_values_through_every_frame():
    assert float(bt.grad(bt.grad(piecewise))(2.0)) == 6.0
    assert float(bt.grad(bt.grad(piecewise))(4.0)) == 0.0


def test_python_while_loop_on_a_value_and_int_float_conversions():
    def f(x):
        y = x
        while y < 10.0:  # as many multiplications as the value needs
            y = y * 2.0
        return y * float(x) + int(x > 1)

    # x = 3: y = 3 -> 6 -> 12; f = 12 * 3 + 1 with x treated as data in y
    # (float(x) is a constant of the trace, as in JAX).
    assert float(bt.grad(f)(3.0)) == 4.0 * 3.0
    assert float(bt.grad(f)(0.5)) == 32.0 * 0.5


def test_arrays_closed_over_and_pytrees_are_known_too():
    w = bt.device_put(np.array([1.0, -2.0, 0.5], np.float32))

    def loss(params, x):
        s = bnp.sum(params["a"] * w * x)
        if s > 0:
            return s
        return -2.0 * s

    x = np.array([1.0, 1.0, 1.0], np.float32)
    pos = {"a": bt.device_put(np.array([1.0, 0.0, 0.0], np.float32))}
    neg = {"a": bt.device_put(np.array([0.0, 1.0, 0.0], np.float32))}
    np.testing.assert_array_equal(
        np.asarray(bt.grad(loss)(pos, x)["a"]), [1.0, -2.0, 0.5]
    )
    np.testing.assert_array_equal(
        np.asarray(bt.grad(loss)(neg, x)["a"]), [-2.0, 4.0, -1.0]
    )


def test_under_jit_the_jax_error_classes_stay():
    with pytest.raises(errors.TracerBoolConversionError, match="bool"):
        bt.jit(bt.grad(piecewise))(2.0)
    with pytest.raises(TypeError):  # TracerBoolConversionError is a TypeError
        bt.jit(piecewise)(2.0)

    def to_int(x):
        return x * int(x)

    with pytest.raises(errors.ConcretizationTypeError):
        bt.jit(bt.grad(to_int))(2.0)


def test_vmap_values_are_not_concrete():
    with pytest.raises(errors.TracerBoolConversionError):
        bt.vmap(bt.grad(piecewise))(np.array([2.0, 4.0], np.float32))


def test_bool_of_many_elements_is_numpys_error():
    def f(x):
        if x > 0:
            return bnp.sum(x)
        return -bnp.sum(x)

    with pytest.raises(ValueError, match="ambiguous"):
        bt.grad(f)(np.ones(3, np.float32))


# ---- bt.lax eagerly ----


def test_lax_operations_run_eagerly():
    x = bt.device_put(np.arange(3.0, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(lax.add(x, 1.0)), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(
        np.asarray(lax.exp(x)), np.exp([0.0, 1.0, 2.0]), rtol=1e-6
    )
    np.testing.assert_array_equal(
        np.asarray(lax.select(x > 1, x, -x)), [0.0, -1.0, 2.0]
    )
    assert lax.reshape(x, (3, 1)).shape == (3, 1)
    assert lax.iota(np.int32, 4).tolist() == [0, 1, 2, 3]
    assert lax.add(x, 1.0).dtype == np.float32  # the Python scalar is weak
    np.testing.assert_array_equal(
        np.asarray(lax.add(np.ones(2, np.float32), 1.0)), [2.0, 2.0]
    )


def test_lax_control_flow_runs_eagerly():
    x = bt.device_put(np.arange(3.0, dtype=np.float32))
    np.testing.assert_array_equal(
        np.asarray(lax.fori_loop(0, 3, lambda i, c: c + 1.0, x)), [3.0, 4.0, 5.0]
    )
    np.testing.assert_array_equal(
        np.asarray(lax.cond(False, lambda a: a + 1, lambda a: a - 1, x)),
        [-1.0, 0.0, 1.0],
    )
    assert int(lax.while_loop(lambda c: c < 10, lambda c: c * 2, 1)) == 16
    carry, ys = lax.scan(lambda c, v: (c + v, c), 0.0, x)
    assert float(carry) == 3.0 and np.asarray(ys).tolist() == [0.0, 0.0, 1.0]
    # A closure over a different array each call is never served stale.
    for k in (1.0, 2.0):
        y = bt.device_put(np.full(3, k, np.float32))
        np.testing.assert_array_equal(
            np.asarray(lax.cond(True, lambda a: a + y, lambda a: a, x)),  # noqa: B023
            np.arange(3.0) + k,
        )


def test_eager_lax_keeps_no_argument_alive():
    def run(x):
        return lax.mul(x, 2.0), lax.mul(x, 3.0)

    run(bt.device_put(floats(1 << 14)))  # compiled now (with its constants)
    gc.collect()
    before = in_use()
    x = bt.device_put(floats(1 << 14))
    y, z = run(x)  # the compiled operations, reused
    assert in_use() == before + 3 * (1 << 16)
    y.block_until_ready()  # storage returns once the work on it is done (R1)
    z.block_until_ready()
    del x, y, z
    # The compiled operations stay cached; the arrays they ran on do not.
    assert in_use() == before


def test_eager_lax_errors_name_the_op():
    x = bt.device_put(np.arange(3.0, dtype=np.float32))
    with pytest.raises(TypeError, match="shift_left"):
        lax.shift_left(x, x)
    with pytest.raises(ValueError, match="reshape"):
        lax.reshape(x, (2, 2))
