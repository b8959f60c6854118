#!/usr/bin/env bash
# The checks of `make test`, in the project venv: ruff (ruff.toml: lint and format) and mypy (mypy.ini) first,
# then the whole pytest suite. A failed static check fails the run before pytest starts, naming
# the check. pytest's "no tests collected" (exit 5) is turned into a failure: a suite that runs
# nothing proves nothing.
#
# The suite runs on FAY_TEST_WORKERS pytest-xdist workers (default 3: most tests wait on
# processes, DDS and real-time audio rather than on the 2 cores; 0 runs in one process), a test
# file per worker so its module fixtures are made once. `--fast` (make test-fast) runs only the
# tests marked neither `graph` nor `slow`: the pure cores, no ROS graph, no processes.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
# The suite starts some 300 Python processes (nodes, CLI commands, 3 workers collecting every
# test module): each writes the bytecode it compiled (`__pycache__/`, ignored by git), pytest's
# rewritten test modules included. Under PYTHONDONTWRITEBYTECODE (set on CI machines) each
# worker rewrote and compiled all test modules again, 15 s of CPU each against 6.5 s.
unset PYTHONDONTWRITEBYTECODE

failed=()
for tool in ruff mypy; do
  if [ ! -x "$ROOT/.venv/bin/$tool" ]; then
    echo "test: $tool is not installed in .venv (requirements/test.txt) - run \`make setup\`" >&2
    failed+=("$tool")
  fi
done
if [ "${#failed[@]}" -eq 0 ]; then
  "$ROOT/.venv/bin/ruff" check . || failed+=("ruff check . (ruff.toml)")
  "$ROOT/.venv/bin/ruff" format --check . || failed+=("ruff format --check . (run: .venv/bin/ruff format .)")
  "$ROOT/.venv/bin/mypy" || failed+=("mypy (mypy.ini)")
fi
if [ "${#failed[@]}" -gt 0 ]; then
  for check in "${failed[@]}"; do
    echo "test: static check failed: $check" >&2
  done
  echo "test: not running pytest until the static checks pass" >&2
  exit 1
fi

workers="${FAY_TEST_WORKERS:-3}"
selection=()
if [ "${1:-}" = "--fast" ]; then
  shift
  selection=(-m "not graph and not slow")
  workers="${FAY_TEST_WORKERS:-2}"
fi
# --durations: the slowest tests in every log, so a suite creeping towards its time limit (12 min in
# CI) says where the time went
"$ROOT/.venv/bin/python" -m pytest -n "$workers" --dist loadfile --durations=15 "${selection[@]}" "$@"
code=$?
if [ "$code" -eq 5 ]; then
  echo "test: pytest collected no tests - failing on purpose" >&2
  exit 1
fi
exit "$code"
