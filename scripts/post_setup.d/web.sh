#!/usr/bin/env bash
# Web face / rosbridge fix-ups for rosbridge-server-rs on the ros-jazzy-* wheels (idempotent).
#   1. pip installs the server's binaries without the exec bit: set it.
#   2. the wheels ship no librmw_implementation.so (rclpy links the Fast DDS RMW directly),
#      but the binary links against it: symlink it to librmw_fastrtps_cpp.so in <venv>/lib.
#   3. check that this Python has a shared libpython: `fay-ros web` preloads it into the binary,
#      because the wheels' *_rosidl_generator_py libraries use Python symbols without linking it.
# rosapi is turned off at run time (--no-rosapi), see fay_ros/web/bridge.py.
set -euo pipefail
VENV="${1:?usage: web.sh VENV}"
PY="$VENV/bin/python"

pkg_dir="$("$PY" -c 'import os, rosbridge_server_rs; print(os.path.dirname(rosbridge_server_rs.__file__))')"
for binary in "$pkg_dir"/rosbridge_server_rs_*; do
  [ -f "$binary" ] || continue
  [ -x "$binary" ] || { chmod +x "$binary"; echo "    web: exec bit set on $(basename "$binary")"; }
done

rmw="$VENV/lib/librmw_implementation.so"
[ -f "$VENV/lib/librmw_fastrtps_cpp.so" ] || { echo "web: $VENV/lib/librmw_fastrtps_cpp.so missing (ros-jazzy-rclpy[fastrtps] not installed?)" >&2; exit 1; }
if [ "$(readlink "$rmw" 2>/dev/null)" != "librmw_fastrtps_cpp.so" ]; then
  ln -sfn librmw_fastrtps_cpp.so "$rmw"
  echo "    web: linked $(basename "$rmw") -> librmw_fastrtps_cpp.so"
fi

"$PY" -c 'from fay_ros.web.bridge import libpython_path; libpython_path()' \
  || { echo "web: rosbridge-server-rs needs a shared libpython (see message above)" >&2; exit 1; }

# Smoke test: the binary resolves every library and answers --version.
"$PY" - <<'PYEOF'
import subprocess, sys, tempfile
from pathlib import Path
from fay_ros.web.allowlist import AllowList
from fay_ros.web.bridge import rs_command
cmd = rs_command(AllowList.build(), address="127.0.0.1", port=9090, namespace="/fay",
                 config_path=Path(tempfile.gettempdir()) / "fay_web_setup_check.toml")
out = subprocess.run([cmd.argv[0], "--version"], env=cmd.env, capture_output=True, text=True)
if out.returncode != 0:
    sys.exit(f"web: rosbridge-server-rs does not start: {out.stderr.strip() or out.stdout.strip()}")
print(f"    web: {out.stdout.strip()} ok")
PYEOF
