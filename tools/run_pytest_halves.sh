#!/usr/bin/env bash
# One folder of pytest files in two pytest processes at once, each on half of
# its files: CI's machine has two cores and one pytest process keeps about one
# busy. Files are split so the halves take about the same time, by each
# file's seconds in DURATIONS (`FILE SECONDS` lines, from `python3 -m pytest
# FOLDER --durations=0`; a file not listed counts as the median). Both run to
# the end; the output of each is printed whole, one after the other, and the
# run fails if either failed.
#
# With $BATON_API_COVERAGE_DIR set, each half writes the public names its
# tests checked against JAX to api-coverage-{0,1}.json there
# (tests/jax_compat/_api_coverage.py, for tools/namespace_coverage.py).
#   tools/run_pytest_halves.sh FOLDER DURATIONS [pytest args...]
set -uo pipefail
cd "$(dirname "$0")/.."
folder=$1 durations=$2
shift 2
mapfile -t groups < <(python3 - "$folder" "$durations" <<'PY'
import glob, os, statistics, sys
folder, durations = sys.argv[1], sys.argv[2]
secs = {}
if os.path.exists(durations):
    with open(durations) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, s = line.split()
                secs[name] = float(s)
files = sorted(glob.glob(os.path.join(folder, "test_*.py")))
median = statistics.median(secs.values()) if secs else 1.0
load, halves = [0.0, 0.0], [[], []]
for f in sorted(files, key=lambda f: -secs.get(f, median)):
    i = 0 if load[0] <= load[1] else 1
    load[i] += secs.get(f, median)
    halves[i].append(f)
for h in halves:
    print(" ".join(h))
PY
)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/baton-pytest-halves.XXXXXX")
pids=()
for i in 0 1; do
  cov=()
  if [ -n "${BATON_API_COVERAGE_DIR:-}" ]; then
    mkdir -p "$BATON_API_COVERAGE_DIR"
    cov=(env BATON_API_COVERAGE="$BATON_API_COVERAGE_DIR/api-coverage-$i.json")
  fi
  # shellcheck disable=SC2086  # the file list is word-split on purpose
  "${cov[@]}" python3 -m pytest -q -p no:cacheprovider "$@" ${groups[$i]} >"$tmp/$i.log" 2>&1 &
  pids+=($!)
done
status=0
for i in 0 1; do
  wait "${pids[$i]}" || status=$?
  echo "--- $folder, half $((i + 1)) of 2: ${groups[$i]}"
  cat "$tmp/$i.log"
done
rm -rf "$tmp"
exit "$status"
