#!/usr/bin/env bash
# Turn-taking: Pipecat's smart-turn v3.2 end-of-turn model (fay_ros/turns/semantic_turn.py).
# The 8.7 MB ONNX file ships inside the pipecat-ai wheel (BSD-2-Clause, Daily); only that file
# and the licence are taken out of the hash-pinned wheel (pipecat itself is never installed),
# checked against the sha256 below and installed to $VENV/share/fay_ros/models/smart-turn-v3.2/.
# Fetched here, at set-up, never at run time; a model already in place is left alone, so a
# second run costs one sha256 of 8.7 MB. Without it the asr falls back to the word and
# prosody rules and says so on /diagnostics.
set -euo pipefail
VENV="${1:?usage: turns.sh VENV}"
PY="$VENV/bin/python"

PIPECAT_VERSION="1.14.0"
WHEEL="pipecat_ai-${PIPECAT_VERSION}-py3-none-any.whl"
WHEEL_SHA256="0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44"
MEMBER="pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"
LICENCE_MEMBER="pipecat_ai-${PIPECAT_VERSION}.dist-info/licenses/LICENSE"
MODEL_SHA256="2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f"

TARGET="$VENV/share/fay_ros/models/smart-turn-v3.2"
MODEL="$TARGET/smart-turn-v3.2-cpu.onnx"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/fay_ros/downloads"

sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$MODEL" ] && [ -f "$TARGET/LICENSE" ] && [ "$(sha "$MODEL")" = "$MODEL_SHA256" ]; then
  echo "    turns: smart-turn v3.2 present"
  exit 0
fi

mkdir -p "$CACHE"
if [ ! -f "$CACHE/$WHEEL" ] || [ "$(sha "$CACHE/$WHEEL")" != "$WHEEL_SHA256" ]; then
  req="$(mktemp)"
  trap 'rm -f "$req"' EXIT
  echo "pipecat-ai==${PIPECAT_VERSION} --hash=sha256:${WHEEL_SHA256}" >"$req"
  "$PY" -m pip download -q --no-deps --only-binary :all: --require-hashes -r "$req" -d "$CACHE" \
    || { echo "turns: cannot download pipecat-ai ${PIPECAT_VERSION} (for smart-turn v3.2)" >&2; exit 1; }
fi

mkdir -p "$TARGET"
"$PY" - "$CACHE/$WHEEL" "$MEMBER" "$LICENCE_MEMBER" "$TARGET" "$MODEL_SHA256" <<'PYEOF'
import hashlib, os, sys, zipfile

wheel, member, licence, target, expected = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    data = z.read(member)
    got = hashlib.sha256(data).hexdigest()
    if got != expected:
        sys.exit(f"turns: {member} in {os.path.basename(wheel)} has sha256 {got}, expected {expected}")
    model = os.path.join(target, os.path.basename(member))
    with open(model + ".tmp", "wb") as out:
        out.write(data)
    os.replace(model + ".tmp", model)
    with open(os.path.join(target, "LICENSE"), "wb") as out:
        out.write(z.read(licence))
with open(os.path.join(target, "SOURCE"), "w") as out:
    out.write(
        f"{os.path.basename(member)} from {os.path.basename(wheel)} ({member}), sha256 {expected}.\n"
        "Smart Turn v3.2 by Daily (pipecat-ai), BSD-2-Clause: see LICENSE.\n"
    )
PYEOF
echo "    turns: installed smart-turn v3.2 to $TARGET"
