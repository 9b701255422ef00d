"""The Threefry-2x32 block cipher (20 rounds), written over ``bt.lax``.

Threefry is the counter-based generator of Salmon, Moraes, Dror and Shaw,
"Parallel random numbers: as easy as 1, 2, 3" (SC'11), reference code in
Random123. A 64-bit key (two 32-bit words) encrypts a 64-bit counter (two
words); the output words are the random bits. Each round adds, rotates and
xors; every four rounds the key schedule (k0, k1, k0 ^ k1 ^ C240) is
injected together with the injection number. baton's default generator is
this one with JAX's conventions (``baton.random._keys``), so a key yields
the same bits in baton and in JAX.

The xors, shifts and rotations are the IR's integer bit operations
(``lax.bitwise_xor``, ``shift_left``, ``shift_right_logical``), exact on
uint32 whatever the x64 setting.

Every function takes and returns lax values, so the hash runs eagerly
(through the callers' ``_ops.apply``), under ``bt.jit`` and inside traced
functions alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton._baton import lax

_U32 = np.dtype(np.uint32)

# Rotation constants of Threefry-2x32 (Random123's R_32x2_0..7): rounds
# 4s+j of an even block of four use _ROTATIONS[j], of an odd block [4 + j].
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
# Threefish's key-schedule parity constant for 32-bit words.
_PARITY = 0x1BD11BDA
_ROUNDS = 20


def xor(a: Any, b: Any) -> Any:
    """Bitwise exclusive or of uint32 lax values."""
    return lax.bitwise_xor(a, b)


def shift_left(a: Any, r: int) -> Any:
    """``a << r`` for uint32 ``a`` and a constant 0 <= r < 32."""
    return lax.shift_left(a, np.uint32(r))


def shift_right(a: Any, r: int) -> Any:
    """Logical ``a >> r`` for uint32 ``a`` and a constant 0 <= r < 32."""
    return lax.shift_right_logical(a, np.uint32(r))


def rotate_left(a: Any, r: int) -> Any:
    """``a`` rotated left by a constant 0 < r < 32 bits."""
    return lax.bitwise_or(shift_left(a, r), shift_right(a, 32 - r))


def threefry2x32(k0: Any, k1: Any, x0: Any, x1: Any) -> tuple[Any, Any]:
    """Threefry-2x32-20 of counter words (x0, x1) under key words (k0, k1).

    All four are uint32 lax values that broadcast together (a scalar key
    and counter arrays is the usual case); returns the two output words
    with the broadcast shape.
    """
    ks = (k0, k1, xor(xor(k0, k1), _PARITY))
    x0 = lax.add(x0, ks[0])
    x1 = lax.add(x1, ks[1])
    for block in range(_ROUNDS // 4):
        for j in range(4):
            x0 = lax.add(x0, x1)
            x1 = xor(rotate_left(x1, _ROTATIONS[4 * (block % 2) + j]), x0)
        s = block + 1  # the s-th key injection adds s to the second word
        x0 = lax.add(x0, ks[s % 3])
        x1 = lax.add(lax.add(x1, ks[(s + 1) % 3]), s)
    return x0, x1


def counters(shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The 64-bit counters 0, 1, ... in row-major order over ``shape``, as
    (high words, low words): JAX's ``iota_2x32_shape``, which is what makes
    its partitionable threefry give element i the same bits whatever the
    shape is split into."""
    size = int(np.prod(shape, dtype=np.int64))
    if size > 2**32:
        # The high word would be needed; no baton program is this large.
        raise ValueError(
            f"random: {size} values in one call exceed 2**32; draw them in "
            "several calls with split keys"
        )
    lo = lax.reshape(lax.iota(_U32, (size,)), shape)
    return lax.zeros(shape, _U32), lo
