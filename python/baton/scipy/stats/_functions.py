"""How ``bt.scipy.stats``' functions are made: an implementation on
Tracers (parameters promoted to one float dtype, as JAX's
``promote_args_inexact``) run through ``_ops.apply`` -- eagerly one compiled
program per shape and dtype, inlined while tracing, differentiable."""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from baton import _ops

_F32 = np.dtype(np.float32)


def bnp() -> Any:
    """``baton.numpy`` (imported lazily: it sits above this package)."""
    import baton.numpy as _bnp

    return _bnp


def inexact(*xs: Any) -> list[Any]:
    """The operands as Tracers of one float dtype (integers: float32)."""
    d = _ops.result_dtype(*xs)
    if not _ops.is_float(d):
        d = _F32
    return _ops.promote(*xs, to=d)


def public(impl: Callable[..., Any], doc: str) -> Callable[..., Any]:
    """The public function for ``impl``: same parameters and defaults,
    every argument an operand."""
    sig = inspect.signature(impl)

    def fn(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return _ops.apply(impl, tuple(bound.arguments.values()))

    fn.__signature__ = sig  # type: ignore[attr-defined]
    fn.__name__ = fn.__qualname__ = impl.__name__.lstrip("_")
    fn.__doc__ = doc
    return fn


def special() -> Any:
    """``baton.scipy.special``'s implementations, for use on Tracers."""
    from baton.scipy import (
        _special_bessel,
        _special_gamma,
        _special_incomplete,
        _special_math,
        _special_ndtr,
    )

    class _S:
        erf = staticmethod(_special_math._erf_impl)
        gammaln = staticmethod(_special_math._gammaln_impl)
        ndtr = staticmethod(_special_ndtr.ndtr)
        log_ndtr = staticmethod(_special_ndtr.log_ndtr)
        ndtri = staticmethod(_special_ndtr.ndtri)
        betaln = staticmethod(_special_gamma.betaln)
        gammainc = staticmethod(_special_incomplete.igamma)
        gammaincc = staticmethod(_special_incomplete.igammac)
        betainc = staticmethod(_special_incomplete.betainc)
        i0e = staticmethod(_special_bessel.bessel_i0e)

    return _S


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, 0 where ``x == 0`` (on Tracers)."""
    from baton.scipy import special as sp

    return sp._xlogy(x, y)


def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, 0 where ``x == 0`` (on Tracers)."""
    from baton.scipy import special as sp

    return sp._xlog1py(x, y)
