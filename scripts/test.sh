#!/usr/bin/env bash
# Run the whole pytest suite in the project venv. pytest's "no tests collected" (exit 5)
# is turned into a failure: a suite that runs nothing proves nothing.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
"$ROOT/.venv/bin/python" -m pytest "$@"
code=$?
if [ "$code" -eq 5 ]; then
  echo "test: pytest collected no tests - failing on purpose" >&2
  exit 1
fi
exit "$code"
