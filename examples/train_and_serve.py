"""baton's main job: train a model, checkpoint it into pinned memory, and swap
it into a server that keeps answering -- with the memory figures of every
phase, the contract checked, and the profiler's artefacts saved.

The phases, and what each demonstrates (DESIGN.md section 1; seeds in
../shared/seeds):

  1. setup   A two-spirals classification set generated here (no download) and
             an MLP 2 -> W -> W -> 2 initialised with bt.random (PRNGKey,
             split, normal). The server gets its own device copy of the
             initial parameters; the trainer's pinned checkpoint buffers and
             the server's pinned landing buffers are allocated once, here.
  2. train   Adam, written below, in one jitted step (value_and_grad + update)
             whose parameters AND optimizer state are donated (R4): every step
             writes the new state into the old buffers, so device memory
             should stay at 1x state + one step's temporaries (never 2x):
             memory_analysis() predicts it, memory_stats() measures it. Every
             few steps the trainer checkpoints into its pinned buffers with
             seed 004's donated jitted copy and writes the pinned bytes to a
             file through a read-only host view whose hold dies with it (R7);
             pinned memory never grows.
  3. load    The server reads the checkpoint file straight into its pinned
             landing buffers through writable host views (R7, seed 004's
             "load a checkpoint straight into pinned memory"): no numpy
             intermediate, no new allocation.
  4. swap    Requests to a jitted predict are dispatched (asynchronously: they
             are in flight), then bt.device_put(landing, into=serving) writes
             the trained parameters into the serving copy's storage after
             those requests (R2, seed 000), then more requests follow. The
             requests before the swap answer with the old model, those after
             with the new one; device memory does not grow by a second copy.

A table of bytes_in_use / peak_bytes_in_use per memory kind for each phase
(peaks reset between phases) follows, then the contract checks, each a
promise of DESIGN.md set against a figure measured here, then the profiler's
artefacts: a Chrome trace of the run, a pprof memory profile and the memory
viewer's HTML page (the allocation history of the whole run). If a check
failed, the job then exits with SystemExit listing the failed checks.

Run: python3 examples/train_and_serve.py [--steps N] [--out DIR]
(README's first command, tools/run_main_job.sh, builds baton and runs this.)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import baton as bt
import baton.numpy as bnp

KiB = 1 << 10
KINDS = ("device", "pinned_host", "unpinned_host")
# bytes_in_use may round each buffer up to the allocator's granularity (at
# most 4 KiB a buffer, DESIGN section 3); the checks allow that per buffer.
GRANULE = 4 * KiB
# The staging pool through which device_put(..., into=) snapshots host bytes
# is bounded: 16 MiB per device, in pinned_host (README, R2).
STAGING_BOUND = 16 << 20


def contract(ok: bool, message: str) -> None:
    """Stops the job with `message` when it cannot go on."""
    if not ok:
        raise SystemExit(f"train_and_serve: {message}")


class Checks:
    """The contract's promises, each checked against a measured figure and
    printed as it is checked; failures are collected so that the table,
    the other checks and the artefacts still come out before the job fails."""

    def __init__(self) -> None:
        self.results: list[dict] = []

    def __call__(self, name: str, ok: bool, claim: str, detail: str) -> None:
        self.results.append(
            {"name": name, "ok": bool(ok), "claim": claim, "detail": detail}
        )
        print(f"  {'ok  ' if ok else 'FAIL'} {claim:<52} {detail}")


def kib(n: int) -> str:
    return f"{n / KiB:,.1f} KiB"


def tree_bytes(tree) -> int:
    return sum(leaf.nbytes for leaf in bt.tree.leaves(tree))


def tree_buffers(tree) -> int:
    return len(bt.tree.leaves(tree))


# --- phase accounting --------------------------------------------------------


class PhaseMeter:
    """Memory figures per phase: bytes in use at the start and end of each
    phase and its peak, per memory kind, with the peaks reset at its start."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, dict[str, int]]] = {}
        self._name: str | None = None
        self._start: dict[str, int] = {}

    def begin(self, name: str) -> None:
        self._name = name
        for kind in KINDS:
            bt.reset_peak_memory_stats(memory_kind=kind)
        self._start = {k: bt.memory_stats(memory_kind=k)["bytes_in_use"] for k in KINDS}

    def end(self, *live) -> dict[str, dict[str, int]]:
        """Closes the phase once the work on `live` (pytrees) is done."""
        bt.block_until_ready(live)
        row = {}
        for kind in KINDS:
            s = bt.memory_stats(memory_kind=kind)
            row[kind] = {
                "start": self._start[kind],
                "in_use": s["bytes_in_use"],
                "peak": s["peak_bytes_in_use"],
                # how far the phase rose above where it started
                "peak_growth": s["peak_bytes_in_use"] - self._start[kind],
            }
        self.rows[self._name] = row
        return row

    def table(self) -> str:
        head = f"{'phase':<10}" + "".join(
            f"{kind + ' in use / peak':>34}" for kind in KINDS
        )
        lines = [head, "-" * len(head)]
        for name, row in self.rows.items():
            cells = "".join(
                f"{kib(row[k]['in_use']) + ' / ' + kib(row[k]['peak']):>34}"
                for k in KINDS
            )
            lines.append(f"{name:<10}{cells}")
        return "\n".join(lines)


# --- data and model ----------------------------------------------------------


def two_spirals(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n points of two interleaved spirals (1.5 turns each), one-hot labels."""
    rng = np.random.default_rng(seed)
    t = np.sqrt(rng.uniform(0.05, 1.0, n // 2)) * 3 * np.pi
    arm = np.stack([t * np.cos(t), t * np.sin(t)], axis=1) / (3 * np.pi)
    x = np.concatenate([arm, -arm]) + rng.normal(0.0, 0.02, (n, 2))
    labels = np.repeat([0, 1], n // 2)
    return x.astype(np.float32), np.eye(2, dtype=np.float32)[labels]


def init_mlp(key, sizes: list[int]) -> list[dict]:
    """He-normal weights and zero biases, drawn with bt.random on the device."""
    keys = bt.random.split(key, len(sizes) - 1)
    return [
        {
            "w": bt.random.normal(k, (m, n)) * np.float32(np.sqrt(2.0 / m)),
            "b": bnp.zeros((n,), bnp.float32),
        }
        for k, m, n in zip(keys, sizes[:-1], sizes[1:])
    ]


def predict(params, x):
    """Class logits of the MLP (tanh hidden layers)."""
    h = x
    for layer in params[:-1]:
        h = bnp.tanh(h @ layer["w"] + layer["b"])
    return h @ params[-1]["w"] + params[-1]["b"]


def predict_numpy(params: list[dict], x: np.ndarray) -> np.ndarray:
    """The same model in numpy: the reference the server's answers must match."""
    h = x
    for layer in params[:-1]:
        h = np.tanh(h @ layer["w"] + layer["b"])
    return h @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    """Mean softmax cross-entropy."""
    logits = predict(params, x)
    logp = logits - bt.nn.logsumexp(logits, axis=1, keepdims=True)
    return -bnp.mean(bnp.sum(logp * y, axis=1))


# --- Adam (the repository has no optimizer library; this is Kingma & Ba) ----


def adam_init(params) -> dict:
    def zeros(p):
        return bnp.zeros(p.shape, p.dtype)

    return {
        "count": bnp.zeros((), bnp.float32),
        "mu": bt.tree.map(zeros, params),
        "nu": bt.tree.map(zeros, params),
    }


def make_train_step(lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
    def train_step(params, opt_state, x, y):
        loss, grads = bt.value_and_grad(loss_fn)(params, x, y)
        count = opt_state["count"] + 1.0
        mu = bt.tree.map(lambda m, g: b1 * m + (1 - b1) * g, opt_state["mu"], grads)
        nu = bt.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, opt_state["nu"], grads)
        step_size = lr * bnp.sqrt(1 - b2**count) / (1 - b1**count)
        params = bt.tree.map(
            lambda p, m, v: p - step_size * m / (bnp.sqrt(v) + eps), params, mu, nu
        )
        return params, {"count": count, "mu": mu, "nu": nu}, loss

    # Donating the parameters and the optimizer state (arguments 0 and 1) lets
    # every output reuse its input's buffer: the step updates in place.
    return bt.jit(train_step, donate_argnums=(0, 1))


def copy_to_pinned(params, pinned_dst):
    """Seed 004's jitted device -> pinned_host copy. Both arguments are
    donated: `params` comes back in its own buffers, and the copy lands in
    the buffers of `pinned_dst` (same sizes, same memory kind)."""
    return params, bt.device_put(params, memory_kind="pinned_host")


# --- the job -----------------------------------------------------------------


class ProgressBar:
    """A carriage-return progress bar on stderr: step, loss, steps/s."""

    def __init__(self, total: int, enabled: bool, width: int = 30) -> None:
        self.total, self.enabled, self.width = total, enabled, width
        self.start = time.perf_counter()

    def update(self, step: int, loss: float) -> None:
        if not self.enabled:
            return
        rate = step / max(time.perf_counter() - self.start, 1e-9)
        filled = self.width * step // self.total
        bar = "#" * filled + "." * (self.width - filled)
        sys.stderr.write(
            f"\rtrain [{bar}] {step:>5}/{self.total} "
            f"loss {loss:.4f} {rate:7.1f} steps/s"
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def write_checkpoint(pinned_params, path: str) -> None:
    """Writes the leaves' bytes, in tree order, to `path` through read-only
    host views of the pinned buffers (zero-copy; each view's hold ends with
    its `with` block, so the next donated checkpoint copy can take them)."""
    with open(path, "wb") as f:
        for leaf in bt.tree.leaves(pinned_params):
            with leaf.host_view() as view:
                view.tofile(f)


def read_checkpoint(path: str, pinned_dst) -> None:
    """Reads `path` straight into the pinned buffers of `pinned_dst` through
    writable host views: the caller owns each buffer while its view lives,
    and computations that use it wait for the view's release (R7)."""
    with open(path, "rb") as f:
        for leaf in bt.tree.leaves(pinned_dst):
            with leaf.host_view(writable=True) as view:
                got = f.readinto(view)
            if got != leaf.nbytes:
                raise SystemExit(
                    f"train_and_serve: checkpoint {path} is short: read {got} of "
                    f"{leaf.nbytes} bytes for a {leaf.dtype}{leaf.shape} leaf"
                )


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=600, help="training steps (600)")
    p.add_argument("--width", type=int, default=256, help="hidden width (256)")
    p.add_argument("--points", type=int, default=1024, help="training points (1024)")
    p.add_argument("--lr", type=float, default=5e-3, help="Adam step size (5e-3)")
    p.add_argument(
        "--checkpoints", type=int, default=4, help="checkpoints during training (4)"
    )
    p.add_argument(
        "--requests", type=int, default=8, help="requests each side of the swap"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--out",
        default=os.path.join("/tmp", "baton-main-job"),
        help="folder for the checkpoint and profiler artefacts (/tmp/baton-main-job)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    if args.steps < 1 or args.points < 2 or args.width < 1 or args.requests < 1:
        p.error("--steps, --width and --requests must be >= 1 and --points >= 2")
    return args


def main(argv=None, *, enforce: bool = True) -> dict:
    """Runs the job and returns its figures (plain Python and numpy values).

    With `enforce` (the default, and what the command line does), a broken
    promise of the contract raises SystemExit listing every failed check,
    after the table and the artefacts are out; tests pass enforce=False and
    look at figures["checks"] themselves."""
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    paths = {
        "checkpoint": os.path.join(args.out, "checkpoint.bin"),
        "trace": os.path.join(args.out, "trace.json"),
        "memory_profile": os.path.join(args.out, "memory_profile.pb.gz"),
        "memory_viewer": os.path.join(args.out, "memory_viewer.html"),
    }
    t_start = time.perf_counter()
    print(f"baton main job on {bt.devices()[0]}: train, checkpoint, serve\n")

    # The memory history feeds the memory viewer: every allocation, free,
    # donation and overwrite of the run, with the Python stack that made it.
    # The trace is the run's timeline: executions and transfers per queue,
    # allocation events, and bytes_in_use counters per memory kind.
    with bt.profiler.record_memory_history(enabled=True, max_entries=100000):
        with bt.profiler.trace(paths["trace"]):
            figures = run(args, paths)
        bt.profiler.save_memory_viewer(
            paths["memory_viewer"], title="baton main job: train, checkpoint, serve"
        )

    for what in ("trace", "memory_profile", "memory_viewer"):
        size = os.path.getsize(paths[what]) if os.path.exists(paths[what]) else 0
        contract(size > 0, f"the profiler wrote nothing to {paths[what]}")
    figures["artefacts"] = dict(paths)
    figures["seconds"] = time.perf_counter() - t_start
    print("\nartefacts:")
    print(f"  checkpoint      {paths['checkpoint']}")
    print(f"  chrome trace    {paths['trace']}  (load in ui.perfetto.dev)")
    print(f"  pprof profile   {paths['memory_profile']}  (pprof -http=: FILE)")
    print(f"  memory viewer   {paths['memory_viewer']}  (open in a browser)")
    print(f"\ndone in {figures['seconds']:.1f} s")
    failed = [r for r in figures["checks"] if not r["ok"]]
    if enforce and failed:
        raise SystemExit(
            "train_and_serve: the memory contract (../shared/DESIGN.md) is broken:\n"
            + "\n".join(f"  {r['claim']}: {r['detail']}" for r in failed)
        )
    return figures


def run(args, paths: dict) -> dict:
    meter = PhaseMeter()
    sizes = [2, args.width, args.width, 2]

    # 1. setup ----------------------------------------------------------------
    meter.begin("setup")
    x_np, y_np = two_spirals(args.points, args.seed)
    x, y = bt.device_put(x_np), bt.device_put(y_np)
    # (setup's device peak is bt.random.normal's temporaries: its compiled
    # program needs far more scratch than the values it draws.)
    params = init_mlp(bt.random.PRNGKey(args.seed), sizes)
    opt_state = adam_init(params)
    initial_np = bt.device_get(params)  # numpy copies: the old model's reference
    # The server's own copy (device_put of an Array is an independent copy).
    serving = bt.device_put(params)

    # Pinned buffers, allocated once: the trainer's checkpoint target and the
    # server's landing buffer for checkpoints it loads.
    def pinned_like(p):
        return bt.empty(p.shape, p.dtype, memory_kind="pinned_host")

    ckpt = bt.tree.map(pinned_like, params)
    landing = bt.tree.map(pinned_like, params)
    param_bytes = tree_bytes(params)
    state_bytes = tree_bytes(opt_state)
    meter.end(params, opt_state, serving, ckpt, landing)
    print(
        f"model {'-'.join(map(str, sizes))}: {tree_buffers(params)} arrays, "
        f"parameters {kib(param_bytes)}, Adam state {kib(state_bytes)}; "
        f"{args.points} training points"
    )

    # 2. train ----------------------------------------------------------------
    train_step = make_train_step(args.lr)
    checkpoint = bt.jit(copy_to_pinned, donate_argnums=(0, 1))
    # Compiled before the phase, so the phase measures running, not compiling.
    step_analysis = (
        train_step.lower(params, opt_state, x, y).compile().memory_analysis()
    )
    ckpt_analysis = checkpoint.lower(params, ckpt).compile().memory_analysis()
    bt.block_until_ready((params, opt_state))

    meter.begin("train")
    bar = ProgressBar(args.steps, enabled=not args.no_progress)
    every_bar = max(1, args.steps // 50)
    every_ckpt = max(1, args.steps // max(1, args.checkpoints))
    n_ckpt = 0
    losses = []  # (step, loss) where the bar was drawn
    first_loss = None
    for i in range(1, args.steps + 1):
        params, opt_state, loss = train_step(params, opt_state, x, y)
        if first_loss is None:
            first_loss = float(loss)  # the loss of the initial parameters
        if i % every_bar == 0 or i == args.steps:
            value = float(loss)  # waits for step i: bounds how far dispatch runs
            losses.append((i, value))
            bar.update(i, value)
        if i % every_ckpt == 0 or i == args.steps:
            # Ordered after step i on the device's queue; `ckpt` is donated
            # back into the same pinned buffers, which the view of the
            # previous write_checkpoint no longer holds.
            params, ckpt = checkpoint(params, ckpt)
            write_checkpoint(ckpt, paths["checkpoint"])
            n_ckpt += 1
    last_loss = float(loss)
    del loss
    bar.close()
    train_row = meter.end(params, opt_state, ckpt)
    trained_np = bt.device_get(params)
    ckpt_equal = all(
        np.array_equal(np.asarray(c), t)
        for c, t in zip(bt.tree.leaves(ckpt), bt.tree.leaves(trained_np))
    )
    acc = float(np.mean(predict_numpy(trained_np, x_np).argmax(1) == y_np.argmax(1)))
    print(
        f"loss {first_loss:.4f} (step 1) -> {last_loss:.4f} (step {args.steps}); "
        f"training accuracy {acc:.1%}; {n_ckpt} checkpoints into pinned_host"
    )

    # 3. load -----------------------------------------------------------------
    meter.begin("load")
    read_checkpoint(paths["checkpoint"], landing)
    load_row = meter.end(landing)
    landing_equal = all(
        np.array_equal(np.asarray(a), t)
        for a, t in zip(bt.tree.leaves(landing), bt.tree.leaves(trained_np))
    )

    # 4. swap while serving ---------------------------------------------------
    serve = bt.jit(predict)
    rng = np.random.default_rng(args.seed + 1)
    queries = [
        bt.device_put(rng.uniform(-1, 1, (32, 2)).astype(np.float32))
        for _ in range(args.requests)
    ]
    serve_analysis = serve.lower(serving, queries[0]).compile().memory_analysis()
    bt.block_until_ready((serving, queries))
    device_before_swap = bt.memory_stats()["bytes_in_use"]

    meter.begin("swap")
    # Dispatch returns at once: these requests are in flight when the swap
    # below is enqueued, and the swap writes only after they have read.
    before = [serve(serving, q) for q in queries]
    serving = bt.device_put(landing, into=serving)  # the old handles are consumed
    after = [serve(serving, q) for q in queries]
    swap_row = meter.end(before, after, serving)
    # What is live while serving, by allocation site: the serving copy and
    # the trainer's parameters and Adam state on the device, the checkpoint
    # and landing buffers in pinned_host, the answers, the compiled programs'
    # constants.
    bt.profiler.save_memory_profile(paths["memory_profile"])
    # numpy copies: a zero-copy np.asarray view would keep the answers'
    # device storage alive (R7), and the figures below count it.
    answers_before = bt.device_get(before)
    answers_after = bt.device_get(after)
    del before, after
    device_after_swap = bt.memory_stats()["bytes_in_use"]
    q_np = bt.device_get(queries)  # copies: views would keep the queries alive
    direct = bt.device_get([serve(params, q) for q in queries])  # the trained params
    old_ok = all(
        np.allclose(a, predict_numpy(initial_np, q), rtol=1e-4, atol=1e-4)
        for a, q in zip(answers_before, q_np)
    )
    new_ok = all(np.array_equal(a, d) for a, d in zip(answers_after, direct))
    new_ref_ok = all(
        np.allclose(a, predict_numpy(trained_np, q), rtol=1e-4, atol=1e-4)
        for a, q in zip(answers_after, q_np)
    )
    changed = max(
        float(np.max(np.abs(a - b))) for a, b in zip(answers_before, answers_after)
    )

    # During the swap only the requests' outputs and temporaries may come and
    # go on the device. They are kept below the size of the parameters, so
    # that a second copy of the parameters could not hide in the peak.
    requests_bytes = (
        2 * args.requests * serve_analysis.output_size_in_bytes
        + serve_analysis.temp_size_in_bytes
    )
    swap_grown = swap_row["device"]["peak_growth"]
    contract(
        requests_bytes < param_bytes,
        f"the swap check needs the requests' memory ({kib(requests_bytes)}) below "
        f"the parameters' ({kib(param_bytes)}): raise --width or lower --requests",
    )

    print("\nmemory per phase (peaks reset at the start of each phase)")
    print(meter.table())

    # --- the contract, checked ----------------------------------------------
    print("\ncontract checks")
    check = Checks()

    check(
        "loss",
        last_loss < first_loss,
        "training lowers the loss",
        f"{first_loss:.4f} -> {last_loss:.4f}",
    )
    donated = param_bytes + state_bytes
    check(
        "step_aliases_state",
        step_analysis.alias_size_in_bytes == donated,
        "the step's outputs reuse all donated state",
        f"alias {kib(step_analysis.alias_size_in_bytes)} = params+Adam {kib(donated)}",
    )
    # Beyond what was live before training, the loop needs one step's
    # temporaries and its one non-aliased output (the loss), nothing else:
    # no second copy of the parameters and optimizer state (they are
    # donated), and no second set of temporaries (a step's temporaries are
    # freed into the queue it runs on, and the next step on that queue reuses
    # them at once: stream-ordered reuse, R1), however far dispatch runs ahead.
    step_extra = (
        step_analysis.temp_size_in_bytes
        + step_analysis.output_size_in_bytes
        - step_analysis.alias_size_in_bytes
    )
    grown = train_row["device"]["peak_growth"]
    check(
        "train_peak",
        grown <= step_extra + GRANULE,
        "training peak = 1x state + one step's temporaries",
        f"peak growth {kib(grown)}, one step's temps+loss {kib(step_extra)}",
    )
    check(
        "train_flat",
        train_row["device"]["in_use"] - train_row["device"]["start"] <= GRANULE,
        f"device memory flat over {args.steps} steps",
        f"in use {kib(train_row['device']['start'])} -> "
        f"{kib(train_row['device']['in_use'])}",
    )
    check(
        "checkpoint_aliases",
        ckpt_analysis.alias_size_in_bytes == 2 * param_bytes,
        "the checkpoint copy reuses both donated trees",
        f"alias {kib(ckpt_analysis.alias_size_in_bytes)} = 2 x {kib(param_bytes)}",
    )
    check(
        "checkpoint_no_alloc",
        train_row["pinned_host"]["peak"] == train_row["pinned_host"]["start"],
        f"{n_ckpt} checkpoints allocate no pinned memory",
        f"pinned peak {kib(train_row['pinned_host']['peak'])} = start",
    )
    check(
        "checkpoint_equal",
        ckpt_equal,
        "the pinned checkpoint equals the parameters",
        "every leaf, bitwise",
    )
    check(
        "load_no_alloc",
        all(load_row[k]["peak"] == load_row[k]["start"] for k in KINDS),
        "loading into pinned memory allocates nothing",
        f"pinned peak {kib(load_row['pinned_host']['peak'])} = start",
    )
    check(
        "load_equal",
        landing_equal,
        "the loaded checkpoint equals the parameters",
        "every leaf, bitwise",
    )
    check(
        "answers_before",
        old_ok,
        "requests before the swap get the old model's answers",
        "= numpy forward, initial params",
    )
    check(
        "answers_after",
        new_ok and new_ref_ok,
        "requests after the swap get the trained model's",
        "= predict(trained params)",
    )
    check(
        "answers_changed",
        changed > 1e-3,
        "the swap changed the answers",
        f"max |change| {changed:.3f}",
    )
    check(
        "swap_in_place",
        device_after_swap == device_before_swap,
        "the swap reuses the serving copy's storage",
        f"device in use {kib(device_before_swap)} before and after",
    )
    check(
        "swap_peak",
        swap_grown < param_bytes,
        "the swap holds no second copy on the device",
        f"peak growth {kib(swap_grown)} (requests) < params {kib(param_bytes)}",
    )
    staging = swap_row["pinned_host"]["peak_growth"]
    check(
        "staging_bounded",
        staging <= STAGING_BOUND,
        "staging for the swap is bounded",
        f"pinned peak growth {kib(staging)} <= {kib(STAGING_BOUND)}",
    )

    return {
        "steps": args.steps,
        "first_loss": first_loss,
        "last_loss": last_loss,
        "losses": losses,
        "accuracy": acc,
        "param_bytes": param_bytes,
        "state_bytes": state_bytes,
        "checkpoints": n_ckpt,
        "checkpoint_equal": ckpt_equal,
        "landing_equal": landing_equal,
        "answers_before": answers_before,
        "answers_after": answers_after,
        "direct_answers": direct,
        "queries": q_np,
        "old_model_answers": [predict_numpy(initial_np, q) for q in q_np],
        "trained_params": trained_np,
        "checkpoint_values": [np.array(c) for c in bt.tree.leaves(ckpt)],
        "device_before_swap": device_before_swap,
        "device_after_swap": device_after_swap,
        "swap_peak_growth": swap_grown,
        "requests_bytes": requests_bytes,
        "train_peak_growth": grown,
        "train_step_extra": step_extra,
        "step_analysis": {
            "temp": step_analysis.temp_size_in_bytes,
            "alias": step_analysis.alias_size_in_bytes,
            "output": step_analysis.output_size_in_bytes,
            "argument": step_analysis.argument_size_in_bytes,
        },
        "phases": meter.rows,
        "checks": check.results,
    }


if __name__ == "__main__":
    main(sys.argv[1:])
