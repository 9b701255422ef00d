"""baton standing in for JAX: ``import jax`` gives baton.

    import baton.as_jax
    baton.as_jax.install()
    import jax, jax.numpy as jnp        # baton, baton.numpy
    import optax                        # a library written for JAX, on baton

or, without changing the program: ``python -m baton.as_jax script.py
[args]`` / ``python -m baton.as_jax -m module [args]`` /
``python -m baton.as_jax -c "code" [args]``.

:func:`install` puts an import hook first on ``sys.meta_path`` that
resolves ``jax`` to ``baton`` and every ``jax.X`` to ``baton.X`` (the same
module objects: ``jax.numpy is baton.numpy``). A ``jax.X`` that baton
lacks raises ModuleNotFoundError naming it. ``install`` refuses
(RuntimeError) when the real JAX is already imported: two array libraries
under one name would mix silently. See docs/as_jax.md.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import logging
import sys
import types
from typing import Any

__all__ = ["install", "installed", "uninstall"]

_PREFIX = "jax"
_TARGET = "baton"


def _is_jax_name(name: str) -> bool:
    return name == _PREFIX or name.startswith(_PREFIX + ".")


def _target_of(name: str) -> str:
    return _TARGET + name[len(_PREFIX) :]


class _Alias(importlib.abc.Loader):
    """Loads ``jax.X`` as the already imported module ``baton.X``."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        # importlib set module.__spec__ to the jax.X spec; baton.X keeps its own.
        if self.spec is not None:
            try:
                module.__spec__ = self.spec
            except AttributeError:
                pass


class _Finder(importlib.abc.MetaPathFinder):
    """``jax`` -> ``baton``, ``jax.X`` -> ``baton.X``."""

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not _is_jax_name(fullname):
            return None
        module = _import_target(fullname)
        return importlib.machinery.ModuleSpec(
            fullname,
            _Alias(module),
            is_package=hasattr(module, "__path__"),
        )


def _missing(fullname: str, target: str) -> ModuleNotFoundError:
    return ModuleNotFoundError(
        f"No module named {fullname!r}: baton does not provide {fullname} "
        f"(baton.as_jax stands baton in for JAX, mapping {fullname} to "
        f"{target}, which does not exist; see docs/as_jax.md for what is missing)",
        name=fullname,
    )


def _import_target(fullname: str) -> types.ModuleType:
    target = _target_of(fullname)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        # Only a missing baton.X (or a parent of it) means "baton lacks it";
        # any other missing module is a real error inside baton.
        if e.name is None or not (target == e.name or target.startswith(e.name + ".")):
            raise
        parent, _, last = target.rpartition(".")
        obj = getattr(sys.modules.get(parent), last, None)
        if isinstance(obj, types.ModuleType):  # a module held as an attribute
            return obj
        raise _missing(fullname, target) from None


_FINDER = _Finder()


class _ToJaxLogger(logging.Handler):
    """Hands baton's ``"baton.jit"`` records (``bt.log_compiles()``) to the
    handlers of the logger ``"jax"`` too, where programs written for JAX
    attach theirs (``logging.getLogger("jax").addHandler(...)``). Only the
    ``"jax"`` logger's own handlers: the record already propagates from
    ``"baton.jit"`` to the root logger, so it is not shown twice."""

    def emit(self, record: logging.LogRecord) -> None:
        jax_logger = logging.getLogger(_PREFIX)
        if not jax_logger.isEnabledFor(record.levelno):
            return
        for handler in jax_logger.handlers:
            if record.levelno >= handler.level:
                handler.handle(record)


_TO_JAX = _ToJaxLogger()


def _compile_logger() -> logging.Logger:
    from baton import _compile_log

    return logging.getLogger(_compile_log.LOGGER_NAME)


def _real_jax_loaded() -> str | None:
    """The name of a module of the real JAX already imported, if any."""
    baton = sys.modules.get(_TARGET)
    for name, mod in list(sys.modules.items()):
        if not _is_jax_name(name) or mod is None:
            continue
        mod_name = getattr(mod, "__name__", "")
        if mod is baton or mod_name == _TARGET or mod_name.startswith(_TARGET + "."):
            continue
        return name
    return None


def installed() -> bool:
    """Whether the hook is in place (``import jax`` gives baton)."""
    return _FINDER in sys.meta_path


def install() -> None:
    """Makes ``import jax`` and ``import jax.X`` give ``baton`` and
    ``baton.X`` from now on in this process. Idempotent.

    Raises RuntimeError if the real JAX is already imported (a module named
    ``jax`` or ``jax.*`` that is not baton's): import baton.as_jax and call
    this before anything imports jax, or run the program with
    ``python -m baton.as_jax``.
    """
    real = _real_jax_loaded()
    if real is not None:
        raise RuntimeError(
            f"baton.as_jax.install(): the real JAX is already imported "
            f"({real!r} is in sys.modules, from "
            f"{getattr(sys.modules[real], '__file__', None) or 'an unknown file'}); "
            "baton cannot stand in for it in this process. Install the hook "
            "before anything imports jax, e.g. run the program with "
            "`python -m baton.as_jax script.py`"
        )
    if installed():
        return
    importlib.import_module(_TARGET)
    sys.meta_path.insert(0, _FINDER)
    logger = _compile_logger()
    if _TO_JAX not in logger.handlers:
        logger.addHandler(_TO_JAX)


def uninstall() -> None:
    """Removes the hook and forgets the ``jax`` / ``jax.*`` names it made
    (the baton modules themselves stay imported)."""
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    _compile_logger().removeHandler(_TO_JAX)
    for name in [n for n in sys.modules if _is_jax_name(n)]:
        mod = sys.modules[name]
        if getattr(mod, "__name__", "").split(".")[0] == _TARGET:
            del sys.modules[name]
