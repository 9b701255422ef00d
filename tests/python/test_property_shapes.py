"""Property-based tests: random sequences of reshape, transpose, swapaxes,
moveaxis, expand_dims, squeeze, flip, broadcast_to, ravel, stack,
concatenate, split, take and basic indexing, applied to a numpy array and to
the same data on a baton device, over every dtype and input layout: after
every step shapes, dtypes and values (bitwise) are numpy's."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import baton as bt
import baton.numpy as bnp

import _property_strategies as P
from _property_strategies import apply_shape_op, examples, returns_memory

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64


@st.composite
def array_and_program(draw):
    a = draw(P.host_arrays(), label="a")
    return a, draw(P.shape_programs(a.shape), label="program")


@examples(200)
@given(case=array_and_program(), start=st.sampled_from(["device_put", "bnp.array"]))
@example(
    case=(np.zeros((0, 3), np.float32), [("reshape", (3, 0, 1)), ("squeeze", 2)]),
    start="device_put",
)
@returns_memory
def test_shape_op_sequences_match_numpy(case, start):
    a, program = case
    want = a
    got = bt.device_put(a) if start == "device_put" else bnp.array(a)
    for step, op in enumerate(program):
        want = apply_shape_op(np, want, op)
        got = apply_shape_op(bnp, got, op)
        assert isinstance(got, bt.Array), (step, op)
        assert (got.shape, got.dtype) == (want.shape, want.dtype), (step, op)
    P.assert_bitwise_equal(np.asarray(got), np.asarray(want, order="C"))


@examples(60)
@given(case=array_and_program())
@returns_memory
def test_shape_programs_under_jit_match_numpy(case):
    a, program = case

    def run(x):
        for op in program:
            x = apply_shape_op(bnp, x, op)
        return x

    want = a
    for op in program:
        want = apply_shape_op(np, want, op)
    f = bt.jit(run)
    P.assert_bitwise_equal(np.asarray(f(bt.device_put(a))), np.asarray(want, order="C"))
