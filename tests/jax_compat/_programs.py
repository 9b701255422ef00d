"""Programs spanning every op family, written once for both libraries.

Each `Program` builds a function of arrays from a `Lib` (`L.np`, `L.lax`)
and carries its inputs: float32 arrays (differentiated) and, for indexing
programs, int32 index arrays (not differentiated: under grad/jvp/jacobians
they are closed over; under jit they are traced arguments; under vmap they
are batched like the rest). Inputs keep clear of ties, zeros and integer
boundaries where a function is not differentiable, so that both libraries
are asked the same well-defined question.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import ml_dtypes
import numpy as np
from _jaxcompat import rng_floats


@dataclass(frozen=True)
class Program:
    name: str
    build: Callable[[Any], Callable[..., Any]]  # L -> f(*floats, *ints)
    floats: tuple[np.ndarray, ...]
    ints: tuple[np.ndarray, ...] = ()
    # Batched inputs for vmap (axis 0, size 3), floats then ints.
    batched: tuple[np.ndarray, ...] = ()
    hessian: bool = True  # small enough for a Hessian w.r.t. floats[0]


def _off_grid(seed: int, shape, low: float, high: float) -> np.ndarray:
    """Floats in about [low, high) at least 0.07 away from every multiple of
    0.25 (floor, ceil, round and conversions to int jump there: both
    libraries are asked only where the function is smooth)."""
    rng = np.random.default_rng(seed)
    k = rng.integers(int(low * 2), int(high * 2), size=shape)
    return (k * 0.5 + 0.125 + rng.uniform(-0.05, 0.05, size=shape)).astype(np.float32)


def _program(name, build, floats, ints=(), hessian=True, batch_seed=None) -> Program:
    """A program with batched inputs made by perturbing every float input
    (three lanes) and shifting int inputs lane by lane (kept in range)."""
    seed = batch_seed if batch_seed is not None else len(name)
    rng = np.random.default_rng(seed)
    batched = []
    for x in floats:
        lanes = [x, x * np.float32(0.9), x + np.float32(0.05)]
        if x.dtype == np.float32:
            lanes[2] = (x + rng.uniform(-0.01, 0.01, x.shape)).astype(np.float32)
        batched.append(np.stack([lane.astype(x.dtype) for lane in lanes]))
    for i in ints:
        batched.append(np.stack([i, i[::-1].copy() if i.ndim else i, np.zeros_like(i)]))
    return Program(name, build, tuple(floats), tuple(ints), tuple(batched), hessian)


def _elementwise_smooth(L):
    np_, lax = L.np, L.lax

    def f(x):
        return (
            np_.sin(x) * np_.cos(x)
            + np_.tanh(x)
            + np_.exp(x * 0.5)
            + 0.1 * np_.sinh(x)
            + 0.1 * np_.cosh(x)
            + lax.logistic(x)
            + np_.square(x)
            - x
        )

    return f


def _elementwise_positive(L):
    np_, lax = L.np, L.lax

    def f(x):
        return (
            np_.log(x)
            + np_.log1p(x)
            + np_.sqrt(x)
            + lax.rsqrt(x)
            + np_.expm1(x * 0.3)
            + np_.log2(x)
            + np_.log10(x)
            + np_.exp2(x)
            + np_.reciprocal(x)
            + x**2.5
            + np_.power(x, 3)
        )

    return f


def _elementwise_kinks(L):
    np_ = L.np

    def f(x):
        return (
            np_.tan(x)
            + np_.abs(x)
            + np_.sign(x) * x * x
            + np_.floor(x) * x
            + np_.ceil(x)
            + np_.round(x * 2)
            + np_.negative(x)
        )

    return f


def _binary(L):
    np_ = L.np

    def f(x, y):
        return (
            x * y
            + x / y
            + (x - y)
            + np_.abs(x) ** y
            + np_.maximum(x, y)
            + np_.minimum(x, 2 * y)
            + np_.subtract(y, x) * np_.multiply(x, 0.5)
        )

    return f


def _select_clip_rem(L):
    np_, lax = L.np, L.lax

    def f(x, y):
        return (
            np_.where(x > y, x * y, x - y)
            + np_.clip(x, -0.5, 0.5)
            + lax.rem(x, y)
            + lax.select(x < 0, np_.sin(x), np_.cos(y))
        )

    return f


def _weak_scalars(L):
    def f(x):
        return 2 * x + x / 3.0 + 1.5**x + x**2 + (x - 1) * 0.25 - 3

    return f


def _broadcast(L):
    np_ = L.np

    def f(a, b, c, s):
        y = a * b + c - a / (1 + b * b)
        return y * s + np_.broadcast_to(c, (3, 4)) * np_.expand_dims(a[:, 0], 1) + s**2

    return f


def _reduce_sum_mean(L):
    np_ = L.np

    def f(x):
        return (
            np_.sum(x, axis=0) * np_.mean(x, axis=1, keepdims=True)
            + x.sum()
            + np_.sum(x * x, axis=(0, 1), keepdims=True)
            + x.mean(axis=0)
        )

    return f


def _reduce_max_min(L):
    np_ = L.np

    def f(x):
        return (
            np_.max(x, axis=1, keepdims=True)
            + np_.min(x, axis=0)
            + x.max()
            + np_.amin(x, axis=1, keepdims=True) * 2
        )

    return f


def _reduce_prod_var(L):
    np_ = L.np

    def f(x):
        return np_.prod(x, axis=1, keepdims=True) + np_.var(x, axis=0) + np_.std(x)

    return f


def _log_softmax(L):
    np_ = L.np

    def f(x):
        m = np_.max(x, axis=1, keepdims=True)
        lse = m + np_.log(np_.sum(np_.exp(x - m), axis=1, keepdims=True))
        return np_.exp(x - lse) * x + (x - lse)

    return f


def _argmax_mask(L):
    np_ = L.np

    def f(x):
        hot = np_.arange(4) == np_.argmax(x, axis=1)[:, None]
        return x * hot.astype(np_.float32) + np_.argmin(x, axis=0).astype(x.dtype)

    return f


def _reshape_transpose(L):
    np_ = L.np

    def f(x):
        y = np_.transpose(x, (2, 0, 1)).reshape(4, 6)
        z = np_.moveaxis(x, 0, -1).reshape(-1)
        w = np_.swapaxes(x, 1, 2)[None].squeeze(0).reshape(6, 4).T
        return (
            y * np_.reshape(z, (4, 6))
            + w
            + np_.ravel(x).reshape(4, 6)
            + x.T.reshape(4, 6)
        )

    return f


def _concat_stack_split(L):
    np_ = L.np

    def f(x, y):
        c = np_.concatenate([x, y * 2], axis=1)
        s = np_.stack([x, y], axis=0)
        a, b = np_.split(c, 2, axis=1)
        h = np_.hstack([x, y])
        v = np_.vstack([x, y])
        return a * b + s[0] * s[1] + h[:, 1:5] + v[1:4] + np_.concatenate([x, y])[2:5]

    return f


def _slice_flip_pad(L):
    np_ = L.np

    def f(x):
        return (
            x[1:3, ::2]
            + np_.flip(x, axis=0)[:2, 1:3]
            + np_.pad(x, ((1, 0), (0, 2)))[1:3, 2:4]
            + np_.tril(x)[:2, :2]
            + np_.triu(x, 1)[1:, 2:]
        )

    return f


def _lax_shapes(L):
    lax = L.lax

    def f(x, y):
        a = lax.slice(x, (0, 1), (2, 4))
        b = lax.dynamic_slice(x, (1, 0), (2, 3))
        c = lax.dynamic_update_slice(x, y, (1, 1))
        d = lax.broadcast_in_dim(x[0], (2, 4), (1,))
        e = lax.concatenate([a, b], 0)
        t = lax.transpose(x, (1, 0))
        return c[:2, :3] * a + e[:2] + d[:, :3] + lax.reshape(t, (3, 4))[:2, :3]

    return f


def _basic_index(L):
    np_ = L.np

    def f(x):
        return (
            x[1] * x[-1]
            + x[:, 2].mean()
            + x[None, 0, 1:].sum()
            + x[..., 0].sum() * x[2, 3]
            + np_.zeros(4)
        )

    return f


def _gather(L):
    np_ = L.np

    def f(x, idx, jdx):
        return (
            x[idx] * 2  # rows, with repeats
            + np_.take(x, jdx, axis=1)[: idx.shape[0], : x.shape[1]].sum()
            + x[idx, jdx[:4]][:, None]
        )

    return f


def _at_set_add(L):
    def f(x, v, idx):
        y = x.at[1].set(v[0])
        y = y.at[idx].add(v)  # repeated rows accumulate
        y = y.at[:, 0].multiply(x[:, 1])
        return y * x + y.at[2].get()

    return f


def _at_min_max(L):
    def f(x, v, idx):
        y = x.at[idx].min(v)
        z = x.at[idx].max(v * 0.5)
        return y * z + y

    return f


def _traced_index(L):
    np_, lax = L.np, L.lax

    def f(x, v, i, j):
        # i in range; j possibly out of range: clamped reads, dropped updates
        a = lax.dynamic_slice(x, (i[0], 0), (2, 4))
        b = lax.dynamic_update_slice(x, v, (j[0], i[0]))
        c = x[i[0]] * np_.take(x, i, axis=0).sum(axis=0)
        return a.sum(axis=0) + b[1] + c + x.at[j[0]].set(v[0, 0])[0]

    return f


def _matmul_dot(L):
    np_ = L.np

    def f(x, w, v):
        return (
            np_.tanh(x @ w)
            + np_.dot(x, w) * 0.5
            + np_.matmul(x, v)[:, None]
            + np_.dot(v, v)
        )

    return f


def _einsum_family(L):
    np_ = L.np

    def f(a, b, u, v):
        bmm = np_.einsum("bij,bjk->bik", a, b)
        rows = np_.einsum("bij,bij->bi", a, a)
        outer = np_.einsum("i,j->ij", u, v)
        return (
            bmm.sum(axis=0)
            + rows.sum()
            + outer[:2, :2]
            + np_.tensordot(a, b, axes=([0, 2], [0, 1]))
            + np_.outer(u, v)[:2, :2]
            + np_.inner(u, u)
            + np_.vdot(v, v)
            + np_.matmul(a, b)[1]
        )

    return f


def _dot_general(L):
    lax = L.lax

    def f(a, b):
        batch = lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
        plain = lax.dot_general(a[0], b[1], (((1,), (0,)), ((), ())))
        return batch + plain

    return f


def _conversions(L):
    np_, lax = L.np, L.lax

    def f(x, y):
        half = x.astype(np_.float16).astype(np_.float32)
        brain = lax.convert_element_type(y, np_.bfloat16).astype(np_.float32)
        ints = x.astype(np_.int32) * y  # zero derivative through the int
        return half * y + brain * x + ints + lax.convert_element_type(x * 3, np_.int32)

    return f


def _mlp_layer(L):
    np_ = L.np

    def f(w1, b1, w2, x):
        h = np_.tanh(x @ w1 + b1)
        logits = h @ w2
        m = np_.max(logits, axis=1, keepdims=True)
        return logits - m - np_.log(np_.sum(np_.exp(logits - m), axis=1, keepdims=True))

    return f


def _f(seed, shape, low=-1.0, high=1.0):
    return rng_floats(seed, shape, low, high)


def _distinct(seed, shape, scale=1.0):
    """Floats with no two elements close (ties make max/min/sort gradients
    ambiguous)."""
    n = int(np.prod(shape))
    vals = (np.random.default_rng(seed).permutation(n) - n / 2 + 0.5) * 0.13 * scale
    return vals.reshape(shape).astype(np.float32)


PROGRAMS = [
    _program("elementwise_smooth", _elementwise_smooth, [_f(1, (3, 4), -1.5, 1.5)]),
    _program("elementwise_positive", _elementwise_positive, [_f(2, (3, 4), 0.5, 2.0)]),
    _program(
        "elementwise_kinks",
        _elementwise_kinks,
        [_off_grid(3, (3, 4), -1.2, 1.2)],
    ),
    _program("binary", _binary, [_distinct(4, (3, 4)), _f(5, (3, 4), 0.5, 1.5)]),
    _program(
        "select_clip_rem",
        _select_clip_rem,
        [_distinct(6, (3, 4)), _f(7, (3, 4), 0.7, 1.3)],
    ),
    _program("weak_scalars", _weak_scalars, [_f(8, (5,))]),
    _program(
        "broadcast",
        _broadcast,
        [_f(9, (3, 1)), _f(10, (1, 4)), _f(11, (4,)), np.float32(0.7).reshape(())],
    ),
    _program("reduce_sum_mean", _reduce_sum_mean, [_f(12, (3, 4))]),
    _program("reduce_max_min", _reduce_max_min, [_distinct(13, (3, 4))]),
    _program("reduce_prod_var", _reduce_prod_var, [_f(14, (3, 4), 0.5, 1.5)]),
    _program("log_softmax", _log_softmax, [_f(15, (3, 4), -2, 2)]),
    _program("argmax_mask", _argmax_mask, [_distinct(16, (3, 4))]),
    _program(
        "reshape_transpose", _reshape_transpose, [_f(17, (2, 3, 4))], hessian=True
    ),
    _program(
        "concat_stack_split", _concat_stack_split, [_f(18, (3, 4)), _f(19, (3, 4))]
    ),
    _program("slice_flip_pad", _slice_flip_pad, [_f(20, (3, 4))]),
    _program("lax_shapes", _lax_shapes, [_f(21, (3, 4)), _f(22, (2, 2))]),
    _program("basic_index", _basic_index, [_f(23, (3, 4))]),
    _program(
        "gather",
        _gather,
        [_f(24, (4, 3))],
        ints=[np.array([2, 0, 2, 3], np.int32), np.array([1, 1, 0, 2, 2], np.int32)],
    ),
    _program(
        "at_set_add",
        _at_set_add,
        [_f(25, (4, 3)), _f(26, (3, 3))],
        ints=[np.array([0, 3, 0], np.int32)],
    ),
    _program(
        "at_min_max",
        _at_min_max,
        [_distinct(27, (4, 3)), _distinct(28, (2, 3), scale=1.1) + np.float32(0.01)],
        ints=[np.array([3, 1], np.int32)],
    ),
    _program(
        "traced_index",
        _traced_index,
        [_f(29, (3, 4)), _f(30, (2, 2))],
        ints=[np.array([1, 2], np.int32), np.array([5], np.int32)],
    ),
    _program(
        "matmul_dot",
        _matmul_dot,
        [_f(31, (3, 4)), _f(32, (4, 5)), _f(33, (4,))],
    ),
    _program(
        "einsum_family",
        _einsum_family,
        [_f(34, (2, 2, 3)), _f(35, (2, 3, 2)), _f(36, (3,)), _f(37, (3,))],
    ),
    _program("dot_general", _dot_general, [_f(38, (2, 3, 4)), _f(39, (2, 4, 3))]),
    _program(
        "conversions",
        _conversions,
        [_off_grid(40, (3, 4), -2, 2), _f(41, (3, 4))],
    ),
    _program(
        "mlp_layer",
        _mlp_layer,
        [_f(42, (4, 5)), _f(43, (5,)), _f(44, (5, 3)), _f(45, (2, 4))],
    ),
]

BY_NAME = {p.name: p for p in PROGRAMS}
_ = ml_dtypes  # bfloat16 is reached through L.np
