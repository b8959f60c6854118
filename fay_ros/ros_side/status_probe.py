"""The ROS side of `fay-ros status` (fay_ros.cli.status): watch the companion's nodes' latched
`~/ready` topics and their `state` health on /diagnostics."""

from __future__ import annotations

import time
from collections.abc import Callable

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import QoSProfile
from std_msgs.msg import Bool

from ..bringup.status_board import StatusBoard
from ..common import topics
from ..common.diagnostics import STATE_TASK, status_name
from ..common.readiness import READY_QOS, ready_topic


def watch(board: StatusBoard, namespace: str, *, until: Callable[[StatusBoard], bool], timeout: float) -> bool:
    """Spin until `until(board)` or `timeout` seconds; True when `until` was met."""
    rclpy.init(args=[])
    node = rclpy.create_node("fay_ros_status", namespace=namespace)
    try:

        def on_ready(name: str) -> Callable[[Bool], None]:
            return lambda msg: board.on_ready(name, bool(msg.data))

        for name in board.watched:
            node.create_subscription(Bool, ready_topic(name, namespace), on_ready(name), READY_QOS)
        states = {status_name(name, STATE_TASK, namespace): name for name in board.watched}

        def on_diagnostics(array: DiagnosticArray) -> None:
            for status in array.status:
                name = states.get(status.name)
                if name is not None:
                    level = status.level[0] if isinstance(status.level, bytes) else int(status.level)  # `byte`
                    board.on_state(name, level, status.message)

        node.create_subscription(DiagnosticArray, topics.DIAGNOSTICS, on_diagnostics, QoSProfile(depth=50))
        deadline = time.monotonic() + timeout
        while not until(board):
            if time.monotonic() >= deadline:
                return False
            rclpy.spin_once(node, timeout_sec=0.1)
        return True
    finally:
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
