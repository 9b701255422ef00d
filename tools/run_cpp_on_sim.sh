#!/usr/bin/env bash
# The C++ jit and control-flow suites with the simulated accelerator as
# their device ($BATON_TEST_PLATFORM=sim, tests/cpp/jit/jit_test_util.h):
# every program they compile runs through the GPU executable -- generated
# kernels as host code, loops as region steps, over device memory the host
# cannot address. Tests of the CPU backend's own choices skip. The host
# kernels are cached in $BATON_HOST_KERNEL_CACHE (default: a fresh folder).
#   tools/run_cpp_on_sim.sh [build dir, default build/release]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
cache=${BATON_HOST_KERNEL_CACHE:-$(mktemp -d "${TMPDIR:-/tmp}/baton-sim-kernels.XXXXXX")}
for suite in jit_tests control_flow_tests; do
  BATON_TEST_PLATFORM=sim BATON_HOST_KERNEL_CACHE=$cache \
    "$build/tests/cpp/$suite" --gtest_brief=1
done
