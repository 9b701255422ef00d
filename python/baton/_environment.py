"""``bt.print_environment_info()``: what baton runs on -- versions, the CPU,
the devices, and the BLAS kernel the linked OpenBLAS chose (and whether it
fits this CPU: an OpenBLAS that does not know a CPU model falls back to a
generic kernel and every GEMM runs several times slower). A kernel that does
not fit is also warned about once, at import."""

from __future__ import annotations

import os
import platform
import sys
import warnings

from baton import _baton, _blas_environment, _device_queries
from baton._version import __version__

__all__ = ["print_environment_info"]


def _cpu_model() -> str:
    fields = _blas_environment.cpu_fields()
    if not fields:
        return platform.processor() or platform.machine()
    name = fields.get("model name", platform.machine())
    family, model = fields.get("cpu family"), fields.get("model")
    return f"{name} (family {family}, model {model})" if family else name


def environment_info() -> str:
    """The text print_environment_info() prints."""
    import ml_dtypes
    import numpy as np

    blas = _baton.blas_info()
    fit = "fits this CPU" if blas["kernel_fits_cpu"] else "DOES NOT FIT this CPU"
    lines = [
        f"baton:     {__version__}",
        f"numpy:     {np.__version__}, ml_dtypes {ml_dtypes.__version__}",
        f"python:    {sys.version.split()[0]}",
        f"platform:  {platform.platform()}",
        f"cpu:       {_cpu_model()}, {os.cpu_count()} logical cores, "
        f"best vector ISA {blas['cpu_isa']}",
        f"cpu pool:  {_baton.cpu_pool_threads()} thread(s) per kernel "
        "(the cores this process may run on)",
        f"devices:   {', '.join(str(d) for d in _device_queries.devices())}",
        f"blas:      {blas['config']}",
        f"blas core: {blas['corename']} ({fit}), "
        f"{blas['threads_per_call']} thread(s) per call",
        f"blas env:  {_blas_environment.describe()}",
    ]
    if blas["advice"]:
        lines.append(f"           {blas['advice']}")
    return "\n".join(lines)


def print_environment_info(return_string: bool = False) -> str | None:
    """Prints (or, with ``return_string=True``, returns) versions, the CPU,
    the devices and the BLAS kernel in use, as ``jax.print_environment_info``."""
    text = environment_info()
    if return_string:
        return text
    print(text)
    return None


def warn_if_blas_kernel_unfit() -> None:
    """Warns (RuntimeWarning) when the BLAS chose a kernel far below what
    this CPU supports; called once at import."""
    blas = _baton.blas_info()
    if not blas["kernel_fits_cpu"]:
        warnings.warn(f"baton: {blas['advice']}", RuntimeWarning, stacklevel=3)
