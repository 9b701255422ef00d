"""Chrome trace JSON of baton's recorded events (``bt.profiler.trace``, DESIGN 5.5).

The output follows the Trace Event Format (the JSON that chrome://tracing and
ui.perfetto.dev load)::

    {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}

- a process per device (``pid`` = device id + 1, named ``"cpu:0"`` by an
  ``"M"`` ``process_name`` event) and a thread per queue (``tid`` fixed per
  queue name: compute 1, host_to_device 2, device_to_host 3, host 4 -- work
  done on the calling thread -- and further names from 5 on), each named by a
  ``thread_name`` event;
- ``"X"`` complete events for executions (named after the jitted function)
  and transfers (``args``: ``bytes``, ``memory_kind``);
- ``"i"`` instant events (thread scope, ``"s": "t"``) for ``alloc``,
  ``free``, ``free_requested``, ``donate`` and ``overwrite``, named e.g.
  ``"alloc float32(8, 4)"``,
  with ``args`` ``shape``, ``dtype``, ``kind``, ``bytes``, ``id``,
  ``memory_kind``, ``label``, ``address``, ``bytes_in_use`` (after an alloc
  or free), ``to`` (for a donation or overwrite: what got the storage) and
  ``stack`` (the frames as strings, innermost first);
- ``"C"`` counter events ``"bytes_in_use <memory kind>"`` per device, whose
  ``args`` is ``{memory_kind: bytes}``: the initial values at the trace's
  start, then the space's value after every allocation and free.

Timestamps (``ts``, ``dur``) are microseconds (floats, nanosecond precision)
from the trace's start.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from baton._pprof import split_label

QUEUE_TIDS = {"compute": 1, "host_to_device": 2, "device_to_host": 3, "host": 4}
_QUEUE_NAMES = {
    "compute": "compute",
    "host_to_device": "host_to_device",
    "device_to_host": "device_to_host",
    "host": "host (calling thread)",
}
COUNTER_TID = 0
MEMORY_EVENTS = ("alloc", "free", "donate", "overwrite", "free_requested")
SPAN_EVENTS = ("execute", "transfer")


def pid_of(device: int) -> int:
    """The trace's process id of device ``device`` (ids from 1: some viewers
    treat pid 0 specially)."""
    return int(device) + 1


def counter_name(memory_kind: str) -> str:
    """The name of the ``bytes_in_use`` counter of ``memory_kind``."""
    return f"bytes_in_use {memory_kind}"


def format_frame(frame: Any) -> str:
    """``"function (file:line)"`` of a ``[function, file, line]`` frame."""
    name = frame[0] if len(frame) > 0 else "?"
    filename = frame[1] if len(frame) > 1 else ""
    line = frame[2] if len(frame) > 2 else 0
    return f"{name} ({filename}:{line})"


class _Tids:
    def __init__(self) -> None:
        self.tids = dict(QUEUE_TIDS)
        self.used: set[tuple[int, int]] = set()
        self.names: dict[int, str] = {}

    def tid(self, pid: int, queue: str) -> int:
        queue = queue or "host"
        tid = self.tids.get(queue)
        if tid is None:
            tid = max(self.tids.values()) + 1
            self.tids[queue] = tid
        self.names[tid] = _QUEUE_NAMES.get(queue, queue)
        self.used.add((pid, tid))
        return tid


def _us(ns: int, start_ns: int) -> float:
    return max(0, int(ns) - int(start_ns)) / 1000.0


def _memory_args(e: Mapping[str, Any]) -> dict[str, Any]:
    label = str(e.get("label", ""))
    dtype, shape, target = split_label(label)
    args: dict[str, Any] = {
        "bytes": int(e.get("bytes", 0)),
        "id": int(e.get("id", 0)),
        "kind": str(e.get("kind", "")),
        "memory_kind": str(e.get("memory_kind", "")),
        "label": label,
        "address": hex(int(e.get("address", 0))),
    }
    if dtype is not None:
        args["dtype"] = dtype
        args["shape"] = shape
    if target is not None:
        args["to"] = target
    if int(e.get("bytes_in_use", -1)) >= 0:
        args["bytes_in_use"] = int(e["bytes_in_use"])
    args["stack"] = [format_frame(f) for f in e.get("frames") or ()]
    return args


def build_trace(
    events: Iterable[Mapping[str, Any]],
    *,
    start_ns: int,
    device_names: Mapping[int, str],
    initial_counters: Mapping[tuple[int, str], int] | None = None,
    end_ns: int | None = None,
) -> dict[str, Any]:
    """The trace (a dict ready for ``json.dump``) of baton's event dicts.

    ``start_ns`` is the trace's start on the events' clock
    (``_profiler.now_ns()``); ``device_names`` maps device ids to names;
    ``initial_counters`` maps ``(device id, memory kind)`` to ``bytes_in_use``
    at the start (``bt.memory_stats``), so each counter starts at its true
    value.

    >>> t = build_trace([], start_ns=0, device_names={0: "cpu:0"},
    ...                 initial_counters={(0, "device"): 4096})
    >>> [e["ph"] for e in t["traceEvents"]]
    ['M', 'M', 'C']
    """
    tids = _Tids()
    body: list[dict[str, Any]] = []
    pids: dict[int, str] = {int(d): str(n) for d, n in device_names.items()}
    for (device, kind), value in sorted((initial_counters or {}).items()):
        pid = pid_of(device)
        pids.setdefault(int(device), f"device {device}")
        body.append(
            {
                "name": counter_name(kind),
                "cat": "memory",
                "ph": "C",
                "ts": 0.0,
                "pid": pid,
                "tid": COUNTER_TID,
                "args": {kind: int(value)},
            }
        )
    for e in events:
        etype = str(e.get("type", ""))
        device = int(e.get("device", 0))
        pid = pid_of(device)
        pids.setdefault(device, f"device {device}")
        tid = tids.tid(pid, str(e.get("queue", "")))
        ts = _us(e.get("begin_ns", start_ns), start_ns)
        label = str(e.get("label", ""))
        if etype in SPAN_EVENTS:
            end = int(e.get("end_ns", e.get("begin_ns", start_ns)))
            dur = max(0, end - max(int(e.get("begin_ns", start_ns)), start_ns))
            args: dict[str, Any] = {"memory_kind": str(e.get("memory_kind", ""))}
            if etype == "transfer" or e.get("bytes"):
                args["bytes"] = int(e.get("bytes", 0))
            if e.get("frames"):
                args["stack"] = [format_frame(f) for f in e["frames"]]
            body.append(
                {
                    "name": label or etype,
                    "cat": etype,
                    "ph": "X",
                    "ts": ts,
                    "dur": dur / 1000.0,
                    "pid": pid,
                    "tid": tid,
                    "args": args,
                }
            )
            continue
        body.append(
            {
                "name": f"{etype} {label}" if label else etype,
                "cat": "memory" if etype in MEMORY_EVENTS else etype or "event",
                "ph": "i",
                "s": "t",
                "ts": ts,
                "pid": pid,
                "tid": tid,
                "args": _memory_args(e),
            }
        )
        bytes_in_use = int(e.get("bytes_in_use", -1))
        if etype in ("alloc", "free", "free_requested") and bytes_in_use >= 0:
            kind = str(e.get("memory_kind", ""))
            body.append(
                {
                    "name": counter_name(kind),
                    "cat": "memory",
                    "ph": "C",
                    "ts": ts,
                    "pid": pid,
                    "tid": COUNTER_TID,
                    "args": {kind: bytes_in_use},
                }
            )
    body.sort(key=lambda ev: ev["ts"])  # stable: same-time events keep order
    meta: list[dict[str, Any]] = []
    for device, name in sorted(pids.items()):
        pid = pid_of(device)
        meta.append(_meta("process_name", pid, 0, name))
        meta.append(_meta("process_sort_index", pid, 0, None, sort_index=device))
    for pid, tid in sorted(tids.used):
        meta.append(_meta("thread_name", pid, tid, tids.names[tid]))
        meta.append(_meta("thread_sort_index", pid, tid, None, sort_index=tid))
    other = {"producer": "baton", "clock": "steady, ns", "start_ns": int(start_ns)}
    if end_ns is not None:
        other["duration_ns"] = max(0, int(end_ns) - int(start_ns))
    return {"traceEvents": meta + body, "displayTimeUnit": "ns", "otherData": other}


def _meta(
    name: str, pid: int, tid: int, value: str | None, *, sort_index: int = 0
) -> dict[str, Any]:
    args: dict[str, Any] = (
        {"name": value} if value is not None else {"sort_index": sort_index}
    )
    return {"name": name, "ph": "M", "ts": 0.0, "pid": pid, "tid": tid, "args": args}


def write_trace(path: str | os.PathLike[str], trace: Mapping[str, Any]) -> str:
    """Writes ``trace`` as JSON to ``path`` (gzip-compressed when it ends in
    ``.gz``, which Perfetto also loads); returns the path as a str."""
    path = os.fspath(path)
    data = json.dumps(trace, separators=(",", ":")).encode("utf-8")
    if path.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    with open(path, "wb") as f:
        f.write(data)
    return path
