"""jit of sharded arguments that does not run shard by shard is partitioned
over the mesh (python/baton/_partitioned_call.py, jit/spmd_executable.h).

- JAX's partitioning cases (_partitioning_cases.py, a JAX program run
  unchanged on baton through ``baton.as_jax``) on 8 CPU devices: values and
  output shardings equal JAX's, ``in_shardings`` / ``out_shardings`` among
  them.
- On this suite's 4 devices: the findings of issue 37 (``x.sum()`` and
  ``x @ x.T`` of a sharded ``x``, mixed sharded and unsharded arguments)
  compute instead of raising; each device holds 1/N of a split parameter
  and, after the call, nothing but its arguments and outputs; donating to a
  partitioned call is refused with nothing consumed.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import N, in_use

import baton as bt
from baton.sharding import NamedSharding
from baton.sharding import PartitionSpec as P

HERE = os.path.dirname(__file__)
CASES = os.path.join(HERE, "_partitioning_cases.py")


def _run(args):
    # baton.as_jax imports baton before the script runs: the device count
    # comes from the environment.
    env = dict(os.environ, BATON_NUM_CPU_DEVICES="8")
    out = subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def baton_results():
    return _run(["-m", "baton.as_jax", CASES])


@pytest.fixture(scope="module")
def jax_results():
    pytest.importorskip("jax")
    return _run([CASES])


CASE_NAMES = [
    "sum_all", "sum_axis0", "sum_axis1", "mean", "max_axis1", "dot_lhs_rows",
    "dot_rhs_cols", "dot_both", "dot_contracting", "x_xT", "reshape_keep",
    "reshape_flat", "mixed_unsharded", "mixed_shardings", "softmax_rows",
    "mlp_forward", "out_shardings_gather", "out_shardings_split", "in_shardings",
    "dp_step", "tp_step",
]


def _leaves(result):
    if "value" in result or "error" in result:
        return {"": result}
    return result


@pytest.mark.parametrize("case", CASE_NAMES)
def test_values_and_output_shardings_equal_jax(case, baton_results, jax_results):
    ours, theirs = _leaves(baton_results[case]), _leaves(jax_results[case])
    assert "error" not in theirs.get("", {}), theirs
    assert ours.keys() == theirs.keys(), (ours, theirs)
    for k in theirs:
        assert "error" not in ours[k], ours[k]
        np.testing.assert_allclose(
            np.asarray(ours[k]["value"]), np.asarray(theirs[k]["value"]),
            rtol=1e-6, atol=1e-6, err_msg=f"{case} {k}",
        )
        assert ours[k]["spec"] == theirs[k]["spec"], f"{case} {k}"


def test_every_case_runs_on_baton(baton_results):
    # Without jax installed the comparison skips; the cases must still run.
    for case in CASE_NAMES:
        for k, r in _leaves(baton_results[case]).items():
            assert "error" not in r, (case, k, r)


@pytest.fixture
def mesh():
    return bt.make_mesh((N,), ("i",))


def floats(*shape):
    n = int(np.prod(shape))
    return ((np.arange(n) * 37) % 7 - 3).astype(np.float32).reshape(shape)


def test_the_findings_compute(mesh):
    x = floats(8, 4)
    y = bt.device_put(x, NamedSharding(mesh, P("i")))
    s = y.sum()
    assert isinstance(s, bt.ShardedArray) and s.sharding.spec == P()
    assert float(np.asarray(s)) == x.sum()
    g = bt.jit(lambda a: a @ a.T)(y)
    np.testing.assert_array_equal(np.asarray(g), x @ x.T)
    assert g.sharding.spec == P("i")
    m = bt.jit(lambda a, b: a + b)(y, bt.device_put(x))
    np.testing.assert_array_equal(np.asarray(m), 2 * x)
    r = bt.jit(lambda a: a[::-1])(y)
    np.testing.assert_array_equal(np.asarray(r), x[::-1])


def test_a_split_parameter_takes_a_quarter_per_device(mesh):
    before = in_use()
    w = bt.device_put(floats(64, 64), NamedSharding(mesh, P(None, "i")))
    x = bt.device_put(floats(16, 64), NamedSharding(mesh, P()))
    after_put = in_use()
    # w: 64 x 16 floats per device; x whole on each.
    assert [a - b for a, b in zip(after_put, before)] == [(64 * 16 + 16 * 64) * 4] * N

    def layer(w, x):
        return (x @ w).sum()

    out = bt.jit(layer)(w, x)
    np.testing.assert_array_equal(np.asarray(out), (floats(16, 64) @ floats(64, 64)).sum())
    bt.effects_barrier()
    # Beyond the arguments, each device holds its copy of the scalar result
    # (one allocation block): the stages' temporaries are gone.
    grew = [a - b for a, b in zip(in_use(), after_put)]
    assert all(0 < g <= 256 for g in grew), grew
    del out
    bt.effects_barrier()
    assert in_use() == after_put


def test_donating_to_a_partitioned_call_is_refused_and_consumes_nothing(mesh):
    y = bt.device_put(floats(8, 4), NamedSharding(mesh, P("i")))
    with pytest.raises(bt.DonationError, match="Nothing was consumed"):
        bt.jit(lambda a: a.sum())(bt.donate(y))
    assert not y.is_deleted()
    with pytest.raises(bt.DonationError, match="partitioned"):
        bt.jit(lambda a: a @ a.T, donate_argnums=0)(y)
    assert not y.is_deleted()
    np.testing.assert_array_equal(np.asarray(y), floats(8, 4))
