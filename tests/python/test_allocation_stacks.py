"""Every allocation's Python stack, captured always (issue 38, DESIGN 5.5).

Bindings capture (code object, instruction offset) pairs for every
allocating call, interned (python/src/allocation_stacks.h), and symbolize
them when a profile is written: a memory profile names the allocating
Python function with nothing recorded. ``bt.config``'s
``capture_allocation_stacks`` turns it off (test_profiler.py checks that the
API function is named then).
"""

import _thread
import os
import subprocess
import sys
import threading

import numpy as np
from test_pprof import decode_profile, samples

import baton as bt
import baton.numpy as bnp
from baton import _baton

BATON_DIR = os.path.dirname(bt.__file__) + os.sep


def profile(tmp_path, name):
    path = bt.profiler.save_memory_profile(str(tmp_path / name))
    with open(path, "rb") as f:
        return samples(decode_profile(f.read()))


def live_ids():
    return {a["id"] for a in _baton._profiler.live_allocations()}


def made_since(ids, label):
    """The live allocation records labelled `label` not among `ids`."""
    return [
        a
        for a in _baton._profiler.live_allocations()
        if a["id"] not in ids and a["label"] == label
    ]


def make_big():
    return bnp.ones((1000,))


def test_profile_names_the_allocating_function_with_nothing_recorded(tmp_path):
    before = live_ids()
    big = make_big().block_until_ready()
    (record,) = made_since(before, "float32(1000,)")
    assert record["begin_ns"] == 0  # no recording was on when it was made
    got = profile(tmp_path, "mem.prof")
    mine = [s for s in got if s["labels"]["id"][0] == record["id"]]
    assert len(mine) == 1, got
    frames = mine[0]["frames"]
    assert mine[0]["labels"]["shape"] == "(1000,)"
    assert frames[0] == ("make_big", __file__, make_big.__code__.co_firstlineno + 1)
    assert frames[1][:2] == (
        "test_profile_names_the_allocating_function_with_nothing_recorded",
        __file__,
    )
    assert not any(f[1].startswith(BATON_DIR) for f in frames), frames
    del big
    got = profile(tmp_path, "after.prof")
    assert all(s["labels"]["id"][0] != record["id"] for s in got)
    assert not any("make_big" in [f[0] for f in s["frames"]] for s in got)


def make_small_ones(n):
    out = []
    for _ in range(n):
        out.append(bnp.ones((4,)))
    return out


def test_identical_allocations_share_one_interned_stack():
    counts = []
    kept = []
    before = live_ids()
    for _ in range(3):
        kept.append(make_small_ones(50))
        counts.append(_baton._profiler._interned_stacks())
    # The first round may intern baton's first-call paths; after it, the same
    # 50 calls from the same lines add no stack and no frame.
    assert counts[1] == counts[2], counts
    records = made_since(before, "float32(4,)")
    assert len(records) == 150
    stacks = {tuple(a["frames"]) for a in records}
    assert len(stacks) == 1, stacks
    (frames,) = stacks
    assert frames[0][0] == "make_small_ones"


def test_a_recording_sees_the_same_stack_as_the_profile():
    before = live_ids()
    with bt.profiler.record_memory_history():
        big = make_big().block_until_ready()
        history = _baton._profiler.history()
    (record,) = made_since(before, "float32(1000,)")
    assert record["begin_ns"] > 0
    allocs = [e for e in history if e["type"] == "alloc" and e["id"] == record["id"]]
    assert len(allocs) == 1
    assert allocs[0]["frames"] == record["frames"]
    assert record["frames"][0][0] == "make_big"
    del big


def make_on_a_thread(out):
    out.append(bt.device_put(np.arange(8, dtype=np.float32)))


def test_each_thread_names_its_own_stack():
    out = []
    before = live_ids()
    t = threading.Thread(target=make_on_a_thread, args=(out,))
    t.start()
    t.join()
    (record,) = made_since(before, "float32(8,)")
    frames = record["frames"]
    assert frames[0][:2] == ("make_on_a_thread", __file__)
    assert "test_each_thread_names_its_own_stack" not in [f[0] for f in frames]


def test_the_environment_variable_turns_capture_off():
    code = (
        "import numpy as np, baton as bt\n"
        "from baton import _baton\n"
        "def put():\n"
        "    return bt.device_put(np.zeros(3, np.float32))\n"
        "x = put()\n"
        "print(bt.config.capture_allocation_stacks)\n"
        "print([a['frames'] for a in _baton._profiler.live_allocations()])\n"
        "print(_baton._profiler._interned_stacks()[0])\n"
    )
    env = dict(os.environ, BATON_CAPTURE_ALLOCATION_STACKS="0")
    r = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    enabled, frames, stacks = r.stdout.splitlines()
    assert enabled == "False"
    assert "'put'" not in frames and "<baton>" in frames
    assert stacks == "0"


def test_a_stack_of_only_batons_frames_keeps_its_innermost_one():
    # A thread started by _thread runs its target with no caller frames; a
    # target whose file lies in the baton package makes every frame baton's.
    fake = BATON_DIR + "_not_a_module.py"
    src = (
        "def copy(x, out):\n"
        "    out.append(x.copy())\n"
        "def copy_on_thread(x, out, done):\n"
        "    copy(x, out)\n"
        "    done.release()\n"
    )
    ns = {}
    exec(compile(src, fake, "exec"), ns)
    x = bt.device_put(np.arange(5, dtype=np.float32))
    out = []
    done = _thread.allocate_lock()
    done.acquire()
    before = live_ids()
    _thread.start_new_thread(ns["copy_on_thread"], (x, out, done))
    done.acquire()
    (record,) = made_since(before, "float32(5,)")
    assert record["frames"] == [("copy", fake, 2)]


def make_after_the_table_is_full():
    return bnp.ones((6,))


def test_a_full_table_names_the_api_and_keeps_what_it_has():
    before = live_ids()
    kept = []
    try:
        for full in (False, True):
            if full:  # the stack of the first round is interned by now
                stacks, frames = _baton._profiler._interned_stacks()
                _baton._profiler._set_interned_frames_limit(frames)
                kept.append(make_after_the_table_is_full())
            kept.append(make_big())
        assert _baton._profiler._interned_stacks() == (stacks, frames)
    finally:
        _baton._profiler._set_interned_frames_limit(-1)
    (record,) = made_since(before, "float32(6,)")
    assert len(record["frames"]) == 1 and record["frames"][0][1] == "<baton>"
    records = made_since(before, "float32(1000,)")
    assert len(records) == 2
    assert all(r["frames"][0][0] == "make_big" for r in records)
