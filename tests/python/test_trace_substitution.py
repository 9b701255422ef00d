"""``transforms.substituting`` (python/src/trace_frames.h): a Tracer of a
trace that has finished stands for a live value inside the block, so a
function that closed over it can be traced again elsewhere (how a grad
made in a vmap body over a collective is computed on the vmapped
function, baton/_transform_batching.py). Outside the block, and for
Tracers not named, using a finished Tracer still raises."""

import numpy as np
import pytest

import baton as bt
from baton._baton import lax
from baton._baton import transforms


def _escaped():
    """A Tracer whose trace has finished, and a function closing over it."""
    cell = {}

    def f(x):
        cell["t"] = x * 2
        return x

    bt.jit(f)(np.float32(1.0))
    t = cell["t"]
    return t, lambda y: y + t * 10


def test_a_finished_tracer_stands_for_the_value_named_inside_the_block():
    t, g = _escaped()

    def h(x, v):
        with transforms.substituting([t], [v]):
            return g(x), (t + 1).astype("float32"), t.reshape(1), t.T

    out = bt.jit(h)(np.float32(3.0), np.float32(4.0))
    assert [float(np.asarray(o).reshape(())) for o in out] == [43.0, 5.0, 4.0, 4.0]


def test_outside_the_block_a_finished_tracer_still_raises():
    t, g = _escaped()

    def h(x, v):
        with transforms.substituting([t], [v]):
            pass
        return g(x)

    with pytest.raises(RuntimeError, match="has finished"):
        bt.jit(h)(np.float32(3.0), np.float32(4.0))


def test_substituting_checks_its_arguments():
    t, _ = _escaped()
    with pytest.raises(ValueError, match="as many values"):
        with transforms.substituting([t], []):
            pass

    def h(v):
        with transforms.substituting([t], [np.float32(1.0)]):
            return v

    with pytest.raises(TypeError, match="must be Tracers"):
        bt.jit(h)(np.float32(1.0))
    assert lax.Tracer is type(t)
