"""A stand-in hri_msgs (ROS4HRI, REP-155) for the interop tests: test/data/hri_msgs holds the
two messages the asr node publishes (LiveSpeech, IdsList), with ROS4HRI's definitions.
hri_msgs is on no package registry, so it is built here the way scripts/setup.sh builds
fay_msgs (plain CMake against the venv), into its own prefix, not into the venv: the nodes of
every other test run without hri_msgs, as on a machine without ROS4HRI.

The prefix is cached under .venv/build/hri_msgs-<hash of the package files> (about a minute
to build the first time); a lock keeps two test runs from building it at once. A failed build
raises with the log's tail: a test that needs the stand-in fails, it never skips.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from pathlib import Path

from harness import REPO

SOURCE = REPO / "test" / "data" / "hri_msgs"
VENV = Path(sys.prefix)
_DONE_MARK = ".built"


def _inputs_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in SOURCE.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(SOURCE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _site_packages(prefix: Path) -> Path:
    return prefix / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def build_hri_msgs() -> Path:
    """The install prefix of the stand-in hri_msgs, built once per content of test/data/hri_msgs."""
    root = VENV / "build" / f"hri_msgs-{_inputs_hash()}"
    prefix = root / "install"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / _DONE_MARK).is_file():
            return prefix
        build = root / "build"
        # The ament index of the venv (its typesupports): scripts/setup.sh installs fay_msgs into
        # the venv, where CMAKE_INSTALL_PREFIX finds it; this prefix is another one.
        env = dict(
            os.environ,
            PATH=f"{VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            AMENT_PREFIX_PATH=os.pathsep.join(filter(None, [str(VENV), os.environ.get("AMENT_PREFIX_PATH")])),
        )
        steps = [
            (
                "configure",
                [
                    "cmake",
                    "-S",
                    str(SOURCE),
                    "-B",
                    str(build),
                    f"-DCMAKE_INSTALL_PREFIX={prefix}",
                    f"-DCMAKE_PREFIX_PATH={VENV}",
                    f"-DPython3_EXECUTABLE={VENV / 'bin' / 'python'}",
                    "-DBUILD_TESTING=OFF",
                    "-DCMAKE_BUILD_TYPE=Release",
                ],
            ),
            ("build", ["cmake", "--build", str(build), f"-j{os.cpu_count() or 1}"]),
            ("install", ["cmake", "--install", str(build)]),
        ]
        for name, cmd in steps:
            log = root / f"{name}.log"
            with open(log, "wb") as out:
                code = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=900).returncode
            if code != 0:
                tail = log.read_text(errors="replace")[-3000:]
                raise RuntimeError(
                    f"building the stand-in hri_msgs failed at cmake {name} (exit {code}; log {log}):\n{tail}"
                )
        check = subprocess.run(
            [sys.executable, "-c", "from hri_msgs.msg import LiveSpeech, IdsList"],
            env={**env, **environment(prefix)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check.returncode != 0:
            raise RuntimeError(f"the stand-in hri_msgs built into {prefix} but does not import:\n{check.stderr}")
        (root / _DONE_MARK).write_text(str(prefix) + "\n")
    return prefix


def environment(prefix: Path) -> dict[str, str]:
    """What a node process needs to import hri_msgs from `prefix` (an overlay on the venv)."""

    def prepend(name: str, value: Path) -> str:
        return os.pathsep.join(filter(None, [str(value), os.environ.get(name, "")]))

    # (the harness puts test/ on a node's PYTHONPATH; an env given to NodeProcess replaces it)
    pythonpath = os.pathsep.join([str(_site_packages(prefix)), str(REPO / "test")])
    return {
        "PYTHONPATH": os.pathsep.join(filter(None, [pythonpath, os.environ.get("PYTHONPATH", "")])),
        "LD_LIBRARY_PATH": prepend("LD_LIBRARY_PATH", prefix / "lib"),
        "AMENT_PREFIX_PATH": prepend("AMENT_PREFIX_PATH", prefix),
    }
