"""The fresh process of the train_rss case: ``run.py --child train``.

It imports only the library it measures (so neither library's footprint
leaks into the other's), builds params and grads directly on the device,
records VmRSS, resets the RSS high-water mark, runs a few synced training
steps and prints one JSON line: RSS after setup, peak RSS, growth (peak minus
after setup) and ``ru_maxrss``, in MiB.
"""

from __future__ import annotations

import json
import os
import resource
from typing import Any

import numpy as np

MiB = 1 << 20
N_ARRAYS = 8
LR = 0.1


def step(params: list, grads: list) -> list:
    """One SGD step on every leaf (works on baton, JAX and numpy arrays)."""
    return [p - LR * g for p, g in zip(params, grads)]


def _status_mib(field: str) -> float:
    """A VmRSS/VmHWM line of /proc/self/status, in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def child_main(lib: str, donate: int, mib: int, steps: int) -> None:
    """Import `lib`, build params and grads on the device, record RSS, run
    `steps` synced steps, print the RSS figures as one JSON line."""
    n = mib * MiB // (4 * N_ARRAYS)
    if lib == "baton":
        import baton as bt

        def full(v: float) -> Any:
            """A device array of n copies of v."""
            return bt.full((n,), v)

        jit, sync = bt.jit, bt.block_until_ready
    else:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp

        def full(v: float) -> Any:
            """A device array of n copies of v."""
            return jnp.full((n,), v, jnp.float32)

        jit, sync = jax.jit, jax.block_until_ready
    params = [full(1.0) for _ in range(N_ARRAYS)]
    grads = [full(0.5) for _ in range(N_ARRAYS)]
    f = jit(step, donate_argnums=(0,) if donate else ())
    sync((params, grads))
    rss_setup = _status_mib("VmRSS")
    try:  # reset the high-water mark to now (Linux >= 4.0)
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        peak_source = "VmHWM after reset"
    except OSError:
        peak_source = "ru_maxrss"
    for _ in range(steps):
        params = f(params, grads)
        sync(params)
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak = _status_mib("VmHWM") if peak_source != "ru_maxrss" else maxrss
    value = np.float32(1.0)
    for _ in range(steps):
        value = value - np.float32(LR) * np.float32(0.5)
    got = float(np.asarray(params[-1])[-1])
    ok = abs(got - float(value)) <= 1e-6
    print(
        json.dumps(
            {
                "lib": lib,
                "donate": donate,
                "params_mib": mib,
                "steps": steps,
                "rss_after_setup_mib": rss_setup,
                "peak_rss_mib": peak,
                "ru_maxrss_mib": maxrss,
                "growth_mib": peak - rss_setup,
                "peak_source": peak_source,
                "ok": ok,
                "error": ""
                if ok
                else f"params[-1][-1] = {got}, expected {float(value)}",
            }
        )
    )
