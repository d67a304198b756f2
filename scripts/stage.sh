#!/usr/bin/env bash
# Runs one stage of `make test` and says what it is doing: the stage's name and start time before,
# its wall time and exit status after, and a line in .build/test-stages.log for the summary.
#
#   scripts/stage.sh NAME COMMAND [ARGUMENT...]   run COMMAND as stage NAME
#   scripts/stage.sh --log FILE NAME COMMAND ...  the same, with the output copied to FILE as well
#   scripts/stage.sh --begin                      start a new summary (forgets earlier stages)
#   scripts/stage.sh --summary [LOG...]           every stage's time, and the slowest suites of the
#                                                 swift test logs given; exits 1 when a stage failed
set -uo pipefail
cd "$(dirname "$0")/.."
stages=.build/test-stages.log
mkdir -p .build

case "${1:-}" in
--begin)
  : > "$stages"
  exit 0
  ;;
--summary)
  shift
  echo "==> make test: stages"
  failed=0
  total=0
  # A stage killed before it wrote its line must not pass for one that passed: every stage named on
  # ZFLUX_REQUIRED_STAGES must have a line.
  for required in ${ZFLUX_REQUIRED_STAGES:-}; do
    if ! grep -q "^$required	" "$stages" 2>/dev/null; then
      echo "    $required: no record (it did not finish)"
      failed=1
    fi
  done
  while IFS=$'\t' read -r name seconds status; do
    [ -n "$name" ] || continue
    mark="ok"
    if [ "$status" != 0 ]; then mark="FAILED (exit $status)"; failed=1; fi
    printf '    %-28s %6s s  %s\n' "$name" "$seconds" "$mark"
    total=$((total + seconds))
  done < "$stages"
  printf '    %-28s %6s s\n' "in all" "$total"
  # Swift Testing prints `✔ Suite "Name" passed after 12.345 seconds.` (or ✘ … failed after …) per suite.
  logs=()
  for log in "$@"; do [ -f "$log" ] && logs+=("$log"); done
  if [ ${#logs[@]} -gt 0 ]; then
    echo "==> the slowest suites"
    grep -hE 'Suite .* (passed|failed) after [0-9.]+ seconds' "${logs[@]}" |
      sed -E 's/.*Suite ("[^"]*"|[^ ]+) (passed|failed) after ([0-9.]+) seconds.*/\3\t\2\t\1/' |
      sort -t$'\t' -k1,1 -rn | head -10 |
      while IFS=$'\t' read -r seconds outcome suite; do printf '    %8.1f s  %-6s %s\n' "$seconds" "$outcome" "$suite"; done
  fi
  exit "$failed"
  ;;
esac

log=""
if [ "${1:-}" = "--log" ]; then
  log="$2"
  shift 2
fi
name="$1"
shift
started=$(date +%s)
echo "==> [$(date +%H:%M:%S)] $name: $*"
if [ -n "$log" ]; then
  mkdir -p "$(dirname "$log")"
  "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
else
  "$@"
  status=$?
fi
seconds=$(($(date +%s) - started))
if [ "$status" = 0 ]; then
  echo "<== $name: ok in ${seconds} s"
else
  echo "<== $name: FAILED (exit $status) after ${seconds} s"
fi
printf '%s\t%s\t%s\n' "$name" "$seconds" "$status" >> "$stages"
exit "$status"
