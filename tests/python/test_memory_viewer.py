"""The memory viewer page (baton._memory_viewer): self-contained, and drawn right.

The page is checked in a real headless browser (Chromium, installed by
tools/install_deps.sh; the rendering tests are skipped without one): the
DOM it dumps after its script ran must hold one SVG chart per (device,
memory kind), with as many bands as the snapshot has allocations there and the
peak computed here from the events, and each band's stack as hover text; its
screenshot must not be blank. Set BATON_VIEWER_SCREENSHOT=path to keep the
screenshot of the main snapshot.
"""

import os
import pathlib
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser

import pytest

from baton._memory_viewer import write_memory_viewer

EMPTY_MESSAGE = (
    "no memory events recorded: call bt.profiler.record_memory_history() first"
)
T0 = 1 << 60  # steady-clock ns beyond 2**53: the page must count from the first


def _frames(i):
    return [
        [f"inner_{i}", "/src/model.py", 10 + i],
        ["train_step", "/src/train.py", 42],
        ["<module>", "/src/main.py", 7],
    ]


def _event(typ, t, dev, mk, nbytes, aid, kind="array", label=None, frames=None):
    return {
        "type": typ,
        "begin_ns": T0 + t * 1000,
        "end_ns": T0 + t * 1000 + 50,
        "device": dev,
        "queue": f"queue{dev}",
        "memory_kind": mk,
        "bytes": nbytes,
        "address": 0x10000 + aid * 4096,
        "id": aid,
        "kind": kind,
        "label": label if label is not None else f"float32({nbytes // 4},)",
        "bytes_in_use": -1,
        "frames": frames if frames is not None else _frames(aid),
    }


def _snapshot():
    """Three charts; pre-existing, freed, live-at-end allocations and markers."""
    kinds = ["array", "constant", "temporary", "staging"]
    h = []
    t = 0

    def add(*args, **kwargs):
        nonlocal t
        h.append(_event(args[0], t, *args[1:], **kwargs))
        t += 1

    # allocated before recording started: only the free is in the history
    add("free", 0, "device", 1 << 20, 1, label="float32(512, 512)")
    for i in range(2, 30):
        add("alloc", 0, "device", 4096 * (i % 7 + 1), i, kind=kinds[i % 4])
        if i % 3 == 0:
            add("free", 0, "device", 4096 * (i % 7 + 1), i, kind=kinds[i % 4])
        if i == 10:
            add("donate", 0, "device", 4096 * 4, i)
        if i == 20:
            add("overwrite", 0, "device", 4096 * 7, i)
    add("alloc", 0, "pinned_host", 65536, 100, kind="staging", label="staging chunk")
    add("alloc", 1, "device", 2 << 20, 200, label="float32(1024, 512)")
    add("free", 0, "pinned_host", 65536, 100, kind="staging", label="staging chunk")
    add("alloc", 1, "device", 1 << 20, 201)
    add("free", 1, "device", 2 << 20, 200, label="float32(1024, 512)")
    for e in h:  # the allocator's count, for the pinned space alone
        if e["memory_kind"] == "pinned_host":
            e["bytes_in_use"] = 65536 if e["type"] == "alloc" else 0
    live = [
        # live all along, never in the history
        {
            "device": 1,
            "memory_kind": "device",
            "bytes": 3 << 19,
            "id": 300,
            "kind": "constant",
            "label": "int32(393216,)",
            "frames": _frames(300),
        },
    ]
    segments = [
        {
            "device": 0,
            "memory_kind": "device",
            "address": 0x10000,
            "size": 8 << 20,
            "blocks": [{"offset": 0, "size": 4096, "state": "live", "id": 2}],
        },
    ]
    return {
        "segments": segments,
        "history": h,
        "live": live,
        "device_names": {0: "cpu:0", 1: "cpu:1"},
    }


def _expected(snapshot):
    """{(device, memory kind): (allocations, peak bytes)} computed from the events."""
    charts = {}
    for e in snapshot["history"]:
        if e["type"] in ("alloc", "free", "free_requested", "donate", "overwrite"):
            charts.setdefault((e["device"], e["memory_kind"]), [])
            charts[(e["device"], e["memory_kind"])].append(e)
    for a in snapshot.get("live", []):
        charts.setdefault((a["device"], a["memory_kind"]), [])
    out = {}
    for key, events in charts.items():
        # a band ends at its first free or free_requested; a later free of the
        # same allocation only ends the counting of its bytes
        ends, kept = set(), []
        for e in events:
            if e["type"] in ("free", "free_requested"):
                if e["id"] in ends:
                    continue
                ends.add(e["id"])
            kept.append(e)
        events = kept
        allocated = {e["id"] for e in events if e["type"] == "alloc"}
        ids, before = set(), 0
        for e in events:
            if e["type"] in ("alloc", "free", "free_requested"):
                ids.add(e["id"])
            if e["type"] in ("free", "free_requested") and e["id"] not in allocated:
                before += e["bytes"]
        for a in snapshot.get("live", []):
            if (a["device"], a["memory_kind"]) == key and a["id"] not in ids:
                ids.add(a["id"])
                before += a["bytes"]
        cur = peak = before
        for e in events:
            cur += {
                "alloc": e["bytes"],
                "free": -e["bytes"],
                "free_requested": -e["bytes"],
            }.get(e["type"], 0)
            peak = max(peak, cur)
        out[key] = (len(ids), peak)
    return out


class _Dom(HTMLParser):
    """The parts of a dumped DOM the tests look at."""

    def __init__(self):
        super().__init__()
        self.body = {}
        self.charts = []  # [attrs, polygons, titles, markers]
        self.titles = []
        self.text = []  # outside <script> and <style>
        self._in_title = False
        self._in_code = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self._in_code = tag in ("script", "style")
        if tag == "body":
            self.body = attrs
        elif tag == "svg" and "chart" in attrs.get("class", ""):
            self.charts.append({"attrs": attrs, "polygons": 0, "markers": 0})
        elif tag == "polygon" and self.charts:
            self.charts[-1]["polygons"] += 1
        elif tag == "path" and "marker" in attrs.get("class", "") and self.charts:
            self.charts[-1]["markers"] += 1
        elif tag == "title" and self.charts:
            self._in_title = True
            self.titles.append("")

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        self._in_code = False

    def handle_data(self, data):
        if self._in_title:
            self.titles[-1] += data
        if not self._in_code:
            self.text.append(data)


def _browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless browser (chromium): tools/install_deps.sh installs it")


def _chromium(page, tmp_path, *args):
    cmd = [
        _browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
        "--run-all-compositor-stages-before-draw",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        "--virtual-time-budget=5000",
        *args,
        pathlib.Path(page).resolve().as_uri(),
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def _render(snapshot, tmp_path, **kwargs):
    page = write_memory_viewer(tmp_path / "viewer.html", snapshot, **kwargs)
    dom = _Dom()
    dom.feed(_chromium(page, tmp_path, "--dump-dom"))
    assert dom.body.get("data-rendered") == "1", "the page's script did not finish"
    return page, dom


def _png_pixels(path):
    """(width, height, channels, rows of bytes) of an 8-bit PNG, decoded by hand."""
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, []
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        typ, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif typ == b"IDAT":
            idat.append(body)
        pos += 12 + n
    assert depth == 8 and interlace == 0 and colour in (0, 2, 4, 6)
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    raw, stride = zlib.decompress(b"".join(idat)), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def test_page_is_self_contained(tmp_path):
    snap = _snapshot()
    snap["history"][3]["label"] = "</script><script>bad()</script><!--"
    page = write_memory_viewer(tmp_path / "v.html", snap, title="a <b> title")
    assert page == str(tmp_path / "v.html")
    text = pathlib.Path(page).read_text(encoding="utf-8")
    refs = re.findall(r"https?://[^\s\"'<>)]*", text)
    assert set(refs) <= {"http://www.w3.org/2000/svg"}, refs
    assert "<link" not in text.lower()
    assert not re.search(r"<script[^>]*\bsrc\s*=", text, re.I)
    assert "@import" not in text and "url(" not in text
    # the snapshot sits in one JSON script element that no label can end early
    assert text.count("</script>") == 3
    assert "bad()" in text and "</script><script>bad()" not in text
    assert "<title>a &lt;b&gt; title</title>" in text


def test_renders_one_chart_per_device_and_kind(tmp_path):
    snap = _snapshot()
    page, dom = _render(snap, tmp_path, title="viewer test")
    expected = _expected(snap)
    got = {
        (int(c["attrs"]["data-device"]), c["attrs"]["data-memory-kind"]): c
        for c in dom.charts
    }
    assert len(dom.charts) == len(expected) == 3
    assert set(got) == set(expected)
    assert dom.body.get("data-charts") == "3"
    for key, (allocations, peak) in expected.items():
        c = got[key]["attrs"]
        assert int(c["data-bands"]) == allocations, key
        assert int(c["data-peak-bytes"]) == peak, key
        assert c["data-merged"] == "0"
        assert got[key]["polygons"] == allocations, key
    assert got[(0, "device")]["markers"] == 2  # a donation and an overwrite
    assert EMPTY_MESSAGE not in "".join(dom.text)
    # hover text: label, kind, bytes, id and the stack, innermost first
    band = next(t for t in dom.titles if "   id 9\n" in t)
    assert band.startswith("float32(3072,)   [constant]\n12.0 KiB (12,288 B)")
    assert band.index("inner_9  /src/model.py:19") < band.index(
        "train_step  /src/train.py:42"
    )
    assert any(
        "allocated: before the recording began" in t and "   id 1\n" in t
        for t in dom.titles
    )
    assert any("live at the end" in t and "   id 300\n" in t for t in dom.titles)
    assert any(t.startswith("donate: ") for t in dom.titles)
    text = "".join(dom.text)
    assert "cpu:1 (1)" in text
    assert text.count("max bytes_in_use") == 1  # only the pinned chart reports it

    shot = tmp_path / "viewer.png"
    _chromium(page, tmp_path, f"--screenshot={shot}", "--window-size=1400,900")
    assert shot.stat().st_size > 10_000
    w, h, bpp, rows = _png_pixels(shot)
    assert (w, h) == (1400, 900) and bpp >= 3
    colours = {}
    for row in rows[::4]:
        for x in range(0, w * bpp, bpp * 4):
            px = row[x : x + 3]
            colours[px] = colours.get(px, 0) + 1
    total = sum(colours.values())
    assert len(colours) > 20, "the screenshot is blank"
    assert max(colours.values()) < 0.95 * total, "the screenshot is almost one colour"
    # some pixels in the array kind's blue
    assert any(b > r + 60 and b > g + 20 for (r, g, b) in colours), "no bands drawn"
    keep = os.environ.get("BATON_VIEWER_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)


def test_empty_history(tmp_path):
    _, dom = _render({"segments": [], "history": []}, tmp_path)
    assert EMPTY_MESSAGE in "".join(dom.text)
    assert dom.charts == []
    assert dom.body.get("data-charts") == "0"


def test_many_allocations_merge_the_smallest(tmp_path):
    # 3000 allocations, 2500 of them live at once: the smallest merge into "other"
    h, t = [], 0
    for i in range(3000):
        h.append(_event("alloc", t, 0, "device", 256 + (i * 7919) % 100_000, i))
        t += 1
        if i % 6 == 5:
            victim = h[-3]
            h.append(dict(victim, type="free", begin_ns=T0 + t * 1000))
            t += 1
    for i in range(0, 3000, 9):
        h.append(_event("donate", t, 0, "device", 256, i))
        t += 1
    snap = {"segments": [], "history": h}
    _, dom = _render(snap, tmp_path)
    ((allocations, peak),) = _expected(snap).values()
    (c,) = dom.charts
    assert int(c["attrs"]["data-bands"]) == allocations == 3000
    assert int(c["attrs"]["data-peak-bytes"]) == peak
    assert int(c["attrs"]["data-merged"]) == 1000
    assert c["polygons"] == 2001
    assert any(t.startswith("other (1000 allocations)") for t in dom.titles)

    _, dom = _render(_snapshot(), tmp_path, max_bands=5)
    for c in dom.charts:
        n = int(c["attrs"]["data-bands"])
        assert c["polygons"] == (n if n <= 5 else 6)
        assert int(c["attrs"]["data-merged"]) == max(0, n - 5)


def test_renders_a_recorded_snapshot(tmp_path):
    # The real thing: bt.profiler's history of an allocation, a donation and a
    # free, drawn by the browser with the allocating function on hover.
    import numpy as np

    import baton as bt

    def allocate_the_viewer_buffer():
        return bt.device_put(np.ones(1 << 18, np.float32))

    bump = bt.jit(lambda a: a + 1, donate_argnums=0)
    with bt.profiler.record_memory_history():
        x = allocate_the_viewer_buffer()
        y = bump(x).block_until_ready()
        del y
        snap = bt.profiler.memory_snapshot()
    types = [e["type"] for e in snap["history"]]
    assert {"alloc", "donate", "free"} <= set(types), types
    _, dom = _render(snap, tmp_path)
    expected = _expected(snap)
    got = {
        (int(c["attrs"]["data-device"]), c["attrs"]["data-memory-kind"]): c
        for c in dom.charts
    }
    assert set(got) == set(expected)
    for key, (allocations, peak) in expected.items():
        assert int(got[key]["attrs"]["data-bands"]) == allocations, key
        assert int(got[key]["attrs"]["data-peak-bytes"]) == peak, key
    assert got[(0, "device")]["markers"] >= 1  # the donation
    assert any(
        "allocate_the_viewer_buffer" in t and "1.00 MiB" in t for t in dom.titles
    ), dom.titles


def test_active_memory_of_a_loop_dispatching_ahead(tmp_path):
    # Each call's temporaries are released at enqueue while the call still
    # runs (free_requested) and taken over by the next call on the queue: the
    # chart of active memory never exceeds what bytes_in_use counted.
    import numpy as np

    import baton as bt
    import baton.numpy as bnp

    step = bt.jit(lambda x: (x + bnp.tanh(x @ x), bnp.sum(x)), donate_argnums=0)
    x = bt.device_put(np.full((256, 256), 0.01, np.float32))
    x, _ = step(x)
    bt.block_until_ready(x)
    with bt.profiler.record_memory_history():
        sums = []
        for _ in range(12):
            x, s = step(x)
            sums.append(s)
        bt.block_until_ready((x, sums))
        snap = bt.profiler.memory_snapshot()
    history = [e for e in snap["history"] if e["memory_kind"] == "device"]
    assert any(e["type"] == "free_requested" for e in history)
    counted = max(e["bytes_in_use"] for e in history if e["bytes_in_use"] >= 0)
    _, dom = _render(snap, tmp_path)
    chart = next(c for c in dom.charts if c["attrs"]["data-memory-kind"] == "device")
    active_peak = int(chart["attrs"]["data-peak-bytes"])
    assert active_peak == _expected(snap)[(0, "device")][1]
    assert active_peak <= counted, (active_peak, counted)
