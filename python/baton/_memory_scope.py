"""memory_scope's measurement (DESIGN 5.5): the peak of a block and what was
live at it, from the block's own recording of allocations and frees.

At entry a scope starts a "memory" recording and notes the live allocations
and every space's bytes_in_use; at exit it replays the recorded events (each
alloc and free carries its space's bytes_in_use right after it) to find each
space's peak and the allocations live at that moment. Scopes nest: each has
its own recording. ``bt.profiler.memory_scope`` is the public entry point.
"""

from __future__ import annotations

from typing import Any

from baton import _baton, _pprof

# The memory kinds of every device (bt.memory_stats refuses any other).
MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")


def _p() -> Any:
    return _baton._profiler


def _devices() -> list[Any]:
    return list(_baton.devices())


def device_names() -> dict[int, str]:
    """Device id -> name ("cpu:0") of every device."""
    return {d.id: str(d) for d in _devices()}


def _kinds(device: Any) -> tuple[str, ...]:
    return tuple(getattr(device, "memory_kinds", ("device",)))


def bytes_in_use_now() -> dict[tuple[int, str], int]:
    """``bytes_in_use`` of every device and memory kind, by (device id, kind)."""
    return {
        (d.id, kind): int(_baton.memory_stats(d, kind)["bytes_in_use"])
        for d in _devices()
        for kind in _kinds(d)
    }


def _shape_of(shape: str | None) -> tuple[int, ...] | None:
    if shape is None:
        return None
    inner = shape.strip()[1:-1].strip()
    try:
        return tuple(int(s) for s in inner.split(",") if s.strip())
    except ValueError:
        return None


def _mib(n: int) -> str:
    if abs(n) >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    if abs(n) >= 1 << 10:
        return f"{n / (1 << 10):.1f} KiB"
    return f"{n} B"


class MemoryScope:
    """The memory of one block: what ``memory_scope(name)`` yields.

    After the block (all dicts keyed by ``(device name, memory kind)``, e.g.
    ``("cpu:0", "device")``, covering every device and kind that was non-zero
    or allocated or freed in the block):

    - ``name``;
    - ``bytes_at_entry``: ``bytes_in_use`` at entry (``bt.memory_stats``,
      which includes storage whose free waits for enqueued work);
    - ``peak_bytes``: the highest ``bytes_in_use`` during the block;
    - ``bytes_at_exit``: ``bytes_in_use`` at exit;
    - ``peak_arrays``: for each key, the allocations live at that key's peak
      (largest first), each a dict ``label``, ``shape`` (a tuple, or None for
      temporaries and staging), ``dtype``, ``kind``, ``bytes``, ``id``,
      ``device`` (name), ``memory_kind``, ``frames`` (innermost first) and
      ``in_scope`` (allocated inside the block);
    - ``peak(device=None, memory_kind="device")``, ``at_exit(...)``,
      ``arrays_at_peak(...)``: one key's values (``device`` a Device, a
      name or None for device 0).

    These are None while the block runs. One object may be entered again
    (after its block, or nested in it): each entry records on its own, and
    the results are those of the block that ended last.
    ``peak``/``at_exit``/``arrays_at_peak`` refuse an unknown memory kind or
    device name with ValueError, as ``bt.memory_stats`` does.
    """

    def __init__(self, name: str) -> None:
        self.name = str(name)
        self.bytes_at_entry: dict[tuple[str, str], int] | None = None
        self.peak_bytes: dict[tuple[str, str], int] | None = None
        self.bytes_at_exit: dict[tuple[str, str], int] | None = None
        self.peak_arrays: dict[tuple[str, str], list[dict[str, Any]]] | None = None
        # One entry per __enter__ not yet exited: (recording token, live
        # allocations at entry, bytes_in_use at entry). The same object may
        # be entered again, sequentially or nested: each entry has its own
        # recording, which its own __exit__ stops (the runtime records
        # allocation stacks while any recording is on).
        self._open: list[
            tuple[int, list[dict[str, Any]], dict[tuple[int, str], int]]
        ] = []
        self._live0: list[dict[str, Any]] = []
        self._entry: dict[tuple[int, str], int] = {}
        self._names: dict[int, str] = {}

    def __enter__(self) -> MemoryScope:
        p = _p()
        names = device_names()
        token = p.start_recording("memory")
        try:
            live0 = list(p.live_allocations())
            entry = bytes_in_use_now()
        except BaseException:
            p.stop_recording(token)
            raise
        self._names = names
        self._open.append((token, live0, entry))
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self._open:
            return
        token, self._live0, self._entry = self._open.pop()
        events = _p().stop_recording(token)
        # The results are the block that ended last (for nested entries of
        # one object: the outermost).
        self._finish(events, bytes_in_use_now())

    def _key(self, device: int, kind: str) -> tuple[str, str]:
        return (self._names.get(device, f"device {device}"), kind)

    def _finish(
        self, events: list[dict[str, Any]], at_exit: dict[tuple[int, str], int]
    ) -> None:
        current = dict(self._entry)
        peak = dict(self._entry)
        peak_index = dict.fromkeys(self._entry, -1)  # -1: the peak was at entry
        touched: set[tuple[int, str]] = set()
        for i, e in enumerate(events):
            if e.get("type") not in ("alloc", "free", "free_requested"):
                continue
            key = (int(e["device"]), str(e["memory_kind"]))
            touched.add(key)
            value = int(e.get("bytes_in_use", -1))
            if value < 0:
                continue
            current[key] = value
            if value > peak.get(key, -1):
                peak[key] = value
                peak_index[key] = i
        for key, value in at_exit.items():  # a free that landed after the last event
            if value > peak.get(key, -1):
                peak[key] = value
                peak_index[key] = len(events)
        keys = {
            k
            for k in set(peak) | set(at_exit)
            if k in touched or peak.get(k, 0) or at_exit.get(k, 0)
        }
        # Replay the live set; take each key's allocations at its peak.
        live: dict[int, dict[str, Any]] = {}
        for a in self._live0:
            live[int(a["id"])] = dict(a, _in_scope=False)
        arrays: dict[tuple[int, str], list[dict[str, Any]]] = {}
        wanted: dict[int, list[tuple[int, str]]] = {}
        for k in keys:
            wanted.setdefault(peak_index.get(k, -1), []).append(k)
        self._take(arrays, live, wanted.get(-1, ()))
        for i, e in enumerate(events):
            etype = e.get("type")
            if etype == "alloc":
                live[int(e["id"])] = dict(e, _in_scope=True)
            elif etype in ("free", "free_requested"):  # the owner is gone
                live.pop(int(e["id"]), None)
            if i in wanted:
                self._take(arrays, live, wanted[i])
        self._take(arrays, live, wanted.get(len(events), ()))
        self.bytes_at_entry = {self._key(*k): self._entry.get(k, 0) for k in keys}
        self.peak_bytes = {self._key(*k): peak.get(k, 0) for k in keys}
        self.bytes_at_exit = {self._key(*k): at_exit.get(k, 0) for k in keys}
        self.peak_arrays = {self._key(*k): arrays.get(k, []) for k in keys}

    def _take(
        self,
        arrays: dict[tuple[int, str], list[dict[str, Any]]],
        live: dict[int, dict[str, Any]],
        keys: Any,
    ) -> None:
        for key in keys:
            found = [
                self._array(a)
                for a in live.values()
                if (int(a["device"]), str(a["memory_kind"])) == key
            ]
            found.sort(key=lambda a: (-a["bytes"], a["id"]))
            arrays[key] = found

    def _array(self, a: dict[str, Any]) -> dict[str, Any]:
        dtype, shape = _pprof.parse_label(str(a.get("label", "")))
        return {
            "label": str(a.get("label", "")),
            "shape": _shape_of(shape),
            "dtype": dtype,
            "kind": str(a.get("kind", "")),
            "bytes": int(a.get("bytes", 0)),
            "id": int(a.get("id", 0)),
            "device": self._names.get(int(a["device"]), str(a["device"])),
            "memory_kind": str(a["memory_kind"]),
            "frames": [tuple(f) for f in a.get("frames") or ()],
            "in_scope": bool(a.get("_in_scope")),
        }

    def _lookup(self, table: dict | None, device: Any, memory_kind: str, default: Any):
        # Arguments first (as bt.memory_stats checks them), then the state.
        if not isinstance(memory_kind, str):
            raise TypeError(
                f"memory_scope: memory_kind must be a str (one of "
                f"{', '.join(map(repr, MEMORY_KINDS))}), got "
                f"{type(memory_kind).__name__}"
            )
        if memory_kind not in MEMORY_KINDS:
            raise ValueError(
                f"memory_scope: unknown memory kind {memory_kind!r}; a device has "
                f"{', '.join(map(repr, MEMORY_KINDS))} memory"
            )
        names = self._names or device_names()
        if device is None:
            name = names.get(0, "cpu:0")
        elif isinstance(device, str):
            name = device
            if name not in names.values():
                raise ValueError(
                    f"memory_scope: unknown device {name!r}; the devices are "
                    f"{', '.join(map(repr, names.values()))} (or pass a Device, "
                    "or None for device 0)"
                )
        elif hasattr(device, "id"):
            name = str(device)
        else:
            raise TypeError(
                "memory_scope: device must be a Device, a device name such as "
                f"'cpu:0', or None, got {type(device).__name__}"
            )
        if table is None:
            raise RuntimeError(f"memory_scope {self.name!r} has not ended yet")
        return table.get((name, memory_kind), default)

    def peak(self, device: Any = None, memory_kind: str = "device") -> int:
        """Peak ``bytes_in_use`` of one device (None: device 0) and kind."""
        return self._lookup(self.peak_bytes, device, memory_kind, 0)

    def at_exit(self, device: Any = None, memory_kind: str = "device") -> int:
        """``bytes_in_use`` at exit of one device and kind."""
        return self._lookup(self.bytes_at_exit, device, memory_kind, 0)

    def arrays_at_peak(
        self, device: Any = None, memory_kind: str = "device"
    ) -> list[dict[str, Any]]:
        """The allocations live at the peak of one device and kind."""
        return self._lookup(self.peak_arrays, device, memory_kind, [])

    def summary(self, top: int = 5) -> str:
        """A readable report: per device and kind, entry/peak/exit bytes and
        the largest allocations at the peak with where they were made."""
        if self.peak_bytes is None:
            return f"memory_scope {self.name!r}: still running"
        lines = [f"memory_scope {self.name!r}:"]
        for key in sorted(self.peak_bytes):
            entry, peak = self.bytes_at_entry[key], self.peak_bytes[key]
            lines.append(
                f"  {key[0]} {key[1]}: entry {_mib(entry)}, peak {_mib(peak)} "
                f"(+{_mib(peak - entry)}), exit {_mib(self.bytes_at_exit[key])}"
            )
            arrays = self.peak_arrays[key]
            for a in arrays[:top]:
                where = ""
                if a["frames"]:
                    fn, file, line = [*a["frames"][0], "", "", 0][:3]
                    where = f"  at {fn} ({file}:{line})"
                lines.append(
                    f"    {_mib(a['bytes']):>10}  {a['kind']:<9} {a['label']}{where}"
                )
            if len(arrays) > top:
                lines.append(f"    ... and {len(arrays) - top} more")
        return "\n".join(lines)

    def __repr__(self) -> str:
        if self.peak_bytes is None:
            return f"<memory_scope {self.name!r} (running)>"
        parts = [
            f"{d}/{k}: peak {_mib(v)}, exit {_mib(self.bytes_at_exit[(d, k)])}"
            for (d, k), v in sorted(self.peak_bytes.items())
        ]
        return f"<memory_scope {self.name!r} {'; '.join(parts) or 'no memory'}>"
