#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every C++ test
# (ctest) and every Python test (pytest, after installing the package).
#   tools/run_tests.sh               release build
#   tools/run_tests.sh --sanitizers  also the C++ tests under ASan+UBSan (clang,
#                                    one build shared with the libFuzzer
#                                    targets) and TSan, and the fuzzers
#                                    (tools/run_fuzz.sh ci)
# Each step is a timed stage (tools/ci_stage.sh); the table of stage times is
# printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/ci_stage.sh
# Kernels compiled for the simulated device (ctest-sim, pytest-python-sim):
# one folder for the run, so each is compiled once.
export BATON_HOST_KERNEL_CACHE=${BATON_HOST_KERNEL_CACHE:-$(mktemp -d "${TMPDIR:-/tmp}/baton-kernels.XXXXXX")}
# The tests' programs run on little data, so their kernels are compiled at
# -O0 (half the compile time, the same float results: SSE arithmetic, no
# contraction); BATON_HOST_KERNEL_OPTIMIZE=1 compiles them as users get them.
export BATON_HOST_KERNEL_OPTIMIZE=${BATON_HOST_KERNEL_OPTIMIZE:-0}
stage install-deps bash tools/install_deps.sh
stage build-release bash tools/build.sh release
stage ctest-release ctest --test-dir build/release --output-on-failure -j "$(nproc)"
# The jit and control-flow suites again on the simulated accelerator (the
# GPU executable; tests of the CPU's own choices skip).
stage ctest-sim bash tools/run_cpp_on_sim.sh
# The Python package (scikit-build-core reuses build/python between runs; the
# library's objects come from ccache when the release build made them).
stage pip-install env CC="${CC:-gcc}" CXX="${CXX:-g++}" python3 -m pip install --disable-pip-version-check --no-build-isolation -q .
# Two processes, each on half of the files (by tools/python_durations.txt):
# one pytest process keeps about one core busy.
stage pytest-python bash tools/run_pytest_halves.sh tests/python tools/python_durations.txt
# The same suite with the simulated accelerator as the default device: every
# program through the GPU executable (generated kernels run as host code,
# device memory the host cannot address), two processes.
stage pytest-python-sim bash tools/run_python_on_sim.sh
# Sharded arrays and shard_map, on 4 CPU devices (read at import: a process
# of their own).
stage pytest-sharding env BATON_NUM_CPU_DEVICES=4 python3 -m pytest -q tests/sharding
# 2 and 4 baton processes on 127.0.0.1 (Gloo): collectives, data-parallel
# training, a killed peer; each test starts its own processes.
stage pytest-multiprocess python3 -m pytest -q tests/multiprocess
if [ "${1:-}" = "--sanitizers" ]; then
  # halt_on_error: any report fails the run. OpenBLAS runs single-threaded
  # here: its own worker threads synchronize in uninstrumented code, which
  # TSan reports as races inside sgemm (our threads still call it
  # concurrently, and those calls stay checked).
  san_env=(env ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
           TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
           OPENBLAS_NUM_THREADS=1)
  stage build-asan bash tools/build.sh asan
  # NVRTC's compile of the whole random-program corpus (about 100 s in the
  # release run) takes three times as long here, in NVRTC's own
  # uninstrumented code, and clang's build emits a corpus of its own (so the
  # release run's disk cache misses); the emitter's code it runs through is
  # checked here by EmittedRandomProgramsTest, and the corpus's compile and
  # resources in ctest-release.
  asan_skip='^NvrtcCompilerTest\.EveryGeneratedKernelCompilesForSm90WithinResources$'
  stage ctest-asan "${san_env[@]}" ctest --test-dir build/asan --output-on-failure -j "$(nproc)" -E "$asan_skip"
  # The libFuzzer targets (docs/fuzzing.md): each replays its committed
  # corpus (every past finding), then runs a fixed number of new inputs from
  # a fixed seed, so a CI run is reproducible. Same build as ctest-asan.
  stage fuzz bash tools/run_fuzz.sh ci
  stage build-tsan bash tools/build.sh tsan
  # TSan looks for races; the sweeps of every op x dtype x size over the
  # elementwise kernels run their large sizes through the same
  # ParallelRanges split as the kernels' own parallel tests
  # (BinaryTest.BothOperandsAndOutputTheSameBuffer, ReduceTest.*Parallel*,
  # which stay), so under TSan they only repeat those checks, at a third of
  # the stage's time. They run in ctest-release and under ASan+UBSan.
  tsan_skip='^(UnaryTest\.MatchesScalarMathForEveryOpAndDType|BinaryTest\.MatchesScalarMathForEveryOpDTypeAndScalarSide|SelectTest\.EveryScalarCombinationAndElementSize|CompareTest\.MatchesScalarMath|ConvertTest\.EveryPairMatchesConvertElement)$'
  stage ctest-tsan "${san_env[@]}" ctest --test-dir build/tsan --output-on-failure -j "$(nproc)" -E "$tsan_skip"
fi
stage_summary
