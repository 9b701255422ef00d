"""The processes of a ``run.py --platform cuda|sim`` run:
``run.py --child platform --lib {baton,jax,torch}``.

Each runs one library only, for the whole run, and answers the parent
(``_platform.py``) over a pipe: one JSON object a line on the stdout it was
started with (everything the libraries print goes to stderr instead: fd 1 is
pointed at fd 2), one line read from stdin per request. The first line is a
hello: ``{"ok": true, ...}`` with the device, the versions and (baton's and
JAX's) the cases, or ``{"ok": false, "why": ...}`` and the process exits.
Then, per request ``{"case": NAME}`` (torch's: ``{"baseline": SPEC}``, see
``_torch_child.py``), a reply; ``{"quit": true}`` or the end of stdin ends it.

baton's process runs with ``BATON_PLATFORMS=<platform>,cpu`` and checks that
its first device is on that platform; JAX's with ``JAX_PLATFORMS=cuda`` (for
sim: ``cpu``) and ``XLA_PYTHON_CLIENT_PREALLOCATE=false``, and imports baton
on the CPU only (the case modules import it). A case runs with a context
holding only this process's library, so its rows have the other column
empty; every value a case checks against its reference is also saved
(`ValueRecorder`) for the parent to compare baton's with JAX's.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
import traceback
from dataclasses import asdict
from typing import Any, Callable

import numpy as np

FULL_MAX = 1 << 22  # values with more elements are saved as a strided sample
SAMPLE = 1 << 20  # elements in such a sample (about)


def _json_default(obj: Any) -> Any:
    """numpy scalars (and anything else) in a reply, as JSON can hold them."""
    return obj.item() if hasattr(obj, "item") else str(obj)


def serve(
    hello: Callable[[], dict[str, Any]],
    handle: Callable[[dict[str, Any]], dict[str, Any]],
) -> None:
    """The protocol: send `hello()`, then `handle(request)` for each request
    line until ``{"quit": true}`` or the end of stdin (see the module's doc).
    An exception in `hello` is a hello of ``{"ok": false, "why": ...}``."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever else is printed goes to stderr

    def send(obj: dict[str, Any]) -> None:
        """One reply line."""
        out.write(json.dumps(obj, default=_json_default) + "\n")
        out.flush()

    try:
        greeting = hello()
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        greeting = {"ok": False, "why": f"{type(e).__name__}: {e}"}
    send(greeting)
    if not greeting.get("ok"):
        return
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("quit"):
            break
        send(handle(request))


class ValueRecorder:
    """Saves every value a case checked (``_check.record``) into `directory`
    as .npy, the whole array up to FULL_MAX elements, else every `stride`-th
    element of it (about SAMPLE), and lists them for the parent."""

    def __init__(self, directory: str, lib: str) -> None:
        """Record into `directory`, files named after `lib` and this pid."""
        self.directory, self.lib = directory, lib
        self.seq = 0
        self.records: list[dict[str, Any]] = []

    def __call__(self, what: str, value: Any, rule: dict[str, float]) -> None:
        """Save one checked value (as ``_check.set_recorder`` wants)."""
        arr = np.asarray(value)
        if type(arr.dtype).__module__.split(".")[0] != "numpy":
            arr = arr.astype(np.float32)  # e.g. bfloat16: np.save wants numpy's
        stride = 1 if arr.size <= FULL_MAX else -(-arr.size // SAMPLE)
        data = arr.reshape(-1)[::stride] if stride > 1 else arr
        path = os.path.join(self.directory, f"{self.lib}-{os.getpid()}-{self.seq}.npy")
        self.seq += 1
        np.save(path, data, allow_pickle=False)
        self.records.append(
            {
                "what": what,
                "file": path,
                "rule": rule,
                "shape": list(arr.shape),
                "dtype": str(arr.dtype),
                "stride": stride,
            }
        )

    def take(self) -> list[dict[str, Any]]:
        """The records since the last call."""
        out, self.records = self.records, []
        return out


def describe(device: Any) -> dict[str, Any]:
    """A device as the header and the JSON name it: "platform:id", its kind
    (``device_kind`` where the library has one, else its repr)."""
    platform = str(getattr(device, "platform", "?"))
    return {
        "name": f"{platform}:{getattr(device, 'id', '?')}",
        "platform": platform,
        "kind": str(getattr(device, "device_kind", None) or repr(device)),
    }


def _library(lib: str, platform: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Import `lib` on `platform`: (keyword arguments of its Context, hello
    fields); raise when it cannot run there."""
    if lib == "baton":
        import baton as bt

        from _report import _baton_blas

        device = bt.devices()[0]
        if device.platform != platform:
            raise RuntimeError(
                f"BATON_PLATFORMS={os.environ.get('BATON_PLATFORMS')!r} made "
                f"{describe(device)['name']} baton's first device, not a {platform} one"
            )
        info = {"baton": bt.__version__, "baton_blas": _baton_blas()}
        return {"with_baton": True}, {"device": describe(device), "versions": info}
    from _context import load_jax

    jax, jnp, why = load_jax(False)
    if jax is None:
        raise RuntimeError(why)
    precision = None
    if platform == "cuda":  # XLA's default float32 matmul on a GPU is TF32
        jax.config.update("jax_default_matmul_precision", "highest")
        precision = "highest"
    import jaxlib

    device = jax.devices()[0]
    info = {"jax": jax.__version__, "jaxlib": jaxlib.__version__}
    fields = {
        "device": describe(device),
        "versions": info,
        "matmul_precision": precision,
    }
    return {"with_baton": False, "jax": jax, "jnp": jnp}, fields


def child_main(
    lib: str,
    platform: str,
    smoke: bool,
    sweep: bool,
    repeat: int | None,
    values_dir: str,
) -> None:
    """Serve the parent as `lib`'s process on `platform` (torch's: the
    baselines of ``_torch_child.py``)."""
    if lib == "torch":
        from _torch_child import hello as torch_hello
        from _torch_child import measure

        serve(torch_hello, lambda request: measure(request["baseline"], smoke))
        return
    state: dict[str, Any] = {}

    def hello() -> dict[str, Any]:
        """Import the library, check its device, list the cases."""
        from _check import set_recorder
        from _context import Context
        from cases import all_cases, sweep_cases

        ctx_args, fields = _library(lib, platform)
        state["ctx"] = Context(
            smoke=smoke,
            repeat=repeat,
            platform=platform,
            tag=f"bench {lib}",
            **ctx_args,
        )
        cases = sweep_cases(platform) if sweep else all_cases()
        state["cases"] = {c.name: c for c in cases}
        state["recorder"] = ValueRecorder(values_dir, lib)
        set_recorder(state["recorder"])
        listed = [
            {
                "name": c.name,
                "about": c.about,
                "group": c.group,
                "on_device": c.on_device,
            }
            for c in cases
        ]
        return {"ok": True, "lib": lib, "pid": os.getpid(), **fields, "cases": listed}

    def handle(request: dict[str, Any]) -> dict[str, Any]:
        """Run one case; its rows, its failure (or None), the values saved."""
        from _report import rss_line

        ctx, recorder = state["ctx"], state["recorder"]
        case = state["cases"][request["case"]]
        t0 = time.perf_counter()
        rows, failure = [], None
        try:
            rows = case.run(ctx)
        except Exception as e:  # a wrong answer or a library error
            traceback.print_exc(file=sys.stderr)
            failure = {
                "kind": "correctness" if isinstance(e, AssertionError) else "error",
                "message": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}",
            }
        gc.collect()
        seconds = time.perf_counter() - t0
        ctx.progress(f"    {case.name} done in {seconds:.1f} s; {rss_line()}")
        return {
            "rows": [asdict(r) for r in rows],
            "failure": failure,
            "values": recorder.take(),
            "seconds": seconds,
        }

    serve(hello, handle)
