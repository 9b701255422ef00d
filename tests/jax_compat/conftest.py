"""Fixtures of the JAX comparison suite (tests/jax_compat).

Every test here runs the same program, on the same numpy inputs, through JAX
(jax/jaxlib from bench/requirements.txt, CPU, x64 off) and through baton, and
compares the results to float32 rounding. JAX is a test-only dependency of
this directory: without it every test here is skipped.

Global state is restored after each test, as in tests/python (memory limits,
bt.config).
"""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # no accelerator probing

import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", False)

import baton as bt  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "cpu_default_device: compares baton's default device itself (its "
        "platform, attributes, what counts as a transfer from it) with JAX's "
        "CPU device: skipped where baton's default device is an accelerator "
        "(BATON_PLATFORMS=sim,cpu), where those differ by design",
    )
    # BATON_API_COVERAGE=FILE: note which public names the tests check
    # (_api_coverage.py; tools/namespace_coverage.py --checked FILE).
    out = os.environ.get("BATON_API_COVERAGE")
    if out:
        import sys

        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
        import _api_coverage
        import namespace_coverage

        _api_coverage.install(namespace_coverage.PAIRS)
        config.pluginmanager.register(_api_coverage.Plugin(out), "baton_api_coverage")

KINDS = ("device", "pinned_host", "unpinned_host")


def pytest_collection_modifyitems(config, items):
    device = bt.devices()[0]
    if device.platform == "cpu":
        return
    skip = pytest.mark.skip(
        reason=f"baton's default device is {device}, JAX's a CPU: this test "
        "compares the devices themselves"
    )
    for item in items:
        if item.get_closest_marker("cpu_default_device") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def restore_global_state():
    saved_config = bt.config.values()
    yield
    for device in bt.devices():
        for kind in KINDS:
            bt.set_memory_limit(None, device, kind)
    for name, value in saved_config.items():
        bt.config.update(name, value)
