"""A matrix product's scratch on the CPU -- a float16/bfloat16 product's
operands and result widened to float32, a transposed copy of an operand
whose dimensions are in neither BLAS order -- is part of the compiled
executable's temporaries (kernels/dot.h DotGeneralScratchBytes, placed by
buffer assignment as DESIGN.md section 6 asks): the memory analysis counts
it, memory_stats' peak shows it while the call runs, and it is released
when the call ends. The kernels allocate nothing of their own."""

import ml_dtypes
import numpy as np
import pytest

import baton as bt
import baton.lax as lax

pytestmark = pytest.mark.skipif(
    bt.default_backend() != "cpu", reason="the CPU backend's matrix products"
)


def _run_and_measure(f, args):
    """(result, peak growth during the call, bytes still held after it
    beyond the result)."""
    on_device = [bt.device_put(a) for a in args]
    bt.block_until_ready(on_device)
    before = bt.memory_stats()["bytes_in_use"]
    bt.reset_peak_memory_stats()
    y = f(*on_device).block_until_ready()
    stats = bt.memory_stats()
    return y, stats["peak_bytes_in_use"] - before, stats["bytes_in_use"] - before - y.nbytes


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
def test_a_16_bit_product_widens_into_the_executables_temporaries(dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 96)).astype(dtype)
    b = rng.standard_normal((96, 128)).astype(dtype)
    matmul = bt.jit(lambda a, b: a @ b)
    # a, b and the product in float32 (each a multiple of 64 bytes).
    widened = 4 * (64 * 96 + 96 * 128 + 64 * 128)
    analysis = matmul.lower(a, b).compile().memory_analysis()
    assert analysis.temp_size_in_bytes == widened

    y, peak_growth, held_after = _run_and_measure(matmul, [a, b])
    assert peak_growth == y.nbytes + widened  # the scratch, while it ran
    assert held_after == 0  # and gone when the call returned
    expected = (a.astype(np.float64) @ b.astype(np.float64)).astype(dtype)
    np.testing.assert_allclose(
        np.asarray(y).astype(np.float32), expected.astype(np.float32), rtol=2e-2, atol=0.2
    )


def test_an_operand_in_neither_blas_order_is_copied_into_the_temporaries():
    rng = np.random.default_rng(1)
    # lhs [i, batch, k]: the batch dimension sits between its free and
    # contracting ones, so the product reads a [batch, i, k] copy of it.
    a = rng.standard_normal((32, 4, 48)).astype(np.float32)
    b = rng.standard_normal((4, 48, 16)).astype(np.float32)
    f = bt.jit(lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((1,), (0,)))))
    analysis = f.lower(a, b).compile().memory_analysis()
    assert analysis.temp_size_in_bytes == a.nbytes

    y, peak_growth, held_after = _run_and_measure(f, [a, b])
    assert peak_growth == y.nbytes + a.nbytes
    assert held_after == 0
    expected = np.einsum("ibk,bkj->bij", a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-5, atol=1e-4)


def test_a_product_read_in_place_needs_no_scratch():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((64, 96)).astype(np.float32)
    b = rng.standard_normal((128, 96)).astype(np.float32)
    f = bt.jit(lambda a, b: a @ b.T)  # b.T is BLAS's transposed operand
    assert f.lower(a, b).compile().memory_analysis().temp_size_in_bytes == 0
    y, peak_growth, held_after = _run_and_measure(f, [a, b])
    assert peak_growth == y.nbytes
    assert held_after == 0


def test_the_scratch_is_reused_across_calls_in_a_loop():
    # The scratch lives in each call's arena; a loop of calls holds one
    # call's at a time, not one per call.
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    w = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16) * 0.1
    matmul = bt.jit(lambda a, w: a @ w)
    widened = 3 * 64 * 64 * 4
    x, w_d = bt.device_put(a), bt.device_put(w)
    bt.block_until_ready([x, w_d])
    before = bt.memory_stats()["bytes_in_use"]
    bt.reset_peak_memory_stats()
    for _ in range(5):
        x = matmul(x, w_d)
    x.block_until_ready()
    # Beyond what was held before (the first x and w): at most the
    # input still being read, the new output and one call's scratch.
    assert bt.memory_stats()["peak_bytes_in_use"] - before <= 2 * x.nbytes + widened
