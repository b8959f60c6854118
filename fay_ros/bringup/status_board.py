"""What `fay-ros status` knows of each node: ready or not, and its `state` health (pure core).

Fed from ROS by fay_ros.ros_side.status_probe: each node's latched `~/ready` and its
`fay/<node>: state` status on /diagnostics (fay_ros.common.readiness, .diagnostics). A node
never heard from is "not running (yet)".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

LEVEL_NAMES = {0: "OK", 1: "WARN", 2: "ERROR", 3: "STALE"}
OK_LEVEL = 0


@dataclass
class NodeStatus:
    ready: bool | None = None  # None: no readiness heard
    level: int | None = None
    message: str = ""

    def describe(self) -> str:
        if self.ready is None and self.level is None:
            return "not running (yet)"
        if self.ready:
            return "ready"
        return self.message or "not ready"


class StatusBoard:
    def __init__(self, expected: Iterable[str], optional: Iterable[str] = ()) -> None:
        """`optional`: nodes that are watched too but join the board only once their `~/ready`
        is heard (the embedded model's `llm` runs only when the dialogue uses it)."""
        self.nodes: dict[str, NodeStatus] = {name: NodeStatus() for name in expected}
        self.optional = tuple(name for name in optional if name not in self.nodes)

    @property
    def watched(self) -> list[str]:
        return [*self.nodes, *(name for name in self.optional if name not in self.nodes)]

    def on_ready(self, node: str, ready: bool) -> None:
        self.nodes.setdefault(node, NodeStatus()).ready = ready

    def on_state(self, node: str, level: int, message: str) -> None:
        if node not in self.nodes and node in self.optional:
            # an optional node joins the board by its ~/ready (see __init__), not by its health
            return
        status = self.nodes.setdefault(node, NodeStatus())
        status.level, status.message = level, message

    def all_ready(self) -> bool:
        return bool(self.nodes) and all(s.ready for s in self.nodes.values())

    def health_agrees(self) -> bool:
        """Every ready node's state health says so too (OK), or none was heard yet. Readiness
        and health come on two topics, so a node's health can still say "configuring" (WARN)
        for up to a second after its `~/ready` said ready."""
        return all(s.level in (None, OK_LEVEL) for s in self.nodes.values() if s.ready)

    def not_ready(self) -> dict[str, str]:
        return {name: s.describe() for name, s in self.nodes.items() if not s.ready}

    def table(self) -> str:
        width = max((len(n) for n in self.nodes), default=4)
        rows = []
        for name, status in sorted(self.nodes.items()):
            level = LEVEL_NAMES.get(status.level, "?") if status.level is not None else "OK" if status.ready else "-"
            rows.append(f"{name:<{width}}  {level:<5}  {status.describe()}")
        return "\n".join(rows)
