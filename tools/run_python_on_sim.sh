#!/usr/bin/env bash
# tests/python with the simulated accelerator as the default device
# (BATON_PLATFORMS=sim,cpu): every compiled program runs through the GPU
# executable -- generated CUDA kernels compiled for the host, device memory
# the host cannot address -- with the same values and memory statistics as
# on the CPU (DESIGN section 6, "Without a GPU"). Two pytest processes
# (tools/run_pytest_halves.sh, split by tools/python_sim_durations.txt);
# the host kernels are cached in $BATON_HOST_KERNEL_CACHE (default: a fresh
# folder under $TMPDIR, so a run measures cold compiles).
#   tools/run_python_on_sim.sh [pytest args...]
set -uo pipefail
cd "$(dirname "$0")/.."
cache=${BATON_HOST_KERNEL_CACHE:-$(mktemp -d "${TMPDIR:-/tmp}/baton-sim-kernels.XXXXXX")}
BATON_PLATFORMS=sim,cpu BATON_HOST_KERNEL_CACHE=$cache \
  bash tools/run_pytest_halves.sh tests/python tools/python_sim_durations.txt "$@"
