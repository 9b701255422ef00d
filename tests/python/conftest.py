"""Fixtures for baton's Python tests.

Every test runs with global state restored afterwards (memory limits of every
device and memory kind, bt.config, the garbage collector). Tests of release
timing use `no_gc`: baton must release storage by reference counting alone.
"""

import gc

import pytest

import baton as bt

KINDS = ("device", "pinned_host", "unpinned_host")


@pytest.fixture(autouse=True)
def restore_global_state():
    saved_config = bt.config.values()
    gc_enabled = gc.isenabled()
    yield
    for device in bt.devices():
        for kind in KINDS:
            bt.set_memory_limit(None, device, kind)
    for name, value in saved_config.items():
        bt.config.update(name, value)
    if gc_enabled:
        gc.enable()


@pytest.fixture
def no_gc():
    """Runs the test with the cyclic garbage collector off."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()
