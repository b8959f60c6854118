"""The companion's node set: the one place both `fay-ros up` and companion.launch.py read.

Each NodeSpec names the executable (a console_scripts entry of setup.py), the Python module
behind it (so the pip-only bring-up can start it with `python -m`), and its parameters.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..common.topics import DEFAULT_NAMESPACE


@dataclass(frozen=True)
class NodeSpec:
    name: str
    module: str
    parameters: dict[str, Any] = field(default_factory=dict)
    respawn: bool = True

    @property
    def executable(self) -> str:
        return self.name


def companion_nodes(options: dict[str, Any] | None = None) -> list[NodeSpec]:
    """The node list for a bring-up; `options` are the launch arguments people change."""
    options = dict(options or {})
    demo = options.get("demo", True)
    nodes = [NodeSpec("timeline", "fay_ros.nodes.timeline")]
    if demo:
        nodes.append(NodeSpec("demo_talker", "fay_ros.nodes.demo_talker", {"period": 4.0}))
    return nodes


def namespace(options: dict[str, Any] | None = None) -> str:
    ns = str((options or {}).get("namespace") or DEFAULT_NAMESPACE)
    return ns if ns.startswith("/") else "/" + ns
