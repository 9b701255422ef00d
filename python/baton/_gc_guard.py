"""``bt.array_garbage_collection_guard``: what happens when an Array is freed
by Python's cycle collector instead of by its last reference going.

baton frees an array's memory the moment its last reference goes
(deterministic release). An array that sits in a reference cycle (a list
that holds itself, an exception's traceback that holds the frame that holds
the array, an object whose method is stored on itself) is freed only when
the cycle collector runs, which may be much later: until then its memory is
in use though nothing can reach it. This guard finds those arrays, as JAX's
does:

- ``"allow"`` (the default): nothing is checked.
- ``"log"``: after each collection that freed arrays still holding memory,
  an ERROR on the logger ``"baton"`` lists them (``float32[1024] on cpu:0,
  4096 bytes``) and says to break the cycle.
- ``"fatal"``: the same message, then the process aborts (so a test suite
  cannot miss it).

    with bt.array_garbage_collection_guard("log"):
        run()          # logs each array the collector had to free
    bt.config.update("jax_array_garbage_collection_guard", "fatal")

While the guard is "log" or "fatal", a ``gc.callbacks`` hook brackets each
collection; the Array type's deallocator (python/src/gc_guard.cc) notes the
arrays freed inside one on the collecting thread. "allow" removes the hook;
the deallocator's check then costs one thread-local load.
"""

from __future__ import annotations

import gc
import logging
import os
from typing import Any

from baton import _baton
from baton._config import config

_logger = logging.getLogger("baton")


def _on_collection(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _baton._gc_collection_begin()
        return
    freed = _baton._gc_collection_end()
    if not freed:
        return
    mode = config.read("array_garbage_collection_guard")
    _logger.error(
        "%d baton Array(s) were freed by Python's garbage collector (generation "
        "%s) instead of when their last reference went: their memory stayed in "
        "use until the collector ran. Break the reference cycle that holds "
        "them (bt.array_garbage_collection_guard):\n  %s",
        len(freed),
        info.get("generation"),
        "\n  ".join(freed),
    )
    if mode == "fatal":
        for h in logging.getLogger().handlers + _logger.handlers:
            h.flush()
        os.abort()


def _on_config(name: str, value: Any) -> None:
    if name != "array_garbage_collection_guard":
        return
    installed = _on_collection in gc.callbacks
    if value == "allow" and installed:
        gc.callbacks.remove(_on_collection)
    elif value != "allow" and not installed:
        gc.callbacks.append(_on_collection)


config.add_listener(_on_config)
_on_config(
    "array_garbage_collection_guard", config.read("array_garbage_collection_guard")
)
