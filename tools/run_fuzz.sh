#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz_*.cc, docs/fuzzing.md) with
# clang, ASan and UBSan in build/asan (tools/build.sh asan: the same build
# runs the C++ tests under ASan+UBSan), then for each target, one target per
# core at a time:
#   1. replays its committed corpus (tests/fuzz/corpus/<target>/), one run
#      per file -- every file must pass (old crashers stay fixed);
#   2. fuzzes for SECONDS, starting from that corpus and writing new corpus
#      entries to a temporary folder (never into the repository).
# Exits non-zero on any finding (crash, sanitizer report, invariant, leak,
# timeout, out-of-memory), printing the input that caused it and the commands
# that reproduce and minimise it.
#
#   tools/run_fuzz.sh ci              CI: a fixed number of inputs per target
#                                     from a fixed seed (-seed, -runs), so a
#                                     run is reproducible and a finding in CI
#                                     is the same on any machine (about 3
#                                     minutes for the four targets on 2 cores)
#   tools/run_fuzz.sh                 45 s per target, random seed
#   tools/run_fuzz.sh 3600            an hour per target
#   tools/run_fuzz.sh 600 fuzz_tracer one target
# Environment: BATON_FUZZ_SEED (the seed of ci mode, default 1),
# BATON_FUZZ_KEEP=1 keeps the temporary folder (new corpus entries) and
# prints where it is.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${1:-45}
shift || true
ci=0
if [ "$seconds" = ci ]; then ci=1; fi
build=$root/build/asan
bash tools/build.sh asan fuzzers

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

# Per target: the longest input, and for the compiler fuzzers inputs of any
# length from the start (-len_control=0: a program needs a few hundred bytes
# of choices before hostile attributes meet well-typed operands).
flags() {
  case "$1" in
    fuzz_program_builder | fuzz_tracer) echo "-max_len=4096 -len_control=0" ;;
    fuzz_runtime_calls) echo "-max_len=512 -len_control=0" ;;
    *) echo "-max_len=512" ;;
  esac
}

# ci mode: inputs per target, sized to about 40 s each on a 2-core CI
# machine (the import fuzzers run thousands of inputs a second, the compiler
# fuzzers about a hundred: each input compiles and runs a program twice).
ci_runs() {
  case "$1" in
    fuzz_buffer_import) echo 400000 ;;
    fuzz_dlpack_import) echo 150000 ;;
    fuzz_program_builder) echo 3000 ;;
    fuzz_tracer) echo 10000 ;;
    fuzz_runtime_calls) echo 4000 ;;
    *) echo 10000 ;;
  esac
}

# How long, or how many inputs, for target $1.
budget() {
  if [ "$ci" = 1 ]; then
    echo "-seed=${BATON_FUZZ_SEED:-1} -runs=$(ci_runs "$1")"
  else
    echo "-max_total_time=$seconds"
  fi
}

report() {  # target, file
  local t=$1 f=$2 bin=$build/tests/fuzz/$1
  echo
  echo "run_fuzz: $t FAILED on input $f"
  echo "  reproduce: $bin $f"
  if [ "$ci" = 1 ]; then
    echo "  the whole run: BATON_FUZZ_SEED=${BATON_FUZZ_SEED:-1} tools/run_fuzz.sh ci $t"
  fi
  echo "  minimise:  $bin -minimize_crash=1 -runs=100000 -exact_artifact_path=/tmp/min-$t $f"
  echo "  keep it:   cp /tmp/min-$t tests/fuzz/corpus/$t/crash-<what-it-found>"
  echo "  (docs/fuzzing.md: fix the root cause, then commit the input with the fix)"
}

# One target: replay its corpus, then fuzz. Prints its report; fails if it
# found anything.
fuzz_target() {
  local t=$1 bin=$build/tests/fuzz/$1 corpus=tests/fuzz/corpus/$1 failed=0 start=$SECONDS
  mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
  if [ -d "$corpus" ] && [ -n "$(ls -A "$corpus")" ]; then
    echo "== $t: replaying $(ls "$corpus" | wc -l) corpus inputs"
    # One process runs each file once ("Running: <file>"), stopping at the
    # first failure.
    if ! "$bin" "${common[@]}" -artifact_prefix="$work/artifacts/$t/replay-" \
        "$corpus"/* >"$work/$t.replay.log" 2>&1; then
      tail -n 60 "$work/$t.replay.log"
      report "$t" "$(grep '^Running: ' "$work/$t.replay.log" | tail -n 1 | cut -c10-)"
      return 1
    fi
  fi
  echo "== $t: fuzzing ($(budget "$t"))"
  # shellcheck disable=SC2046  # flags() and budget() give several words
  if ! "$bin" "${common[@]}" $(flags "$t") $(budget "$t") \
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
  echo "== $t: $((SECONDS - start)) s"
  return "$failed"
}

for t in "${targets[@]}"; do
  [ -x "$build/tests/fuzz/$t" ] || { echo "run_fuzz: no fuzzer $build/tests/fuzz/$t"; exit 2; }
done
# The targets run side by side, one per core (each fuzzer process is single
# threaded, so one at a time left CI's second core idle); each one's report
# is printed whole, in the order of the targets. In ci mode each runs a
# fixed number of inputs from a fixed seed, whatever runs beside it, so the
# run is as reproducible as one target at a time.
jobs_max=$(nproc)
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  (
    if fuzz_target "$t" >"$work/$t.report" 2>&1; then echo 0; else echo 1; fi >"$work/$t.status"
  ) &
done
wait
failed=0
for t in "${targets[@]}"; do
  cat "$work/$t.report"
  [ "$(cat "$work/$t.status")" = 0 ] || failed=1
done

if [ "$failed" -ne 0 ]; then
  echo "run_fuzz: FAILED (inputs saved under build/fuzz-findings/)"
  exit 1
fi
if [ "$ci" = 1 ]; then
  echo "run_fuzz: all fuzzers clean (seed ${BATON_FUZZ_SEED:-1}, fixed runs)"
else
  echo "run_fuzz: all fuzzers clean (${seconds}s each)"
fi
