"""The memory viewer: one self-contained HTML page of active memory over time.

``write_memory_viewer(path, snapshot)`` turns a snapshot dict (what
``bt.profiler.memory_snapshot()`` returns: ``"segments"``, ``"history"`` and
optionally ``"live"`` and ``"device_names"``) into a page like PyTorch's
memory_viz "Active Memory Timeline": one chart per (device, memory kind), each
allocation a band stacked over time, its label, kind, size, id and allocation
stack shown on hover. The page needs no network: its script, style and the
snapshot itself are inline, and it draws with SVG. The page's HTML, script
and style are ``_memory_viewer.html``, package data beside this module.

The module uses only the standard library (it does not import the extension),
so the page can be written from any snapshot dict, e.g. one loaded from JSON.
"""

from __future__ import annotations

import functools
import html
import importlib.resources
import json
import os
from typing import Any

__all__ = ["write_memory_viewer"]

#: Above this many allocations in one chart, the smallest are drawn merged
#: into one "other (N allocations)" band, as PyTorch's viewer does.
DEFAULT_MAX_BANDS = 2000


def write_memory_viewer(
    path: str | os.PathLike,
    snapshot: dict,
    title: str = "baton memory",
    *,
    max_bands: int = DEFAULT_MAX_BANDS,
) -> str:
    """Write the memory viewer page for ``snapshot`` to ``path``; returns the path.

    ``snapshot`` is a dict as ``bt.profiler.memory_snapshot()`` returns it:
    ``"history"`` (alloc, free, free_requested, donate and overwrite events,
    oldest first, each
    with ``begin_ns``, ``device``, ``memory_kind``, ``bytes``, ``id``,
    ``kind``, ``label`` and ``frames``), ``"segments"``, and optionally
    ``"live"`` (allocations live when the snapshot was taken) and
    ``"device_names"``. A free whose alloc is not in the history is drawn from
    the start (the allocation predates the recording); an alloc without a free
    is live at the end. A band ends when its owner releases it (free_requested,
    while enqueued work still uses it, else free): the chart is active memory,
    at most ``bytes_in_use``, which also counts freed storage that work still
    uses. Donations and overwrites are drawn as markers.

    The page is one HTML file with no external references: open it in any
    browser. Charts whose allocations number more than ``max_bands`` draw the
    smallest of them merged into one "other" band.
    """
    if not isinstance(snapshot, dict):
        raise TypeError(
            f"write_memory_viewer: snapshot must be a dict, got {type(snapshot)}"
        )
    if max_bands < 1:
        raise ValueError(f"write_memory_viewer: max_bands must be >= 1: {max_bands}")
    data = _normalise(snapshot)
    config = {"title": str(title), "max_bands": int(max_bands)}
    page = (
        _page()
        .replace("__TITLE__", html.escape(str(title)))
        .replace("__CONFIG__", _script_json(config))
        .replace("__DATA__", _script_json(data))
    )
    path = os.fspath(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path


# The page, _memory_viewer.html (package data beside this module): its script
# reads the snapshot from the "baton-snapshot" element, makes one chart per
# (device, memory kind), stacks each allocation as an SVG
# polygon over time (memory_viz's layout: a band sits on the ones allocated
# before it and drops when one below it is freed), merges all but the largest
# max_bands of a chart into one "other" band on top, and draws donations and
# overwrites as markers. When done, <body data-rendered="1">, and each chart's
# <svg> has data-device, data-memory-kind, data-bands (allocations),
# data-drawn-bands, data-merged and data-peak-bytes (what the tests read).
@functools.lru_cache(maxsize=1)
def _page() -> str:
    """The page's HTML, with __TITLE__, __CONFIG__ and __DATA__ to fill in."""
    return (
        importlib.resources.files(__package__)
        .joinpath("_memory_viewer.html")
        .read_text(encoding="utf-8")
    )


def _normalise(snapshot: dict) -> dict:
    """A JSON-ready copy of ``snapshot`` whose event times count from the first.

    Steady-clock nanoseconds can exceed 2**53, which JavaScript numbers do not
    hold exactly; times relative to the first event do. ``t0_ns`` keeps the
    origin.
    """
    history = list(snapshot.get("history") or ())
    t0 = min((int(e.get("begin_ns", 0)) for e in history), default=0)
    events = []
    for e in history:
        e = dict(e)
        for key in ("begin_ns", "end_ns"):
            if key in e and e[key] is not None:
                e[key] = int(e[key]) - t0
        events.append(e)
    names = snapshot.get("device_names") or {}
    return {
        "t0_ns": t0,
        "history": events,
        "segments": list(snapshot.get("segments") or ()),
        "live": list(snapshot.get("live") or ()),
        "device_names": {str(k): str(v) for k, v in dict(names).items()},
    }


def _json_default(value: Any) -> Any:
    if hasattr(value, "__index__"):
        return int(value.__index__())
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    return str(value)


def _script_json(value: Any) -> str:
    """JSON safe inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` only occur inside JSON strings, where their
    ``\\u`` escapes mean the same; without them no ``</script>`` or ``<!--``
    can end or disturb the element.
    """
    text = json.dumps(value, default=_json_default, separators=(",", ":"))
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
