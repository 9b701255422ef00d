"""The environment baton's OpenBLAS is loaded with (issue 40).

OpenBLAS reads its settings from the environment once, when the library
loads, and has no call to change them later. So ``import baton`` puts baton's
choices in the environment only while the extension (which loads baton's
OpenBLAS) is imported, and takes them out again: numpy's own OpenBLAS and
child processes see the environment as the user left it. A variable the user
set is kept as it is. ``bt.print_environment_info()`` shows each value and
who chose it.

``OPENBLAS_THREAD_TIMEOUT=17``: OpenBLAS's worker threads poll for their next
job for 2^28 TSC cycles (about 0.1 s) after every threaded call -- a GEMM, a
factorization -- before they sleep. A process that does anything else
between its GEMMs (baton's own kernels on its pool, another library, a data
loader) loses a core to that poll each time. Measured on a 2-vCPU VM with
both libraries in one process: JAX's MLP training step took 24 ms after
baton's steps and 12.7 ms with the poll bounded, and baton's transformer step
41-52 ms against 35-37 ms. 2^17 cycles is about 50 µs at 2.6 GHz, the window
baton's own pool polls (``runtime/thread_pool.cc``): a GEMM that follows
within it finds the workers awake; after it they sleep, as the pool's do.

``OPENBLAS_CORETYPE=Haswell`` on AMD family 25 CPUs with AVX-512 (Zen 4):
OpenBLAS gives them its SkylakeX kernels, written for Intel's 512-bit FMA
units; Zen 4 runs AVX-512 as two 256-bit halves. Measured on a 2-vCPU Zen 4
VM, both kernels loaded in one process and timed in turns (float32, 2
threads): Haswell's were 5-19% faster from 512² up and on the MLP step's
shapes (128x1024x1024: 204 against 194 GFLOP/s; x @ w.T at 128x1024x1024:
202 against 169), equal at 128²-256², and slower only at 16²-64², where a
product takes well under a microsecond either way. Other CPUs keep
OpenBLAS's own choice: nothing else was measured.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

TIMEOUT_VAR = "OPENBLAS_THREAD_TIMEOUT"
CORETYPE_VAR = "OPENBLAS_CORETYPE"
# log2 of the TSC cycles a worker polls; OpenBLAS clamps it to 4..30.
DEFAULT_LOG2_CYCLES = 17
BATONS_CHOICE = "baton's choice"

# What the extension was loaded with: variable -> (value, who chose it).
loaded_with: dict[str, tuple[str, str]] = {}


def cpu_fields() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo ("vendor_id", "cpu
    family", "model", "model name", "flags"); empty where there is none."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the end of the first processor's block
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


def coretype_for(cpu: dict[str, str]) -> str | None:
    """The OPENBLAS_CORETYPE baton chooses for a CPU (cpu_fields()), or None
    to keep OpenBLAS's own choice."""
    zen4 = (
        cpu.get("vendor_id") == "AuthenticAMD"
        and cpu.get("cpu family") == "25"
        and "avx512f" in cpu.get("flags", "").split()
    )
    return "Haswell" if zen4 else None


def batons_choices(cpu: dict[str, str]) -> dict[str, str]:
    """The variables baton loads its OpenBLAS with on a CPU, unless set."""
    choices = {TIMEOUT_VAR: str(DEFAULT_LOG2_CYCLES)}
    coretype = coretype_for(cpu)
    if coretype is not None:
        choices[CORETYPE_VAR] = coretype
    return choices


@contextlib.contextmanager
def blas_load_environment() -> Iterator[None]:
    """Within the block, baton's choices are in the environment wherever
    the user did not set the variable; on exit the environment is as it was
    and `loaded_with` says what OpenBLAS read."""
    added = []
    for var in (TIMEOUT_VAR, CORETYPE_VAR):
        if os.environ.get(var) is not None:
            loaded_with[var] = (os.environ[var], "the user")
    for var, value in batons_choices(cpu_fields()).items():
        if var not in loaded_with:
            os.environ[var] = value
            loaded_with[var] = (value, BATONS_CHOICE)
            added.append(var)
    try:
        yield
    finally:
        for var in added:
            os.environ.pop(var, None)


def effective_log2_cycles(value: str) -> int:
    """The poll OpenBLAS makes of an OPENBLAS_THREAD_TIMEOUT value: a
    positive integer clamped to 4..30, anything else its default, 28."""
    try:
        n = int(value)
    except ValueError:
        n = 0
    return min(max(n, 4), 30) if n > 0 else 28


def poll_log2_cycles() -> int:
    """log2 of the cycles baton's OpenBLAS workers poll after a call."""
    value = loaded_with.get(TIMEOUT_VAR, ("", ""))[0]
    return effective_log2_cycles(value)


def describe() -> str:
    """One line for print_environment_info: what OpenBLAS was loaded with."""
    parts = []
    for var, (value, chosen_by) in loaded_with.items():
        parts.append(f"{var}={value} ({chosen_by})")
    return (
        f"{', '.join(parts)}; workers poll 2^{poll_log2_cycles()} cycles after "
        "a call, then sleep"
    )
