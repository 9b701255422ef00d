"""bt.random without JAX: the Threefry-2x32 hash against a numpy reference
written from the paper (Salmon et al., SC'11) and Random123's known-answer
vectors, then the properties of keys and samplers (ranges, dtypes, shapes,
determinism, independence of streams, rough moments with fixed seeds),
eager against bt.jit, and the errors."""

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton import random as br
from baton.random import _threefry

# ---- a numpy reference of Threefry-2x32-20 ----

_MASK = 0xFFFFFFFF
_R = (13, 15, 26, 6, 17, 29, 16, 24)


def _rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & _MASK


def threefry_reference(key, counter):
    """Threefry-2x32 with 20 rounds in uint64 arithmetic masked to 32 bits:
    key schedule (k0, k1, k0 ^ k1 ^ 0x1BD11BDA), a key injection (plus its
    index) after every 4 rounds, rotations R_32x2."""
    k0, k1 = (np.uint64(k) for k in key)
    ks = (k0, k1, k0 ^ k1 ^ np.uint64(0x1BD11BDA))
    x0 = (np.asarray(counter[0], np.uint64) + ks[0]) & _MASK
    x1 = (np.asarray(counter[1], np.uint64) + ks[1]) & _MASK
    for rnd in range(20):
        x0 = (x0 + x1) & _MASK
        x1 = _rotl(x1, np.uint64(_R[rnd % 8])) ^ x0
        if rnd % 4 == 3:
            s = rnd // 4 + 1
            x0 = (x0 + ks[s % 3]) & _MASK
            x1 = (x1 + ks[(s + 1) % 3] + np.uint64(s)) & _MASK
    return x0.astype(np.uint32), x1.astype(np.uint32)


_hash = bt.jit(lambda k0, k1, x0, x1: _threefry.threefry2x32(k0, k1, x0, x1))


def _u32(v):
    return np.asarray(v, np.uint32)


# Random123 kat_vectors, Threefry-2x32-20: counter, key -> output.
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("counter,key,expected", KNOWN_ANSWERS)
def test_threefry_known_answers(counter, key, expected):
    y0, y1 = _hash(_u32(key[0]), _u32(key[1]), _u32(counter[0]), _u32(counter[1]))
    assert (int(np.asarray(y0)), int(np.asarray(y1))) == expected
    assert tuple(int(v) for v in threefry_reference(key, counter)) == expected


def test_threefry_matches_reference_on_random_inputs():
    rng = np.random.default_rng(0)
    for _ in range(4):
        key = tuple(int(k) for k in rng.integers(0, 2**32, 2))
        x0 = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
        x1 = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
        y0, y1 = _hash(_u32(key[0]), _u32(key[1]), x0, x1)
        r0, r1 = threefry_reference(key, (x0, x1))
        np.testing.assert_array_equal(np.asarray(y0), r0)
        np.testing.assert_array_equal(np.asarray(y1), r1)


def test_bit_helpers_are_exact_on_uint32():
    x = _u32([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xDEADBEEF, 0x12345678])
    y = _u32([0xFFFFFFFF, 3, 0x80000000, 0x80000000, 0x0F0F0F0F, 0xCAFEBABE, 0])
    f = bt.jit(
        lambda a, b: (
            _threefry.xor(a, b),
            _threefry.shift_left(a, 7),
            _threefry.shift_right(a, 7),
            _threefry.rotate_left(a, 13),
        )
    )
    xor, shl, shr, rot = (np.asarray(v) for v in f(x, y))
    np.testing.assert_array_equal(xor, x ^ y)
    np.testing.assert_array_equal(shl, x << np.uint32(7))
    np.testing.assert_array_equal(shr, x >> np.uint32(7))
    np.testing.assert_array_equal(rot, (x << np.uint32(13)) | (x >> np.uint32(19)))


# ---- keys ----


def _key_reference(seed):
    return np.array([0, seed & _MASK], np.uint32)


def test_prngkey_from_ints_and_integer_scalars():
    np.testing.assert_array_equal(np.asarray(br.PRNGKey(0)), [0, 0])
    np.testing.assert_array_equal(np.asarray(br.PRNGKey(42)), [0, 42])
    # Without 64-bit types the seed is taken modulo 2**32 (as JAX does).
    np.testing.assert_array_equal(np.asarray(br.PRNGKey(2**40 + 7)), [0, 7])
    np.testing.assert_array_equal(np.asarray(br.PRNGKey(-1)), [0, _MASK])
    np.testing.assert_array_equal(np.asarray(br.PRNGKey(np.int8(-1))), [0, _MASK])
    np.testing.assert_array_equal(np.asarray(br.PRNGKey(np.uint32(7))), [0, 7])
    traced = bt.jit(br.PRNGKey)(np.int32(-3))
    np.testing.assert_array_equal(np.asarray(traced), [0, 2**32 - 3])
    assert br.PRNGKey(5).dtype == np.uint32 and br.PRNGKey(5).shape == (2,)


def test_typed_keys_wrap_the_same_data():
    k = br.key(42)
    assert isinstance(k, br.PRNGKeyArray) and k.shape == () and k.ndim == 0
    np.testing.assert_array_equal(np.asarray(br.key_data(k)), [0, 42])
    ks = br.split(k, 3)
    assert isinstance(ks, br.PRNGKeyArray) and ks.shape == (3,)
    np.testing.assert_array_equal(
        np.asarray(br.key_data(ks)), np.asarray(br.split(br.PRNGKey(42), 3))
    )
    np.testing.assert_array_equal(
        np.asarray(br.key_data(ks[1])), np.asarray(br.split(br.PRNGKey(42), 3))[1]
    )
    w = br.wrap_key_data(br.key_data(ks))
    assert w.shape == (3,)
    u1 = br.uniform(k, (4,))
    u2 = br.uniform(br.PRNGKey(42), (4,))
    np.testing.assert_array_equal(np.asarray(u1), np.asarray(u2))
    # A typed key is a pytree: it passes through bt.jit.
    out = bt.jit(lambda key: br.split(key))(k)
    assert isinstance(out, br.PRNGKeyArray) and out.shape == (2,)


def test_split_matches_the_reference_counters():
    key = br.PRNGKey(7)
    ks = np.asarray(br.split(key, (2, 3)))
    assert ks.shape == (2, 3, 2) and ks.dtype == np.uint32
    y0, y1 = threefry_reference(
        (0, 7), (np.zeros(6, np.uint32), np.arange(6, dtype=np.uint32))
    )
    np.testing.assert_array_equal(ks.reshape(6, 2), np.stack([y0, y1], 1))
    assert np.asarray(br.split(key, 0)).shape == (0, 2)
    assert len({tuple(r) for r in np.asarray(br.split(key, 50))}) == 50


def test_fold_in_and_bits_follow_the_reference():
    key = br.PRNGKey(3)
    y0, y1 = threefry_reference((0, 3), (np.uint32(0), np.uint32(11)))
    np.testing.assert_array_equal(np.asarray(br.fold_in(key, 11)), [y0, y1])
    # numpy integers wrap to uint32 as in JAX
    np.testing.assert_array_equal(
        np.asarray(br.fold_in(key, np.int32(-1))),
        np.asarray(br.fold_in(key, 2**32 - 1)),
    )
    b = np.asarray(br.bits(key, (3, 4)))
    y0, y1 = threefry_reference(
        (0, 3), (np.zeros(12, np.uint32), np.arange(12, dtype=np.uint32))
    )
    np.testing.assert_array_equal(b, (y0 ^ y1).reshape(3, 4))
    b8 = np.asarray(br.bits(key, (3, 4), np.uint8))
    assert b8.dtype == np.uint8
    np.testing.assert_array_equal(b8, ((y0 ^ y1) & 0xFF).astype(np.uint8).reshape(3, 4))
    assert np.asarray(br.bits(key)).shape == ()


# ---- samplers ----

SHAPES = [(), (1,), (7,), (3, 5), (2, 3, 4)]


@pytest.mark.parametrize("shape", SHAPES)
def test_shapes_and_dtypes(shape):
    k = br.PRNGKey(1)
    assert br.uniform(k, shape).shape == shape
    assert br.uniform(k, shape).dtype == np.float32
    assert br.uniform(k, shape, bnp.bfloat16).dtype == bnp.bfloat16
    assert br.normal(k, shape, bnp.float16).dtype == np.float16
    assert br.randint(k, shape, 0, 9).dtype == np.int32
    assert br.randint(k, shape, 0, 9, np.int8).dtype == np.int8
    assert br.randint(k, shape, 0, 9, np.uint32).dtype == np.uint32
    assert br.bernoulli(k, 0.5, shape).dtype == np.bool_
    assert br.bernoulli(k, 0.5, shape).shape == shape
    assert br.gumbel(k, shape).shape == shape
    assert br.truncated_normal(k, -1.0, 1.0, shape).shape == shape


def test_uniform_range_and_moments():
    k = br.PRNGKey(0)
    for dtype in (np.float32, np.float16, bnp.bfloat16):
        u = np.asarray(br.uniform(k, (4000,), dtype)).astype(np.float64)
        assert u.min() >= 0.0 and u.max() < 1.0
        assert abs(u.mean() - 0.5) < 0.02 and abs(u.var() - 1 / 12) < 0.01
    u = np.asarray(br.uniform(k, (4000,), minval=-3.0, maxval=5.0))
    assert u.min() >= -3.0 and u.max() < 5.0 and abs(u.mean() - 1.0) < 0.2
    lo = np.array([0.0, 10.0, -4.0], np.float32)
    u = np.asarray(br.uniform(k, (500, 3), minval=lo, maxval=lo + 1))
    assert ((u >= lo) & (u < lo + 1)).all()


def test_uniform_minval_maxval_is_one_fused_multiply_add():
    # u * (max - min) + min rounded once (as XLA's fma), checked against an
    # exact rational computation.
    from fractions import Fraction

    k = br.PRNGKey(5)
    lo, hi = np.float32(-3.7), np.float32(11.3)
    u = np.asarray(br.uniform(k, (300,)))
    got = np.asarray(br.uniform(k, (300,), minval=lo, maxval=hi))
    span = np.float32(hi - lo)
    for ui, gi in zip(u, got):
        exact = Fraction(float(ui)) * Fraction(float(span)) + Fraction(float(lo))
        rounded = np.float32(float(exact))  # double rounding checked below
        below, above = (
            np.nextafter(rounded, np.float32(-np.inf)),
            np.nextafter(rounded, np.float32(np.inf)),
        )
        best = min(
            (below, rounded, above),
            key=lambda c: (
                abs(Fraction(float(c)) - exact),
                int(np.float32(c).view(np.uint32)) & 1,
            ),
        )
        assert gi == max(lo, best)


def test_normal_moments_and_determinism():
    k = br.PRNGKey(2)
    z = np.asarray(br.normal(k, (8000,))).astype(np.float64)
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05
    assert np.isfinite(z).all()
    np.testing.assert_array_equal(z, np.asarray(br.normal(k, (8000,))))
    z2 = np.asarray(br.normal(br.fold_in(k, 1), (8000,)))
    assert (z != z2).mean() > 0.99


def test_truncated_normal_stays_inside():
    k = br.PRNGKey(4)
    t = np.asarray(br.truncated_normal(k, -0.5, 1.5, (3000,)))
    assert t.min() > -0.5 and t.max() < 1.5
    t = np.asarray(br.truncated_normal(k, np.array([-1.0, 0.0], np.float32), 2.0))
    assert t.shape == (2,)


def test_randint_range_and_uniformity():
    k = br.PRNGKey(6)
    r = np.asarray(br.randint(k, (6000,), -3, 7))
    assert r.min() == -3 and r.max() == 6
    counts = np.bincount(r + 3)
    assert counts.min() > 500
    r8 = np.asarray(br.randint(k, (2000,), -10, 300, np.int8))
    assert r8.min() >= -10 and r8.max() <= 127
    assert np.asarray(br.randint(k, (5,), 5, 2)).tolist() == [5] * 5  # empty range
    ru = np.asarray(br.randint(k, (1000,), 0, 256, np.uint8))
    assert ru.dtype == np.uint8 and ru.max() > 250


def test_bernoulli_mean():
    k = br.PRNGKey(8)
    b = np.asarray(br.bernoulli(k, 0.3, (6000,)))
    assert abs(b.mean() - 0.3) < 0.03
    p = np.array([0.0, 1.0], np.float32)
    assert np.asarray(br.bernoulli(k, p)).tolist() == [False, True]


def test_permutation_and_choice():
    k = br.PRNGKey(9)
    p = np.asarray(br.permutation(k, 20))
    assert sorted(p.tolist()) == list(range(20)) and p.tolist() != list(range(20))
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    px = np.asarray(br.permutation(k, x))
    assert sorted(map(tuple, px)) == sorted(map(tuple, x))
    pi = np.asarray(br.permutation(k, x, axis=1, independent=True))
    assert (np.sort(pi, 1) == x).all()
    c = np.asarray(br.choice(k, 5, (1000,)))
    assert set(c.tolist()) == set(range(5))
    c = np.asarray(br.choice(k, 10, (10,), replace=False))
    assert sorted(c.tolist()) == list(range(10))
    w = np.array([0.0, 0.2, 0.8], np.float32)
    c = np.asarray(br.choice(k, 3, (2000,), p=w))
    assert 0 not in c and abs((c == 2).mean() - 0.8) < 0.04
    c = np.asarray(br.choice(k, 3, (2,), replace=False, p=w))
    assert sorted(c.tolist()) == [1, 2]


def test_gumbel_and_categorical():
    k = br.PRNGKey(10)
    g = np.asarray(br.gumbel(k, (6000,))).astype(np.float64)
    assert abs(g.mean() - 0.5772) < 0.05
    logits = np.log(np.array([0.1, 0.6, 0.3], np.float32))
    c = np.asarray(br.categorical(k, logits, shape=(4000,)))
    assert c.dtype == np.int32 and abs((c == 1).mean() - 0.6) < 0.04
    c2 = np.asarray(br.categorical(k, np.zeros((5, 4), np.float32), axis=1))
    assert c2.shape == (5,) and c2.max() < 4
    c3 = np.asarray(br.categorical(k, logits, shape=(3,), replace=False))
    assert sorted(c3.tolist()) == [0, 1, 2]


def test_eager_and_jit_agree():
    k = br.PRNGKey(11)

    def draw(key):
        k1, k2, k3, k4 = br.split(key, 4)
        return (
            br.uniform(k1, (3, 2), minval=-2.0, maxval=3.0),
            br.normal(k2, (5,)),
            br.randint(k3, (4,), 0, 100),
            br.permutation(k4, 6),
            br.fold_in(key, 3),
        )

    eager = draw(k)
    jitted = bt.jit(draw)(k)
    for a, b in zip(eager, jitted):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_distinct_keys_give_distinct_streams():
    draws = {
        tuple(np.asarray(br.bits(br.PRNGKey(s), (4,))).tolist()) for s in range(20)
    }
    assert len(draws) == 20
    k = br.PRNGKey(0)
    a, b = br.split(k)
    assert not np.array_equal(
        np.asarray(br.bits(a, (8,))), np.asarray(br.bits(b, (8,)))
    )


# ---- errors ----


def test_bad_keys():
    with pytest.raises(TypeError, match="shape"):
        br.split(np.zeros(3, np.uint32))
    with pytest.raises(TypeError, match="uint32"):
        br.split(np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="single key"):
        br.uniform(np.zeros((3, 2), np.uint32))
    with pytest.raises(TypeError):
        br.split(5)
    with pytest.raises(TypeError, match="scalar seed"):
        br.PRNGKey(np.arange(3))
    with pytest.raises(TypeError, match="integer"):
        br.PRNGKey(1.5)
    with pytest.raises(TypeError, match="PRNG key"):
        br.PRNGKey(br.key(0))
    with pytest.raises(OverflowError):
        br.fold_in(br.PRNGKey(0), -1)
    with pytest.raises(TypeError, match="scalar"):
        br.fold_in(br.PRNGKey(0), np.arange(2))


def test_bad_shapes_and_dtypes():
    k = br.PRNGKey(0)
    with pytest.raises(ValueError, match="negative"):
        br.uniform(k, (-1,))
    with pytest.raises(ValueError, match="broadcast"):
        br.uniform(k, (2, 3), minval=np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="float dtype"):
        br.uniform(k, (2,), dtype=np.int32)
    with pytest.raises(ValueError, match="unsigned"):
        br.bits(k, (2,), dtype=np.int32)
    with pytest.raises(TypeError, match="integer dtypes"):
        br.randint(k, (2,), 0, 5, dtype=np.float32)
    with pytest.raises(TypeError, match="floating"):
        br.bernoulli(k, 1)
    with pytest.raises(ValueError, match="larger sample"):
        br.choice(k, 3, (5,), replace=False)
    with pytest.raises(TypeError, match="sequence"):
        br.choice(k, 3, 5)
