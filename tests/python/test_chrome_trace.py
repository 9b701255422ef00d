"""Chrome trace JSON (baton._chrome_trace, bt.profiler.trace), DESIGN 5.5.

``check_trace_format`` checks a trace against the Trace Event Format (the
JSON chrome://tracing and Perfetto load): every event has the fields its
phase needs. Perfetto's Python ``trace_processor`` downloads its binary at
run time, which this workplace cannot do, so the format check is the
validation here. The end-to-end tests record real work: a transfer, a
jitted call, a free, a donation and an overwrite.
"""

import json
import numbers
import os

import numpy as np
import pytest

import baton as bt
from baton import _chrome_trace

from _util import in_use

KINDS = ("device", "pinned_host", "unpinned_host")

# Exact byte counts: no garbage collection may free arrays mid-test.
pytestmark = pytest.mark.usefixtures("no_gc")


PHASES = {"X", "i", "I", "C", "M", "B", "E"}
METADATA_NAMES = {
    "process_name",
    "thread_name",
    "process_sort_index",
    "thread_sort_index",
    "process_labels",
}


def check_trace_format(trace):
    """Asserts that ``trace`` (the dict, or the JSON text) is a valid Chrome
    trace: returns the dict."""
    if isinstance(trace, (str, bytes)):
        trace = json.loads(trace)
    assert isinstance(trace, dict) and isinstance(trace["traceEvents"], list)
    assert trace.get("displayTimeUnit", "ms") in ("ms", "ns")
    for e in trace["traceEvents"]:
        where = f"in event {e}"
        assert isinstance(e, dict), where
        assert e.get("ph") in PHASES, where
        for field in ("name", "pid", "tid", "ts"):
            assert field in e, f"{field} missing {where}"
        assert isinstance(e["name"], str) and e["name"], where
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int), where
        assert isinstance(e["ts"], numbers.Real) and e["ts"] >= 0, where
        if "args" in e:
            assert isinstance(e["args"], dict), where
        ph = e["ph"]
        if ph == "X":
            assert isinstance(e["dur"], numbers.Real) and e["dur"] >= 0, where
        elif ph in ("i", "I"):
            assert e["s"] in ("g", "p", "t"), where
        elif ph == "C":
            assert e["args"], where
            for v in e["args"].values():
                assert isinstance(v, numbers.Real), where
        elif ph == "M":
            assert e["name"] in METADATA_NAMES, where
            if e["name"] in ("process_name", "thread_name"):
                assert isinstance(e["args"]["name"], str), where
    # Names of processes and threads: one each, and every track is named.
    process_names, thread_names = {}, {}
    for e in trace["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name":
            assert e["pid"] not in process_names
            process_names[e["pid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "thread_name":
            assert (e["pid"], e["tid"]) not in thread_names
            thread_names[(e["pid"], e["tid"])] = e["args"]["name"]
    for e in trace["traceEvents"]:
        if e["ph"] != "M":
            assert e["pid"] in process_names, e
        if e["ph"] in ("X", "i", "I"):
            assert (e["pid"], e["tid"]) in thread_names, e
    return trace


def _event(type, t, **kw):
    e = {
        "type": type,
        "begin_ns": t,
        "end_ns": t,
        "device": 0,
        "queue": "host",
        "memory_kind": "device",
        "bytes": 0,
        "address": 0,
        "id": 0,
        "kind": "",
        "label": "",
        "bytes_in_use": -1,
        "frames": [],
    }
    e.update(kw)
    return e


SYNTHETIC = [
    _event(
        "alloc",
        1500,
        bytes=4096,
        id=7,
        kind="array",
        label="float32(32, 32)",
        bytes_in_use=8192,
        address=0xABC000,
        frames=[("make", "u.py", 3), ("main", "u.py", 10)],
    ),
    _event(
        "transfer",
        2000,
        end_ns=5000,
        queue="host_to_device",
        bytes=4096,
        label="device_put",
    ),
    _event("execute", 6000, end_ns=9500, queue="compute", label="step"),
    _event(
        "donate", 6000, id=7, kind="array", label="float32(32, 32) -> step", bytes=4096
    ),
    _event(
        "alloc",
        6100,
        device=1,
        memory_kind="pinned_host",
        queue="compute",
        bytes=64,
        id=8,
        kind="temporary",
        label="temporaries of step",
        bytes_in_use=64,
    ),
    _event("free", 9400, device=1, memory_kind="pinned_host", id=8, bytes_in_use=0),
    _event("overwrite", 9600, id=9, kind="array", label="int8(4)", bytes=4),
    _event("execute", 500, end_ns=700, queue="mystery", label="early"),
]


def test_synthetic_trace_is_valid_and_complete():
    t = _chrome_trace.build_trace(
        SYNTHETIC,
        start_ns=1000,
        device_names={0: "cpu:0", 1: "cpu:1"},
        initial_counters={(0, "device"): 4096, (1, "pinned_host"): 0},
        end_ns=10000,
    )
    check_trace_format(json.dumps(t))
    assert t["displayTimeUnit"] == "ns"
    ev = t["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
    assert procs == {1: "cpu:0", 2: "cpu:1"}
    threads = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in ev
        if e["name"] == "thread_name"
    }
    tid = _chrome_trace.QUEUE_TIDS
    assert threads[(1, tid["host_to_device"])] == "host_to_device"
    assert threads[(1, tid["compute"])] == "compute"
    assert threads[(1, tid["host"])].startswith("host")
    assert threads[(2, tid["compute"])] == "compute"
    assert "mystery" in threads.values()  # an unknown queue gets its own track
    xs = {e["name"]: e for e in ev if e["ph"] == "X"}
    assert xs["step"]["ts"] == 5.0 and xs["step"]["dur"] == 3.5
    assert xs["step"]["tid"] == tid["compute"] and xs["step"]["cat"] == "execute"
    assert xs["device_put"]["args"] == {"bytes": 4096, "memory_kind": "device"}
    assert xs["device_put"]["ts"] == 1.0 and xs["device_put"]["dur"] == 3.0
    assert xs["early"]["ts"] == 0.0 and xs["early"]["dur"] == 0.0  # clipped
    inst = [e for e in ev if e["ph"] == "i"]
    assert [e["name"].split()[0] for e in inst] == [
        "alloc",
        "donate",
        "alloc",
        "free",
        "overwrite",
    ]
    a = inst[0]
    assert a["name"] == "alloc float32(32, 32)" and a["ts"] == 0.5
    assert a["args"]["shape"] == "(32, 32)" and a["args"]["dtype"] == "float32"
    assert a["args"]["kind"] == "array" and a["args"]["bytes"] == 4096
    assert a["args"]["id"] == 7 and a["args"]["memory_kind"] == "device"
    assert a["args"]["stack"] == ["make (u.py:3)", "main (u.py:10)"]
    assert a["args"]["address"] == hex(0xABC000)
    assert inst[1]["args"]["shape"] == "(32, 32)" and inst[1]["args"]["to"] == "step"
    assert "dtype" not in inst[2]["args"]  # a temporary has no dtype or shape
    counters = [(e["pid"], e["name"], e["ts"], e["args"]) for e in ev if e["ph"] == "C"]
    assert counters == [
        (1, "bytes_in_use device", 0.0, {"device": 4096}),
        (2, "bytes_in_use pinned_host", 0.0, {"pinned_host": 0}),
        (1, "bytes_in_use device", 0.5, {"device": 8192}),
        (2, "bytes_in_use pinned_host", 5.1, {"pinned_host": 64}),
        (2, "bytes_in_use pinned_host", 8.4, {"pinned_host": 0}),
    ]
    assert t["otherData"]["duration_ns"] == 9000
    body = [e["ts"] for e in ev if e["ph"] != "M"]
    assert body == sorted(body)


def test_gpu_spans_sit_on_their_streams_rows():
    # On a GPU the runtime records a span once the device is past the work,
    # with the device's own times (cuda_backend.h): records arrive out of
    # time order, and a span may begin before host events recorded earlier.
    events = [
        _event("alloc", 1200, kind="array", label="float32(4)", bytes=16),
        _event("execute", 3000, end_ns=7000, queue="compute", label="f"),
        _event(
            "transfer",
            1000,
            end_ns=2500,
            queue="host_to_device",
            bytes=16,
            label="device_put",
        ),
        _event(
            "transfer",
            7100,
            end_ns=7400,
            queue="device_to_host",
            bytes=16,
            label="device_get",
        ),
    ]
    t = _chrome_trace.build_trace(
        events, start_ns=1000, device_names={0: "cuda:0"}, end_ns=8000
    )
    check_trace_format(t)
    ev = t["traceEvents"]
    threads = {e["tid"]: e["args"]["name"] for e in ev if e["name"] == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
    assert procs == {1: "cuda:0"}
    spans = {
        e["name"]: (threads[e["tid"]], e["ts"], e["dur"]) for e in ev if e["ph"] == "X"
    }
    assert spans == {
        "f": ("compute", 2.0, 4.0),
        "device_put": ("host_to_device", 0.0, 1.5),
        "device_get": ("device_to_host", 6.1, 0.3),
    }
    body = [e["ts"] for e in ev if e["ph"] != "M"]
    assert body == sorted(body)


def test_write_trace_plain_and_gzip(tmp_path):
    import gzip

    t = _chrome_trace.build_trace(SYNTHETIC, start_ns=0, device_names={0: "cpu:0"})
    p = _chrome_trace.write_trace(tmp_path / "t.json", t)
    with open(p) as f:
        assert check_trace_format(f.read()) == json.loads(json.dumps(t))
    p = _chrome_trace.write_trace(str(tmp_path / "t.json.gz"), t)
    with open(p, "rb") as f:
        check_trace_format(gzip.decompress(f.read()))


# --- bt.profiler.trace end to end -------------------------------------------------


def _load(path):
    with open(path) as f:
        return check_trace_format(f.read())


def _instants(trace, type):
    return [
        e
        for e in trace["traceEvents"]
        if e["ph"] == "i" and e["name"].split()[0] == type
    ]


def _last_counter(trace, pid, kind):
    cs = [
        e
        for e in trace["traceEvents"]
        if e["ph"] == "C" and e["pid"] == pid and e["name"] == f"bytes_in_use {kind}"
    ]
    return cs[-1]["args"][kind] if cs else None


def scaled_sum(x):
    return (x * 2.0).sum()


def test_trace_of_transfer_execute_free_donate_overwrite(tmp_path, no_gc):
    step = bt.jit(scaled_sum)

    def bump(x):
        return x + 1.0

    bump = bt.jit(bump)
    host = np.arange(1 << 16, dtype=np.float32)  # 256 KiB
    with bt.profiler.trace(str(tmp_path)) as t:
        x = bt.device_put(host).block_until_ready()
        y = step(x).block_until_ready()
        z = bt.device_put(host)
        z.delete()
        w = bump(bt.donate(x)).block_until_ready()
        v = bt.device_put(np.ones(1 << 16, np.float32), into=w).block_until_ready()
        # z's free waits for its transfer; on a loaded machine (or an
        # asynchronous device) it may land after v is ready: let it land
        # inside the trace.
        bt.effects_barrier()
        stats = {(d.id, k): bt.memory_stats(d, k) for d in bt.devices() for k in KINDS}
    assert t.path == os.path.join(str(tmp_path), "baton.trace.json")
    assert float(y) == float(host.sum() * 2)
    trace = _load(t.path)
    ev = trace["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
    pid = _chrome_trace.pid_of(bt.devices()[0].id)
    assert procs[pid] == str(bt.devices()[0])
    threads = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in ev
        if e["name"] == "thread_name"
    }
    xs = [e for e in ev if e["ph"] == "X"]
    executes = [e for e in xs if e["cat"] == "execute"]
    assert "scaled_sum" in [e["name"] for e in executes]
    transfers = [e for e in xs if e["cat"] == "transfer"]
    assert any(e["args"]["bytes"] == host.nbytes for e in transfers)
    assert all(threads[(e["pid"], e["tid"])] for e in xs)
    allocs = _instants(trace, "alloc")
    mine = [
        e
        for e in allocs
        if e["args"]["kind"] == "array" and e["args"].get("shape") == "(65536,)"
    ]
    assert mine and all(e["args"]["dtype"] == "float32" for e in mine)
    assert all(e["args"]["bytes"] == host.nbytes for e in mine)
    assert any(
        "test_trace_of_transfer_execute_free_donate_overwrite" in s
        for e in mine
        for s in e["args"]["stack"]
    )
    x_id = mine[0]["args"]["id"]
    z_ids = {e["args"]["id"] for e in mine[1:]}
    freed = {e["args"]["id"] for e in _instants(trace, "free")}
    assert freed & z_ids  # z.delete()
    donated = [e for e in _instants(trace, "donate") if e["args"]["id"] == x_id]
    assert len(donated) == 1 and donated[0]["args"]["to"].endswith("bump")  # qualname
    d = donated[0]["args"]
    assert d["shape"] == "(65536,)" and d["dtype"] == "float32"
    assert d["kind"] == "array" and d["bytes"] == host.nbytes
    assert d["memory_kind"] == "device"
    # w holds x's storage: the overwrite is of the same allocation.
    over = [e for e in _instants(trace, "overwrite") if e["args"]["id"] == x_id]
    assert len(over) == 1 and over[0]["args"]["shape"] == "(65536,)"
    assert over[0]["args"]["to"].startswith("device_put")
    # The counters end at bytes_in_use, for every memory kind.
    for d in bt.devices():
        for kind in d.memory_kinds:
            last = _last_counter(trace, _chrome_trace.pid_of(d.id), kind)
            assert last == stats[(d.id, kind)]["bytes_in_use"], (d, kind)
            assert last == bt.memory_stats(d, kind)["bytes_in_use"], (d, kind)
    assert np.asarray(v)[0] == 1.0
    del v, y


def test_counters_start_at_the_true_value(tmp_path, no_gc):
    keep = bt.device_put(np.zeros(1 << 16, np.float32)).block_until_ready()
    before = in_use()
    path = bt.profiler.start_trace(str(tmp_path / "t.json"))
    assert path == str(tmp_path / "t.json")
    x = bt.device_put(np.zeros(1 << 14, np.float32)).block_until_ready()
    assert bt.profiler.stop_trace() == path
    trace = _load(path)
    pid = _chrome_trace.pid_of(bt.devices()[0].id)
    cs = [
        e["args"]["device"]
        for e in trace["traceEvents"]
        if e["ph"] == "C" and e["pid"] == pid and e["name"] == "bytes_in_use device"
    ]
    assert cs[0] == before and cs[-1] == in_use() == before + x.nbytes
    del keep, x


def test_one_trace_at_a_time(tmp_path):
    with pytest.raises(RuntimeError, match="no trace"):
        bt.profiler.stop_trace()
    with bt.profiler.trace(tmp_path / "a") as t:
        with pytest.raises(RuntimeError, match="already"):
            bt.profiler.start_trace(tmp_path / "b")
    assert os.path.exists(t.path) and not os.path.exists(tmp_path / "b")
    with pytest.raises(ZeroDivisionError), bt.profiler.trace(tmp_path / "c") as t:
        1 / 0  # noqa: B018
    _load(t.path)  # written all the same
    assert t.events is not None


TWO_DEVICES = """
import json, os, sys, tempfile
import numpy as np
import baton as bt
sys.path.insert(0, {tests!r})
from test_chrome_trace import check_trace_format
from test_pprof import decode_profile, samples
d0, d1 = bt.devices()
out = tempfile.mkdtemp()
with bt.profiler.trace(out) as t:
    a = bt.device_put(np.ones(1024, np.float32), d0).block_until_ready()
    b = bt.device_put(np.ones(2048, np.float32), d1).block_until_ready()
    c = bt.jit(lambda x: x * 2.0)(b).block_until_ready()
trace = check_trace_format(open(t.path).read())
ev = trace["traceEvents"]
procs = {{e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}}
assert sorted(procs.values()) == [str(d0), str(d1)], procs
pid1 = [p for p, n in procs.items() if n == str(d1)][0]
xs = [e for e in ev if e["ph"] == "X" and e["cat"] == "execute"]
assert xs and all(e["pid"] == pid1 for e in xs), xs
for d in (d0, d1):
    pid = [p for p, n in procs.items() if n == str(d)][0]
    cs = [e for e in ev if e["ph"] == "C" and e["pid"] == pid
          and e["name"] == "bytes_in_use device"]
    assert cs[-1]["args"]["device"] == bt.memory_stats(d)["bytes_in_use"], cs
path = os.path.join(out, "mem.prof")
bt.profiler.save_memory_profile(path)
got = samples(decode_profile(open(path, "rb").read()))
devices = {{s["labels"]["device"] for s in got if s["values"][1] == 8192}}
assert str(d1) in devices, got
with bt.profiler.memory_scope("two") as s:
    e = bt.device_put(np.ones(4096, np.float32), d1).block_until_ready()
assert s.at_exit(d1) == s.bytes_at_entry[(str(d1), "device")] + e.nbytes
assert s.at_exit(str(d0)) == s.bytes_at_entry.get((str(d0), "device"), 0)
print("ok")
"""


def test_two_devices_have_a_process_each():
    from _util import run_with_two_devices

    run_with_two_devices(TWO_DEVICES.format(tests=os.path.dirname(__file__)))
