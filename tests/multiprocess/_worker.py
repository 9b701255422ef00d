"""One rank of tests/multiprocess (started by test_multiprocess.py): joins
the job, runs the scenario named by argv[1], writes what it saw to
argv[2]/rank<i>.npz (or rank<i>.error with the error text)."""

import os
import sys
import time
import traceback

import numpy as np

import baton as bt
from baton.sharding import NamedSharding, P

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import data_parallel_processes as example


def train(mesh):
    p0, x, y = example.problem()
    params = bt.device_put(p0, NamedSharding(mesh, P()))
    xs = bt.device_put(x, NamedSharding(mesh, P("data")))
    ys = bt.device_put(y, NamedSharding(mesh, P("data")))
    step = example.data_parallel_step(mesh)
    for _ in range(example.STEPS):
        params = step(params, xs, ys)
    bt.block_until_ready(params)
    local = bt.local_devices()
    shards = {
        f"params_{k}": np.stack([np.asarray(s.data) for s in v.addressable_shards])
        for k, v in params.items()
    }
    return {
        **shards,
        "bytes": np.array([bt.memory_stats(d)["bytes_in_use"] for d in local]),
        "model": np.array(sum(a.nbytes for a in p0.values())),
        "data_share": np.array((x.nbytes + y.nbytes) // len(bt.devices())),
    }


def collectives(mesh):
    n = len(bt.devices())
    x = np.arange(n * 4 * 3, dtype=np.float32).reshape(n * 4, 3)
    xs = bt.device_put(x, NamedSharding(mesh, P("data")))

    def f(b):
        return (
            bt.lax.psum(b, "data"),
            bt.lax.pmax(b, "data"),
            bt.lax.all_gather(b, "data", tiled=True),
            bt.lax.ppermute(b, "data", [(i, (i + 1) % n) for i in range(n)]),
            bt.lax.psum(b * 0 + bt.lax.axis_index("data"), "data"),
        )

    # check_vma=False: an all-gathered value counts as varying over the
    # axis (JAX 0.10.2's check_vma), though its values are replicated.
    outs = bt.shard_map(
        f,
        mesh=mesh,
        in_specs=P("data"),
        out_specs=(P(), P(), P(), P("data"), P()),
        check_vma=False,
    )(xs)
    return {
        # Device ids as JAX gives them: unique across processes, and the
        # index within the process as local_hardware_id.
        "ids": np.array([d.id for d in bt.devices()]),
        "device_process": np.array([d.process_index for d in bt.devices()]),
        "local_ids": np.array([d.id for d in bt.local_devices()]),
        "local_hardware_ids": np.array([d.local_hardware_id for d in bt.local_devices()]),
        "psum": np.asarray(outs[0]),
        "pmax": np.asarray(outs[1]),
        "gather": np.asarray(outs[2]),
        "ppermute": np.stack([np.asarray(s.data) for s in outs[3].addressable_shards]),
        "index_sum": np.asarray(outs[4]),
    }


def killed(mesh):
    xs = bt.device_put(
        np.ones((len(bt.devices()), 4), np.float32), NamedSharding(mesh, P("data"))
    )
    f = bt.shard_map(
        lambda b: bt.lax.psum(b, "data"), mesh=mesh, in_specs=P("data"), out_specs=P()
    )
    np.asarray(f(xs))  # everyone is here
    if bt.process_index() == 1:
        os.kill(os.getpid(), 9)  # dies before the next all-reduce
    t0 = time.monotonic()
    try:
        np.asarray(f(xs))
    except Exception as e:
        return {
            "error": np.array(f"{type(e).__name__}: {e}"),
            "waited": np.array(time.monotonic() - t0),
        }
    return {"error": np.array("no error")}


def mismatch(mesh):
    """Collectives the processes call differently (issue 36: a shape
    mismatch aborted rank 1 inside Gloo; a dtype mismatch reinterpreted bits;
    psum here and pmax there mixed). Each must raise on every rank, and a
    matching collective afterwards must still work."""
    me = bt.process_index()
    xs = bt.device_put(
        np.ones((len(bt.devices()) * 2, 3), np.float32), NamedSharding(mesh, P("data"))
    )
    bodies = {
        "shape": lambda b: bt.lax.psum(b if me == 0 else b[:1], "data"),
        "dtype": lambda b: bt.lax.psum(b if me == 0 else b.astype(np.int32), "data"),
        "op": lambda b: (bt.lax.psum if me == 0 else bt.lax.pmax)(b, "data"),
    }
    result = {}
    for name, body in bodies.items():
        f = bt.shard_map(body, mesh=mesh, in_specs=P("data"), out_specs=P())
        try:
            np.asarray(f(xs))
            result[name] = np.array("no error")
        except Exception as e:
            result[name] = np.array(f"{type(e).__name__}: {e}")
    f = bt.shard_map(
        lambda b: bt.lax.psum(b, "data"), mesh=mesh, in_specs=P("data"), out_specs=P()
    )
    result["after"] = np.asarray(f(xs))
    return result


def thread_guard(mesh):
    """bt.thread_guard with real peers: shard_map collectives across the
    processes run from the guard's thread (their device bodies on pool
    threads), are refused from another thread before any network
    operation (every rank refuses, so none waits), and run from any thread
    once the guard is off."""
    import threading

    xs = bt.device_put(
        np.ones((len(bt.devices()), 2), np.float32), NamedSharding(mesh, P("data"))
    )
    f = bt.shard_map(
        lambda b: bt.lax.psum(b, "data"), mesh=mesh, in_specs=P("data"), out_specs=P()
    )

    def in_thread():
        out = {}

        def run():
            try:
                out["value"] = np.asarray(f(xs))
            except Exception as e:
                out["error"] = f"{type(e).__name__}: {e}"

        t = threading.Thread(target=run, name="side-thread")
        t.start()
        t.join()
        return out

    with bt.thread_guard(True):
        guarded = np.asarray(f(xs))
        refused = in_thread()
    free = in_thread()
    return {
        "guarded": guarded,
        "refused": np.array(refused.get("error", "no error")),
        "free": free.get("value", np.array(free.get("error"))),
    }


def tp_step(mesh):
    """Issue 37: jit of a tensor-parallel MLP training step over a mesh
    ('data': processes, 'model': each process's devices), partitioned over
    the processes: w1 split by columns and w2 by rows over 'model', the
    batch over 'data'. Three steps; each rank's blocks, the losses, the
    bytes the parameters took on each device, and the same steps on one
    device of this process with whole arrays. The parameters are donated:
    each step writes the new blocks over the old ones on every device."""
    devices = np.array(bt.devices()).reshape(bt.process_count(), -1)
    mesh = bt.sharding.Mesh(devices, ("data", "model"))
    rng = np.random.default_rng(0)
    p0 = {
        "w1": rng.standard_normal((32, 128)).astype(np.float32) * 0.2,
        "b1": rng.standard_normal(128).astype(np.float32) * 0.1,
        "w2": rng.standard_normal((128, 8)).astype(np.float32) * 0.2,
    }
    x = rng.standard_normal((16, 32)).astype(np.float32)
    y = rng.standard_normal((16, 8)).astype(np.float32)

    def loss(p, x, y):
        h = bt.numpy.maximum(x @ p["w1"] + p["b1"], 0.0)
        return bt.numpy.mean((h @ p["w2"] - y) ** 2)

    def step_fn(p, x, y):
        value, grads = bt.value_and_grad(loss)(p, x, y)
        return bt.tree.map(lambda a, g: a - 0.1 * g, p, grads), value

    step = bt.jit(step_fn, donate_argnums=0)

    specs = {"w1": P(None, "model"), "b1": P("model"), "w2": P("model", None)}
    local = bt.local_devices()
    before = [bt.memory_stats(d)["bytes_in_use"] for d in local]
    params = {k: bt.device_put(v, NamedSharding(mesh, specs[k])) for k, v in p0.items()}
    bt.block_until_ready(params)
    param_bytes = [bt.memory_stats(d)["bytes_in_use"] - b for d, b in zip(local, before)]
    xs = bt.device_put(x, NamedSharding(mesh, P("data")))
    ys = bt.device_put(y, NamedSharding(mesh, P("data")))
    storage = {k: [s.data.unsafe_buffer_pointer() for s in v.addressable_shards]
               for k, v in params.items()}
    losses, same_storage = [], []
    for _ in range(3):
        old = params
        params, value = step(params, xs, ys)
        losses.append(float(np.asarray(value)))
        same_storage.append(all(
            [s.data.unsafe_buffer_pointer() for s in params[k].addressable_shards]
            == storage[k] and old[k].is_deleted()
            for k in params
        ))
    ref = {k: bt.device_put(v, local[0]) for k, v in p0.items()}
    ref_losses = []
    ref_step = bt.jit(step_fn)
    for _ in range(3):
        ref, value = ref_step(ref, bt.device_put(x, local[0]), bt.device_put(y, local[0]))
        ref_losses.append(float(value))
    out = {
        "param_bytes": np.array(param_bytes),
        "model_bytes": np.array(sum(v.nbytes for v in p0.values())),
        "losses": np.array(losses),
        "same_storage": np.array(same_storage),
        "ref_losses": np.array(ref_losses),
    }
    for k, v in params.items():
        out[f"spec_{k}"] = np.array(str(v.sharding.spec))
        out[f"shards_{k}"] = np.stack([np.asarray(s.data) for s in v.addressable_shards])
        out[f"whole_{k}"] = np.asarray(v) if v.is_fully_addressable else np.zeros(0)
        # this rank's blocks of the one-device result, in the same order
        out[f"ref_{k}"] = np.stack(
            [np.asarray(ref[k])[s.index] for s in v.addressable_shards]
        )
    return out


def shard_map_dp_step(mesh):
    """Issue 37: a jitted data-parallel step whose loss is a shard_map'ed
    pmean (shard_map inside jit(grad)), over every process's devices: the
    shard_map is a vmap over the mesh axis, partitioned across the
    processes. Three steps; the losses, this rank's blocks of the
    parameters, and the same steps on one device with the whole batch;
    then three steps with the gradient taken inside the shard_map body."""
    devices = np.array(bt.devices())
    mesh = bt.sharding.Mesh(devices, ("data",))
    rng = np.random.default_rng(1)
    p0 = {"w": rng.standard_normal((8, 4)).astype(np.float32) * 0.3,
          "b": rng.standard_normal(4).astype(np.float32) * 0.1}
    x = rng.standard_normal((8 * len(devices), 8)).astype(np.float32)
    y = rng.standard_normal((8 * len(devices), 4)).astype(np.float32)

    def local_loss(p, x, y):
        return bt.numpy.mean((bt.numpy.tanh(x @ p["w"] + p["b"]) - y) ** 2)

    loss_dp = bt.shard_map(
        lambda p, x, y: bt.lax.pmean(local_loss(p, x, y), "data"),
        mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P(),
    )

    def step_fn(loss):
        def step(p, x, y):
            value, g = bt.value_and_grad(loss)(p, x, y)
            return bt.tree.map(lambda a, b: a - 0.2 * b, p, g), value
        return step

    step = bt.jit(step_fn(loss_dp))
    params = bt.device_put(p0, NamedSharding(mesh, P()))
    xs = bt.device_put(x, NamedSharding(mesh, P("data")))
    ys = bt.device_put(y, NamedSharding(mesh, P("data")))
    losses = []
    for _ in range(3):
        params, value = step(params, xs, ys)
        losses.append(float(np.asarray(value)))
    local = bt.local_devices()
    ref = {k: bt.device_put(v, local[0]) for k, v in p0.items()}
    ref_step = bt.jit(step_fn(local_loss))
    ref_losses = []
    for _ in range(3):
        ref, value = ref_step(ref, bt.device_put(x, local[0]), bt.device_put(y, local[0]))
        ref_losses.append(float(value))
    # The same step with the gradient taken inside the body, as JAX's
    # shard_map page also writes it: the parameters are replicated, so
    # their gradient is summed over the devices (check_vma).
    def body(p, x, y):
        value, g = bt.value_and_grad(lambda q: bt.lax.pmean(local_loss(q, x, y), "data"))(p)
        return bt.tree.map(lambda a, b: a - 0.2 * b, p, g), value

    step_inside = bt.jit(bt.shard_map(
        body, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=(P(), P()),
    ))
    inside = bt.device_put(p0, NamedSharding(mesh, P()))
    losses_inside = []
    for _ in range(3):
        inside, value = step_inside(inside, xs, ys)
        losses_inside.append(float(np.asarray(value)))
    out = {
        "losses": np.array(losses),
        "ref_losses": np.array(ref_losses),
        "losses_inside": np.array(losses_inside),
    }
    for k, v in params.items():
        out[f"shards_{k}"] = np.stack([np.asarray(s.data) for s in v.addressable_shards])
        out[f"shards_inside_{k}"] = np.stack(
            [np.asarray(s.data) for s in inside[k].addressable_shards]
        )
        out[f"ref_{k}"] = np.asarray(ref[k])
    return out


def main():
    scenario, out = sys.argv[1], sys.argv[2]
    # set by tools' launch (Gloo) or by mpirun (MPI)
    rank = int(os.environ.get("BATON_PROCESS_ID") or os.environ["OMPI_COMM_WORLD_RANK"])
    try:
        bt.distributed.initialize(
            collective_timeout=float(os.environ.get("T", "30")),
            device_collectives=os.environ.get("DEVICE_COLLECTIVES", "auto"),
        )
        mesh = bt.sharding.Mesh(np.array(bt.devices()), ("data",))
        scenarios = {
            "collectives": collectives,
            "train": train,
            "killed": killed,
            "mismatch": mismatch,
            "thread_guard": thread_guard,
            "tp_step": tp_step,
            "shard_map_dp_step": shard_map_dp_step,
        }
        result = scenarios[scenario](mesh)
        result["process_index"] = np.array(bt.process_index())
        result["process_count"] = np.array(bt.process_count())
        result["backend"] = np.array(bt.distributed.backend())
        result["device_collectives"] = np.array(bt.distributed.device_collectives())
        result["num_devices"] = np.array(len(bt.devices()))
        np.savez(os.path.join(out, f"rank{rank}.npz"), **result)
    except BaseException:
        with open(os.path.join(out, f"rank{rank}.error"), "w") as f:
            f.write(traceback.format_exc())
        raise
    finally:
        if bt.distributed.is_initialized():
            bt.distributed.shutdown()


if __name__ == "__main__":
    main()
