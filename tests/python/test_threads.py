"""Concurrency: releases that happen on runtime threads, Python threads that
read while another overwrites (seed 000), no deadlock with the GIL."""

import sys
import threading

import numpy as np

import baton as bt

from _util import floats


def test_borrowed_memory_released_from_worker_threads(no_gc):
    h = floats(1 << 18)  # 1 MiB
    refs = sys.getrefcount(h)
    for _ in range(50):
        y = bt.device_put(h, may_alias=True)
        copies = [y.copy() for _ in range(4)]  # in flight on the compute queue
        del y  # the last release runs on a worker thread, which takes the GIL
        bt.block_until_ready(copies)
    for _ in range(1000):
        if sys.getrefcount(h) == refs:
            break
        threading.Event().wait(0.001)
    assert sys.getrefcount(h) == refs


def test_readers_while_parameters_are_overwritten():
    params = {
        "w": bt.device_put(np.zeros((256, 1024), np.float32)),
        "b": bt.device_put(np.zeros(1024, np.float32)),
    }
    lock = threading.Lock()
    stop = threading.Event()
    torn, reads, errors = [], [0], []

    def serve():
        try:
            while not stop.is_set():
                with lock:  # enqueue copies of the current parameters
                    snapshot = {k: v.copy() for k, v in params.items()}
                got = bt.device_get(snapshot)  # while the next swap is queued
                for v in got.values():
                    if v.min() != v.max():
                        torn.append(True)
                reads[0] += 1
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    t = threading.Thread(target=serve)
    t.start()
    for i in range(1, 30):
        new = {
            "w": np.full((256, 1024), i, np.float32),
            "b": np.full(1024, i, np.float32),
        }
        with lock:
            params = bt.device_put(new, into=params)
    stop.set()
    t.join(timeout=60)
    assert not t.is_alive()
    assert not errors and not torn and reads[0] > 0
    assert float(np.asarray(params["w"])[0, 0]) == 29.0
