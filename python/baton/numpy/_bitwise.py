"""Bit operations of ``baton.numpy`` on lax's bit primitives: bitwise_xor,
left_shift / right_shift (and their numpy 2 names), bitwise_count (a SWAR
population count).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from baton import _ops
from baton._baton import lax
from baton.numpy._elementwise import (
    _BOOL,
    _binary,
    _check_integral,
    _unary,
)

_I32 = np.dtype(np.int32)
_U8 = np.dtype(np.uint8)


def _export(fn: Callable[..., Any], *names: str) -> Callable[..., Any]:
    for n in names:
        globals()[n] = fn
        __all__.append(n)
    return fn


__all__: list[str] = []


# ---- bitwise ----


def _bitwise_xor(x1: Any, x2: Any) -> Any:
    a, b = _ops.promote(x1, x2)
    _check_integral("bitwise_xor", a)
    return lax.bitwise_xor(a, b)


_export(
    _binary(
        "bitwise_xor", _bitwise_xor, "x1 ^ x2: bitwise for integers, logical for bool."
    ),
    "bitwise_xor",
)


def _shift_operands(name: str, x1: Any, x2: Any) -> tuple[Any, Any]:
    a, b = _ops.promote(x1, x2)
    _check_integral(name, a)
    if a.dtype == _BOOL:  # jax.numpy shifts bools as int32
        a, b = lax.astype(a, _I32), lax.astype(b, _I32)
    return a, b


def _left_shift(x1: Any, x2: Any) -> Any:
    a, b = _shift_operands("left_shift", x1, x2)
    return lax.shift_left(a, b)


def _right_shift(x1: Any, x2: Any) -> Any:
    a, b = _shift_operands("right_shift", x1, x2)
    if np.dtype(a.dtype).kind == "u":
        return lax.shift_right_logical(a, b)
    return lax.shift_right_arithmetic(a, b)


_export(
    _binary(
        "left_shift",
        _left_shift,
        "x1 << x2 for integers (bool as int32); shift amounts outside "
        "[0, bit width) give 0, as in jax.numpy.",
    ),
    "left_shift",
    "bitwise_left_shift",
)
_export(
    _binary(
        "right_shift",
        _right_shift,
        "x1 >> x2: arithmetic (sign-filling) for signed integers, logical for "
        "unsigned; amounts outside [0, bit width) give the sign fill (0 or -1).",
    ),
    "right_shift",
    "bitwise_right_shift",
)


# SWAR population count masks, per bit width (all fit the signed type).
_M1 = {w: int("01" * (w // 2), 2) for w in (8, 16, 32, 64)}
_M2 = {w: int("0011" * (w // 4), 2) for w in (8, 16, 32, 64)}
_M4 = {w: int("00001111" * (w // 8), 2) for w in (8, 16, 32, 64)}


def _bitwise_count(x: Any) -> Any:
    t = _ops.as_tracer(x)
    _check_integral("bitwise_count", t)
    if t.dtype == _BOOL:
        return lax.astype(t, _U8)
    d = np.dtype(t.dtype)
    w = d.itemsize * 8
    if d.kind == "i":
        t = lax.abs(t)  # numpy counts |x| (INT_MIN's bits are one 1)

    def c(v: int) -> Any:
        return lax.full((), v, d)

    def srl(v: Any, n: int) -> Any:
        return lax.shift_right_logical(v, c(n))

    v = lax.sub(t, lax.bitwise_and(srl(t, 1), c(_M1[w])))
    v = lax.add(lax.bitwise_and(v, c(_M2[w])), lax.bitwise_and(srl(v, 2), c(_M2[w])))
    v = lax.bitwise_and(lax.add(v, srl(v, 4)), c(_M4[w]))
    for n in (8, 16, 32):
        if n < w:
            v = lax.add(v, srl(v, n))
    return lax.astype(lax.bitwise_and(v, c(0x7F)), _U8)


_export(
    _unary(
        "bitwise_count",
        _bitwise_count,
        "The number of 1 bits in |x| (numpy's bitwise_count; uint8 result).",
    ),
    "bitwise_count",
)
