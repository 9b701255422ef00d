"""Calling back into baton from a host callback, and os.fork() (tracker issue
36, "never hang").

A bt.debug.callback runs on the thread that runs its program (the device
queue's worker). Work it launches on that same queue runs at once, inside it
(src/baton/runtime/work_queue.h), so reading a jitted result, a transfer or a
gradient there returns the values, as in JAX; what could only run after the
callback is refused with RuntimeError. A child forked while baton's threads
run warns at the fork and raises RuntimeError instead of hanging
(src/baton/runtime/fork_guard.h).

Each case runs in a fresh process under a timeout: a hang fails the test
instead of stopping the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

TIMEOUT_S = 180  # generous: a bound on a hang, not a timing assertion


def run_isolated(code: str) -> str:
    """Runs `code` in a fresh interpreter; asserts it exits 0 within the
    timeout and prints 'ok'; returns its stdout."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            env=dict(os.environ),
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"hung (no exit within {TIMEOUT_S} s); stderr:\n{e.stderr}")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ok" in out.stdout.splitlines(), out.stdout + out.stderr
    return out.stdout


PRELUDE = """
import numpy as np
import baton as bt
import baton.numpy as bnp
try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None

# Small arrays may run inline on the calling thread, larger ones on the
# device queue's worker: both paths must work.
SIZES = (4, 1 << 16)
"""


def test_reading_a_jitted_result_inside_a_callback():
    run_isolated(PRELUDE + """
inner = bt.jit(lambda v: v * 2 + 1)
for n in SIZES:
    seen = []

    def cb(v):
        seen.append(np.asarray(inner(v)))

    @bt.jit
    def f(x):
        bt.debug.callback(cb, x * 3)
        return x + 1

    x = np.arange(n, dtype=np.float32) % 5
    out = np.asarray(f(bnp.asarray(x)))
    bt.effects_barrier()
    np.testing.assert_array_equal(out, x + 1)
    assert len(seen) == 1
    expected = (x * 3) * 2 + 1
    if jax is not None:
        expected = np.asarray(jax.jit(lambda v: v * 2 + 1)(jnp.asarray(x * 3)))
    np.testing.assert_allclose(seen[0], expected, rtol=1e-6)
print("ok")
""")


def test_reading_a_transfer_and_an_op_inside_a_callback():
    run_isolated(PRELUDE + """
for n in SIZES:
    seen = []

    def cb(v):
        seen.append(np.asarray(bt.device_put(v) + 1))

    @bt.jit
    def f(x):
        bt.debug.callback(cb, bnp.sin(x))
        return x * 2

    x = np.linspace(0, 3, n, dtype=np.float32)
    out = np.asarray(f(bnp.asarray(x)))
    bt.effects_barrier()
    np.testing.assert_allclose(out, x * 2)
    expected = np.sin(x) + 1
    if jax is not None:
        expected = np.asarray(jnp.sin(jnp.asarray(x)) + 1)
    np.testing.assert_allclose(seen[0], expected, rtol=1e-6, atol=1e-6)
print("ok")
""")


def test_a_gradient_inside_a_callback():
    run_isolated(PRELUDE + """
def loss(v):
    return bnp.sum(bnp.sin(v) ** 2)

for n in SIZES:
    seen = []

    def cb(v):
        seen.append(np.asarray(bt.grad(loss)(v)))

    @bt.jit
    def f(x):
        bt.debug.callback(cb, x)
        return x - 1

    x = np.linspace(-1, 1, n, dtype=np.float32)
    out = np.asarray(f(bnp.asarray(x)))
    bt.effects_barrier()
    np.testing.assert_allclose(out, x - 1)
    expected = 2 * np.sin(x) * np.cos(x)
    if jax is not None:
        expected = np.asarray(
            jax.grad(lambda v: jnp.sum(jnp.sin(v) ** 2))(jnp.asarray(x)))
    np.testing.assert_allclose(seen[0], expected, rtol=1e-5, atol=1e-6)
print("ok")
""")


def test_callbacks_calling_back_repeatedly_and_nested():
    # Many calls, each launching work that launches a callback of its own.
    run_isolated(PRELUDE + """
inner_seen = []

@bt.jit
def inner(v):
    bt.debug.callback(lambda w: inner_seen.append(np.asarray(w).sum()), v)
    return v * v

outer_seen = []

def cb(v):
    outer_seen.append(float(np.asarray(inner(v)).sum()))

@bt.jit
def f(x):
    bt.debug.callback(cb, x)
    return x + 1

x = bnp.arange(1 << 12, dtype=bnp.float32)
outs = [f(x + i) for i in range(20)]
bt.effects_barrier()
xs = np.arange(1 << 12, dtype=np.float32)
for i, o in enumerate(outs):
    np.testing.assert_array_equal(np.asarray(o), xs + i + 1)
    assert outer_seen[i] == pytest_approx(float(((xs + i) ** 2).sum()))
assert len(inner_seen) == 20
print("ok")
""".replace("pytest_approx", "(lambda v: v)"))


def test_reading_work_launched_after_the_program_fails_instead_of_hanging():
    # The callback waits until a later computation is queued behind the
    # program that runs it, then reads that computation's result: that can
    # only be computed after the callback returns, so the read raises.
    run_isolated(PRELUDE + """
import threading
later = {}
queued = threading.Event()
started = threading.Event()
errors = []

def cb(v):
    started.set()
    assert queued.wait(60)
    try:
        np.asarray(later["y"])
    except RuntimeError as e:
        errors.append(str(e))

@bt.jit
def f(x):
    bt.debug.callback(cb, x)
    return x + 1

x = bnp.arange(8.0)
results = {}
t = threading.Thread(target=lambda: results.setdefault("f", f(x)))
t.start()
assert started.wait(60)
later["y"] = bt.jit(lambda v: v * 10)(x)  # queued behind f's program
queued.set()
t.join(120)
assert not t.is_alive()
np.testing.assert_array_equal(np.asarray(results["f"]), np.arange(8.0) + 1)
np.testing.assert_array_equal(np.asarray(later["y"]), np.arange(8.0) * 10)
assert len(errors) == 1, errors
assert "would never end" in errors[0] and "callback" in errors[0], errors[0]
print("ok")
""")


def test_effects_barrier_inside_a_callback_is_still_refused():
    run_isolated(PRELUDE + """
errors = []

def cb(v):
    try:
        bt.effects_barrier()
    except RuntimeError as e:
        errors.append(str(e))

@bt.jit
def f(x):
    bt.debug.callback(cb, x)
    return x

f(bnp.arange(1 << 16, dtype=bnp.float32))
bt.effects_barrier()
assert len(errors) == 1 and "callback" in errors[0], errors
print("ok")
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_fork_while_work_runs_warns_and_the_child_fails_clearly():
    run_isolated(PRELUDE + """
import os, time, warnings

@bt.jit
def slow(x):
    for _ in range(20):
        x = bnp.sin(x) @ x
    return x

x = bnp.ones((256, 256), dtype=bnp.float32) / 256
pending = slow(x)  # still running, or queued, when we fork
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    pid = os.fork()
if pid == 0:
    code = 1
    try:
        messages = []
        for attempt in (lambda: bnp.ones(3) + 1,
                        lambda: slow(x),
                        lambda: np.asarray(bnp.arange(4.0) * 2)):
            try:
                attempt()
            except RuntimeError as e:
                messages.append(str(e))
        if len(messages) == 3 and all(
                "fork" in m and "spawn" in m for m in messages):
            code = 0
        else:
            print("child saw:", messages, flush=True)
    finally:
        os._exit(code)
deadline = time.monotonic() + 120
while True:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    if time.monotonic() > deadline:
        os.kill(pid, 9)
        raise SystemExit("the forked child hung")
    time.sleep(0.05)
assert os.waitstatus_to_exitcode(status) == 0, status
forks = [w for w in caught if issubclass(w.category, RuntimeWarning)
         and "fork" in str(w.message)]
assert len(forks) == 1, [str(w.message) for w in caught]
assert "spawn" in str(forks[0].message)
# The parent is unaffected.
np.testing.assert_allclose(np.asarray(pending), np.asarray(slow(x)))
print("ok")
""")
