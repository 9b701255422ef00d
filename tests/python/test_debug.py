"""bt.debug.print and bt.debug.callback (baton/debug.py, python/src/host_callbacks.cc):
values printed from inside compiled code, in program order, each time the
program runs; under the transformations as in JAX; errors and memory.
"""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton import lax

from _util import in_use


def lines(capsys) -> list[str]:
    bt.effects_barrier()
    return capsys.readouterr().out.splitlines()


def test_print_outside_any_trace_prints_at_once(capsys):
    bt.debug.print("x = {x}, n = {}", 3, x=bnp.arange(3.0))
    assert capsys.readouterr().out.splitlines() == ["x = [0. 1. 2.], n = 3"]


def test_print_in_jit_prints_the_values_of_every_call_in_order(capsys):
    traces = []

    @bt.jit
    def f(x):
        traces.append(1)
        bt.debug.print("x -> {x}", x=x)
        y = bnp.sin(x)
        bt.debug.print("y -> {y:.4f}", y=y)
        return y

    f(2.0)
    f(3.0)
    assert lines(capsys) == [
        "x -> 2.0",
        "y -> 0.9093",
        "x -> 3.0",
        "y -> 0.1411",
    ]
    assert len(traces) == 1  # printed by the compiled program, not the trace


def test_formats_as_jax(capsys):
    x = bnp.array([1.0, 2.0])
    bt.jit(
        lambda x: bt.debug.print("no placeholders", x, x + 1, skip_format_check=True)
    )(x)
    bt.jit(lambda x: bt.debug.print("{0} {0}", x[0]))(x)
    bt.jit(lambda x: bt.debug.print(ordered=True)("two-call {}", x))(x)
    with np.printoptions(precision=2):
        bt.jit(lambda x: bt.debug.print("{}", x / 3))(x)
    assert lines(capsys) == [
        "no placeholders [1. 2.] [2. 3.]",
        "1.0 1.0",
        "two-call [1. 2.]",
        "[0.33 0.67]",
    ]


def test_format_mistakes_fail_where_the_call_is_made():
    x = bnp.ones(2)
    with pytest.raises(ValueError, match=r"unused keyword arguments.*f-string"):
        bt.jit(lambda x: bt.debug.print("x", x=x))(x)
    with pytest.raises(ValueError, match="unused positional"):
        bt.jit(lambda x: bt.debug.print("{}", x, x))(x)
    with pytest.raises(ValueError, match="unused positional"):
        bt.debug.print("no placeholders", x)  # as JAX, without skip_format_check
    with pytest.raises(TypeError, match="format must be a str"):
        bt.debug.print(3, x)
    with pytest.raises(TypeError, match="two-call form"):
        bt.debug.print(None, x)
    with pytest.raises(TypeError, match="must be callable"):
        bt.debug.callback(3, x)


def test_callback_receives_numpy_copies_with_the_pytree_structure():
    seen = []

    def record(tree, tag, scale=None):
        seen.append((tree, tag, scale))

    @bt.jit
    def f(x):
        bt.debug.callback(record, {"a": x, "b": (x * 2, None)}, "tag", scale=2)
        return x + 1

    f(bnp.arange(3, dtype=bnp.int32))
    bt.effects_barrier()
    ((tree, tag, scale),) = seen
    assert tag == "tag"  # a static leaf, as it was
    assert isinstance(scale, np.ndarray) and scale == 2  # a number: an array
    assert isinstance(tree["a"], np.ndarray) and tree["a"].dtype == np.int32
    np.testing.assert_array_equal(tree["a"], [0, 1, 2])
    np.testing.assert_array_equal(tree["b"][0], [0, 2, 4])
    assert tree["b"][1] is None
    tree["a"][0] = 99  # a copy: writable, and the program's data is untouched


def test_prints_inside_loops_and_branches_on_every_iteration(capsys):
    @bt.jit
    def f(x):
        def body(i, c):
            bt.debug.print("i={} c={}", i, c)
            return c * 2

        c = lax.fori_loop(0, 3, body, x)

        def step(carry, v):
            bt.debug.print("scan {}", v)
            return carry + v, v

        c, _ = lax.scan(step, c, bnp.array([1.0, 2.0]))
        return lax.cond(
            c > 0,
            lambda c: (bt.debug.print("positive {}", c), c)[1],
            lambda c: (bt.debug.print("negative {}", c), c)[1],
            c,
        )

    f(1.0)
    f(-1.0)
    assert lines(capsys) == [
        "i=0 c=1.0",
        "i=1 c=2.0",
        "i=2 c=4.0",
        "scan 1.0",
        "scan 2.0",
        "positive 11.0",
        "i=0 c=-1.0",
        "i=1 c=-2.0",
        "i=2 c=-4.0",
        "scan 1.0",
        "scan 2.0",
        "negative -5.0",
    ]


def test_grad_prints_the_forward_pass_once(capsys):
    def f(x):
        bt.debug.print("x: {}", x)
        return x**2

    assert float(bt.grad(f)(1.0)) == 2.0
    assert float(bt.jit(bt.grad(f))(3.0)) == 6.0
    primal, tangent = bt.jvp(f, (2.0,), (1.0,))
    assert (float(primal), float(tangent)) == (4.0, 4.0)
    assert lines(capsys) == ["x: 1.0", "x: 3.0", "x: 2.0"]


def test_vmap_prints_each_example_in_order(capsys):
    def f(x):
        bt.debug.print("x -> {}", x)
        y = bnp.sin(x)
        bt.debug.print("y -> {}", y)
        return y

    bt.vmap(f)(bnp.arange(3.0))
    out = lines(capsys)
    assert out[:3] == ["x -> 0.0", "x -> 1.0", "x -> 2.0"]
    assert out[3].startswith("y -> 0.0") and len(out) == 6
    # lax.map runs the examples one after the other.
    lax.map(f, bnp.arange(2.0))
    # A scalar formats as a Python float (numpy's and JAX's rule): the
    # float32 sin(1) shows all the digits of its float64 value.
    assert lines(capsys) == [
        "x -> 0.0",
        "y -> 0.0",
        "x -> 1.0",
        "y -> 0.8414709568023682",
    ]


def test_not_run_when_only_traced(capsys):
    def f(x):
        bt.debug.print("ran {}", x)
        return x * 2

    text = str(bt.make_jaxpr(f)(1.0))
    assert "host_callback" in text and "debug.print" in text
    bt.eval_shape(f, 1.0)
    assert lines(capsys) == []


def test_bool_of_a_traced_value_runs_no_print(capsys):
    def f(x):
        bt.debug.print("once {}", x)
        return x if x > 0 else -x  # bool() computes x > 0 by itself

    assert float(bt.grad(f)(2.0)) == 1.0
    assert lines(capsys) == ["once 2.0"]


def test_an_exception_fails_the_outputs_and_shows_its_traceback(capsys):
    def bad(x):
        raise ValueError(f"refusing {x}")

    @bt.jit
    def f(x):
        bt.debug.callback(bad, x)
        return x + 1

    y = f(1.0)
    with pytest.raises(RuntimeError, match=r"ValueError: refusing 1\.0"):
        np.asarray(y)
    err = capsys.readouterr().err
    assert "Traceback" in err and "refusing 1.0" in err
    # The next call runs (and fails) afresh; nothing is wedged.
    with pytest.raises(RuntimeError, match=r"refusing 2\.0"):
        f(2.0).block_until_ready()


def test_effects_barrier_inside_a_callback_is_refused():
    caught = []

    def inside(x):
        try:
            bt.effects_barrier()
        except RuntimeError as e:
            caught.append(str(e))

    bt.jit(lambda x: bt.debug.callback(inside, x) or x)(1.0).block_until_ready()
    # The output is the argument itself: waiting for it does not wait for
    # the callback (on an accelerator it runs later); the barrier does.
    bt.effects_barrier()
    assert caught and "inside a host callback" in caught[0]


def test_callbacks_hold_no_array_and_are_released_with_their_program():
    class Fn:
        def __call__(self, x):
            self.last = float(x.sum())

    fn = Fn()
    ref = weakref.ref(fn)
    x = bnp.ones((1024, 256))  # 1 MiB
    f = bt.jit(lambda x, fn=fn: (bt.debug.callback(fn, x * 2), x + 1)[1])
    f(x).block_until_ready()  # compiled: its constants are on the device now
    base = in_use()
    y = f(x)
    y.block_until_ready()
    assert fn.last == 2 * 1024 * 256
    assert in_use() == base + x.nbytes  # y only: no copy kept for the callback
    del y
    assert in_use() == base
    del fn, f
    bt.clear_caches()
    gc.collect()
    assert ref() is None  # the compiled program held the function, and is gone


def test_calls_from_many_threads_each_print_once():
    seen = []
    lock = threading.Lock()

    def record(t, i):
        with lock:
            seen.append((int(t), int(i)))

    f = bt.jit(lambda t, i: (bt.debug.callback(record, t, i), t + i)[1])

    def worker(t):
        for i in range(20):
            assert int(f(t, i)) == t + i

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    bt.effects_barrier()
    assert sorted(seen) == [(t, i) for t in range(4) for i in range(20)]
    for t in range(4):  # each thread's calls in its own order
        assert [i for s, i in seen if s == t] == list(range(20))


def test_branches_and_loops_that_only_print_still_run(capsys):
    @bt.jit
    def f(x):
        s = x.sum()
        lax.cond(s > 0, lambda s: bt.debug.print("pos {}", s), lambda s: None, s)
        lax.scan(lambda c, v: (bt.debug.print("v {}", v), (None, None))[1], None, x * 2)
        lax.cond(s > 0, lambda s: None, lambda s: None, s)  # nothing to run
        return x

    text = str(bt.make_jaxpr(f)(bnp.ones(2)))
    assert text.count(" = case(") == 1  # the empty cond left nothing behind
    f(bnp.array([1.0, 2.0]))
    f(bnp.array([-1.0, -3.0]))
    assert lines(capsys) == [
        "pos 3.0",
        "v 2.0",
        "v 4.0",
        "v -2.0",
        "v -6.0",
    ]


def test_breakpoint_opens_a_console_over_the_callers_locals(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("print('y is', y)\nprint(k)\n"))

    @bt.jit
    def f(x):
        y = bnp.sin(x) * 0 + 5.0
        k = "static"  # noqa: F841 -- read in the console
        bt.debug.breakpoint()
        return y

    assert float(f(1.0)) == 5.0
    out = capsys.readouterr()
    assert "y is 5.0" in out.out and "static" in out.out
    assert "bt.debug.breakpoint in f" in out.err  # code.interact's banner
