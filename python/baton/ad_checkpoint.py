"""``bt.ad_checkpoint``: rematerialization, as ``jax.ad_checkpoint``.

``checkpoint`` (alias ``remat``), ``checkpoint_policies``,
``checkpoint_name(x, name)`` (names a value for
``checkpoint_policies.save_only_these_names`` /
``save_any_names_but_these``) and ``print_saved_residuals`` (JAX's format:
``f32[3] from the argument x``, ``f32[3] output of sin from f.py:2:8 (f)``)
/ ``saved_residuals``. See ``baton/_checkpoint.py``.
"""

from baton._checkpoint import (
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    print_saved_residuals,
    remat,
    saved_residuals,
)

__all__ = [
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "print_saved_residuals",
    "remat",
    "saved_residuals",
]
