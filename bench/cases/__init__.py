"""The benchmark cases, in the order they run.

A case is a name (what ``--cases`` matches) and a function ``run(ctx) ->
list[Row]`` that measures baton and, when present, JAX on the same inputs,
checks that their results agree with a numpy reference, and returns rows.
Groups, one module each: dispatch (jit call overhead), transfer
(device_put), inplace (donated update loops), elementwise, half (bfloat16/float16
elementwise and matmul), matmul, fft, train,
grad_train (training steps with gradients), control_flow (fori_loop and scan
inside jit), sharded (a data-parallel step on 4 devices), profiler (what recording memory events costs). The size sweep
(sweep: the same few operations at sizes from 2^10 elements up) is a set of
its own, run only by ``run.py --sweep``.

``run.py --platform cuda|sim`` runs baton and JAX in separate processes
(``_platform.py``); only the cases marked ``on_device`` are written for that
(each runs whichever libraries its context holds). The others are skipped
there, with ``OFF_DEVICE`` as the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from _context import Context
from _report import Row

# Why a case not marked on_device is skipped by --platform cuda|sim.
OFF_DEVICE = "not ported yet (runs both libraries in one process)"


@dataclass(frozen=True)
class Case:
    """A named benchmark: `run(ctx)` returns its rows. `on_device`: it runs
    under ``--platform`` too, measuring only the libraries `ctx` holds (baton
    when ``ctx.with_baton``, JAX when ``ctx.jax``)."""

    name: str
    run: Callable[[Context], list[Row]]
    about: str
    on_device: bool = False

    @property
    def group(self) -> str:
        """The module of cases/ that defines it, e.g. "dispatch"."""
        return self.run.__module__.rsplit(".", 1)[-1]

    def selected(self, pattern: re.Pattern[str]) -> bool:
        """Whether ``--cases`` picks it: the pattern found in its name, or
        matching its whole group (``--cases dispatch``: every dispatch case)."""
        return bool(pattern.search(self.name) or pattern.fullmatch(self.group))


def all_cases() -> list[Case]:
    """Every case, in running order (cheap dispatch cases first)."""
    from cases import (
        control_flow,
        dispatch,
        elementwise,
        fft,
        grad_train,
        half,
        inplace,
        matmul,
        profiler,
        sharded,
        train,
        transfer,
    )

    return [
        *dispatch.CASES,
        *transfer.CASES,
        *inplace.CASES,
        *elementwise.CASES,
        *half.CASES,
        *matmul.CASES,
        *fft.CASES,
        *train.CASES,
        *grad_train.CASES,
        *control_flow.CASES,
        *sharded.CASES,
        *profiler.CASES,
    ]


def sweep_cases(platform: str = "cpu") -> list[Case]:
    """The size sweep's cases (``run.py --sweep``), in running order; on an
    accelerator (``--platform cuda|sim``) with the transfer from the host."""
    from cases import sweep

    return list(sweep.CASES) + ([] if platform == "cpu" else list(sweep.DEVICE_CASES))
