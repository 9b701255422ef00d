"""Per-call cost of a small jitted call from Python (DESIGN section 4).

    python bench/jit_dispatch.py [--calls 10000]

Times ``f(x) = x + 1`` on a 4-element float32 array: dispatch only (calls
enqueue, the device queue runs meanwhile; a batch is drained between
timings) and call + ``block_until_ready()``. Reports the best batch (the
cost without interference from other processes) and the mean over all
calls. With jax installed, the same loop through ``jax.jit`` runs in the
same process for the ratio. A 2-core machine makes the mean noisy: the
device's worker threads compete with the calling thread.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import baton as bt


def timed(call, sync, calls: int, batch: int = 100) -> tuple[float, float]:
    """(best batch, mean) in microseconds per call."""
    best, total = float("inf"), 0.0
    done = 0
    while done < calls:
        n = min(batch, calls - done)
        t0 = time.perf_counter()
        for _ in range(n):
            y = call()
        dt = time.perf_counter() - t0
        sync(y)
        best = min(best, dt / n)
        total += dt
        done += n
    return best * 1e6, total / calls * 1e6


def report(name: str, call, sync, calls: int) -> None:
    call()
    sync(call())
    d_best, d_mean = timed(call, sync, calls)
    w_best, w_mean = timed(lambda: sync(call()), lambda y: None, calls, batch=10)
    print(
        f"{name:28s} dispatch {d_best:6.2f} us best, {d_mean:6.2f} us mean | "
        f"call+wait {w_best:6.2f} us best, {w_mean:6.2f} us mean"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=10000)
    calls = parser.parse_args().calls
    x = bt.device_put(np.arange(4, dtype=np.float32))
    f = bt.jit(lambda x: x + 1)
    report("baton jit f(x)", lambda: f(x), lambda y: y.block_until_ready(), calls)
    g = bt.jit(lambda p, s: {k: v * s for k, v in p.items()})
    p = {"a": x, "b": x}
    report(
        "baton jit g({a, b}, 2.0)",
        lambda: g(p, 2.0),
        lambda y: bt.block_until_ready(y),
        calls,
    )
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("jax is not installed: no side-by-side figure")
        return
    jx = jnp.arange(4, dtype=jnp.float32)
    jf = jax.jit(lambda x: x + 1)
    report("jax.jit f(x)", lambda: jf(jx), lambda y: y.block_until_ready(), calls)


if __name__ == "__main__":
    main()
