#!/usr/bin/env python3
"""Starts N baton processes that join one bt.distributed group.

    python3 tools/launch_processes.py -n 4 [--port P] -- python3 script.py args...

Each child gets BATON_COORDINATOR_ADDRESS=127.0.0.1:P (a free port unless
--port), BATON_NUM_PROCESSES=N and BATON_PROCESS_ID=i, so a bare
``bt.distributed.initialize()`` joins. Every line a child prints is prefixed
with ``[i]``. If one child fails the others are killed (after --grace
seconds); the exit status is the first failure's (0 if all succeeded).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for a coordinator)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pump(rank: int, stream, out, lock: threading.Lock) -> None:
    for line in stream:
        with lock:
            out.write(f"[{rank}] {line}")
            out.flush()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--num-processes", type=int, required=True)
    parser.add_argument(
        "--port", type=int, default=None, help="coordinator port (default: a free one)"
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=5.0,
        help="seconds the others get to exit after one failed, before they are killed",
    )
    parser.add_argument(
        "command", nargs=argparse.REMAINDER, help="-- the command to run"
    )
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --, e.g. -- python3 script.py")
    if args.num_processes < 1:
        parser.error(f"-n is {args.num_processes}; it must be at least 1")
    port = args.port if args.port is not None else free_port()
    lock = threading.Lock()
    procs, pumps = [], []
    for rank in range(args.num_processes):
        env = dict(
            os.environ,
            BATON_COORDINATOR_ADDRESS=f"127.0.0.1:{port}",
            BATON_NUM_PROCESSES=str(args.num_processes),
            BATON_PROCESS_ID=str(rank),
        )
        p = subprocess.Popen(
            command,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        procs.append(p)
        pumps += [
            threading.Thread(
                target=_pump, args=(rank, p.stdout, sys.stdout, lock), daemon=True
            ),
            threading.Thread(
                target=_pump, args=(rank, p.stderr, sys.stderr, lock), daemon=True
            ),
        ]
    for t in pumps:
        t.start()
    status, kill_at = 0, None
    while [p.poll() for p in procs].count(None):  # polls every child, no short cut
        for rank, p in enumerate(procs):
            if p.returncode not in (None, 0) and status == 0:
                status = p.returncode if p.returncode > 0 else 128 - p.returncode
                kill_at = time.monotonic() + args.grace
                sys.stderr.write(
                    f"launch_processes: process {rank} exited with {p.returncode}; "
                    f"stopping the others\n"
                )
                for q in procs:
                    if q.poll() is None:
                        q.terminate()
        if kill_at is not None and time.monotonic() > kill_at:
            for q in procs:
                if q.poll() is None:
                    q.kill()
        time.sleep(0.05)
    for t in pumps:
        t.join(timeout=5)
    if status == 0:
        status = next(
            (
                p.returncode if p.returncode > 0 else 128 - p.returncode
                for p in procs
                if p.returncode != 0
            ),
            0,
        )
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
