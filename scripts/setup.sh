#!/usr/bin/env bash
# One-shot, idempotent setup of a fay_ros development / run environment:
#   1. Debian packages (only the missing ones)
#   2. .venv with the ros-jazzy-* wheels and the pinned Python dependencies
#   3. the CMake path fix for the wheels
#   4. fay_msgs built with plain CMake and installed into .venv
#   5. fay_ros installed editable, and the venv completed as its ament prefix (share/fay_ros,
#      lib/fay_ros/<node>, AMENT_PREFIX_PATH in bin/activate; scripts/ament_prefix.py)
# Each step prints what it does and is skipped when its inputs have not changed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${FAY_VENV:-$ROOT/.venv}"
STAMPS="$VENV/.fay-stamps"
PY="${PYTHON:-python3.11}"
STEP="(start)"

# Two setups at once (e.g. `make run` while `make test` sets up) would share the fay_msgs
# build folder and pip; the second waits for the first.
exec 9>"$ROOT/.setup.lock"
if ! flock -n 9; then echo "setup: another setup is running; waiting for it"; flock 9; fi

fail() { echo "setup: FAILED at step '$STEP'${1:+: $1}" >&2; exit 1; }
trap 'fail "command exited with status $? (see output above)"' ERR
step() { STEP="$1"; printf '\033[1m==> [setup] %s\033[0m\n' "$1"; }
skip() { printf '    %s: up to date, skipped\n' "$1"; }

# Content hash of the files a step depends on: the step reruns only when they change.
inputs_hash() { cat "$@" 2>/dev/null | sha256sum | cut -c1-16; }
stamp_ok() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
stamp_set() { mkdir -p "$STAMPS"; echo "$2" > "$STAMPS/$1"; }

# ---------------------------------------------------------------------------
step "1/5 Debian packages"
mapfile -t APT_PKGS < <(sed -e 's/#.*//' -e '/^\s*$/d' "$ROOT/scripts/apt-packages.txt" | awk '{print $1}')
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  skip "apt (${#APT_PKGS[@]} packages present)"
else
  echo "    installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq || fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    || fail "apt-get install ${missing[*]} failed"
fi

# ---------------------------------------------------------------------------
step "2/5 Python venv ($VENV) and pinned dependencies"
command -v "$PY" >/dev/null || fail "$PY not found (fay_ros needs CPython 3.11 for the ros-jazzy wheels)"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" || fail "could not create venv"
  "$VENV/bin/pip" install -q --upgrade pip==25.3 setuptools==80.9.0 wheel 2> >(grep -v "is ignored: it is neither" >&2)
fi
REQS=("$ROOT"/requirements/*.txt)
h=$(inputs_hash "${REQS[@]}")
if stamp_ok pip "$h"; then
  skip "pip requirements"
else
  # All ordinary pins in ONE resolver run, so no file can silently up- or downgrade what
  # another pinned; then the hash-checked model packages, which bring no dependencies.
  plain=(); hashed=()
  for r in "${REQS[@]}"; do
    case "$(basename "$r")" in
      hashed-*) hashed+=("$r") ;;
      runtime-colcon.txt) ;;  # for colcon builds on apt ROS; a subset of the files below
      # test.txt (pytest, Playwright, ...) too: `make test` and `make bench` need it, and in the
      # same resolve it cannot move a runtime pin.
      *) plain+=(-r "$r") ;;
    esac
  done
  echo "    pip install $(( ${#plain[@]} / 2 )) requirement file(s) in one resolve (first run: a few minutes)"
  "$VENV/bin/pip" install -q "${plain[@]}" 2> >(grep -v "is ignored: it is neither" >&2) || fail "pip install ${plain[*]}"
  for r in "${hashed[@]}"; do
    echo "    pip install (hash-checked, no deps) $(basename "$r")"
    "$VENV/bin/pip" install -q --no-deps --require-hashes -r "$r" 2> >(grep -v "is ignored: it is neither" >&2) \
      || fail "pip install --require-hashes -r $r"
  done
  stamp_set pip "$h"
fi

# ---------------------------------------------------------------------------
step "3/5 CMake path fix for the ros-jazzy wheels"
"$VENV/bin/python" "$ROOT/scripts/fix_ros_wheel_paths.py" || fail "path rewrite"

# ---------------------------------------------------------------------------
step "4/5 fay_msgs (CMake build into the venv)"
h=$(inputs_hash "$ROOT"/fay_msgs/CMakeLists.txt "$ROOT"/fay_msgs/package.xml "$ROOT"/fay_msgs/msg/* "$ROOT"/fay_msgs/srv/* "$ROOT"/fay_msgs/action/* "$STAMPS/pip")
if stamp_ok fay_msgs "$h" && "$VENV/bin/python" -c "import fay_msgs.msg" 2>/dev/null; then
  skip "fay_msgs"
else
  BUILD="$VENV/build/fay_msgs"  # not build/: that is colcon's
  rm -rf "$BUILD"; mkdir -p "$BUILD"
  ( export PATH="$VENV/bin:$PATH"
    cmake -S "$ROOT/fay_msgs" -B "$BUILD" -DCMAKE_INSTALL_PREFIX="$VENV" -DCMAKE_PREFIX_PATH="$VENV" \
      -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release > "$BUILD/configure.log" 2>&1 \
      || { tail -30 "$BUILD/configure.log"; fail "cmake configure (log: $BUILD/configure.log)"; }
    echo "    compiling (about a minute the first time)"
    cmake --build "$BUILD" -j"$(nproc)" > "$BUILD/build.log" 2>&1 \
      || { grep -m10 -A5 "error" "$BUILD/build.log"; fail "cmake build (log: $BUILD/build.log)"; }
    cmake --install "$BUILD" > "$BUILD/install.log" 2>&1 || fail "cmake install (log: $BUILD/install.log)" )
  "$VENV/bin/python" -c "from fay_msgs.msg import ActionCue, VisemeTrack; import rclpy" \
    || fail "fay_msgs built but does not import"
  stamp_set fay_msgs "$h"
fi

# ---------------------------------------------------------------------------
step "5/5 fay_ros (editable install, ament prefix)"
h=$(inputs_hash "$ROOT/setup.py" "$ROOT/setup.cfg" "$ROOT/package.xml")
if stamp_ok fay_ros "$h" && "$VENV/bin/python" -c "import fay_ros" 2>/dev/null; then
  skip "fay_ros"
else
  "$VENV/bin/pip" install -q --no-deps --no-build-isolation -e "$ROOT" || fail "pip install -e ."
  stamp_set fay_ros "$h"
fi
# Byte-compile the package (only what changed since the last run): where PYTHONDONTWRITEBYTECODE
# is set (as on CI machines), Python writes no .pyc itself and every node process would compile
# the package's ~110 modules from source again, about 0.7 s of CPU per process start.
"$VENV/bin/python" -m compileall -q -j 0 "$ROOT/fay_ros" > /dev/null || fail "python -m compileall fay_ros"
# The editable install gives no ament prefix (no data_files, executables in bin/): link
# share/fay_ros and the ament index marker into the source tree, write lib/fay_ros/<node> and
# the AMENT_PREFIX_PATH line of bin/activate, for `ros2 run` / `ros2 launch` in the venv.
h=$("$VENV/bin/python" "$ROOT/scripts/ament_prefix.py" --fingerprint) || fail "reading setup.py for the ament prefix"
if stamp_ok ament_prefix "$h" && [ -x "$VENV/lib/fay_ros/fay-ros" ] \
    && [ -e "$VENV/share/ament_index/resource_index/packages/fay_ros" ] && [ -e "$VENV/share/fay_ros/package.xml" ]; then
  skip "ament prefix"
else
  "$VENV/bin/python" "$ROOT/scripts/ament_prefix.py" || fail "scripts/ament_prefix.py"
  stamp_set ament_prefix "$h"
fi
# Area-specific fix-ups (each idempotent, given the venv path): scripts/post_setup.d/*.sh
for hook in "$ROOT"/scripts/post_setup.d/*.sh; do
  [ -f "$hook" ] || continue
  STEP="post-setup $(basename "$hook")"
  bash "$hook" "$VENV" || fail "$(basename "$hook") failed"
done
trap - ERR
echo "setup: done ($VENV)"
