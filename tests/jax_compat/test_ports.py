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


def _load(name: str, lib: str, main: bool = False) -> types.ModuleType:
    """Run the port in a fresh module namespace (as `__main__` if `main`, so
    that its `if __name__ == "__main__":` block runs); return the module."""
    module = types.ModuleType("__main__" if main else f"jax_port_{name}_{lib}")
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
        "stax_mnist_classifier",
        "stateful_computations",
        "pytrees",
        "quickstart",
        "control_flow",
        "debugging",
        "vmapped_log_probs",
        "convolutions",
        "advi",
        "mnist_vae",
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
        synthetic_datasets.SIZES = (512, 256)  # 4 batches of 128, 10 epochs
        m = _load("mnist_classifier_fromscratch", lib, main=True)
        results[lib] = {
            "params": m.params,
            "train_acc": m.train_acc,
            "test_acc": m.test_acc,
            "loss": m.loss(m.params, (m.test_images, m.test_labels)),
        }
    synthetic_datasets.SIZES = (60000, 10000)
    # 40 SGD steps of 1e-3 from numpy float64 parameters: both libraries
    # make them float32 (x64 off) and agree to float32 rounding.
    assert_same(results["baton"], results["jax"])


def test_automatic_differentiation_tutorial():
    got = {}
    for lib in ("jax", "baton"):
        # The last cell runs jax.test_util.check_grads(loss, (W, b), order=2):
        # loading the port at all means it passed in both libraries.
        m = _load("automatic_differentiation", lib)
        got[lib] = {
            "derivatives": (
                m.grad_tanh(2.0),
                m.grad(m.grad(m.jnp.tanh))(2.0),
                m.grad(m.grad(m.grad(m.jnp.tanh)))(2.0),
                m.dfdx(1.0),
                m.d2fdx(1.0),
                m.d3fdx(1.0),
                m.d4fdx(1.0),
            ),
            # jax.random draws: the same threefry bits in both libraries.
            "draws": (m.W, m.b, m.vec),
            "grads": (m.W_grad, m.b_grad, m.grad(m.loss2)({"W": m.W, "b": m.b})),
            "value_and_grad": (m.loss_value, m.Wb_grad),
            "autodiff_dirderiv": m.jnp.vdot(m.grad(m.loss)(m.W, m.b), m.unitvec),
            "numerical": (m.b_grad_numerical, m.W_grad_numerical),
        }
    # The tutorial's finite differences divide a difference of two float32
    # losses near 3.0 by eps = 1e-4: each loss (a sum of 4 logs) carries a few
    # ulp of rounding (ulp 2.4e-7), so the quotient is noise at the 1e-2 level,
    # and the two libraries, rounding their sums differently, land on
    # different sides of the float64 value (measured: 1.0e-3 to 4.8e-3 away).
    # Rounding-level agreement is not to be had; each must lie within 8 ulp of
    # the loss / eps of the float64 finite difference.
    numerical = {lib: got[lib].pop("numerical") for lib in got}
    m64 = {
        k: np.asarray(v, np.float64)
        for k, v in (
            ("W", m.W),
            ("b", m.b),
            ("inputs", m.inputs),
            ("targets", m.targets),
            ("unitvec", m.unitvec),
        )
    }

    def loss64(W, b):
        p = 0.5 * (np.tanh((m64["inputs"] @ W + b) / 2) + 1)
        t = m64["targets"]
        return -np.sum(np.log(p * t + (1 - p) * (1 - t)))

    W, b, u, eps = m64["W"], m64["b"], m64["unitvec"], 1e-4
    ref = (
        (loss64(W, b + eps / 2) - loss64(W, b - eps / 2)) / eps,
        (loss64(W + eps / 2 * u, b) - loss64(W - eps / 2 * u, b)) / eps,
    )
    noise = 8 * float(np.spacing(np.float32(loss64(W, b)))) / eps
    for lib in numerical:
        for value, r in zip(numerical[lib], ref):
            assert abs(float(value) - r) <= noise, (lib, float(value), r, noise)
    assert_same(got["baton"], got["jax"])


def test_autodiff_cookbook():
    got = {}
    for lib in ("jax", "baton"):
        m = _load("autodiff_cookbook", lib)
        batched = (m.batched_s_tm1, m.batched_r_t, m.batched_s_t)
        got[lib] = {
            "dot_hessian": m.jax.jacfwd(m.jax.grad(lambda x, m=m: m.jnp.dot(x, x)))(
                m.jnp.array([1.0, 2.0, 3.0])
            ),
            "td": (m.delta_theta, m.delta_theta_original_calculation),
            "perex": (
                m.perex_grads(m.theta, *batched),
                m.almost_perex_grads(m.batched_theta, *batched),
                m.inefficient_perex_grads(m.theta, *batched),
            ),
            # jax.random draws: the same threefry bits in both libraries.
            "draws": (m.W, m.b, m.u, m.X, m.V),
            "jacobians": (m.J, m.J_dict, m.H),
            "jvp_vjp": (m.v, m.vgrad(lambda x: 3 * x**2, m.jnp.ones((2, 2)))),
            "hvp_values": (m.ans1, m.ans2),
        }
        hvps = (m.hvp, m.hvp_revfwd, m.hvp_revrev)
        # m.f is the tutorial's last f: sum(tanh(X)**2).
        got[lib]["hvps"] = tuple(h(m.f, (m.X,), (m.V,)) for h in hvps)
    # The Hessian of sum(tanh(X)**2) is diagonal, 2 (1 - t^2)(1 - 3 t^2) with
    # t = tanh(X): the HVP sums O(1) terms that cancel, so XLA's 4-ulp tanh
    # shows as up to ~2e-6 absolute error. Judge against float64.
    t = np.tanh(np.asarray(m.X, np.float64))
    ref = 2 * (1 - t**2) * (1 - 3 * t**2) * np.asarray(m.V, np.float64)
    for lib_b, lib_j in zip(got["baton"].pop("hvps"), got["jax"].pop("hvps")):
        assert_no_less_accurate(lib_b, lib_j, ref)
    hv = {lib: got[lib].pop("hvp_values") for lib in got}
    for lib_b, lib_j in zip(hv["baton"], hv["jax"]):
        assert_no_less_accurate(lib_b, lib_j, ref)
    assert_same(got["baton"], got["jax"])


def test_adam_training_step():
    results = {}
    for lib in ("jax", "baton"):
        module = _load("adam_mnist", lib)
        synthetic_datasets.SIZES = (384, 1)
        results[lib] = module.main(num_steps=3)
    synthetic_datasets.SIZES = (60000, 10000)
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
    products = {
        lib: [got[lib].pop(n) for n in ("naive", "manual", "vmapped")] for lib in got
    }
    assert_same(products["baton"], products["jax"], rtol=1e-4, atol=1e-4)
    # The 1M normal draws and every other value: the same jax.random bits,
    # the same results to float32 rounding.
    assert_same(got["baton"], got["jax"])


def test_control_flow_tutorial():
    names = [
        "grad_below",
        "grad_above",
        "unrolled",
        "summed",
        "caught",
        "static_value",
        "static_n",
        "eager_ones",
        "ones_10",
        "ones_5",
        "cond_true",
        "cond_false",
        "while_result",
        "fori_result",
        "python_positive_even",
        "jax_positive_even",
        "where_values",
        "select_values",
    ]
    got = {}
    for lib in ("jax", "baton"):
        m = _load("control_flow", lib)
        got[lib] = {n: getattr(m, n) for n in names}
    assert got["jax"]["caught"] == ["TracerBoolConversionError", "TypeError"]
    assert got["baton"].pop("caught") == got["jax"].pop("caught")
    assert_same(got["baton"], got["jax"])


def test_debugging_tutorial(capsys, caplog):
    """What the tutorial prints with jax.debug.print and logs through
    jax.debug.callback, line by line. Lines of Python's own print (tracer
    reprs, printed while tracing) differ by design and are left out."""
    printed, logged = {}, {}
    for lib in ("jax", "baton"):
        caplog.clear()
        capsys.readouterr()
        m = _load("debugging", lib)
        m.jax.effects_barrier()
        out = capsys.readouterr().out.splitlines()
        printed[lib] = [ln for ln in out if ln.startswith("jax.debug.print")]
        logged[lib] = [r.getMessage() for r in caplog.records]
    assert logged["baton"] == logged["jax"]
    # The same lines. Their order differs where the tutorial says it may:
    # JAX's unordered prints inside lax.map's loop come y before x; baton
    # prints in program order always (docs/jax_surface.md, bt.debug).
    assert sorted(printed["baton"]) == sorted(printed["jax"])
    sin = {0: "0.0", 1: "0.8414709568023682", 2: "0.9092974066734314"}
    x = [f"jax.debug.print(x) -> {i}.0" for i in range(3)]
    y = [f"jax.debug.print(y) -> {sin[i]}" for i in range(3)]
    on_jit = [x[2], y[2]]
    on_vmap = [*x, *y]  # each print for every example in turn
    on_map = [x[0], y[0], x[1], y[1], x[2], y[2]]  # one example at a time
    on_grad = [x[1]]  # the forward pass only
    ordered = ["jax.debug.print(x) -> 1", "jax.debug.print(y) -> 2"]
    assert printed["baton"] == on_jit + on_vmap + on_map + on_grad + ordered
    assert printed["jax"][:8] == printed["baton"][:8]
    assert printed["jax"][14:] == printed["baton"][14:]


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


def test_stax_mnist_classifier():
    # stax + optimizers (baton.example_libraries): an MLP trained with
    # momentum, and a FanOut / parallel / FanInConcat / Dropout model with
    # adam on a schedule and clip_grads; same PRNG keys, so the same inits.
    results = {}
    for lib in ("jax", "baton"):
        synthetic_datasets.SIZES = (384, 128)  # 3 batches of 128
        module = _load("stax_mnist_classifier", lib)
        results[lib] = module.main(num_epochs=2, batch_size=128, num_steps=4)
    synthetic_datasets.SIZES = (60000, 10000)
    shapes = [results[lib]["branchy"]["out_shape"] for lib in ("baton", "jax")]
    assert shapes[0] == shapes[1]
    for part in ("mlp", "branchy"):
        b, j = dict(results["baton"][part]), dict(results["jax"][part])
        b.pop("out_shape", None), j.pop("out_shape", None)
        # Adam's steps divide by sqrt(v) + eps (see test_adam_mnist): a
        # looser atol for the parameters of the adam-trained model.
        atol = 2e-5 if part == "branchy" else ATOL
        assert_same(b, j, rtol=1e-4, atol=atol)


def test_vmapped_log_probs(capsys):
    """jax.scipy.stats.norm.logpdf in a log joint, batched by hand and by
    vmap, then 1000 jitted SGD steps of variational inference."""
    got, printed = {}, {}
    for lib in ("jax", "baton"):
        capsys.readouterr()
        m = _load("vmapped_log_probs", lib)
        out = capsys.readouterr().out.splitlines()
        # The caught broadcasting error: each library words its own message.
        assert out[0].startswith("Caught expected exception "), out[0]
        printed[lib] = out[1:]
        got[lib] = {
            # numpy draws from a fixed seed: the same data in both.
            "data": (m.true_beta, m.all_x, m.y, m.batched_test_beta),
            "log_joint": m.log_joint(m.true_beta),
            "vmap_batched": m.vmap_batched_log_joint(m.batched_test_beta),
            "jit_vmap_batched": m.batched_log_joint(m.batched_test_beta),
            "elbo": m.elbo(m.beta_loc, m.beta_log_scale, m.epsilon),
            "key_data": m.random.key_data(m.key),
            "fit": (m.beta_loc, m.beta_log_scale, m.elbo_val),
        }
    assert len(printed["baton"]) == len(printed["jax"]) == 100
    # The printed ELBO every 10 steps ("{}".format of a float32 scalar):
    # the step counts are the same text, the values the same to rounding.
    for b, j in zip(printed["baton"], printed["jax"]):
        (ib, vb), (ij, vj) = b.split("\t"), j.split("\t")
        assert ib == ij and np.isclose(float(vb), float(vj), rtol=RTOL), (b, j)
        # Written as JAX writes a float32: the repr of its float64 value.
        assert vb == repr(float(np.float32(vb))), b
    # 1000 SGD steps on a concave ELBO from the same jax.random draws:
    # rounding differences are contracted, the fit agrees to float32 rounding.
    assert_same(got["baton"], got["jax"])


def _record_calls(monkeypatch, lib, calls):
    """Replace each `module.name` of `calls` (module paths relative to the
    library: "numpy", "scipy.signal", "lax") by a wrapper that runs it and
    records (name, result) in the list returned; calls made from inside a
    recorded one (baton's conv calling its conv_general_dilated) are not
    recorded again, so both libraries record the program's own calls."""
    import importlib

    records, depth = [], [0]
    for path, name in calls:
        module = importlib.import_module(f"{lib}.{path}")
        original = getattr(module, name)

        def wrapper(*args, _f=original, _name=f"{path}.{name}", **kwargs):
            depth[0] += 1
            try:
                result = _f(*args, **kwargs)
            finally:
                depth[0] -= 1
            if depth[0] == 0:
                records.append((_name, result))
            return result

        monkeypatch.setattr(module, name, wrapper)
    return records


def test_convolutions(monkeypatch, capsys):
    """Every convolution the "Generalized convolutions in JAX" notebook
    computes (its `out` is reassigned cell after cell), recorded as it is
    called, and what it prints (shapes, dimension numbers)."""
    calls = [
        ("numpy", "convolve"),
        ("scipy.signal", "convolve"),
        ("lax", "conv"),
        ("lax", "conv_with_general_padding"),
        ("lax", "conv_general_dilated"),
    ]
    names = ["y_smooth", "noisy_image", "window", "smooth_image", "img", "kernel_rot"]
    got, printed = {}, {}
    for lib in ("jax", "baton"):
        capsys.readouterr()
        with monkeypatch.context() as patch:
            records = _record_calls(patch, lib if not SELF_CHECK else "jax", calls)
            m = _load("convolutions", lib)
        printed[lib] = capsys.readouterr().out.splitlines()
        got[lib] = {n: getattr(m, n) for n in names}
        got[lib]["calls"] = [name for name, _ in records]
        got[lib]["results"] = [result for _, result in records]
    expected_calls = ["numpy.convolve", "scipy.signal.convolve", "lax.conv"]
    expected_calls += ["lax.conv_with_general_padding"]
    expected_calls += ["lax.conv_general_dilated"] * 8
    assert got["jax"]["calls"] == expected_calls
    assert got["baton"].pop("calls") == got["jax"].pop("calls")
    assert printed["baton"] == printed["jax"]
    # The noisy image (uint8 values plus 50 * normal noise, -180 to 430)
    # smoothed by a 7x7 window of weights summing to ~1: 49 products summed
    # in float32, whose rounding is relative to the terms (up to 430), not
    # to the result, which crosses zero. Tolerance: RTOL of the largest term
    # (both libraries measured within 6e-5 of float64).
    smooth = {lib: got[lib].pop("smooth_image") for lib in got}
    for lib in got:  # the recorded scipy.signal.convolve is smooth_image
        assert got[lib]["results"].pop(1) is smooth[lib]
    scale = float(np.abs(np.asarray(got["jax"]["noisy_image"])).max())
    assert_same(smooth["baton"], smooth["jax"], atol=RTOL * scale)
    assert_same(got["baton"], got["jax"])


def _advi_reference(m, params, t):
    """float64 objective and gradient of examples/advi.py's `objective` at
    `params` and step `t`, from the same standard-normal draws (JAX's
    float32 bits): the ELBO's reparametrised gradient written out, without
    autodiff's two paths through `sample - mean` that cancel exactly."""
    mean, log_std = (np.asarray(p, np.float64) for p in params)
    rngs = m.random.split(m.random.key(t), m.num_samples)
    eps = np.asarray(m.vmap(lambda k: m.random.normal(k, (2,)))(rngs), np.float64)
    std = np.exp(log_std)
    x = mean + std * eps
    x0, x1 = x[:, 0], x[:, 1]
    s1 = 1.35
    logp = (
        -0.5 * x0**2 * np.exp(-2 * x1)
        - x1
        - 0.5 * np.log(2 * np.pi)
        - 0.5 * (x1 / s1) ** 2
        - np.log(s1)
        - 0.5 * np.log(2 * np.pi)
    )
    logq = np.sum(-0.5 * eps**2 - log_std - 0.5 * np.log(2 * np.pi), axis=1)
    dlogp = np.stack(
        [-x0 * np.exp(-2 * x1), -1 + x0**2 * np.exp(-2 * x1) - x1 / s1**2], axis=1
    )
    grad_mean = -np.mean(dlogp, axis=0)
    grad_log_std = -(np.mean(dlogp * std * eps, axis=0) + 1.0)
    return -np.mean(logp - logq), (grad_mean, grad_log_std)


def test_advi(capsys):
    """examples/advi.py: 100 momentum steps on a Monte Carlo ELBO of a
    funnel density, jitted, each step keyed by random.key(t) of a traced t.

    The published program diverges in JAX itself: its lower bound is NaN
    from step 30 or 31 on (x64 off; the funnel's exp(params[1]) scale).
    Before that its stochastic steps amplify rounding differences (1e-6
    relative at step 8, 1e-4 at step 29), so the run is also checked step
    by step: along JAX's own trajectory, baton's objective and gradient
    from the same parameters are checked against float64, as JAX's are."""
    mods, printed = {}, {}
    for lib in ("jax", "baton"):
        capsys.readouterr()
        mods[lib] = _load("advi", lib, main=True)
        printed[lib] = capsys.readouterr().out.splitlines()
    for lib in printed:
        assert printed[lib][0] == "Optimizing variational parameters...", lib
        assert len(printed[lib]) == 101, lib
    for lib in printed:
        values = []
        for t, line in enumerate(printed[lib][1:]):
            head, value = line.rsplit(" ", 1)
            assert head == f"Iteration {t} lower bound", line
            # "{}" of a float32 scalar: the repr of its float64 value.
            assert value == repr(float(np.float32(value))), line
            values.append(float(value))
        finite = np.isfinite(values)
        # Finite for 30 or 31 steps, then NaN to the end, as in JAX.
        n = int(np.argmin(finite))
        assert n in (30, 31) and not finite[n:].any(), (lib, n)
        printed[lib] = np.asarray(values[:30], np.float32)
    assert_same(printed["baton"][:10], printed["jax"][:10], rtol=1e-4)
    assert_same(printed["baton"], printed["jax"], rtol=1e-2)

    mb, mj = mods["baton"], mods["jax"]
    state = mj.opt_init(mj.init_params)
    errors = {"jax": [], "baton": []}
    for t in range(30):
        params_j = mj.get_params(state)
        params_np = tuple(np.asarray(p) for p in params_j)
        ref_value, ref_grad = _advi_reference(mj, params_np, t)
        for lib, m, params in (("jax", mj, params_j), ("baton", mb, params_np)):
            grads = m.grad(m.objective)(params, t)
            # momentum from a fresh state: params - 0.1 * grads, to 0.1 of
            # the gradient noise below (update's grad is traced in its jit).
            stepped = m.get_params(m.update(t, m.opt_init(params)))
            expected = tuple(p - 0.1 * g for p, g in zip(params, grads))
            assert_same(stepped, expected, atol=1e-4)
            value = m.objective(params, t)
            assert abs(float(value) - ref_value) <= 1e-4 * max(1.0, abs(ref_value))
            errors[lib].append(
                max(
                    float(np.max(np.abs(np.asarray(g, np.float64) - r)))
                    for g, r in zip(grads, ref_grad)
                )
            )
        state = mj.update(t, state)
    # The gradient of the mean goes through sample - mean and through mean,
    # two autodiff paths that cancel exactly; float32 leaves noise that
    # grows as std shrinks (log_std reaches -10 by step 11), and each
    # library's rounding lands its own way: measured, each within 5.1e-4
    # of float64 at every step, baton closer at some steps and JAX at
    # others (totals over the 30 steps: JAX 2.3e-3, baton 1.6e-3).
    for lib in errors:
        assert max(errors[lib]) <= 1e-3, (lib, errors[lib])
    assert sum(errors["baton"]) <= 1.5 * sum(errors["jax"]), errors
    # The last grids the callback plotted before the run diverged, and the
    # samples it drew: jax.random bits, the same in both.
    got = {}
    for lib, m, params in (
        ("jax", mj, mj.get_params(state)),
        ("baton", mb, tuple(np.asarray(p) for p in mj.get_params(state))),
    ):
        rngs = m.random.split(m.random.key(29), m.num_samples)
        got[lib] = (
            m.mesh_eval(m.target_dist, m.x_limits, m.y_limits, 1),
            m.mesh_eval(m.approx_dist, m.x_limits, m.y_limits, params),
            m.vmap(m.diag_gaussian_sample, in_axes=(0, None, None))(rngs, *params),
        )
    assert_same(got["baton"], got["jax"])


def test_mnist_vae(capsys):
    """examples/mnist_vae.py's `__main__` (100 epochs, as published) on 32
    synthetic training images (one batch of 32 an epoch) and 16 test images:
    a stax VAE trained with momentum in a jitted fori_loop, keys from
    fold_in, bernoulli-binarised batches."""
    got, printed = {}, {}
    for lib in ("jax", "baton"):
        synthetic_datasets.SIZES = (32, 16)
        capsys.readouterr()
        try:
            m = _load("mnist_vae", lib, main=True)
        finally:
            synthetic_datasets.SIZES = (60000, 10000)
        printed[lib] = capsys.readouterr().out.splitlines()
        got[lib] = {
            "init_params": m.init_params,
            "params": m.get_params(m.opt_state),
            "test_elbo": m.test_elbo,
            "images": (m.train_images, m.test_images),
        }
        got[lib]["sampled_images"] = m.sampled_images
    elbos = {}
    for lib in printed:
        assert len(printed[lib]) == 100, lib
        values = []
        for epoch, line in enumerate(printed[lib]):
            # f"{epoch: 3d} {test_elbo} ({seconds:.3f} sec)": the time aside.
            assert line.startswith(f"{epoch: 3d} ") and line.endswith(" sec)"), line
            value = line.split()[1]
            assert value == repr(float(np.float32(value))), line
            values.append(float(value))
        elbos[lib] = np.asarray(values, np.float32)
    # 100 momentum steps on a sum of 784 * 32 log-likelihood terms: float32
    # rounding of the gradients accumulates to ~4e-6 relative by the end.
    assert_same(elbos["baton"], elbos["jax"], rtol=2e-5)
    samples = {lib: np.asarray(got[lib].pop("sampled_images")) for lib in got}
    assert samples["baton"].shape == samples["jax"].shape == (280, 280)
    assert samples["baton"].dtype == samples["jax"].dtype == np.bool_
    # Bernoulli draws compare a uniform draw to a probability computed in
    # float32: where they fall within rounding, the two can differ.
    assert np.mean(samples["baton"] != samples["jax"]) <= 1e-3
    # The initial parameters are jax.random draws: the same bits.
    assert_same(got["baton"].pop("init_params"), got["jax"].pop("init_params"))
    assert_same(got["baton"], got["jax"], rtol=1e-4, atol=1e-5)
