"""``bt.lax.Precision``: the precision argument of dots and convolutions, with
``jax.lax.Precision``'s members and string forms.

baton computes float32 dots in full float32 on every backend (DESIGN.md
section 6: no TF32 unless asked), so every member gives the same result;
the enum exists so that code passing ``precision=lax.Precision.HIGHEST``
(optax, flax, ...) runs unchanged.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["Precision"]

_ALIASES = {
    "default": "DEFAULT",
    "fastest": "DEFAULT",
    "bfloat16": "DEFAULT",
    "high": "HIGH",
    "bfloat16_3x": "HIGH",
    "tensorfloat32": "HIGH",
    "highest": "HIGHEST",
    "float32": "HIGHEST",
}


class Precision(enum.Enum):
    """Precision of a dot or convolution (``DEFAULT``, ``HIGH``,
    ``HIGHEST``); ``Precision("highest")`` and JAX's other string names
    work too."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: Any) -> Precision:
        if isinstance(value, str) and value.lower() in _ALIASES:
            return cls[_ALIASES[value.lower()]]
        raise ValueError(
            f"Precision: unknown precision {value!r}; use one of "
            f"{sorted(_ALIASES)} or Precision.DEFAULT/HIGH/HIGHEST"
        )

    def __str__(self) -> str:
        return self.name
