"""What every case gets: the run's mode, sizes, repetitions and libraries.

JAX is a benchmark-only dependency: when it cannot be imported (or
``--no-jax`` is given) ``ctx.jax`` is None and every JAX column reads "n/a";
baton and the native baselines still run and are still checked.

With ``run.py --platform cuda|sim`` each library runs in a process of its own
(``_platform.py``): there ``ctx.platform`` names the accelerator, and in JAX's
process ``ctx.with_baton`` is False (a case ported to that mode runs only the
libraries it is given and returns rows with the other's column empty).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any


def load_jax(disabled: bool) -> tuple[Any, Any, str | None]:
    """(jax, jax.numpy, None) or (None, None, why JAX is not used)."""
    if disabled:
        return None, None, "disabled by --no-jax"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # no accelerator probing
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        return None, None, f"not importable ({e})"
    return jax, jnp, None


@dataclass
class Context:
    """Options of this run, shared by every case (single-threaded use)."""

    smoke: bool
    repeat: int | None  # --repeat: overrides every case's repetition count
    jax: Any = None  # the jax module, or None
    jnp: Any = None  # jax.numpy, or None
    shared: dict[str, Any] = field(default_factory=dict)  # baselines reused
    platform: str = "cpu"  # --platform: where baton (and JAX, if it can) runs
    with_baton: bool = True  # False in JAX's process of a --platform run
    tag: str = "bench"  # the progress lines' prefix ("bench baton" in a child)

    def reps(self, full: int, smoke: int) -> int:
        """How many timed repetitions: --repeat if given, else per mode."""
        if self.repeat is not None:
            return self.repeat
        return smoke if self.smoke else full

    def pick(self, full: Any, smoke: Any) -> Any:
        """A size (or any setting) for the current mode."""
        return smoke if self.smoke else full

    def progress(self, message: str) -> None:
        """A progress line on stderr (stdout carries only the table)."""
        print(f"[{self.tag}] {message}", file=sys.stderr, flush=True)
