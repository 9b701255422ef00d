#!/usr/bin/env bash
# Installs everything baton needs to build and test, from Debian's packages and PyPI only.
# Idempotent: a second run changes nothing. Versions are pinned.
set -euo pipefail

APT_PACKAGES=(
  cmake ninja-build g++ pkg-config
  ccache            # shares unchanged objects between builds (CMakeLists.txt)
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev   # BATON_BLAS=system (cmake/BatonBlas.cmake); the default BLAS is PyPI's scipy-openblas32 (requirements-dev.txt)
  libxxhash-dev     # content hashes for constant de-duplication
  libgloo-dev       # collectives between processes (src/baton/collectives, bt.distributed); its TCP transport
  libopenmpi-dev openmpi-bin  # MPI for processes started by mpirun (src/baton/collectives/mpi_process_group.cc)
  python3-dev python3-pip  # the nanobind extension (Python headers) and pip
  # libFuzzer (tests/fuzz, tools/run_fuzz.sh): clang, and its runtime
  # (libclang_rt.fuzzer, ASan, UBSan), which Debian only recommends (through
  # libclang-common-14-dev), so --no-install-recommends would leave it out.
  clang libclang-rt-14-dev
  llvm-14           # llvm-symbolizer: ASan reports name the function and line (the emulated-kernel death test in tests/cpp/codegen reads them)
  chromium          # headless browser for the memory viewer test
  # bt.profiler's pprof files are checked against pprof's published schema:
  # profile.proto (shipped with pprof's Go sources, which also build the real
  # pprof tool offline with golang-go) compiled by protoc (tests/python/test_pprof.py).
  protobuf-compiler golang-github-google-pprof-dev golang-go
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

python3 -m pip install -q --disable-pip-version-check -r "$(dirname "$0")/../requirements-dev.txt"
