#!/usr/bin/env bash
# The JAX comparison suite (tests/jax_compat) in two pytest processes at once
# (tools/run_pytest_halves.sh), split by tools/jax_compat_durations.txt; the
# suite is mostly Python (tracing, JAX's dispatch, comparisons), so one
# process keeps about one core busy. With $BATON_API_COVERAGE_DIR set it also
# writes which public names the tests checked against JAX, for
# tools/namespace_coverage.py --checked.
#   tools/run_jax_compat.sh [pytest args...]
set -uo pipefail
cd "$(dirname "$0")/.."
exec bash tools/run_pytest_halves.sh tests/jax_compat tools/jax_compat_durations.txt "$@"
