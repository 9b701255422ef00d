"""Assorted jax.numpy functions composed from what baton already has: dtype
casts and the complex-number accessors (baton has real dtypes only),
window functions, nonzero / argwhere, isin, piecewise, vectorize, unwrap,
poly / polydiv, isdtype, host-side constructors (frombuffer,
fromstring, from_dlpack) and numpy's print options.

Functions whose result shape depends on values (nonzero, flatnonzero,
argwhere) run on concrete data eagerly and need ``size=`` under ``bt.jit``
(else ``ConcretizationTypeError``), as in JAX.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from baton import _dlpack, _dtypes, _ops
from baton._baton import Array, lax
from baton._jit import device_put
from baton.errors import ConcretizationTypeError
from baton.numpy import _creation, _cumulative, _elementwise, _shapes
from baton.numpy import _mx_common as _c
from baton.numpy._vectorize import vectorize

Tracer = lax.Tracer
_F32 = np.dtype(np.float32)
_I32 = np.dtype(np.int32)
_BOOL = np.dtype(np.bool_)

__all__: list[str] = [
    "angle",
    "argwhere",
    "array_repr",
    "array_str",
    "astype",
    "bartlett",
    "bitwise_invert",
    "blackman",
    "conj",
    "conjugate",
    "flatnonzero",
    "from_dlpack",
    "frombuffer",
    "fromstring",
    "get_printoptions",
    "hamming",
    "hanning",
    "imag",
    "isdtype",
    "isin",
    "nonzero",
    "piecewise",
    "poly",
    "polydiv",
    "printoptions",
    "real",
    "set_printoptions",
    "unwrap",
    "vectorize",
]


def _dtype_of(x: Any) -> np.dtype:
    d = _ops.dtype_of(x)
    return np.dtype(_ops.host_array(x).dtype) if d is None else np.dtype(d)


# ---- dtype casts and complex accessors ----


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (an array of that dtype is returned as is
    unless ``copy=True``)."""
    if dtype is None:
        raise TypeError("astype: `dtype` must be a dtype, not None")
    out = _creation.asarray(x, dtype=dtype, copy=copy)
    if device is not None:
        out = device_put(out, device)
    return out


def _identity_impl(x: Any) -> Any:
    return _ops.as_tracer(x)


def real(val: Any, /) -> Any:
    """The real part: ``val`` itself (baton has no complex dtypes)."""
    return _ops.apply(_identity_impl, (val,))


def conj(x: Any, /) -> Any:
    """The complex conjugate: ``x`` itself (baton has no complex dtypes)."""
    return _ops.apply(_identity_impl, (x,))


conjugate = conj


def _zeros_impl(x: Any) -> Any:
    t = _ops.as_tracer(x)
    return lax.full(tuple(t.shape), 0, np.dtype(t.dtype))


def imag(val: Any, /) -> Any:
    """The imaginary part: zeros of ``val``'s shape and dtype (baton has no
    complex dtypes)."""
    return _ops.apply(_zeros_impl, (val,))


def _angle_impl(z: Any, *, deg: bool) -> Any:
    t, d = _c.inexact(z)
    t = t[0]
    out = lax.atan2(lax.full(tuple(t.shape), 0, np.dtype(t.dtype)), t)
    if deg:
        out = lax.mul(out, lax.full((), 180.0 / math.pi, np.dtype(out.dtype)))
    return _c.down(out, d)


def angle(z: Any, deg: bool = False) -> Any:
    """The argument of ``z``: 0 for x >= +0, pi for x < 0 and -0.0, NaN for
    NaN (in degrees with ``deg=True``); integers and bool give float32."""
    return _ops.apply(_angle_impl, (z,), (("deg", bool(deg)),))


def bitwise_invert(x: Any, /) -> Any:
    """Bitwise NOT of integers, logical NOT of bool (alias of ``invert``)."""
    return _elementwise.invert(x)


# ---- window functions ----


def _window_len(name: str, M: Any) -> int:
    if isinstance(M, (Tracer, Array)) or isinstance(M, bool):
        if isinstance(M, bool):
            raise TypeError(f"{name}: `M` must be an int, not bool")
        raise TypeError(
            f"{name}: `M` (the window length) must be a static Python int; it "
            "sets the result's shape"
        )
    try:
        return operator.index(M)
    except TypeError:
        raise TypeError(f"{name}: `M` must be an int, not {type(M).__name__}") from None


def _window(name: str, M: Any, f: Callable[[np.ndarray, int], np.ndarray]) -> Any:
    m = _window_len(name, M)
    if m <= 0:
        w = np.zeros((0,), np.float32)
    elif m == 1:
        w = np.ones((1,), np.float32)
    else:
        w = f(np.arange(m, dtype=np.float32), m).astype(np.float32)
    if _ops._is_tracing():
        return lax.constant(w)
    return _creation.asarray(w)


def _f32(v: Any) -> np.float32:
    return np.float32(v)


def _cos_term(n: np.ndarray, m: int, k: int) -> np.ndarray:
    # float32 arithmetic throughout, as JAX computes the window.
    return np.cos(_f32(2 * k * math.pi) * n / _f32(m - 1), dtype=np.float32)


def bartlett(M: int) -> Any:
    """The Bartlett (triangular) window of length ``M`` (float32)."""

    def f(n: np.ndarray, m: int) -> np.ndarray:
        h = _f32((m - 1) / 2)
        return _f32(1) - np.abs(n - h) / h

    return _window("bartlett", M, f)


def blackman(M: int) -> Any:
    """The Blackman window of length ``M`` (float32)."""

    def f(n: np.ndarray, m: int) -> np.ndarray:
        return (
            _f32(0.42)
            - _f32(0.5) * _cos_term(n, m, 1)
            + _f32(0.08) * _cos_term(n, m, 2)
        )

    return _window("blackman", M, f)


def hamming(M: int) -> Any:
    """The Hamming window of length ``M`` (float32)."""
    return _window(
        "hamming", M, lambda n, m: _f32(0.54) - _f32(0.46) * _cos_term(n, m, 1)
    )


def hanning(M: int) -> Any:
    """The Hann window of length ``M`` (float32)."""
    return _window(
        "hanning", M, lambda n, m: _f32(0.5) - _f32(0.5) * _cos_term(n, m, 1)
    )


# ---- nonzero, flatnonzero, argwhere ----


def _nonzero_impl(a: Any, *fills: Any, size: int) -> Any:
    from baton.numpy._selection import _nonzero_sized

    t = _ops.as_tracer(a)
    shape = tuple(t.shape)
    n = int(np.prod(shape, dtype=np.int64))
    m = t if t.dtype == _BOOL else lax.ne(t, lax.full(shape, 0, np.dtype(t.dtype)))
    pos = _nonzero_sized(lax.reshape(m, (n,)), size)
    missing = lax.eq(pos, lax.full((size,), n, _I32))
    out = []
    stride = n
    for k, s in enumerate(shape):
        stride //= s
        # No integer-division primitive: floor_divide's exact composition.
        c = _elementwise.remainder(_elementwise.floor_divide(pos, max(stride, 1)), s)
        f = lax.broadcast_to(_ops.as_tracer(fills[k], _I32), (size,))
        out.append(lax.select(missing, f, c))
    return tuple(out)


def _nonzero(name: str, a: Any, size: Any, fill_value: Any) -> tuple[Any, ...]:
    nd = _c.ndim_of(a)
    if nd == 0:
        raise ValueError(
            f"{name}: not defined for 0-d arrays; use bnp.atleast_1d(a) first"
        )
    if size is None:
        if fill_value is not None:
            raise ValueError(f"{name}: `fill_value` needs `size=`")
        if isinstance(a, Tracer):
            raise ConcretizationTypeError(
                f"{name}: `a` is a traced value inside a jit, but the result's "
                "shape depends on its values; pass a static `size=` (and "
                "optionally `fill_value=`), or call it outside jit"
            )
        h = np.asarray(a) if isinstance(a, Array) else _ops.host_array(a)
        return tuple(_creation.asarray(i.astype(np.int32)) for i in np.nonzero(h))
    try:
        size = operator.index(size)
    except TypeError:
        raise TypeError(
            f"{name}: `size` must be a static int, not {type(size).__name__}"
        ) from None
    if size < 0:
        raise ValueError(f"{name}: `size` must be >= 0, not {size}")
    if fill_value is None:
        fills: tuple[Any, ...] = (0,) * nd
    elif isinstance(fill_value, (tuple, list)):
        if len(fill_value) != nd:
            raise ValueError(
                f"{name}: `fill_value` has {len(fill_value)} entries; a tuple "
                f"needs one per dimension of `a` ({nd})"
            )
        fills = tuple(fill_value)
    else:
        if _c.ndim_of(fill_value) != 0:
            raise ValueError(
                f"{name}: `fill_value` must be a scalar or a tuple of scalars"
            )
        fills = (fill_value,) * nd
    return _ops.apply(_nonzero_impl, (a, *fills), (("size", size),), weak_ref=(0,))


def nonzero(
    a: Any, *, size: int | None = None, fill_value: Any = None
) -> tuple[Any, ...]:
    """The indices of ``a``'s nonzero entries, one int32 array per dimension.
    ``size=`` fixes their length (padded with ``fill_value``, default 0), as
    needed under ``bt.jit``."""
    return _nonzero("nonzero", a, size, fill_value)


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the nonzero entries of ``ravel(a)`` (see ``nonzero``
    for ``size=`` / ``fill_value=``)."""
    return _nonzero("flatnonzero", _shapes.ravel(a), size, fill_value)[0]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of ``a``'s nonzero entries as an (N, a.ndim) int32 array
    (see ``nonzero`` for ``size=`` / ``fill_value=``)."""
    nd = _c.ndim_of(a)
    idx = _nonzero("argwhere", _shapes.atleast_1d(a), size, fill_value)
    out = _shapes.stack(idx, axis=1)
    return out[:, :0] if nd == 0 else out


# ---- isin, piecewise, vectorize ----


def _isin_impl(element: Any, test: Any, *, invert: bool) -> Any:
    e, t = _ops.promote(element, test)
    shape = tuple(e.shape)
    k = int(np.prod(t.shape, dtype=np.int64))
    if k == 0:
        return lax.full(shape, bool(invert), _BOOL)
    e2 = lax.broadcast_in_dim(e, shape + (k,), tuple(range(len(shape))))
    t2 = lax.broadcast_in_dim(lax.reshape(t, (k,)), shape + (k,), (len(shape),))
    hit = lax.eq(e2, t2)
    found = lax.ne(
        lax.sum(lax.astype(hit, _I32), (len(shape),)), lax.full(shape, 0, _I32)
    )
    return lax.bitwise_not(found) if invert else found


def isin(
    element: Any,
    test_elements: Any,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    method: str = "auto",
) -> Any:
    """Whether each entry of ``element`` occurs in ``test_elements`` (bool,
    ``element``'s shape); ``invert=True`` gives the negation."""
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(
            f"isin: `method` must be 'auto', 'compare_all', 'binary_search' or "
            f"'sort', not {method!r}"
        )
    return _ops.apply(_isin_impl, (element, test_elements), (("invert", bool(invert)),))


def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> Any:
    """``funclist[i](x, *args, **kw)`` (or the constant ``funclist[i]``)
    where ``condlist[i]`` holds (the last true condition wins); one extra
    function gives the value where none holds, else 0. Keeps x's dtype."""
    x = _creation.asarray(x)
    d = np.dtype(x.dtype)
    if isinstance(condlist, (Array, Tracer, np.ndarray)) and (
        _c.ndim_of(condlist) == 0 or _c.ndim_of(condlist) == x.ndim
    ):
        condlist = [condlist]
    condlist = list(condlist)
    funclist = list(funclist)
    nc, nf = len(condlist), len(funclist)
    if nf not in (nc, nc + 1):
        raise ValueError(
            f"piecewise: `funclist` has {nf} entries for {nc} conditions; give "
            f"{nc} (one per condition) or {nc + 1} (the last is the otherwise "
            "value)"
        )

    def value(f: Any) -> Any:
        v = f(x, *args, **kw) if callable(f) else f
        return _shapes.broadcast_to(_creation.asarray(v, dtype=d), x.shape)

    conds = [_creation.asarray(c, dtype=bool) for c in condlist]
    if nf == nc + 1:
        out = value(funclist[-1])
    else:
        out = _creation.zeros(x.shape, d)
    for c, f in zip(conds, funclist):
        out = _elementwise.where(c, value(f), out)
    return out


# ---- unwrap ----


def _unwrap_impl(p: Any, *, axis: int, discont: Any, period: float) -> Any:
    t, d = _c.inexact(p)
    t = t[0]
    n = t.shape[axis]
    if n < 2:
        return _c.down(t, d)
    wd = np.dtype(t.dtype)
    x = _shapes.moveaxis(t, axis, -1)
    dd = _cumulative.diff(x, axis=-1)
    half = period / 2
    lo = -half
    ddmod = _elementwise.mod(dd - lo, period) + lo
    # A jump of exactly half a period keeps its sign (numpy's rule).
    ddmod = _elementwise.where((ddmod == lo) & (dd > 0), half, ddmod)
    lim = half if discont is None else max(discont, half)
    corr = _elementwise.where(_elementwise.abs(dd) < lim, 0, ddmod - dd)
    corr = _cumulative.cumsum(corr, axis=-1).astype(wd)
    out = _shapes.concatenate([x[..., :1], x[..., 1:] + corr], axis=-1)
    return _c.down(_shapes.moveaxis(out, -1, axis), d)


def unwrap(
    p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * math.pi
) -> Any:
    """``p`` with jumps larger than ``max(discont, period/2)`` along ``axis``
    replaced by their complement mod ``period`` (floats)."""
    nd = _c.ndim_of(p)
    if nd == 0:
        raise ValueError("unwrap: `p` must have at least one dimension")
    ax = _ops.normalize_axis(axis, nd)
    for nm, v in (("discont", discont), ("period", period)):
        if isinstance(v, (Array, Tracer)):
            raise TypeError(f"unwrap: `{nm}` must be a Python number in baton")
    return _ops.apply(
        _unwrap_impl,
        (p,),
        (
            ("axis", ax),
            ("discont", None if discont is None else float(discont)),
            ("period", float(period)),
        ),
    )


# ---- poly, polydiv ----


def _poly_impl(r: Any) -> Any:
    t, d = _c.inexact(r)
    t = t[0]
    wd = np.dtype(t.dtype)
    if t.shape[0] == 0:
        return lax.full((), 1, d)  # no roots: the constant 1 (0-d, as numpy)
    c = lax.full((1,), 1, wd)
    for i in range(t.shape[0]):
        ri = lax.reshape(lax.slice(t, (i,), (i + 1,)), ())
        k = c.shape[0]
        shifted = lax.mul(lax.broadcast_to(ri, (k + 1,)), lax.pad(c, 0, [1], [0]))
        c = lax.sub(lax.pad(c, 0, [0], [1]), shifted)
    return _c.down(c, d)


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients (highest power first, leading 1) of the polynomial
    whose roots are the 1-D ``seq_of_zeros`` (floats)."""
    nd = _c.ndim_of(seq_of_zeros)
    if nd == 2:
        raise NotImplementedError(
            "poly: a 2-D input (a matrix's characteristic polynomial) needs "
            "complex eigenvalues, which baton does not have; pass the roots"
        )
    if nd != 1:
        raise ValueError(f"poly: `seq_of_zeros` must be 1-D, not {nd}-D")
    return _ops.apply(_poly_impl, (seq_of_zeros,))


def _polydiv_impl(u: Any, v: Any) -> Any:
    (a, b), d = _c.inexact(u, v)
    wd = np.dtype(a.dtype)
    m, n = a.shape[0], b.shape[0]
    lead = lax.reshape(lax.slice(b, (0,), (1,)), ())
    qs = []
    for k in range(max(m - n + 1, 0)):
        q = lax.true_divide(lax.reshape(lax.slice(a, (k,), (k + 1,)), ()), lead)
        qs.append(lax.reshape(q, (1,)))
        a = lax.sub(
            a, lax.mul(lax.broadcast_to(q, (m,)), lax.pad(b, 0, [k], [m - n - k]))
        )
    q = lax.concatenate(qs, 0) if qs else lax.full((1,), 0, wd)
    return _c.down(q, d), _c.down(a, d)


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """The quotient and remainder of polynomial division ``u / v`` (1-D
    coefficients, highest power first; floats). ``trim_leading_zeros`` drops
    the remainder's leading zeros (needs concrete values: not under jit)."""
    for nm, x in (("u", u), ("v", v)):
        if _c.ndim_of(x) != 1:
            raise ValueError(
                f"polydiv: `{nm}` must be 1-D coefficients, not {_c.ndim_of(x)}-D"
            )
    if _ops.shape_of(v)[0] == 0:
        raise ValueError("polydiv: `v` must have at least one coefficient")
    q, r = _ops.apply(_polydiv_impl, (u, v))
    if trim_leading_zeros:
        h = _c.concrete(r, "polydiv", "trim_leading_zeros")
        nz = np.flatnonzero(h)
        r = r[int(nz[0]) :] if nz.size else r[-1:]
    return q, r


# ---- dtype queries ----

_KINDS: dict[str, Callable[[np.dtype], bool]] = {
    "bool": lambda d: d == _BOOL,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: _ops.is_float(d),
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d != _BOOL,
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, one of 'bool', 'signed
    integer', 'unsigned integer', 'integral', 'real floating', 'complex
    floating', 'numeric', or a tuple of these."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"isdtype: `dtype` must be a dtype, not {dtype!r}") from None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            test = _KINDS.get(k)
            if test is None:
                raise ValueError(
                    f"isdtype: unknown kind {k!r}; use one of {sorted(_KINDS)} or a dtype"
                )
            if test(d):
                return True
        else:
            try:
                kd = np.dtype(k)
            except TypeError:
                raise TypeError(
                    f"isdtype: `kind` entries must be dtypes or kind names, not {k!r}"
                ) from None
            if kd == d:
                return True
    return False


# ---- host-side constructors ----


def _from_host(a: np.ndarray, dtype: Any) -> Any:
    d = _dtypes.canonicalize(dtype)
    return _creation.asarray(np.ascontiguousarray(a).astype(d, copy=False))


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An array from an object with ``__dlpack__`` (see ``bt.from_dlpack``)."""
    out = _dlpack.from_dlpack(x)
    if copy:
        out = out.copy()
    if device is not None:
        out = device_put(out, device)
    return out


def frombuffer(
    buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0
) -> Any:
    """A 1-D array of the bytes in ``buffer`` read as ``dtype`` (float:
    float32 with 64-bit types off)."""
    return _from_host(
        np.frombuffer(buffer, dtype=dtype, count=count, offset=offset), dtype
    )


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """A 1-D array of the numbers in text ``string`` separated by ``sep``
    (read on the host)."""
    if not sep:
        raise ValueError(
            "fromstring: `sep` must be a non-empty separator; for binary data "
            "use bnp.frombuffer"
        )
    return _from_host(np.fromstring(string, dtype=dtype, count=count, sep=sep), dtype)


# ---- printing (numpy's print options) ----


def _host(a: Any) -> np.ndarray:
    if isinstance(a, Tracer):
        raise ConcretizationTypeError(
            "printing a traced value inside a jit is not possible; use "
            "bt.debug.print or return it"
        )
    return np.asarray(a) if isinstance(a, Array) else _ops.host_array(a)


def array_repr(
    arr: Any,
    max_line_width: Any = None,
    precision: Any = None,
    suppress_small: Any = None,
) -> str:
    """numpy's repr of ``arr``'s values."""
    return np.array_repr(_host(arr), max_line_width, precision, suppress_small)


def array_str(
    a: Any,
    max_line_width: Any = None,
    precision: Any = None,
    suppress_small: Any = None,
) -> str:
    """numpy's str of ``a``'s values."""
    return np.array_str(_host(a), max_line_width, precision, suppress_small)


def get_printoptions() -> dict[str, Any]:
    """numpy's current print options (baton prints through numpy)."""
    return np.get_printoptions()


def set_printoptions(*args: Any, **kwargs: Any) -> None:
    """Sets numpy's print options (see ``numpy.set_printoptions``)."""
    return np.set_printoptions(*args, **kwargs)


def printoptions(*args: Any, **kwargs: Any) -> Any:
    """A context manager setting numpy's print options for its block."""
    return np.printoptions(*args, **kwargs)
