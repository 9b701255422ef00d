"""`x @ w.T` and `x.T @ y` read the transposed operand in place (the
compiler's transpose folding, compiler/transpose_folding.cc): no temporary
copy of `w`, in the compiled memory analysis and in memory_stats' peak, and
the same values as numpy."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

M, K, N = 64, 256, 512  # w: 512 KiB of float32


@pytest.mark.parametrize(
    "name, f, shapes",
    [
        ("x @ w.T", lambda x, w: x @ w.T, [(M, K), (N, K)]),
        ("x.T @ y", lambda x, y: x.T @ y, [(K, M), (K, N)]),
        ("swapaxes batched", lambda x, w: x @ bnp.swapaxes(w, -1, -2),
         [(4, M, K), (4, N, K)]),
    ],
)
def test_a_transposed_operand_is_read_in_place(name, f, shapes):
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    jitted = bt.jit(f)
    analysis = jitted.lower(*args).compile().memory_analysis()
    assert analysis.temp_size_in_bytes == 0, name
    on_device = [bt.device_put(a) for a in args]
    bt.block_until_ready(on_device)
    out_bytes = analysis.output_size_in_bytes
    before = bt.memory_stats()["bytes_in_use"]
    bt.reset_peak_memory_stats()
    y = jitted(*on_device).block_until_ready()
    # The call allocated its output and nothing else.
    assert bt.memory_stats()["peak_bytes_in_use"] - before == out_bytes, name
    expected = f(*[a.astype(np.float64) for a in args])
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-4, atol=1e-3)


def test_a_transpose_used_elsewhere_is_still_made_once():
    x = np.ones((M, K), np.float32)
    w = np.full((N, K), 0.5, np.float32)
    f = bt.jit(lambda x, w: (x @ w.T, w.T + 1.0))
    y, wt1 = f(x, w)
    np.testing.assert_allclose(np.asarray(y), np.full((M, N), 0.5 * K))
    np.testing.assert_allclose(np.asarray(wt1), w.T + 1.0)
