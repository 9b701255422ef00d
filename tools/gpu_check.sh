#!/usr/bin/env bash
# The prepared GPU check (DESIGN 5.7), for a machine with an NVIDIA GPU:
# builds a release tree with the CUDA backend (-DBATON_CUDA=ON) into
# build/gpu (only the targets it runs), runs the CUDA tests (ctest -L cuda),
# the C++ jit and control-flow suites with their programs compiled for the
# GPU (BATON_TEST_PLATFORM=cuda: the GPU executable's kernels, GEMMs and
# loops on the device), the runtime's tests (the backend conformance suite
# on cuda too), the
# Python tests of the accelerator contract on CUDA, the transfer benchmark
# (baton against cudaMemcpyAsync in the same run), pageable device_put
# against JAX's (bench/device_put_vs_jax.py) and the benchmark's size sweep
# on the GPU against JAX's CUDA plugin and torch's copies and matmul
# (bench/run.py --sweep --platform cuda), and writes every
# step's output into one folder, ${OUT:-gpu_check_results}. The whole run
# stays under 9 minutes (GPU_CHECK_BUDGET_S, default 530 s): every step runs
# under `timeout`, cut to what is left, and a step with no time left is
# skipped and counted as failed.
#
#   tools/gpu_check.sh               the check; exit status 0 iff every step
#                                    passed (summary.txt lists each step)
#   tools/gpu_check.sh --fetch-deps  on a Debian machine with apt and PyPI
#                                    (not the GPU machine): downloads what a
#                                    bare GPU machine lacks into
#                                    build/gpu_deps (~15 MB)
#
# A GPU machine that has no network and no baton dependencies gets them from
# build/gpu_deps when that folder is there (carry it along): the .deb files
# are unpacked into /tmp/baton-gpu-deps (never into /), and wheels are
# installed there with pip --target. Re-running is safe: the build tree is
# reused, the results folder is rewritten.
#
# The folder holds at most 15 files (pack them into one archive to bring
# them back): 1_nvidia_smi.log, 2_setup.log,
# 3_configure.log, 4_build.log, 5_ctest_cuda.log (step 5b, the jit and
# control-flow suites on CUDA, and step 5c, CUDA graphs and NCCL, write
# there too), 6_runtime_tests.log,
# 7_pytest.log, 8_bench_transfer.log, bench_transfer.json,
# 9_bench_device_put.log, bench_device_put.json, 10_bench_sweep.log,
# bench_sweep.json, bench_sweep.png and summary.txt.
# shellcheck disable=SC2317  # functions run through `bash -c` (step)
set -euo pipefail
cd "$(dirname "$0")/.."

DEPS_DIR=build/gpu_deps
# What a bare GPU image lacks for baton's build (tools/install_deps.sh has
# the full list): BLAS, xxHash, GoogleTest/GoogleMock, Google Benchmark,
# pkg-config; and optree for the Python package. Runtime libraries they need come too.
DEB_PACKAGES=(
  libopenblas-pthread-dev libopenblas0-pthread libgfortran5 libquadmath0
  libxxhash-dev libxxhash0
  libgtest-dev libgmock-dev
  libbenchmark-dev libbenchmark1debian
  pkgconf pkgconf-bin libpkgconf3
)
PY_WHEELS=("optree==$(sed -n 's/^optree==\([^ ]*\).*/\1/p' requirements-dev.txt)")

if [ "${1:-}" = "--fetch-deps" ]; then
  mkdir -p "$DEPS_DIR"
  rm -f "$DEPS_DIR"/*.deb "$DEPS_DIR"/*.whl
  (cd "$DEPS_DIR" && apt-get download "${DEB_PACKAGES[@]}") ||
    { echo "apt-get download failed; run apt-get update first" >&2; exit 1; }
  # The GPU image's python3 is CPython 3.12 (override with GPU_PYTHON_VERSION).
  python3 -m pip download -q --disable-pip-version-check --no-deps \
    --only-binary=:all: --python-version "${GPU_PYTHON_VERSION:-3.12}" \
    --implementation cp --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$DEPS_DIR" "${PY_WHEELS[@]}"
  du -sh "$DEPS_DIR"
  ls "$DEPS_DIR"
  exit 0
elif [ -n "${1:-}" ]; then
  echo "usage: tools/gpu_check.sh [--fetch-deps]" >&2
  exit 2
fi

out=${OUT:-gpu_check_results}
mkdir -p "$out"
rm -f "$out"/[0-9]_*.log "$out"/[0-9][0-9]_*.log "$out"/summary.txt \
  "$out"/bench_*.json "$out"/bench_*.png
budget=${GPU_CHECK_BUDGET_S:-530}
start=$(date +%s)
failed=0
summary() { echo "$*" | tee -a "$out/summary.txt"; }

# step NAME CAP_SECONDS COMMAND...: runs COMMAND under timeout (CAP_SECONDS,
# or less if less of the budget is left), appending its output to
# $out/NAME.log (or $out/$LOG.log when LOG is set: steps share a file to
# keep the folder's count); records the result in summary.txt. RESERVE_S seconds of
# the budget are kept back for the steps after it. Shell functions run
# through `bash -c` (exported with export -f).
step() {
  local name=$1 cap=$2
  local log="$out/${LOG:-$name}.log"
  shift 2
  local left=$((start + budget - $(date +%s) - 5 - ${RESERVE_S:-0}))
  local limit=$((cap < left ? cap : left))
  if [ "$limit" -lt 10 ]; then
    summary "SKIPPED $name: out of time (${budget}s budget)"
    failed=1
    return 0
  fi
  local t0 rc
  t0=$(date +%s)
  echo "\$ $* (timeout ${limit}s)" >>"$log"
  set +e
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  set -e
  local took=$(($(date +%s) - t0))
  if [ "$rc" -eq 0 ]; then
    summary "PASSED  $name (${took}s)"
  else
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && rc="$rc: timed out after ${limit}s"
    summary "FAILED  $name (exit $rc, ${took}s)"
    failed=1
  fi
}

# The commit only when this folder is itself the checkout: a plain copy of
# the tree (what the device tool sends) may sit inside another repository,
# whose HEAD says nothing about these files.
commit="unknown (not a git checkout)"
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$PWD" ]; then
  commit=$(git rev-parse --short HEAD)
  git diff --quiet HEAD 2>/dev/null || commit="$commit + local changes"
fi
echo "baton GPU check, $(date -u +%FT%TZ), commit $commit" >"$out/summary.txt"

# 1. The GPU as the driver sees it.
step 1_nvidia_smi 30 nvidia-smi

# 2. Dependencies carried in build/gpu_deps, unpacked outside /.
setup() {
  set -euo pipefail
  local prefix=/tmp/baton-gpu-deps
  if ls "$DEPS_DIR"/*.deb >/dev/null 2>&1; then
    mkdir -p "$prefix/pkgconfig"
    for f in "$DEPS_DIR"/*.deb; do dpkg -x "$f" "$prefix"; done
    local arch_lib="$prefix/usr/lib/x86_64-linux-gnu"
    # Debian's openblas.pc names /usr/... paths: point them at the copy.
    sed "s|=/usr/|=$prefix/usr/|" \
      "$arch_lib/openblas-pthread/pkgconfig/openblas.pc" \
      >"$prefix/pkgconfig/openblas.pc"
    echo "unpacked" "$DEPS_DIR"/*.deb "into $prefix"
  fi
  if ls "$DEPS_DIR"/*.whl >/dev/null 2>&1 && ! python3 -c "import optree" 2>/dev/null; then
    python3 -m pip install -q --disable-pip-version-check --no-index --no-deps \
      --no-compile --no-cache-dir --upgrade --target "$prefix/site" \
      "$DEPS_DIR"/*.whl
    echo "installed" "$DEPS_DIR"/*.whl "into $prefix/site"
  fi
  echo "c++: $(command -v c++ || echo MISSING) $(c++ --version 2>/dev/null | head -1)"
  echo "nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || echo MISSING)"
  echo "cmake: $(cmake --version | head -1); ninja: $(ninja --version)"
  echo "python3: $(command -v python3) $(python3 --version 2>&1)"
}
export -f setup
export DEPS_DIR
step 2_setup 90 bash -c setup
prefix=/tmp/baton-gpu-deps
if [ -d "$prefix/usr" ]; then
  export PATH="$prefix/usr/bin:$PATH"
  export PKG_CONFIG_PATH="$prefix/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export CMAKE_PREFIX_PATH="$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:$prefix/usr/lib/x86_64-linux-gnu/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
[ -d "$prefix/site" ] && export PYTHONPATH="$prefix/site${PYTHONPATH:+:$PYTHONPATH}"
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"

# 3-4. Configure and build (as tools/build.sh does, plus CUDA and Python),
# only the targets run below. The BLAS is the system's (the carried Debian
# OpenBLAS): the GPU image has no PyPI for scipy-openblas32.
flags=(-DCMAKE_BUILD_TYPE=Release -DBATON_CUDA=ON -DBATON_BUILD_BENCH=ON
       -DBATON_BUILD_EXAMPLES=OFF -DBATON_BLAS=system)
targets=(cuda_tests runtime_tests jit_tests control_flow_tests cuda_transfer_bench)
python_ok=0
if python3 -c "import nanobind, numpy, ml_dtypes, optree, pytest" 2>/dev/null; then
  python_ok=1
  flags+=(-DBATON_BUILD_PYTHON=ON -DBATON_PYTHON_STUBS=OFF
          "-DPython_EXECUTABLE=$(command -v python3)")
fi
[ "$python_ok" = 1 ] && targets+=(_baton)
step 3_configure 120 cmake -S . -B build/gpu -G Ninja "${flags[@]}"
step 4_build 330 cmake --build build/gpu -j "$(nproc)" --target "${targets[@]}"

# 5-6. The CUDA tests, then the runtime's (the backend conformance suite on
# cpu, sim, sim_slow and cuda; the asynchronous device contract).
# BATON_EXPECT_CUDA_DEVICES makes "no device found" a failure here instead
# of a silent skip.
export BATON_EXPECT_CUDA_DEVICES=1
step 5_ctest_cuda 120 ctest --test-dir build/gpu -L cuda --output-on-failure

# 5b. The C++ jit and control-flow suites on the GPU (jit_test_util.h's
# BATON_TEST_PLATFORM=cuda): every program they compile runs as the GPU
# executable's command list on the device. Kernels are compiled by NVRTC
# into a fresh disk cache. Tests of the CPU backend's own choices skip.
jit_cuda() {
  set -uo pipefail
  local cache rc=0
  cache=$(mktemp -d "${TMPDIR:-/tmp}/baton-cuda-kernels.XXXXXX")
  for suite in jit_tests control_flow_tests; do
    BATON_TEST_PLATFORM=cuda BATON_CUDA_CACHE_DIR=$cache \
      "build/gpu/tests/cpp/$suite" --gtest_brief=1 || rc=1
  done
  return "$rc"
}
export -f jit_cuda
RESERVE_S=$((python_ok ? 240 : 150)) LOG=5_ctest_cuda step 5b_jit_cuda 150 bash -c jit_cuda
# 5c. The GPU-only checks of issue 35, with nothing allowed to skip: launch
# plans replayed as CUDA graphs (updated in place, recaptured, abandoned;
# values checked each call), a single-rank NCCL group on device memory and
# the NCCL block exchange on the compute stream.
gpu_only() {
  set -uo pipefail
  local cache rc=0 log
  cache=$(mktemp -d "${TMPDIR:-/tmp}/baton-cuda-kernels.XXXXXX")
  BATON_TEST_PLATFORM=cuda BATON_CUDA_CACHE_DIR=$cache \
    build/gpu/tests/cpp/jit_tests --gtest_filter='GpuLaunchPlanTest.*' || rc=1
  log=$(build/gpu/tests/cpp/cuda_tests \
          --gtest_filter='NcclProcessGroupTest.AGroupOfOne*:NcclBlockExchangeTest.AGroupOfOne*' 2>&1) || rc=1
  echo "$log"
  if echo "$log" | grep -q '\[  SKIPPED \]'; then
    echo "an NCCL group of one was skipped (see its reason above)"
    rc=1
  fi
  return "$rc"
}
export -f gpu_only
RESERVE_S=$((python_ok ? 200 : 110)) LOG=5_ctest_cuda step 5c_graphs_nccl 60 bash -c gpu_only
# Keep time for the Python step.
RESERVE_S=$((python_ok ? 150 : 60)) step 6_runtime_tests 240 build/gpu/tests/cpp/runtime_tests

# 7. The Python accelerator contract on CUDA, and every test named for CUDA.
pytest_cuda() {
  set -uo pipefail
  local pkg=build/gpu/python_pkg
  rm -rf "$pkg" && mkdir -p "$pkg"
  cp -r python/baton "$pkg/baton"
  cp build/gpu/python/_baton*.so "$pkg/baton/" || return 1
  export PYTHONPATH="$PWD/$pkg${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
  export BATON_PLATFORMS=${GPU_CHECK_PLATFORMS:-cuda,cpu}
  local rc=0
  if [ -f tests/python/test_accelerator_memory.py ]; then
    python3 -m pytest -q -p no:cacheprovider tests/python/test_accelerator_memory.py || rc=$?
  fi
  # 5: no test is named for CUDA (not a failure).
  local rc2=0
  python3 -m pytest -q -p no:cacheprovider tests/python -k cuda || rc2=$?
  [ "$rc2" -eq 5 ] && rc2=0
  [ "$rc" -ne 0 ] && return "$rc"
  return "$rc2"
}
if [ "$python_ok" = 1 ]; then
  export -f pytest_cuda
  RESERVE_S=60 step 7_pytest 150 bash -c pytest_cuda
else
  summary "FAILED  7_pytest: python3 lacks nanobind/numpy/ml_dtypes/optree/pytest (carry build/gpu_deps)"
  failed=1
fi

# 8. Transfers against cudaMemcpyAsync, same run (ratio = baton / CUDA).
# A plain number of seconds: Debian's Google Benchmark 1.7 rejects "0.1s"
# (1.8 takes both).
step 8_bench_transfer 60 build/gpu/bench/cuda_transfer_bench \
  --benchmark_min_time=0.1 --benchmark_out="$out/bench_transfer.json" \
  --benchmark_out_format=json

# 9. Pageable device_put against JAX's, same run (needs step 7's package).
if [ "$python_ok" = 1 ] && python3 -c "import jax" 2>/dev/null; then
  step 9_bench_device_put 90 env PYTHONPATH="$PWD/build/gpu/python_pkg${PYTHONPATH:+:$PYTHONPATH}" \
    BATON_PLATFORMS=cuda,cpu python3 bench/device_put_vs_jax.py \
    --out "$out/bench_device_put.json"
else
  summary "SKIPPED 9_bench_device_put: no JAX or no baton Python package here"
fi

# 10. The size sweep on the GPU (2^10 ... 2^28 elements), same run: baton on
# cuda:0, JAX on its CUDA plugin and torch's baselines (pinned host-to-device
# copy, device-to-device copy, torch.matmul), each in a process of its own
# (bench/README.md, --platform); the table in the log, the JSON (rewritten
# after every case: a run cut short keeps what it measured) and the plot here.
if [ "$python_ok" = 1 ]; then
  step 10_bench_sweep 300 env PYTHONPATH="$PWD/build/gpu/python_pkg${PYTHONPATH:+:$PYTHONPATH}" \
    python3 bench/run.py --sweep --platform cuda \
    --json "$out/bench_sweep.json" --plot "$out/bench_sweep.png"
else
  summary "SKIPPED 10_bench_sweep: no baton Python package here"
fi

summary "total $(($(date +%s) - start))s; $([ $failed = 0 ] && echo 'all steps passed' || echo 'some steps FAILED')"
exit "$failed"
