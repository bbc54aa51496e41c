#!/usr/bin/env bash
# The action's check step: run the enabled checks, show each one's output in the log, write a
# Markdown report with the diffs to the job summary, and fail when any check failed.
set -uo pipefail
summary="${GITHUB_STEP_SUMMARY:-/dev/null}"
status=0
report() {  # title, exit code, output file
  local title="$1" code="$2" out="$3"
  if [ "$code" -eq 0 ]; then
    printf '### :white_check_mark: %s\n\n' "$title" >> "$summary"
  else
    printf '### :x: %s (exit %s)\n\n```diff\n' "$title" "$code" >> "$summary"
    cat "$out" >> "$summary"
    printf '\n```\n\n' >> "$summary"
    echo "::error title=mcpsync::$title failed (exit $code); the job summary has the details"
  fi
}
run_check() {  # title, command...
  local title="$1"; shift
  local out; out="$(mktemp)"
  echo "+ $*"
  "$@" > "$out" 2>&1
  local code=$?
  cat "$out"
  report "$title" "$code" "$out"
  rm -f "$out"
  [ "$code" -eq 0 ] || status=1
}
printf '## mcpsync\n\n' >> "$summary"
if [ "${MCPSYNC_ACTION_LOCK_CHECK:-true}" = "true" ]; then
  run_check "mcpsync lock --check" mcpsync lock --check
fi
if [ "${MCPSYNC_ACTION_SYNC_CHECK:-true}" = "true" ]; then
  # shellcheck disable=SC2206  # sync-args is a list of words by design
  args=(${MCPSYNC_ACTION_SYNC_ARGS:-})
  run_check "$(echo mcpsync sync --check "${args[@]}")" mcpsync sync --check "${args[@]}"
fi
if [ "$status" -eq 0 ]; then result=ok; else result=drift; fi
[ -n "${GITHUB_OUTPUT:-}" ] && echo "result=$result" >> "$GITHUB_OUTPUT"
exit "$status"
