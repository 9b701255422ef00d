"""``python -m baton.as_jax``: run a program written for JAX on baton.

    python -m baton.as_jax script.py [args...]
    python -m baton.as_jax -m package.module [args...]
    python -m baton.as_jax -c "import jax; print(jax.numpy.ones(3))" [args...]

Installs the ``jax`` -> ``baton`` import hook (``baton.as_jax.install``),
then runs the program as ``python script.py`` / ``python -m module`` /
``python -c code`` would: as ``__main__``, with ``sys.argv`` what the
program expects (``[script, args...]``, ``[module file, args...]``,
``["-c", args...]``) and the script's folder (or the current one) first on
``sys.path``.
"""

from __future__ import annotations

import os
import runpy
import sys
import types

from baton import as_jax

_USAGE = (
    "usage: python -m baton.as_jax script.py [args...]\n"
    "       python -m baton.as_jax -m module [args...]\n"
    '       python -m baton.as_jax -c "code" [args...]\n'
    "Runs a program written for JAX with baton standing in for jax "
    "(see docs/as_jax.md)."
)


def _run_code(code: str, args: list[str]) -> None:
    sys.argv = ["-c", *args]
    main = types.ModuleType("__main__")
    main.__builtins__ = __builtins__  # type: ignore[attr-defined]
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        exec(compile(code, "<string>", "exec"), main.__dict__)
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    try:
        as_jax.install()
    except RuntimeError as e:
        print(f"baton.as_jax: {e}", file=sys.stderr)
        return 1
    first, rest = argv[0], argv[1:]
    if first == "-m":
        if not rest:
            print("baton.as_jax: -m needs a module name\n" + _USAGE, file=sys.stderr)
            return 2
        sys.argv = [rest[0], *rest[1:]]  # argv[0] becomes the module's file
        if sys.path and sys.path[0] != "":
            sys.path[0] = os.getcwd()
        runpy.run_module(rest[0], run_name="__main__", alter_sys=True)
    elif first == "-c":
        if not rest:
            print("baton.as_jax: -c needs code\n" + _USAGE, file=sys.stderr)
            return 2
        if sys.path and sys.path[0] != "":
            sys.path[0] = ""
        _run_code(rest[0], rest[1:])
    else:
        if not os.path.exists(first):
            print(
                f"baton.as_jax: can't open file {first!r}\n" + _USAGE, file=sys.stderr
            )
            return 2
        sys.argv = [first, *rest]
        sys.path[0] = os.path.dirname(os.path.abspath(first))
        runpy.run_path(first, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
