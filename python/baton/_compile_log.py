"""``bt.log_compiles()``: log each trace-and-compile of a jitted function.

    with bt.log_compiles():
        step(params, state)     # logs "Finished tracing jit(step) for
                                # compilation in 0.004 sec" on a cache miss

As ``jax.log_compiles``: while the context is active (on any thread; the
contexts nest), every call of a ``bt.jit`` function -- eager operations
included -- that misses its cache and so traces and compiles a program
logs one WARNING record on the logger ``"baton.jit"``. A call that reuses
a compiled program logs nothing, so an empty log across a repeated call
shows that nothing recompiled. Under ``baton.as_jax`` the records also
reach the handlers of the logger ``"jax"``, where programs written for JAX
listen (see ``baton.as_jax``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["LOGGER_NAME", "active", "log_compiles", "traced"]

LOGGER_NAME = "baton.jit"
_logger = logging.getLogger(LOGGER_NAME)
_lock = threading.Lock()
_depth = 0


def active() -> bool:
    """Whether a ``log_compiles()`` context is active."""
    return _depth > 0


@contextlib.contextmanager
def log_compiles(enable: bool = True) -> Iterator[None]:
    """Logs every trace-and-compile of a jitted function while active
    (``enable=False``: a context that logs nothing, as in JAX)."""
    global _depth
    if not enable:
        yield
        return
    with _lock:
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1


def traced(name: Any, seconds: float) -> None:
    """Records that jitted function ``name`` was traced (and is now being
    compiled) in ``seconds``."""
    _logger.warning(
        "Finished tracing jit(%s) for compilation in %.3f sec", name, seconds
    )
