"""The end of a test process's main: say ready on `~/ready` (as every fay_ros node does), then
spin until shut down (Ctrl-C or the harness stopping it)."""

import rclpy
from rclpy.executors import ExternalShutdownException

from fay_ros.common.readiness import announce_ready


def serve(node) -> None:
    announce_ready(node)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
