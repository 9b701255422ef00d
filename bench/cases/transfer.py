"""device_put from numpy: small arrays (per-call cost, one array and a list of
100) and one large array against memcpy of the same bytes.

Every timed device_put includes completing the copy (``block_until_ready``);
the large case frees the destination between repetitions, outside the clock,
so each repetition allocates it again (from baton's cache, or from the OS for
JAX), just as a user's loop would.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import baton as bt

from _baselines import MemcpyBench
from _check import assert_close
from _context import Context
from _report import Row, rate, ratio, time_row
from _timing import call_and_wait, interleave, op_then_release
from cases import Case

MiB = 1 << 20


def _put_small(ctx: Context, count: int) -> list[Row]:
    """device_put of `count` float32[1000] arrays (one array, or a list in one
    call: each library's idiomatic fastest way), completed, per call."""
    rng = np.random.default_rng(count)
    host = [rng.standard_normal(1000).astype(np.float32) for _ in range(count)]
    arg: Any = host[0] if count == 1 else host
    name = f"device_put {count} x f32[1000]"
    fns = {
        "baton": call_and_wait(
            lambda: bt.device_put(arg),
            bt.block_until_ready,
            ctx.pick(50 if count == 1 else 5, 2),
        )
    }
    jax_out = None
    if ctx.jax is not None:
        jax = ctx.jax
        fns["jax"] = call_and_wait(
            lambda: jax.device_put(arg),
            jax.block_until_ready,
            ctx.pick(50 if count == 1 else 5, 2),
        )
        jax_out = np.stack(jax.device_get(jax.device_put(host)))
    bt_out = np.stack(bt.device_get(bt.device_put(host)))
    assert_close(name, np.stack(host), bt_out, jax_out, rtol=0)
    s = interleave(fns, ctx.reps(100 if count == 1 else 50, 5), warmup=2)
    return [time_row(name, s["baton"], s.get("jax"))]


def device_put_large(ctx: Context) -> list[Row]:
    """device_put of one large float32 array vs memcpy (best of 1 and N
    threads) of the same bytes into a preallocated, touched buffer."""
    nbytes = ctx.pick(1 << 30, 4 * MiB)
    name = f"device_put {nbytes // MiB} MiB f32"
    src = np.arange(nbytes // 4, dtype=np.float32)
    memcpy = MemcpyBench(src)

    def release(y: Any) -> None:
        """Free the destination now (outside the clock)."""
        y.delete()

    def release_jax(y: Any) -> None:
        """Free JAX's destination, then pause: right after JAX frees a large
        buffer the next sample of any copy measures slower (by up to 40% on
        the 2-vCPU VM), so let that settle before the next turn."""
        y.delete()
        time.sleep(ctx.pick(0.5, 0.0))

    fns = {
        "baton": op_then_release(
            lambda: bt.device_put(src).block_until_ready(), release
        )
    }
    if ctx.jax is not None:
        jax = ctx.jax
        fns["jax"] = op_then_release(
            lambda: jax.device_put(src).block_until_ready(), release_jax
        )
    fns.update(memcpy.samplers())
    try:
        y = bt.device_put(src)
        jy = None if ctx.jax is None else ctx.jax.device_put(src)
        assert_close(name, src, y, jy, rtol=0)
        del y, jy
        s = interleave(fns, ctx.reps(7, 3), warmup=1)
        best = memcpy.best(s)
    finally:
        memcpy.close()
    baton, jaxv = rate(nbytes, s["baton"]), rate(nbytes, s.get("jax"))
    return [
        Row(
            case=name,
            unit="GB/s",
            baton=baton,
            jax=jaxv,
            baseline=best.gbps(),
            baseline_name=best.label,
            ratio=ratio(baton, best.gbps()),
            ratio_of="of memcpy",
            target=">= 0.9",
            best={
                "baton": rate(nbytes, s["baton"], True),
                "jax": rate(nbytes, s.get("jax"), True),
                "baseline": best.gbps(best=True),
            },
            extra={
                f"{k} GB/s": rate(nbytes, v)
                for k, v in s.items()
                if k.startswith("memcpy")
            },
        )
    ]


CASES = [
    Case(
        "device_put_1",
        lambda ctx: _put_small(ctx, 1),
        "device_put of one f32[1000], completed",
    ),
    Case(
        "device_put_100",
        lambda ctx: _put_small(ctx, 100),
        "device_put of a list of 100 f32[1000], completed",
    ),
    Case(
        "device_put_large",
        device_put_large,
        "device_put of 1 GiB (smoke: 4 MiB) vs memcpy",
    ),
]
