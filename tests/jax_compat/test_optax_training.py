"""examples/optax_training.py -- optax.adamw in optax.chain with
clip_by_global_norm, a donated jitted step -- run unchanged on baton
(`python -m baton.as_jax`) and on JAX, each in a child process, from the
same numpy initial weights: the loss falls on baton and its curve is JAX's
to float32 rounding (issue 38).

optax comes from the scratch folder tools/run_optax_tests.sh installs
(OPTAX_SITE, default build/optax_site); without it the test is skipped.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "optax_training.py")
SITE = os.environ.get("OPTAX_SITE", os.path.join(ROOT, "build", "optax_site"))
STEPS = 60

if not os.path.isdir(os.path.join(SITE, "optax")):
    pytest.skip(
        f"optax is not installed in {SITE}: run tools/run_optax_tests.sh (or "
        "set OPTAX_SITE) first",
        allow_module_level=True,
    )


def _run(prefix):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SITE, env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    env.setdefault("JAX_PLATFORMS", "cpu")
    proc = subprocess.run(
        [sys.executable, *prefix, EXAMPLE, "--json", "--steps", str(STEPS)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def results():
    return _run(["-m", "baton.as_jax"]), _run([])


def test_runs_on_baton_and_the_loss_falls(results):
    baton_run, _ = results
    assert baton_run["runtime"] == "baton"
    assert len(baton_run["losses"]) == STEPS
    assert baton_run["full_loss"] < 0.7 * baton_run["full_loss_before"]
    mem = baton_run["memory"]
    assert (
        mem["after_training"] is not None and mem["after_training"]["bytes_in_use"] > 0
    )


def test_the_donated_state_is_held_once(results):
    # 1x memory for the donated parameters and optimizer state: the compiled
    # step writes every byte of the new state where the old one was (its
    # outputs alias all of the donated state), and the bytes in use do not
    # grow from the first step to the last.
    mem = results[0]["memory"]
    assert mem["state_bytes"] > 0
    assert mem["alias_bytes"] == mem["state_bytes"], mem
    assert (
        mem["after_training"]["bytes_in_use"] == mem["after_first_step"]["bytes_in_use"]
    ), mem


def test_loss_curve_matches_jax(results):
    baton_run, jax_run = results
    assert jax_run["runtime"] == "jax"
    np.testing.assert_allclose(
        baton_run["losses"], jax_run["losses"], rtol=2e-3, atol=1e-5
    )
    np.testing.assert_allclose(
        [baton_run["full_loss_before"], baton_run["full_loss"]],
        [jax_run["full_loss_before"], jax_run["full_loss"]],
        rtol=2e-3,
    )
