"""Node health on /diagnostics (diagnostic_msgs/DiagnosticArray, the ROS-wide convention, seen
in rqt_robot_monitor), for what an operator must see without reading a log: a table edit taken
or rejected, a background LLM job skipped because the LLM is unreachable.

One status per event, named `fay/<node>: <subject>` (e.g. `fay/servo_mapper: table`), with
the level (OK / WARN / ERROR), the same message the node logs, and key/values (the file, the
job). /diagnostics is global: a status never carries what was said, nor whose memory it is.
"""
from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node

from . import topics

# The logger's level names, as the nodes use them, to diagnostic levels.
LEVELS = {"info": DiagnosticStatus.OK, "warning": DiagnosticStatus.WARN, "error": DiagnosticStatus.ERROR}


def status_name(node_name: str, subject: str) -> str:
    return f"fay/{node_name}: {subject}"


class StatusPublisher:
    """Publishes the statuses of one subject of one node."""

    def __init__(self, node: Node, subject: str) -> None:
        self.name = status_name(node.get_name(), subject)
        self._clock = node.get_clock()
        self._publisher = node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)

    def publish(self, level: str, message: str, **values: str) -> None:
        """`level`: "info", "warning" or "error"."""
        status = DiagnosticStatus(level=LEVELS[level], name=self.name, hardware_id="fay_ros", message=message,
                                  values=[KeyValue(key=k, value=str(v)) for k, v in values.items()])
        array = DiagnosticArray(status=[status])
        array.header.stamp = self._clock.now().to_msg()
        self._publisher.publish(array)
