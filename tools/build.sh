#!/usr/bin/env bash
# Configures and builds baton into build/<variant> (default: build/release).
#   tools/build.sh                    release build, everything
#   tools/build.sh asan [TARGET...]   clang, AddressSanitizer + UBSan, with the
#                                     C++ tests and the libFuzzer targets in one
#                                     build (tools/run_fuzz.sh uses it too)
#   tools/build.sh tsan [TARGET...]   ThreadSanitizer, with the test areas
#                                     whose tests run threads (BATON_TSAN_AREAS)
# TARGET... builds only those targets (default: all of the variant).
#
# The sanitizer builds are -O1 with line tables only: the reports name file
# and line, and the builds cost far less than -O2 -g (CI compiles each from
# scratch on a fresh machine; tools/ci_stage.sh times them).
set -euo pipefail
cd "$(dirname "$0")/.."
variant=${1:-release}
shift || true
# The areas of tests/cpp that start threads, wait on events or share buffers
# between queues; the others (compiler passes, transformations, batching) are
# single-threaded and are covered by the release and ASan runs.
BATON_TSAN_AREAS=${BATON_TSAN_AREAS:-"runtime;jit;kernels;control_flow;collectives;fault_injection;soak;cuda"}
san_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATON_BUILD_BENCH=OFF -DBATON_BUILD_EXAMPLES=OFF)
# gcc unless CC/CXX say otherwise: the same compiler name as the Python
# build (scikit-build-core), so ccache gives that build the release build's
# library objects (ccache hashes the compiler's name: c++ and g++ miss).
case "$variant" in
  release)
    export CC=${CC:-gcc} CXX=${CXX:-g++}
    flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan)
    export CC=clang CXX=clang++
    flags=("${san_flags[@]}" -DBATON_BUILD_FUZZERS=ON -DBATON_BUILD_TESTS=ON
           "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG"
           "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG") ;;
  tsan)
    export CC=${CC:-gcc} CXX=${CXX:-g++}
    flags=("${san_flags[@]}" -DBATON_SANITIZE=thread "-DBATON_TEST_AREAS_ONLY=$BATON_TSAN_AREAS"
           "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
           "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG") ;;
  *) echo "usage: tools/build.sh [release|asan|tsan] [TARGET...]" >&2; exit 2 ;;
esac
cmake -S . -B "build/$variant" -G Ninja "${flags[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "build/$variant" -j "$(nproc)" "${targets[@]}"
