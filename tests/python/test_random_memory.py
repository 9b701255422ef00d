"""bt.random draws run in small tiles, not through full-size temporaries
(tracker issue 36): drawing 1 MiB peaks under 2 MiB of device scratch above
its output, by memory_stats, and the draws keep their bits (hashes of the
values drawn before the change, which equal jax.random's for the same key:
tests/jax_compat/test_random_vs_jax.py checks that directly)."""

import hashlib

import numpy as np
import pytest

import baton as bt
from baton import random as br

N = 256 * 1024  # 1 MiB of 32-bit draws
MIB = 1 << 20

# sha256 of the draws' bytes for key(0) and shape (N,), saved before the
# fusion change (and equal to jax.random.{normal,uniform,bits}(PRNGKey(0))).
EXPECTED_SHA256 = {
    "normal": "45e24a9b700a046cc01d1cb32e9df16286645e1b8eea9de9cd42f2367101e767",
    "uniform": "e61ef454a7b14eab8a3cc999e7f4ed95d952855d854d7f81c2099c7adade889a",
    "bits": "4392f91b13499ea9a384d2c4c326e0cabf971dfc3505728affeb59933aca4761",
}

SAMPLERS = {
    "normal": lambda k, shape: br.normal(k, shape),
    "uniform": lambda k, shape: br.uniform(k, shape),
    "bits": lambda k, shape: br.bits(k, shape),
}


def _scratch_of_draw(draw, key, shape):
    """Peak device bytes above what was in use before, less the output."""
    draw(key, shape).block_until_ready()  # compiled and cached first
    bt.reset_peak_memory_stats()
    before = bt.memory_stats()["bytes_in_use"]
    out = draw(key, shape).block_until_ready()
    peak = bt.memory_stats()["peak_bytes_in_use"]
    return peak - before - out.nbytes, out


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_one_mib_draw_peaks_under_two_mib_of_scratch(name):
    scratch, out = _scratch_of_draw(SAMPLERS[name], br.key(0), (N,))
    assert out.nbytes == MIB
    assert scratch < 2 * MIB, f"{name}: {scratch / MIB:.2f} MiB of scratch"


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jitted_draw_peaks_under_two_mib_of_scratch(name):
    draw = SAMPLERS[name]
    f = bt.jit(lambda k: draw(k, (512, 512)))
    scratch, out = _scratch_of_draw(lambda k, _: f(k), br.key(1), None)
    assert out.nbytes == MIB
    assert scratch < 2 * MIB, f"{name}: {scratch / MIB:.2f} MiB of scratch"


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_draws_keep_their_bits(name):
    got = np.asarray(SAMPLERS[name](br.key(0), (N,)))
    assert hashlib.sha256(got.tobytes()).hexdigest() == EXPECTED_SHA256[name]


# Shapes that end mid-tile (1024 elements) or mid-chunk (65536 per thread),
# eager and jitted, against sha256 of the draws saved before the change.
EDGE_CASES = [
    ("normal", 7, (1001, 3), "a29ae9c9f3145b1da066514b54654fdb712f494c085bfaf2feedc6142a9a558e"),
    ("normal", 5, (1025,), "32a9997ac924b8960efa24edcc08365ff92ae41adeccaf94c8bd73158ada1485"),
    ("normal", 3, (65537,), "ac477df4b3abe38c033df7565673e523924b52bea20b973bc5ba429622a6e8df"),
    ("uniform", 3, (65537,), "ead9042baa5b8efd8c522a3bc0498ce3e20a8084e4d45f5cd6ecaffeae5dd0e6"),
]


@pytest.mark.parametrize("name,seed,shape,expected", EDGE_CASES)
def test_draws_ending_mid_tile_keep_their_bits(name, seed, shape, expected):
    draw = SAMPLERS[name]
    eager = np.asarray(draw(br.key(seed), shape))
    jitted = np.asarray(bt.jit(lambda k: draw(k, shape))(br.key(seed)))
    assert hashlib.sha256(eager.tobytes()).hexdigest() == expected
    assert hashlib.sha256(jitted.tobytes()).hexdigest() == expected
