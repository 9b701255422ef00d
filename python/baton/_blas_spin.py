"""How long baton's OpenBLAS threads poll for work after a call (issue 40).

OpenBLAS's worker threads poll for their next job for 2^28 TSC cycles (about
0.1 s) after every threaded call -- a GEMM, a factorization -- before they
sleep. A process that does anything else between its GEMMs (baton's own
kernels on its pool, another library, a data loader) loses a core to that
poll each time. Measured on a 2-vCPU VM with both libraries in one process:
JAX's MLP training step took 24 ms after baton's steps and 12.7 ms with the
poll bounded, and baton's transformer step 41-52 ms against 35-37 ms.

baton bounds the poll to 2^17 cycles (about 50 µs at 2.6 GHz), the window its
own pool polls (``runtime/thread_pool.cc``): a GEMM that follows within it
finds the workers awake; after it they sleep, as the pool's do. No GEMM or
training step measured slower for it.

OpenBLAS reads ``OPENBLAS_THREAD_TIMEOUT`` once, when the library loads, and
has no call to change it later. So the value is put in the environment only
while the extension (which loads baton's OpenBLAS) is imported, and taken out
again: numpy's own OpenBLAS and child processes see the environment as the
user left it. A value the user set is kept.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

ENV_VAR = "OPENBLAS_THREAD_TIMEOUT"
# log2 of the TSC cycles a worker polls; OpenBLAS clamps it to 4..30.
DEFAULT_LOG2_CYCLES = 17

# What the extension was loaded with: (value, who chose it).
_loaded_with: tuple[str, str] = (str(DEFAULT_LOG2_CYCLES), "baton's default")


@contextlib.contextmanager
def bounded_blas_spin() -> Iterator[None]:
    """Within the block, OPENBLAS_THREAD_TIMEOUT is baton's default unless
    the user set it; on exit the environment is as it was."""
    global _loaded_with
    user_value = os.environ.get(ENV_VAR)
    if user_value is not None:
        _loaded_with = (user_value, "the user")
        yield
        return
    os.environ[ENV_VAR] = str(DEFAULT_LOG2_CYCLES)
    try:
        yield
    finally:
        os.environ.pop(ENV_VAR, None)


def effective_log2_cycles(value: str) -> int:
    """The poll OpenBLAS makes of an OPENBLAS_THREAD_TIMEOUT value: a
    positive integer clamped to 4..30, anything else its default, 28."""
    try:
        n = int(value)
    except ValueError:
        n = 0
    return min(max(n, 4), 30) if n > 0 else 28


def describe() -> str:
    """One line for print_environment_info: the poll after a BLAS call."""
    value, chosen_by = _loaded_with
    if chosen_by == "baton's default":
        why = f"baton's default; set {ENV_VAR} before import to change it"
    else:
        why = f"{ENV_VAR}={value}"
    return (
        f"workers poll 2^{effective_log2_cycles(value)} cycles after a call, "
        f"then sleep ({why})"
    )
