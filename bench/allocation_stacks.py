"""What capturing every allocation's Python stack costs (issue 38, DESIGN 5.5).

    PYTHONPATH=python python3 bench/allocation_stacks.py [--repeat N] [--calls N]

Times allocating calls with ``bt.config``'s ``capture_allocation_stacks`` on
(the default) and off, interleaved in one run (bench/_timing.interleave), and
prints ns per call for each and their difference per allocation, from the
best repetitions (the least disturbed on a shared machine) and from the
medians. Each call opens one capture (python/src/allocation_stacks.h) and
makes the allocations counted in the table (``memory_stats`` num_allocs).
The ``deep`` row makes its call 40 fresh Python frames down, to show the
walk of a deep stack. No recording is on: recordings capture either way.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

import numpy as np

import baton as bt
import baton.numpy as bnp

from _timing import interleave, now_ns  # bench/ (the script's folder)


def _nested(depth: int, call: Callable[[], Any]) -> Any:
    """`call()` made `depth` new Python frames below the caller."""
    if depth == 0:
        return call()
    return _nested(depth - 1, call)


def _cases() -> dict[str, Callable[[], Any]]:
    x = bt.device_put(np.ones(4, np.float32)).block_until_ready()
    scalar = np.float32(1)
    add_one = bt.jit(lambda v: v + 1)
    return {
        "bt.device_put(np.float32(1))": lambda: bt.device_put(scalar),
        "x.copy()  (f32[4])": x.copy,
        "jitted x + 1  (f32[4])": lambda: add_one(x),
        "bnp.zeros(4)": lambda: bnp.zeros(4),
        "x.copy() 40 frames deep": lambda: _nested(40, x.copy),
    }


def _sample(call: Callable[[], Any], capture: bool, calls: int):
    """A sample function: `calls` calls with capture on or off; ns per call."""

    def sample() -> float:
        bt.config.update("capture_allocation_stacks", capture)
        t0 = now_ns()
        for _ in range(calls):
            y = call()
        t1 = now_ns()
        bt.block_until_ready(y)
        return (t1 - t0) / calls

    return sample


def _allocations_per_call(call: Callable[[], Any], calls: int = 100) -> float:
    bt.effects_barrier()
    before = bt.memory_stats()["num_allocs"]
    for _ in range(calls):
        bt.block_until_ready(call())
    bt.effects_barrier()
    return (bt.memory_stats()["num_allocs"] - before) / calls


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=41, help="timed batches per mode")
    p.add_argument("--calls", type=int, default=2000, help="calls per batch")
    args = p.parse_args(argv)
    saved = bt.config.capture_allocation_stacks
    print(f"device {bt.devices()[0]}, {args.repeat} batches of {args.calls} calls")
    print(
        "| call | allocs/call | off best | on best | added/alloc (best) "
        "| off median | on median | added/alloc (median) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    try:
        for name, call in _cases().items():
            allocs = _allocations_per_call(call)
            s = interleave(
                {
                    "off": _sample(call, False, args.calls),
                    "on": _sample(call, True, args.calls),
                },
                args.repeat,
                warmup=2,
            )
            off, on = s["off"], s["on"]
            per = max(allocs, 1.0)
            print(
                f"| {name} | {allocs:g} | {off.best:.0f} ns | {on.best:.0f} ns "
                f"| {(on.best - off.best) / per:+.0f} ns "
                f"| {off.median:.0f} ns | {on.median:.0f} ns "
                f"| {(on.median - off.median) / per:+.0f} ns |"
            )
    finally:
        bt.config.update("capture_allocation_stacks", saved)


if __name__ == "__main__":
    main()
