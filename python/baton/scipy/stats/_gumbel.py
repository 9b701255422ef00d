"""The Gumbel distributions' shared pieces (``gumbel_r`` and ``gumbel_l``
are mirror images)."""

from __future__ import annotations

import math
from typing import Any

from baton.scipy.stats._functions import bnp


def log1mexp(x: Any) -> Any:
    """``log(1 - exp(-x))`` for ``x > 0``, accurate at both ends."""
    n = bnp()
    return n.where(x < math.log(2.0), n.log(-n.expm1(-x)), n.log1p(-n.exp(-x)))
