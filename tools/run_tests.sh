#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every C++ test
# (ctest) and every Python test (pytest, after installing the package).
#   tools/run_tests.sh             release build
#   tools/run_tests.sh --sanitizers  also the C++ tests under ASan+UBSan and
#                                    TSan, and the fuzzers (tools/run_fuzz.sh ci)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
bash tools/build.sh release
ctest --test-dir build/release --output-on-failure -j "$(nproc)"
# The Python package (scikit-build-core reuses build/python between runs) and
# its tests.
python3 -m pip install --disable-pip-version-check --no-build-isolation -q .
python3 -m pytest -q tests/python
# Sharded arrays and shard_map, on 4 CPU devices (read at import: a process
# of their own).
BATON_NUM_CPU_DEVICES=4 python3 -m pytest -q tests/sharding
# 2 and 4 baton processes on 127.0.0.1 (Gloo): collectives, data-parallel
# training, a killed peer; each test starts its own processes.
python3 -m pytest -q tests/multiprocess
if [ "${1:-}" = "--sanitizers" ]; then
  for v in asan tsan; do
    bash tools/build.sh "$v"
    # halt_on_error: any report fails the run. OpenBLAS runs single-threaded
    # here: its own worker threads synchronize in uninstrumented code, which
    # TSan reports as races inside sgemm (our threads still call it
    # concurrently, and those calls stay checked).
    ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    OPENBLAS_NUM_THREADS=1 \
      ctest --test-dir "build/$v" --output-on-failure -j "$(nproc)"
  done
  # The libFuzzer targets (clang, ASan+UBSan; docs/fuzzing.md): each replays
  # its committed corpus (every past finding), then runs a fixed number of
  # new inputs from a fixed seed, so a CI run is reproducible.
  bash tools/run_fuzz.sh ci
fi
