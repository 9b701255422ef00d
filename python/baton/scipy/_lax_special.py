"""``bt.lax``'s special functions, as ``jax.lax``'s: ``bessel_i0e``,
``bessel_i1e``, ``betainc``, ``igamma``, ``igammac``, ``igamma_grad_a``,
``random_gamma_grad``, ``polygamma``, ``zeta``. Implemented in
``_special_incomplete.py`` and ``_special_bessel.py`` (XLA's algorithms);
``baton/lax.py`` exports them. Operands are promoted to one float dtype
and broadcast (jax.lax requires them equal already)."""

from __future__ import annotations

from typing import Any

from baton import _ops
from baton.scipy import _special_bessel, _special_incomplete

__all__ = [
    "bessel_i0e",
    "bessel_i1e",
    "betainc",
    "igamma",
    "igamma_grad_a",
    "igammac",
    "polygamma",
    "random_gamma_grad",
    "zeta",
]


def bessel_i0e(x: Any) -> Any:
    """``exp(-|x|) I0(x)``, the scaled modified Bessel function of order 0."""
    return _ops.apply(_special_bessel.bessel_i0e, (x,))


def bessel_i1e(x: Any) -> Any:
    """``exp(-|x|) I1(x)``, the scaled modified Bessel function of order 1."""
    return _ops.apply(_special_bessel.bessel_i1e, (x,))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function ``I_x(a, b)``
    (differentiable in ``x`` only; NaN derivative in ``a``, ``b``)."""
    return _ops.apply(_special_incomplete.betainc, (a, b, x))


def igamma(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    return _ops.apply(_special_incomplete.igamma, (a, x))


def igammac(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function ``Q(a, x)``."""
    return _ops.apply(_special_incomplete.igammac, (a, x))


def igamma_grad_a(a: Any, x: Any) -> Any:
    """``d P(a, x) / d a``."""
    return _ops.apply(_special_incomplete.igamma_grad_a, (a, x))


def random_gamma_grad(a: Any, x: Any) -> Any:
    """The derivative in ``a`` of a Gamma(a, 1) sample ``x`` (implicit
    reparameterization: ``-(dP/da) / (dP/dx)``)."""
    return _ops.apply(_special_incomplete.random_gamma_grad, (a, x))


def polygamma(m: Any, x: Any) -> Any:
    """``psi^(m)(x)`` for float ``m`` (NaN unless a non-negative
    integer); differentiable in ``x``."""
    return _ops.apply(_special_bessel.polygamma, (m, x))


def zeta(x: Any, q: Any) -> Any:
    """The Hurwitz zeta function ``sum_n (n + q)^-x``."""
    return _ops.apply(_special_bessel.zeta, (x, q))
