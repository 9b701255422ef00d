"""Timing helpers: one sample = one timed repetition, reduced to median and best.

A *sample function* takes no argument, runs one repetition of what is
measured and returns its cost in nanoseconds per unit (per call, per
operation). Everything not timed (syncing the tail of a dispatch batch,
freeing an output) happens inside the sample function but outside its clock.
Nothing here asserts a time: the benchmarks report, the reader judges.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

SampleFn = Callable[[], float]

# Pause between samples of different libraries, so that one library's worker
# threads (which may spin briefly after work) do not eat into the other's
# clock on a 2-core machine. Not timed.
SETTLE_S = 0.001


@dataclass
class Samples:
    """The per-unit costs (ns) of the timed repetitions of one measurement."""

    ns: list[float]

    @property
    def median(self) -> float:
        """Median cost in ns (what the table reports)."""
        return statistics.median(self.ns)

    @property
    def best(self) -> float:
        """Lowest cost in ns (the cost with the least interference)."""
        return min(self.ns)


def now_ns() -> int:
    """The clock every measurement uses (monotonic, ns)."""
    return time.perf_counter_ns()


def measure(sample: SampleFn, repeat: int, warmup: int = 1) -> Samples:
    """Run `sample` `warmup` times untimed, then `repeat` times, collecting ns."""
    for _ in range(warmup):
        sample()
    return Samples([sample() for _ in range(repeat)])


def interleave(
    samples: dict[str, SampleFn],
    repeat: int,
    warmup: int = 1,
    block: int = 1,
    settle_s: float = SETTLE_S,
) -> dict[str, Samples]:
    """Measure several sample functions in turns so that drift and noise on a
    shared machine hit them alike: each turn takes `block` samples of one
    function, after a `settle_s` pause; the order alternates every round.
    (A large `block` and `settle_s` suit libraries whose idle threads spin
    for a while after work, as OpenBLAS's do.)"""
    names = list(samples)
    for _ in range(warmup):
        for name in names:
            samples[name]()
    out: dict[str, list[float]] = {name: [] for name in names}
    for r in range(-(-repeat // block)):
        for name in names if r % 2 == 0 else reversed(names):
            time.sleep(settle_s)
            for _ in range(min(block, repeat - len(out[name]))):
                out[name].append(samples[name]())
    return {name: Samples(ns) for name, ns in out.items()}


def dispatch_batch(call: Callable[[], Any], sync: Callable[[Any], Any], n: int):
    """Sample function: `n` calls back to back, timed without waiting for their
    results (dispatch cost); the last result is synced after the clock stops."""

    def sample() -> float:
        """One batch of `n` calls; ns per call."""
        t0 = now_ns()
        for _ in range(n):
            y = call()
        t1 = now_ns()
        sync(y)
        return (t1 - t0) / n

    return sample


def call_and_wait(call: Callable[[], Any], sync: Callable[[Any], Any], n: int):
    """Sample function: `n` calls, each synced before the next (latency)."""

    def sample() -> float:
        """One batch of `n` call+sync pairs; ns per call."""
        t0 = now_ns()
        for _ in range(n):
            sync(call())
        return (now_ns() - t0) / n

    return sample


def op_then_release(op: Callable[[], Any], release: Callable[[Any], Any]):
    """Sample function: time `op()` (which must include completing its work),
    then `release` its result outside the clock (e.g. free the output)."""

    def sample() -> float:
        """One timed `op()`; ns."""
        t0 = now_ns()
        y = op()
        t1 = now_ns()
        release(y)
        return t1 - t0

    return sample
