#!/usr/bin/env bash
# The main job: installs dependencies, builds and installs baton, and runs the
# tour of its memory contract (examples/tour.py prints the figures it
# measures). examples/runtime_tour.cc is the same story in C++.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
python3 -m pip install --disable-pip-version-check --no-build-isolation -q .
python3 examples/tour.py
