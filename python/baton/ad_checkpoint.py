"""``bt.ad_checkpoint``: rematerialization, as ``jax.ad_checkpoint``.

``checkpoint`` (alias ``remat``), ``checkpoint_policies``,
``checkpoint_name(x, name)`` (names a value for
``checkpoint_policies.save_only_these_names``) and
``print_saved_residuals`` / ``saved_residuals``. See ``baton/_checkpoint.py``.
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
