"""Property-based tests: random small programs from a fixed menu of ops run
eagerly, under bt.jit and in numpy (float64) give the same values; with
donation (donate_argnums or bt.donate at the call site) the donated input
is consumed, its storage is reused or freed, DonationWarning says when no
output could use it, and memory returns to its baseline (DESIGN R1, R3, R4).

Every op of the menu keeps values in [-4, 4] when its inputs are (means, not
sums; products scaled by 1/4), so float32 rounding differences between an
eager op and a fused kernel stay below 1e-4 after any number of steps and
the comparison can be tight.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import baton as bt
import baton.numpy as bnp

import _property_strategies as P
from _property_strategies import F32, examples, returns_memory

UNARY = ("tanh", "sin", "cos", "negative", "abs", "sigmoid", "square4")
BINARY = ("mean2", "diff2", "mul4", "maximum", "minimum", "where")
REDUCE = ("mean", "max", "min")


def _unary(m, name, x):
    if name == "sigmoid":
        return 1 / (1 + m.exp(-x)) if m is np else bnp.sigmoid(x)
    if name == "square4":
        return x * x * 0.25
    return getattr(m, name)(x)


def _binary(m, name, x, y):
    if name == "mean2":
        return (x + y) * 0.5
    if name == "diff2":
        return (x - y) * 0.5
    if name == "mul4":
        return x * y * 0.25
    if name == "where":
        return m.where(x > y, x, y * 0.5)
    return getattr(m, name)(x, y)


def run_program(m, program, inputs):
    """Interprets program with module m (numpy or baton.numpy) on inputs;
    returns the values of program["outputs"]."""
    env = list(inputs)
    for op in program["ops"]:
        kind = op[0]
        if kind == "unary":
            env.append(_unary(m, op[1], env[op[2]]))
        elif kind == "binary":
            env.append(_binary(m, op[1], env[op[2]], env[op[3]]))
        elif kind == "reduce":
            _, name, i, axis, keepdims = op
            env.append(getattr(m, name)(env[i], axis=axis, keepdims=keepdims))
        elif kind == "shape":
            env.append(P.apply_shape_op(m, env[op[2]], op[1]))
        elif kind == "at_set":  # x.at[i].set(v); numpy: a copy updated
            _, i, idx, v = op
            x = env[i]
            if m is np:
                x = x.copy()
                x[idx] = v
                env.append(x)
            else:
                env.append(x.at[idx].set(v))
        if m is np:
            env[-1] = np.asarray(env[-1])  # not a numpy scalar
    return tuple(env[k] for k in program["outputs"])


@st.composite
def programs(draw, n_inputs=2, max_ops=8):
    """(program, input arrays): inputs are float32 in [-2, 2] of one shape
    (or broadcastable shapes); ops pick earlier values by index."""
    shapes = draw(
        hnp.mutually_broadcastable_shapes(num_shapes=n_inputs, max_dims=3, max_side=4)
    )
    inputs = [
        draw(
            P.laid_out(
                lambda s: hnp.arrays(F32, s, elements=st.floats(-2, 2, width=32)), s
            ),
            label=f"input {k}",
        )
        for k, s in enumerate(shapes.input_shapes)
    ]
    env = [a.shape for a in inputs]
    ops = []
    for _ in range(draw(st.integers(1, max_ops))):
        i = draw(st.integers(0, len(env) - 1))
        s = env[i]
        kind = draw(
            st.sampled_from(
                ["unary", "unary", "binary", "binary", "reduce", "shape", "at_set"]
            )
        )
        if kind == "binary":
            partners = [j for j, t in enumerate(env) if _broadcasts(s, t)]
            j = draw(st.sampled_from(partners))
            op = ("binary", draw(st.sampled_from(BINARY)), i, j)
            out = np.broadcast_shapes(s, env[j])
        elif kind == "reduce":
            if s and draw(st.booleans()):
                axis = draw(st.integers(-len(s), len(s) - 1))
            else:
                axis = None
            if any(d == 0 for d in (s if axis is None else (s[axis],))):
                op, out = ("unary", "tanh", i), s  # no max/min of nothing
                if draw(st.booleans()):
                    op = ("reduce", "mean", i, axis, False)
                    out = result_of(op, env)
            else:
                op = (
                    "reduce",
                    draw(st.sampled_from(REDUCE)),
                    i,
                    axis,
                    draw(st.booleans()),
                )
                out = result_of(op, env)
        elif kind == "shape":
            sop = draw(P.shape_ops(s))
            op = ("shape", sop, i)
            out = P.result_shape(s, sop)
        elif kind == "at_set" and s and all(s):
            idx = tuple(
                draw(st.integers(-d, d - 1)) for d in s[: draw(st.integers(1, len(s)))]
            )
            op = ("at_set", i, idx, draw(st.floats(-2, 2, width=32)))
            out = s
        else:
            op = ("unary", draw(st.sampled_from(UNARY)), i)
            out = s
        ops.append(op)
        env.append(tuple(out))
    computed = list(range(n_inputs, len(env)))
    outputs = draw(
        st.lists(st.sampled_from(computed), min_size=1, max_size=3, unique=True)
    )
    if computed[-1] not in outputs:
        outputs.append(computed[-1])
    return {"ops": ops, "outputs": tuple(outputs)}, inputs


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def result_of(op, env):
    _, _name, i, axis, keepdims = op
    return np.mean(np.zeros(env[i]), axis=axis, keepdims=keepdims).shape


def _close(got, want, what):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == F32, (what, got.dtype)
    np.testing.assert_allclose(
        got, want.astype(F32), rtol=0, atol=1e-4, equal_nan=True, err_msg=what
    )


@examples(150)
@given(case=programs())
@returns_memory
def test_jit_matches_eager_and_numpy(case):
    program, inputs = case
    with np.errstate(all="ignore"):
        want = run_program(np, program, [a.astype(np.float64) for a in inputs])
    xs = [bt.device_put(a) for a in inputs]
    eager = run_program(bnp, program, xs)
    f = bt.jit(lambda *args: run_program(bnp, program, args))
    jitted = f(*xs)
    again = f(*xs)  # the cached executable gives the same values
    for k, (e, j, r, w) in enumerate(zip(eager, jitted, again, want)):
        _close(e, w, f"eager output {k} vs numpy")
        _close(j, e, f"jit output {k} vs eager")
        np.testing.assert_array_equal(np.asarray(r), np.asarray(j))
    for x, a in zip(xs, inputs):  # undonated inputs are untouched
        assert not x.is_deleted()
        P.assert_bitwise_equal(np.asarray(x), a)


def _reusable(x, outs):
    return any(o.nbytes == x.nbytes and o.dtype == x.dtype for o in outs)


@examples(100)
@given(case=programs(), how=st.sampled_from(["donate_argnums", "bt.donate"]))
@returns_memory
def test_donation_consumes_input_and_memory_returns(case, how):
    program, inputs = case
    with np.errstate(all="ignore"):
        want = run_program(np, program, [a.astype(np.float64) for a in inputs])
    body = lambda *args: run_program(bnp, program, args)  # noqa: E731
    f = bt.jit(body, donate_argnums=0) if how == "donate_argnums" else bt.jit(body)

    def call(x, y):
        return f(x, y) if how == "donate_argnums" else f(bt.donate(x), y)

    y = bt.device_put(inputs[1])
    with warnings.catch_warnings():  # compile once, so constants are resident
        warnings.simplefilter("ignore", bt.DonationWarning)
        bt.block_until_ready(call(bt.device_put(inputs[0]), y))
    x = bt.device_put(inputs[0]).block_until_ready()
    before = P.usage()[(0, "device")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bt.DonationWarning)
        outs = bt.block_until_ready(call(x, y))
    warned = [
        str(w.message) for w in caught if issubclass(w.category, bt.DonationWarning)
    ]
    del caught
    assert x.is_deleted() and not y.is_deleted()
    with pytest.raises(bt.DeletedArrayError, match="donated"):
        np.asarray(x)
    for k, (o, w) in enumerate(zip(outs, want)):
        _close(o, w, f"output {k}")
    # x's storage went to an output of its byte size and dtype, or was freed
    # (and reported): either way memory grew by the new outputs less x. (An
    # output that is y itself -- y returned unchanged -- is no new buffer.)
    fresh = {id(o): o for o in outs if o is not y}.values()
    grown = P.usage()[(0, "device")] - before
    expected = sum(P.footprint(o.nbytes) for o in fresh) - P.footprint(x.nbytes)
    assert grown == expected, (grown, expected, [o.shape for o in outs], x.shape)
    # No output can take x's buffer -> DonationWarning naming x. (See
    # test_donated_buffer_read_by_the_op_making_its_only_same_size_output.)
    if not _reusable(x, outs):
        assert len(warned) == 1 and f"float32{x.shape}" in warned[0], warned


def test_donated_buffer_read_by_the_op_making_its_only_same_size_output():
    # A deliberate limit: only an output computed after the donated value's
    # last read may take its buffer (a reduction reads all of x while it
    # writes). The warning says exactly that, and x is still consumed.
    f = bt.jit(lambda x: bnp.sum(x), donate_argnums=0)
    x = bt.device_put(np.ones(1, F32))
    with pytest.warns(bt.DonationWarning, match="computed after the program's last read"):
        out = f(x)
    assert float(out) == 1.0 and x.is_deleted()
