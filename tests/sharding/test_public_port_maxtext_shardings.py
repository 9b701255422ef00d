"""A public JAX program not written for baton, run unchanged on baton and on
JAX: MaxText's pedagogical sharding example (FSDP + tensor parallelism on a
("data", "fsdp", "tensor") mesh, three ``jax.jit`` calls with
``in_shardings`` / ``out_shardings``, ``with_sharding_constraint`` on the
intermediates, bfloat16), ported in _public_port_maxtext_shardings.py (its
docstring gives the source and the port's changes).

Each side runs in a fresh subprocess on 8 CPU devices -- JAX as ``python
_public_port_maxtext_shardings.py`` (JAX_PLATFORMS=cpu,
XLA_FLAGS=--xla_force_host_platform_device_count=8), baton as ``python -m
baton.as_jax _public_port_maxtext_shardings.py`` (BATON_NUM_CPU_DEVICES=8)
-- and prints one JSON line: the generated data and layers, the layers after
one training step, the loss before and after it, each with its value, its
output sharding's spec, shape and dtype. Values must agree within float32
tolerance (rtol 1e-6, no absolute slack: the values are bfloat16, so this is
equality at their precision), specs, shapes and dtypes exactly.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "_public_port_maxtext_shardings.py")

# The program's own sizes (SMALL_ARGS there): 2 layers.
KEYS = ["mesh_shape", "X", "loss_before", "loss_after"] + [
    f"{which}[{i}].{name}"
    for which in ("layers", "new_layers")
    for i in range(2)
    for name in ("EMB2FF", "FF2EMB")
]


def _run(args, env):
    out = subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True,
        timeout=600, cwd=HERE,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def baton_results():
    # baton.as_jax imports baton before the program runs: the device count
    # comes from the environment. baton is the one this test imports (the
    # installed package, or PYTHONPATH's).
    env = dict(os.environ, BATON_NUM_CPU_DEVICES="8")
    return _run(["-m", "baton.as_jax", PROGRAM], env)


@pytest.fixture(scope="module")
def jax_results():
    pytest.importorskip("jax")
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_force_host_platform_device_count=8")
    return _run([PROGRAM], env)


def test_jax_reports_what_the_comparison_expects(jax_results):
    assert sorted(jax_results) == sorted(KEYS)
    assert jax_results["mesh_shape"] == {"data": 1, "fsdp": 4, "tensor": 2}
    assert jax_results["X"]["spec"] == [["data", "fsdp"], "tensor"]
    assert jax_results["new_layers[1].FF2EMB"]["spec"] == ["tensor", "fsdp"]
    # The step changes at least one weight at bfloat16's precision.
    assert any(
        jax_results[f"layers[{i}].{n}"]["value"] != jax_results[f"new_layers[{i}].{n}"]["value"]
        for i in range(2) for n in ("EMB2FF", "FF2EMB")
    )


@pytest.mark.parametrize("key", KEYS)
def test_values_and_output_shardings_equal_jax(key, baton_results, jax_results):
    assert key in baton_results, sorted(baton_results)
    ours, theirs = baton_results[key], jax_results[key]
    if key == "mesh_shape":
        assert ours == theirs
        return
    assert ours["spec"] == theirs["spec"], key
    assert ours["shape"] == theirs["shape"], key
    assert ours["dtype"] == theirs["dtype"], key
    np.testing.assert_allclose(
        np.asarray(ours["value"]), np.asarray(theirs["value"]),
        rtol=1e-6, atol=0, err_msg=key,
    )
