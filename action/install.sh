#!/usr/bin/env bash
# The action's install step: mcpsync into its own venv under RUNNER_TEMP, put on PATH for the
# following steps through GITHUB_PATH (as actions/setup-* do).
set -euo pipefail
python="${MCPSYNC_ACTION_PYTHON:-python3}"
venv="${RUNNER_TEMP:?RUNNER_TEMP is set by the runner}/mcpsync-action-venv"
"$python" -m venv "$venv"
if [ -n "${MCPSYNC_ACTION_VERSION:-}" ]; then
  spec="mcpsync${MCPSYNC_ACTION_VERSION}"
else
  spec="${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is set by the runner}"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$spec"
echo "$venv/bin" >> "${GITHUB_PATH:?GITHUB_PATH is set by the runner}"
"$venv/bin/mcpsync" --version
