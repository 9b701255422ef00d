"""bt.array_garbage_collection_guard against jax's: the same program, run
under each mode by JAX and by baton in a process of its own, reports an
array freed by the cycle collector ("log", the process goes on; "fatal",
it aborts) and never one freed by its last reference; and, in this
process, what baton's report says and the memory it was about."""

import gc
import logging
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import baton as bt  # noqa: E402


PROGRAM = textwrap.dedent(
    """
    import gc, sys
    mode, lib = sys.argv[1], sys.argv[2]
    if lib == "jax":
        import jax as m, jax.numpy as np_
    else:
        import baton as m, baton.numpy as np_
    gc.disable()
    m.config.update("jax_array_garbage_collection_guard", mode)
    x = np_.ones(1024)
    del x                      # freed by its reference count: never reported
    gc.collect()
    print("plain done", flush=True)
    a = [np_.ones(1024)]
    a.append(a)                # a cycle: only the collector can free it
    del a
    gc.collect()
    print("cycle done", flush=True)
    """
)


def _run(mode, lib):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    # The baton this process imported (the source tree's, or an installed one).
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(bt.__file__)), env.get("PYTHONPATH", "")]
    )
    p = subprocess.run(
        [sys.executable, "-c", PROGRAM, mode, lib],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("mode", ["allow", "log", "fatal"])
def test_modes_as_jax(mode):
    for lib in ("jax", "baton"):
        rc, out, err = _run(mode, lib)
        assert "plain done" in out, (lib, out, err)
        if mode == "fatal":
            assert rc != 0 and "cycle done" not in out, (lib, rc, out)
        else:
            assert rc == 0 and "cycle done" in out, (lib, rc, err)
        reported = "garbage collect" in err.lower()
        assert reported == (mode != "allow"), (lib, mode, err)
    if mode == "log":  # baton names the array, and the line that made it
        _, _, err = _run(mode, "baton")
        assert len(re.findall(r"float32\(1024,\) on \w+:0, 4096 bytes", err)) == 1, err
        assert "allocated at <string>:" in err, err


def test_report_is_about_memory_the_cycle_held(caplog):
    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        base = bt.memory_stats()["bytes_in_use"]
        with bt.array_garbage_collection_guard("log"):
            holder = {"x": bt.numpy.zeros((256, 256), np.float32)}
            holder["self"] = holder
            dead = [bt.numpy.ones(4096, np.float32)]
            dead.append(dead)
            dead[0].delete()  # deleted: holds nothing, so not reported
            del holder, dead
            # The cycle still holds its 256 KiB: nothing freed it yet.
            assert bt.memory_stats()["bytes_in_use"] - base >= 256 * 256 * 4
            with caplog.at_level(logging.ERROR, logger="baton"):
                gc.collect()
            assert bt.memory_stats()["bytes_in_use"] == base
        msgs = [r.getMessage() for r in caplog.records if r.name == "baton"]
        assert len(msgs) == 1, msgs
        assert "1 baton Array(s)" in msgs[0]
        assert re.search(r"float32\(256, 256\) on \w+:0, 262144 bytes", msgs[0]), msgs[0]
        assert "test_gc_guard_vs_jax.py" in msgs[0]  # where it was allocated
        # Back to "allow": the hook is gone.
        assert bt.array_garbage_collection_guard.value == "allow"
        assert not any(
            getattr(cb, "__module__", "") == "baton._gc_guard" for cb in gc.callbacks
        )
    finally:
        if was:
            gc.enable()


def test_bad_mode():
    with pytest.raises(ValueError, match="array_garbage_collection_guard"):
        bt.config.update("jax_array_garbage_collection_guard", "warn")
