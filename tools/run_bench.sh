#!/usr/bin/env bash
# baton vs JAX, side by side: installs the benchmark-only dependencies (jax,
# jaxlib; bench/requirements.txt), then runs bench/run.py with the given
# options (--smoke, --cases REGEX, --repeat N, --json PATH, --no-jax).
# baton itself must already be installed (tools/run_main_job.sh or pip install .).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check -r bench/requirements.txt
python3 bench/run.py "$@"
