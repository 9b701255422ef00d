"""bt.debug: printing values and calling Python from inside compiled code.

    import baton as bt

    @bt.jit
    def step(x):
        y = bt.numpy.sin(x)
        bt.debug.print("x = {x}, y = {y}", x=x, y=y)
        return y * 2

    step(bt.numpy.arange(3.0))      # prints "x = [0. 1. 2.], y = [0. ...]"

A plain ``print`` inside ``bt.jit`` shows tracers once, when the function is
traced; ``bt.debug.print`` becomes part of the program and prints the values
every time it runs. As ``jax.debug``:

- ``print(fmt, *args, **kwargs)`` formats with ``str.format`` (not an
  f-string: the values do not exist yet when the call is traced) and writes
  the line to ``sys.stdout``. The format is checked when the
  call is made: an unused argument is a ``ValueError`` (with
  ``skip_format_check=True``, a format without placeholders prints the
  arguments after it, separated by spaces). numpy's print options in force at
  that call apply.
- ``breakpoint()`` stops the program where it stands and opens an
  interactive Python console on ``sys.stdin`` whose variables are the
  calling function's locals, array values included; end the console
  (Ctrl-D, end of input) to continue. Only the calling frame is shown
  (``num_frames`` and ``filter_frames`` are accepted for compatibility).
- ``callback(fn, *args, **kwargs)`` calls ``fn(*args, **kwargs)`` with the
  same pytree structure, array leaves replaced by their values; leaves that
  are not arrays (strings, ``None``, other objects) are passed as they are.
- Outside any trace both run at once. Inside ``bt.jit``, ``lax`` control
  flow and the transformations they run each time the compiled program does:
  under ``grad``/``jvp``/``vjp`` with the primal values (once: never in the
  backward pass, except inside ``bt.checkpoint``, whose body is recomputed),
  under ``vmap`` once per example, in example order, inside ``while_loop``,
  ``scan`` and ``cond`` on every iteration or branch taken.

baton's contract differs from JAX's in two deliberate ways:

- **Always in program order.** Callbacks of one program run in the order the
  program was written, whatever ``ordered`` says, and programs on one device
  run in the order they were called; ``ordered`` and ``partitioned`` are
  accepted for compatibility.
- **The function receives numpy arrays** (copies, which it may keep), where
  JAX passes ``jax.Array`` values. It may call back into baton -- call a
  jitted function, ``bt.grad``, ``bt.device_put``, read results with
  ``np.asarray`` -- and gets the values, as in JAX: work it launches runs at
  once on the callback's thread, inside the running program. What can only
  run after that program -- a computation launched later on the same device,
  ``bt.effects_barrier()`` -- would wait for itself, and raises
  ``RuntimeError`` instead.

An exception raised by the function fails the execution that called it: its
outputs raise ``RuntimeError`` naming the exception when they are read, and
the traceback is printed to stderr when it happens. A compiled call returns
before its program has run; ``bt.effects_barrier()`` waits until every
callback enqueued so far has run (``block_until_ready`` on an output waits
for that program's).
"""

from __future__ import annotations

import code
import string
import sys
from typing import Any, Callable

import numpy as np

from baton import _baton, tree
from baton._subtrace import Tracer, fun_name, is_python_scalar, is_tracing

__all__ = ["breakpoint", "callback", "print"]


def _is_dynamic(leaf: Any) -> bool:
    """Whether a leaf is an array value (passed through the program)."""
    return isinstance(
        leaf, (Tracer, _baton.Array, np.ndarray, np.generic)
    ) or is_python_scalar(leaf)


def _as_numpy(leaf: Any) -> np.ndarray:
    return np.array(leaf)  # a copy: the callee may keep it


def _run(fn: Callable[..., Any], args: tuple, kwargs: dict, name: str) -> None:
    leaves, treedef = tree.flatten((args, kwargs))
    is_dynamic = [_is_dynamic(leaf) for leaf in leaves]
    dynamic = [i for i, d in enumerate(is_dynamic) if d]
    operands = [leaves[i] for i in dynamic]
    # The closure keeps only the static leaves: the compiled program holds
    # it, and a traced value kept there would keep its trace alive.
    static = {i: leaf for i, leaf in enumerate(leaves) if not is_dynamic[i]}
    n = len(leaves)
    del leaves

    def flat(*values: np.ndarray) -> None:
        full = [None] * n
        for i, v in static.items():
            full[i] = v
        for i, v in zip(dynamic, values):
            full[i] = v
        a, k = tree.unflatten(treedef, full)
        fn(*a, **k)

    if not is_tracing():
        flat(*[_as_numpy(v) for v in operands])
        return
    _baton.lax._host_callback(flat, operands, name)


def callback(
    callback: Callable[..., Any],
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    **kwargs: Any,
) -> None:
    """Calls ``callback(*args, **kwargs)`` on the host with the values of
    ``args`` and ``kwargs`` (pytrees), each time the program runs.

    Array leaves (baton arrays, tracers, numpy data, Python numbers) arrive as
    numpy arrays; other leaves as they are. Returns None; the callback's
    return value is ignored. See the module docstring for when it runs, in
    what order, and what it must not do.

        bt.jit(lambda x: bt.debug.callback(log.append, x) or x + 1)
    """
    del ordered, partitioned  # always in program order; one device
    if not callable(callback):
        raise TypeError(
            f"debug.callback: callback must be callable, got {type(callback).__name__}"
        )
    _run(callback, args, kwargs, f"debug.callback({fun_name(callback)})")


class _FormatChecker(string.Formatter):
    """Formats nothing; fails on arguments the format does not use."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: Any, args: Any, kwargs: Any) -> None:
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(
                f"debug.print: unused positional arguments: {unused!r}; add a "
                "{} placeholder for each, or drop them"
            )
        if unused_kw:
            raise ValueError(
                f"debug.print: unused keyword arguments: {unused_kw}; a "
                'f-string (f"{x}") is formatted before the values exist -- '
                'write bt.debug.print("{x}", x=x) instead'
            )


_CHECKER = _FormatChecker()


def _has_placeholders(fmt: str) -> bool:
    return any(field is not None for _, field, _, _ in string.Formatter().parse(fmt))


def print(
    fmt: str | None = None,
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    skip_format_check: bool = False,
    **kwargs: Any,
) -> Callable[..., None] | None:
    """Prints ``fmt.format(*args, **kwargs)`` with the values of the
    arguments, each time the program runs (as ``jax.debug.print``).

        bt.debug.print("step {i}: loss {loss:.4f}", i=i, loss=loss)

    With ``skip_format_check=True`` and no placeholders in ``fmt``, the
    arguments follow it, separated by spaces. Called with options only
    (``bt.debug.print(ordered=True)``), it returns the printing function, as
    JAX's two-call form. Raises
    ``ValueError`` at the call for an argument the format does not use, and
    ``TypeError`` for a format that is not a string.
    """
    del ordered, partitioned  # always in program order; one device

    def _print(fmt: str, *args: Any, **kwargs: Any) -> None:
        if not isinstance(fmt, str):
            raise TypeError(
                f"debug.print: the format must be a str, got {type(fmt).__name__}"
            )
        placeholders = _has_placeholders(fmt)
        if not skip_format_check:
            _CHECKER.format(fmt, *args, **kwargs)
        if not placeholders and kwargs:
            raise ValueError(
                "debug.print: keyword arguments need {name} placeholders in the "
                f"format, which has none: {sorted(kwargs)}"
            )
        options = np.get_printoptions()

        def emit(*a: Any, **k: Any) -> None:
            with np.printoptions(**options):
                if placeholders:
                    line = fmt.format(*a, **k)
                else:
                    line = " ".join((fmt, *(str(v) for v in a)))
            sys.stdout.write(line + "\n")

        _run(emit, args, kwargs, "debug.print")

    if fmt is not None:
        _print(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(
            "debug.print: the two-call form takes options only in its first "
            f"call (ordered=, partitioned=), got args={args!r} kwargs={kwargs!r}"
        )
    return _print


def breakpoint(
    *,
    backend: Any = None,
    filter_frames: bool = True,
    num_frames: int | None = None,
    ordered: bool = False,
    token: Any = None,
    **kwargs: Any,
) -> Any:
    """Stops the program here each time it runs and opens an interactive
    console over the calling function's local variables, arrays as their
    values (numpy arrays); end it (Ctrl-D, or end of input) to go on.

        def f(x):
            y = bnp.sin(x)
            bt.debug.breakpoint()     # >>> y  shows y's value
            return y * 2

    The console reads ``sys.stdin``; the program waits on its device queue
    meanwhile. Returns ``token`` (JAX's ordering token; baton always keeps
    program order).
    """
    del backend, filter_frames, num_frames, ordered, kwargs
    frame = sys._getframe(1)
    where = f"{frame.f_code.co_name} at {frame.f_code.co_filename}:{frame.f_lineno}"
    names = sorted(k for k in frame.f_locals if not k.startswith("__"))
    local_values = {k: frame.f_locals[k] for k in names}
    del frame

    def console(values: dict) -> None:
        banner = (
            f"bt.debug.breakpoint in {where}\n"
            f"locals: {', '.join(names) or '(none)'}; "
            "end of input (Ctrl-D) continues"
        )
        code.interact(banner=banner, local=dict(values), exitmsg="")

    _run(console, (local_values,), {}, "debug.breakpoint")
    return token
