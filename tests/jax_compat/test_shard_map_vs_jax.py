"""bt.shard_map, its collectives and sharded placement against JAX's, on 4
CPU devices each (a subprocess: both read their device counts at start-up;
the cases are in _shard_map_cases.py)."""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(__file__)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    notes = str(tmp_path_factory.mktemp("api") / "reads.json")
    env = dict(
        os.environ,
        BATON_NUM_CPU_DEVICES="4",
        BATON_NUM_SIM_DEVICES="4",  # when the default platform is the simulated one
        JAX_PLATFORMS="cpu",
        XLA_FLAGS="--xla_force_host_platform_device_count=4",
    )
    if os.environ.get("BATON_API_COVERAGE"):  # _api_coverage.py
        env["BATON_API_COVERAGE_CASES"] = notes
    out = subprocess.run(
        [sys.executable, os.path.join(HERE, "_shard_map_cases.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    reads = {}
    if os.path.exists(notes):
        with open(notes) as f:
            reads = json.load(f)
    return lines, reads


CASES = [
    "psum",
    "pmean",
    "pmax",
    "pmin",
    "axis_size",
    "psum_of_sum",
    "all_gather",
    "all_gather_axis1",
    "all_gather_tiled",
    "psum_scatter_tiled",
    "psum_scatter",
    "all_to_all_tiled",
    "all_to_all",
    "ppermute",
    "pbroadcast",
    "pshuffle",
    "pswapaxes",
    "axis_index",
    "mesh2d_psum_b",
    "mesh2d_psum_a",
    "mesh2d_gather",
    "placement",
    "elementwise_jit",
    "data_parallel_grad",
]


@pytest.mark.parametrize("name", CASES)
def test_same_as_jax(results, name):
    lines, reads = results
    if reads:  # the names this case used count as checked by this test
        import _api_coverage

        _api_coverage.note(reads.get(name, []))
    assert lines.get(name) == "ok", lines.get(name, "missing")
