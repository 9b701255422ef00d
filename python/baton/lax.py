"""``bt.lax``: the operations traced functions are built from.

These are thin bindings of baton's C++ tracer (``baton/compiler/tracer.h``),
for code that runs inside ``bt.jit`` (``baton.numpy`` is built on them).
Every function takes ``Tracer`` values, baton Arrays (captured as hidden
arguments of the program, never copied into it), numpy data (a constant:
snapshotted when captured, stored once however often it is used) or Python
scalars (weakly typed: ``x * 2`` keeps x's dtype, bfloat16 included).
Operands broadcast as in numpy and promote with numpy/JAX rules; shape and
dtype errors raise ``ValueError`` (wrong argument types ``TypeError``) at
trace time, naming the op. Outside a trace every function runs now,
compiled by ``bt.jit`` (``baton/_eager_lax.py``), as in JAX.

Elementwise: ``add sub mul div rem mod pow atan2 maximum minimum
bitwise_and bitwise_or bitwise_xor bitwise_not shift_left
shift_right_arithmetic shift_right_logical eq ne lt le gt ge compare select
where neg abs sign exp expm1 log log1p tanh logistic sqrt rsqrt sin cos tan
atan floor ceil round`` (``round`` takes JAX's ``rounding_method``, halves
away from zero by default, as ``jax.lax.round``; the bitwise ops and shifts
raise ``TypeError`` for float operands, shifts also for bool);
conversion: ``convert_element_type`` (``astype``), ``to_memory_kind``;
shapes: ``reshape transpose broadcast_to broadcast_in_dim slice
dynamic_slice dynamic_update_slice concatenate pad`` (``pad`` also takes
JAX's ``padding_config``); indexing: ``take`` (``gather``: numpy's take
along ``axis``, or with ``GatherDimensionNumbers`` JAX's gather,
baton/_lax_gather.py), ``scatter`` (modes set, add, mul, min,
max; or with ``ScatterDimensionNumbers`` JAX's scatter); sorting: ``sort
argsort`` (``sort`` also takes JAX's sequences of operands and
``num_keys``); Fourier transforms: ``fft`` (``FftType``); reductions:
``sum prod max min`` (``axes``, ``keepdims``); contractions: ``matmul
dot_general``; control flow: ``fori_loop while_loop scan cond switch map``
(baton/_control_flow.py); creation: ``iota full zeros ones constant``; capture:
``capture as_tracer is_tracing``.
"""

from baton._baton import lax as _lax

__all__ = sorted(name for name in dir(_lax) if not name.startswith("_"))
globals().update({name: getattr(_lax, name) for name in __all__})

# Transformations' markers (baton/_checkpoint.py), as in jax.lax.
from baton._checkpoint import stop_gradient  # noqa: E402, F401

# Control flow (baton/_control_flow.py), as in jax.lax.
from baton._control_flow import (  # noqa: E402, F401
    cond,
    fori_loop,
    map,
    scan,
    switch,
    while_loop,
)

__all__ = sorted(
    [
        *__all__,
        "stop_gradient",
        "cond",
        "fori_loop",
        "map",
        "scan",
        "switch",
        "while_loop",
    ]
)

# Outside a trace each function runs now, compiled (baton/_eager_lax.py).
from baton import _eager_lax  # noqa: E402

globals().update({name: _eager_lax.eager(name, globals()[name]) for name in __all__})
_trace_device = _lax._trace_device

# Compositions with jax.lax's names: math, reductions and cumulative ops
# (baton/_lax_math.py), slicing and shapes (_lax_slicing.py), XLA-style
# scatters (_lax_scatter.py), JAX's general gather and scatter
# (_lax_gather.py), convolutions (_lax_conv.py), windowed
# reductions (_lax_window.py), fft and FftType (_lax_fft.py), the rest of
# jax.lax's names (_lax_more.py).
# Functions taking Python callables (TAKES_FUNCTIONS) are traced afresh on
# each eager call, as control flow is: their closures may change.
from baton import (  # noqa: E402
    _lax_conv,
    _lax_fft,
    _lax_gather,
    _lax_math,
    _lax_more,
    _lax_scatter,
    _lax_slicing,
    _lax_window,
)

for _m in (
    _lax_math,
    _lax_slicing,
    _lax_scatter,
    _lax_gather,
    _lax_conv,
    _lax_window,
    _lax_fft,
    _lax_more,
):
    _plain = getattr(_m, "NOT_OPERATIONS", frozenset())
    _callables = getattr(_m, "TAKES_FUNCTIONS", frozenset())
    _overrides = getattr(_m, "OVERRIDES", frozenset())
    for _name in _m.__all__:
        if _name not in globals() or _name in _overrides:
            _fn = getattr(_m, _name)
            if _name in _plain:
                globals()[_name] = _fn
            elif _name in _callables:
                globals()[_name] = _eager_lax._control_flow(_fn, f"lax.{_name}")
            else:
                globals()[_name] = _eager_lax.eager(_name, _fn)
    __all__ = sorted({*__all__, *_m.__all__})
del _m, _plain, _callables, _overrides, _name, _fn

from baton._lax_precision import Precision  # noqa: E402, F401

__all__ = sorted({*__all__, "Precision"})

# Collectives inside bt.shard_map (baton/_collectives.py), as in jax.lax.
from baton import _collectives  # noqa: E402
from baton._sharding_api import with_sharding_constraint  # noqa: E402, F401

globals().update({name: getattr(_collectives, name) for name in _collectives.__all__})
__all__ = sorted([*__all__, *_collectives.__all__, "with_sharding_constraint"])

Tracer = _lax.Tracer
try:
    Tracer.__module__ = "baton.lax"
except (AttributeError, TypeError):
    pass

# bt.lax.linalg (baton/lax_linalg.py): LAPACK decompositions, as jax.lax.linalg.
from baton import lax_linalg as linalg  # noqa: E402, F401

# Special functions (baton/scipy/_lax_special.py), as jax.lax's: bessel_i0e,
# bessel_i1e, betainc, igamma, igammac, igamma_grad_a, random_gamma_grad,
# polygamma, zeta (lgamma and digamma are above).
from baton.scipy import _lax_special  # noqa: E402

globals().update({name: getattr(_lax_special, name) for name in _lax_special.__all__})
__all__ = sorted({*__all__, *_lax_special.__all__})
