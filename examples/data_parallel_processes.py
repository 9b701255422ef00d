"""Data-parallel training over several baton processes (DESIGN 5.6).

Run 4 processes on this machine (one CPU device each):

    python3 tools/launch_processes.py -n 4 -- python3 examples/data_parallel_processes.py

Each process joins the group (bt.distributed.initialize reads the launcher's
environment), holds the replicated parameters and its quarter of the batch,
and runs the same shard_map'ed step: local gradient, pmean over the
processes (one Gloo all-reduce), donated update in place. Process 0 then
checks the result against one device training on the whole batch, and every
process prints its memory: parameters + its share of the batch.
"""

from __future__ import annotations

import numpy as np

import baton as bt
import baton.numpy as bnp
from baton.sharding import NamedSharding, P

STEPS, LR = 10, 0.1


def loss(p, x, y):
    h = bnp.tanh(x @ p["w1"])
    return bnp.mean((h @ p["w2"] - y) ** 2)


grad = bt.jit(bt.grad(loss))
update = bt.jit(
    lambda p, g: bt.tree.map(lambda a, b: a - LR * b, p, g), donate_argnums=0
)


def problem():
    rng = np.random.default_rng(0)
    params = {
        "w1": (rng.standard_normal((32, 64)) / 6).astype(np.float32),
        "w2": (rng.standard_normal((64, 8)) / 8).astype(np.float32),
    }
    x = rng.standard_normal((128, 32)).astype(np.float32)
    y = rng.standard_normal((128, 8)).astype(np.float32)
    return params, x, y


def data_parallel_step(mesh):
    """One donated training step on `mesh`: each device's gradient of its
    slice of the batch, averaged over the "data" axis (across processes)."""
    return bt.shard_map(
        lambda p, xb, yb: update(p, bt.lax.pmean(grad(p, xb, yb), "data")),
        mesh=mesh,
        in_specs=(P(), P("data"), P("data")),
        out_specs=P(),
    )


def single_device(steps: int = STEPS) -> dict:
    """The same training on one device and the whole batch (the reference)."""
    ref, x, y = bt.device_put(problem())
    for _ in range(steps):
        ref = update(ref, grad(ref, x, y))
    return {k: np.asarray(v) for k, v in ref.items()}


def main() -> None:
    bt.distributed.initialize()
    mesh = bt.sharding.Mesh(np.array(bt.devices()), ("data",))
    p0, x, y = problem()
    params = bt.device_put(p0, NamedSharding(mesh, P()))
    xs = bt.device_put(x, NamedSharding(mesh, P("data")))
    ys = bt.device_put(y, NamedSharding(mesh, P("data")))
    step = data_parallel_step(mesh)
    for _ in range(STEPS):
        params = step(params, xs, ys)
    got = {k: np.asarray(v) for k, v in params.items()}
    used = bt.memory_stats(bt.local_devices()[0])["bytes_in_use"]
    print(f"process {bt.process_index()} of {bt.process_count()}: {used} bytes in use")
    if bt.process_index() == 0:
        ref = single_device()
        for k in got:
            np.testing.assert_allclose(got[k], ref[k], rtol=2e-5, atol=2e-6)
        print("parameters equal to one device training on the whole batch")
    bt.distributed.shutdown()


if __name__ == "__main__":
    main()
