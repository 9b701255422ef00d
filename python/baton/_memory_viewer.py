"""The memory viewer: one self-contained HTML page of active memory over time.

``write_memory_viewer(path, snapshot)`` turns a snapshot dict (what
``bt.profiler.memory_snapshot()`` returns: ``"segments"``, ``"history"`` and
optionally ``"live"`` and ``"device_names"``) into a page like PyTorch's
memory_viz "Active Memory Timeline": one chart per (device, memory kind), each
allocation a band stacked over time, its label, kind, size, id and allocation
stack shown on hover. The page needs no network: its script, style and the
snapshot itself are inline, and it draws with SVG.

The module uses only the standard library (it does not import the extension),
so the page can be written from any snapshot dict, e.g. one loaded from JSON.
"""

# ruff: noqa: E501 -- the page's JavaScript and CSS, in _PAGE

from __future__ import annotations

import html
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
        _PAGE.replace("__TITLE__", html.escape(str(title)))
        .replace("__CONFIG__", _script_json(config))
        .replace("__DATA__", _script_json(data))
    )
    path = os.fspath(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path


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


# The page: its script reads the snapshot from the "baton-snapshot" element,
# makes one chart per (device, memory kind), stacks each allocation as an SVG
# polygon over time (memory_viz's layout: a band sits on the ones allocated
# before it and drops when one below it is freed), merges all but the largest
# max_bands of a chart into one "other" band on top, and draws donations and
# overwrites as markers. When done, <body data-rendered="1">, and each chart's
# <svg> has data-device, data-memory-kind, data-bands (allocations),
# data-drawn-bands, data-merged and data-peak-bytes (what the tests read).
_PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>__TITLE__</title>
<style>
body { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif;
  margin: 16px 24px; color: #1f2328; background: #fff; }
h1 { font-size: 19px; margin: 0 0 4px; }
h2 { font-size: 15px; margin: 22px 0 6px; }
.sub { color: #59636e; margin-bottom: 8px; }
.bar { display: flex; gap: 18px; align-items: center; flex-wrap: wrap;
  margin: 8px 0; }
.legend span { display: inline-flex; align-items: center; margin-right: 12px; }
.legend i { width: 12px; height: 12px; border-radius: 2px; margin-right: 5px;
  display: inline-block; border: 1px solid rgba(0,0,0,.25); }
button { font: inherit; padding: 2px 10px; border: 1px solid #c8ccd1;
  background: #f6f8fa; border-radius: 4px; cursor: pointer; }
button.on { background: #0969da; color: #fff; border-color: #0969da; }
table.summary { border-collapse: collapse; margin: 4px 0 6px; }
table.summary td, table.summary th { border: 1px solid #d8dee4;
  padding: 2px 9px; text-align: right; }
table.summary th { background: #f6f8fa; font-weight: 600; }
svg.chart { display: block; background: #fff; }
svg.chart .band { stroke: rgba(255,255,255,.55); stroke-width: .5; }
svg.chart .band.thin { stroke: none; }
svg.chart .band:hover, svg.chart .band.sel { stroke: #000; stroke-width: 1.4; }
svg.chart .marker { stroke: #000; stroke-width: .8; }
svg.chart .marker:hover { stroke-width: 2; }
svg.chart .grid { stroke: #eaeef2; }
svg.chart .axis { stroke: #59636e; }
svg.chart text { font-size: 11px; fill: #424a53; }
svg.chart text.title { font-size: 12px; fill: #1f2328; }
#tip { position: fixed; pointer-events: none; display: none; z-index: 9;
  background: rgba(255,255,255,.97); border: 1px solid #8c959f;
  border-radius: 4px; padding: 6px 9px; max-width: 640px;
  box-shadow: 0 2px 8px rgba(0,0,0,.18); white-space: pre-wrap;
  font: 12px/1.35 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre.details { background: #f6f8fa; border: 1px solid #d8dee4; padding: 6px 9px;
  margin: 4px 0; max-height: 260px; overflow: auto; white-space: pre-wrap; }
.empty { padding: 16px; border: 1px dashed #8c959f; color: #59636e;
  font-size: 14px; margin: 12px 0; }
</style>
</head>
<body>
<h1 id="heading"></h1>
<div class="sub" id="overview"></div>
<div class="bar">
  <div class="legend" id="legend"></div>
  <div>x axis: <button id="x-index" class="on">event index</button>
    <button id="x-time">time</button></div>
</div>
<div id="charts"></div>
<div id="tip"></div>
<script type="application/json" id="baton-config">__CONFIG__</script>
<script type="application/json" id="baton-snapshot">__DATA__</script>
<script>
"use strict";
(function () {
const started = performance.now();
const CFG = JSON.parse(document.getElementById("baton-config").textContent);
const DATA = JSON.parse(document.getElementById("baton-snapshot").textContent);
const SVGNS = "http://www.w3.org/2000/svg";
const KINDS = ["array", "constant", "temporary", "staging", ""];
const HUES = {array: [212, 68, 52], constant: [278, 50, 56],
  temporary: [32, 88, 52], staging: [152, 48, 40], "": [210, 8, 52]};
const OTHER_FILL = "#b8bfc7";
const MK_ORDER = {device: 0, pinned_host: 1, unpinned_host: 2};
const history = DATA.history || [], live = DATA.live || [];
const names = DATA.device_names || {};
let xMode = "index";

function fmtBytes(b) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0, v = Math.abs(b);
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  const s = i === 0 ? String(v) : v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0);
  return (b < 0 ? "-" : "") + s + " " + u[i];
}
function fmtExact(b) { return fmtBytes(b) + " (" + b.toLocaleString("en-US") + " B)"; }
function fmtTime(ns) {
  const a = Math.abs(ns);
  if (a < 1e3) return ns.toFixed(0) + " ns";
  if (a < 1e6) return (ns / 1e3).toPrecision(3) + " \u00b5s";
  if (a < 1e9) return (ns / 1e6).toPrecision(3) + " ms";
  return (ns / 1e9).toPrecision(4) + " s";
}
function devName(d) { const n = names[String(d)]; return n ? n + " (" + d + ")" : "device " + d; }
function kindOf(k) { return Object.prototype.hasOwnProperty.call(HUES, k || "") ? (k || "") : ""; }
function fillFor(rec) {
  const h = HUES[kindOf(rec.kind)];
  const j = ((rec.id * 2654435761) >>> 0) % 7;  // neighbours differ in lightness
  return "hsl(" + (h[0] + (j - 3) * 3) + "," + h[1] + "%," + (h[2] - 12 + j * 4) + "%)";
}
function frameText(f) {
  if (Array.isArray(f)) return (f[0] || "?") + "  " + (f[1] || "?") + ":" + (f[2] == null ? "?" : f[2]);
  if (f && typeof f === "object")
    return (f.name || f.function || "?") + "  " + (f.filename || f.file || "?") + ":" + (f.line == null ? "?" : f.line);
  return String(f);
}
function stackText(frames, limit) {
  if (!frames || !frames.length) return "stack: (none recorded)";
  const n = limit ? Math.min(limit, frames.length) : frames.length;
  const lines = ["stack (innermost first):"];
  for (let i = 0; i < n; i++) lines.push("  " + frameText(frames[i]));
  if (n < frames.length) lines.push("  ... " + (frames.length - n) + " more (click the band)");
  return lines.join("\n");
}
function el(tag, attrs, parent, text) {
  const e = tag.indexOf("svg:") === 0 ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text != null) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// ---- group the events into charts, one per (device, memory kind)
const charts = new Map();
function chartFor(dev, mk) {
  const key = dev + "\u0000" + mk;
  if (!charts.has(key)) charts.set(key, {device: dev, mk: mk, events: [], live: [], segments: []});
  return charts.get(key);
}
for (const ev of history) {
  if (ev.type === "alloc" || ev.type === "free" || ev.type === "free_requested" || ev.type === "donate" || ev.type === "overwrite")
    chartFor(ev.device, ev.memory_kind).events.push(ev);
}
for (const a of live) chartFor(a.device, a.memory_kind).live.push(a);
for (const s of DATA.segments || []) {
  const c = charts.get(s.device + "\u0000" + s.memory_kind);
  if (c) c.segments.push(s);
}
const chartList = Array.from(charts.values()).sort((a, b) =>
  (a.device - b.device) || ((MK_ORDER[a.mk] ?? 9) - (MK_ORDER[b.mk] ?? 9)) || (a.mk < b.mk ? -1 : 1));

// ---- allocations of a chart, with their first and last step (alloc/free events are steps 1..T)
function analyse(c) {
  // A band is an allocation whose owner is alive: it ends at free_requested
  // (the owner released it while enqueued work still used it) or at free,
  // whichever comes first; the free that follows a free_requested only ends
  // the bytes' counting (bytes_in_use), not the band.
  const recs = [], open = new Map(), closed = new Set(), markers = [], times = [0];
  let step = 0, reported = -1;
  const rec = (ev, start, pre) => ({id: ev.id, bytes: ev.bytes || 0, label: ev.label || "", kind: ev.kind || "",
    frames: ev.frames || [], queue: ev.queue || "", start: start, end: null, pre: pre, ev: ev});
  for (const ev of c.events) {
    const ends = ev.type === "free" || ev.type === "free_requested";
    if (ends && closed.has(ev.id)) continue;  // already ended at free_requested
    if (ev.type === "alloc" || ends) {
      step++;
      times.push(ev.begin_ns || 0);
      if (ev.bytes_in_use != null && ev.bytes_in_use > reported) reported = ev.bytes_in_use;
    }
    if (ev.type === "alloc") {
      const r = rec(ev, step, false);
      recs.push(r); open.set(ev.id, r);
    } else if (ends) {
      let r = open.get(ev.id);
      if (!r) { r = rec(ev, 0, true); recs.push(r); }  // allocated before the recording began
      r.end = step; r.freeEv = ev; open.delete(ev.id); closed.add(ev.id);
    } else {
      markers.push({ev: ev, step: step, t: ev.begin_ns || 0});
    }
  }
  const seen = new Set(recs.map(r => r.id));
  for (const a of c.live) if (!seen.has(a.id)) recs.push(rec(a, 0, true));
  let cur = 0, peak = 0;
  for (const r of recs) if (r.pre) cur += r.bytes;
  peak = cur;
  const delta = new Float64Array(step + 2);
  for (const r of recs) {
    if (!r.pre) delta[r.start] += r.bytes;
    if (r.end != null) delta[r.end] -= r.bytes;
  }
  const totals = [cur];
  for (let s = 1; s <= step; s++) { cur += delta[s]; totals.push(cur); if (cur > peak) peak = cur; }
  c.recs = recs; c.markers = markers; c.steps = step; c.times = times; c.peak = peak;
  c.endBytes = cur; c.reported = reported;
  // the biggest max_bands are drawn one by one, the rest merged into "other"
  c.merged = 0;
  if (recs.length > CFG.max_bands) {
    const order = recs.slice().sort((a, b) => (b.bytes - a.bytes) || (a.start - b.start));
    for (let i = CFG.max_bands; i < order.length; i++) order[i].small = true;
    c.merged = order.length - CFG.max_bands;
  }
}

// ---- layout in pixels: each drawn band keeps its bottom edge as (x, offset) changes
function layout(c, X) {
  const drawn = c.recs.filter(r => !r.small);
  const at = new Map();  // step -> [allocs, frees]
  const ev = (s) => { if (!at.has(s)) at.set(s, [[], []]); return at.get(s); };
  for (const r of c.recs) {
    if (!r.pre) ev(r.start)[0].push(r);
    if (r.end != null) ev(r.end)[1].push(r);
  }
  // before the recording: the longest-lived at the bottom
  const pre = drawn.filter(r => r.pre).sort((a, b) =>
    ((b.end == null ? 1e18 : b.end) - (a.end == null ? 1e18 : a.end)) || (a.id - b.id));
  const stack = [];
  let total = 0, small = 0;
  const other = {xs: [], lo: [], hi: []};
  function push(r, x, off) {
    const n = r.xs.length;
    if (n && x - r.xs[n - 1] < 0.75) { r.os[n - 1] = off; if (n > 1 && r.os[n - 2] === off) { r.xs.pop(); r.os.pop(); } }
    else if (!n || r.os[n - 1] !== off) { r.xs.push(x); r.os.push(off); }
  }
  function pushOther(x) {
    const n = other.xs.length;
    if (n && x - other.xs[n - 1] < 0.75) { other.lo[n - 1] = total; other.hi[n - 1] = total + small; }
    else if (!n || other.lo[n - 1] !== total || other.hi[n - 1] !== total + small) {
      other.xs.push(x); other.lo.push(total); other.hi.push(total + small);
    }
  }
  const x0 = X(0);
  for (const r of pre) { r.xs = [x0]; r.os = [total]; r.off = total; total += r.bytes; stack.push(r); }
  for (const r of c.recs) if (r.pre && r.small) small += r.bytes;
  pushOther(x0);
  for (let s = 1; s <= c.steps; s++) {
    const e = at.get(s);
    if (!e) continue;
    const x = X(s);
    for (const r of e[1]) {
      if (r.small) { small -= r.bytes; continue; }
      const i = stack.indexOf(r);
      stack.splice(i, 1);
      r.xEnd = x;
      total -= r.bytes;
      for (let j = i; j < stack.length; j++) { stack[j].off -= r.bytes; push(stack[j], x, stack[j].off); }
    }
    for (const r of e[0]) {
      if (r.small) { small += r.bytes; continue; }
      r.xs = []; r.os = []; r.off = total; push(r, x, total); total += r.bytes; stack.push(r);
    }
    pushOther(x);
  }
  const xe = X(c.steps + 1);
  for (const r of stack) r.xEnd = xe;
  other.xEnd = xe;
  c.drawn = drawn; c.other = other;
}

function bandPoints(r, Y) {
  const bottom = [], top = [], n = r.xs.length;
  for (let k = 0; k < n; k++) {
    const x1 = k + 1 < n ? r.xs[k + 1] : r.xEnd;
    const lo = Y(r.os[k]), hi = Y(r.os[k] + r.bytes);
    bottom.push(r.xs[k].toFixed(1) + "," + lo.toFixed(1), x1.toFixed(1) + "," + lo.toFixed(1));
    top.push(r.xs[k].toFixed(1) + "," + hi.toFixed(1), x1.toFixed(1) + "," + hi.toFixed(1));
  }
  return bottom.concat(top.reverse()).join(" ");
}
function otherPoints(o, Y) {
  const bottom = [], top = [], n = o.xs.length;
  for (let k = 0; k < n; k++) {
    const x1 = (k + 1 < n ? o.xs[k + 1] : o.xEnd).toFixed(1), x = o.xs[k].toFixed(1);
    const lo = Y(o.lo[k]).toFixed(1), hi = Y(o.hi[k]).toFixed(1);
    bottom.push(x + "," + lo, x1 + "," + lo);
    top.push(x + "," + hi, x1 + "," + hi);
  }
  return bottom.concat(top.reverse()).join(" ");
}

function niceStep(range, n) {
  const raw = range / n, p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}
function byteTicks(max) {
  const units = [1, 1024, 1048576, 1073741824, 1099511627776];
  let u = 0;
  while (u + 1 < units.length && max / units[u + 1] >= 1) u++;
  const step = niceStep(max / units[u], 5) * units[u];
  const ticks = [];
  for (let v = 0; v <= max * 1.0001; v += step) ticks.push(v);
  return ticks;
}

function recText(c, r, full) {
  const lines = [(r.label || "(no label)") + "   [" + (r.kind || "unknown kind") + "]",
    fmtExact(r.bytes) + "   id " + r.id,
    devName(c.device) + " \u00b7 " + c.mk + (r.queue ? " \u00b7 queue " + r.queue : "")];
  const when = (s) => "event #" + s + " (+" + fmtTime(c.times[s]) + ")";
  lines.push("allocated: " + (r.pre ? "before the recording began" : when(r.start)) +
    "   freed: " + (r.end == null ? "live at the end" : when(r.end)));
  lines.push(stackText(r.frames, full ? 0 : 14));
  return lines.join("\n");
}
function otherText(c) {
  const small = c.recs.filter(r => r.small);
  const b = small.reduce((m, r) => Math.max(m, r.bytes), 0);
  return "other (" + small.length + " allocations)\nthe smallest allocations of this chart, merged " +
    "(each at most " + fmtExact(b) + ")\ndrawn one by one: the " + c.drawn.length + " largest";
}
function markerText(c, m) {
  const e = m.ev;
  return e.type + ": " + (e.label || "(no label)") + "   [" + (e.kind || "unknown kind") + "]\n" +
    fmtExact(e.bytes || 0) + "   id " + e.id + "\n" + "after event #" + m.step + " (+" + fmtTime(m.t) + ")" +
    (e.queue ? " \u00b7 queue " + e.queue : "") + "\n" + stackText(e.frames, 14);
}

// ---- drawing
const tip = document.getElementById("tip");
function showTip(evt, text) {
  tip.textContent = text; tip.style.display = "block";
  const w = tip.offsetWidth, h = tip.offsetHeight;
  let x = evt.clientX + 14, y = evt.clientY + 14;
  if (x + w > window.innerWidth - 4) x = Math.max(4, evt.clientX - w - 14);
  if (y + h > window.innerHeight - 4) y = Math.max(4, evt.clientY - h - 14);
  tip.style.left = x + "px"; tip.style.top = y + "px";
}

function drawChart(c) {
  const W = Math.max(640, Math.min(1800, document.documentElement.clientWidth - 48)), H = 340;
  const M = {l: 78, r: 18, t: 30, b: 44}, pw = W - M.l - M.r, ph = H - M.t - M.b;
  let X;
  if (xMode === "time") {
    const tEnd = c.times[c.steps] || 0, pad = Math.max(1, tEnd * 0.02);
    const span = tEnd + 2 * pad;
    const fx = (t) => M.l + (t + pad) / span * pw;
    X = (s) => s === 0 ? M.l : s > c.steps ? M.l + pw : fx(c.times[s]);
    c.mx = (m) => fx(m.t);
    c.xTicks = () => { const st = niceStep(span, 8), out = [];
      for (let t = 0; t <= tEnd + pad; t += st) out.push([fx(t), "+" + fmtTime(t)]); return out; };
  } else {
    const n = c.steps + 1;
    X = (s) => M.l + s / n * pw;
    c.mx = (m) => M.l + (m.step + 0.5) / n * pw;
    c.xTicks = () => { const st = Math.max(1, niceStep(n, 8)), out = [];
      for (let s = 0; s <= n; s += st) out.push([X(s), String(s)]); return out; };
  }
  const ymax = Math.max(c.peak, 1) * 1.06;
  const Y = (b) => M.t + ph - b / ymax * ph;
  layout(c, X);
  const svg = c.svg;
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  svg.setAttribute("width", W); svg.setAttribute("height", H);
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  const axes = el("svg:g", {}, svg);
  for (const v of byteTicks(ymax)) {
    const y = Y(v);
    el("svg:line", {x1: M.l, x2: M.l + pw, y1: y, y2: y, class: "grid"}, axes);
    el("svg:text", {x: M.l - 6, y: y + 4, "text-anchor": "end"}, axes, fmtBytes(v));
  }
  for (const [x, label] of c.xTicks()) {
    el("svg:line", {x1: x, x2: x, y1: M.t + ph, y2: M.t + ph + 5, class: "axis"}, axes);
    el("svg:text", {x: x, y: M.t + ph + 17, "text-anchor": "middle"}, axes, label);
  }
  el("svg:line", {x1: M.l, x2: M.l + pw, y1: M.t + ph, y2: M.t + ph, class: "axis"}, axes);
  el("svg:line", {x1: M.l, x2: M.l, y1: M.t, y2: M.t + ph, class: "axis"}, axes);
  el("svg:text", {x: M.l + pw / 2, y: H - 6, "text-anchor": "middle", class: "title"}, axes,
    xMode === "time" ? "time since the first event" : "event index (allocations and frees)");
  el("svg:text", {x: 14, y: M.t + ph / 2, "text-anchor": "middle", class: "title",
    transform: "rotate(-90 14 " + (M.t + ph / 2) + ")"}, axes, "active memory");
  const peakY = Y(c.peak);
  el("svg:line", {x1: M.l, x2: M.l + pw, y1: peakY, y2: peakY, stroke: "#cf222e", "stroke-dasharray": "4 3"}, axes);
  el("svg:text", {x: M.l + pw - 4, y: peakY - 4, "text-anchor": "end", fill: "#cf222e"}, axes,
    "peak " + fmtBytes(c.peak));
  const bands = el("svg:g", {class: "bands"}, svg);
  c.drawn.forEach((r, i) => {
    const thin = r.bytes / ymax * ph < 3 ? " thin" : "";
    const p = el("svg:polygon", {class: "band" + thin, points: bandPoints(r, Y), fill: fillFor(r),
      "data-i": i, "data-id": r.id, "data-kind": r.kind, "data-bytes": r.bytes}, bands);
    el("svg:title", {}, p, recText(c, r, true));
  });
  if (c.merged) {
    const p = el("svg:polygon", {class: "band other", points: otherPoints(c.other, Y), fill: OTHER_FILL,
      "data-i": -1, "data-merged": c.merged}, bands);
    el("svg:title", {}, p, otherText(c));
  }
  const marks = el("svg:g", {class: "markers"}, svg);
  c.markers.forEach((m, i) => {
    const x = c.mx(m), y = M.t - 12, d = 5;
    const p = el("svg:path", {class: "marker", "data-m": i, "data-type": m.ev.type, "data-id": m.ev.id,
      d: "M" + x + "," + (y - d) + "L" + (x + d) + "," + y + "L" + x + "," + (y + d) + "L" + (x - d) + "," + y + "Z",
      fill: m.ev.type === "donate" ? "#f6c343" : "#e16fcf"}, marks);
    el("svg:title", {}, p, markerText(c, m));
  });
  svg.dataset.device = c.device; svg.dataset.memoryKind = c.mk;
  svg.dataset.bands = c.recs.length; svg.dataset.drawnBands = c.drawn.length + (c.merged ? 1 : 0);
  svg.dataset.merged = c.merged; svg.dataset.peakBytes = c.peak; svg.dataset.markers = c.markers.length;
  svg.dataset.events = c.events.length;
}

function hookChart(c) {
  const title = (t) => {
    if (t.classList.contains("other")) return otherText(c);
    if (t.classList.contains("band")) return recText(c, c.drawn[+t.dataset.i], false);
    if (t.classList.contains("marker")) return markerText(c, c.markers[+t.dataset.m]);
    return null;
  };
  c.svg.addEventListener("mousemove", (evt) => {
    const text = title(evt.target);
    if (text == null) { tip.style.display = "none"; return; }
    showTip(evt, text);
  });
  c.svg.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  c.svg.addEventListener("click", (evt) => {
    const t = evt.target;
    for (const s of c.svg.querySelectorAll(".sel")) s.classList.remove("sel");
    if (t.classList.contains("other")) { c.details.textContent = otherText(c); t.classList.add("sel"); }
    else if (t.classList.contains("band")) { c.details.textContent = recText(c, c.drawn[+t.dataset.i], true); t.classList.add("sel"); }
    else if (t.classList.contains("marker")) c.details.textContent = markerText(c, c.markers[+t.dataset.m]);
  });
}

function summary(c, parent) {
  const t = el("table", {class: "summary"}, parent);
  const head = el("tr", {}, t), row = el("tr", {}, t);
  const reserved = c.segments.reduce((s, g) => s + (g.size || 0), 0);
  const cells = [["peak active", fmtExact(c.peak)], ["allocations", c.recs.length],
    ["before recording", c.recs.filter(r => r.pre).length],
    ["live at end", c.recs.filter(r => r.end == null).length + " \u00b7 " + fmtBytes(c.endBytes)],
    ["donations / overwrites", c.markers.filter(m => m.ev.type === "donate").length + " / " +
      c.markers.filter(m => m.ev.type === "overwrite").length]];
  if (c.reported >= 0) cells.push(["max bytes_in_use", fmtExact(c.reported)]);
  if (c.segments.length) cells.push(["segments", c.segments.length + " \u00b7 " + fmtBytes(reserved)]);
  if (c.merged) cells.push(["merged into other", c.merged]);
  for (const [k, v] of cells) { el("th", {}, head, k); el("td", {}, row, String(v)); }
}

function render() {
  for (const c of chartList) drawChart(c);
  document.getElementById("x-index").classList.toggle("on", xMode === "index");
  document.getElementById("x-time").classList.toggle("on", xMode === "time");
}

document.getElementById("heading").textContent = CFG.title;
document.title = CFG.title;
const root = document.getElementById("charts");
const span = history.length ? history[history.length - 1].begin_ns - history[0].begin_ns : 0;
document.getElementById("overview").textContent = history.length + " events over " + fmtTime(span) +
  " \u00b7 " + chartList.length + " chart" + (chartList.length === 1 ? "" : "s") +
  (chartList.length ? " \u00b7 hover a band for its allocation and stack, click it to keep the " +
   "details below its chart" : "");
if (!history.length) {
  el("div", {class: "empty", id: "empty"}, root,
    "no memory events recorded: call bt.profiler.record_memory_history() first");
}
if (!chartList.length) document.querySelector(".bar").style.display = "none";
const present = new Set();
for (const c of chartList) {
  analyse(c);
  for (const r of c.recs) present.add(kindOf(r.kind));
  const sec = el("section", {class: "chart-section"}, root);
  el("h2", {}, sec, devName(c.device) + " \u2014 " + c.mk + " memory");
  summary(c, sec);
  c.svg = el("svg:svg", {class: "chart", xmlns: SVGNS}, sec);
  c.details = el("pre", {class: "details"}, sec, "click a band or marker to show its allocation here");
  hookChart(c);
}
const legend = document.getElementById("legend");
for (const k of KINDS) {
  if (!present.has(k)) continue;
  const s = el("span", {}, legend);
  el("i", {style: "background:" + fillFor({kind: k, id: 3})}, s);
  s.appendChild(document.createTextNode(k || "unknown"));
}
if (chartList.some(c => c.merged)) {
  const s = el("span", {}, legend); el("i", {style: "background:" + OTHER_FILL}, s);
  s.appendChild(document.createTextNode("other (merged)"));
}
for (const [t, c] of [["donate", "#f6c343"], ["overwrite", "#e16fcf"]]) {
  const s = el("span", {}, legend);
  el("i", {style: "background:" + c + ";transform:rotate(45deg) scale(.8)"}, s);
  s.appendChild(document.createTextNode(t));
}
document.getElementById("x-index").addEventListener("click", () => { xMode = "index"; render(); });
document.getElementById("x-time").addEventListener("click", () => { xMode = "time"; render(); });
render();
document.body.dataset.charts = chartList.length;
document.body.dataset.renderMs = Math.round(performance.now() - started);
document.body.dataset.rendered = "1";
})();
</script>
</body>
</html>
"""
