"""A two-layer MLP over 4 devices of one process, two ways (DESIGN 5.6).

1. Data parallel: the parameters are replicated, the batch is split over the
   "data" axis; each device computes the gradient of its quarter of the
   batch, ``pmean`` averages them, and a donated update overwrites each
   device's parameters in place.
2. Model parallel: the first layer's weights are split by columns and the
   second's by rows over the "model" axis, so each device holds a quarter
   of the model; the output is the ``psum`` of the devices' partial
   products.

3. The data-parallel step written as JAX's shard_map page writes it: a loss
   that is a shard_map'ed ``pmean`` of each device's loss, and
   ``bt.jit`` of the whole step around ``bt.grad`` of it. Inside jit the
   shard_map is a vmap over the mesh axis, partitioned with the rest of the
   step: each device holds its quarter of the batch, and the donated
   parameters are updated in place.

All are checked against one device computing on the whole batch, and the
per-device memory is printed.

Run:  BATON_NUM_CPU_DEVICES=4 python3 examples/sharded_model.py
"""

from __future__ import annotations

import numpy as np

import baton as bt
import baton.numpy as bnp
from baton.sharding import NamedSharding, P

N = 4
BATCH, D_IN, HIDDEN, D_OUT = 256, 64, 128, 16
LR = 0.1


def init(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {
        "w1": (rng.standard_normal((D_IN, HIDDEN)) / np.sqrt(D_IN)).astype(np.float32),
        "w2": (rng.standard_normal((HIDDEN, D_OUT)) / np.sqrt(HIDDEN)).astype(
            np.float32
        ),
    }


def data(seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, D_IN)).astype(np.float32)
    y = rng.standard_normal((BATCH, D_OUT)).astype(np.float32)
    return x, y


def loss(params: dict, x, y):
    h = bnp.tanh(x @ params["w1"])
    return bnp.mean((h @ params["w2"] - y) ** 2)


grad = bt.jit(bt.grad(loss))
update = bt.jit(
    lambda p, g: bt.tree.map(lambda a, b: a - LR * b, p, g), donate_argnums=0
)


def data_parallel(steps: int = 5) -> tuple[dict, list]:
    mesh = bt.make_mesh((N,), ("data",))
    replicated = NamedSharding(mesh, P())
    split = NamedSharding(mesh, P("data"))
    params = bt.device_put(init(), replicated)
    x, y = data()
    xs, ys = bt.device_put(x, split), bt.device_put(y, split)

    def step(p, xb, yb):
        return update(p, bt.lax.pmean(grad(p, xb, yb), "data"))

    train = bt.shard_map(
        step, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P()
    )
    for _ in range(steps):
        params = train(params, xs, ys)
    bt.block_until_ready(params)
    per_device = [bt.memory_stats(d)["bytes_in_use"] for d in mesh.devices.flat]
    return params, per_device


def jitted_data_parallel(steps: int = 5) -> tuple[dict, object]:
    mesh = bt.make_mesh((N,), ("data",))
    params = bt.device_put(init(), NamedSharding(mesh, P()))
    x, y = data()
    xs, ys = bt.device_put((x, y), NamedSharding(mesh, P("data")))

    @bt.shard_map(mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())
    def loss_dp(p, xb, yb):
        return bt.lax.pmean(loss(p, xb, yb), "data")

    def step(p, xb, yb):
        g = bt.grad(loss_dp)(p, xb, yb)
        return bt.tree.map(lambda a, b: a - LR * b, p, g)

    train_step = bt.jit(step, donate_argnums=0)

    memory = train_step.lower(params, xs, ys).compile().memory_analysis()
    for _ in range(steps):
        params = train_step(params, xs, ys)
    return params, memory


def single_device(steps: int = 5) -> dict:
    params = bt.device_put(init())
    x, y = bt.device_put(data())
    for _ in range(steps):
        params = update(params, grad(params, x, y))
    return params


def model_parallel() -> tuple[np.ndarray, list]:
    mesh = bt.make_mesh((N,), ("model",))
    p = init()
    w1 = bt.device_put(p["w1"], NamedSharding(mesh, P(None, "model")))  # columns
    w2 = bt.device_put(p["w2"], NamedSharding(mesh, P("model", None)))  # rows
    x = bt.device_put(data()[0], NamedSharding(mesh, P()))

    def forward(w1_block, w2_block, xb):
        partial = bnp.tanh(xb @ w1_block) @ w2_block  # this device's share
        return bt.lax.psum(partial, "model")

    out = bt.shard_map(
        forward,
        mesh=mesh,
        in_specs=(P(None, "model"), P("model", None), P()),
        out_specs=P(),
    )(w1, w2, x)
    weights = [
        s.data.nbytes + t.data.nbytes
        for s, t in zip(w1.addressable_shards, w2.addressable_shards)
    ]
    return np.asarray(out), weights


def main() -> None:
    if bt.device_count() < N:
        raise SystemExit(f"run with BATON_NUM_CPU_DEVICES={N}")
    ref = bt.device_get(single_device())
    params, per_device = data_parallel()
    for k in ref:
        got = np.asarray(params[k])
        np.testing.assert_allclose(got, ref[k], rtol=2e-5, atol=2e-6)
        shards = [np.asarray(s.data) for s in params[k].addressable_shards]
        assert all(s.tobytes() == shards[0].tobytes() for s in shards)
    model_bytes = sum(a.nbytes for a in init().values())
    print(
        f"data parallel: parameters equal to one device's ({model_bytes} B model); "
        f"bytes in use per device: {per_device}"
    )

    params, memory = jitted_data_parallel()
    for k in ref:
        np.testing.assert_allclose(np.asarray(params[k]), ref[k], rtol=2e-5, atol=2e-6)
    batch_bytes = sum(a.nbytes for a in data())
    assert memory.argument_size_in_bytes == model_bytes + batch_bytes // N
    assert memory.alias_size_in_bytes == model_bytes  # updated in place
    print(
        f"jit(grad(shard_map loss)): parameters equal to one device's; per device "
        f"{memory.argument_size_in_bytes} B of arguments (1/{N} of the {batch_bytes} B "
        f"batch), {memory.alias_size_in_bytes} B of parameters written in place, "
        f"peak {memory.peak_memory_in_bytes} B"
    )

    out, weights = model_parallel()
    p = init()
    x = data()[0]
    np.testing.assert_allclose(
        out, np.tanh(x @ p["w1"]) @ p["w2"], rtol=1e-4, atol=1e-5
    )
    assert weights == [model_bytes // N] * N
    print(
        f"model parallel: output equals numpy's; weight bytes per device: {weights} "
        f"(1/{N} of {model_bytes})"
    )


if __name__ == "__main__":
    main()
