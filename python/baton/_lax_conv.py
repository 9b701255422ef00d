"""``bt.lax``'s convolutions (``jax.lax.conv_general_dilated`` and family),
composed from other baton operations.

A convolution is computed as im2col followed by one contraction: the input
is padded and dilated with ``lax.pad`` (interior padding for
``lhs_dilation``, negative padding crops), each kernel offset's strided view
of it is taken with a strided ``lax.slice`` (the offset scaled by
``rhs_dilation``), the views are stacked into a patches array
``(N, C, K, out...)`` and contracted with the kernel ``(O, I, K)`` by one
``lax.dot_general`` (feature and batch groups become its batch dimension),
so the BLAS does the work. Gradients, ``vmap`` and ``jit`` come from those
operations' own rules; no convolution-specific rule exists to go wrong.

Dimension numbers, padding strings and the shape helpers
(``conv_general_permutations``, ``conv_shape_tuple``, ``padtype_to_pads``,
...) follow JAX's definitions exactly. ``precision`` is validated and
otherwise has no effect: baton computes float32 contractions in full float32
(see ``baton/_lax_precision.py``).
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple, Union

import numpy as np

from baton import _ops
from baton._baton import lax
from baton._lax_precision import Precision


def _t(x: Any) -> Any:
    return _ops.as_tracer(x)


class ConvDimensionNumbers(NamedTuple):
    """The batch, feature and spatial dimensions of a convolution's operands
    and result (JAX's class): ``lhs_spec`` is ``(batch dimension, feature
    dimension, spatial dimensions...)`` of the input, ``rhs_spec`` ``(out
    feature dimension, in feature dimension, spatial dimensions...)`` of the
    kernel, ``out_spec`` like ``lhs_spec`` for the result."""

    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


# What ``dimension_numbers`` may be: strings, ConvDimensionNumbers or None.
ConvGeneralDilatedDimensionNumbers = Union[
    tuple[str, str, str],
    ConvDimensionNumbers,
    None,
]


# ---- shape helpers (JAX's definitions) ----


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _stride_dim(d: int, window: int, stride: int) -> int:
    return 0 if d < window else (d - window) // stride + 1


def _dilate_dim(d: int, dilation: int) -> int:
    return 0 if d == 0 else 1 + dilation * (d - 1)


def padtype_to_pads(
    in_shape: Sequence[int],
    window_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str,
) -> list[tuple[int, int]]:
    """The ``(low, high)`` padding pairs of a padding string: ``'VALID'`` no
    padding; ``'SAME'`` enough for ``ceil(in / stride)`` outputs, an odd
    amount's extra element at the end; ``'SAME_LOWER'`` the same with the
    extra element at the start (JAX's function)."""
    if not isinstance(padding, str):
        raise TypeError(f"padtype_to_pads: unknown padding type {padding!r}")
    kind = padding.upper()
    if kind not in ("VALID", "SAME", "SAME_LOWER"):
        raise RuntimeError(
            "Unrecognized padding type: expected 'VALID', 'SAME', or "
            f"'SAME_LOWER', got {padding}."
        )
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for d, w, s in zip(in_shape, window_shape, window_strides):
        out = _ceil_div(int(d), int(s))
        size = max((out - 1) * int(s) + int(w) - int(d), 0)
        lo, hi = size // 2, size - size // 2
        pads.append((lo, hi) if kind == "SAME" else (hi, lo))
    return pads


def conv_general_permutations(
    dimension_numbers: tuple[str, str, str],
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The ``(lhs, rhs, out)`` permutations of string dimension numbers such
    as ``('NHWC', 'HWIO', 'NHWC')``: each lists the batch (or out feature),
    feature (or in feature) and spatial dimensions, the spatial ones in the
    order of ``rhs_spec`` (JAX's function)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(
                f"convolution dimension_numbers[{i}] must contain the characters "
                f"'{a}' and '{b}' exactly once, got {spec}."
            )
        if len(spec) != len(set(spec)):
            raise TypeError(
                f"convolution dimension_numbers[{i}] cannot have duplicate "
                f"characters, got {spec}."
            )
    if not (
        set(lhs_spec) - {"N", "C"}
        == set(rhs_spec) - {"O", "I"}
        == set(out_spec) - {"N", "C"}
    ):
        raise TypeError(
            "convolution dimension_numbers elements must each have the same "
            f"set of spatial characters, got {dimension_numbers}."
        )

    def perm(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)

    return tuple(perm(s, p) for s, p in zip(dimension_numbers, charpairs))  # type: ignore[return-value]


def conv_dimension_numbers(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], dimension_numbers: Any
) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None, three strings, or a
    ``ConvDimensionNumbers``) as a ``ConvDimensionNumbers``; None is
    ``('NCHW...', 'OIHW...', 'NCHW...')`` (JAX's function)."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            "convolution requires lhs and rhs ndim to be equal, got "
            f"{len(lhs_shape)} and {len(rhs_shape)}."
        )
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError(
                "convolution dimension_numbers list/tuple must be length 3, "
                f"got {len(dimension_numbers)}."
            )
        if not all(isinstance(e, str) for e in dimension_numbers):
            raise TypeError(
                "convolution dimension_numbers elements must be strings, got "
                f"{tuple(type(e) for e in dimension_numbers)}."
            )
        for i, e in enumerate(dimension_numbers):
            if len(e) != len(lhs_shape):
                raise TypeError(
                    f"convolution dimension_numbers[{i}] must have len equal to "
                    f"the ndim of lhs and rhs, got {len(e)} for lhs and rhs "
                    f"shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}."
                )
        return ConvDimensionNumbers(
            *conv_general_permutations(tuple(dimension_numbers))
        )
    raise TypeError(
        "convolution dimension_numbers must be tuple/list or None, got "
        f"{type(dimension_numbers)}."
    )


def conv_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    strides: Sequence[int],
    pads: Any,
    batch_group_count: int = 1,
) -> tuple[int, ...]:
    """The result shape of a convolution whose operands are in canonical
    order (``NC...`` and ``OI...``); ``pads`` a string or ``(low, high)``
    pairs (JAX's function)."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(
            "Wrong number of explicit pads for convolution: expected "
            f"{len(lhs_shape) - 2}, got {len(pads)}."
        )
    padded = [int(d) + int(lo) + int(hi) for d, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(
            "Negative padding is larger than the size of the corresponding "
            f"dimension: got padding={pads} for lhs_shape[2:]={tuple(lhs_shape[2:])}"
        )
    space = tuple(
        _stride_dim(p, int(k), int(s))
        for p, k, s in zip(padded, rhs_shape[2:], strides)
    )
    n = int(lhs_shape[0])
    if batch_group_count > 1:
        if n % batch_group_count:
            raise ValueError(
                f"conv_shape_tuple: batch size {n} is not a multiple of "
                f"batch_group_count {batch_group_count}"
            )
        n //= batch_group_count
    return (n, int(rhs_shape[0]), *space)


def conv_general_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    dimension_numbers: Any,
) -> tuple[int, ...]:
    """The result shape of ``conv_general_dilated`` (no dilation) with string
    ``dimension_numbers`` (JAX's function)."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t = [lhs_shape[i] for i in lhs_perm]
    rhs_t = [rhs_shape[i] for i in rhs_perm]
    out_t = conv_shape_tuple(lhs_t, rhs_t, window_strides, padding)
    return tuple(int(out_t[i]) for i in np.argsort(out_perm))


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """Low and high padding of one dimension of a transposed convolution."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else math.ceil(pad_len / 2)
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a = pads[0]
        pad_len = sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


def conv_transpose_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    dimension_numbers: Any,
) -> tuple[int, ...]:
    """The result shape of ``conv_transpose`` with string
    ``dimension_numbers`` (JAX's function)."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t = [int(lhs_shape[i]) for i in lhs_perm]
    rhs_t = [int(rhs_shape[i]) for i in rhs_perm]
    if isinstance(padding, str):
        padding = [
            _conv_transpose_padding(k, int(s), padding)
            for k, s in zip(rhs_t[2:], window_strides)
        ]
    totals = [int(sum(p)) for p in padding]
    space = [
        (i - 1) * int(s) - k + 2 + p
        for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, totals)
    ]
    out_t = (lhs_t[0], rhs_t[0], *space)
    return tuple(int(out_t[i]) for i in np.argsort(out_perm))


# ---- the convolution ----


def _check_precision(precision: Any, name: str) -> None:
    items = precision if isinstance(precision, (tuple, list)) else (precision,)
    if isinstance(precision, (tuple, list)) and len(precision) != 2:
        raise ValueError(
            f"{name}: precision must be one value or a pair, got {precision!r}"
        )
    for p in items:
        if p is None or isinstance(p, Precision):
            continue
        if isinstance(p, str):
            Precision(p)  # raises for an unknown name
            continue
        if type(p).__name__ in ("DotAlgorithm", "DotAlgorithmPreset"):
            continue
        raise ValueError(f"{name}: unsupported precision {p!r}")


def _ints(values: Any, n: int, what: str, name: str) -> tuple[int, ...]:
    try:
        out = tuple(operator.index(v) for v in values)
    except TypeError as e:
        raise TypeError(
            f"{name}: {what} must be a sequence of ints, got {values!r}"
        ) from e
    if len(out) != n:
        raise ValueError(
            f"{name}: {what} must have one entry per spatial dimension ({n}), "
            f"got {values!r}"
        )
    return out


def _patches(
    x: Any,
    kernel: tuple[int, ...],
    strides: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    out_space: tuple[int, ...],
) -> Any:
    """``(N, C, K, out...)``: x's (already padded and dilated, ``(N, C,
    space...)``) strided views, one per kernel offset in row-major order."""
    n, c = x.shape[0], x.shape[1]
    views = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        start = [0, 0] + [o * r for o, r in zip(offset, rhs_dilation)]
        limit = [n, c] + [
            s + (o - 1) * st + 1 for s, o, st in zip(start[2:], out_space, strides)
        ]
        v = lax.slice(x, start, limit, [1, 1, *strides])
        views.append(lax.reshape(v, (n, c, 1, *out_space)))
    return views[0] if len(views) == 1 else lax.concatenate(views, 2)


def _pad_spatial(
    x: Any,
    first: int,
    pads: tuple[tuple[int, int], ...],
    lhs_dilation: tuple[int, ...],
    name: str,
) -> tuple[Any, tuple[int, ...]]:
    """x padded (negative pads crop) and dilated on its spatial dimensions,
    which start at axis ``first``; and their new sizes."""
    nsp = len(pads)
    before = (0,) * first
    after = (0,) * (len(x.shape) - first - nsp)
    if any(p != (0, 0) for p in pads) or any(d != 1 for d in lhs_dilation):
        x = lax.pad(
            x,
            lax.full((), 0, x.dtype),
            (*before, *(lo for lo, _ in pads), *after),
            (*before, *(hi for _, hi in pads), *after),
            (*before, *(d - 1 for d in lhs_dilation), *after),
        )
    space = tuple(int(d) for d in x.shape[first : first + nsp])
    if any(d < 0 for d in space):
        raise ValueError(f"{name}: negative padding is larger than the input")
    return x, space


def _conv_canonical(
    x: Any,
    w: Any,
    strides: tuple[int, ...],
    pads: tuple[tuple[int, int], ...],
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    feature_group_count: int,
    batch_group_count: int,
    name: str,
) -> Any:
    """The convolution of x ``(N, C, space...)`` with w ``(O, I, kernel...)``:
    ``(N / batch_group_count, O, out...)``."""
    nsp = len(x.shape) - 2
    n, c = int(x.shape[0]), int(x.shape[1])
    o, i = int(w.shape[0]), int(w.shape[1])
    kernel = tuple(int(k) for k in w.shape[2:])
    g, b = feature_group_count, batch_group_count
    if g < 1 or b < 1:
        raise ValueError(
            f"{name}: feature_group_count and batch_group_count must be >= 1"
        )
    if g > 1 and b > 1:
        raise ValueError(
            f"{name}: at most one of feature_group_count and batch_group_count "
            f"may be > 1, got {g} and {b}"
        )
    if c != i * g:
        raise ValueError(
            f"{name}: the input's feature dimension ({c}) must equal the kernel's "
            f"in-feature dimension ({i}) times feature_group_count ({g})"
        )
    if o % g or o % b:
        raise ValueError(
            f"{name}: the kernel's out-feature dimension ({o}) must be a multiple "
            f"of feature_group_count ({g}) and batch_group_count ({b})"
        )
    if n % b:
        raise ValueError(
            f"{name}: the batch dimension ({n}) must be a multiple of "
            f"batch_group_count ({b})"
        )
    x, space = _pad_spatial(x, 2, pads, lhs_dilation, name)
    eff = tuple(_dilate_dim(k, r) for k, r in zip(kernel, rhs_dilation))
    out_space = tuple(_stride_dim(s, e, st) for s, e, st in zip(space, eff, strides))
    dt = np.result_type(x.dtype, w.dtype)
    if 0 in out_space or 0 in kernel or n == 0 or o == 0 or c == 0:
        return lax.full((n // b, o, *out_space), 0, dt)
    kk = math.prod(kernel)
    p = _patches(x, kernel, strides, rhs_dilation, out_space)  # (N, C, K, out...)
    if b > 1:
        p = lax.reshape(p, (b, n // b, c, kk, *out_space))
        wk = lax.reshape(w, (b, o // b, i, kk))
        # (b, N/b, out..., O/b)
        r = lax.dot_general(p, wk, (((2, 3), (2, 3)), ((0,), (0,))))
        perm = (1, 0, nsp + 2, *range(2, 2 + nsp))
        r = lax.transpose(r, perm)
        return lax.reshape(r, (n // b, o, *out_space))
    p = lax.reshape(p, (n, g, i, kk, *out_space))
    wk = lax.reshape(w, (g, o // g, i, kk))
    # (g, N, out..., O/g)
    r = lax.dot_general(p, wk, (((2, 3), (2, 3)), ((1,), (0,))))
    perm = (1, 0, nsp + 2, *range(2, 2 + nsp))
    r = lax.transpose(r, perm)
    return lax.reshape(r, (n, o, *out_space))


def _conv_channels_last(
    x: Any,
    w: Any,
    strides: tuple[int, ...],
    pads: tuple[tuple[int, int], ...],
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    name: str,
) -> Any:
    """The ungrouped convolution in channels-last layouts: x ``(N, space...,
    C)``, w ``(kernel..., C, O)`` -> ``(N, out..., O)``.

    The patches are built as ``(N, out..., K, C)``, which is the row-major
    matrix ``(N * out, K * C)``, and the kernel is the matrix ``(K * C, O)``
    as it lies: the product is one BLAS GEMM with neither operand
    transposed, and its result is already the output. (The channels-first
    path of ``_conv_canonical`` has the contracted dimensions between the
    free ones, so every call -- and every gradient -- first transposes the
    whole patch tensor.) NHWC/HWIO/NHWC convolutions need no other copies."""
    nsp = len(x.shape) - 2
    n, c = int(x.shape[0]), int(x.shape[-1])
    kernel = tuple(int(k) for k in w.shape[:nsp])
    i, o = int(w.shape[nsp]), int(w.shape[nsp + 1])
    if c != i:
        raise ValueError(
            f"{name}: the input's feature dimension ({c}) must equal the kernel's "
            f"in-feature dimension ({i}) times feature_group_count (1)"
        )
    x, space = _pad_spatial(x, 1, pads, lhs_dilation, name)
    eff = tuple(_dilate_dim(k, r) for k, r in zip(kernel, rhs_dilation))
    out_space = tuple(_stride_dim(d, e, st) for d, e, st in zip(space, eff, strides))
    dt = np.result_type(x.dtype, w.dtype)
    if 0 in out_space or 0 in kernel or n == 0 or o == 0 or c == 0:
        return lax.full((n, *out_space, o), 0, dt)
    views = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        start = [0, *(q * r for q, r in zip(offset, rhs_dilation)), 0]
        limit = [
            n,
            *(st + (m - 1) * sd + 1 for st, m, sd in zip(start[1:-1], out_space, strides)),
            c,
        ]
        v = lax.slice(x, start, limit, [1, *strides, 1])
        views.append(lax.reshape(v, (n, *out_space, 1, c)))
    p = views[0] if len(views) == 1 else lax.concatenate(views, nsp + 1)
    kk = math.prod(kernel)
    rows = n * math.prod(out_space)
    r = lax.dot_general(
        lax.reshape(p, (rows, kk * c)),
        lax.reshape(w, (kk * c, o)),
        (((1,), (0,)), ((), ())),
    )
    return lax.reshape(r, (n, *out_space, o))


def conv_general_dilated(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Any,
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """General n-dimensional convolution with dilations (JAX's
    ``conv_general_dilated``).

    ``padding``: ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or ``(low,
    high)`` pairs (negative crops); ``lhs_dilation`` (transposed
    convolution) and ``rhs_dilation`` (atrous) per spatial dimension;
    ``dimension_numbers`` None (``NCHW``/``OIHW``/``NCHW``), three strings
    such as ``('NHWC', 'HWIO', 'NHWC')`` or a ``ConvDimensionNumbers`` --
    strides, padding and dilations follow the spatial order of the kernel's
    spec, as in JAX. ``feature_group_count`` (grouped and depthwise
    convolutions) and ``batch_group_count`` split the features or the batch
    into groups. ``precision`` is accepted (float32 is always full
    precision); ``preferred_element_type`` is the accumulation and result
    dtype; ``out_sharding`` must be None.
    """
    name = "conv_general_dilated"
    if out_sharding is not None:
        raise ValueError(f"{name}: out_sharding is not supported; leave it None")
    x, w = _t(lhs), _t(rhs)
    _check_precision(precision, name)
    dn = conv_dimension_numbers(tuple(x.shape), tuple(w.shape), dimension_numbers)
    nd = len(x.shape)
    if nd < 2 or len(w.shape) != nd:
        raise TypeError(
            f"{name}: lhs and rhs must have the same rank (>= 2), got shapes "
            f"{tuple(x.shape)} and {tuple(w.shape)}"
        )
    for spec, what in (
        (dn.lhs_spec, "lhs_spec"),
        (dn.rhs_spec, "rhs_spec"),
        (dn.out_spec, "out_spec"),
    ):
        if sorted(int(d) for d in spec) != list(range(nd)):
            raise TypeError(
                f"{name}: dimension_numbers.{what} {tuple(spec)} is not a "
                f"permutation of range({nd})"
            )
    nsp = nd - 2
    strides = _ints(window_strides, nsp, "window_strides", name)
    if any(s < 1 for s in strides):
        raise ValueError(f"{name}: window_strides must be positive, got {strides}")
    lhs_dil = (
        (1,) * nsp
        if lhs_dilation is None
        else _ints(lhs_dilation, nsp, "lhs_dilation", name)
    )
    rhs_dil = (
        (1,) * nsp
        if rhs_dilation is None
        else _ints(rhs_dilation, nsp, "rhs_dilation", name)
    )
    if any(d < 1 for d in lhs_dil + rhs_dil):
        raise ValueError(
            f"{name}: dilations must be positive, got {lhs_dil} and {rhs_dil}"
        )
    lhs_spec = tuple(int(d) for d in dn.lhs_spec)
    rhs_spec = tuple(int(d) for d in dn.rhs_spec)
    out_spec = tuple(int(d) for d in dn.out_spec)
    # Spatial sizes in the kernel spec's order (what padding strings need).
    x_space = tuple(int(x.shape[d]) for d in lhs_spec[2:])
    w_space = tuple(int(w.shape[d]) for d in rhs_spec[2:])
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dil):
            raise ValueError(
                "String padding is not implemented for transposed convolution "
                "using this op. Please either exactly specify the required "
                "padding or use conv_transpose."
            )
        eff = [_dilate_dim(k, r) for k, r in zip(w_space, rhs_dil)]
        pads = tuple(padtype_to_pads(x_space, eff, strides, padding))
    else:
        try:
            pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError(
                "padding argument to conv_general_dilated should be a string or a "
                f"sequence of (low, high) pairs, got {padding}"
            ) from e
        if len(pads) != nsp:
            raise ValueError(
                f"{name}: padding must have one (low, high) pair per spatial "
                f"dimension ({nsp}), got {padding}"
            )
    if preferred_element_type is not None:
        pt = np.dtype(preferred_element_type)
        x = lax.convert_element_type(x, pt)
        w = lax.convert_element_type(w, pt)
    if int(feature_group_count) == 1 and int(batch_group_count) == 1:
        # Channels last: (N, space..., C) and (kernel..., I, O), which for
        # NHWC / HWIO are the operands as given.
        x = lax.transpose(x, (lhs_spec[0], *lhs_spec[2:], lhs_spec[1]))
        w = lax.transpose(w, (*rhs_spec[2:], rhs_spec[1], rhs_spec[0]))
        out = _conv_channels_last(x, w, strides, pads, lhs_dil, rhs_dil, name)
        # Logical dimension j of the result (N, O, spatial...) is axis
        # cl[j] of `out`; it goes to axis out_spec[j].
        cl = (0, nsp + 1, *range(1, nsp + 1))
        perm = [0] * (nsp + 2)
        for j, axis in enumerate(out_spec):
            perm[axis] = cl[j]
        return lax.transpose(out, tuple(perm))
    x = lax.transpose(x, lhs_spec)
    w = lax.transpose(w, rhs_spec)
    out = _conv_canonical(
        x,
        w,
        strides,
        pads,
        lhs_dil,
        rhs_dil,
        int(feature_group_count),
        int(batch_group_count),
        name,
    )
    return lax.transpose(out, tuple(int(d) for d in np.argsort(out_spec)))


def conv(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: str,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """``conv_general_dilated`` in ``NCHW``/``OIHW`` layout without
    dilation (JAX's ``conv``)."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_with_general_padding(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Any,
    lhs_dilation: Sequence[int] | None,
    rhs_dilation: Sequence[int] | None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """``conv_general_dilated`` in ``NCHW``/``OIHW`` layout with explicit
    dilations (JAX's ``conv_with_general_padding``)."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_transpose(
    lhs: Any,
    rhs: Any,
    strides: Sequence[int],
    padding: Any,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    transpose_kernel: bool = False,
    precision: Any = None,
    preferred_element_type: Any = None,
    use_consistent_padding: bool = False,
) -> Any:
    """The N-d transposed ("fractionally strided") convolution (JAX's
    ``conv_transpose``): ``conv_general_dilated`` with ``lhs_dilation =
    strides`` and the padding of the corresponding forward convolution.

    ``padding`` ``'SAME'``/``'VALID'`` is the forward convolution's;
    integer pairs are the transposed convolution's own padding unless
    ``use_consistent_padding`` (then they are the forward one's, as in
    PyTorch). ``dimension_numbers`` default to TensorFlow's (``NHWC``,
    ``HWIO``). ``transpose_kernel`` flips the kernel's spatial dimensions
    and swaps its in/out features (Keras' ``Conv2DTranspose``).
    """
    x, w = _t(lhs), _t(rhs)
    nd = len(x.shape)
    if nd < 2 or len(w.shape) != nd:
        raise TypeError(
            f"conv_transpose: lhs and rhs must have the same rank (>= 2), got "
            f"shapes {tuple(x.shape)} and {tuple(w.shape)}"
        )
    if dimension_numbers is None:
        defaults = {
            2: ("NC", "IO", "NC"),
            3: ("NHC", "HIO", "NHC"),
            4: ("NHWC", "HWIO", "NHWC"),
            5: ("NHWDC", "HWDIO", "NHWDC"),
        }
        if nd not in defaults:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = defaults[nd]
    dn = conv_dimension_numbers(tuple(x.shape), tuple(w.shape), dimension_numbers)
    k_sdims = [int(w.shape[d]) for d in dn.rhs_spec[2:]]
    nsp = nd - 2
    rhs_dil = (
        (1,) * nsp
        if rhs_dilation is None
        else _ints(rhs_dilation, nsp, "rhs_dilation", "conv_transpose")
    )
    strides_t = _ints(strides, nsp, "strides", "conv_transpose")
    if use_consistent_padding or (
        isinstance(padding, str) and padding in ("SAME", "VALID")
    ):
        eff = [_dilate_dim(k, r) for k, r in zip(k_sdims, rhs_dil)]
        rep = (
            [padding] * nsp if isinstance(padding, str) else [tuple(p) for p in padding]
        )
        pads: Any = tuple(
            _conv_transpose_padding(k, s, p) for k, s, p in zip(eff, strides_t, rep)
        )
    else:
        pads = padding
    if transpose_kernel:
        from baton._lax_slicing import rev

        w = rev(w, tuple(int(d) for d in dn.rhs_spec[2:]))
        perm = list(range(nd))
        a, b = int(dn.rhs_spec[0]), int(dn.rhs_spec[1])
        perm[a], perm[b] = perm[b], perm[a]
        w = lax.transpose(w, tuple(perm))
    return conv_general_dilated(
        x,
        w,
        (1,) * nsp,
        pads,
        strides_t,
        rhs_dil,
        dn,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_general_dilated_patches(
    lhs: Any,
    filter_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The patches ``conv_general_dilated`` would contract (JAX's
    function): the result's feature dimension holds each receptive field
    flattened in the order ``c`` then the spatial dimensions of the
    kernel spec, ``prod(filter_shape) * C`` entries."""
    name = "conv_general_dilated_patches"
    x = _t(lhs)
    filter_shape = tuple(int(f) for f in filter_shape)
    dn = conv_dimension_numbers(
        tuple(x.shape), (1, 1, *filter_shape), dimension_numbers
    )
    _check_precision(precision, name)
    nsp = len(x.shape) - 2
    strides = _ints(window_strides, nsp, "window_strides", name)
    lhs_dil = (
        (1,) * nsp
        if lhs_dilation is None
        else _ints(lhs_dilation, nsp, "lhs_dilation", name)
    )
    rhs_dil = (
        (1,) * nsp
        if rhs_dilation is None
        else _ints(rhs_dilation, nsp, "rhs_dilation", name)
    )
    # filter_shape is in the order of the kernel spec's spatial positions;
    # the patches are taken in the canonical order (rhs_spec[2:]).
    order = _spatial_order(dn.rhs_spec)
    kernel = tuple(filter_shape[j] for j in order)
    xc = lax.transpose(x, tuple(int(d) for d in dn.lhs_spec))
    if preferred_element_type is not None:
        xc = lax.convert_element_type(xc, np.dtype(preferred_element_type))
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dil):
            raise ValueError(
                "String padding is not implemented for transposed convolution "
                "using this op. Please either exactly specify the required "
                "padding or use conv_transpose."
            )
        eff = [_dilate_dim(k, r) for k, r in zip(kernel, rhs_dil)]
        pads = tuple(padtype_to_pads(tuple(xc.shape[2:]), eff, strides, padding))
    else:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    n, c = int(xc.shape[0]), int(xc.shape[1])
    if any(p != (0, 0) for p in pads) or any(d != 1 for d in lhs_dil):
        xc = lax.pad(
            xc,
            lax.full((), 0, xc.dtype),
            (0, 0, *(lo for lo, _ in pads)),
            (0, 0, *(hi for _, hi in pads)),
            (0, 0, *(d - 1 for d in lhs_dil)),
        )
    space = tuple(int(s) for s in xc.shape[2:])
    eff = tuple(_dilate_dim(k, r) for k, r in zip(kernel, rhs_dil))
    out_space = tuple(_stride_dim(s, e, st) for s, e, st in zip(space, eff, strides))
    kk = math.prod(kernel)
    if 0 in out_space or kk == 0 or n == 0 or c == 0:
        out = lax.full((n, c * kk, *out_space), 0, xc.dtype)
    else:
        p = _patches(xc, kernel, strides, rhs_dil, out_space)
        if order != sorted(order):
            # The feature dimension flattens the filter in filter_shape's order.
            p = lax.reshape(p, (n, c, *kernel, *out_space))
            back = [order.index(j) for j in range(nsp)]
            p = lax.transpose(
                p, (0, 1, *(2 + b for b in back), *range(2 + nsp, 2 + 2 * nsp))
            )
        out = lax.reshape(p, (n, c * kk, *out_space))
    return lax.transpose(out, tuple(int(d) for d in np.argsort(dn.out_spec)))


def _spatial_order(rhs_spec: Sequence[int]) -> list[int]:
    """For each canonical spatial dimension of the kernel, the index into a
    ``filter_shape`` given in the order of the kernel spec's spatial
    dimensions (the rhs_spec's spatial entries, sorted by position)."""
    spatial = [int(d) for d in rhs_spec[2:]]
    by_position = sorted(spatial)
    return [by_position.index(d) for d in spatial]


def conv_general_dilated_local(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Any,
    filter_shape: Sequence[int],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: Any = None,
) -> Any:
    """The unshared ("locally connected") convolution (JAX's function): a
    separate kernel at each output position. ``rhs``'s spatial dimensions
    are the output's, its in-feature dimension the flattened receptive
    field (``c`` then the kernel spec's spatial dimensions)."""
    x, w = _t(lhs), _t(rhs)
    patches = conv_general_dilated_patches(
        x,
        filter_shape,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers,
    )
    _, rhs_spec, out_spec = conv_dimension_numbers(
        tuple(x.shape), (1, 1, *tuple(int(f) for f in filter_shape)), dimension_numbers
    )
    lhs_b = [int(d) for d in out_spec[2:]]
    rhs_b = [int(d) for d in rhs_spec[2:]]
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    out = lax.dot_general(
        patches,
        w,
        (((int(out_spec[1]),), (int(rhs_spec[1]),)), (tuple(lhs_b), tuple(rhs_b))),
    )
    # (spatial..., N, O) -> N and O to out_spec's batch and feature places.
    nd = len(out.shape)
    src = list(range(nd))
    order = [None] * nd
    order[int(out_spec[0])] = nd - 2
    order[int(out_spec[1])] = nd - 1
    rest = iter(src[: nd - 2])
    order = [next(rest) if o is None else o for o in order]
    return lax.transpose(out, tuple(order))


__all__ = [
    "ConvDimensionNumbers",
    "ConvGeneralDilatedDimensionNumbers",
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_general_dilated_local",
    "conv_general_dilated_patches",
    "conv_general_permutations",
    "conv_general_shape_tuple",
    "conv_shape_tuple",
    "conv_transpose",
    "conv_transpose_shape_tuple",
    "conv_with_general_padding",
    "padtype_to_pads",
]

# Not operations on arrays: bt.lax leaves them unwrapped.
NOT_OPERATIONS = frozenset(
    {
        "ConvDimensionNumbers",
        "ConvGeneralDilatedDimensionNumbers",
        "conv_dimension_numbers",
        "conv_general_permutations",
        "conv_general_shape_tuple",
        "conv_shape_tuple",
        "conv_transpose_shape_tuple",
        "padtype_to_pads",
    }
)
