#!/usr/bin/env bash
# The main job: installs dependencies, builds, and runs the tour of baton's
# memory contract (prints the memory figures it measures).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
bash tools/build.sh release
build/release/examples/runtime_tour
