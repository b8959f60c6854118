"""The package metadata is valid: package.xml format 3 parses, entry points resolve."""
from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest
from catkin_pkg.package import parse_package

from harness import REPO


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
