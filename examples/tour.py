"""baton's main job: a tour of explicit, predictable device memory.

Six scenes from the user stories behind baton (../shared/seeds), each with
the memory figures it measures, printed as a table at the end:

  1. Serving a model while its parameters are swapped in place (seed 000):
     device_put(new, into=old) writes into the old storage after in-flight
     work, so the swap never holds two copies; dropping an array frees it at
     once, with the garbage collector off.
  2. A donated training loop at 1x memory next to the same loop without
     donation at 2x (seeds 001, 002).
  3. A large numpy constant captured by many uses and by two functions is
     stored once (seed 003).
  4. A host view blocks donation while it lives; once it is gone the array
     can be donated (seed 004).
  5. A training step with gradients, jit(value_and_grad) with the parameters
     donated: the update overwrites them, the backward pass keeps only the
     residuals saved_residuals lists, and checkpointing lowers them (seed 002).
  6. A fixed-point iteration as one compiled loop (seed 002's
     in_place_fixed_point_iteration): lax.fori_loop over a donated 64 MiB
     state, checked with require_in_place=True, runs 100 steps with no second
     copy; without donation the compiler says which update would copy.

Run: python examples/tour.py   (README's first command builds and runs it)
"""

from __future__ import annotations

import gc
import threading
import time

import numpy as np

import baton as bt
import baton.numpy as bnp

MiB = 1 << 20
ROWS: list[tuple[str, str, str]] = []


def mib(n: int) -> str:
    return f"{n / MiB:8.1f} MiB"


def stats(kind: str = "device") -> dict:
    return bt.memory_stats(memory_kind=kind)


def row(scene: str, what: str, figure: str) -> None:
    ROWS.append((scene, what, figure))
    print(f"  {what:<58} {figure}")


def scene_serving_swap() -> None:
    print("1. serving while parameters are swapped in place")
    n_params, size = 8, 16 * MiB
    shape = (size // 4,)
    empty = stats()["bytes_in_use"]
    params = {f"w{i}": bt.device_put(np.full(shape, 0.0, np.float32))
              for i in range(n_params)}
    forward = bt.jit(lambda p, x: sum(bnp.sum(w[:1024]) for w in p.values()) + x)
    lock = threading.Lock()
    answers: list[float] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            with lock:
                y = forward(params, 1.0)
            answers.append(float(y))

    bt.reset_peak_memory_stats()
    server = threading.Thread(target=serve)
    server.start()
    time.sleep(0.05)
    new_params = {k: np.full(shape, 1.0, np.float32) for k in params}
    with lock:
        params = bt.device_put(new_params, into=params)
    time.sleep(0.05)
    stop.set()
    server.join()
    bt.block_until_ready(params)
    s = stats()
    row("1", "parameters on the device", mib(n_params * size))
    row("1", "peak device memory during the swap", mib(s["peak_bytes_in_use"]))
    row("1", "answers served while swapping", f"{len(answers):8d}")
    assert s["peak_bytes_in_use"] < 2 * n_params * size
    gc.disable()
    try:
        del params
        row("1", "in use right after `del params` (gc disabled)",
            mib(stats()["bytes_in_use"] - empty))
    finally:
        gc.enable()


def scene_donated_training() -> None:
    print("2. training step with and without donation")
    n, size = 8, 8 * MiB
    shape = (size // 4,)

    def step(params, grads):
        return bt.tree.map(lambda p, g: p - 0.1 * g, params, grads)

    results = {}
    for donate in (False, True):
        f = bt.jit(step, donate_argnums=(0,) if donate else ())
        params = [bt.device_put(np.ones(shape, np.float32)) for _ in range(n)]
        grads = [bt.device_put(np.ones(shape, np.float32)) for _ in range(n)]
        bt.block_until_ready(params)
        base = stats()["bytes_in_use"]
        bt.reset_peak_memory_stats()
        for _ in range(10):
            params = f(params, grads)
        bt.block_until_ready(params)
        peak = stats()["peak_bytes_in_use"] - base
        analysis = f.lower(params, grads).compile().memory_analysis()
        results[donate] = peak
        label = "donated" if donate else "not donated"
        row("2", f"{label}: peak beyond params+grads over 10 steps", mib(peak))
        row("2", f"{label}: alias bytes (memory_analysis)",
            mib(analysis.alias_size_in_bytes))
        del params, grads
    assert results[True] <= MiB < results[False]


def scene_captured_constant() -> None:
    print("3. a large captured constant is stored once")
    table = np.random.default_rng(0).standard_normal((4096, 1024)).astype(np.float32)  # 16 MiB
    weights = [bt.device_put(np.full((1024, 8), i, np.float32)) for i in range(16)]

    def apply(ws):
        return sum(bnp.sum(bnp.dot(table, w)) for w in ws)

    before = stats()["bytes_in_use"]
    f = bt.jit(apply)
    g = bt.jit(lambda ws: bnp.sum(bnp.dot(table, ws[0])))
    analysis = f.lower(weights).compile().memory_analysis()
    f(weights).block_until_ready()
    g(weights).block_until_ready()
    grew = stats()["bytes_in_use"] - before
    row("3", "constant: 16 MiB numpy array, 16 uses in f, 1 in g", mib(table.nbytes))
    row("3", "constant bytes in f (memory_analysis)",
        mib(analysis.constant_size_in_bytes))
    row("3", "device memory held for constants by f and g", mib(grew))
    table[:] = 0  # mutating the host array later changes nothing
    del f, g
    row("3", "after dropping f and g", mib(stats()["bytes_in_use"] - before))


def scene_host_view_then_donate() -> None:
    print("4. a host view blocks donation until it is gone")
    x = bt.device_put(np.arange(1 << 20, dtype=np.float32))
    update = bt.jit(lambda a: a * 2, donate_argnums=0)
    view = np.asarray(x)  # zero-copy, read-only
    try:
        update(x)
        outcome = "donated (unexpected)"
    except bt.DonationError as e:
        names_view = "view" in str(e)
        outcome = "DonationError" + (", names the view" if names_view else "")
    row("4", "donate while np.asarray view lives", outcome)
    del view
    y = update(x)
    row("4", "donate after the view is gone", "ok" if x.is_deleted() else "no")
    row("4", "y[1] (x * 2)", f"{float(y[1]):8.1f}")


def scene_gradient_training() -> None:
    print("5. a training step with gradients (grad under jit, donated)")
    # Residual blocks h + tanh(h @ w1) @ w2 with a 4x wider hidden layer.
    d, hidden, blocks, batch = 256, 1024, 4, 512

    def init():
        rng = np.random.default_rng(0)
        return [
            (bt.device_put((rng.standard_normal((d, hidden)) / 16).astype(np.float32)),
             bt.device_put((rng.standard_normal((hidden, d)) / 32).astype(np.float32)))
            for _ in range(blocks)
        ]

    rng = np.random.default_rng(1)
    x = bt.device_put(rng.standard_normal((batch, d)).astype(np.float32))
    y = bt.device_put(rng.standard_normal((batch, d)).astype(np.float32))

    def block(w, h):
        return h + bnp.tanh(h @ w[0]) @ w[1]

    def make_loss(block_fn):
        def loss(params, x, y):
            h = x
            for w in params:
                h = block_fn(w, h)
            return bnp.mean((h - y) ** 2)

        return loss

    def make_step(loss):
        def step(params, x, y):
            value, grads = bt.value_and_grad(loss)(params, x, y)
            return value, bt.tree.map(lambda p, g: p - 0.01 * g, params, grads)

        return step

    remat = bt.checkpoint(block, policy=bt.checkpoint_policies.nothing_saveable)
    for label, block_fn in (("plain", block), ("checkpointed blocks", remat)):
        params = init()
        param_bytes = sum(w.nbytes for w in bt.tree.leaves(params))
        loss = make_loss(block_fn)
        kept = sum(int(np.prod(s)) * np.dtype(t).itemsize
                   for s, t, what in bt.saved_residuals(loss, params, x, y)
                   if not what.startswith("argument"))
        step = bt.jit(make_step(loss), donate_argnums=0)
        a = step.lower(params, x, y).compile().memory_analysis()
        row("5", f"{label}: residuals the backward pass keeps", mib(kept))
        row("5", f"{label}: temp bytes of the compiled step", mib(a.temp_size_in_bytes))
        row("5", f"{label}: alias bytes (params: {mib(param_bytes).strip()})",
            mib(a.alias_size_in_bytes))
        bt.block_until_ready(params)
        base = stats()["bytes_in_use"]
        for _ in range(5):
            value, params = step(params, x, y)
        loss_value = float(value)
        del value
        bt.block_until_ready(params)
        row("5", f"{label}: bytes_in_use growth after 5 steps",
            mib(stats()["bytes_in_use"] - base))
        row("5", f"{label}: loss after 5 steps", f"{loss_value:12.6f}")
        assert a.alias_size_in_bytes == param_bytes
        del params


def scene_fixed_point_loop() -> None:
    print("6. a fixed-point iteration as one compiled loop (lax.fori_loop)")
    n = 64 * MiB // 4

    def iterate(x):
        return bt.lax.fori_loop(0, 100, lambda i, v: v * 0.5 + 1.0, x)

    f = bt.jit(iterate, donate_argnums=0, require_in_place=True)
    x = bt.device_put(np.zeros(n, np.float32))
    a = f.lower(x).compile().memory_analysis()
    row("6", "alias bytes (the carry is the donated buffer)",
        mib(a.alias_size_in_bytes))
    row("6", "temp bytes (the loop's scratch)", f"{a.temp_size_in_bytes} B")
    bt.block_until_ready(x)
    base = stats()["bytes_in_use"]
    bt.reset_peak_memory_stats()
    x = bt.block_until_ready(f(x))
    grew = stats()["peak_bytes_in_use"] - base
    row("6", "peak growth over 100 steps of a 64 MiB state", mib(grew))
    assert grew <= MiB and float(x[0]) == 2.0
    try:
        bt.jit(iterate, require_in_place=True).lower(x).compile()
    except bt.InPlaceError as e:
        reason = str(e).splitlines()[1].strip()
        row("6", "undonated: InPlaceError", reason[:60])
    else:
        raise AssertionError("an undonated carry must be refused")
    del x


def main() -> None:
    start = time.perf_counter()
    print(f"baton tour on {bt.devices()[0]}\n")
    scene_serving_swap()
    scene_donated_training()
    scene_captured_constant()
    scene_host_view_then_donate()
    scene_gradient_training()
    scene_fixed_point_loop()
    print(f"\n{'scene':<6}{'what':<60}figure")
    for scene, what, figure in ROWS:
        print(f"{scene:<6}{what:<60}{figure}")
    print(f"\ndone in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
