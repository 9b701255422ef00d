"""All-reduce bandwidth between processes: baton (bt.distributed, Gloo TCP)
against torch.distributed's gloo backend, in the same run (issue 15).

    python3 bench/distributed_bench.py [--sizes-mib 1 4 16 64 256] [--procs 2 4]

needs torch (bench/requirements-distributed.txt: a benchmark-only
dependency, not installed by CI). Each size is all-reduced (sum, float32)
``--reps`` times after one warm-up in every process; the time is the
slowest process's best repetition, and bus bandwidth is
2 (n-1)/n x bytes / time, as NCCL's tests report it. Prints a table and
the ratio baton / torch.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time

import numpy as np


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(engine: str, sizes: list[int], reps: int) -> None:
    rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    times = []
    if engine == "baton":
        import baton as bt

        bt.distributed.initialize(
            f"127.0.0.1:{os.environ['MASTER_PORT']}", n, rank, collective_timeout=300
        )
        def run(a):  # in place, as torch's all_reduce
            bt.distributed._allreduce(a, in_place=True)

        for mib in sizes:
            a = np.ones(mib * 2**18, np.float32)
            run(a)
            best = min(_timed(lambda: run(a)) for _ in range(reps))
            times.append(best)
        bt.distributed.shutdown()
    else:
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo", rank=rank, world_size=n)
        for mib in sizes:
            t = torch.ones(mib * 2**18, dtype=torch.float32)
            dist.all_reduce(t)
            best = min(_timed(lambda: dist.all_reduce(t)) for _ in range(reps))
            times.append(best)
        dist.destroy_process_group()
    print("TIMES", rank, " ".join(f"{t:.6f}" for t in times), flush=True)


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def launch(engine: str, n: int, sizes: list[int], reps: int, python: str) -> list[float]:
    port = free_port()
    procs = []
    for rank in range(n):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(n), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen(
            [python, __file__, "--worker", engine, "--sizes-mib", *map(str, sizes),
             "--reps", str(reps)], env=env, stdout=subprocess.PIPE, text=True))
    per_rank = []
    for p in procs:
        out, _ = p.communicate(timeout=900)
        if p.returncode != 0:
            raise SystemExit(f"{engine} worker failed ({p.returncode})")
        line = next(ln for ln in out.splitlines() if ln.startswith("TIMES"))
        per_rank.append([float(v) for v in line.split()[2:]])
    return [max(col) for col in zip(*per_rank)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes-mib", type=int, nargs="+", default=[1, 4, 16, 64, 256])
    ap.add_argument("--procs", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--torch-python", default=sys.executable,
                    help="a Python with torch installed (default: this one)")
    ap.add_argument("--worker", choices=["baton", "torch"])
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.sizes_mib, args.reps)
        return
    print("| procs | MiB | baton GB/s | torch gloo GB/s | baton / torch |")
    print("| --- | --- | --- | --- | --- |")
    for n in args.procs:
        tb = launch("baton", n, args.sizes_mib, args.reps, sys.executable)
        tt = launch("torch", n, args.sizes_mib, args.reps, args.torch_python)
        for mib, a, b in zip(args.sizes_mib, tb, tt):
            bus = 2 * (n - 1) / n * mib * 2**20 / 1e9
            print(f"| {n} | {mib} | {bus / a:.2f} | {bus / b:.2f} | {b / a:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
