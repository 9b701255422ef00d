"""A small encoder for pprof's ``Profile`` protobuf (``bt.profiler``, DESIGN 5.5).

pprof reads a gzip-compressed ``perftools.profiles.Profile`` message, whose
schema is ``proto/profile.proto`` of github.com/google/pprof. This module
writes that message by hand -- varints, length-delimited fields and packed
repeated integers -- so baton needs no protobuf library at run time. The field
numbers below are the published schema's::

    Profile   sample_type=1 sample=2 mapping=3 location=4 function=5
              string_table=6 drop_frames=7 keep_frames=8 time_nanos=9
              duration_nanos=10 period_type=11 period=12 comment=13
              default_sample_type=14
    ValueType type=1 unit=2
    Sample    location_id=1 (packed uint64) value=2 (packed int64) label=3
    Label     key=1 str=2 num=3 num_unit=4
    Location  id=1 mapping_id=2 address=3 line=4 is_folded=5
    Line      function_id=1 line=2 column=3
    Function  id=1 name=2 system_name=3 filename=4 start_line=5

Strings are indices into ``string_table``, whose entry 0 is ``""``. Fields at
their proto3 default (0, empty) are left out, as a protobuf encoder does.

``ProfileBuilder`` is the general builder; ``memory_profile`` turns baton's
allocation records (the dicts of ``_baton._profiler.live_allocations()``) into
a memory profile shaped like ``jax.profiler.save_device_memory_profile``'s: one
sample per allocation, sample types ``allocations/count`` and ``space/bytes``.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

_VARINT = 0
_LEN = 2
_MASK64 = (1 << 64) - 1

# Profile
_SAMPLE_TYPE, _SAMPLE, _LOCATION, _FUNCTION, _STRING_TABLE = 1, 2, 4, 5, 6
_TIME_NANOS, _DURATION_NANOS, _PERIOD_TYPE, _PERIOD = 9, 10, 11, 12
_COMMENT, _DEFAULT_SAMPLE_TYPE = 13, 14

LabelValue = Union[str, int, "tuple[int, str]"]


def varint(value: int) -> bytes:
    """The base-128 varint of ``value``; negative values as 64-bit two's
    complement (10 bytes), as protobuf encodes ``int64``.

    >>> varint(300)
    b'\\xac\\x02'
    """
    value &= _MASK64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(field: int, wire_type: int) -> bytes:
    return varint((field << 3) | wire_type)


def field_varint(field: int, value: int) -> bytes:
    """A varint field; empty for 0 (the proto3 default)."""
    if not value:
        return b""
    return _key(field, _VARINT) + varint(value)


def field_bytes(field: int, data: bytes) -> bytes:
    """A length-delimited field (string, bytes or embedded message)."""
    return _key(field, _LEN) + varint(len(data)) + data


def field_packed(field: int, values: Iterable[int]) -> bytes:
    """A packed repeated integer field; empty when there are no values."""
    body = b"".join(varint(v) for v in values)
    if not body:
        return b""
    return field_bytes(field, body)


def _value_type(type_index: int, unit_index: int) -> bytes:
    return field_varint(1, type_index) + field_varint(2, unit_index)


class ProfileBuilder:
    """Builds one pprof ``Profile``.

    >>> b = ProfileBuilder([("allocations", "count"), ("space", "bytes")])
    >>> b.add_sample([1, 4096], [("f", "a.py", 3)], {"dtype": "float32"})
    >>> data = b.serialize()        # the Profile message, uncompressed
    >>> gz = b.serialize_gzip()     # what pprof reads

    Frames are ``(function, file, line)``, innermost (leaf) first, which is
    the order of ``Sample.location_id``. Each distinct function ``(name,
    file)`` becomes one ``Function`` and each distinct frame one ``Location``
    with one ``Line``. Label values are a str (a string label), an int (a
    numeric label) or ``(int, unit)``.
    """

    def __init__(
        self,
        sample_types: Sequence[tuple[str, str]],
        *,
        default_sample_type: str | None = None,
        period_type: tuple[str, str] | None = None,
        period: int = 0,
        time_nanos: int = 0,
        duration_nanos: int = 0,
        comments: Sequence[str] = (),
    ) -> None:
        self._strings: list[str] = [""]
        self._string_index: dict[str, int] = {"": 0}
        self._functions: dict[tuple[str, str], int] = {}
        self._function_msgs: list[bytes] = []
        self._locations: dict[tuple[str, str, int], int] = {}
        self._location_msgs: list[bytes] = []
        self._samples: list[bytes] = []
        self._sample_types = [(self.string(t), self.string(u)) for t, u in sample_types]
        self._default_sample_type = (
            self.string(default_sample_type) if default_sample_type else 0
        )
        self._period_type = (
            (self.string(period_type[0]), self.string(period_type[1]))
            if period_type
            else None
        )
        self._period = period
        self._time_nanos = time_nanos
        self._duration_nanos = duration_nanos
        self._comments = [self.string(c) for c in comments]

    def string(self, s: str) -> int:
        """The index of ``s`` in the string table (added on first use)."""
        s = str(s)
        index = self._string_index.get(s)
        if index is None:
            index = len(self._strings)
            self._strings.append(s)
            self._string_index[s] = index
        return index

    def function(self, name: str, filename: str, start_line: int = 0) -> int:
        """The id (from 1) of the function ``name`` defined in ``filename``."""
        key = (str(name), str(filename))
        fid = self._functions.get(key)
        if fid is None:
            fid = len(self._function_msgs) + 1
            name_index = self.string(key[0])
            self._function_msgs.append(
                field_varint(1, fid)
                + field_varint(2, name_index)
                + field_varint(3, name_index)  # system_name: the same name
                + field_varint(4, self.string(key[1]))
                + field_varint(5, start_line)
            )
            self._functions[key] = fid
        return fid

    def location(self, name: str, filename: str, line: int) -> int:
        """The id (from 1) of the location of one frame."""
        key = (str(name), str(filename), int(line))
        lid = self._locations.get(key)
        if lid is None:
            lid = len(self._location_msgs) + 1
            line_msg = field_varint(1, self.function(key[0], key[1])) + field_varint(
                2, key[2]
            )
            self._location_msgs.append(field_varint(1, lid) + field_bytes(4, line_msg))
            self._locations[key] = lid
        return lid

    def add_sample(
        self,
        values: Sequence[int],
        frames: Iterable[Sequence[Any]] = (),
        labels: Mapping[str, LabelValue] | None = None,
    ) -> None:
        """Adds one sample: one value per sample type, its stack (leaf first)
        and its labels."""
        if len(values) != len(self._sample_types):
            raise ValueError(
                f"a sample needs {len(self._sample_types)} values, got {len(values)}"
            )
        location_ids = [self.location(*_frame(f)) for f in frames]
        msg = field_packed(1, location_ids) + field_packed(2, values)
        for key, value in (labels or {}).items():
            label = field_varint(1, self.string(key))
            if isinstance(value, str):
                label += field_varint(2, self.string(value))
            elif isinstance(value, tuple):
                label += field_varint(3, int(value[0]))
                label += field_varint(4, self.string(value[1]))
            else:
                label += field_varint(3, int(value))
            msg += field_bytes(3, label)
        self._samples.append(msg)

    def serialize(self) -> bytes:
        """The encoded ``Profile`` message."""
        out = bytearray()
        for t, u in self._sample_types:
            out += field_bytes(_SAMPLE_TYPE, _value_type(t, u))
        for sample in self._samples:
            out += field_bytes(_SAMPLE, sample)
        for loc in self._location_msgs:
            out += field_bytes(_LOCATION, loc)
        for fn in self._function_msgs:
            out += field_bytes(_FUNCTION, fn)
        out += field_varint(_TIME_NANOS, self._time_nanos)
        out += field_varint(_DURATION_NANOS, self._duration_nanos)
        if self._period_type is not None:
            out += field_bytes(_PERIOD_TYPE, _value_type(*self._period_type))
        out += field_varint(_PERIOD, self._period)
        out += field_packed(_COMMENT, self._comments)
        out += field_varint(_DEFAULT_SAMPLE_TYPE, self._default_sample_type)
        # The string table last: every index above has been handed out.
        for s in self._strings:
            out += field_bytes(_STRING_TABLE, s.encode("utf-8"))
        return bytes(out)

    def serialize_gzip(self) -> bytes:
        """The encoded message, gzip-compressed (what pprof reads)."""
        return gzip.compress(self.serialize(), mtime=0)


def _frame(frame: Sequence[Any]) -> tuple[str, str, int]:
    name = str(frame[0]) if len(frame) > 0 else "?"
    filename = str(frame[1]) if len(frame) > 1 else ""
    line = int(frame[2]) if len(frame) > 2 and frame[2] is not None else 0
    return name or "?", filename, line


# "float32(8, 1024)"; donations and overwrites add " -> <where it went>".
_LABEL_RE = re.compile(r"^(\w+)\(([^()]*)\)(?: -> (.*))?$")


def split_label(label: str) -> tuple[str | None, str | None, str | None]:
    """``(dtype, shape, target)`` of an allocation's label: dtype and shape
    for arrays and constants (else None), and for a donation or overwrite
    what received the storage (``"float32(4,) -> step"`` -> ``"step"``).

    >>> split_label("float32(8, 1024) -> device_put(into=)")
    ('float32', '(8, 1024)', 'device_put(into=)')
    """
    m = _LABEL_RE.match(label or "")
    if m is None:
        return None, None, None
    inner = m.group(2).strip()
    if inner and "," not in inner:
        inner += ","  # one dimension: "(n,)" as Python prints a 1-tuple
    return m.group(1), f"({inner})", m.group(3)


def parse_label(label: str) -> tuple[str | None, str | None]:
    """``(dtype, shape)`` of an array allocation's label, or ``(None, None)``.

    >>> parse_label("float32(8, 1024)")
    ('float32', '(8, 1024)')
    >>> parse_label("temporaries of f")
    (None, None)
    """
    return split_label(label)[:2]


def memory_profile(
    allocations: Iterable[Mapping[str, Any]],
    device_names: Mapping[int, str] | None = None,
    *,
    time_nanos: int = 0,
) -> bytes:
    """The gzip-compressed pprof profile of ``allocations`` (allocation
    dicts: ``bytes``, ``device``, ``memory_kind``, ``kind``, ``label``, ``id``,
    ``address``, ``frames``), one sample per allocation with the values
    ``[1, bytes]`` of sample types ``allocations/count`` and ``space/bytes``,
    and string labels ``device`` (its name, e.g. ``"cpu:0"``), ``memory_kind``,
    ``kind``, ``label`` and, for arrays and constants, ``dtype`` and ``shape``
    (as Python prints a tuple, e.g. ``"(1048576,)"``).

    >>> gz = memory_profile([{"bytes": 64, "device": 0, "memory_kind": "device",
    ...     "kind": "array", "label": "float32(16)", "id": 1,
    ...     "frames": [["make", "m.py", 3]]}], {0: "cpu:0"})
    """
    names = dict(device_names or {})
    builder = ProfileBuilder(
        [("allocations", "count"), ("space", "bytes")],
        default_sample_type="space",
        time_nanos=time_nanos,
        comments=["baton device memory profile: one sample per live allocation"],
    )
    for a in allocations:
        device = a.get("device", 0)
        labels: dict[str, LabelValue] = {
            "device": names.get(device, str(device)),
            "memory_kind": str(a.get("memory_kind", "")),
            "kind": str(a.get("kind", "")),
        }
        label = str(a.get("label", ""))
        if label:
            labels["label"] = label
        dtype, shape = parse_label(label)
        if dtype is not None and a.get("kind") in ("array", "constant", ""):
            labels["dtype"] = dtype
            labels["shape"] = shape
        if a.get("id"):
            labels["id"] = int(a["id"])
        nbytes = int(a.get("bytes", 0))
        labels["bytes"] = (nbytes, "bytes")
        frames = a.get("frames") or [["<unknown>", "<baton>", 0]]
        builder.add_sample([1, nbytes], frames, labels)
    return builder.serialize_gzip()
