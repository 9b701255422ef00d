"""All-reduce bandwidth between processes: baton (bt.distributed, Gloo TCP)
against torch.distributed's gloo backend, in the same run (issue 15).

    python3 bench/distributed_bench.py [--sizes-mib 1 4 16 64 256] [--procs 2 4]
        [--reps 5] [--rounds 3] [--torch-python PYTHON]

needs torch (bench/requirements-distributed.txt: a benchmark-only
dependency, not installed by CI; ``--torch-python`` names a Python that has
it). Every process all-reduces each size (sum, float32) once to warm up,
then ``--reps`` times (more for small sizes: about 64 MiB in all), each
repetition after a barrier so that all ranks start it together. A
repetition's time is its slowest rank's, and a size's time the median
repetition (the best one is a lucky outlier at small sizes, where the
machine's 10-80 us thread wake-ups dominate). The two libraries' process
groups are started in alternation, ``--rounds`` times each (the machine's
state drifts between launches), and each keeps its best round. Bus
bandwidth is 2 (n-1)/n x bytes / time, as NCCL's tests report it. Prints a
table with the ratio baton / torch (bandwidth; above 1 is faster) and that
ratio in each round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools")
)
from launch_processes import free_port


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
            times.append(
                _reps(lambda a=a: run(a), bt.distributed._barrier, _count(reps, mib))
            )
        bt.distributed.shutdown()
    else:
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo", rank=rank, world_size=n)
        for mib in sizes:
            t = torch.ones(mib * 2**18, dtype=torch.float32)
            dist.all_reduce(t)
            times.append(
                _reps(lambda t=t: dist.all_reduce(t), dist.barrier, _count(reps, mib))
            )
        dist.destroy_process_group()
    for i, row in enumerate(times):
        print("TIMES", rank, i, " ".join(f"{t:.6f}" for t in row), flush=True)


def _count(reps: int, mib: int) -> int:
    """Repetitions of a size: at least reps, and ~64 MiB reduced in all (a
    1 MiB all-reduce takes under a millisecond: a few samples of it are
    mostly scheduling noise on a shared machine)."""
    return max(reps, 64 // max(mib, 1))


def _reps(fn, barrier, reps: int) -> list[float]:
    """reps timings of fn, each started right after a barrier."""
    out = []
    for _ in range(reps):
        barrier()
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def launch(
    engine: str, n: int, sizes: list[int], reps: int, python: str
) -> list[float]:
    port = free_port()
    procs = []
    for rank in range(n):
        env = dict(
            os.environ,
            RANK=str(rank),
            WORLD_SIZE=str(n),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            OMP_NUM_THREADS="1",
        )
        procs.append(
            subprocess.Popen(
                [
                    python,
                    __file__,
                    "--worker",
                    engine,
                    "--sizes-mib",
                    *map(str, sizes),
                    "--reps",
                    str(reps),
                ],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    rows: dict[int, list[list[float]]] = {}  # size index -> per rank, per rep
    for p in procs:
        out, _ = p.communicate(timeout=900)
        if p.returncode != 0:
            raise SystemExit(f"{engine} worker failed ({p.returncode})")
        for ln in out.splitlines():
            if ln.startswith("TIMES"):
                _, _, i, *ts = ln.split()
                rows.setdefault(int(i), []).append([float(t) for t in ts])
    # A repetition takes as long as its slowest rank; a size its median rep.
    return [
        statistics.median(max(col) for col in zip(*rows[i])) for i in range(len(sizes))
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes-mib", type=int, nargs="+", default=[1, 4, 16, 64, 256])
    ap.add_argument("--procs", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="process groups started per library, alternating",
    )
    ap.add_argument(
        "--torch-python",
        default=sys.executable,
        help="a Python with torch installed (default: this one)",
    )
    ap.add_argument("--worker", choices=["baton", "torch"])
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.sizes_mib, args.reps)
        return
    print("| procs | MiB | baton GB/s | torch gloo GB/s | baton / torch | per round |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in args.procs:
        rounds = []
        for r in range(args.rounds):
            tb = launch("baton", n, args.sizes_mib, args.reps, sys.executable)
            tt = launch("torch", n, args.sizes_mib, args.reps, args.torch_python)
            rounds.append((tb, tt))
            print(
                f"# {n} processes, round {r + 1}/{args.rounds} done",
                file=sys.stderr,
                flush=True,
            )
        for i, mib in enumerate(args.sizes_mib):
            a = min(tb[i] for tb, _ in rounds)
            b = min(tt[i] for _, tt in rounds)
            per_round = " ".join(f"{tt[i] / tb[i]:.2f}" for tb, tt in rounds)
            bus = 2 * (n - 1) / n * mib * 2**20 / 1e9
            print(
                f"| {n} | {mib} | {bus / a:.2f} | {bus / b:.2f} | {b / a:.2f} | "
                f"{per_round} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
