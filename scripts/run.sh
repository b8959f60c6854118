#!/usr/bin/env bash
# Run the companion on the embedded offline defaults (`make run`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
if [[ " $* " != *"llm_base_url:="* ]]; then
  echo "fay_ros: embedded offline model (English only). 中文: make run ARGS=\"llm_base_url:=http://127.0.0.1:11434/v1 llm_model:=qwen2.5:7b\" (Ollama, or any Chinese-capable endpoint; README: 中文 / Chinese)"
fi
exec "$ROOT/.venv/bin/fay-ros" up "$@"
