"""An SGD update `p - lr * (h.T @ dz)`, a residual `x + h @ w` and a gradient
accumulation `acc + a @ b` run as one GEMM that adds into its result
(compiler/step_plan.h, kDotAccumulate; the CPU's BLAS with beta = 1): no
product-sized temporary in the compiled memory analysis or in
memory_stats' peak, a donated parameter updated where it lies, and values
that match numpy's."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

from _util import data_ptr

LR = 0.01


def _rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.skipif(bt.default_backend() != "cpu", reason="the CPU backend's GEMM")
def test_sgd_update_writes_into_the_donated_parameter():
    rng = np.random.default_rng(0)
    p, h, dz = _rand(rng, 512, 256), _rand(rng, 64, 512), _rand(rng, 64, 256)
    step = bt.jit(lambda p, h, dz: p - LR * (h.T @ dz), donate_argnums=0)
    analysis = step.lower(p, h, dz).compile().memory_analysis()
    assert analysis.temp_size_in_bytes == 0  # the 512 KiB product is gone
    assert analysis.alias_size_in_bytes == p.nbytes

    on_device = [bt.device_put(a) for a in (p, h, dz)]
    bt.block_until_ready(on_device)
    ptr = data_ptr(on_device[0])
    before = bt.memory_stats()["bytes_in_use"]
    bt.reset_peak_memory_stats()
    new_p = step(*on_device).block_until_ready()
    # Nothing was allocated: the result is the donated parameter's storage.
    assert bt.memory_stats()["peak_bytes_in_use"] == before
    assert data_ptr(new_p) == ptr
    expected = p - LR * (h.astype(np.float64).T @ dz)
    np.testing.assert_allclose(np.asarray(new_p), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "name, f, shapes",
    [
        ("residual x + h @ w", lambda x, h, w: x + h @ w, [(64, 128), (64, 96), (96, 128)]),
        ("accumulate acc + a.T @ b", lambda acc, a, b: acc + a.T @ b,
         [(96, 128), (64, 96), (64, 128)]),
        ("scaled c - (a @ b) * 3", lambda c, a, b: c - (a @ b) * 3.0,
         [(64, 128), (64, 96), (96, 128)]),
        ("batched", lambda c, a, b: c + bnp.matmul(a, b), [(4, 16, 32), (4, 16, 8), (4, 8, 32)]),
    ],
)
def test_the_product_is_never_materialized(name, f, shapes):
    rng = np.random.default_rng(1)
    args = [_rand(rng, *s) for s in shapes]
    jitted = bt.jit(f)
    analysis = jitted.lower(*args).compile().memory_analysis()
    if bt.default_backend() == "cpu":
        assert analysis.temp_size_in_bytes == 0, name
    on_device = [bt.device_put(a) for a in args]
    bt.block_until_ready(on_device)
    before = bt.memory_stats()["bytes_in_use"]
    bt.reset_peak_memory_stats()
    y = jitted(*on_device).block_until_ready()
    if bt.default_backend() == "cpu":
        # The call allocated its output and nothing else.
        assert bt.memory_stats()["peak_bytes_in_use"] - before == y.nbytes, name
    expected = f(*[a.astype(np.float64) for a in args])
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-5, atol=1e-4)


def test_an_addend_the_product_reads_is_still_updated_in_place():
    # c + c @ w: the GEMM reads c, so it cannot add into c's storage; the
    # product is made first and the donated c takes the sum, as before.
    rng = np.random.default_rng(2)
    c, w = _rand(rng, 128, 128), _rand(rng, 128, 128) * 0.1
    f = bt.jit(lambda c, w: c + c @ w, donate_argnums=0)
    cd = bt.device_put(c)
    ptr = data_ptr(cd)
    y = f(cd, w).block_until_ready()
    assert data_ptr(y) == ptr
    np.testing.assert_allclose(np.asarray(y), c + c.astype(np.float64) @ w,
                               rtol=1e-5, atol=1e-4)
