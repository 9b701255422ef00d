"""The fresh process of the sharded_dp_step case: ``run.py --child sharded``.

A data-parallel MLP training step on 4 CPU devices of one process -- the
batch split over the mesh axis 'data', the parameters replicated, the
gradients all-reduced by the partitioner (baton's spmd_executable.h, XLA's
SPMD partitioner for JAX) -- jitted with jax.jit / bt.jit and written once for
both (the same code under ``import jax`` or baton). The device count is read
at import, hence a process per library. After compiling and warming up it
prints "ready", then runs one step per "step" line on stdin and prints its
time (ns, synced), so that the parent interleaves the two libraries' steps;
at "end" (or end of input) it prints one JSON line: the final loss and the
parameters' checksum (so the parent can check that both libraries computed
the same).
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

DEVICES = 4
LR = 0.05


def problem(batch: int, width: int) -> tuple[dict, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    params = {
        "w1": (rng.standard_normal((784, width)) * 0.05).astype(np.float32),
        "b1": np.zeros(width, np.float32),
        "w2": (rng.standard_normal((width, width)) * 0.05).astype(np.float32),
        "b2": np.zeros(width, np.float32),
        "w3": (rng.standard_normal((width, 10)) * 0.05).astype(np.float32),
        "b3": np.zeros(10, np.float32),
    }
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = rng.standard_normal((batch, 10)).astype(np.float32)
    return params, x, y


def child_main(lib: str, batch: int, width: int) -> None:
    if lib == "baton":
        os.environ["BATON_NUM_CPU_DEVICES"] = str(DEVICES)
        import baton as jax
        import baton.numpy as jnp
        from baton.sharding import NamedSharding
        from baton.sharding import PartitionSpec as P
    else:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={DEVICES}"
        import jax
        import jax.numpy as jnp
        from jax.sharding import NamedSharding
        from jax.sharding import PartitionSpec as P
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:DEVICES]), ("data",))

    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        h = jnp.tanh(h @ p["w2"] + p["b2"])
        return jnp.mean((h @ p["w3"] + p["b3"] - y) ** 2)

    @jax.jit
    def step(p, x, y):
        value, grads = jax.value_and_grad(loss)(p, x, y)
        return jax.tree.map(lambda a, g: a - LR * g, p, grads), value

    p0, x, y = problem(batch, width)
    params = {k: jax.device_put(v, NamedSharding(mesh, P())) for k, v in p0.items()}
    xs = jax.device_put(x, NamedSharding(mesh, P("data")))
    ys = jax.device_put(y, NamedSharding(mesh, P("data")))
    for _ in range(3):  # compile and warm up
        params, value = step(params, xs, ys)
    jax.block_until_ready(params)
    # Steps on request, one per line read ("step": print its time in ns),
    # so that the parent interleaves this process's steps with the other
    # library's; "end": print the final loss and the parameters' checksum.
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() != "step":
            break
        t0 = time.perf_counter_ns()
        params, value = step(params, xs, ys)
        jax.block_until_ready((params, value))
        print(time.perf_counter_ns() - t0, flush=True)
    checksum = float(sum(float(np.abs(np.asarray(v)).sum()) for v in params.values()))
    print(json.dumps({"loss": float(np.asarray(value)), "checksum": checksum}), flush=True)
