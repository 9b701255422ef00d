"""baton.numpy against jax.numpy, function by function (tools/jnp_coverage.py).

Every function baton.numpy has must give jax.numpy's results on the probes
of tools/jnp_probes.py; a difference is a bug (or a probe to fix). The
report in docs/jnp_coverage.md -- the one place that lists what baton lacks
-- must be what the script writes now, so the coverage table in the README
cannot go stale.
"""

import os
import sys

import pytest

jax = pytest.importorskip("jax")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import jnp_coverage  # noqa: E402

REPORT = os.path.join(ROOT, "docs", "jnp_coverage.md")


@pytest.fixture(scope="module")
def coverage():
    entries, others = jnp_coverage.run()
    # Probed by name, not read as attributes: tell the coverage report
    # (BATON_API_COVERAGE, _api_coverage.py) what the probes checked.
    import _api_coverage

    _api_coverage.credit(
        "jax.numpy", [e.name for e in entries if e.status == jnp_coverage.MATCHES]
    )
    _api_coverage.credit(
        "jax.numpy", [e.name for e in entries if e.status == jnp_coverage.DIFFERS], False
    )
    return entries, others


def test_every_present_function_matches_jax(coverage):
    entries, _ = coverage
    differs = [f"{e.name}: {e.detail}" for e in entries if e.status == jnp_coverage.DIFFERS]
    assert not differs, "baton.numpy differs from jax.numpy:\n" + "\n".join(differs)


def test_every_probe_is_one_jax_accepts(coverage):
    entries, _ = coverage
    bad = [p for e in entries for p in e.problems]
    assert not bad, "probes JAX refuses (fix tools/jnp_probes.py):\n" + "\n".join(bad)


def test_the_committed_report_is_current(coverage):
    entries, others = coverage
    want = jnp_coverage.render(entries, others, jax.__version__)
    with open(REPORT) as f:
        have = f.read()
    assert have == want, (
        "docs/jnp_coverage.md is out of date: run "
        "`python3 tools/jnp_coverage.py --write docs/jnp_coverage.md` "
        "and update the README's coverage line"
    )
