#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every C++ test
# (ctest) and every Python test (pytest, after installing the package).
#   tools/run_tests.sh             release build
#   tools/run_tests.sh --sanitizers  also the C++ tests under ASan+UBSan and TSan
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
bash tools/build.sh release
ctest --test-dir build/release --output-on-failure -j "$(nproc)"
# The Python package (scikit-build-core reuses build/python between runs) and
# its tests.
python3 -m pip install --disable-pip-version-check --no-build-isolation -q .
python3 -m pytest -q tests/python
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
fi
# The libFuzzer targets (tools/run_fuzz.sh, docs/fuzzing.md) are not run here
# yet: a longer campaign still finds integer overflows in shape inference
# (issue 14, open), and a random finding must not turn CI red before they
# are fixed and the CI run is made reproducible (fixed seed and run count).
