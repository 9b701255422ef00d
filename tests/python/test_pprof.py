"""The pprof encoder (baton._pprof), checked against the published schema.

Profiles are decoded with pprof's own ``proto/profile.proto`` (Debian's
golang-github-google-pprof-dev ships it), compiled at test time by ``protoc``
(protobuf-compiler) to a descriptor set and read with the ``protobuf``
package (requirements-dev.txt): never with a decoder of ours. Where Go and
pprof's sources are installed (golang-go, golang-github-google-pprof-dev;
tools/install_deps.sh), the real ``pprof`` tool is built offline and must read
the files too. ``decode_profile`` and ``pprof_tool`` are also used by
test_profiler.py.
"""

import functools
import gzip
import os
import shutil
import subprocess
import tempfile

import pytest

from baton import _pprof

PROFILE_PROTO = "/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto"
PPROF_GOPATH = "/usr/share/gocode"
_MISSING = "(tools/install_deps.sh installs it)"


@functools.cache
def _profile_class_or_reason():
    if not os.path.exists(PROFILE_PROTO):
        return None, f"pprof's profile.proto is not installed {_MISSING}"
    protoc = shutil.which("protoc")
    if protoc is None:
        return None, f"protoc is not installed {_MISSING}"
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:
        return None, "the protobuf package is not installed (requirements-dev.txt)"
    out = os.path.join(tempfile.mkdtemp(prefix="baton_pprof_"), "profile.desc")
    subprocess.run(
        [
            protoc,
            f"--proto_path={os.path.dirname(PROFILE_PROTO)}",
            f"--descriptor_set_out={out}",
            os.path.basename(PROFILE_PROTO),
        ],
        check=True,
    )
    with open(out, "rb") as f:
        files = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    message = pool.FindMessageTypeByName("perftools.profiles.Profile")
    return message_factory.GetMessageClass(message), None


def profile_class():
    """The ``perftools.profiles.Profile`` class of the published schema."""
    cls, reason = _profile_class_or_reason()
    if cls is None:
        pytest.skip(reason)
    return cls


def decode_profile(data):
    """The Profile message of a pprof file's bytes (gzip-compressed or not),
    decoded with the published schema."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    profile = profile_class()()
    profile.ParseFromString(data)
    return profile


def samples(profile):
    """The samples of a decoded profile as plain dicts: ``values``,
    ``labels`` (key -> str, or (num, unit)) and ``frames`` (function, file,
    line), leaf first."""
    st = list(profile.string_table)
    functions = {f.id: f for f in profile.function}
    locations = {loc.id: loc for loc in profile.location}
    out = []
    for s in profile.sample:
        labels = {}
        for label in s.label:
            if label.str:
                labels[st[label.key]] = st[label.str]
            else:
                labels[st[label.key]] = (label.num, st[label.num_unit])
        frames = []
        for lid in s.location_id:
            for line in locations[lid].line:
                fn = functions[line.function_id]
                frames.append((st[fn.name], st[fn.filename], line.line))
        out.append({"values": list(s.value), "labels": labels, "frames": frames})
    return out


@functools.cache
def _pprof_tool_or_reason():
    found = shutil.which("pprof")
    if found:
        return found, None
    go = shutil.which("go")
    if go is None or not os.path.isdir(
        os.path.join(PPROF_GOPATH, "src/github.com/google/pprof")
    ):
        return (
            None,
            f"neither pprof nor Go and pprof's sources are installed {_MISSING}",
        )
    work = tempfile.mkdtemp(prefix="baton_pprof_tool_")
    binary = os.path.join(work, "pprof")
    env = dict(
        os.environ,
        GOPATH=PPROF_GOPATH,
        GO111MODULE="off",
        GOFLAGS="",
        GOCACHE=os.path.join(work, "cache"),
        GOPROXY="off",
    )
    r = subprocess.run(
        [go, "build", "-o", binary, "github.com/google/pprof"],
        env=env,
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        return None, f"building pprof failed: {r.stderr[-2000:]}"
    return binary, None


def pprof_tool():
    """The path of Go's pprof (built from Debian's sources if need be)."""
    path, reason = _pprof_tool_or_reason()
    if path is None:
        pytest.skip(reason)
    return path


def run_pprof(path, *args):
    r = subprocess.run(
        [pprof_tool(), *args, path],
        capture_output=True,
        text=True,
        env=dict(os.environ, PPROF_TMPDIR=tempfile.gettempdir(), HOME="/tmp"),
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


# --- the wire format -------------------------------------------------------------


def test_varints_are_protobufs():
    assert _pprof.varint(0) == b"\x00"
    assert _pprof.varint(1) == b"\x01"
    assert _pprof.varint(127) == b"\x7f"
    assert _pprof.varint(128) == b"\x80\x01"
    assert _pprof.varint(300) == b"\xac\x02"
    assert _pprof.varint(-1) == b"\xff" * 9 + b"\x01"  # int64 -1: 10 bytes
    assert _pprof.field_varint(3, 0) == b""  # proto3 default left out
    assert _pprof.field_packed(1, []) == b""


def test_builder_decodes_with_the_published_schema():
    b = _pprof.ProfileBuilder(
        [("allocations", "count"), ("space", "bytes")],
        default_sample_type="space",
        time_nanos=1234567890123,
        duration_nanos=42,
        period_type=("space", "bytes"),
        period=1,
        comments=["hello"],
    )
    stack = [("leaf", "a.py", 10), ("middle", "a.py", 20), ("root", "b.py", 1)]
    b.add_sample([1, 4096], stack, {"dtype": "float32", "n": 7, "size": (64, "bytes")})
    b.add_sample([2, -5], stack[1:], {})  # int64 values may be negative
    b.add_sample([3, 1 << 40], [("leaf", "a.py", 11)], {"dtype": "int8"})
    p = decode_profile(b.serialize())
    st = list(p.string_table)
    assert st[0] == ""
    assert len(st) == len(set(st))  # each string once
    assert [(st[t.type], st[t.unit]) for t in p.sample_type] == [
        ("allocations", "count"),
        ("space", "bytes"),
    ]
    assert st[p.default_sample_type] == "space"
    assert p.time_nanos == 1234567890123 and p.duration_nanos == 42
    assert (st[p.period_type.type], st[p.period_type.unit]) == ("space", "bytes")
    assert p.period == 1 and [st[c] for c in p.comment] == ["hello"]
    got = samples(p)
    assert got[0]["values"] == [1, 4096]
    assert got[0]["frames"] == stack  # location_id[0] is the leaf
    assert got[0]["labels"] == {"dtype": "float32", "n": (7, ""), "size": (64, "bytes")}
    assert got[1]["values"] == [2, -5] and got[1]["frames"] == stack[1:]
    assert got[2]["values"] == [3, 1 << 40]
    # Functions by (name, file), locations by frame: shared, never repeated.
    assert len(p.function) == 3 and len(p.location) == 4
    assert sorted(f.id for f in p.function) == [1, 2, 3]
    assert sorted(loc.id for loc in p.location) == [1, 2, 3, 4]
    assert all(st[f.system_name] == st[f.name] for f in p.function)


def test_a_sample_needs_one_value_per_type():
    b = _pprof.ProfileBuilder([("space", "bytes")])
    with pytest.raises(ValueError, match="1 values"):
        b.add_sample([1, 2])


def test_empty_profile_is_valid():
    p = decode_profile(_pprof.ProfileBuilder([("space", "bytes")]).serialize_gzip())
    assert len(p.sample) == 0 and p.string_table[0] == ""


def test_gzip_is_deterministic():
    b = _pprof.ProfileBuilder([("space", "bytes")])
    b.add_sample([8], [("f", "x.py", 1)])
    gz = b.serialize_gzip()
    assert gz[:2] == b"\x1f\x8b" and gzip.decompress(gz) == b.serialize()
    assert gz == b.serialize_gzip()


# --- memory profiles of allocation records ------------------------------------


def _alloc(id, nbytes, label, kind="array", device=0, memory_kind="device", frames=()):
    return {
        "type": "alloc",
        "begin_ns": 10,
        "end_ns": 10,
        "device": device,
        "queue": "host",
        "memory_kind": memory_kind,
        "bytes": nbytes,
        "address": 0x1000 * id,
        "id": id,
        "kind": kind,
        "label": label,
        "bytes_in_use": -1,
        "frames": [list(f) for f in frames],
    }


ALLOCATIONS = [
    _alloc(1, 4 << 20, "float32(1048576,)", frames=[("allocate", "u.py", 3)]),
    _alloc(2, 4096, "int8(8, 512)", kind="constant", memory_kind="device"),
    _alloc(3, 65536, "temporaries of step", kind="temporary", device=1),
    _alloc(4, 1 << 20, "staging", kind="staging", memory_kind="pinned_host"),
    _alloc(5, 64, "bfloat16()", frames=[("g", "u.py", 9), ("main", "u.py", 20)]),
    _alloc(6, 256, "float32(64)"),  # a 1-D label without the comma
]


def test_memory_profile_one_sample_per_allocation():
    p = decode_profile(
        _pprof.memory_profile(ALLOCATIONS, {0: "cpu:0", 1: "cpu:1"}, time_nanos=5)
    )
    st = list(p.string_table)
    assert [(st[t.type], st[t.unit]) for t in p.sample_type] == [
        ("allocations", "count"),
        ("space", "bytes"),
    ]
    assert st[p.default_sample_type] == "space" and p.time_nanos == 5
    got = samples(p)
    assert [s["values"] for s in got] == [[1, a["bytes"]] for a in ALLOCATIONS]
    big = got[0]["labels"]
    assert big["device"] == "cpu:0" and big["memory_kind"] == "device"
    assert big["kind"] == "array" and big["dtype"] == "float32"
    assert big["shape"] == "(1048576,)" and big["label"] == "float32(1048576,)"
    assert big["bytes"] == (4 << 20, "bytes") and big["id"] == (1, "")
    assert got[0]["frames"] == [("allocate", "u.py", 3)]
    const = got[1]["labels"]
    assert const["kind"] == "constant" and const["shape"] == "(8, 512)"
    assert const["dtype"] == "int8"
    temp = got[2]["labels"]
    assert temp["kind"] == "temporary" and temp["device"] == "cpu:1"
    assert "dtype" not in temp and "shape" not in temp
    assert temp["label"] == "temporaries of step"
    assert got[3]["labels"]["memory_kind"] == "pinned_host"
    assert got[3]["labels"]["kind"] == "staging"
    assert got[4]["labels"]["shape"] == "()" and got[4]["labels"]["dtype"] == "bfloat16"
    assert got[4]["frames"] == [("g", "u.py", 9), ("main", "u.py", 20)]
    assert got[5]["labels"]["shape"] == "(64,)"
    # Every sample has a stack, even without captured frames.
    assert all(s["frames"] for s in got)


def test_parse_label():
    assert _pprof.parse_label("float32(8, 1024)") == ("float32", "(8, 1024)")
    assert _pprof.parse_label("float32()") == ("float32", "()")
    assert _pprof.parse_label("uint8(7)") == ("uint8", "(7,)")
    assert _pprof.parse_label("float32(1048576,)") == ("float32", "(1048576,)")
    assert _pprof.parse_label("temporaries of f") == (None, None)
    assert _pprof.parse_label("") == (None, None)
    assert _pprof.split_label("int8(4,) -> device_put(into=)") == (
        "int8",
        "(4,)",
        "device_put(into=)",
    )
    assert _pprof.split_label("float32() -> <lambda>") == ("float32", "()", "<lambda>")
    assert _pprof.split_label("float32(3)")[2] is None


# --- Go's pprof reads the files -------------------------------------------------


def test_pprof_tool_reads_a_memory_profile(tmp_path):
    path = str(tmp_path / "mem.prof")
    with open(path, "wb") as f:
        f.write(_pprof.memory_profile(ALLOCATIONS, {0: "cpu:0", 1: "cpu:1"}))
    raw = run_pprof(path, "-raw")
    assert "allocations/count" in raw and "space/bytes" in raw
    assert "4194304" in raw and "allocate" in raw
    top = run_pprof(path, "-top", "-sample_index=space")
    assert "allocate" in top
    tags = run_pprof(path, "-tags")
    for value in ("float32", "(1048576,)", "constant", "temporary", "cpu:1"):
        assert value in tags
    count = run_pprof(path, "-top", "-sample_index=allocations")
    assert "6 total" in count or "of 6 total" in count
