#!/usr/bin/env bash
# Runs one stage of `make test` and says what it is doing: the stage's name and start time before,
# its wall time and exit status after, and a line in .build/test-stages.log for the summary.
#
#   scripts/stage.sh NAME COMMAND [ARGUMENT...]   run COMMAND as stage NAME
#   scripts/stage.sh --log FILE NAME COMMAND ...  the same, with the output copied to FILE as well
#   scripts/stage.sh --log-only FILE NAME COMMAND ...  the output to FILE alone (a stage that runs
#                                                 beside another, whose output goes to the terminal)
#   scripts/stage.sh --begin                      start a new summary (forgets earlier stages)
#   scripts/stage.sh --summary [LOG...]           every stage's time, the whole run's, the failed tests
#                                                 and the slowest suites of the swift test logs given;
#                                                 exits 1 when a stage failed
set -uo pipefail
cd "$(dirname "$0")/.."
stages=.build/test-stages.log
began=.build/test-stages.began
mkdir -p .build

case "${1:-}" in
--begin)
  : > "$stages"
  date +%s > "$began"
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
  done < "$stages"
  # Stages may run side by side (the suites and the pair's tests): the whole is wall time since --begin.
  if [ -f "$began" ]; then printf '    %-28s %6s s\n' "in all" "$(($(date +%s) - $(cat "$began")))"; fi
  # Swift Testing prints `✔ Suite "Name" passed after 12.345 seconds.` (or ✘ … failed after …) per suite.
  logs=()
  for log in "$@"; do [ -f "$log" ] && logs+=("$log"); done
  if [ ${#logs[@]} -gt 0 ]; then
    # Swift Testing marks a failed test `✘ Test "Name" … failed`; each is named here with its log.
    failures=$(grep -HE '✘ Test .* failed' "${logs[@]}" | grep -v '✘ Test run ' | sed -E 's/^([^:]*):.*✘ Test ("[^"]*"|[^ ]+).*/    \2  (\1)/' | sort -u)
    if [ -n "$failures" ]; then
      echo "==> failed tests"
      echo "$failures"
    fi
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
only=""
if [ "${1:-}" = "--log" ] || [ "${1:-}" = "--log-only" ]; then
  [ "$1" = "--log-only" ] && only=1
  log="$2"
  shift 2
fi
name="$1"
shift
started=$(date +%s)
if [ -n "$only" ]; then
  echo "==> [$(date +%H:%M:%S)] $name: $* (its output: $log)"
else
  echo "==> [$(date +%H:%M:%S)] $name: $*"
fi
if [ -n "$only" ]; then
  mkdir -p "$(dirname "$log")"
  "$@" > "$log" 2>&1
  status=$?
elif [ -n "$log" ]; then
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
  [ -n "$only" ] && tail -40 "$log"
fi
printf '%s\t%s\t%s\n' "$name" "$seconds" "$status" >> "$stages"
exit "$status"
