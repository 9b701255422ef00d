"""bt.test_util.check_grads (as jax.test_util): passes for correct
derivatives, raises AssertionError naming the check for wrong ones."""

from __future__ import annotations

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton.test_util import check_grads, check_jvp, check_vjp


def test_correct_derivatives_pass_to_third_order():
    check_grads(lambda x: bnp.sin(x) * x, (1.5,), order=3)
    w = np.array([0.1, 0.2, -0.3], np.float32)
    inputs = np.random.RandomState(0).randn(4, 3).astype(np.float32)

    def loss(w, b):
        p = 1 / (1 + bnp.exp(-(inputs @ w + b)))
        return -bnp.sum(bnp.log(p))

    check_grads(loss, (w, np.float32(0.5)), order=2)
    check_grads(lambda t: {"y": t["a"] * t["b"]}, ({"a": 2.0, "b": 3.0},), order=1)


def _wrong_jvp():
    f = bt.custom_jvp(lambda x: bnp.sin(x))
    f.defjvp(lambda p, t: (bnp.sin(p[0]), 2.0 * t[0]))  # should be cos(x) t
    return f


@pytest.mark.parametrize(
    "mode, what", [("fwd", "JVP tangent"), ("rev", "VJP inner product")]
)
def test_a_wrong_rule_is_caught_in_each_mode(mode, what):
    with pytest.raises(AssertionError, match=what):
        check_grads(_wrong_jvp(), (1.0,), order=1, modes=(mode,))


def test_a_wrong_vjp_rule_is_caught():
    f = bt.custom_vjp(lambda x: x * x)
    f.defvjp(lambda x: (x * x, x), lambda x, ct: (3.0 * x * ct,))  # should be 2x
    with pytest.raises(AssertionError, match="VJP"):
        check_vjp(f, lambda *p: bt.vjp(f, *p), (1.5,))
    check_jvp(lambda x: x * x, lambda p, t: bt.jvp(lambda x: x * x, p, t), (1.5,))


def test_bad_arguments():
    with pytest.raises(ValueError, match="order"):
        check_grads(bnp.sin, (1.0,), order=0)
    with pytest.raises(ValueError, match="mode"):
        check_grads(bnp.sin, (1.0,), order=1, modes=("sideways",))
