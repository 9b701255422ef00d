"""Errors of baton.numpy's arrangement, selection and index-building
functions: numpy's exception classes and clear messages, and
ConcretizationTypeError for data-dependent shapes inside jit."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton.errors import ConcretizationTypeError

from _arrange_check import sample

# numpy's defaults are 64-bit: compared with numpy, with x64 on (conftest.py)
pytestmark = pytest.mark.x64


# ---- errors ----


def test_errors_have_numpy_classes_and_clear_messages():
    x = bt.device_put(sample(np.float32))
    m = bt.device_put(np.ones((2, 3), np.float32))
    v = bt.device_put(np.ones(3, np.float32))
    cases = [
        (lambda: bnp.array_split(x, 0), ValueError, "sections must be > 0"),
        (lambda: bnp.vsplit(v, 2), ValueError, "2 or more dimensions"),
        (lambda: bnp.dsplit(m, 2), ValueError, "3 or more dimensions"),
        (lambda: bnp.hsplit(np.float32(1), 1), ValueError, "1 or more"),
        (lambda: bnp.block([]), ValueError, "empty list"),
        (lambda: bnp.block([[v], v]), ValueError, "depths are mismatched"),
        (lambda: bnp.block([(v, v)]), TypeError, "tuple"),
        (lambda: bnp.fliplr(v), ValueError, "at least 2-d"),
        (lambda: bnp.flipud(np.float32(1)), ValueError, "at least 1-d"),
        (lambda: bnp.rot90(m, axes=(0, 0)), ValueError, "must be different"),
        (lambda: bnp.rot90(m, axes=(0,)), ValueError, "len\\(axes\\) must be 2"),
        (lambda: bnp.rot90(v), ValueError, "at least 2-d"),
        (lambda: bnp.roll(x, (1, 2, 3), (0, 1)), ValueError, "same length"),
        (lambda: bnp.roll(x, 1.5, 0), TypeError, "shift"),
        (lambda: bnp.rollaxis(x, 0, 5), np.exceptions.AxisError, "start"),
        (lambda: bnp.matrix_transpose(v), ValueError, "two-dimensional"),
        (lambda: bnp.permute_dims(m, (0,)), ValueError, "don't match"),
        (lambda: bnp.repeat(v, [1, 2]), ValueError, "do not match"),
        (lambda: bnp.repeat(v, -1), ValueError, "negative"),
        (lambda: bnp.repeat(v, 1.5), TypeError, "integers"),
        (lambda: bnp.tile(v, (-1,)), ValueError, "non-negative"),
        (lambda: bnp.resize(v, (-1, 2)), ValueError, "non-negative"),
        (lambda: bnp.diag(x), ValueError, "1-d or 2-d"),
        (lambda: bnp.diagonal(v), ValueError, "at least 2 dimensions"),
        (lambda: bnp.diagonal(m, 0, 1, 1), ValueError, "cannot be the same"),
        (lambda: bnp.trace(m, out=m), NotImplementedError, "out="),
        (lambda: bnp.vander(m), ValueError, "one-dimensional"),
        (lambda: bnp.vander(v, -1), ValueError, "nonnegative"),
        (lambda: bnp.delete(v, 5), IndexError, "out of bounds"),
        (lambda: bnp.delete(v, np.array([True])), ValueError, "match the axis length"),
        (lambda: bnp.delete(v, [0.5]), IndexError, "integers"),
        (lambda: bnp.insert(v, 5, 1.0), IndexError, "out of bounds"),
        (lambda: bnp.insert(v, [[0]], 1.0), ValueError, "scalar or 1-D"),
        (
            lambda: bnp.insert(m, 1, np.ones(5), axis=1),
            ValueError,
            "cannot be broadcast",
        ),
        (
            lambda: bnp.take_along_axis(
                m, np.array([[3]]), 1, mode="promise_in_bounds"
            ),
            IndexError,
            "out of bounds",
        ),
        (lambda: bnp.take_along_axis(m, np.array([0]), 1), ValueError, "same number"),
        (
            lambda: bnp.take_along_axis(m, np.zeros((3, 1), int), 1),
            ValueError,
            "broadcast",
        ),
        (lambda: bnp.take_along_axis(m, np.array([[0.5]]), 1), IndexError, "integers"),
        (
            lambda: bnp.take_along_axis(m, np.array([[0]]), 1, mode="bad"),
            ValueError,
            "mode",
        ),
        (
            lambda: bnp.take_along_axis(m, np.zeros((2, 2), int), None),
            ValueError,
            "1-D",
        ),
        (
            lambda: bnp.put_along_axis(m, np.array([[0]]), 1.0, 1),
            ValueError,
            "inplace=False",
        ),
        (
            lambda: bnp.put_along_axis(
                m, np.array([[0]]), np.ones(4), 1, inplace=False
            ),
            ValueError,
            "do not broadcast",
        ),
        (lambda: bnp.select([v > 0], []), ValueError, "same length"),
        (lambda: bnp.select([], []), ValueError, "non-empty"),
        (lambda: bnp.select([v > 0], [m[:, :2]]), ValueError, "broadcast"),
        (lambda: bnp.choose(np.array([0, 3]), [v, v]), ValueError, "invalid entry"),
        (lambda: bnp.choose(np.array([0]), [v], mode="x"), ValueError, "mode"),
        (lambda: bnp.choose(np.array([0.5]), [v]), TypeError, "integers"),
        (lambda: bnp.fill_diagonal(m, 1.0), ValueError, "inplace=False"),
        (lambda: bnp.fill_diagonal(v, 1.0, inplace=False), ValueError, "at least 2-d"),
        (lambda: bnp.fill_diagonal(x, 1.0, inplace=False), ValueError, "equal length"),
        (lambda: bnp.trim_zeros(v, "x"), ValueError, "trim"),
        (lambda: bnp.trim_zeros(np.float32(1)), ValueError, "at least 1-d"),
        (lambda: bnp.compress(m, v), ValueError, "1-D"),
        (lambda: bnp.compress([1, 0, 0, 1], v), ValueError, "out of bounds"),
        (lambda: bnp.compress([1, 0], v, size=4), ValueError, "size"),
        (lambda: bnp.place(v, [1, 0], [1.0], inplace=False), ValueError, "as many"),
        (lambda: bnp.place(v, [1, 0, 0], [], inplace=False), ValueError, "empty"),
        (lambda: bnp.place(v, [1, 0, 0], [1.0]), ValueError, "inplace=False"),
        (lambda: bnp.put(v, [0], 1.0), ValueError, "inplace=False"),
        (lambda: bnp.put(v, [3], 1.0, inplace=False), IndexError, "out of bounds"),
        (lambda: bnp.put(v, [0], 1.0, mode="x", inplace=False), ValueError, "mode"),
        (
            lambda: bnp.apply_over_axes(lambda a, ax: a[0, 0], m, [0]),
            ValueError,
            "dimensions",
        ),
        (lambda: bnp.tri(-1), ValueError, "non-negative"),
        (lambda: bnp.tril_indices_from(v), ValueError, "2-D"),
        (lambda: bnp.diag_indices_from(m), ValueError, "equal length"),
        (lambda: bnp.diag_indices(-2), ValueError, "non-negative"),
        (lambda: bnp.indices((2, -1)), ValueError, "non-negative"),
        (lambda: bnp.meshgrid(m), ValueError, "1-D"),
        (lambda: bnp.meshgrid(v, indexing="xx"), ValueError, "indexing"),
        (lambda: bnp.ix_(m), ValueError, "1-D"),
        (lambda: bnp.unravel_index(np.array([6]), (2, 3)), ValueError, "out of bounds"),
        (lambda: bnp.unravel_index(np.array([1.5]), (2, 3)), TypeError, "integers"),
        (
            lambda: bnp.ravel_multi_index((np.array([2]), np.array([0])), (2, 3)),
            ValueError,
            "invalid entry",
        ),
        (
            lambda: bnp.ravel_multi_index((np.array([1]),), (2, 3)),
            ValueError,
            "length 2",
        ),
        (
            lambda: bnp.ravel_multi_index(([0], [0]), (2, 3), order="K"),
            ValueError,
            "order",
        ),
        (lambda: bnp.mgrid[3], TypeError, "slices"),
        (lambda: bnp.mgrid[0:1:0], ValueError, "zero"),
        (lambda: bnp.r_["x,y", v], ValueError, "directive"),
        (lambda: bnp.r_[v, "0"], ValueError, "first"),
        (lambda: bnp.geomspace(0, 10), ValueError, "zero"),
        (lambda: bnp.geomspace(v, 10), TypeError, "static"),
        (lambda: bnp.logspace(0, 1, -1), ValueError, "non-negative"),
    ]
    for fn, cls, frag in cases:
        with pytest.raises(cls, match=frag):
            fn()


def test_data_dependent_shapes_raise_concretization_errors_in_jit():
    a = sample(np.float32)
    c = np.array([True, False, True])
    i = np.array([0, 1], np.int32)
    cases = [
        (lambda x, c: bnp.compress(c, x, axis=1), "size="),
        (lambda x, c: bnp.extract(c, x[0, :, 0]), "size="),
        (lambda x, c: bnp.delete(x, c, axis=1), "assume_unique_indices"),
        (lambda x, c: bnp.trim_zeros(x[0, 0]), "trim_zeros"),
    ]
    for fn, frag in cases:
        with pytest.raises(ConcretizationTypeError, match=frag):
            bt.jit(fn)(a, c)
    with pytest.raises(ConcretizationTypeError, match="mode='wrap'"):
        bt.jit(lambda i: bnp.choose(i, [a[0, 0, :2], a[1, 1, :2]]))(i)
    with pytest.raises(ConcretizationTypeError, match="mode='wrap'"):
        bt.jit(lambda i: bnp.ravel_multi_index((i, i), (2, 3)))(i)
    with pytest.raises(ConcretizationTypeError, match="mode='raise'"):
        bt.jit(lambda i: bnp.put(a, i, 1.0, mode="raise", inplace=False))(i)
    with pytest.raises(ConcretizationTypeError, match="boolean mask"):
        bt.jit(lambda c: bnp.ix_(c))(c)
