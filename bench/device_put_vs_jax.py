"""Pageable host -> GPU transfers: baton's device_put against JAX's, same run.

Copies a pageable (ordinary numpy) float32 array of each size to the first
accelerator device with both libraries, several times, and reports the best
time of each and the ratio baton / JAX of bandwidths (>= 1.0: baton at least
as fast). Used by tools/gpu_check.sh (issue "GPU I": pageable device_put of
1 GiB at or above JAX's); runs anywhere both have a GPU device.

    BATON_PLATFORMS=cuda,cpu python3 bench/device_put_vs_jax.py [--out F.json]
"""

import argparse
import json
import time

import numpy as np


def best_seconds(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes-mib", default="1,16,256,1024")
    parser.add_argument(
        "--allow-cpu",
        action="store_true",
        help="run even when a library has no GPU device (a dry run)",
    )
    args = parser.parse_args()

    import jax

    import baton as bt

    bt_dev = bt.devices()[0]
    jax_dev = jax.devices()[0]
    print(f"baton device {bt_dev}, JAX device {jax_dev}")
    if not args.allow_cpu and (bt_dev.platform == "cpu" or jax_dev.platform == "cpu"):
        raise SystemExit(
            "device_put_vs_jax: both libraries need a GPU device (baton has "
            f"{bt_dev}, JAX {jax_dev}); set BATON_PLATFORMS=cuda,cpu and install "
            "JAX's CUDA plugin, or pass --allow-cpu for a dry run"
        )
    rows = []
    for mib in (int(s) for s in args.sizes_mib.split(",")):
        host = np.ones(mib << 18, dtype=np.float32)  # pageable memory
        # Warm both paths (allocator regions, JAX's transfer manager).
        bt.device_put(host, bt_dev).block_until_ready()
        jax.device_put(host, jax_dev).block_until_ready()
        t_bt = best_seconds(
            lambda h=host: bt.device_put(h, bt_dev).block_until_ready(), args.repeats
        )
        t_jax = best_seconds(
            lambda h=host: jax.device_put(h, jax_dev).block_until_ready(), args.repeats
        )
        gbs = host.nbytes / 1e9
        row = {
            "mib": mib,
            "baton_gb_s": gbs / t_bt,
            "jax_gb_s": gbs / t_jax,
            "ratio": t_jax / t_bt,
        }
        rows.append(row)
        print(
            f"{mib:6d} MiB  baton {row['baton_gb_s']:7.2f} GB/s  "
            f"JAX {row['jax_gb_s']:7.2f} GB/s  ratio {row['ratio']:.2f}"
        )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
