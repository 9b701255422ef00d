"""Training a small model with optax, written for JAX, run on baton unchanged.

    python -m baton.as_jax examples/optax_training.py            # on baton
    python examples/optax_training.py                             # on JAX
    python -m baton.as_jax examples/optax_training.py --json      # the losses as JSON

Needs optax (``tests/optax/requirements.txt`` pins the version the tests
use). Nothing here names baton: ``python -m baton.as_jax`` makes
``import jax`` give baton, and optax runs on it as on JAX (docs/as_jax.md).

A two-layer MLP regresses a smooth function of 8 inputs. The optimizer is
``optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(...))`` with a
warmup-cosine schedule; the whole step (loss, gradients, optimizer update,
parameter update) is one jitted function whose parameters and optimizer
state are donated, so each step writes them in place instead of holding two
copies. The weights start from numpy (a fixed seed), so the same program on
JAX and on baton starts from the same point and their loss curves can be
compared (tests/jax_compat/test_optax_training.py does).

It prints the loss as it falls and the device memory figures the runtime
reports (``Device.memory_stats()``; JAX on CPU reports none).
"""

from __future__ import annotations

import argparse
import json
import sys

import jax
import jax.numpy as jnp
import numpy as np
import optax

IN, HIDDEN, OUT = 8, 64, 1


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1.0, 1.0, (n, IN)).astype(np.float32)
    w = rng.normal(size=(IN, OUT)).astype(np.float32)
    y = np.sin(x @ w) + 0.1 * (x**2).sum(axis=1, keepdims=True)
    return x, y.astype(np.float32)


def init_params(seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.RandomState(seed)

    def glorot(fan_in: int, fan_out: int) -> np.ndarray:
        scale = np.sqrt(2.0 / (fan_in + fan_out))
        return (rng.normal(size=(fan_in, fan_out)) * scale).astype(np.float32)

    return {
        "w1": glorot(IN, HIDDEN),
        "b1": np.zeros(HIDDEN, np.float32),
        "w2": glorot(HIDDEN, OUT),
        "b2": np.zeros(OUT, np.float32),
    }


def predict(params: dict, x: jax.Array) -> jax.Array:
    h = jax.nn.gelu(x @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


def loss_fn(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean(optax.losses.squared_error(predict(params, x), y))


def make_optimizer(steps: int) -> optax.GradientTransformation:
    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=3e-3, warmup_steps=steps // 10, decay_steps=steps
    )
    return optax.chain(
        optax.clip_by_global_norm(1.0),
        optax.adamw(learning_rate=schedule, weight_decay=1e-4),
    )


def device_memory() -> dict | None:
    """The runtime's memory figures for the first device (None where the
    runtime reports none, as JAX on CPU)."""
    stats = getattr(jax.devices()[0], "memory_stats", lambda: None)()
    if not stats:
        return None
    keys = ("bytes_in_use", "peak_bytes_in_use")
    return {k: int(stats[k]) for k in keys if k in stats}


def train(steps: int = 200, batch: int = 64, log_every: int = 20) -> dict:
    x_all, y_all = make_data(1024)
    optimizer = make_optimizer(steps)
    params = jax.tree.map(jnp.asarray, init_params())
    opt_state = optimizer.init(params)
    full_before = float(loss_fn(params, x_all, y_all))

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    # Parameters and optimizer state are donated: each step reuses their
    # storage for the new values.
    step = jax.jit(step, donate_argnums=(0, 1))

    losses = []
    # The donated state's size: with donation it exists once on the device
    # (each step writes the new state where the old one was).
    state_bytes = sum(int(leaf.nbytes) for leaf in jax.tree.leaves((params, opt_state)))
    analysis = step.lower(params, opt_state, x_all[:batch], y_all[:batch]).compile()
    analysis = analysis.memory_analysis()
    memory = {
        "before": device_memory(),
        "state_bytes": state_bytes,
        # Bytes of the compiled step's outputs that reuse donated inputs.
        "alias_bytes": None if analysis is None else int(analysis.alias_size_in_bytes),
    }
    for i in range(steps):
        lo = (i * batch) % len(x_all)
        x, y = x_all[lo : lo + batch], y_all[lo : lo + batch]
        params, opt_state, loss = step(params, opt_state, x, y)
        losses.append(float(loss))
        if i == 0:
            memory["after_first_step"] = device_memory()
    memory["after_training"] = device_memory()
    full_loss = float(loss_fn(params, x_all, y_all))
    return {
        "runtime": jax.__name__,
        "losses": losses,
        "full_loss_before": full_before,
        "full_loss": full_loss,
        "memory": memory,
        "log_every": log_every,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    result = train(steps=args.steps)
    if args.json:
        json.dump(result, sys.stdout)
        print()
        return 0
    losses = result["losses"]
    print(f"runtime: {result['runtime']} (import jax gave module {jax.__name__!r})")
    for i in range(0, len(losses), result["log_every"]):
        print(f"step {i:4d}  loss {losses[i]:.5f}")
    print(f"step {len(losses) - 1:4d}  loss {losses[-1]:.5f}")
    print(
        f"loss on all data: {result['full_loss_before']:.5f} before training, "
        f"{result['full_loss']:.5f} after"
    )
    for when, stats in result["memory"].items():
        if stats is None:
            print(f"device memory {when}: not reported by this runtime")
        else:
            figures = ", ".join(f"{k}={v / 1024:.1f} KiB" for k, v in stats.items())
            print(f"device memory {when}: {figures}")
    if not result["full_loss"] < 0.5 * result["full_loss_before"]:
        print("the loss did not fall", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
