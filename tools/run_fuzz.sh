#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz_*.cc, docs/fuzzing.md) with
# clang, ASan and UBSan in build/fuzz, then for each target:
#   1. replays its committed corpus (tests/fuzz/corpus/<target>/), one run
#      per file -- every file must pass (old crashers stay fixed);
#   2. fuzzes for SECONDS, starting from that corpus and writing new corpus
#      entries to a temporary folder (never into the repository).
# Exits non-zero on any finding (crash, sanitizer report, invariant, leak,
# timeout, out-of-memory), printing the input that caused it and the commands
# that reproduce and minimise it.
#
#   tools/run_fuzz.sh                 45 s per target (about 3 minutes for
#                                     the four targets on 2 cores; CI)
#   tools/run_fuzz.sh 3600            an hour per target
#   tools/run_fuzz.sh 600 fuzz_tracer one target
# Environment: BATON_FUZZ_BUILD (build folder, default build/fuzz),
# BATON_FUZZ_KEEP=1 keeps the temporary folder (new corpus entries) and
# prints where it is.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${1:-45}
shift || true
build=${BATON_FUZZ_BUILD:-build/fuzz}

CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja \
  -DBATON_BUILD_FUZZERS=ON -DBATON_BUILD_TESTS=OFF -DBATON_BUILD_BENCH=OFF \
  -DBATON_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --target fuzzers

if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for src in tests/fuzz/fuzz_*.cc; do targets+=("$(basename "$src" .cc)"); done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-fuzz.XXXXXX")
if [ "${BATON_FUZZ_KEEP:-0}" = "1" ]; then
  echo "run_fuzz: new corpus entries and artifacts under $work"
else
  trap 'rm -rf "$work"' EXIT
fi

# Any sanitizer report aborts (libFuzzer then saves the input).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# OpenBLAS's own threads would only add noise to a single-input run.
export OPENBLAS_NUM_THREADS=1
common=(-rss_limit_mb=2048 -timeout=10 -print_final_stats=1)

max_len() {
  case "$1" in
    fuzz_program_builder | fuzz_tracer) echo 4096 ;;
    *) echo 512 ;;
  esac
}

report() {  # target, file
  local t=$1 f=$2 bin=$root/$build/tests/fuzz/$1
  echo
  echo "run_fuzz: $t FAILED on input $f"
  echo "  reproduce: $bin $f"
  echo "  minimise:  $bin -minimize_crash=1 -runs=100000 -exact_artifact_path=/tmp/min-$t $f"
  echo "  keep it:   cp <minimised input> tests/fuzz/corpus/$t/crash-\$(sha1sum <it> | cut -c1-16)"
  echo "  (docs/fuzzing.md: fix the root cause, then commit the input with the fix)"
}

failed=0
for t in "${targets[@]}"; do
  bin=$build/tests/fuzz/$t
  corpus=tests/fuzz/corpus/$t
  [ -x "$bin" ] || { echo "run_fuzz: no fuzzer $bin"; exit 2; }
  mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
  if [ -d "$corpus" ] && [ -n "$(ls -A "$corpus")" ]; then
    echo "== $t: replaying $(ls "$corpus" | wc -l) corpus inputs"
    for f in "$corpus"/*; do
      if ! "$bin" "${common[@]}" "$f" >"$work/replay.log" 2>&1; then
        tail -n 60 "$work/replay.log"
        report "$t" "$f"
        failed=1
      fi
    done
  fi
  echo "== $t: fuzzing for ${seconds}s"
  if ! "$bin" "${common[@]}" -max_len="$(max_len "$t")" -max_total_time="$seconds" \
      -artifact_prefix="$work/artifacts/$t/" "$work/corpus/$t" \
      $( [ -d "$corpus" ] && echo "$corpus" ) >"$work/$t.log" 2>&1; then
    tail -n 80 "$work/$t.log"
    for f in "$work/artifacts/$t"/*; do
      [ -e "$f" ] || continue
      mkdir -p "$root/build/fuzz-findings/$t"
      cp "$f" "$root/build/fuzz-findings/$t/"
      report "$t" "$root/build/fuzz-findings/$t/$(basename "$f")"
    done
    failed=1
  else
    grep -E "^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)" \
      "$work/$t.log" | tr '\n' ' '
    echo "corpus: $(ls "$work/corpus/$t" | wc -l) new entries"
  fi
done

if [ "$failed" -ne 0 ]; then
  echo "run_fuzz: FAILED (inputs saved under build/fuzz-findings/)"
  exit 1
fi
echo "run_fuzz: all fuzzers clean (${seconds}s each)"
