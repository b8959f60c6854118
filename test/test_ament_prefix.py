"""The venv `make setup` builds is an ament prefix for fay_ros (scripts/ament_prefix.py).

With the environment `.venv/bin/activate` gives (sourced in bash, not assumed of the shell
that runs the tests), ament_index_python resolves fay_ros to the venv; every console entry
point of setup.py is an executable in lib/fay_ros that runs its module's function from the
source tree (so edits take effect without a reinstall); every data file is linked from
share/ to the source, found the way `ros2 launch` looks for launch files.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import REPO

VENV = Path(sys.prefix)
SHARE = VENV / "share" / "fay_ros"
LIB = VENV / "lib" / "fay_ros"
# An argument rclpy.init refuses: the executable imports its module and runs its function,
# which fails at once, before any ROS traffic, so the probe cannot hang.
REFUSED_ROS_ARGS = ["--ros-args", "--fay-ros-probe"]

pytestmark = pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="needs the project venv (make setup)")


def _env_after(script: str, env: dict[str, str]) -> dict[str, str]:
    """The environment after `script` runs in bash with `env` (e.g. sourcing bin/activate)."""
    out = subprocess.run(
        ["bash", "-c", f"{script} && env -0", "bash", str(VENV)], env=env, capture_output=True, timeout=30, check=True
    )
    return dict(item.split("=", 1) for item in out.stdout.decode().split("\0") if "=" in item)


def _base_env(ament_prefix_path: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AMENT_PREFIX_PATH", "VIRTUAL_ENV")}
    if ament_prefix_path is not None:
        env["AMENT_PREFIX_PATH"] = ament_prefix_path
    return env


@pytest.fixture
def activated_env(tmp_path):
    """What `source .venv/bin/activate` gives, over a shell that had sourced another prefix."""
    other = tmp_path / "other_prefix"
    (other / "share" / "ament_index" / "resource_index" / "packages").mkdir(parents=True)
    env = _env_after('. "$1/bin/activate"', _base_env(str(other)))
    return env, str(other)


def test_activate_puts_the_venv_first_on_ament_prefix_path_and_deactivate_restores_it(activated_env):
    env, other = activated_env
    assert env["AMENT_PREFIX_PATH"].split(os.pathsep) == [str(VENV), other]
    twice = _env_after('. "$1/bin/activate" && . "$1/bin/activate"', _base_env(other))
    assert twice["AMENT_PREFIX_PATH"].split(os.pathsep) == [str(VENV), other]
    restored = _env_after('. "$1/bin/activate" && . "$1/bin/activate" && deactivate', _base_env(other))
    assert restored["AMENT_PREFIX_PATH"] == other
    assert "AMENT_PREFIX_PATH" not in _env_after('. "$1/bin/activate" && deactivate', _base_env(None))


def test_ament_index_resolves_fay_ros_to_the_venv(activated_env):
    env, _other = activated_env
    code = (
        "from ament_index_python.packages import get_package_prefix, get_package_share_directory\n"
        "print(get_package_prefix('fay_ros')); print(get_package_share_directory('fay_ros'))"
    )
    out = subprocess.run(
        [env.get("VIRTUAL_ENV", str(VENV)) + "/bin/python", "-c", code],
        env=env,
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(VENV), str(SHARE)]


def test_the_launch_file_is_found_the_way_ros2_launch_looks_for_it():
    # ros2launch's get_share_file_path_from_package: os.walk over the share directory, which
    # does not descend into linked folders (hence files linked one by one).
    found = [
        Path(folder) / "companion.launch.py"
        for folder, _dirs, files in os.walk(SHARE)
        if "companion.launch.py" in files
    ]
    assert found == [SHARE / "launch" / "companion.launch.py"]
    assert found[0].samefile(REPO / "launch" / "companion.launch.py")


def _declared_data_files() -> dict[Path, Path]:
    """setup.py's data_files: installed path (relative to the prefix) -> source file."""
    from distutils.core import run_setup

    import setuptools  # noqa: F401 - `distutils` below is then setuptools' own

    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        dist = run_setup("setup.py", stop_after="init")
    finally:
        os.chdir(cwd)
    return {Path(target) / Path(src).name: REPO / src for target, files in dist.data_files for src in files}


def test_every_data_file_is_linked_to_the_source_tree():
    data = _declared_data_files()
    assert Path("share/ament_index/resource_index/packages/fay_ros") in data
    assert {p.parts[2] for p in data if p.parts[:2] == ("share", "fay_ros")} >= {
        "package.xml",
        "launch",
        "config",
        "web",
    }
    for installed, source in data.items():
        path = VENV / installed
        assert path.is_symlink() and path.resolve() == source.resolve(), f"{installed}: not a link to {source}"


def _console_scripts() -> dict[str, str]:
    dist = importlib.metadata.distribution("fay_ros")
    return {ep.name: ep.value for ep in dist.entry_points if ep.group == "console_scripts"}


def test_every_entry_point_is_an_executable_in_lib_fay_ros_running_its_module():
    scripts = _console_scripts()
    nodes = {name: target for name, target in scripts.items() if name != "fay-ros"}
    assert nodes and "fay-ros" in scripts
    for name in scripts:
        # what launch_ros' ExecutableInPackage and `ros2 run` look for
        assert shutil.which(name, path=str(LIB)) == str(LIB / name), f"lib/fay_ros/{name} missing or not executable"
    cli = subprocess.run([str(LIB / "fay-ros"), "--help"], capture_output=True, text=True, timeout=60, cwd="/")
    assert cli.returncode == 0 and cli.stdout.startswith("usage: fay-ros"), cli.stdout + cli.stderr
    probes = {
        name: subprocess.Popen(
            [str(LIB / name), *REFUSED_ROS_ARGS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/"
        )
        for name in nodes
    }
    for name, proc in probes.items():
        _out, err = proc.communicate(timeout=120)
        module, function = nodes[name].split(":")
        source = REPO / (module.replace(".", "/") + ".py")
        # Its own function ran, from the source tree (editable), and reached rclpy.init.
        assert proc.returncode != 0 and f'File "{source}"' in err and f"in {function}" in err, f"{name}: {err}"
        assert "UnknownROSArgsError" in err and "--fay-ros-probe" in err, f"{name}: {err}"


def _generator(monkeypatch):
    spec = importlib.util.spec_from_file_location("ament_prefix", REPO / "scripts" / "ament_prefix.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "ament_prefix", module)  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def test_the_layout_is_idempotent_keeps_other_files_and_drops_what_setup_py_no_longer_declares(tmp_path, monkeypatch):
    generator = _generator(monkeypatch)
    prefix = tmp_path / "venv"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "activate").write_text("deactivate () {\n    unset VIRTUAL_ENV\n}\n")
    models = prefix / "share" / "fay_ros" / "models" / "faster-whisper-base"
    models.mkdir(parents=True)
    (models / "model.bin").write_text("weights")
    python = prefix / "bin" / "python"

    first = generator.complete(prefix, REPO, python)
    assert first and generator.complete(prefix, REPO, python) == []
    assert (models / "model.bin").read_text() == "weights"
    assert (prefix / "bin" / "activate").read_text().count(generator.ACTIVATE_BEGIN) == 1

    stale_link = prefix / "share" / "fay_ros" / "config" / "gone" / "old.yaml"
    stale_link.parent.mkdir()
    stale_link.symlink_to(REPO / "config" / "old.yaml")
    stale_exe = prefix / "lib" / "fay_ros" / "old_node"
    stale_exe.write_text(generator.wrapper(python, "fay_ros.nodes.old_node:main"))
    someone_elses = prefix / "lib" / "fay_ros" / "their_tool"
    someone_elses.write_text("#!/bin/sh\n")
    changed = generator.complete(prefix, REPO, python)
    assert not stale_link.is_symlink() and not stale_link.parent.exists() and not stale_exe.exists()
    assert someone_elses.exists() and len(changed) == 2
