"""The size sweep (``run.py --sweep``): how baton's time over JAX's moves with size.

Each case is jitted in both libraries and timed at a series of sizes, from a
few KiB (where the call's overhead dominates) to 64-256 MiB (where memory
bandwidth or compute does):

  a*2+1, sum(a*a), tanh(a)      float32[n], n = 2^10, 2^12, ..., 2^24
  take(a, idx)                  n/4 random int32 indices in [0, n) (the same
                                for both libraries)
  transpose(a)+1                a square float32[s, s], s*s = n (32x32 ...
                                4096x4096)
  at[i].set donated             ``a.at[i].set(a[i] + 1.0)`` with
                                ``donate_argnums=0``, a of 2^18 ... 2^26
                                elements (1-256 MiB), i moving one element
                                each step
  matmul                        float32[s, s] @ float32[s, s], s = 16 ... 4096

(smoke: the two smallest sizes of each; the donated loop 2^10 and 2^12). A
sample is a few calls, each followed by ``block_until_ready`` (the donated
loop: a few steps, each synced, the state donated every step), sized to about
a millisecond and preceded by one untimed call (the pause between samples
lets worker threads fall asleep; a loop wakes them once); baton's and JAX's
samples are interleaved (``_timing.interleave``), repeated so that a size
takes about 0.5 s (at least 15 repetitions; matmul 2048: 7, 4096: 3). The last output
of a sample is freed outside the clock; with several calls per sample the
earlier ones are freed as the next returns, as in a loop. Every size's
outputs are checked against numpy (and baton's against JAX's) before timing;
the donated loop's final states after it.

Each (case, size) is a row "sweep CASE SIZE" whose ratio is baton's median
time over JAX's, with ``extra = {"case", "size", "axis"}`` (axis "elements"
or "side": what `size` counts) for the compact table and the plot.

On an accelerator (``run.py --platform cuda|sim``: each library in a process
of its own, so no interleaving) the element counts go up to 2^28 on CUDA
(matmul to 8192; the simulated device, an emulator, stops at 2^16 and 128),
one more case times ``device_put`` from the host, and each row asks for a
baseline measured by torch in the same run (``_torch_child.py``): the
device-to-device copy of the array for the elementwise cases, the pinned
host-to-device copy for ``device_put``, ``torch.matmul`` for matmul. Its
``extra`` then also holds the bytes moved (``bytes``) or the flop (``flop``),
from which the parent computes each library's throughput over the baseline's.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np

import baton as bt
import baton.numpy as bnp

from _check import assert_close, record
from _context import Context
from _report import Row, time_row
from _timing import SampleFn, Samples, interleave, now_ns
from cases import Case

ELEMENTS = [1 << k for k in range(10, 25, 2)]  # 2^10 ... 2^24
DONATED = [1 << k for k in range(18, 27, 2)]  # 1 MiB ... 256 MiB of float32
SIDES = [1 << k for k in range(4, 13)]  # 16 ... 4096
# The same on an accelerator (--platform): CUDA up to 2^28 elements (1 GiB of
# float32; matmul to 8192, whose float64 reference on the host takes seconds);
# the simulated device runs the generated kernels on the host, slowly.
DEVICE_SIZES = {
    "cuda": {
        "elements": [1 << k for k in range(10, 29, 2)],  # 2^10 ... 2^28
        "donated": [1 << k for k in range(18, 29, 2)],  # 1 MiB ... 1 GiB
        "sides": [1 << k for k in range(4, 14)],  # 16 ... 8192
    },
    "sim": {
        "elements": [1 << k for k in range(10, 17, 2)],  # 2^10 ... 2^16
        "donated": [1 << k for k in range(10, 17, 2)],
        "sides": [16, 32, 64, 128],
    },
}
SAMPLE_S = 1e-3  # aim of one sample's length
BUDGET_S = 0.5  # aim of one size's timed repetitions, both libraries
MAX_REPS = 200
# Fewest repetitions of a size: the median of 5 moved a millisecond cell by
# 0.6 between two runs on a 2-vCPU VM (tanh 2^22: 0.84, then 1.51 with 9
# repetitions, one sample in three slowed by a neighbour), so sizes of a few
# milliseconds take 15; matmul's large sides take fewer (MATMUL_MIN_REPS:
# a 4096² product is over a second in both libraries).
MIN_REPS = 15
MATMUL_MIN_REPS = {2048: 7, 4096: 3}  # sides up to 1024: MIN_REPS
# JAX's CPU client may not implement donation (older jaxlibs warn).
DONATION_WARNING = "Some donated buffers were not usable"


def _sizes(ctx: Context, kind: str) -> list[int]:
    """The sizes of this run of `kind` ("elements", "donated", "sides") on
    its platform: every size, or in smoke the two smallest (the donated loop:
    2^10 and 2^12)."""
    if ctx.platform == "cpu":
        full = {"elements": ELEMENTS, "donated": DONATED, "sides": SIDES}[kind]
    else:
        full = DEVICE_SIZES[ctx.platform][kind]
    return ctx.pick(full, ELEMENTS[:2] if kind == "donated" else full[:2])


def _baseline(ctx: Context, kind: str, size: int, **work: int) -> dict[str, Any]:
    """On an accelerator, a row's extra asking for a torch baseline (`kind`
    "d2d" or "h2d" of `size` bytes, "matmul" of side `size`) and saying the
    work done (bytes=... or flop=...); nothing on the CPU."""
    if ctx.platform == "cpu":
        return {}
    key = "side" if kind == "matmul" else "nbytes"
    return {"baseline_spec": {"kind": kind, key: size}, **work}


def size_label(n: int, axis: str = "elements") -> str:
    """'2^20' for a power-of-two element count, '4096x4096' for a side."""
    if axis == "side":
        return f"{n}x{n}"
    k = n.bit_length() - 1
    return f"2^{k}" if n == 1 << k else str(n)


def _calls(call: Callable[[], Any], n: int, prime: bool) -> SampleFn:
    """Sample function: `n` calls, each followed by ``block_until_ready``; ns
    per call. With `prime`, one untimed call first: the pause between samples
    lets a library's worker threads fall asleep, and a loop of calls pays for
    waking them once, not once per few calls. The last output is freed after
    the clock stops."""

    def sample() -> float:
        """One batch of `n` synced calls; ns per call."""
        if prime:
            y = call()
            y.block_until_ready()
            y.delete()
        t0 = now_ns()
        for _ in range(n):
            y = call()
            y.block_until_ready()
        t1 = now_ns()
        y.delete()
        return (t1 - t0) / n

    return sample


def _plan(ctx: Context, seconds: dict[str, float], min_reps: int) -> tuple[int, int]:
    """(calls per sample, repetitions) for per-call times `seconds` (one per
    library): samples of about SAMPLE_S of the slower library, and enough
    repetitions that the size takes about BUDGET_S (smoke: a few)."""
    slowest = max(seconds.values())
    per = max(1, round(SAMPLE_S / slowest))
    turn = sum((per + 1) * s + 1e-3 for s in seconds.values())  # + prime, pause
    reps = min(MAX_REPS, max(min_reps, int(BUDGET_S / turn)))
    return per, ctx.reps(reps, min(reps, 3))


def _time_call(call: Callable[[], Any]) -> float:
    """Seconds of a synced call after warm-up, for `_plan`: the best of three
    when a call takes under 10 ms, else of one."""
    best = math.inf
    for _ in range(3):
        t0 = now_ns()
        y = call()
        y.block_until_ready()
        best = min(best, (now_ns() - t0) * 1e-9)
        y.delete()
        if best >= 0.01:
            break
    return best


def _row(
    case: str,
    n: int,
    s: dict[str, Samples],
    target: str,
    axis: str = "elements",
    **extra: Any,
) -> Row:
    """The row "sweep CASE SIZE" of one size (ms once baton's median passes 10
    ms; JAX's in a process of JAX alone)."""
    first = s["baton"] if "baton" in s else s["jax"]
    unit = "ms" if first.median > 1e7 else "µs"
    row = time_row(
        f"sweep {case} {size_label(n, axis)}",
        s.get("baton"),
        s.get("jax"),
        target,
        unit,
    )
    row.extra = {"case": case, "size": n, "axis": axis, **extra}
    return row


def _check_norm(what: str, expected: np.ndarray, outs: dict[str, Any], rel: float):
    """Assert each output's distance to `expected` (and baton's to JAX's) is
    at most `rel` (x2 between the libraries) of `expected`'s Frobenius norm:
    a matmul's rounding depends on its blocking, not on the element."""
    ref = expected.astype(np.float64)
    norm = float(np.linalg.norm(ref))
    got = {}
    for lib, value in outs.items():
        got[lib] = np.asarray(value)
        if got[lib].shape != ref.shape or got[lib].dtype != expected.dtype:
            raise AssertionError(
                f"{what}: {lib} returned {got[lib].dtype}{list(got[lib].shape)}, "
                f"expected {expected.dtype}{list(expected.shape)}"
            )
        err = float(np.linalg.norm(got[lib] - ref)) / norm
        if not err <= rel:
            raise AssertionError(
                f"{what}: {lib} is {err:.3g} of the norm off (> {rel})"
            )
        record(what, got[lib], {"norm_rtol": rel})
    if len(got) == 2:
        err = float(np.linalg.norm(got["baton"] - got["jax"].astype(np.float64)))
        if not err / norm <= 2 * rel:
            raise AssertionError(f"{what}: baton and jax differ by {err / norm:.3g}")


def _point(
    ctx: Context,
    case: str,
    n: int,
    make_fn: Callable[[Any], Callable],
    args: list[np.ndarray],
    expected: np.ndarray,
    target: str = "<= 1.0",
    axis: str = "elements",
    rtol: float = 1e-6,
    atol: float = 1e-6,
    norm_rtol: float | None = None,
    min_reps: int = MIN_REPS,
    block_turns: int = 0,
    settle_s: float = 1e-3,
    **extra: Any,
) -> Row:
    """One (case, size): jit `make_fn(numpy-like module)` in both libraries on
    the same `args`, check the first outputs against `expected` (elementwise
    rtol/atol, or relative to the norm with `norm_rtol`), then time both.
    `block_turns` > 0 takes the samples in that many blocks per library with
    `settle_s` before each (for BLAS workers that spin after a call);
    `extra` goes into the row's extra."""
    label = f"sweep {case} {size_label(n, axis)}"
    calls = {}
    if ctx.with_baton:
        bt_f = bt.jit(make_fn(bnp))
        bt_args = [bt.device_put(a) for a in args]
        calls["baton"] = lambda: bt_f(*bt_args)
    if ctx.jax is not None:
        jax_f = ctx.jax.jit(make_fn(ctx.jnp))
        jax_args = [ctx.jax.device_put(a) for a in args]
        calls["jax"] = lambda: jax_f(*jax_args)
    outs = {lib: call() for lib, call in calls.items()}  # compiles
    if norm_rtol is not None:
        _check_norm(label, expected, outs, norm_rtol)
    else:
        assert_close(
            label, expected, outs.get("baton"), outs.get("jax"), rtol=rtol, atol=atol
        )
    for out in outs.values():
        out.delete()
    s, plan = _measure(ctx, calls, min_reps, block_turns, settle_s)
    return _row(case, n, s, target, axis, **plan, **extra)


def _measure(
    ctx: Context,
    calls: dict[str, Callable[[], Any]],
    min_reps: int = MIN_REPS,
    block_turns: int = 0,
    settle_s: float = 1e-3,
) -> tuple[dict[str, Samples], dict[str, int]]:
    """Time each library's call (which returns an array), interleaved, as
    `_point` describes; return the samples and the plan (calls per sample,
    repetitions) for the row's extra."""
    seconds = {k: _time_call(c) for k, c in calls.items()}
    per, reps = _plan(ctx, seconds, min_reps)
    block = -(-reps // block_turns) if block_turns else 1
    prime = max(seconds.values()) < 0.01  # cheap enough to prime each sample
    s = interleave(
        {k: _calls(c, per, prime) for k, c in calls.items()},
        reps,
        warmup=1 if max(seconds.values()) < 0.1 else 0,  # a warm-up sample each
        block=block,
        settle_s=settle_s,
    )
    return s, {"calls_per_sample": per, "reps": reps}


def _uniform(n: int, seed: int) -> np.ndarray:
    """n float32 values in [-2, 2)."""
    return np.random.default_rng(seed).uniform(-2, 2, n).astype(np.float32)


def axpb(ctx: Context) -> list[Row]:
    """a * 2 + 1 (one rounding: exact against numpy's float32)."""
    rows = []
    for n in _sizes(ctx, "elements"):
        x = _uniform(n, n)
        rows.append(
            _point(
                ctx,
                "a*2+1",
                n,
                lambda m: lambda a: a * 2 + 1,
                [x],
                x * 2 + 1,
                **_baseline(ctx, "d2d", 4 * n, bytes=8 * n),
            )
        )
    return rows


def sum_sq(ctx: Context) -> list[Row]:
    """sum(a * a) to a float32 scalar; checked to 1e-4 of a float64 sum."""
    rows = []
    for n in _sizes(ctx, "elements"):
        x = _uniform(n, n + 1)
        x64 = x.astype(np.float64)
        expected = np.asarray(np.sum(x64 * x64), np.float32)
        rows.append(
            _point(
                ctx,
                "sum(a*a)",
                n,
                lambda m: lambda a: m.sum(a * a),
                [x],
                expected,
                rtol=1e-4,
                atol=0.0,
                **_baseline(ctx, "d2d", 4 * n, bytes=4 * n),
            )
        )
    return rows


def tanh(ctx: Context) -> list[Row]:
    """tanh(a); checked to rtol 1e-5 / atol 1e-6 of a float64 tanh."""
    rows = []
    for n in _sizes(ctx, "elements"):
        x = _uniform(n, n + 2)
        expected = np.tanh(x.astype(np.float64)).astype(np.float32)
        rows.append(
            _point(
                ctx,
                "tanh(a)",
                n,
                lambda m: m.tanh,
                [x],
                expected,
                rtol=1e-5,
                atol=1e-6,
                **_baseline(ctx, "d2d", 4 * n, bytes=8 * n),
            )
        )
    return rows


def take(ctx: Context) -> list[Row]:
    """take(a, idx) with n/4 random int32 indices in range (a gather); exact."""
    rows = []
    for n in _sizes(ctx, "elements"):
        x = _uniform(n, n + 3)
        idx = np.random.default_rng(n + 4).integers(0, n, n // 4).astype(np.int32)
        rows.append(
            _point(
                ctx,
                "take(a,idx)",
                n,
                lambda m: lambda a, i: m.take(a, i),
                [x, idx],
                x[idx],
                rtol=0.0,
                atol=0.0,
                # n/4 indices and n/4 values read, n/4 values written
                **_baseline(ctx, "d2d", 4 * n, bytes=3 * n),
            )
        )
    return rows


def transpose(ctx: Context) -> list[Row]:
    """transpose(a) + 1 of a square a with n elements; exact."""
    rows = []
    for n in _sizes(ctx, "elements"):
        side = math.isqrt(n)
        if side * side != n:
            continue
        x = _uniform(n, n + 5).reshape(side, side)
        rows.append(
            _point(
                ctx,
                "transpose(a)+1",
                n,
                lambda m: lambda a: m.transpose(a) + 1,
                [x],
                x.T + 1,
                rtol=0.0,
                atol=0.0,
                shape=[side, side],
                **_baseline(ctx, "d2d", 4 * n, bytes=8 * n),
            )
        )
    return rows


class DonatedLoop:
    """A running ``state = step(state, i)`` loop of one library, i = the step
    count modulo the state's length; owns its state (donated every step)."""

    def __init__(self, step: Callable, state: Any) -> None:
        """Keep the jitted step and the first state."""
        self.step, self.state, self.calls = step, state, 0
        self.n = int(state.shape[0])

    def advance(self) -> None:
        """One step, synced."""
        self.state = self.step(self.state, self.calls % self.n)
        self.calls += 1
        self.state.block_until_ready()

    def sample_fn(self, per: int) -> SampleFn:
        """Sample function: `per` synced steps after an untimed one; ns per
        step."""

        def sample() -> float:
            """One untimed step (see `_calls`), then a batch; ns per step."""
            self.advance()
            t0 = now_ns()
            for _ in range(per):
                self.advance()
            return (now_ns() - t0) / per

        return sample


def donated_at_set(ctx: Context) -> list[Row]:
    """``a.at[i].set(a[i] + 1.0)`` with ``donate_argnums=0``: an O(1) update of
    an O(n) array, per synced step; the final states are checked exactly
    (integer-valued floats: each element is its start plus its step count)."""

    def step(a: Any, i: Any) -> Any:
        """The update (the same code for both libraries)."""
        return a.at[i].set(a[i] + 1.0)

    rows = []
    for n in _sizes(ctx, "donated"):
        a0 = np.random.default_rng(n).integers(-1000, 1000, n).astype(np.float32)
        loops = {}
        if ctx.with_baton:
            loops["baton"] = DonatedLoop(
                bt.jit(step, donate_argnums=0), bt.device_put(a0)
            )
        if ctx.jax is not None:
            jax = ctx.jax
            loops["jax"] = DonatedLoop(
                jax.jit(step, donate_argnums=0), jax.device_put(a0)
            )
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=DONATION_WARNING)
            seconds = {}
            for lib, loop in loops.items():
                for _ in range(2):  # compile, warm up
                    loop.advance()
                seconds[lib] = math.inf
                for _ in range(3):
                    t0 = now_ns()
                    loop.advance()
                    seconds[lib] = min(seconds[lib], (now_ns() - t0) * 1e-9)
            per, reps = _plan(ctx, seconds, 5)
            s = interleave(
                {k: v.sample_fn(per) for k, v in loops.items()}, reps, warmup=1
            )
        label = f"sweep at[i].set donated {size_label(n)}"
        for lib, loop in loops.items():
            expected = a0 + np.float32(loop.calls // n)  # every element's count
            expected[: loop.calls % n] += 1
            assert_close(f"{label} ({lib})", expected, loop.state, rtol=0.0)
            del expected
        rows.append(
            _row(
                "at[i].set donated",
                n,
                s,
                "<= 1.0",
                steps_per_sample=per,
                reps=reps,
                mib=n * 4 / (1 << 20),
            )
        )
        for loop in loops.values():
            del loop.state
    return rows


def matmul(ctx: Context) -> list[Row]:
    """s x s float32 matmul, s = 16 ... 4096; checked relative to the norm
    (2e-5) of a float64 product. At least 15 repetitions (2048: 7, 4096: 3), in 3 blocks
    per library with a pause before each, so that one library's threads still
    polling after its GEMMs stay out of the other's samples (baton's OpenBLAS
    polls ~50 µs, python/baton/_blas_environment.py; its default is ~0.1 s)."""
    rows = []
    for side in _sizes(ctx, "sides"):
        rng = np.random.default_rng(side)
        x = rng.uniform(size=(side, side)).astype(np.float32)
        y = rng.uniform(size=(side, side)).astype(np.float32)
        expected = (x.astype(np.float64) @ y.astype(np.float64)).astype(np.float32)
        rows.append(
            _point(
                ctx,
                "matmul",
                side,
                lambda m: lambda a, b: a @ b,
                [x, y],
                expected,
                target="<= 1.1",
                axis="side",
                norm_rtol=2e-5,
                min_reps=MATMUL_MIN_REPS.get(side, MIN_REPS),
                block_turns=3,
                settle_s=ctx.pick(0.15, 0.0),
                **_baseline(ctx, "matmul", side, flop=2 * side**3),
            )
        )
    return rows


def device_put(ctx: Context) -> list[Row]:
    """``device_put`` of a float32[n] numpy array (pageable host memory) onto
    the accelerator, completed, per call (the copy freed outside the clock);
    checked exactly. Only on an accelerator (``--platform``); its baseline is
    torch's pinned host-to-device copy of the same bytes."""
    return [_put_point(ctx, n) for n in _sizes(ctx, "elements")]


def _put_point(ctx: Context, n: int) -> Row:
    """One size of `device_put`."""
    x = _uniform(n, n + 6)
    calls = {}
    if ctx.with_baton:
        calls["baton"] = lambda: bt.device_put(x)
    if ctx.jax is not None:
        calls["jax"] = lambda: ctx.jax.device_put(x)
    outs = {lib: call() for lib, call in calls.items()}
    assert_close(
        f"sweep device_put {size_label(n)}",
        x,
        outs.get("baton"),
        outs.get("jax"),
        rtol=0.0,
    )
    for out in outs.values():
        out.delete()
    s, plan = _measure(ctx, calls)
    return _row(
        "device_put",
        n,
        s,
        "<= 1.0",
        **plan,
        **_baseline(ctx, "h2d", 4 * n, bytes=4 * n),
    )


CASES = [
    Case("sweep_axpb", axpb, "a*2+1 on float32[2^10 ... 2^24]", on_device=True),
    Case("sweep_sum", sum_sq, "sum(a*a) on float32[2^10 ... 2^24]", on_device=True),
    Case("sweep_tanh", tanh, "tanh(a) on float32[2^10 ... 2^24]", on_device=True),
    Case(
        "sweep_take",
        take,
        "take(a, n/4 random indices), n = 2^10 ... 2^24",
        on_device=True,
    ),
    Case(
        "sweep_transpose",
        transpose,
        "transpose(a)+1, 32x32 ... 4096x4096",
        on_device=True,
    ),
    Case(
        "sweep_donated_at_set",
        donated_at_set,
        "donated a.at[i].set(a[i]+1) per step, 1 ... 256 MiB",
        on_device=True,
    ),
    Case(
        "sweep_matmul", matmul, "s x s float32 matmul, s = 16 ... 4096", on_device=True
    ),
]
# Only on an accelerator (--platform cuda|sim): the transfer from the host.
DEVICE_CASES = [
    Case(
        "sweep_device_put",
        device_put,
        "device_put of float32[n] from numpy onto the accelerator",
        on_device=True,
    ),
]
