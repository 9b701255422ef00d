"""Seeing memory: profiles, timelines, history and scopes (DESIGN R9, 5.5).

``bt.profiler`` follows ``jax.profiler`` where JAX has the same thing and
PyTorch's ``torch.cuda.memory`` where it has::

    import baton as bt

    bt.profiler.save_memory_profile("mem.prof")       # pprof: go tool pprof -http
    with bt.profiler.trace("/tmp/trace") as t:         # Chrome trace / Perfetto JSON
        step()
    print(t.path)                                      # /tmp/trace/baton.trace.json

    with bt.profiler.record_memory_history():          # alloc/free history + stacks
        step()
        snap = bt.profiler.memory_snapshot()
    bt.profiler.save_memory_viewer("mem.html", snap)   # one HTML file, no network

    with bt.profiler.memory_scope("step") as s:        # peak of a block, and why
        step()
    print(s.summary())

Everything is recorded by the runtime (``baton._baton._profiler``): every
allocation of every device and memory kind -- arrays, constants of compiled
programs, temporaries of running programs, transfer staging -- with the
Python stack of the call that made it (captured always, symbolized when read;
``bt.config`` ``capture_allocation_stacks`` turns that off, leaving stacks to
recordings).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from baton import _baton, _chrome_trace, _pprof
from baton._memory_scope import MemoryScope
from baton._memory_scope import bytes_in_use_now as _bytes_in_use_now
from baton._memory_scope import device_names as _device_names

__all__ = [
    "MemoryScope",
    "TraceResult",
    "memory_scope",
    "memory_snapshot",
    "record_memory_history",
    "save_device_memory_profile",
    "save_memory_profile",
    "save_memory_viewer",
    "start_trace",
    "stop_trace",
    "trace",
]

TRACE_FILE_NAME = "baton.trace.json"

# Allocation stacks leave out baton's own frames (files of this package).
_baton._profiler._set_internal_prefix(os.path.dirname(__file__) + os.sep)


def _p() -> Any:
    return _baton._profiler


# --- pprof -------------------------------------------------------------------


def save_memory_profile(path: str | os.PathLike[str], backend: Any = None) -> str:
    """Writes a pprof memory profile of every live allocation to ``path``.

    The file is a gzip-compressed ``perftools.profiles.Profile`` protobuf, as
    ``jax.profiler.save_device_memory_profile`` writes: one sample per live
    allocation of every device and memory kind -- arrays, constants of
    compiled programs, temporaries of programs running now and transfer
    staging buffers -- with sample types ``allocations/count`` and
    ``space/bytes`` (values ``[1, bytes]``, ``space`` the default), string
    labels ``device`` (``"cpu:0"``), ``memory_kind``, ``kind`` (``array``,
    ``constant``, ``temporary``, ``staging``), ``label``, and for arrays and
    constants ``dtype`` and ``shape`` (``"(1048576,)"``), numeric labels
    ``bytes`` and ``id``. Its locations are the stack of the call that
    allocated (leaf first): its Python frames, baton's own left out. With
    ``bt.config.update("capture_allocation_stacks", False)`` they are kept
    only while a recording or the memory history was on at that moment;
    otherwise one frame names baton's API function (file ``<baton>``).

    ``backend`` is accepted for ``jax.profiler`` compatibility and ignored:
    the profile covers every device. Returns the path written, as a str.

    Example::

        params = init()
        bt.profiler.save_memory_profile("mem.prof")  # names init's lines
        # go tool pprof -http=:8080 mem.prof   (or: pprof -top -tags mem.prof)
    """
    del backend
    data = _pprof.memory_profile(
        _p().live_allocations(), _device_names(), time_nanos=time.time_ns()
    )
    path = os.fspath(path)
    with open(path, "wb") as f:
        f.write(data)
    return path


def save_device_memory_profile(
    filename: str | os.PathLike[str], backend: Any = None
) -> None:
    """``jax.profiler.save_device_memory_profile``: writes the pprof memory
    profile of every live allocation to ``filename`` and returns None, as
    JAX does (``save_memory_profile`` is the same and returns the path).

    Example::

        x = bt.numpy.ones((1024, 1024))
        bt.profiler.save_device_memory_profile("mem.prof")
        # go tool pprof -top mem.prof
    """
    save_memory_profile(filename, backend)


# --- Chrome trace ------------------------------------------------------------


class TraceResult:
    """What ``trace`` yields: ``.path``, the JSON file it writes (known from
    the start, written at the end of the block), and after the block
    ``.events``, baton's recorded event dicts."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.events: list[dict[str, Any]] | None = None

    def __repr__(self) -> str:
        n = "recording" if self.events is None else f"{len(self.events)} events"
        return f"TraceResult(path={self.path!r}, {n})"


_trace_lock = threading.Lock()
_trace_state: dict[str, Any] | None = None


def _trace_file(path: str | os.PathLike[str]) -> str:
    path = os.fspath(path)
    if path.endswith((".json", ".json.gz")):
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        return path
    os.makedirs(path, exist_ok=True)
    return os.path.join(path, TRACE_FILE_NAME)


def start_trace(
    log_dir: str | os.PathLike[str],
    create_perfetto_link: bool = False,
    create_perfetto_trace: bool = False,
) -> str:
    """Starts recording a timeline; ``stop_trace()`` writes it.

    ``log_dir`` is a directory (created if needed; the trace goes to
    ``<log_dir>/baton.trace.json``) or a file name ending in ``.json`` (or
    ``.json.gz``). One trace at a time, as in ``jax.profiler``;
    ``create_perfetto_link`` and ``create_perfetto_trace`` are accepted for
    its signature and ignored (the JSON is what Perfetto loads). Returns the
    path the trace will be written to.

    Example::

        bt.profiler.start_trace("/tmp/trace")
        y = f(x).block_until_ready()
        path = bt.profiler.stop_trace()   # "/tmp/trace/baton.trace.json"
    """
    del create_perfetto_link, create_perfetto_trace
    global _trace_state
    with _trace_lock:
        if _trace_state is not None:
            raise RuntimeError(
                "a trace is already being recorded (to "
                f"{_trace_state['path']}); only one trace may run at a time"
            )
        path = _trace_file(log_dir)
        p = _p()
        start_ns = int(p.now_ns())
        token = p.start_recording("trace")
        try:
            counters = _bytes_in_use_now()
        except BaseException:
            p.stop_recording(token)
            raise
        _trace_state = {
            "path": path,
            "token": token,
            "start_ns": start_ns,
            "counters": counters,
            "names": _device_names(),
        }
        return path


def stop_trace(result: TraceResult | None = None) -> str:
    """Stops the trace that ``start_trace`` started and writes it; returns
    the path of the JSON file.

    The file is Chrome trace JSON (``{"traceEvents": [...], "displayTimeUnit":
    "ns"}``): a process per device and a thread per queue, ``"X"`` events for
    executions and transfers, ``"i"`` events for allocations, frees,
    donations and overwrites, ``"C"`` counters ``bytes_in_use <kind>`` per
    device. Open it in https://ui.perfetto.dev or chrome://tracing.

    Example::

        bt.profiler.start_trace("step.trace.json")
        train_step(state, batch)
        bt.profiler.stop_trace()
    """
    global _trace_state
    with _trace_lock:
        state = _trace_state
        if state is None:
            raise RuntimeError("no trace is being recorded (call start_trace first)")
        _trace_state = None
        p = _p()
        events = p.stop_recording(state["token"])
        end_ns = int(p.now_ns())
    trace_dict = _chrome_trace.build_trace(
        events,
        start_ns=state["start_ns"],
        device_names=state["names"],
        initial_counters=state["counters"],
        end_ns=end_ns,
    )
    path = _chrome_trace.write_trace(state["path"], trace_dict)
    if result is not None:
        result.events = events
    return path


@contextlib.contextmanager
def trace(
    log_dir: str | os.PathLike[str],
    create_perfetto_link: bool = False,
    create_perfetto_trace: bool = False,
) -> Iterator[TraceResult]:
    """Context manager: records a timeline of the block and writes it as
    Chrome trace JSON (``start_trace`` / ``stop_trace`` around the block).

    Yields a ``TraceResult`` whose ``.path`` is the file written (see
    ``start_trace`` for directories and file names) and, after the block,
    ``.events`` the recorded events. The trace is written even when the
    block raises.

    Example::

        with bt.profiler.trace("/tmp/trace") as t:
            y = step(x)
            y.block_until_ready()     # so the work ends inside the trace
        print(t.path)                 # open in ui.perfetto.dev
    """
    result = TraceResult(
        start_trace(log_dir, create_perfetto_link, create_perfetto_trace)
    )
    try:
        yield result
    finally:
        stop_trace(result)


# --- history and snapshots -----------------------------------------------------

_history_lock = threading.Lock()
# The runtime keeps the count as a 64-bit integer.
_MAX_HISTORY_ENTRIES = 2**63 - 1
_history_setting: tuple[bool, int] = (False, 0)


class _HistoryHandle:
    """What ``record_memory_history`` returns; as a context manager it
    restores the previous setting at exit."""

    def __init__(self, previous: tuple[bool, int], now: tuple[bool, int]) -> None:
        self._previous = previous
        self.enabled, self.max_entries = now

    def __enter__(self) -> _HistoryHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        _set_history(*self._previous)

    def __repr__(self) -> str:
        return (
            f"<memory history {'on' if self.enabled else 'off'}, "
            f"max_entries={self.max_entries}>"
        )


def _set_history(enabled: bool, max_entries: int) -> tuple[bool, int]:
    global _history_setting
    with _history_lock:
        previous = _history_setting
        _p().set_history(bool(enabled), int(max_entries))
        _history_setting = (bool(enabled), int(max_entries))
        return previous


def record_memory_history(
    enabled: bool | str | None = True, max_entries: int = 100000
) -> _HistoryHandle:
    """Turns the memory history on (or off) for ``memory_snapshot``.

    While on, the runtime keeps the last ``max_entries`` memory events
    (alloc, free, free_requested, donate, overwrite of every device and
    memory kind: time, bytes, device, memory kind, allocation id, label,
    Python stack) and captures the Python stack of every allocation.
    ``enabled`` is ``True`` (or ``"all"``, as PyTorch's
    ``_record_memory_history``) to start (afresh: an earlier history is
    dropped), ``None`` or ``False`` to stop (what was recorded stays for
    ``memory_snapshot`` until the next start). Also a context manager that
    restores the previous setting at exit.

    Example::

        bt.profiler.record_memory_history(max_entries=10000)
        train_step(state, batch)
        snap = bt.profiler.memory_snapshot()
        bt.profiler.record_memory_history(None)

        with bt.profiler.record_memory_history():   # the same, scoped
            train_step(state, batch)
            bt.profiler.save_memory_viewer("mem.html")
    """
    if enabled in (None, False):
        on = False
    elif enabled is True or enabled in ("all", "state"):
        on = True
    else:
        raise ValueError(
            f"record_memory_history: enabled must be True, 'all', None or False, "
            f"not {enabled!r}"
        )
    if isinstance(max_entries, bool) or not isinstance(max_entries, (int, np.integer)):
        raise TypeError(
            "record_memory_history: max_entries must be an int (the number of "
            f"events to keep), got {type(max_entries).__name__}"
        )
    max_entries = int(max_entries)
    if on and not 1 <= max_entries <= _MAX_HISTORY_ENTRIES:
        raise ValueError(
            f"record_memory_history: max_entries is {max_entries}; it must be in "
            f"[1, {_MAX_HISTORY_ENTRIES}] (the number of events to keep)"
        )
    now = (on, max_entries if on else 0)
    return _HistoryHandle(_set_history(*now), now)


def memory_snapshot() -> dict[str, Any]:
    """A snapshot of memory, as PyTorch's ``torch.cuda.memory._snapshot()``
    holds, for every device and memory kind.

    Returns ``{"segments": [...], "history": [...], "live": [...],
    "device_names": {id: "cpu:0", ...}}``:

    - ``segments``: the allocators' regions, each ``{"device", "memory_kind",
      "address", "size", "blocks": [{"offset", "size", "state" ("free",
      "live", "pending" -- freed once enqueued work ends), "id"}]}``;
    - ``history``: the last memory events (empty unless
      ``record_memory_history`` is on), oldest first: ``{"type", "begin_ns",
      "device", "memory_kind", "bytes", "address", "id", "kind", "label",
      "bytes_in_use", "frames"}``;
    - ``live``: every live allocation (same fields as an ``alloc`` event).

    Example::

        with bt.profiler.record_memory_history():
            step()
            snap = bt.profiler.memory_snapshot()
        biggest = max(snap["live"], key=lambda a: a["bytes"])
    """
    p = _p()
    return {
        "segments": p.segments(),
        "history": p.history(),
        "live": p.live_allocations(),
        "device_names": _device_names(),
    }


def save_memory_viewer(
    path: str | os.PathLike[str],
    snapshot: dict[str, Any] | None = None,
    title: str = "baton memory",
) -> str:
    """Writes a self-contained HTML page (no network) of ``snapshot``
    (default: ``memory_snapshot()`` now): active memory over time per device
    and memory kind, each allocation's stack on hover. Open it in any
    browser. Returns the path written.

    Example::

        with bt.profiler.record_memory_history():
            step()
            bt.profiler.save_memory_viewer("mem.html")
    """
    from baton._memory_viewer import write_memory_viewer

    if snapshot is None:
        snapshot = memory_snapshot()
    return write_memory_viewer(os.fspath(path), snapshot, title=title)


def memory_scope(name: str) -> MemoryScope:
    """Measures the memory of a block: its peak and what was live at it.

    ``with bt.profiler.memory_scope("step") as s:`` records every allocation
    and free of the block (of every device and memory kind); after the block
    ``s.peak_bytes``, ``s.bytes_at_exit`` and ``s.bytes_at_entry`` are dicts
    keyed by ``(device name, memory kind)``, and ``s.peak_arrays`` gives, per
    key, the allocations live at that key's peak with their allocation
    stacks (see ``MemoryScope``). Scopes nest: each records on its own.

    Example::

        with bt.profiler.memory_scope("step") as s:
            state = train_step(state, batch)
            state = bt.block_until_ready(state)
        print(s.peak("cpu:0"), s.at_exit())   # bytes
        print(s.summary())                    # and which arrays made the peak
    """
    return MemoryScope(name)
