"""The benchmark cases, in the order they run.

A case is a name (what ``--cases`` matches) and a function ``run(ctx) ->
list[Row]`` that measures baton and, when present, JAX on the same inputs,
checks that their results agree with a numpy reference, and returns rows.
Groups, one module each: dispatch (jit call overhead), transfer
(device_put), inplace (donated update loops), elementwise, matmul, fft, train,
grad_train (training steps with gradients), control_flow (fori_loop and scan
inside jit), sharded (a data-parallel step on 4 devices), profiler (what recording memory events costs). The size sweep
(sweep: the same few operations at sizes from 2^10 elements up) is a set of
its own, run only by ``run.py --sweep``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from _context import Context
from _report import Row


@dataclass(frozen=True)
class Case:
    """A named benchmark: `run(ctx)` returns its rows."""

    name: str
    run: Callable[[Context], list[Row]]
    about: str


def all_cases() -> list[Case]:
    """Every case, in running order (cheap dispatch cases first)."""
    from cases import (
        control_flow,
        dispatch,
        elementwise,
        fft,
        grad_train,
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
        *matmul.CASES,
        *fft.CASES,
        *train.CASES,
        *grad_train.CASES,
        *control_flow.CASES,
        *sharded.CASES,
        *profiler.CASES,
    ]


def sweep_cases() -> list[Case]:
    """The size sweep's cases (``run.py --sweep``), in running order."""
    from cases import sweep

    return list(sweep.CASES)
