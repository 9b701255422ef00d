"""Seed 000: updating model parameters while serving; when buffers are freed.

The Inference class from the thread, written on baton: set_params overwrites the
parameters in place at a chosen moment (device_put(into=)), ordered after the
computations already enqueued on them, while another thread keeps serving; the
peak stays below two copies of the parameters, and buffers return the moment
the last reference goes -- with the garbage collector disabled.
"""

import gc
import threading

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

MiB = 1 << 20


class Inference:
    def __init__(self, forward_fn, params):
        self.forward_fn = forward_fn
        self.params = params
        self.lock = threading.Lock()

    def serve(self, inputs):
        with self.lock:
            return self.forward_fn(inputs, self.params)

    def set_params(self, new_params):
        # Overwrite in place: new host values go into the old storage after
        # the work already enqueued on it; the old arrays are consumed.
        with self.lock:
            self.params = bt.device_put(new_params, into=self.params)


def forward(x, params):
    return sum(bnp.sum(w[:256]) for w in params.values()) * x


@pytest.fixture
def gc_off():
    gc.disable()
    yield
    gc.enable()


def test_swap_while_serving_peaks_below_two_copies(gc_off):
    shape = (4 * MiB // 4,)  # 4 MiB per parameter, 8 parameters
    start = bt.memory_stats()["bytes_in_use"]
    model = Inference(
        bt.jit(forward),
        {f"w{i}": bt.device_put(np.zeros(shape, np.float32)) for i in range(8)},
    )
    params_bytes = 8 * 4 * MiB
    bt.reset_peak_memory_stats()
    answers, errors = [], []
    stop = threading.Event()

    def server():
        try:
            while not stop.is_set():
                answers.append(float(model.serve(1.0)))
        except Exception as e:  # reported below
            errors.append(e)

    t = threading.Thread(target=server)
    t.start()
    for version in range(1, 6):
        model.set_params({k: np.full(shape, version, np.float32) for k in model.params})
    stop.set()
    t.join(timeout=60)
    assert not errors
    assert answers
    # Every answer saw one whole version of the parameters.
    assert all(a % (8 * 256) == 0 for a in answers)
    assert float(model.serve(1.0)) == 5 * 8 * 256
    stats = bt.memory_stats()
    assert stats["peak_bytes_in_use"] < 2 * params_bytes
    assert stats["peak_bytes_in_use"] - start <= params_bytes + MiB

    # Release without the garbage collector: dropping the last reference
    # returns the storage at once.
    bt.block_until_ready(model.params)
    model.params = None
    assert bt.memory_stats()["bytes_in_use"] - start <= MiB


def test_explicit_delete_frees_now_and_later_use_raises(gc_off):
    before = bt.memory_stats()["bytes_in_use"]
    params = bt.device_put(np.ones((1024, 1024), np.float32))
    alias = params  # another reference does not keep the storage alive
    assert bt.memory_stats()["bytes_in_use"] - before == 4 * MiB
    # No work in flight on it (on an accelerator the copy in may still run,
    # and storage with in-flight work returns when that work ends): then
    # delete returns it at once.
    params.block_until_ready()
    params.delete()
    assert bt.memory_stats()["bytes_in_use"] == before
    assert alias.is_deleted()
    with pytest.raises(bt.DeletedArrayError, match="deleted"):
        np.asarray(alias)
    with pytest.raises(bt.DeletedArrayError, match="deleted"):
        bt.jit(lambda p: p + 1)(alias)


def test_device_put_at_a_chosen_time_waits_for_inflight_work():
    x = bt.device_put(np.zeros(1 << 20, np.float32))
    f = bt.jit(lambda a: bnp.sum(a))
    results = [f(x) for _ in range(20)]  # enqueued before the overwrite
    y = bt.device_put(np.ones(1 << 20, np.float32), into=x)
    assert x.is_deleted()
    assert [float(r) for r in results] == [0.0] * 20
    assert float(f(y)) == float(1 << 20)
