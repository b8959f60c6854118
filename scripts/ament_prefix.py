#!/usr/bin/env python3
"""Complete the venv as an ament prefix for the editable fay_ros (scripts/setup.sh, step 5).

`pip install -e .` gives the venv the importable package and its console scripts in bin/,
but not what the ROS tools look for: setuptools' editable wheel skips `data_files` (its
editable_wheel asks the distribution for `has_data`, which does not exist, so install_data
never runs; setuptools 80), and pip puts console scripts in bin/ whatever setup.cfg says
(the `script_dir` / `install_scripts` there are for colcon's `setup.py develop/install`).

This lays out, in the prefix of the Python running it (the venv), what a colcon
`--symlink-install` of fay_ros would:

- every `data_files` entry of setup.py as a symlink into the source tree: the ament index
  marker share/ament_index/resource_index/packages/fay_ros and share/fay_ros/{package.xml,
  LICENSE, launch/, config/, web/}. Files are linked one by one inside real directories because
  `ros2 launch` and `ros2 pkg` walk share/ with os.walk, which does not descend into a
  linked directory; an edit to a linked file takes effect at once, a new or removed data file
  needs this script again (setup.sh reruns it when the list of data files changes).
  Other things in share/fay_ros (models/, written by setup) are left alone.
- every `console_scripts` entry point as lib/fay_ros/<name>: a small shell script that execs
  the venv's Python on the entry point's function, so `ros2 run fay_ros <node>` and launch_ros
  `Node(package="fay_ros", ...)` find the nodes (the code is imported from the source tree).
- a block at the end of bin/activate that puts the venv first on AMENT_PREFIX_PATH (keeping
  what is there, e.g. a sourced /opt/ros/jazzy) and whose deactivate restores it.

Idempotent: only what differs is (re)written, and links and executables it made that setup.py
no longer declares are removed.

Usage: <venv>/bin/python scripts/ament_prefix.py [--root REPO] [--fingerprint]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "fay_ros"
ROOT = Path(__file__).resolve().parents[1]
# The first line after the shebang of every executable this script writes: how it recognises
# its own files in lib/fay_ros (and never removes anything else).
WRAPPER_MARK = "# fay_ros entry point for ros2 run / ros2 launch, written by scripts/ament_prefix.py"
ACTIVATE_BEGIN = "# >>> fay_ros ament prefix (written by scripts/ament_prefix.py) >>>"
ACTIVATE_END = "# <<< fay_ros ament prefix <<<"

# Appended to bin/activate (bash and zsh source it). The venv's own deactivate is kept under
# another name and called by the new one, which first restores AMENT_PREFIX_PATH.
ACTIVATE_BLOCK = f"""{ACTIVATE_BEGIN}
# The venv is an ament prefix holding {PACKAGE}: `ros2 run` and `ros2 launch` find it through
# AMENT_PREFIX_PATH. Put the venv first and keep the rest; deactivate restores the value from
# before the first activation (a second `activate` without deactivate keeps that one).
: "${{_FAY_ROS_OLD_AMENT_PREFIX_PATH=${{AMENT_PREFIX_PATH:-}}}}"
case ":${{AMENT_PREFIX_PATH:-}}:" in
    *":$VIRTUAL_ENV:"*) ;;
    *) AMENT_PREFIX_PATH="$VIRTUAL_ENV${{AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}}"; export AMENT_PREFIX_PATH ;;
esac
eval "_fay_ros_venv_$(typeset -f deactivate)"
deactivate () {{
    if [ -n "${{_FAY_ROS_OLD_AMENT_PREFIX_PATH+set}}" ] ; then
        if [ -n "$_FAY_ROS_OLD_AMENT_PREFIX_PATH" ] ; then
            AMENT_PREFIX_PATH="$_FAY_ROS_OLD_AMENT_PREFIX_PATH"; export AMENT_PREFIX_PATH
        else
            unset AMENT_PREFIX_PATH
        fi
        unset _FAY_ROS_OLD_AMENT_PREFIX_PATH
    fi
    _fay_ros_venv_deactivate "$@"
}}
{ACTIVATE_END}
"""


@dataclass
class Declared:
    """What setup.py declares: installed path (relative to the prefix) -> source file, and
    executable name -> "module:function"."""

    data: dict[Path, Path] = field(default_factory=dict)
    scripts: dict[str, str] = field(default_factory=dict)


def declared(root: Path) -> Declared:
    """Read setup.py's data_files and console_scripts the way colcon does: run it up to the
    point where setup() has its arguments, without building anything."""
    from distutils.core import run_setup

    import setuptools  # noqa: F401 - makes `distutils` below setuptools' own copy

    cwd = os.getcwd()
    os.chdir(root)  # setup.py globs relative to the repository root
    try:
        dist = run_setup("setup.py", stop_after="init")
    finally:
        os.chdir(cwd)
    result = Declared()
    for target_dir, files in dist.data_files or []:
        for source in files:
            result.data[Path(target_dir) / Path(source).name] = root / source
    # setuptools adds entry_points to the distutils Distribution
    for line in (getattr(dist, "entry_points", None) or {}).get("console_scripts", []):
        name, _, target = (part.strip() for part in line.partition("="))
        result.scripts[name] = target
    return result


def wrapper(python: Path, target: str) -> str:
    """A shell script that runs `target` ("module:function") in the venv's Python, as pip's
    console scripts do: argv[0] is the script's own path, the exit status is the function's."""
    module, _, function = target.partition(":")
    code = f"import sys; del sys.argv[0]; from {module} import {function}; sys.exit({function}())"
    # -P: nothing from the current directory shadows an import (it would with plain -c).
    return (
        f'#!/bin/sh\n{WRAPPER_MARK}\n# {target}\nexec {shlex.quote(str(python))} -P -c {shlex.quote(code)} "$0" "$@"\n'
    )


class Prefix:
    """The changes made to one prefix, counted for the summary line."""

    def __init__(self, prefix: Path):
        self.prefix = prefix
        self.changed: list[str] = []

    def link(self, installed: Path, source: Path) -> None:
        path = self.prefix / installed
        if path.is_symlink() and os.readlink(path) == str(source):
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir() and not path.is_symlink():
            raise SystemExit(f"ament_prefix: {path} is a directory; a link to {source} belongs there")
        if path.exists() or path.is_symlink():
            path.unlink()
        path.symlink_to(source)
        self.changed.append(f"link {installed}")

    def write_executable(self, installed: Path, text: str) -> None:
        path = self.prefix / installed
        if path.is_file() and not path.is_symlink() and path.read_text() == text and os.access(path, os.X_OK):
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            path.unlink()
        path.write_text(text)
        path.chmod(0o755)
        self.changed.append(f"executable {installed}")

    def remove_stale_links(self, top: Path, keep: set[Path], root: Path) -> None:
        """Links below prefix/top that point into the source tree and are not in `keep`
        (a data file setup.py no longer declares), then the folders that left empty."""
        base = self.prefix / top
        if not base.is_dir():
            return
        for folder, dirs, files in os.walk(base, topdown=False):
            for name in files + dirs:
                path = Path(folder) / name
                if not path.is_symlink() or path.relative_to(self.prefix) in keep:
                    continue
                if Path(os.readlink(path)).is_relative_to(root):
                    path.unlink()
                    self.changed.append(f"removed {path.relative_to(self.prefix)}")
            if Path(folder) != base and not any(Path(folder).iterdir()):
                Path(folder).rmdir()

    def remove_stale_executables(self, lib: Path, keep: set[str]) -> None:
        folder = self.prefix / lib
        if not folder.is_dir():
            return
        for path in folder.iterdir():
            if path.name in keep or path.is_symlink() or not path.is_file():
                continue
            with path.open(errors="replace") as f:
                head = [f.readline().rstrip("\n") for _ in range(2)]
            if WRAPPER_MARK in head:
                path.unlink()
                self.changed.append(f"removed {path.relative_to(self.prefix)}")

    def activate_hook(self) -> None:
        activate = self.prefix / "bin" / "activate"
        text = activate.read_text()
        if ACTIVATE_BEGIN in text:
            start = text.index(ACTIVATE_BEGIN)
            end = text.index(ACTIVATE_END, start) + len(ACTIVATE_END)
            new = text[:start] + ACTIVATE_BLOCK.rstrip("\n") + text[end:]
        else:
            new = text + ("" if text.endswith("\n") else "\n") + "\n" + ACTIVATE_BLOCK
        if new != text:
            activate.write_text(new)
            self.changed.append("bin/activate: AMENT_PREFIX_PATH")


def complete(prefix: Path, root: Path, python: Path) -> list[str]:
    """Make `prefix` an ament prefix for the editable fay_ros of `root`; returns what changed."""
    wanted = declared(root)
    if not wanted.scripts or Path("share/ament_index/resource_index/packages", PACKAGE) not in wanted.data:
        raise SystemExit(f"ament_prefix: {root / 'setup.py'} declares no console scripts or no ament index marker")
    done = Prefix(prefix)
    for installed, source in sorted(wanted.data.items()):
        if not source.is_file():
            raise SystemExit(f"ament_prefix: setup.py installs {source}, which does not exist")
        done.link(installed, source)
    for top in sorted(
        {Path(*p.parts[:3]) for p in wanted.data if p.parts[:2] == ("share", PACKAGE)}
        | {Path("share/ament_index/resource_index/packages")}
    ):
        done.remove_stale_links(top, set(wanted.data), root)
    lib = Path("lib", PACKAGE)
    for name, target in sorted(wanted.scripts.items()):
        done.write_executable(lib / name, wrapper(python, target))
    done.remove_stale_executables(lib, set(wanted.scripts))
    done.activate_hook()
    return done.changed


def fingerprint(root: Path, python: Path) -> str:
    """Changes when the layout would: setup.py's data files (their names, not contents: those
    are linked) or entry points, this script, or the interpreter the executables run."""
    wanted = declared(root)
    text = "\n".join(
        [
            Path(__file__).read_text(),
            str(python),
            *(f"{k} {v}" for k, v in sorted(wanted.data.items())),
            *(f"{k} {v}" for k, v in sorted(wanted.scripts.items())),
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the fay_ros source tree (default: this repository)")
    parser.add_argument(
        "--fingerprint",
        action="store_true",
        help="only print a hash of the layout this would make (setup.sh's stamp) and exit",
    )
    args = parser.parse_args(argv)
    if sys.prefix == sys.base_prefix:
        raise SystemExit("ament_prefix: run this with the venv's python (<venv>/bin/python scripts/ament_prefix.py)")
    prefix = Path(sys.prefix)
    if args.fingerprint:
        print(fingerprint(args.root.resolve(), prefix / "bin" / "python"))
        return 0
    changed = complete(prefix, args.root.resolve(), prefix / "bin" / "python")
    shown = ", ".join(changed[:4]) + (", ..." if len(changed) > 4 else "")
    print(f"    ament prefix {prefix}: " + (f"{len(changed)} change(s): {shown}" if changed else "complete"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
