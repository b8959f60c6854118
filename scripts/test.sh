#!/usr/bin/env bash
# The checks of `make test`, in the project venv: ruff (ruff.toml) and mypy (mypy.ini) first,
# then the whole pytest suite. A failed static check fails the run before pytest starts, naming
# the check. pytest's "no tests collected" (exit 5) is turned into a failure: a suite that runs
# nothing proves nothing.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"

failed=()
for tool in ruff mypy; do
  if [ ! -x "$ROOT/.venv/bin/$tool" ]; then
    echo "test: $tool is not installed in .venv (requirements/test.txt) - run \`make setup\`" >&2
    failed+=("$tool")
  fi
done
if [ "${#failed[@]}" -eq 0 ]; then
  "$ROOT/.venv/bin/ruff" check . || failed+=("ruff check . (ruff.toml)")
  "$ROOT/.venv/bin/mypy" || failed+=("mypy (mypy.ini)")
fi
if [ "${#failed[@]}" -gt 0 ]; then
  for check in "${failed[@]}"; do
    echo "test: static check failed: $check" >&2
  done
  echo "test: not running pytest until the static checks pass" >&2
  exit 1
fi

"$ROOT/.venv/bin/python" -m pytest "$@"
code=$?
if [ "$code" -eq 5 ]; then
  echo "test: pytest collected no tests - failing on purpose" >&2
  exit 1
fi
exit "$code"
