"""Fixtures for baton's Python tests.

Every test runs with global state restored afterwards (memory limits of every
device and memory kind, bt.config, the garbage collector) and its enqueued
work finished. Tests marked
``@pytest.mark.x64`` (or modules with ``pytestmark = pytest.mark.x64``) run
with 64-bit types on; the rest with JAX's default, off. Tests marked
``@pytest.mark.host_addressable_device`` are skipped when the default device
is an accelerator (``BATON_PLATFORMS=sim,cpu``): they test zero-copy host
access to device memory, which only the CPU has. Tests of release
timing use `no_gc`: baton must release storage by reference counting alone.

The hypothesis profiles of the property-based tests (test_property_*.py,
docs/testing_robustness.md) are registered here: "ci" (the default: bounded,
derandomized, no example database) and "long" (25x the examples, random,
failures kept in tests/python/.hypothesis, which git ignores), chosen with
BATON_HYPOTHESIS_PROFILE=long.
"""

import gc
import os

import pytest

import baton as bt

try:
    from hypothesis import HealthCheck, settings
    from hypothesis.database import DirectoryBasedExampleDatabase
except ImportError:  # requirements-dev.txt pins it; only the property tests need it
    settings = None

if settings is not None:
    _health = [HealthCheck.too_slow, HealthCheck.data_too_large]
    settings.register_profile(
        "ci",
        max_examples=50,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        suppress_health_check=_health,
    )
    settings.register_profile(
        "long",
        max_examples=1250,
        deadline=None,
        derandomize=False,
        database=DirectoryBasedExampleDatabase(
            os.path.join(os.path.dirname(__file__), ".hypothesis", "examples")
        ),
        print_blob=True,
        suppress_health_check=_health,
    )
    settings.load_profile(os.environ.get("BATON_HYPOTHESIS_PROFILE", "ci"))

KINDS = ("device", "pinned_host", "unpinned_host")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "x64: run with bt.config enable_x64 on (tests of 64-bit dtypes, and "
        "comparisons with numpy, whose defaults are 64-bit)",
    )
    config.addinivalue_line(
        "markers",
        "host_addressable_device: a test of what holds only where the host "
        "can address the default device's `device` memory (zero-copy host "
        "views and DLPack exports of it, R7): skipped on an accelerator "
        "(BATON_PLATFORMS=sim,cpu or cuda,cpu), where test_accelerator_memory.py "
        "checks the accelerator's side of the same contract",
    )


def pytest_collection_modifyitems(config, items):
    device = bt.devices()[0]
    skips = {}
    if not device._host_addressable("device"):
        skips["host_addressable_device"] = pytest.mark.skip(
            reason=f"the default device ({device}) has device memory the "
            "host cannot address: no zero-copy views of it (R7)"
        )
    for item in items:
        for marker, skip in skips.items():
            if item.get_closest_marker(marker) is not None:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def restore_global_state(request):
    saved_config = bt.config.values()
    gc_enabled = gc.isenabled()
    if request.node.get_closest_marker("x64") is not None:
        bt.config.update("enable_x64", True)
    yield
    # The test's queued work, and the frees it holds back, finish here: a
    # next test that reads bytes_in_use must not see them land mid-test.
    bt.effects_barrier()
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
