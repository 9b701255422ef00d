#!/usr/bin/env bash
# Runs optax's own tests on baton (issue 38; docs/as_jax.md, "Running
# optax"): installs the packages pinned in tests/optax/requirements.txt into
# a scratch folder (pip --no-deps --target, never into the environment), runs
# eight of optax's test files from its wheel under `python -m baton.as_jax -m
# pytest` (so `import jax` is baton), writes a JUnit report and a summary,
# and fails if the pass rate is below the threshold.
#
#   tools/run_optax_tests.sh                 # threshold: MIN_PASS_RATE below
#   OPTAX_MIN_PASS_RATE=80 tools/run_optax_tests.sh
#   OPTAX_FILES="base update" tools/run_optax_tests.sh   # some files only
#
# Environment: OPTAX_SITE (the scratch folder, default build/optax_site,
# reused while the requirements file is unchanged), OPTAX_OUT (reports,
# default build/optax_tests: junit.xml, pytest.log, summary.txt),
# OPTAX_TIMEOUT (seconds for the pytest run, default 1800), PYTHON.
#
# The pass rate counts every case the real JAX collects
# (tests/optax/collected_under_jax.txt): a file baton cannot import counts
# all its cases as failed. The threshold is the rate reached, rounded down;
# raise it as baton fixes causes listed in docs/as_jax.md.
set -euo pipefail

MIN_PASS_RATE=${OPTAX_MIN_PASS_RATE:-96}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PYTHON:-python3}
SITE=${OPTAX_SITE:-$ROOT/build/optax_site}
OUT=${OPTAX_OUT:-$ROOT/build/optax_tests}
REQ=$ROOT/tests/optax/requirements.txt
FILES=${OPTAX_FILES:-alias transform update combine numerics utils linear_algebra base}

want=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ "$(cat "$SITE/.requirements.sha256" 2>/dev/null || true)" != "$want" ]; then
  echo "run_optax_tests: installing $REQ into $SITE"
  rm -rf "$SITE"
  mkdir -p "$SITE"
  "$PY" -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$SITE" -r "$REQ"
  echo "$want" > "$SITE/.requirements.sha256"
fi

paths=()
for f in $FILES; do
  p=optax/_src/${f}_test.py
  if [ ! -f "$SITE/$p" ]; then
    echo "run_optax_tests: $SITE/$p is missing (not in the optax wheel?)" >&2
    exit 2
  fi
  paths+=("$p")
done

rm -rf "$OUT"
mkdir -p "$OUT"
cd "$SITE"  # the tests import optax from the wheel's files
# An ini file here makes $SITE pytest's rootdir, so that baton's own pytest
# configuration (pyproject.toml above a build/ folder) is not applied.
printf '[pytest]\n' > "$SITE/pytest.ini"
echo "run_optax_tests: ${#paths[@]} file(s) under python -m baton.as_jax -m pytest (log: $OUT/pytest.log)"
set +e
PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}" JAX_PLATFORMS=cpu timeout "${OPTAX_TIMEOUT:-1800}" \
  "$PY" -m baton.as_jax -m pytest -q -p no:cacheprovider \
  --continue-on-collection-errors -o junit_family=xunit2 \
  --junitxml="$OUT/junit.xml" "${paths[@]}" > "$OUT/pytest.log" 2>&1
rc=$?
set -e
# pytest: 0 all passed, 1 some failed (the summary judges those); anything
# else (interrupted, internal error, usage, timeout) is a broken run.
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
  tail -40 "$OUT/pytest.log" >&2
  echo "run_optax_tests: pytest exited with $rc (not a test failure: the run broke)" >&2
  exit 1
fi
expected=$ROOT/tests/optax/collected_under_jax.txt
if [ -n "${OPTAX_FILES:-}" ]; then
  sel=$(mktemp)
  for f in $FILES; do grep "/${f}_test.py " "$expected" >> "$sel" || true; done
  expected=$sel
fi
"$PY" "$ROOT/tests/optax/summarize.py" --junit "$OUT/junit.xml" \
  --expected "$expected" --min-pass-rate "$MIN_PASS_RATE" --summary "$OUT/summary.txt"
