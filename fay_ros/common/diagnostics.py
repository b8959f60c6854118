"""Node health on /diagnostics (diagnostic_msgs/DiagnosticArray), by diagnostic_updater's
conventions, so rqt_robot_monitor and any diagnostic aggregator show the companion's nodes.

diagnostic_updater itself is not on any package registry, so this is the small part of it the
nodes need, with the same conventions:

- one updater per node (`health(node)`), publishing every `period` seconds (1 s, its default)
  one DiagnosticArray with one status per task of the node, and at once when a task changes;
- a status is named `<namespace>/<node>: <task>` (e.g. `fay/tts: state`,
  `fay/servo_mapper: table` in the default namespace /fay),
  with a level (OK / WARN / ERROR / STALE), the message the node logs, the node's hardware id
  (`fay_ros` unless the node owns a device) and key/values;
- every node has the task `state` (ready, or not ready and why: fay_ros.common.readiness and
  fay_ros.common.lifecycle set it); others report what an operator must see without reading a
  log: a table edit taken or rejected, a background LLM job skipped, an MCP server's tools.

The periodic publication runs on the steady clock, so health keeps flowing under
use_sim_time before the first /clock message. /diagnostics carries health only (no per-turn
timings: fay_msgs/TurnLatency has its own topic) and never what was said, nor whose memory it is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType
from rclpy.node import Node

from . import topics

# The logger's level names, as the nodes use them, to diagnostic levels.
LEVELS = {
    "info": DiagnosticStatus.OK,
    "ok": DiagnosticStatus.OK,
    "warning": DiagnosticStatus.WARN,
    "error": DiagnosticStatus.ERROR,
    "stale": DiagnosticStatus.STALE,
}
STATE_TASK = "state"
DEFAULT_PERIOD = 1.0
_ATTRIBUTE = "_fay_health_updater"


def status_name(node_name: str, subject: str, namespace: str = topics.DEFAULT_NAMESPACE) -> str:
    """`<namespace>/<node>: <subject>` without the leading slash: `fay/tts: state` in the
    default namespace, `robot2/tts: state` in /robot2, so the companions of a fleet, each in
    its own namespace, stay apart on the one /diagnostics topic."""
    return f"{namespace.rstrip('/')}/{node_name}".lstrip("/") + f": {subject}"


def node_status_name(node: Node, subject: str) -> str:
    """The status name of one of `node`'s tasks."""
    return status_name(node.get_name(), subject, node.get_namespace())


def event_status(node: Node, subject: str, level: str, message: str, /, **values: object) -> DiagnosticStatus:
    """One event or decision a node reports on a topic of its own (task/progress, memory/jobs,
    dialogue/proactive, speech/decisions): named like its health (`<namespace>/<node>:
    <subject>`), `level` a LEVELS name, the values as strings (any key: the other arguments
    are positional only, so a value may be called `level` or `message`)."""
    return DiagnosticStatus(
        level=LEVELS[level],
        name=node_status_name(node, subject),
        hardware_id="fay_ros",
        message=message,
        values=[KeyValue(key=k, value=str(v)) for k, v in values.items()],
    )


@dataclass
class _Task:
    level: int
    message: str
    values: dict[str, str] = field(default_factory=dict)


class HealthUpdater:
    """The latest status of each task of one node, on /diagnostics (see the module docstring)."""

    def __init__(self, node: Node, period: float = DEFAULT_PERIOD, hardware_id: str = "fay_ros") -> None:
        self._node = node
        self.hardware_id = hardware_id
        self._lock = threading.Lock()
        self._tasks: dict[str, _Task] = {}
        self._checks: dict[str, Callable[[], tuple[str, str, dict[str, str]]]] = {}
        self._publisher = node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
        self._timer = node.create_timer(period, self.update, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def set(self, task: str, level: str, message: str, **values: object) -> None:
        """The task's new status (`level`: info/ok, warning, error, stale), published at once."""
        with self._lock:
            self._tasks[task] = _Task(LEVELS[level], message, {k: str(v) for k, v in values.items()})
        self.update(only=task)

    def add(self, task: str, check: Callable[[], tuple[str, str, dict[str, str]]]) -> None:
        """A task whose status `check()` -> (level, message, values) is read at each update."""
        with self._lock:
            self._checks[task] = check
        self.update(only=task)

    def status(self, task: str) -> DiagnosticStatus | None:
        with self._lock:
            entry = self._tasks.get(task)
        return None if entry is None else self._message(task, entry)

    def update(self, only: str | None = None) -> None:
        with self._lock:
            tasks = dict(self._tasks)
            checks = dict(self._checks)
        for task, check in checks.items():
            if only is not None and task != only:
                continue
            try:
                level, message, values = check()
                tasks[task] = _Task(LEVELS[level], message, {k: str(v) for k, v in values.items()})
            except Exception as exc:  # noqa: BLE001 - a failing check is itself the news
                tasks[task] = _Task(DiagnosticStatus.ERROR, f"health check failed: {type(exc).__name__}")
        statuses = [self._message(task, entry) for task, entry in tasks.items() if only is None or task == only]
        if not statuses or not self._node.context.ok():
            return
        array = DiagnosticArray(status=statuses)
        array.header.stamp = self._node.get_clock().now().to_msg()
        try:
            self._publisher.publish(array)
        except Exception:  # noqa: BLE001 - only a shutdown race is tolerated
            if self._node.context.ok():
                raise

    def _message(self, task: str, entry: _Task) -> DiagnosticStatus:
        return DiagnosticStatus(
            level=entry.level,
            name=node_status_name(self._node, task),
            hardware_id=self.hardware_id,
            message=entry.message,
            values=[KeyValue(key=k, value=v) for k, v in entry.values.items()],
        )


def health(node: Node) -> HealthUpdater:
    """The node's health updater, created on first use."""
    updater = getattr(node, _ATTRIBUTE, None)
    if updater is None:
        updater = HealthUpdater(node)
        setattr(node, _ATTRIBUTE, updater)
    return updater


class StatusPublisher:
    """One task of a node's health, set by events (a table reloaded or rejected, a job skipped)."""

    def __init__(self, node: Node, subject: str) -> None:
        self.name = node_status_name(node, subject)
        self._subject = subject
        self._health = health(node)

    def publish(self, level: str, message: str, **values: str) -> None:
        """`level`: "info", "warning" or "error"."""
        self._health.set(self._subject, level, message, **values)
