"""fay_ros: ament_python package at the repository root.

Node executables are console_scripts; `fay-ros` is the user-facing command-line tool.
Where they and the data_files land depends on the route:

- colcon (`colcon build`, apt ROS 2): setup.cfg puts the console scripts in
  install/fay_ros/lib/fay_ros and data_files installs the ament index marker and
  share/fay_ros (package.xml, LICENSE, launch, config, web), so `ros2 run fay_ros <node>`
  and `ros2 launch fay_ros companion.launch.py` find them.
- `make setup` (pip, editable): pip ignores setup.cfg's script directory (the console
  scripts go to .venv/bin) and setuptools' editable install skips data_files, so
  scripts/ament_prefix.py completes the venv as an ament prefix from the declarations
  below: the data files linked into the source tree and an executable per console script
  in .venv/lib/fay_ros. Keep both routes in mind when changing NODES or data_files.
"""

import os
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "fay_ros"

# One line per node: executable name -> module with a main(). Keep in sync with
# fay_ros/bringup/graph.py (a test checks that every node there has an entry point).
NODES = {
    "demo_talker": "fay_ros.nodes.demo_talker",
    "timeline": "fay_ros.nodes.timeline",
    "action_semantics": "fay_ros.nodes.action_semantics",
    "servo_mapper": "fay_ros.nodes.servo_mapper",
    "led_mapper": "fay_ros.nodes.led_mapper",
    "latency_monitor": "fay_ros.nodes.latency_monitor",
    "tts": "fay_ros.nodes.tts",
    "dialogue": "fay_ros.nodes.dialogue",
    "memory": "fay_ros.nodes.memory",
    "mic": "fay_ros.nodes.mic",
    "asr": "fay_ros.nodes.asr",
    "llm": "fay_ros.nodes.llm_server",  # the embedded LLM server as a lifecycle node (`fay-ros llm`)
}


def tree(src: str, dst: str) -> list[tuple[str, list[str]]]:
    """data_files entries installing every file below `src` under share/<pkg>/<dst>."""
    entries = []
    for folder, _dirs, files in os.walk(src):
        if files:
            rel = os.path.relpath(folder, src)
            target = os.path.normpath(os.path.join("share", PACKAGE, dst, rel))
            entries.append((target, [os.path.join(folder, f) for f in sorted(files)]))
    return entries


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "bench", "bench.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml", "LICENSE"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.py")),
    ]
    + tree("config", "config")
    + tree("web", "web"),
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="fay_ros developers",
    maintainer_email="dev@fay-ros.invalid",
    description="Talking companion for ROS 2: hearing, dialogue, memory, voice with visemes, action semantics.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [f"{name} = {module}:main" for name, module in NODES.items()]
        + ["fay-ros = fay_ros.cli:main"],
    },
)
