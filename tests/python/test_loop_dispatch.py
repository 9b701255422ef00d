"""Where a jitted loop runs: a while loop (a traced predicate, or fori_loop
with traced bounds) has no trip count the runtime can know before it runs,
so the call is handed to the device's queue and returns at once, and other
Python threads keep running while it loops (issue 36: it used to run on the
calling thread holding the GIL, freezing every other thread until the end)."""

import threading
import time

import numpy as np

import baton as bt

N = 2_000_000  # iterations: long enough to be seen running, short for a test


def _other_thread_runs_while(out) -> tuple[bool, bool]:
    """(whether `out` was still being computed when this started, whether
    another Python thread made progress while waiting for it)."""
    pending_at_return = not out.is_ready()
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1
            time.sleep(0)

    t = threading.Thread(target=spin)
    t.start()
    progressed = False
    while not out.is_ready():
        before = count[0]
        time.sleep(0.005)
        progressed = progressed or count[0] > before
    stop.set()
    t.join()
    return pending_at_return, progressed


def test_jitted_while_loop_returns_before_the_loop_ends():
    def count_to(n):
        return bt.lax.while_loop(
            lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + 2), (0, 0)
        )

    f = bt.jit(count_to)
    f(3)[0].block_until_ready()  # compiled: the next call only runs
    i, twice = f(N)
    pending, progressed = _other_thread_runs_while(twice)
    assert pending, "the call returned only after the whole loop had run"
    assert progressed, "no other Python thread ran while the loop ran"
    assert int(i) == N and int(twice) == 2 * N


def test_fori_loop_with_traced_bounds_returns_before_the_loop_ends():
    f = bt.jit(lambda lo, hi: bt.lax.fori_loop(lo, hi, lambda k, c: c + k % 3, 0))
    f(0, 3).block_until_ready()
    out = f(0, N)
    pending, progressed = _other_thread_runs_while(out)
    assert pending and progressed
    assert int(out) == sum(k % 3 for k in range(3)) * (N // 3) + sum(
        k % 3 for k in range(N - N % 3, N)
    )
    np.testing.assert_equal(np.asarray(out), np.int32(int(out)))
