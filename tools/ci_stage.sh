# Sourced by tools/run_tests.sh and .ci/run: `stage NAME COMMAND...` runs one
# step of the suite, printing when it starts and how long it took, and keeps a
# table of every stage's time that `stage_summary` prints (CI must finish in
# 90 minutes on 2 cores, and the aim is 45: the table says where time goes).
# A failing step stops the run (set -e), and its line says which one failed.
BATON_STAGE_LOG=${BATON_STAGE_LOG:-$(mktemp "${TMPDIR:-/tmp}/baton-stages.XXXXXX")}
export BATON_STAGE_LOG

stage() {
  local name=$1 start=$SECONDS status=0
  shift
  echo "==> stage: $name"
  "$@" || status=$?
  local took=$((SECONDS - start))
  printf '%-28s %5d s%s\n' "$name" "$took" "$([ "$status" -ne 0 ] && echo "  FAILED ($status)")" \
    >>"$BATON_STAGE_LOG"
  echo "<== stage: $name took ${took} s$([ "$status" -ne 0 ] && echo ", FAILED with status $status")"
  return "$status"
}

stage_summary() {
  echo "Stage times (s):"
  cat "$BATON_STAGE_LOG"
  awk '{ t += $(NF-1) } END { printf "%-28s %5d s\n", "total", t }' \
    <(grep -v FAILED "$BATON_STAGE_LOG")
}
