"""bt.distributed across real processes on 127.0.0.1 (subprocess; every wait bounded)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
from launch_processes import free_port  # noqa: E402

import baton as bt  # noqa: E402

needs_gloo = pytest.mark.skipif(
    not bt._baton._ProcessGroup.available(), reason="baton was built without Gloo"
)

WAIT_S = 30  # bound on any group of children


def _start(n, body, port, timeout=10, ids=None):
    """Starts one child per process id running `body` after initialize."""
    code = textwrap.dedent(
        """
        import sys, numpy as np, baton as bt
        pid, n, port, timeout = (int(v) for v in sys.argv[1:5])
        bt.distributed.initialize(f"127.0.0.1:{port}", n, pid, initialization_timeout=timeout,
                                  collective_timeout=timeout, interface_address="127.0.0.1")
        """
    ) + textwrap.dedent(body)
    return [
        subprocess.Popen(
            [sys.executable, "-c", code, str(i), str(n), str(port), str(timeout)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in (range(n) if ids is None else ids)
    ]


def _finish(procs):
    outs = []
    deadline = time.monotonic() + WAIT_S
    for p in procs:
        try:
            out, err = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("a child process hung")
        outs.append((p.returncode, out, err))
    return outs


VALUES = """
pid_ = bt.process_index()
assert bt.process_count() == n, bt.process_count()
rng = np.random.default_rng(0)
for dt in ("float32", "float64", "int32", "int64"):
    all_x = (rng.standard_normal((n, 3, 2)) * 10).astype(dt)
    x = all_x[pid_]
    for op, ref in (("sum", all_x.sum(0)), ("max", all_x.max(0)), ("min", all_x.min(0))):
        got = bt.distributed._allreduce(x, op)
        assert got.dtype == x.dtype and got.shape == x.shape
        np.testing.assert_allclose(got, ref.astype(dt), rtol=1e-6)
    np.testing.assert_array_equal(bt.distributed._allgather(x), all_x)
    np.testing.assert_array_equal(bt.distributed._broadcast(x, root=n - 1), all_x[n - 1])
swapped = np.arange(3, dtype=">f8") * (pid_ + 1)  # big-endian input: native result
np.testing.assert_array_equal(bt.distributed._allreduce(swapped, "sum"), np.arange(3.0) * n * (n + 1) / 2)
bt.distributed._barrier()
print("ok", pid_)
"""


@needs_gloo
@pytest.mark.parametrize("n", [2, 4])
def test_collectives_match_numpy(n):
    for i, (rc, out, err) in enumerate(_finish(_start(n, VALUES, free_port()))):
        assert rc == 0, err
        assert out.split() == ["ok", str(i)]


@needs_gloo
def test_a_killed_peer_makes_the_others_raise_within_the_timeout():
    body = """
    import time
    print("ready", flush=True)
    try:
        for _ in range(100000):
            bt.distributed._allreduce(np.ones(1 << 16, np.float32), "sum")
        print("no error")
    except bt.errors.DistributedError as e:
        print("DistributedError", e)
    """
    procs = _start(3, body, free_port(), timeout=5)
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    os.kill(procs[2].pid, signal.SIGKILL)
    outs = _finish(procs)
    assert outs[2][0] == -signal.SIGKILL
    for rc, out, err in outs[:2]:
        assert rc == 0, err
        assert out.splitlines()[-1].startswith("DistributedError all_reduce failed"), (
            out
        )


@needs_gloo
def test_a_peer_that_never_arrives_fails_initialize_within_its_timeout():
    body = "print('joined')"
    start = time.monotonic()
    ((rc, out, err),) = _finish(_start(2, body, free_port(), timeout=2, ids=[0]))
    assert rc != 0
    assert "DistributedError" in err and "process 1 never arrived" in err, err
    assert time.monotonic() - start < WAIT_S


def test_bad_arguments_are_clear_errors(monkeypatch):
    d = bt.distributed
    for var in ("BATON_COORDINATOR_ADDRESS", "BATON_NUM_PROCESSES", "BATON_PROCESS_ID"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError, match="num_processes was not given"):
        d.initialize("127.0.0.1:1")
    with pytest.raises(ValueError, match="process_id is 2; it must be in"):
        d.initialize("127.0.0.1:1", 2, 2)
    with pytest.raises(ValueError, match="num_processes is 0"):
        d.initialize("127.0.0.1:1", 0, 0)
    with pytest.raises(ValueError, match="not host:port"):
        d.initialize("localhost", 2, 1, initialization_timeout=0.2)
    with pytest.raises(ValueError, match="initialization_timeout is -1"):
        d.initialize("127.0.0.1:1", 2, 1, initialization_timeout=-1)
    monkeypatch.setenv("BATON_NUM_PROCESSES", "two")
    with pytest.raises(ValueError, match="BATON_NUM_PROCESSES is 'two'"):
        d.initialize("127.0.0.1:1", process_id=0)
    with pytest.raises(ValueError, match="backend is 'nccl'; use 'gloo', 'mpi'"):
        d.initialize(backend="nccl")
    with pytest.raises(ValueError, match="backend is 'tcp'"):
        d.available("tcp")
    assert not d.is_initialized() and d.backend() is None


def test_mpi_outside_an_mpirun_job_is_a_clear_error(monkeypatch):
    # MPI_Init outside a job can abort the process: baton refuses first
    for var in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"):
        monkeypatch.delenv(var, raising=False)
    want = "not started by mpirun" if bt.distributed.available("mpi") else "without MPI"
    with pytest.raises(bt.errors.DistributedError, match=want):
        bt.distributed.initialize(backend="mpi")
    assert not bt.distributed.is_initialized()


def test_one_process_needs_no_network_and_twice_is_an_error():
    d = bt.distributed
    d.initialize(num_processes=1)
    try:
        assert (
            d.is_initialized() and bt.process_count() == 1 and bt.process_index() == 0
        )
        with pytest.raises(RuntimeError, match="already called"):
            d.initialize(num_processes=1)
        x = np.arange(4, dtype=np.int32)
        np.testing.assert_array_equal(d._allreduce(x, "sum"), x)
        np.testing.assert_array_equal(d._allgather(x), x[None])
        with pytest.raises(ValueError, match="op is 'prod'"):
            d._allreduce(x, "prod")
    finally:
        d.shutdown()
    assert not d.is_initialized()


@needs_gloo
def test_launcher_runs_every_rank_and_prefixes_their_lines():
    tools = os.path.join(
        os.path.dirname(__file__), "..", "..", "tools", "launch_processes.py"
    )
    script = "import baton as bt; bt.distributed.initialize(); print('i am', bt.process_index(), 'of', bt.process_count())"
    r = subprocess.run(
        [
            sys.executable,
            tools,
            "-n",
            "2",
            "--port",
            str(free_port()),
            "--",
            sys.executable,
            "-c",
            script,
        ],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == ["[0] i am 0 of 2", "[1] i am 1 of 2"]
    r = subprocess.run(
        [
            sys.executable,
            tools,
            "-n",
            "2",
            "--",
            sys.executable,
            "-c",
            "import os, time, sys; sys.exit(3) if os.environ['BATON_PROCESS_ID'] == '1' else time.sleep(60)",
        ],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert r.returncode == 3, (r.returncode, r.stderr)


@pytest.mark.skipif(
    bt._baton._ProcessGroup.available(), reason="baton was built with Gloo"
)
def test_without_gloo_initialize_says_so():
    with pytest.raises(bt.errors.DistributedError, match="built without Gloo"):
        bt.distributed.initialize("127.0.0.1:1", 2, 0)
    assert not bt.distributed.is_initialized()


@needs_gloo
def test_an_interface_address_not_of_this_machine_is_a_clear_error():
    with pytest.raises(bt.errors.DistributedError, match="10.255.255.1.*Cannot assign"):
        bt.distributed.initialize(
            f"127.0.0.1:{free_port()}",
            2,
            1,
            initialization_timeout=2,
            interface_address="10.255.255.1",
        )
    assert not bt.distributed.is_initialized()
