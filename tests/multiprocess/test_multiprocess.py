"""2 and 4 baton processes on 127.0.0.1 (issue 15 acceptance 3-4), joined over
Gloo and over MPI (started by mpirun): psum and
the other collectives across processes, a donated data-parallel training
step equal on every rank and to one process on the whole batch, each
process at 1x memory, and a peer killed mid-run.

Each test starts its ranks with tests/multiprocess/_worker.py; every wait is
bounded (the ranks' collective timeout, and a subprocess timeout)."""

import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import _worker  # noqa: E402
from launch_processes import free_port  # noqa: E402

import baton as bt  # noqa: E402

MPIRUN = shutil.which("mpirun")
needs_gloo = pytest.mark.skipif(
    not bt.distributed.available("gloo"), reason="baton was built without Gloo"
)
needs_mpi = pytest.mark.skipif(
    not (bt.distributed.available("mpi") and MPIRUN),
    reason="baton was built without MPI, or mpirun is not installed",
)
# Each engine the ranks can join over: Gloo (ranks started here, one
# coordinator) and MPI (ranks started by mpirun, on the loopback only).
BACKENDS = [pytest.param("gloo", marks=needs_gloo), pytest.param("mpi", marks=needs_mpi)]


def mpirun(n, argv, env):
    """The command and environment that start `argv` as an n-process MPI job
    on this machine: loopback and shared memory only, more ranks than cores
    allowed, and allowed as root (containers)."""
    cmd = [
        MPIRUN, "--oversubscribe", "-n", str(n),
        "--mca", "btl", "self,vader,tcp",
        "--mca", "btl_tcp_if_include", "lo",
        "--mca", "oob_tcp_if_include", "lo",
        *argv,
    ]  # fmt: skip
    env = {k: v for k, v in env.items() if not k.startswith("BATON_") or k == "BATON_NUM_CPU_DEVICES"}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return cmd, env


def launch(
    scenario, n, tmp_path, local_devices=1, timeout=120, extra_env=None, backend="gloo"
):
    """Runs the worker's `scenario` in n processes; returns each process's
    (returncode, output) (one pair, mpirun's, under MPI) and each rank's
    results."""
    worker = [sys.executable, os.path.join(HERE, "_worker.py"), scenario, str(tmp_path)]
    procs = []
    if backend == "mpi":
        env = dict(os.environ, BATON_NUM_CPU_DEVICES=str(local_devices), **(extra_env or {}))
        cmd, env = mpirun(n, worker, env)
        procs.append(
            subprocess.Popen(
                cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
        )
    port = free_port()
    for rank in range(n if backend == "gloo" else 0):
        env = dict(
            os.environ,
            BATON_COORDINATOR_ADDRESS=f"127.0.0.1:{port}",
            BATON_NUM_PROCESSES=str(n),
            BATON_PROCESS_ID=str(rank),
            BATON_NUM_CPU_DEVICES=str(local_devices),
            **(extra_env or {}),
        )
        procs.append(
            subprocess.Popen(
                worker,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    deadline = time.monotonic() + timeout
    outputs = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        outputs.append((p.returncode, out))
    results = {}
    for rank in range(n):
        path = tmp_path / f"rank{rank}.npz"
        if path.exists():
            results[rank] = dict(np.load(path))
    return outputs, results


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n,local", [(2, 1), (4, 1), (2, 2)])
def test_collectives_across_processes(tmp_path, n, local, backend):
    outputs, results = launch(
        "collectives", n, tmp_path, local_devices=local, backend=backend
    )
    assert all(rc == 0 for rc, _ in outputs), outputs
    total = n * local
    x = np.arange(total * 4 * 3, dtype=np.float32).reshape(total * 4, 3)
    blocks = np.split(x, total)
    for rank, r in results.items():
        assert int(r["process_index"]) == rank and int(r["process_count"]) == n
        assert str(r["backend"]) == backend
        assert int(r["num_devices"]) == total
        np.testing.assert_array_equal(r["ids"], np.arange(total))
        np.testing.assert_array_equal(r["device_process"], np.repeat(np.arange(n), local))
        np.testing.assert_array_equal(r["local_ids"], rank * local + np.arange(local))
        np.testing.assert_array_equal(r["local_hardware_ids"], np.arange(local))
        np.testing.assert_array_equal(r["psum"], sum(blocks))
        np.testing.assert_array_equal(r["pmax"], np.maximum.reduce(blocks))
        np.testing.assert_array_equal(r["gather"], x)
        np.testing.assert_array_equal(
            r["index_sum"], np.full((4, 3), sum(range(total)))
        )
        mine = [(rank * local + j) for j in range(local)]
        for j, g in enumerate(mine):
            np.testing.assert_array_equal(r["ppermute"][j], blocks[(g - 1) % total])
    assert len(results) == n


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [2, 4])
def test_data_parallel_training_matches_one_process(tmp_path, n, backend):
    outputs, results = launch("train", n, tmp_path, backend=backend)
    assert all(rc == 0 for rc, _ in outputs), outputs
    assert len(results) == n
    names = [k for k in results[0] if k.startswith("params_")]
    assert names
    first = {k: results[0][k][0] for k in names}
    for r in results.values():
        for k in names:
            for shard in r[k]:
                assert shard.tobytes() == first[k].tobytes()  # identical on every rank
        # 1x memory: the parameters once (updated in place), this process's
        # share of the batch, and the programs' scalar constants
        model, share = int(r["model"]), int(r["data_share"])
        for b in r["bytes"]:
            assert model + share <= b <= model + share + 8192, (b, model, share)
    ref = _worker.example.single_device()
    for k in names:
        np.testing.assert_allclose(
            first[k], ref[k.removeprefix("params_")], rtol=2e-5, atol=2e-6
        )


def test_tensor_parallel_training_step_partitioned_across_processes(tmp_path):
    # Issue 37: 2 processes x 2 devices, jit of a tensor-parallel MLP step
    # partitioned over the mesh ('data': processes, 'model': devices).
    outputs, results = launch("tp_step", 2, tmp_path, local_devices=2, timeout=240)
    assert all(rc == 0 for rc, _ in outputs), outputs
    assert len(results) == 2
    r0, r1 = results[0], results[1]
    # Identical on every rank, and equal to one device on the whole batch.
    np.testing.assert_array_equal(r0["losses"], r1["losses"])
    np.testing.assert_allclose(r0["losses"], r0["ref_losses"], rtol=2e-5)
    for k in ("w1", "b1", "w2"):
        assert r0[f"shards_{k}"].tobytes() == r1[f"shards_{k}"].tobytes(), k
        for r in (r0, r1):
            np.testing.assert_allclose(r[f"shards_{k}"], r[f"ref_{k}"], rtol=2e-5, atol=2e-6)
    # The gradient step keeps the parameters' layouts (as JAX does).
    assert str(r0["spec_w1"]) == "PartitionSpec(None, 'model')"
    assert str(r0["spec_w2"]) == "PartitionSpec('model')"
    # Donated, every step wrote the new parameters over the old blocks.
    for r in (r0, r1):
        assert list(r["same_storage"]) == [True] * 3
    # memory_stats: each device holds half of every parameter.
    for r in (r0, r1):
        assert list(r["param_bytes"]) == [int(r["model_bytes"]) // 2] * 2, r["param_bytes"]
    # CPU devices: the blocks crossed processes through the host and Gloo,
    # and the processes say why not NCCL.
    for r in (r0, r1):
        note = str(r["device_collectives"])
        assert note.startswith("host-staged over gloo: "), note
        assert "CUDA devices" in note, note


def test_shard_map_inside_a_jitted_step_partitioned_across_processes(tmp_path):
    # Issue 37: 2 processes x 2 devices, bt.jit(value_and_grad) of a loss
    # that is a shard_map'ed pmean over all four devices; then the jitted
    # shard_map of a body that takes value_and_grad of that pmean itself.
    outputs, results = launch("shard_map_dp_step", 2, tmp_path, local_devices=2, timeout=240)
    assert all(rc == 0 for rc, _ in outputs), outputs
    r0, r1 = results[0], results[1]
    for losses, shards in (("losses", "shards_"), ("losses_inside", "shards_inside_")):
        np.testing.assert_array_equal(r0[losses], r1[losses])
        np.testing.assert_allclose(r0[losses], r0["ref_losses"], rtol=2e-5)
        for k in ("w", "b"):
            mine, theirs = r0[shards + k], r1[shards + k]
            assert mine.tobytes() == theirs.tobytes(), (shards, k)
            for shard in mine:  # replicated: every block is the whole
                np.testing.assert_allclose(shard, r0[f"ref_{k}"], rtol=2e-5, atol=2e-6)


def test_nccl_asked_for_without_one_gpu_per_process_fails_on_every_rank(tmp_path):
    # initialize(device_collectives="nccl") on processes without a GPU:
    # every rank raises, saying why, and leaves the group (nothing hangs
    # half-joined).
    outputs, _ = launch(
        "collectives", 2, tmp_path, timeout=90, extra_env={"DEVICE_COLLECTIVES": "nccl"}
    )
    assert all(rc != 0 for rc, _ in outputs), outputs
    for rank in range(2):
        error = (tmp_path / f"rank{rank}.error").read_text()
        assert "DistributedError" in error, error
        assert "device_collectives='nccl'" in error, error
        assert "has 0 CUDA devices" in error, error


@needs_mpi
def test_mpi_counts_given_that_disagree_with_mpirun_are_a_clear_error():
    code = (
        "import baton as bt\n"
        "try:\n"
        "    bt.distributed.initialize(num_processes=3)\n"
        "except ValueError as e:\n"
        "    print(f'refused: {e}', flush=True)\n"
        "assert not bt.distributed.is_initialized()\n"
        "bt.distributed.initialize(num_processes=2)\n"
        "print(f'joined {bt.process_index()} {bt.distributed.backend()}', flush=True)\n"
    )
    cmd, env = mpirun(2, [sys.executable, "-c", code], dict(os.environ))
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("num_processes is 3 but the MPI job says 2") == 2, out.stdout
    assert "joined 0 mpi" in out.stdout and "joined 1 mpi" in out.stdout


@needs_gloo
def test_a_killed_peer_is_a_clear_error_within_the_timeout(tmp_path):
    timeout = 5.0
    outputs, results = launch(
        "killed", 3, tmp_path, extra_env={"T": str(timeout)}, timeout=90
    )
    assert outputs[1][0] != 0  # the killed rank
    for rank in (0, 2):
        assert outputs[rank][0] == 0, outputs[rank][1]
        err = str(results[rank]["error"])
        assert err != "no error"
        assert "DistributedError" in err or "peer" in err.lower(), err
        assert float(results[rank]["waited"]) < timeout + 10


@needs_gloo
def test_collectives_called_differently_fail_every_rank_clearly(tmp_path):
    # Issue 36: a shape mismatch killed rank 1 with SIGABRT inside Gloo, a
    # dtype mismatch gave rank 1 reinterpreted bits, psum/pmax mixed. The
    # bodies are compiled (baton/_shard_map_compile.py): every call first
    # checks that the processes run the same exchanges.
    outputs, results = launch("mismatch", 2, tmp_path, timeout=90)
    for rank in (0, 1):
        assert outputs[rank][0] == 0, outputs[rank][1]
        for case, shown in (
            ("shape", "process 1 all_reduce(sum) over 'data' of float32(1, 3)"),
            ("dtype", "process 1 all_reduce(sum) over 'data' of int32(2, 3)"),
            ("op", "process 1 all_reduce(max)"),
        ):
            err = str(results[rank][case])
            assert err.startswith("ValueError"), (case, err)
            assert "called different collectives" in err and shown in err, (case, err)
        np.testing.assert_array_equal(results[rank]["after"], np.full((2, 3), 2.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_four_process_example_runs_and_checks_itself(backend):
    root = os.path.join(HERE, "..", "..")
    example = [sys.executable, os.path.join(root, "examples", "data_parallel_processes.py")]
    if backend == "gloo":
        launcher = [sys.executable, os.path.join(root, "tools", "launch_processes.py")]
        cmd, env = [*launcher, "-n", "4", "--", *example], dict(os.environ)
    else:
        cmd, env = mpirun(4, example, dict(os.environ))
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "parameters equal to one device" in out.stdout
    assert out.stdout.count("bytes in use") == 4


def test_thread_guard_across_processes(tmp_path):
    """bt.thread_guard on a shard_map whose collectives cross processes
    (two processes of two devices each, Gloo)."""
    outputs, results = launch("thread_guard", 2, tmp_path, local_devices=2)
    assert all(rc == 0 for rc, _ in outputs), outputs
    assert len(results) == 2
    for r in results.values():
        np.testing.assert_array_equal(r["guarded"], np.full((1, 2), 4.0))
        np.testing.assert_array_equal(r["free"], np.full((1, 2), 4.0))
        refused = str(r["refused"])
        assert refused.startswith("RuntimeError: A multi-process operation"), refused
        assert "'side-thread'" in refused and "'MainThread'" in refused
