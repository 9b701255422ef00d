"""The GPU baselines of a ``run.py --platform cuda`` run, measured by torch in
a process of its own (``run.py --child platform --lib torch``, served as
``_platform_child.serve`` describes): torch loads its own CUDA libraries and
caching allocator, which stay out of baton's and JAX's processes.

A request ``{"baseline": SPEC}`` measures one of
  {"kind": "h2d", "nbytes": N}     pinned host -> device copy of N bytes:
                                   ``host.to("cuda", non_blocking=True)`` from
                                   ``torch.empty(..., pin_memory=True)``, i.e.
                                   cudaMemcpyAsync
  {"kind": "d2d", "nbytes": N}     device -> device copy, ``dst.copy_(src)``
  {"kind": "matmul", "side": S}    ``torch.matmul`` of two float32[S, S]
                                   (TF32 off: full float32, as XLA's
                                   ``precision=HIGHEST`` that JAX's process uses)
and answers ``{"ns": [...], "name": ...}`` (ns per operation, one value per
sample) or ``{"missing": why}``. Each operation is followed by
``torch.cuda.synchronize()``, as the libraries' calls are by
``block_until_ready``, and timed the same way: samples of about a
millisecond, each after one untimed operation, repeated for about 0.3 s (at
least 5; smoke: at most 3). Every result is checked (copies exactly, the
matmul within 2e-5 of the norm of a float64 product) before it is timed.

Only when torch is importable and ``torch.cuda.is_available()``: the hello
says why not otherwise, and the parent's baseline column reads n/a.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from _timing import now_ns

SAMPLE_S = 1e-3  # as cases/sweep.py: one sample's length
BUDGET_S = 0.3  # and one measurement's
MAX_REPS = 200
NAMES = {
    "h2d": "torch pinned H2D",
    "d2d": "torch D2D copy",
    "matmul": "torch.matmul",
}

_torch: Any = None


def hello() -> dict[str, Any]:
    """Import torch and see whether it has a CUDA device."""
    global _torch
    try:
        import torch
    except ImportError as e:
        return {"ok": False, "why": f"torch is not importable ({e})"}
    if not torch.cuda.is_available():
        return {
            "ok": False,
            "why": f"torch {torch.__version__}: torch.cuda.is_available() is False",
        }
    torch.backends.cuda.matmul.allow_tf32 = False  # full float32 GEMMs
    _torch = torch
    return {
        "ok": True,
        "lib": "torch",
        "device": {
            "name": "cuda:0",
            "platform": "cuda",
            "kind": torch.cuda.get_device_name(0),
        },
        "versions": {"torch": torch.__version__, "torch_cuda": torch.version.cuda},
    }


def _time(op: Callable[[], Any], smoke: bool) -> list[float]:
    """ns per `op()` + synchronize, one value per sample (see the module)."""
    sync = _torch.cuda.synchronize
    best = math.inf
    for _ in range(3):
        t0 = now_ns()
        op()
        sync()
        best = min(best, (now_ns() - t0) * 1e-9)
    per = max(1, round(SAMPLE_S / best))
    reps = min(MAX_REPS, max(5, int(BUDGET_S / ((per + 1) * best + 1e-3))))
    if smoke:
        reps = min(reps, 3)
    ns = []
    for _ in range(reps):
        op()  # untimed, as the libraries' samples
        sync()
        t0 = now_ns()
        for _ in range(per):
            op()
            sync()
        ns.append((now_ns() - t0) / per)
    return ns


def _copy(kind: str, nbytes: int, smoke: bool) -> list[float]:
    """h2d (pinned host -> device) or d2d of `nbytes`, checked exactly."""
    torch = _torch
    n = nbytes // 4
    src = torch.arange(n, dtype=torch.float32, device="cuda")
    if kind == "h2d":
        host = torch.empty(n, dtype=torch.float32, pin_memory=True)
        host.copy_(src)
        got = host.to("cuda", non_blocking=True)
        ns = _time(lambda: host.to("cuda", non_blocking=True), smoke)
    else:
        dst = torch.empty_like(src)
        ns = _time(lambda: dst.copy_(src), smoke)
        got = dst
    torch.cuda.synchronize()
    if not torch.equal(got, src):
        raise AssertionError(f"{NAMES[kind]} of {nbytes} bytes: the copy differs")
    return ns


def _matmul(side: int, smoke: bool) -> list[float]:
    """torch.matmul of two float32[side, side], checked against float64."""
    torch = _torch
    g = torch.Generator(device="cuda").manual_seed(side)
    a = torch.rand((side, side), device="cuda", generator=g)
    b = torch.rand((side, side), device="cuda", generator=g)
    ref = torch.matmul(a.double(), b.double())
    err = float((torch.matmul(a, b).double() - ref).norm() / ref.norm())
    del ref
    if not err <= 2e-5:
        raise AssertionError(f"torch.matmul {side}x{side}: {err:.3g} of the norm off")
    return _time(lambda: torch.matmul(a, b), smoke)


def measure(spec: dict[str, Any], smoke: bool) -> dict[str, Any]:
    """One baseline (see the module), or why it is missing."""
    kind = spec.get("kind")
    try:
        if kind in ("h2d", "d2d"):
            ns = _copy(kind, int(spec["nbytes"]), smoke)
        elif kind == "matmul":
            ns = _matmul(int(spec["side"]), smoke)
        else:
            return {"missing": f"no baseline of kind {kind!r}"}
    except Exception as e:
        return {"missing": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"}
    finally:
        _torch.cuda.empty_cache()
    return {"ns": ns, "name": NAMES[kind]}
