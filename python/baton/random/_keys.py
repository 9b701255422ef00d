"""PRNG keys: seeding, ``split``, ``fold_in``, ``bits``, typed keys.

A key is two uint32 words, the key of a Threefry-2x32 cipher
(``_threefry``). Two forms, as in JAX:

- a *raw* key: a uint32 array of shape (2,) (``PRNGKey``, ``split`` of a
  raw key); a batch of keys has shape (..., 2);
- a *typed* key (:class:`PRNGKeyArray`, from ``key`` / ``wrap_key_data``):
  a thin wrapper holding that uint32 data, whose shape leaves out the
  trailing 2. baton has no key dtype; the wrapper is a pytree (its data is
  the leaf), so typed keys pass through ``bt.jit`` and ``bt.vmap``.

Every function accepts both forms and returns the form it was given.
JAX's conventions (its default ``threefry2x32`` with
``jax_threefry_partitionable=True``) are followed so a key gives the same
bits in both libraries:

- seed s -> (s >> 32, s & 0xFFFFFFFF) of the seed as a 64-bit integer with
  64-bit types enabled; without them the seed is first taken modulo 2**32
  (JAX converts it to int32), so the high word is 0;
- ``split(key, shape)``: element i of the result is the pair of output
  words of the cipher on counter (0, i) (row-major i);
- ``fold_in(key, d)``: the output words on counter (0, uint32(d));
- ``bits(key, shape)``: element i is the xor of the two output words on
  counter (0, i); 8-bit results keep the low byte.
"""

from __future__ import annotations

import functools
import operator
import os
import sys
import threading
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import optree

from baton import _ops, tree
from baton._baton import Array, lax
from baton._config import config
from baton.random import _threefry

_U32 = np.dtype(np.uint32)
_U8 = np.dtype(np.uint8)
_I64 = np.dtype(np.int64)
_F64 = np.dtype(np.float64)
_MASK32 = 0xFFFFFFFF
_MAX_DIM = 2**63 - 1


class PRNGKeyArray:
    """A typed PRNG key array (``bt.random.key``): threefry2x32 key data of
    shape ``self.shape + (2,)``, uint32, seen as an array of keys.

    A handle: it shares its data (a baton Array, or a Tracer inside a
    trace) and never copies it. ``key_data`` gives the data back.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Any) -> None:
        self._data = data

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the key array (the data's shape without the final 2)."""
        return tuple(self._data.shape[:-1])

    @property
    def ndim(self) -> int:
        """Number of dimensions of the key array."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of keys."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def dtype(self) -> str:
        """The key type's name, as JAX prints it (baton has no key dtype)."""
        return "key<fry>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a scalar key array")
        return self.shape[0]

    def __getitem__(self, index: Any) -> PRNGKeyArray:
        if not self.shape:
            raise IndexError("a scalar key array cannot be indexed")
        index = index if isinstance(index, tuple) else (index,)
        # The trailing slice keeps the two key words whatever index selects.
        return PRNGKeyArray(self._data[(*index, slice(None))])

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # TypeError, as JAX raises: a typed key is not numbers (without this
        # numpy would make an object array of its keys).
        raise TypeError(
            "a typed PRNG key array (dtype key<fry>) cannot be converted to a "
            "numpy array; use bt.random.key_data(keys) for its uint32 data"
        )

    def __repr__(self) -> str:
        head = f"PRNGKeyArray(shape={self.shape}, dtype=key<fry>) overlaying:"
        return f"{head}\n{self._data!r}"


optree.register_pytree_node(
    PRNGKeyArray,
    lambda k: ((k._data,), None),
    lambda _, children: PRNGKeyArray(children[0]),
    namespace=tree.NAMESPACE,
)


def canonical_shape(shape: Any, name: str) -> tuple[int, ...]:
    """A ``shape=`` argument as a tuple of non-negative ints (an int is a
    1-D shape); TypeError for non-integers, ValueError for negatives."""
    if shape is None:
        raise TypeError(f"{name}: shape must be a tuple of ints, not None")
    dims = (
        shape
        if isinstance(shape, Sequence) and not isinstance(shape, str)
        else (shape,)
    )
    try:
        out = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(
            f"{name}: shape must be a tuple of non-negative ints, got {shape!r}"
        ) from None
    if any(d < 0 for d in out):
        raise ValueError(
            f"{name}: shape {out} has a negative dimension; dimensions must be >= 0"
        )
    if any(d > _MAX_DIM for d in out):
        raise ValueError(
            f"{name}: shape {out} has a dimension larger than 2**63 - 1; "
            "dimensions must fit a 64-bit integer"
        )
    return out


# ---- jax_legacy_prng_key: raw uint32 keys passed to bt.random ----

_LEGACY_MESSAGE = (
    "Legacy uint32 key array passed as key to jax.random function. Please "
    "create keys using jax.random.key(). If use of a raw key array was "
    'intended, set jax_legacy_prng_key="allow".'
)
# The public call in progress on this thread: only the key its caller
# passed is checked (the first one unwrapped), not the raw key data that
# baton's functions pass each other inside (JAX checks at its API
# boundary, then works on typed keys).
_api = threading.local()


def public(fn: Any) -> Any:
    """``fn`` as a public ``bt.random`` function: the boundary at which
    ``legacy_prng_key`` applies (see :func:`_check_legacy`)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if getattr(_api, "active", False):
            return fn(*args, **kwargs)
        _api.active, _api.checked = True, False
        try:
            return fn(*args, **kwargs)
        finally:
            _api.active = False

    return wrapper


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside baton (the user's
    call), counted from the caller of ``warnings.warn``."""
    f = sys._getframe(2)
    level = 2
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR):
        f = f.f_back
        level += 1
    return level


def _check_legacy(typed: bool, name: str) -> None:
    """JAX's ``jax_legacy_prng_key``: a raw uint32 key given to a random
    function warns (UserWarning) under "warn" and raises ValueError under
    "error"; ``wrap_key_data`` (which makes typed keys of raw data) never
    does. Only the first key of a public call is checked."""
    if getattr(_api, "active", False):
        if _api.checked:
            return
        _api.checked = True
    if typed or name == "wrap_key_data":
        return
    mode = config.read("legacy_prng_key")
    if mode == "warn":
        warnings.warn(_LEGACY_MESSAGE, UserWarning, stacklevel=_caller_level())
    elif mode == "error":
        raise ValueError(_LEGACY_MESSAGE)


def _unwrap(key: Any, name: str) -> tuple[Any, bool]:
    """(uint32 key data, whether ``key`` was typed); TypeError for anything
    that is not key data."""
    data, typed = _unwrap_data(key, name)
    _check_legacy(typed, name)
    return data, typed


def _unwrap_data(key: Any, name: str) -> tuple[Any, bool]:
    if isinstance(key, PRNGKeyArray):
        return key._data, True
    if not hasattr(key, "shape") or not hasattr(key, "dtype"):
        if isinstance(key, (list, tuple)):
            key = np.asarray(key)
            if key.dtype != _U32:
                raise TypeError(
                    f"{name}: a key must be uint32 data of shape (..., 2), not a "
                    f"list of {key.dtype}; use bt.random.PRNGKey(seed)"
                )
        else:
            raise TypeError(
                f"{name}: expected a PRNG key (bt.random.PRNGKey or bt.random.key), "
                f"got {type(key).__name__}"
            )
    if np.dtype(key.dtype) != _U32:
        raise TypeError(
            f"{name}: key data must be uint32, got {np.dtype(key.dtype).name}; make "
            "keys with bt.random.PRNGKey(seed) or bt.random.key(seed)"
        )
    if len(key.shape) < 1 or key.shape[-1] != 2:
        raise TypeError(
            f"{name}: key data must have shape (..., 2) (threefry2x32 keys are two "
            f"uint32 words), got shape {tuple(key.shape)}"
        )
    return key, False


def single_key(key: Any, name: str) -> tuple[Any, bool]:
    """Like _unwrap, and the key must be one key (data of shape (2,))."""
    data, typed = _unwrap(key, name)
    if tuple(data.shape) != (2,):
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape "
            f"{tuple(data.shape[:-1]) if typed else tuple(data.shape)} != (); use "
            "bt.vmap to map over keys"
        )
    return data, typed


def _rewrap(data: Any, typed: bool) -> Any:
    return PRNGKeyArray(data) if typed else data


def key_words(data: Any) -> tuple[Any, Any]:
    """The two uint32 words of a single key's data (a Tracer), as scalars."""
    k0 = lax.reshape(lax.slice(data, (0,), (1,)), ())
    k1 = lax.reshape(lax.slice(data, (1,), (2,)), ())
    return k0, k1


# ---- seeds ----


def _x64() -> bool:
    """Whether 64-bit types are enabled (``bt.config`` "enable_x64", DESIGN
    5.4; off while baton has no such option)."""
    try:
        return bool(config.read("enable_x64"))
    except ValueError:
        return False


def _seed_from_int(seed: int) -> np.ndarray:
    if not -(2**63) <= seed < 2**63:
        raise OverflowError(
            f"seed {seed} does not fit in a 64-bit signed integer; PRNG seeds are "
            "64-bit (use seed % 2**64 - 2**63 style reductions before seeding)"
        )
    bits = seed & (2**64 - 1)
    hi = (bits >> 32) if _x64() else 0  # without x64 JAX keeps the low word only
    return np.array([hi, bits & _MASK32], _U32)


def _seed_impl(seed: Any, *, wide: bool) -> Any:
    """Key data from a traced integer seed of any integer dtype."""
    lo = lax.astype(seed, _U32)  # wraps modulo 2**32
    if wide:
        # seed - lo is a multiple of 2**32 below 2**63 in magnitude: exact in
        # float64, so the high word comes out exactly.
        high = lax.sub(seed, lax.astype(lo, _I64))
        hi = lax.astype(
            lax.astype(lax.mul(lax.astype(high, _F64), 2.0**-32), _I64), _U32
        )
    else:
        hi = lax.zeros((), _U32)
    return lax.concatenate([lax.reshape(hi, (1,)), lax.reshape(lo, (1,))], 0)


def _raw_key(seed: Any, name: str) -> Any:
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key")
    if isinstance(seed, (bool, int)) and not isinstance(seed, np.generic):
        return _ops.apply(_identity, (_seed_from_int(int(seed)),))
    if not hasattr(seed, "dtype"):
        raise TypeError(
            f"{name}: a seed must be an integer or an integer array, got "
            f"{type(seed).__name__}"
        )
    if len(seed.shape):
        raise TypeError(
            f"{name} accepts a scalar seed, but was given an array of shape "
            f"{tuple(seed.shape)} != (); use bt.vmap for batching"
        )
    d = np.dtype(seed.dtype)
    if d.kind not in "biu":
        raise TypeError(f"{name}: the seed must be an integer, got dtype {d.name}")
    if isinstance(seed, (np.ndarray, np.generic)):
        value = int(seed)
        if d.itemsize < 8:
            # JAX shifts the seed's own type right by 32: the high word is 0.
            data = np.array([0, value & _MASK32], _U32)
        else:
            # 64-bit: the two words of its two's-complement bits.
            data = _seed_from_int(value - (1 << 64) if value >= 2**63 else value)
        return _ops.apply(_identity, (data,))
    wide = d.itemsize == 8 and _x64()
    return _ops.apply(_seed_impl, (seed,), (("wide", wide),))


def _identity(x: Any) -> Any:
    return lax.as_tracer(x)


def PRNGKey(seed: Any) -> Any:
    """A raw threefry2x32 key (uint32 array of shape (2,)) from an integer
    seed (a Python int, or an integer scalar array); equal to
    ``jax.random.PRNGKey(seed)``."""
    return _raw_key(seed, "PRNGKey")


def key(seed: Any) -> PRNGKeyArray:
    """A typed key (:class:`PRNGKeyArray` of shape ()) from an integer seed;
    ``key_data(key(s))`` equals ``PRNGKey(s)``."""
    return PRNGKeyArray(_raw_key(seed, "key"))


def key_data(keys: Any) -> Any:
    """The uint32 data of a key array (shape ``keys.shape + (2,)``); raw
    keys are returned as they are."""
    data, _ = _unwrap(keys, "key_data")
    return data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None) -> PRNGKeyArray:
    """A typed key array over uint32 data of shape (..., 2); ``impl`` may
    only name baton's generator, 'threefry2x32'."""
    if impl not in (None, "threefry2x32"):
        raise ValueError(
            f"wrap_key_data: baton implements only the 'threefry2x32' generator, "
            f"not {impl!r}"
        )
    data, typed = _unwrap(key_bits_array, "wrap_key_data")
    if typed:
        raise TypeError("wrap_key_data: the argument is already a typed key array")
    if not isinstance(data, (Array, lax.Tracer)):
        data = _ops.apply(_identity, (data,))
    return PRNGKeyArray(data)


_IMPL = "threefry2x32"


def _check_impl(impl: Any, name: str) -> None:
    if impl not in (None, _IMPL):
        raise ValueError(
            f"{name}: unrecognized PRNG implementation {impl!r}; baton implements "
            f"only {_IMPL!r}"
        )


def key_impl(keys: Any) -> str:
    """The name of the generator behind a key array (typed or raw uint32
    data, any batch shape): always ``'threefry2x32'``, baton's only one."""
    _unwrap(keys, "key_impl")
    return _IMPL


def key_dtype(impl_spec: Any = None) -> str:
    """The key "dtype" of a generator (``impl_spec`` None or
    'threefry2x32'): ``'key<fry>'``, what ``PRNGKeyArray.dtype`` gives
    (baton has no key dtype, so this is its name, which compares equal to
    a typed key array's ``dtype``)."""
    _check_impl(impl_spec, "key_dtype")
    return "key<fry>"


# ---- split, fold_in, bits ----


def _split_impl(data: Any, *, shape: tuple[int, ...]) -> Any:
    k0, k1 = key_words(data)
    hi, lo = _threefry.counters(shape)
    y0, y1 = _threefry.threefry2x32(k0, k1, hi, lo)
    return lax.concatenate(
        [lax.reshape(y0, (*shape, 1)), lax.reshape(y1, (*shape, 1))], len(shape)
    )


def split(key: Any, num: Any = 2) -> Any:
    """``num`` new keys from ``key`` (an int, or a shape: the result has
    that shape of keys)."""
    data, typed = single_key(key, "split")
    shape = canonical_shape(num, "split")
    return _rewrap(_ops.apply(_split_impl, (data,), (("shape", shape),)), typed)


def _fold_in_impl(data: Any, value: Any) -> Any:
    k0, k1 = key_words(data)
    y0, y1 = _threefry.threefry2x32(
        k0, k1, lax.zeros((), _U32), lax.astype(value, _U32)
    )
    return lax.concatenate([lax.reshape(y0, (1,)), lax.reshape(y1, (1,))], 0)


def fold_in(key: Any, data: Any) -> Any:
    """A new key that depends on ``key`` and the 32-bit integer ``data``
    (a Python int in [0, 2**32), or an integer scalar: converted to uint32
    with wrap-around, as JAX does)."""
    kd, typed = single_key(key, "fold_in")
    if isinstance(data, (bool, int)) and not isinstance(data, np.generic):
        if not 0 <= data <= _MASK32:
            raise OverflowError(
                f"fold_in: Python integer {data} out of bounds for uint32; pass a "
                "value in [0, 2**32) (or a numpy int32 to wrap negatives)"
            )
        value: Any = np.uint32(data)
    elif isinstance(data, float):
        value = np.float32(data)
    else:
        if np.ndim(data) if not hasattr(data, "shape") else len(data.shape):
            raise TypeError(
                f"fold_in accepts a scalar, but was given an array of shape "
                f"{tuple(np.shape(data))} != (); use bt.vmap for batching"
            )
        value = data
    return _rewrap(_ops.apply(_fold_in_impl, (kd, value)), typed)


def random_bits(data: Any, width: int, shape: tuple[int, ...]) -> Any:
    """JAX's ``random_bits`` of a single key's data (a Tracer): uint32 values
    of which the low ``width`` bits (8, 16 or 32) are random."""
    k0, k1 = key_words(data)
    hi, lo = _threefry.counters(shape)
    y0, y1 = _threefry.threefry2x32(k0, k1, hi, lo)
    b = _threefry.xor(y0, y1)
    if width < 32:
        b = lax.bitwise_and(b, (1 << width) - 1)
    return b


def random_words(data: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """Both output words for counters 0.. over ``shape``: the (high, low)
    halves of JAX's 64-bit random bits."""
    k0, k1 = key_words(data)
    hi, lo = _threefry.counters(shape)
    return _threefry.threefry2x32(k0, k1, hi, lo)


def _bits_impl(data: Any, *, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return lax.astype(random_bits(data, dtype.itemsize * 8, shape), dtype)


def bits(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Uniform random bits as unsigned integers of ``dtype`` (uint32 by
    default; uint8 also; baton has no uint16 or uint64)."""
    data, _ = single_key(key, "bits")
    shape = canonical_shape(shape, "bits")
    d = _U32 if dtype is None else np.dtype(dtype)
    if d.kind != "u":
        raise ValueError(
            f"dtype argument to `bits` must be an unsigned int dtype, got {d}"
        )
    if d not in (_U8, _U32):
        raise TypeError(
            f"bits: baton has no {d.name}; use dtype uint32 (or uint8) and combine "
            "or mask the words"
        )
    return _ops.apply(_bits_impl, (data,), (("shape", shape), ("dtype", d)))
