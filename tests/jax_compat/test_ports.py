"""Public JAX programs ported to baton (examples/jax_ports/), run under both
libraries and compared.

A port differs from its JAX original only in lines marked `# JAX: <original
line>`: this test runs the file as it is (baton) and with every marked line
replaced by its original (JAX), in fresh module namespaces, and compares
what the program computed.
"""

from __future__ import annotations

import os
import re
import sys
import types

import numpy as np
import pytest
from _jaxcompat import ATOL, RTOL, SELF_CHECK, assert_same, to_host

PORTS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "examples",
    "jax_ports",
)
MARKED = re.compile(r"^(\s*)(\S.*?)\s*# JAX: ((?:import|from) .*)$")
if PORTS not in sys.path:
    sys.path.insert(0, PORTS)  # the ports import their helpers by name

import synthetic_datasets  # noqa: E402 -- examples/jax_ports/synthetic_datasets.py


def _source(name: str, lib: str) -> str:
    with open(os.path.join(PORTS, name + ".py")) as f:
        src = f.read()
    if lib == "baton" and not SELF_CHECK:
        return src
    return "\n".join(
        MARKED.sub(lambda m: m.group(1) + m.group(3), line) for line in src.splitlines()
    )


def _load(name: str, lib: str) -> types.ModuleType:
    """Run the port in a fresh module namespace; return the module."""
    module = types.ModuleType(f"jax_port_{name}_{lib}")
    module.__file__ = os.path.join(PORTS, name + ".py")
    exec(compile(_source(name, lib), module.__file__, "exec"), module.__dict__)
    return module


@pytest.mark.parametrize(
    "name",
    [
        "mnist_classifier_fromscratch",
        "automatic_differentiation",
        "autodiff_cookbook",
        "adam_mnist",
        "stateful_computations",
        "pytrees",
        "quickstart",
        "control_flow",
    ],
)
def test_port_differs_only_in_marked_imports(name):
    with open(os.path.join(PORTS, name + ".py")) as f:
        lines = f.read().splitlines()
    marked = [ln for ln in lines if MARKED.match(ln)]
    assert marked, f"{name}: no line marked '# JAX: ...'"
    for ln in lines:
        code = ln.split("#", 1)[0].strip()
        if code.startswith(("import ", "from ")) and "baton" in code:
            assert MARKED.match(ln), f"{name}: unmarked baton import: {ln!r}"
    for ln in marked:
        original = MARKED.match(ln).group(3)
        assert original.startswith(("import ", "from ")), ln


def test_mnist_classifier_fromscratch():
    results = {}
    for lib in ("jax", "baton"):
        module = _load("mnist_classifier_fromscratch", lib)
        synthetic_datasets.SIZES = (512, 256)  # 4 batches of 128
        results[lib] = module.main(num_epochs=1)
    assert_same(results["baton"], results["jax"])


def test_automatic_differentiation_tutorial():
    names = [
        "W_grad",
        "b_grad",
        "dict_grads",
        "loss_value",
        "Wb_grad",
        "W_dirderiv_autodiff",
    ]
    got = {}
    for lib in ("jax", "baton"):
        m = _load("automatic_differentiation", lib)
        got[lib] = {n: getattr(m, n) for n in names}
        got[lib]["derivatives"] = (
            m.grad_tanh(2.0),
            m.grad(m.grad(m.jnp.tanh))(2.0),
            m.dfdx(1.0),
            m.d2fdx(1.0),
            m.d3fdx(1.0),
            m.d4fdx(1.0),
        )
        got[lib]["numerical"] = (m.b_grad_numerical, m.W_grad_numerical)
    numerical = {lib: got[lib].pop("numerical") for lib in got}
    loss_value = {lib: got[lib].pop("loss_value") for lib in got}
    assert_same(got["baton"], got["jax"])
    # The loss sums log(1 - p) for a p near 1: the cancellation turns XLA's
    # tanh error (up to 4 ulp on CPU, measured; baton's is 1.25) into a
    # 2.4e-5 relative loss error. Judge both against float64 instead.
    W, b = m.W.astype(np.float64), np.float64(m.b)
    inputs, targets = np.asarray(m.inputs, np.float64), np.asarray(m.targets)

    def loss64(W, b):
        p = 0.5 * (np.tanh((inputs @ W + b) / 2) + 1)
        return -np.sum(np.log(p * targets + (1 - p) * (1 - targets)))

    assert_no_less_accurate(loss_value["baton"], loss_value["jax"], loss64(W, b))
    # The tutorial's finite-difference checks are noise in float32 at these
    # inputs: 1 - p for p = 0.99993 carries a relative rounding error of
    # ~1.7e-3, so each loss is uncertain by ~1e-3 and a difference of two
    # divided by eps = 1e-4 by ~10 (both libraries land about 1 away from the
    # float64 value, -2.05, in opposite directions of rounding). Only their
    # being finite numbers is compared; the autodiff gradients above are
    # compared exactly.
    for lib in numerical:
        assert all(np.isfinite(np.asarray(v)) for v in numerical[lib]), numerical


def test_autodiff_cookbook():
    names = ["J", "J_rev", "H", "y", "u", "y_vjp", "v_pulled", "per_example"]
    got, hvps = {}, {}
    for lib in ("jax", "baton"):
        m = _load("autodiff_cookbook", lib)
        got[lib] = {n: getattr(m, n) for n in names}
        hvps[lib] = (m.hvp_rev_rev, m.hvp_fwd)
    assert_same(got["baton"], got["jax"])
    # The Hessian of sum(tanh(X)**2) is diagonal, 2 (1 - t^2)(1 - 3 t^2) with
    # t = tanh(X): the HVP sums O(1) terms that cancel, so XLA's 4-ulp tanh
    # shows as 2.4e-6 absolute error (baton's: 7.9e-7). Judge against float64.
    t = np.tanh(m.X.astype(np.float64))
    ref = 2 * (1 - t**2) * (1 - 3 * t**2) * m.V.astype(np.float64)
    for b, j in zip(hvps["baton"], hvps["jax"]):
        assert_no_less_accurate(b, j, ref)


def test_adam_training_step():
    results = {}
    for lib in ("jax", "baton"):
        module = _load("adam_mnist", lib)
        synthetic_datasets.SIZES = (384, 1)
        results[lib] = module.main(num_steps=3)
    assert_same(results["baton"]["values"], results["jax"]["values"])
    # Adam divides by sqrt(v) + 1e-8: a step moves each weight by about lr =
    # 1e-3 whatever the gradient's size, so where a gradient element is
    # within rounding of 1e-8 (a sum of 128 products cancelling: a few of
    # 660k weights), rounding-level differences move the weight by a good
    # part of a step. All but 1e-4 of the elements must agree to float32
    # rounding and every one within the 3 steps' 3e-3.
    for n, (b, j) in enumerate(
        zip(results["baton"]["params"], results["jax"]["params"])
    ):
        b, j = np.asarray(b), np.asarray(j)
        assert b.shape == j.shape and b.dtype == j.dtype
        off = ~np.isclose(b, j, rtol=RTOL, atol=ATOL)
        assert off.mean() <= 1e-4, (n, int(off.sum()), off.size)
        assert np.all(np.abs(b - j) <= 3e-3), n


def test_stateful_computations_tutorial():
    got = {}
    for lib in ("jax", "baton"):
        m = _load("stateful_computations", lib)
        got[lib] = {
            # The tutorial's point: a jitted method reads self.n once, at trace
            # time (1, 1, 1); the functional counter threads its state (1, 2, 3).
            "jit_counts": [int(v) for v in m.jit_counts],
            "functional_counts": [int(v) for v in m.functional_counts],
            "data": (m.xs, m.ys),
            "initial_params": tuple(m.initial_params),
            "params": tuple(m.params),
        }
    assert got["jax"]["jit_counts"] == [1, 1, 1]
    assert got["jax"]["functional_counts"] == [1, 2, 3]
    # The data and the initial parameters are jax.random draws: the same bits.
    assert_same(got["baton"]["data"], got["jax"]["data"])
    assert_same(got["baton"]["initial_params"], got["jax"]["initial_params"])
    # 1000 SGD steps on a convex loss: rounding differences of each step are
    # contracted, not amplified; the fit is the same to float32 rounding.
    assert_same(got["baton"], got["jax"])


def test_pytrees_tutorial():
    names = [
        "leaf_counts",
        "doubled",
        "summed",
        "param_shapes",
        "params",
        "fitted",
        "final_loss",
        "container_leaves",
        "container_sums",
        "namedtuple_leaves",
        "ones_from_shapes",
        "none_leaves",
        "transposed",
        "transposed_builtin",
        "key_strings",
        "key_reprs",
    ]
    got = {}
    for lib in ("jax", "baton"):
        m = _load("pytrees", lib)
        got[lib] = {n: getattr(m, n) for n in names}
    assert got["jax"]["leaf_counts"] == [3, 3, 5, 3, 1]
    # Leaves that are names and printed key paths: compared as Python values.
    for n in ("container_sums", "namedtuple_leaves", "key_strings", "key_reprs"):
        assert got["baton"].pop(n) == got["jax"].pop(n), n
    # The MLP's parameters and data are numpy float64 draws: JAX (x64 off)
    # computes in float32, and so must baton.
    assert_same(got["baton"], got["jax"])


def test_quickstart():
    names = [
        "selu_small",
        "selu_large",
        "derivative",
        "finite_differences",
        "third_derivative",
        "jacobian_exp",
        "hessian_value",
        "naive",
        "manual",
        "vmapped",
    ]
    got = {}
    for lib in ("jax", "baton"):
        m = _load("quickstart", lib)
        got[lib] = {n: getattr(m, n) for n in names}
    # The finite differences divide a difference of two sums near 1.2 by
    # 2e-3: float32 rounding of the sums (~6e-8) shows as ~6e-5 and the two
    # libraries sum in different orders. Judge both against float64.
    fd = {lib: got[lib].pop("finite_differences") for lib in got}
    x = np.arange(3.0)

    def sum_logistic64(v):
        return np.sum(1.0 / (1.0 + np.exp(-v)))

    ref = [
        (sum_logistic64(x + 1e-3 * v) - sum_logistic64(x - 1e-3 * v)) / 2e-3
        for v in np.eye(3)
    ]
    assert_no_less_accurate(fd["baton"], fd["jax"], ref)
    # The batched matrix-vector products sum 100 terms of size ~1 in an order
    # the BLAS chooses: agreement to 1e-4, the tolerance the program itself
    # asserts between its three versions.
    products = {lib: [got[lib].pop(n) for n in ("naive", "manual", "vmapped")]
                for lib in got}
    assert_same(products["baton"], products["jax"], rtol=1e-4, atol=1e-4)
    # The 1M normal draws and every other value: the same jax.random bits,
    # the same results to float32 rounding.
    assert_same(got["baton"], got["jax"])


def test_control_flow_tutorial():
    names = [
        "grad_below", "grad_above", "unrolled", "summed", "caught",
        "static_value", "static_n", "eager_ones", "ones_10", "ones_5",
        "cond_true", "cond_false", "while_result", "fori_result",
        "python_positive_even", "jax_positive_even", "where_values",
        "select_values",
    ]
    got = {}
    for lib in ("jax", "baton"):
        m = _load("control_flow", lib)
        got[lib] = {n: getattr(m, n) for n in names}
    assert got["jax"]["caught"] == ["TracerBoolConversionError", "TypeError"]
    assert got["baton"].pop("caught") == got["jax"].pop("caught")
    assert_same(got["baton"], got["jax"])


def assert_no_less_accurate(baton, jax, reference):
    """baton equals JAX to float32 rounding, or else is at least as close as
    JAX to a float64 reference, element by element."""
    b, j = np.asarray(to_host(baton)), np.asarray(to_host(jax))
    assert b.shape == j.shape and b.dtype == j.dtype, (b.dtype, j.dtype)
    ref = np.asarray(reference, np.float64)
    close = np.isclose(b, j, rtol=RTOL, atol=ATOL)
    err_b = np.abs(b.astype(np.float64) - ref)
    err_j = np.abs(j.astype(np.float64) - ref)
    worse = ~close & (err_b > err_j)
    assert not worse.any(), (
        f"baton less accurate than JAX at {np.flatnonzero(worse)[:10]}: "
        f"baton {b[worse][:5]}, jax {j[worse][:5]}, float64 {ref[worse][:5]}"
    )
