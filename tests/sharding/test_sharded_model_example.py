"""examples/sharded_model.py: data- and model-parallel training over 4
devices equal one device's, each device at 1x its share of memory."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import sharded_model

import baton as bt


def test_the_example_runs_and_checks_itself(capsys):
    sharded_model.main()
    assert "parameters equal" in capsys.readouterr().out


def test_data_parallel_holds_one_copy_of_the_model_per_device():
    before = [bt.memory_stats(d)["bytes_in_use"] for d in bt.devices()]
    params, per_device = sharded_model.data_parallel(steps=3)
    model = sum(a.nbytes for a in sharded_model.init().values())
    x, y = sharded_model.data()
    share = (x.nbytes + y.nbytes) // sharded_model.N
    for b, now in zip(before, per_device):
        # parameters once (the donated update overwrote them in place), this
        # device's quarter of the batch, and the programs' scalar constants
        assert model + share <= now - b <= model + share + 4096
    ref = bt.device_get(sharded_model.single_device(steps=3))
    for k in ref:
        np.testing.assert_allclose(np.asarray(params[k]), ref[k], rtol=2e-5, atol=2e-6)


def test_jitted_step_with_a_shard_map_loss_holds_one_copy_of_the_model_per_device():
    # Issue 37: shard_map inside jit(grad). After three steps each device
    # holds the parameters once (donated, written in place; the batch was
    # the function's and is freed), and a step's arguments are the
    # parameters and a quarter of the batch.
    before = [bt.memory_stats(d)["bytes_in_use"] for d in bt.devices()]
    params, memory = sharded_model.jitted_data_parallel(steps=3)
    bt.block_until_ready(params)
    model = sum(a.nbytes for a in sharded_model.init().values())
    x, y = sharded_model.data()
    share = (x.nbytes + y.nbytes) // sharded_model.N
    now = [bt.memory_stats(d)["bytes_in_use"] for d in bt.devices()]
    for b, n in zip(before, now):
        assert model <= n - b <= model + 4096
    assert memory.argument_size_in_bytes == model + share
    assert memory.alias_size_in_bytes == model
    ref = bt.device_get(sharded_model.single_device(steps=3))
    for k in ref:
        np.testing.assert_allclose(np.asarray(params[k]), ref[k], rtol=2e-5, atol=2e-6)
