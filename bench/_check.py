"""Correctness checks: a fast wrong answer must fail loudly.

Every case compares baton's final value with JAX's (when JAX is present) and
with a numpy reference; a mismatch raises `AssertionError`, which the runner
reports as a FAILED row and turns into a non-zero exit status. Large arrays
are compared in chunks, so a check of a 1 GiB array needs no GiB-sized
temporaries.

In a ``--platform`` run the two libraries run in separate processes, so no
single process holds both values: each process installs a recorder
(`set_recorder`) that keeps every value it checked, with the tolerance it was
checked to, and the parent compares baton's with JAX's (`compare_values` in
``_platform.py``).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

CHUNK = 1 << 22  # elements compared at a time

# Called as recorder(what, value, rule) for every value checked against its
# reference (rule: {"rtol": r, "atol": a} or {"norm_rtol": r}); None: nothing
# is recorded (a run of both libraries in one process compares directly).
_recorder: Callable[[str, Any, dict[str, float]], None] | None = None


def set_recorder(fn: Callable[[str, Any, dict[str, float]], None] | None) -> None:
    """Record every checked value with `fn` from now on (None: stop)."""
    global _recorder
    _recorder = fn


def record(what: str, value: Any, rule: dict[str, float]) -> None:
    """Hand a value that passed its check to the recorder, if one is set."""
    if _recorder is not None:
        _recorder(what, value, rule)


def compare(
    what: str, got: np.ndarray, ref: np.ndarray, rtol: float, atol: float
) -> None:
    """assert_allclose (or exact equality when rtol == atol == 0), chunk by
    chunk over the flattened arrays."""
    g, r = got.reshape(-1), ref.reshape(-1)
    for start in range(0, max(r.size, 1), CHUNK):
        gs, rs = g[start : start + CHUNK], r[start : start + CHUNK]
        if rtol == 0 and atol == 0:
            if not np.array_equal(gs, rs):
                bad = np.flatnonzero(gs != rs)[0]
                raise AssertionError(
                    f"{what}: element {start + bad} is {gs[bad]!r}, "
                    f"expected {rs[bad]!r}"
                )
        else:
            np.testing.assert_allclose(
                gs, rs, rtol=rtol, atol=atol, err_msg=f"{what} (from element {start})"
            )


def assert_close(
    what: str,
    reference: Any,
    baton: Any,
    jax: Any = None,
    rtol: float = 1e-6,
    atol: float = 0.0,
) -> None:
    """Assert baton's (and JAX's, if given) value equals `reference` within
    rtol/atol (exactly when both are 0), and baton's equals JAX's within twice
    that; the message names the case and the library."""
    ref = np.asarray(reference)
    got = {}
    for lib, value in (("baton", baton), ("jax", jax)):
        if value is None:
            continue
        got[lib] = np.asarray(value)
        if got[lib].shape != ref.shape or got[lib].dtype != ref.dtype:
            raise AssertionError(
                f"{what}: {lib} returned {got[lib].dtype}{list(got[lib].shape)}, "
                f"expected {ref.dtype}{list(ref.shape)}"
            )
        compare(f"{what}: {lib} differs from the reference", got[lib], ref, rtol, atol)
    for value in got.values():
        record(what, value, {"rtol": rtol, "atol": atol})
    if len(got) == 2:
        compare(
            f"{what}: baton and jax differ",
            got["baton"],
            got["jax"],
            2 * rtol,
            2 * atol,
        )
