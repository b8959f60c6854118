"""The package metadata is valid: package.xml format 3 parses, declares every ROS package the
code imports (and no ROS package it does not need), entry points resolve."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from catkin_pkg.package import parse_package

from harness import REPO
from test_package_structure import ROS_PACKAGES, imports, modules


@pytest.mark.parametrize("path", ["package.xml", "fay_msgs/package.xml"])
def test_package_xml_is_format_3(path):
    pkg = parse_package(str(REPO / path))
    pkg.validate()
    assert pkg.package_format == 3
    assert pkg.name == Path(path).parent.name or (path == "package.xml" and pkg.name == "fay_ros")


def test_fay_msgs_is_an_interface_package():
    pkg = parse_package(str(REPO / "fay_msgs/package.xml"))
    assert "rosidl_interface_packages" in [g.name for g in pkg.member_of_groups]
    assert pkg.get_build_type() == "ament_cmake"
    assert parse_package(str(REPO / "package.xml")).get_build_type() == "ament_python"


def _console_scripts():
    dist = importlib.metadata.distribution("fay_ros")
    return [ep for ep in dist.entry_points if ep.group == "console_scripts"]


def test_every_entry_point_resolves_to_a_callable_main():
    scripts = _console_scripts()
    assert "fay-ros" in {ep.name for ep in scripts}
    for ep in scripts:
        assert callable(ep.load()), ep


def test_every_bringup_node_has_an_entry_point():
    from fay_ros.bringup.graph import companion_nodes

    names = {ep.name: ep.value for ep in _console_scripts()}
    for spec in companion_nodes({"demo": True}):
        assert spec.executable in names, f"{spec.name} has no console_scripts entry"
        assert names[spec.executable].split(":")[0] == spec.module
        importlib.import_module(spec.module)


def test_cli_help_lists_subcommands():
    out = subprocess.run([sys.executable, "-m", "fay_ros.cli", "--help"], capture_output=True, text=True, check=True)
    assert "up" in out.stdout


def test_fay_msgs_imports_with_rclpy():
    code = "from fay_msgs.msg import ActionCue, VisemeTrack; import rclpy; print(ActionCue.SENTIMENT_SCALE)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "lexicon_v1:-1..1"


def test_the_colcon_route_puts_executables_where_ros2_run_looks():
    """colcon's `setup.py install/develop` reads setup.cfg: executables in lib/fay_ros, where
    `ros2 run` and launch_ros look. (setup.py's data_files and the pip route's layout:
    test_ament_prefix.py.)"""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    assert cfg["develop"]["script_dir"] == cfg["install"]["install_scripts"] == "$base/lib/fay_ros"
    assert (REPO / "resource" / "fay_ros").is_file()


# --- package.xml declares the ROS packages the code imports -------------------------------
#
# rosdep and the binary packages built from package.xml install only what it declares: a ROS
# package imported but not declared works in the venv (requirements/ros.txt) and on a
# developer's sourced workspace, then fails on a robot installed with rosdep or apt.

# What counts as a ROS package: these names (with test_package_structure's), the interface
# package suffixes, and anything an ament index on this machine lists. rosdep keys of system
# packages (python3-numpy, espeak-ng) are none of these and are left out of both checks.
KNOWN_ROS = ROS_PACKAGES | {
    "rclpy",
    "launch",
    "launch_ros",
    "ament_index_python",
    "builtin_interfaces",
    "rosidl_runtime_py",
    "diagnostic_updater",
    "hri_msgs",
    "fay_msgs",
}
ROS_SUFFIXES = ("_msgs", "_srvs", "_interfaces")
# Imported, not declared: an optional extra the code works without. The import must sit in a
# `try:` whose handler catches ImportError (checked below), so a missing package is a feature
# off, never a crash.
OPTIONAL = {
    # REP-155 voices (nodes/asr.py, HriVoices.create): the asr publishes /humans/voices/* only
    # when ROS4HRI's hri_msgs is importable. Declaring it would make rosdep install ROS4HRI on
    # every robot and turn those topics on everywhere; the pip route has no wheel for it.
    "hri_msgs": "optional REP-155 voices (ROS4HRI)",
}
# Declared, not imported: a ROS package needed at run time for another reason. None today.
NEEDED_WITHOUT_IMPORT: dict[str, str] = {}
# Run-time dependency tags: a ROS package imported at run time needs <exec_depend> or
# <depend> (a <build_depend> alone is not installed with the built package).
RUN_TAGS = ("depend", "exec_depend")


def _ament_packages() -> set[str]:
    """Package names in the ament indexes of this venv and of AMENT_PREFIX_PATH."""
    prefixes = [sys.prefix, *filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep))]
    names: set[str] = set()
    for prefix in prefixes:
        index = Path(prefix, "share", "ament_index", "resource_index", "packages")
        if index.is_dir():
            names.update(p.name for p in index.iterdir())
    return names


def is_ros_package(name: str, ament: set[str]) -> bool:
    return name in KNOWN_ROS or name.endswith(ROS_SUFFIXES) or name in ament


def code_files() -> dict[str, Path]:
    """Module name -> file for fay_ros/ and the launch files (installed under share/)."""
    files = dict(modules())
    files.update({f"launch.{p.stem}": p for p in sorted((REPO / "launch").glob("*.py"))})
    return files


def imported_ros_packages() -> dict[str, list[str]]:
    """ROS package -> "file:line" of every import of it (inside functions too)."""
    ament = _ament_packages()
    found: dict[str, list[str]] = {}
    for name, path in code_files().items():
        for target, line, _top in imports(name, path):
            root = target.split(".")[0]
            where = f"{path.relative_to(REPO)}:{line}"
            if root != "fay_ros" and is_ros_package(root, ament) and where not in found.get(root, []):
                found.setdefault(root, []).append(where)
    return found


def declared(path: Path = REPO / "package.xml", tags: tuple[str, ...] = RUN_TAGS) -> set[str]:
    root = ET.parse(path).getroot()
    return {(dep.text or "").strip() for tag in tags for dep in root.findall(tag)}


def _import_guarded(path: Path, line: int) -> bool:
    """Whether the import on `line` sits in the body of a try that catches ImportError."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Try) or not node.body:
            continue
        caught = {ast.unparse(h.type) for h in node.handlers if h.type is not None}
        if any("ImportError" in c or "ModuleNotFoundError" in c for c in caught) and node.body[0].lineno <= line <= (
            node.body[-1].end_lineno or line
        ):
            return True
    return False


def test_package_xml_declares_every_ros_package_the_code_imports():
    have = declared()
    missing = sorted(
        f"{pkg} (imported at {', '.join(where[:3])}{' ...' if len(where) > 3 else ''})"
        for pkg, where in imported_ros_packages().items()
        if pkg not in have and pkg not in OPTIONAL
    )
    assert not missing, "package.xml lacks an <exec_depend> for:\n  " + "\n  ".join(missing)


def test_package_xml_declares_no_ros_package_the_code_does_not_use():
    ament = _ament_packages()
    used = set(imported_ros_packages()) | set(NEEDED_WITHOUT_IMPORT)
    unused = sorted(pkg for pkg in declared() if is_ros_package(pkg, ament) and pkg not in used)
    assert unused == [], f"package.xml declares ROS packages nothing imports (or list them with a reason): {unused}"


def test_optional_ros_imports_are_guarded_and_undeclared():
    imported = imported_ros_packages()
    for pkg in OPTIONAL:
        assert pkg in imported, f"{pkg} is listed as optional but nothing imports it"
        assert pkg not in declared(), f"{pkg} is declared in package.xml: drop it from OPTIONAL"
        for where in imported[pkg]:
            file, line = where.rsplit(":", 1)
            assert _import_guarded(REPO / file, int(line)), f"{where}: optional {pkg} imported outside try/ImportError"


def test_the_dependency_check_reads_imports_and_package_xml(tmp_path):
    """The helpers see a declared and an undeclared dependency, and tell ROS from rosdep keys."""
    xml = tmp_path / "package.xml"
    xml.write_text(
        '<package format="3"><depend>rclpy</depend><exec_depend>std_msgs</exec_depend>'
        "<build_depend>sensor_msgs</build_depend><exec_depend>python3-numpy</exec_depend></package>"
    )
    assert declared(xml) == {"rclpy", "std_msgs", "python3-numpy"}
    assert is_ros_package("sensor_msgs", set()) and is_ros_package("std_srvs", set())
    assert is_ros_package("rcl_interfaces", set()) and is_ros_package("some_pkg", {"some_pkg"})
    assert not is_ros_package("python3-numpy", set()) and not is_ros_package("espeak-ng", set())
    assert not is_ros_package("numpy", set()) and not is_ros_package("rosbridge_server_rs", set())
    source = tmp_path / "x.py"
    source.write_text(
        "try:\n    from hri_msgs.msg import LiveSpeech\nexcept ImportError:\n    pass\n"
        "from sensor_msgs.msg import JointState\n"
    )
    assert _import_guarded(source, 2) and not _import_guarded(source, 5)
    assert "sensor_msgs" in imported_ros_packages() and "rcl_interfaces" in imported_ros_packages()
