#!/usr/bin/env bash
# Configures and builds baton into build/<name> (default: build/release).
#   tools/build.sh                 release build, everything
#   tools/build.sh asan|tsan       sanitizer build of the library and C++ tests
set -euo pipefail
cd "$(dirname "$0")/.."
variant=${1:-release}
case "$variant" in
  release) flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATON_SANITIZE=address -DBATON_BUILD_BENCH=OFF -DBATON_BUILD_EXAMPLES=OFF) ;;
  tsan) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATON_SANITIZE=thread -DBATON_BUILD_BENCH=OFF -DBATON_BUILD_EXAMPLES=OFF) ;;
  *) echo "usage: tools/build.sh [release|asan|tsan]" >&2; exit 2 ;;
esac
cmake -S . -B "build/$variant" -G Ninja "${flags[@]}" >/dev/null
cmake --build "build/$variant" -j "$(nproc)"
