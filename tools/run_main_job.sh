#!/usr/bin/env bash
# The main job: installs dependencies, builds and installs baton, and runs
# examples/train_and_serve.py: it trains an MLP with a donated Adam step,
# checkpoints it into pinned host memory, swaps it into a serving copy while
# requests are in flight, prints the memory figures of each phase, checks
# them against the contract (exits non-zero if one is broken) and writes a
# Chrome trace, a pprof memory profile and a memory viewer page to
# /tmp/baton-main-job (pass --out DIR, --steps N, ... to change that).
# examples/tour.py, a scene-by-scene tour of the contract, and
# examples/runtime_tour.cc, the same story in C++, remain as examples.
#
# Where it runs: on cuda:0 when this machine has an NVIDIA GPU (nvidia-smi
# lists one), else on the CPU -- BATON_PLATFORMS, the platforms in order of
# preference (backend/platforms.h), set here unless you set it yourself
# (BATON_PLATFORMS=sim,cpu runs it on the simulated accelerator: device
# memory the host cannot address, kernels generated as for the GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
python3 -m pip install --disable-pip-version-check --no-build-isolation -q .
if [ -z "${BATON_PLATFORMS:-}" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    export BATON_PLATFORMS=cuda,cpu
  else
    export BATON_PLATFORMS=cpu
  fi
fi
echo "run_main_job: BATON_PLATFORMS=$BATON_PLATFORMS"
python3 examples/train_and_serve.py "$@"
