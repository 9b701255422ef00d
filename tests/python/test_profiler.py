"""bt.profiler: memory profiles, history, snapshots, scopes (DESIGN R9, 5.5).

pprof files are decoded with the published schema (test_pprof.py's
``decode_profile``). Every memory assertion follows ``block_until_ready()``
of the work involved, so frees have landed; none asserts a time.
"""

import numpy as np
import pytest
from test_pprof import decode_profile, run_pprof, samples

import baton as bt
import baton.numpy as bnp
from baton import _baton
from baton.profiler import MemoryScope

from _util import in_use

# Exact byte counts: no garbage collection may free arrays mid-test.
pytestmark = pytest.mark.usefixtures("no_gc")

MiB = 1 << 20
EVENT_KEYS = {
    "type",
    "begin_ns",
    "end_ns",
    "device",
    "queue",
    "memory_kind",
    "bytes",
    "address",
    "id",
    "kind",
    "label",
    "bytes_in_use",
    "frames",
}


def dev0():
    return str(bt.devices()[0])


def frame_names(frames):
    return [f[0] for f in frames]


def profile_samples(tmp_path, name="mem.prof"):
    path = str(tmp_path / name)
    assert bt.profiler.save_memory_profile(path) == path
    with open(path, "rb") as f:
        data = f.read()
    assert data[:2] == b"\x1f\x8b"  # gzip
    return samples(decode_profile(data)), path


# --- MemoryScope's replay, on synthetic events ----------------------------------


def _ev(type, id, nbytes, in_use_after, kind="device", device=0, label="float32(8)"):
    return {
        "type": type,
        "begin_ns": 0,
        "end_ns": 0,
        "device": device,
        "queue": "host",
        "memory_kind": kind,
        "bytes": nbytes,
        "address": 0,
        "id": id,
        "kind": "array",
        "label": label,
        "bytes_in_use": in_use_after,
        "frames": [("f", "u.py", id)],
    }


def _scope(entry, live0=()):
    s = MemoryScope("synthetic")
    s._names = {0: "cpu:0", 1: "cpu:1"}
    s._entry = dict(entry)
    s._live0 = list(live0)
    return s


def test_scope_replay_finds_peak_and_live_set():
    entry = {(0, "device"): 1000, (0, "pinned_host"): 0, (1, "device"): 0}
    s = _scope(entry, [_ev("alloc", 1, 1000, -1)])
    events = [
        _ev("alloc", 2, 8000, 9000, label="float32(2000,)"),
        _ev("alloc", 3, 100, 9100, label="int8(10, 10)"),
        _ev("donate", 3, 100, -1),
        _ev("free", 2, 8000, 1100),
        _ev("alloc", 4, 50, 1150),
        _ev("free", 3, 100, 1050),
        _ev("alloc", 5, 64, 64, device=1, label="temporaries of g"),
        _ev("free", 5, 64, 0, device=1),
    ]
    s._finish(events, {(0, "device"): 1050, (0, "pinned_host"): 0, (1, "device"): 0})
    assert set(s.peak_bytes) == {("cpu:0", "device"), ("cpu:1", "device")}
    assert s.peak() == 9100 and s.peak("cpu:1") == 64
    assert s.bytes_at_entry[("cpu:0", "device")] == 1000
    assert s.at_exit() == 1050 and s.at_exit("cpu:1") == 0
    at_peak = s.arrays_at_peak()
    assert [a["id"] for a in at_peak] == [2, 1, 3]  # largest first
    assert at_peak[0]["shape"] == (2000,) and at_peak[0]["dtype"] == "float32"
    assert at_peak[2]["shape"] == (10, 10) and at_peak[2]["frames"] == [
        ("f", "u.py", 3)
    ]
    assert [a["in_scope"] for a in at_peak] == [True, False, True]
    assert at_peak[0]["device"] == "cpu:0" and at_peak[0]["memory_kind"] == "device"
    temp = s.arrays_at_peak("cpu:1")
    assert [a["id"] for a in temp] == [5] and temp[0]["shape"] is None
    assert "synthetic" in repr(s) and "peak" in s.summary()


def test_scope_peak_at_entry_and_pending_frees():
    # Only frees in the block: the peak is at entry, with the entry's live set;
    # bytes_in_use may exceed the live allocations (frees pending at entry).
    entry = {(0, "device"): 5000}
    s = _scope(entry, [_ev("alloc", 1, 1000, -1), _ev("alloc", 2, 2000, -1)])
    s._finish([_ev("free", 1, 1000, 4000)], {(0, "device"): 4000})
    assert s.peak() == 5000 and s.at_exit() == 4000
    assert [a["id"] for a in s.arrays_at_peak()] == [2, 1]
    assert all(not a["in_scope"] for a in s.arrays_at_peak())


def test_scope_before_exit():
    s = MemoryScope("early")
    assert s.peak_bytes is None and "running" in repr(s)
    with pytest.raises(RuntimeError, match="not ended"):
        s.peak()


def test_record_memory_history_arguments():
    with pytest.raises(ValueError, match="enabled"):
        bt.profiler.record_memory_history("sometimes")


# --- the bindings, as bt.profiler relies on them --------------------------------


def test_events_have_the_documented_fields():
    p = _baton._profiler
    with pytest.raises(ValueError):
        p.start_recording("everything")
    t0 = p.now_ns()
    tok = p.start_recording("memory")
    x = bt.device_put(np.zeros(1024, np.float32)).block_until_ready()
    after_alloc = in_use()
    nbytes = x.nbytes
    del x
    events = p.stop_recording(tok)
    t1 = p.now_ns()
    assert t0 <= t1
    assert {e["type"] for e in events} <= {"alloc", "free", "donate", "overwrite"}
    for e in events:
        assert set(e) == EVENT_KEYS, set(e) ^ EVENT_KEYS
        assert t0 <= e["begin_ns"] <= e["end_ns"] <= t1
        assert e["memory_kind"] in ("device", "pinned_host", "unpinned_host")
        assert e["frames"] and all(len(f) == 3 for f in e["frames"])
    alloc = [
        e for e in events if e["type"] == "alloc" and e["label"] == "float32(1024,)"
    ]
    if not alloc:
        alloc = [e for e in events if e["type"] == "alloc" and e["bytes"] == nbytes]
    assert len(alloc) == 1, events
    a = alloc[0]
    assert a["kind"] == "array" and a["bytes"] == nbytes and a["id"] > 0
    assert a["device"] == bt.devices()[0].id and a["memory_kind"] == "device"
    assert a["bytes_in_use"] == after_alloc
    frees = [e for e in events if e["type"] == "free" and e["id"] == a["id"]]
    assert len(frees) == 1 and frees[0]["bytes_in_use"] == in_use()
    assert "test_events_have_the_documented_fields" in frame_names(a["frames"])


def test_with_stack_capture_off_the_frame_names_the_api():
    # Stacks are captured always by default (test_allocation_stacks.py);
    # without that and without a recording, the API function is named.
    bt.config.update("capture_allocation_stacks", False)
    x = bt.device_put(np.zeros(256, np.float32)).block_until_ready()
    mine = [
        a
        for a in _baton._profiler.live_allocations()
        if a["address"] and a["bytes"] == x.nbytes
    ]
    assert mine
    assert any(
        len(a["frames"]) == 1
        and a["frames"][0][1] == "<baton>"
        and a["frames"][0][2] == 0
        for a in mine
    ), mine


# --- save_memory_profile ----------------------------------------------------------


def allocate_the_big_buffer():
    return bt.device_put(np.zeros(1 << 20, np.float32))


def test_memory_profile_shows_an_array_until_it_is_freed(tmp_path):
    with bt.profiler.record_memory_history():
        big = allocate_the_big_buffer().block_until_ready()
    got, path = profile_samples(tmp_path)
    mine = [s for s in got if "allocate_the_big_buffer" in frame_names(s["frames"])]
    assert len(mine) == 1, got
    s = mine[0]
    assert s["values"] == [1, 4 * MiB]
    labels = s["labels"]
    assert labels["shape"] == "(1048576,)" and labels["dtype"] == "float32"
    assert labels["kind"] == "array" and labels["memory_kind"] == "device"
    assert labels["device"] == dev0()
    # The samples of a space add up to its bytes_in_use (nothing pending).
    space = [
        x["values"][1]
        for x in got
        if x["labels"]["device"] == dev0() and x["labels"]["memory_kind"] == "device"
    ]
    assert sum(space) <= in_use() <= sum(space) + 4096 * len(space)
    top = run_pprof(path, "-top", "-sample_index=space")
    assert "allocate_the_big_buffer" in top
    ident = labels["id"][0]
    del big
    got, _ = profile_samples(tmp_path, "after.prof")
    assert all(x["labels"].get("id", (0,))[0] != ident for x in got)
    assert not [s for s in got if "allocate_the_big_buffer" in frame_names(s["frames"])]


def test_memory_profile_shows_captured_constants(tmp_path):
    table = np.arange(1 << 18, dtype=np.float32)  # 1 MiB, closed over

    def add_table(x):
        return x + table

    f = bt.jit(add_table)
    x = bt.zeros(1 << 18)
    with bt.profiler.record_memory_history():
        out = f(x).block_until_ready()
    np.testing.assert_array_equal(np.asarray(out), table)
    got, _ = profile_samples(tmp_path)
    consts = [s for s in got if s["labels"]["kind"] == "constant"]
    big = [s for s in consts if s["values"][1] >= MiB]
    assert big, [s["labels"] for s in got]
    assert big[0]["labels"]["dtype"] == "float32"
    assert big[0]["labels"]["shape"] == "(262144,)"
    assert big[0]["labels"]["memory_kind"] == "device"
    ident = big[0]["labels"]["id"][0]
    del f
    bt.clear_caches()  # dropping the function drops its constants
    got, _ = profile_samples(tmp_path, "after.prof")
    assert all(s["labels"].get("id", (0,))[0] != ident for s in got)


def test_memory_profile_backend_argument_is_ignored(tmp_path):
    path = str(tmp_path / "m.prof")
    assert bt.profiler.save_memory_profile(path, backend="cpu") == path
    decode_profile(open(path, "rb").read())


# --- history and snapshots ---------------------------------------------------------


def make_and_drop(n):
    x = bt.device_put(np.ones(n, np.float32)).block_until_ready()
    ident_bytes = x.nbytes
    x.delete()
    return ident_bytes


def test_memory_history_and_snapshot():
    with bt.profiler.record_memory_history(max_entries=1000) as h:
        assert h.enabled and h.max_entries == 1000
        keep = bt.device_put(np.ones(4096, np.float32)).block_until_ready()
        nbytes = make_and_drop(8192)
        snap = bt.profiler.memory_snapshot()
    assert set(snap) >= {"segments", "history", "live", "device_names"}
    assert snap["device_names"][bt.devices()[0].id] == dev0()
    hist = snap["history"]
    assert {e["type"] for e in hist} <= {"alloc", "free", "donate", "overwrite"}
    # The array's allocation (an accelerator's copy in also allocates staging
    # chunks of pinned_host memory of its own, with kind "staging").
    mine = [
        e
        for e in hist
        if e["type"] == "alloc"
        and e["kind"] == "array"
        and "make_and_drop" in frame_names(e["frames"])
    ]
    assert len(mine) == 1 and mine[0]["bytes"] == nbytes
    assert [e["type"] for e in hist if e["id"] == mine[0]["id"]] == ["alloc", "free"]
    times = [e["begin_ns"] for e in hist]
    assert times == sorted(times)  # oldest first
    live_ids = {a["id"] for a in snap["live"]}
    keep_alloc = [
        e
        for e in hist
        if e["type"] == "alloc" and e["kind"] == "array" and e["bytes"] == keep.nbytes
    ]
    assert keep_alloc and keep_alloc[-1]["id"] in live_ids
    assert mine[0]["id"] not in live_ids
    # Segments: blocks tile each region; the live array's block is live.
    blocks = {}
    for seg in snap["segments"]:
        assert seg["memory_kind"] in ("device", "pinned_host", "unpinned_host")
        offsets = sorted((b["offset"], b["size"]) for b in seg["blocks"])
        assert sum(size for _, size in offsets) <= seg["size"]
        for b in seg["blocks"]:
            assert b["state"] in ("free", "live", "pending")
            blocks[b["id"]] = b
    assert blocks[keep_alloc[-1]["id"]]["state"] == "live"
    del keep


def test_memory_history_keeps_the_last_entries():
    with bt.profiler.record_memory_history(max_entries=4):
        for n in (64, 128, 192, 256, 320):
            make_and_drop(n)
        hist = _baton._profiler.history()
    assert len(hist) == 4
    assert [e["bytes"] for e in hist if e["type"] == "alloc"][-1] == 320 * 4
    # Stopping keeps what was recorded (for a snapshot after the run); the
    # next start begins afresh.
    with bt.profiler.record_memory_history(None) as h:
        assert not h.enabled and len(_baton._profiler.history()) == 4
    with bt.profiler.record_memory_history(max_entries=4):
        assert _baton._profiler.history() == []


def test_save_memory_viewer(tmp_path):
    pytest.importorskip("baton._memory_viewer")
    with bt.profiler.record_memory_history():
        keep = allocate_the_big_buffer().block_until_ready()
        path = bt.profiler.save_memory_viewer(str(tmp_path / "mem.html"))
    assert path == str(tmp_path / "mem.html")
    text = open(path, encoding="utf-8").read()
    assert "<html" in text.lower() and "allocate_the_big_buffer" in text
    del keep


# --- memory_scope ------------------------------------------------------------------


def make_temporary():
    return bt.device_put(np.ones(1 << 21, np.float32))  # 8 MiB


def test_scope_sees_a_temporary_at_its_peak():
    keep = bt.device_put(np.ones(1 << 16, np.float32)).block_until_ready()
    with bt.profiler.memory_scope("step") as s:
        t = make_temporary().block_until_ready()
        t.delete()
    key = (dev0(), "device")
    assert s.name == "step"
    assert s.peak_bytes[key] >= s.bytes_at_entry[key] + 8 * MiB
    assert s.bytes_at_exit[key] == s.bytes_at_entry[key] == in_use()
    assert s.peak() == s.peak_bytes[key] and s.at_exit() == in_use()
    at_peak = s.arrays_at_peak()
    big = [a for a in at_peak if a["bytes"] == 8 * MiB]
    assert len(big) == 1
    assert big[0]["shape"] == (1 << 21,) and big[0]["dtype"] == "float32"
    assert big[0]["kind"] == "array" and big[0]["in_scope"]
    assert "make_temporary" in frame_names(big[0]["frames"])
    assert any(a["bytes"] == keep.nbytes and not a["in_scope"] for a in at_peak)
    assert "step" in repr(s) and "make_temporary" in s.summary()
    del keep


def test_nested_scopes_are_independent():
    with bt.profiler.memory_scope("outer") as outer:
        a = bt.device_put(np.ones(1 << 20, np.float32)).block_until_ready()  # 4 MiB
        with bt.profiler.memory_scope("inner") as inner:
            b = make_temporary().block_until_ready()  # 8 MiB
            del b
        c = bt.device_put(np.ones(1 << 22, np.float32)).block_until_ready()  # 16 MiB
    key = (dev0(), "device")
    assert inner.peak_bytes[key] <= outer.peak_bytes[key]
    assert inner.peak_bytes[key] >= inner.bytes_at_entry[key] + 8 * MiB
    assert inner.bytes_at_exit[key] == inner.bytes_at_entry[key]
    inner_ids = {x["bytes"] for x in inner.arrays_at_peak()}
    assert 8 * MiB in inner_ids and 4 * MiB in inner_ids and 16 * MiB not in inner_ids
    outer_at_peak = outer.arrays_at_peak()
    assert {4 * MiB, 16 * MiB} <= {x["bytes"] for x in outer_at_peak}
    assert 8 * MiB not in {x["bytes"] for x in outer_at_peak}  # freed before
    assert outer.bytes_at_exit[key] == outer.bytes_at_entry[key] + 20 * MiB
    del a, c


def test_scope_sees_a_jitted_output():
    f = bt.jit(lambda x: x * 2.0)
    x = bt.device_put(np.ones(1 << 18, np.float32)).block_until_ready()
    f(x).block_until_ready()  # compiled outside the scope
    with bt.profiler.memory_scope("call") as s:
        y = f(x).block_until_ready()
    key = (dev0(), "device")
    assert s.bytes_at_exit[key] == s.bytes_at_entry[key] + y.nbytes == in_use()
    outs = [a for a in s.arrays_at_peak() if a["in_scope"] and a["bytes"] == y.nbytes]
    assert outs and outs[0]["kind"] == "array" and outs[0]["shape"] == (1 << 18,)
    del y, x


def scale_and_sum(x):
    # x * 3 is read twice, so it is materialized: a reduction would read a
    # producer of its own a piece at a time (a fused reduction, no temporary).
    y = x * 3.0
    return y.sum() + y.max()


def test_scope_sees_the_temporaries_of_a_program():
    f = bt.jit(scale_and_sum)
    x = bt.device_put(np.ones(1 << 18, np.float32)).block_until_ready()
    temp = f.lower(x).compile().memory_analysis().temp_size_in_bytes
    f(x).block_until_ready()  # compiled outside the scope
    with bt.profiler.memory_scope("temps") as s:
        y = f(x).block_until_ready()
    key = (dev0(), "device")
    at_peak = s.arrays_at_peak()
    out = [a for a in at_peak if a["kind"] == "array" and a["in_scope"]]
    assert len(out) == 1 and out[0]["shape"] == () and out[0]["bytes"] >= y.nbytes
    assert s.bytes_at_exit[key] == s.bytes_at_entry[key] + out[0]["bytes"]
    assert temp > 0  # x * 3
    temps = [a for a in at_peak if a["kind"] == "temporary"]
    assert len(temps) == 1 and temps[0]["in_scope"]
    assert "scale_and_sum" in temps[0]["label"]
    assert temps[0]["bytes"] >= temp and temps[0]["shape"] is None
    assert s.peak() >= s.bytes_at_exit[key] + temp
    del y, x


def test_scope_ends_on_an_exception():
    with pytest.raises(KeyError), bt.profiler.memory_scope("boom") as s:
        t = make_temporary().block_until_ready()
        raise KeyError("x")
    assert s.peak() >= s.bytes_at_entry[(dev0(), "device")] + 8 * MiB
    del t


def test_scope_of_other_memory_kinds():
    with bt.profiler.memory_scope("pinned") as s:
        h = bt.device_put(np.ones(1 << 16, np.float32), memory_kind="pinned_host")
        h.block_until_ready()
    key = (dev0(), "pinned_host")
    assert s.peak_bytes[key] >= s.bytes_at_entry[key] + h.nbytes
    assert s.at_exit(memory_kind="pinned_host") == in_use("pinned_host")
    assert any(
        a["bytes"] == h.nbytes for a in s.arrays_at_peak(memory_kind="pinned_host")
    )
    del h


def test_memory_profile_shows_staging_of_an_overwrite_in_flight(tmp_path):
    # device_put(into=x) while a program still reads x snapshots the new value
    # through the pinned staging pool; its chunks are allocations of their own.
    busy = bt.jit(lambda a: bt.lax.fori_loop(0, 40, lambda i, v: bnp.sin(v), a))
    x = bt.device_put(np.ones(1 << 20, np.float32)).block_until_ready()
    busy(x).block_until_ready()  # compiled
    with bt.profiler.record_memory_history():
        y = busy(x)  # runs on the compute queue, reading x
        x2 = bt.device_put(np.full(1 << 20, 2.0, np.float32), into=x)
        got, _ = profile_samples(tmp_path)
        history = bt.profiler.memory_snapshot()["history"]
        bt.block_until_ready((x2, y))
    staging = [s for s in got if s["labels"]["kind"] == "staging"]
    assert staging, [s["labels"] for s in got]
    assert all(s["labels"]["memory_kind"] == "pinned_host" for s in staging)
    assert sum(s["values"][1] for s in staging) >= 1 << 20  # at least one chunk
    kinds = {(e["type"], e["kind"]) for e in history}
    assert ("overwrite", "array") in kinds
    np.testing.assert_array_equal(np.asarray(x2)[:3], 2.0)
    del x2, y
