"""The generated inputs of tools/jnp_coverage.py: for each public function
of jax.numpy, the calls on which baton.numpy must give what jax.numpy gives.

A probe is ``(args, kwargs)``; ``args`` are numpy values (each side gets
them as they are: jax.numpy and baton.numpy both take numpy input) or
Python values. Functions are grouped by the inputs that suit them; the
inputs are fixed (a seeded generator), float32/int32/bool only (JAX runs with
x64 off). A function listed nowhere here is reported "present, unchecked":
it never counts as matching.

Kept next to the script, not in the package: this is test data.
"""

from __future__ import annotations

import numpy as np

_rng = np.random.default_rng(20261201)

# 3x4 float32 in [-2, 2), with a 0.0 and a -0.5 (rounding ties) in it.
A = _rng.uniform(-2, 2, (3, 4)).astype(np.float32)
A[0, 0], A[1, 1] = 0.0, -0.5
B = _rng.uniform(-2, 2, (3, 4)).astype(np.float32)
POS = _rng.uniform(0.1, 3, (3, 4)).astype(np.float32)
UNIT = _rng.uniform(-0.9, 0.9, (3, 4)).astype(np.float32)
ABOVE1 = _rng.uniform(1.1, 3, (3, 4)).astype(np.float32)
NANS = A.copy()
NANS[0, 1], NANS[2, 3] = np.nan, np.nan
I = _rng.integers(-20, 20, (3, 4)).astype(np.int32)
IPOS = _rng.integers(1, 20, (3, 4)).astype(np.int32)
SMALLI = _rng.integers(0, 5, (3, 4)).astype(np.int32)
MASK = A > 0
V3 = _rng.uniform(-1, 1, (3,)).astype(np.float32)
W3 = _rng.uniform(-1, 1, (3,)).astype(np.float32)
V6 = _rng.uniform(-1, 1, (6,)).astype(np.float32)
SQ = _rng.uniform(-1, 1, (4, 4)).astype(np.float32)
SORTED = np.sort(_rng.uniform(-2, 2, (8,)).astype(np.float32))
COL = A[:, :1]  # 3x1, for squeeze and broadcasting


def _one(*args, **kwargs):
    return [(args, kwargs)]


def _each(names, probes):
    return {n: probes for n in names}


PROBES: dict[str, list] = {}

# Elementwise, one argument.
PROBES |= _each(
    "abs absolute negative positive sign floor ceil rint trunc fix exp exp2 "
    "expm1 sin cos tan sinh cosh tanh arctan atan arcsinh asinh cbrt square "
    "fabs deg2rad degrees rad2deg radians sinc signbit isfinite isinf isnan "
    "isneginf isposinf isreal iscomplex real imag conj conjugate i0 "
    "logical_not nan_to_num around round spacing angle".split(),
    [((A,), {}), ((NANS,), {})],
)
PROBES |= _each(
    "log log2 log10 log1p sqrt reciprocal".split(), [((POS,), {})]
)
PROBES |= _each("arcsin arccos arctanh asin acos atanh".split(), [((UNIT,), {})])
PROBES |= _each("arccosh acosh".split(), [((ABOVE1,), {})])
PROBES |= _each(
    "bitwise_not invert bitwise_invert bitwise_count".split(), [((I,), {})]
)
PROBES["round"] = [((A,), {}), ((A * 10,), {"decimals": 1})]
PROBES["around"] = PROBES["round"]
PROBES["frexp"] = [((A,), {})]
PROBES["modf"] = [((A,), {})]
PROBES["astype"] = [((A, np.int32), {}), ((I, np.float32), {})]

# Elementwise, two arguments.
PROBES |= _each(
    "add subtract multiply divide true_divide floor_divide maximum minimum "
    "fmax fmin arctan2 atan2 hypot copysign nextafter logaddexp logaddexp2 "
    "heaviside fmod mod remainder equal not_equal less less_equal greater "
    "greater_equal isclose divmod".split(),
    [((A, B), {}), ((A, 1.5), {})],
)
PROBES |= _each("power pow float_power".split(), [((POS, B), {}), ((A, 2), {})])
PROBES |= _each(
    "logical_and logical_or logical_xor".split(), [((MASK, B > 0), {})]
)
PROBES |= _each(
    "bitwise_and bitwise_or bitwise_xor gcd lcm".split(), [((I, IPOS), {})]
)
PROBES |= _each(
    "left_shift right_shift bitwise_left_shift bitwise_right_shift".split(),
    [((I, SMALLI), {})],
)
PROBES["ldexp"] = [((A, SMALLI), {})]
PROBES["allclose"] = [((A, A + 1e-7), {}), ((A, B), {})]
PROBES["array_equal"] = [((A, A.copy()), {}), ((A, B), {}), ((A, COL), {})]
PROBES["array_equiv"] = [((A, A.copy()), {}), ((A[:1], A[:1] + 0 * A), {})]
PROBES["clip"] = [((A, -1, 1), {})]
PROBES["where"] = [((MASK, A, B), {})]
PROBES["heaviside"] = [((A, 0.5), {})]

# Reductions: whole array and one axis.
_RED = [((A,), {}), ((A,), {"axis": 1}), ((A,), {"axis": 0, "keepdims": True})]
PROBES |= _each(
    "sum prod max min amax amin mean var std ptp median average".split(), _RED
)
PROBES |= _each("argmax argmin".split(), [((A,), {}), ((A,), {"axis": 1})])
PROBES |= _each("all any".split(), [((MASK,), {}), ((MASK,), {"axis": 0})])
PROBES["count_nonzero"] = [((MASK,), {}), ((I,), {"axis": 1})]
PROBES |= _each(
    "nansum nanprod nanmax nanmin nanmean nanvar nanstd nanmedian".split(),
    [((NANS,), {}), ((NANS,), {"axis": 1})],
)
PROBES |= _each("nanargmax nanargmin".split(), [((NANS,), {"axis": 1})])
PROBES |= _each(
    "cumsum cumprod nancumsum nancumprod".split(),
    [((A,), {}), ((A,), {"axis": 1}), ((I,), {"axis": 0})],
)
PROBES["nancumsum"] = PROBES["nancumprod"] = [((NANS,), {"axis": 1})]
PROBES |= _each("cumulative_sum cumulative_prod".split(), [((A,), {"axis": 1})])
PROBES |= _each(
    "percentile nanpercentile".split(), [((A, 30.0), {}), ((A, 75.0), {"axis": 1})]
)
PROBES |= _each(
    "quantile nanquantile".split(), [((A, 0.3), {}), ((A, 0.75), {"axis": 1})]
)
PROBES["sort"] = [((A,), {}), ((A,), {"axis": 0}), ((I,), {})]
PROBES["argsort"] = [((A,), {}), ((I,), {"axis": 0, "stable": True})]
PROBES["partition"] = [((V6, 2), {})]
PROBES["argpartition"] = [((V6, 2), {})]
PROBES["lexsort"] = [(((SMALLI[0], SMALLI[1]),), {})]
PROBES["sort_complex"] = [((V6,), {})]
PROBES["searchsorted"] = [((SORTED, V3), {}), ((SORTED, V3), {"side": "right"})]
PROBES["digitize"] = [((V6, SORTED), {})]
PROBES["bincount"] = [((SMALLI.ravel(),), {"length": 6})]
PROBES["histogram"] = [((V6,), {"bins": 4, "range": (-1, 1)})]
PROBES["histogram_bin_edges"] = [((V6,), {"bins": 4})]
PROBES["diff"] = [((A,), {}), ((A,), {"axis": 0, "n": 2})]
PROBES["ediff1d"] = [((V6,), {})]
PROBES["gradient"] = [((V6,), {})]
PROBES["trapezoid"] = [((A,), {}), ((V6,), {"dx": 0.5})]
PROBES["interp"] = [((V3, SORTED, np.arange(8, dtype=np.float32)), {})]
PROBES["convolve"] = [((V6, V3), {}), ((V6, V3), {"mode": "same"})]
PROBES["correlate"] = [((V6, V3), {}), ((V6, V3), {"mode": "full"})]
PROBES["cov"] = [((A,), {})]
PROBES["corrcoef"] = [((A,), {})]
PROBES["unwrap"] = [((V6 * 4,), {})]

# Linear algebra.
PROBES["dot"] = [((A, B.T), {}), ((V3, W3), {})]
PROBES["matmul"] = [((A, B.T), {})]
PROBES["vdot"] = [((A, B), {})]
PROBES["inner"] = [((A, B), {})]
PROBES["outer"] = [((V3, W3), {})]
PROBES["tensordot"] = [((A, B), {"axes": ([1], [1])})]
PROBES["einsum"] = [(("ij,kj->ik", A, B), {})]
PROBES["kron"] = [((A[:2, :2], SQ[:2, :3]), {})]
PROBES["cross"] = [((V3, W3), {})]
PROBES["vecdot"] = [((A, B), {})]
PROBES["matvec"] = [((A, SQ[0]), {})]
PROBES["vecmat"] = [((V3, A), {})]
PROBES["trace"] = [((SQ,), {}), ((A,), {"offset": 1})]

# Shapes and arrangement.
PROBES |= _each(
    "ravel transpose flip fliplr flipud atleast_1d atleast_2d atleast_3d "
    "matrix_transpose rot90 diagonal diag tril triu copy shape ndim size "
    "unstack nonzero flatnonzero argwhere trim_zeros permute_dims".split(),
    [((A,), {})],
)
PROBES["diag"] = [((A,), {}), ((V3,), {}), ((V3,), {"k": 1})]
PROBES["diagflat"] = [((V3,), {})]
PROBES["trim_zeros"] = [((np.array([0, 0, 1, 2, 0, 3, 0], np.int32),), {})]
PROBES["squeeze"] = [((COL,), {})]
PROBES["expand_dims"] = [((A, 0), {}), ((A, (0, 3)), {})]
PROBES["reshape"] = [((A, (4, 3)), {}), ((A, (-1,)), {})]
PROBES["moveaxis"] = [((A, 0, 1), {})]
PROBES["swapaxes"] = [((A, 0, 1), {})]
PROBES["rollaxis"] = [((A, 1), {})]
PROBES["roll"] = [((A, 1), {}), ((A, -2), {"axis": 1})]
PROBES["tile"] = [((A, 2), {}), ((V3, (2, 2)), {})]
PROBES["repeat"] = [((A, 2), {}), ((A, 2), {"axis": 0})]
PROBES["resize"] = [((A, (2, 7)), {})]
PROBES["broadcast_to"] = [((V3[:, None], (3, 4)), {})]
PROBES["broadcast_arrays"] = [((A, COL), {})]
PROBES["broadcast_shapes"] = [(((3, 1), (1, 4)), {})]
PROBES["pad"] = [((A, 1), {}), ((A, ((0, 1), (2, 0))), {"constant_values": 3})]
PROBES["take"] = [((A, np.array([0, 2], np.int32)), {"axis": 1})]
PROBES["take_along_axis"] = [((A, np.argsort(A, axis=1)), {"axis": 1})]
PROBES["put_along_axis"] = [
    ((A, np.zeros((3, 1), np.int32), 9.0), {"axis": 1, "inplace": False})
]
PROBES["put"] = [((A, np.array([0, 5], np.int32), 7.0), {"inplace": False})]
PROBES["place"] = [((A, MASK, np.float32(4)), {"inplace": False})]
PROBES["fill_diagonal"] = [((SQ, 2.0), {"inplace": False})]
PROBES["select"] = [(([MASK, B > 0], [A, B]), {"default": 0.5})]
PROBES["choose"] = [((SMALLI % 2, [A, B]), {})]
PROBES["compress"] = [((np.array([True, False, True]), A), {"axis": 0})]
PROBES["extract"] = [((MASK, A), {})]
PROBES["piecewise"] = [((A, [MASK], [lambda x: x * 2, lambda x: x - 1]), {})]
PROBES["delete"] = [((A, 1), {"axis": 1})]
PROBES["insert"] = [((A, 1, 5.0), {"axis": 1})]
PROBES["append"] = [((A, B), {"axis": 0}), ((A, V3), {})]
PROBES |= _each(
    "concatenate concat stack vstack hstack dstack column_stack".split(),
    [(((A, B),), {})],
)
PROBES["block"] = [(([[A, B], [B, A]],), {})]
PROBES |= _each(
    "split array_split".split(), [((A, 2), {"axis": 1}), ((V6, [1, 4]), {})]
)
PROBES["array_split"] = [((V6, 4), {})]
PROBES["hsplit"] = [((A, 2), {})]
PROBES["vsplit"] = [((V6.reshape(2, 3), 2), {})]
PROBES["dsplit"] = [((A.reshape(1, 3, 4), 2), {})]
PROBES["meshgrid"] = [((V3, W3), {}), ((V3, W3), {"indexing": "ij"})]
PROBES["ix_"] = [((np.array([0, 2], np.int32), np.array([1, 3], np.int32)), {})]
PROBES["indices"] = [(((2, 3),), {})]
PROBES["unravel_index"] = [((np.array([1, 7], np.int32), (3, 4)), {})]
PROBES["ravel_multi_index"] = [
    (((np.array([1, 2], np.int32), np.array([0, 3], np.int32)), (3, 4)), {})
]
PROBES["vander"] = [((V3,), {}), ((V3, 4), {})]
PROBES["apply_along_axis"] = [((lambda r: r * 2 + r.sum(), 1, A), {})]
PROBES["apply_over_axes"] = [((lambda x, ax: x.sum(ax, keepdims=True), A, [0]), {})]

# Creation.
PROBES |= _each(
    "zeros ones".split(), [(((2, 3),), {}), (((2,),), {"dtype": np.int32})]
)
PROBES["empty"] = [(((0, 3),), {})]  # no values to compare but the shape
PROBES["full"] = [(((2, 3), 1.5), {}), (((2,), 7), {"dtype": np.int32})]
PROBES |= _each("zeros_like ones_like".split(), [((A,), {}), ((I,), {})])
PROBES["empty_like"] = [((A[:0],), {})]
PROBES["full_like"] = [((A, 2.5), {})]
PROBES["arange"] = [((5,), {}), ((1, 7, 2), {}), ((0.0, 1.0, 0.25), {})]
PROBES["linspace"] = [((0, 1, 5), {}), ((0, 1, 4), {"endpoint": False})]
PROBES["logspace"] = [((0, 2, 5), {})]
PROBES["geomspace"] = [((1, 100, 5), {})]
PROBES["eye"] = [((3,), {}), ((3, 4), {"k": 1})]
PROBES["identity"] = [((3,), {})]
PROBES["tri"] = [((3,), {}), ((3, 4), {"k": -1})]
PROBES["array"] = [((A,), {}), (([1, 2, 3],), {})]
PROBES["asarray"] = [((A,), {}), ((3.0,), {})]
PROBES["fromfunction"] = [((lambda i, j: i + j, (2, 3)), {"dtype": np.float32})]
PROBES["frombuffer"] = [((A.tobytes(),), {"dtype": np.float32})]
PROBES["fromiter"] = [((range(4),), {"dtype": np.float32})]
PROBES["from_dlpack"] = [((A,), {})]
PROBES |= _each("bartlett blackman hamming hanning".split(), [((5,), {})])
PROBES["kaiser"] = [((5, 3.0), {})]
PROBES |= _each("tril_indices triu_indices".split(), [((3,), {}), ((3, 1), {})])
PROBES |= _each("tril_indices_from triu_indices_from".split(), [((SQ,), {})])
PROBES["diag_indices"] = [((3,), {})]
PROBES["diag_indices_from"] = [((SQ,), {})]
PROBES["mask_indices"] = [((3, np.triu), {})]

# Sets.
_S1 = np.array([3, 1, 2, 3, 5, 1], np.int32)
_S2 = np.array([2, 4, 3], np.int32)
PROBES |= _each("unique unique_values".split(), [((_S1,), {})])
PROBES["unique"] = [((_S1,), {}), ((_S1,), {"return_counts": True})]
PROBES |= _each(
    "intersect1d union1d setdiff1d setxor1d isin".split(), [((_S1, _S2), {})]
)

# Polynomials.
_P = np.array([1.0, -2.0, 0.5], np.float32)
_Q = np.array([2.0, 1.0], np.float32)
PROBES["polyval"] = [((_P, V3), {})]
PROBES |= _each("polyadd polysub polymul".split(), [((_P, _Q), {})])
PROBES["polydiv"] = [((_P, _Q), {})]
PROBES |= _each("polyder polyint".split(), [((_P,), {})])
PROBES["poly"] = [((V3,), {})]
PROBES["roots"] = [((_P,), {})]
PROBES["polyfit"] = [((V6, V6 * 2 + 1, 1), {})]

# Bits.
_U8 = np.array([[3, 255, 0, 17]], np.uint8)
PROBES["packbits"] = [((MASK,), {})]
PROBES["unpackbits"] = [((_U8,), {})]

# Type queries (their values are compared like any result).
PROBES["isscalar"] = [((3.0,), {}), ((A,), {})]
PROBES["iterable"] = [((A,), {}), ((3,), {})]
PROBES |= _each("isrealobj iscomplexobj".split(), [((A,), {})])
PROBES["result_type"] = [((np.int32, np.float32), {}), ((A, 1.0), {})]
PROBES["promote_types"] = [((np.int8, np.uint8), {}), ((np.float16, np.int32), {})]
PROBES["can_cast"] = [((np.int32, np.float32), {}), ((np.float32, np.int8), {})]
PROBES["issubdtype"] = [((np.float32, np.floating), {}), ((np.int32, np.floating), {})]
PROBES["isdtype"] = [((np.float32, "real floating"), {})]
PROBES["permute_dims"] = [((A, (1, 0)), {})]
PROBES["fromstring"] = [(("1 2.5 -3",), {"sep": " "})]
PROBES["array_repr"] = [((A,), {})]
PROBES["array_str"] = [((A,), {"precision": 3})]
PROBES["get_printoptions"] = [((), {})]
PROBES["set_printoptions"] = [((), {})]

# Set operations, bits and the special-value helpers (issue: top-level surface).
_DUPS = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], np.int32)
_OTHER = np.array([5, 3, 8, 8, 0, 1], np.int32)
PROBES["unique"] = [
    ((_DUPS,), {}),
    ((NANS,), {}),
    ((_DUPS,), dict(return_index=True, return_inverse=True, return_counts=True)),
    ((_DUPS,), dict(size=8, fill_value=-1)),
    ((SMALLI,), dict(axis=1)),
]
PROBES["unique_all"] = [((_DUPS,), {}), ((SMALLI,), dict(size=6))]
PROBES["unique_counts"] = [((_DUPS,), {})]
PROBES["unique_inverse"] = [((SMALLI,), {})]
PROBES["unique_values"] = [((_DUPS,), {}), ((_DUPS,), dict(size=9))]
PROBES["union1d"] = [((_DUPS, _OTHER), {}), ((_DUPS, _OTHER), dict(size=12))]
PROBES["intersect1d"] = [((_DUPS, _OTHER), {}), ((_DUPS, _OTHER), dict(return_indices=True))]
PROBES["setdiff1d"] = [((_DUPS, _OTHER), {}), ((_DUPS, _OTHER), dict(size=5, fill_value=0))]
PROBES["setxor1d"] = [((_DUPS, _OTHER), {})]
PROBES["i0"] = [((A,), {}), ((I,), {})]
PROBES["kaiser"] = [((8, 4.0), {}), ((1, 2.0), {})]
PROBES["nextafter"] = [((A, B), {}), ((A, 0.0), {})]
PROBES["spacing"] = [((A,), {}), ((POS,), {})]
PROBES["sort_complex"] = [((V6,), {}), ((A,), {})]
PROBES["mask_indices"] = [((4, np.triu), {}), ((3, np.tril, -1), {})]
PROBES["packbits"] = [((MASK,), {}), ((MASK, 1), {}), ((SMALLI, 0, "little"), {})]
PROBES["unpackbits"] = [
    ((np.array([[7, 200], [13, 255]], np.uint8),), {}),
    ((np.array([[7, 200], [13, 255]], np.uint8), 1), dict(count=11)),
]
_PX = np.linspace(-1, 1, 12).astype(np.float32)
_PY = (3 * _PX**2 - _PX + 0.5 + 0.1 * _rng.normal(size=12)).astype(np.float32)
PROBES["polyfit"] = [((_PX, _PY, 2), {}), ((_PX, np.stack([_PY, 2 * _PY], 1), 3), {})]
_HS = _rng.normal(size=(40, 3)).astype(np.float32)
PROBES["histogramdd"] = [((_HS,), {}), ((_HS,), dict(bins=[3, 4, 5], density=True))]
PROBES["histogram2d"] = [((_HS[:, 0], _HS[:, 1]), {}), ((_HS[:, 0], _HS[:, 1]), dict(bins=(3, 6)))]
