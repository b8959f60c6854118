#!/usr/bin/env python3
"""Rewrite the build-machine paths the ros-jazzy-* wheels bake into their CMake files.

The wheels are built in a manylinux image whose Python lives in /opt/python/cp311-cp311.
Their exported CMake targets point at that prefix for the Python headers and numpy's
headers, so an interface package that links against them fails to configure anywhere
else. This rewrites those paths to the venv's own interpreter. Idempotent.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

BUILD_PREFIX = "/opt/python/cp311-cp311"


def replacements() -> list[tuple[str, str]]:
    import numpy

    py_include = sysconfig.get_paths()["include"]
    numpy_include = numpy.get_include()
    return [
        (f"{BUILD_PREFIX}/include/python3.11", py_include),
        (f"{BUILD_PREFIX}/lib/python3.11/site-packages/numpy/_core/include", numpy_include),
    ]


def main() -> int:
    prefix = Path(sys.prefix)
    rules = replacements()
    changed = 0
    for cmake_file in (prefix / "share").glob("*/cmake/*.cmake"):
        text = cmake_file.read_text(encoding="utf-8", errors="surrogateescape")
        if BUILD_PREFIX not in text:
            continue
        new = text
        for old, replacement in rules:
            new = new.replace(old, replacement)
        if new != text:
            cmake_file.write_text(new, encoding="utf-8", errors="surrogateescape")
            changed += 1
    print(f"fix_ros_wheel_paths: rewrote {changed} CMake file(s) under {prefix / 'share'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
