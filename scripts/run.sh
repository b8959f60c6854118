#!/usr/bin/env bash
# Run the companion on the embedded offline defaults (`make run`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
exec "$ROOT/.venv/bin/fay-ros" up "$@"
