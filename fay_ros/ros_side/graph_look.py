"""A short look at the ROS graph (`fay-ros doctor`): the nodes discovery finds within a
second or two, from a private context that is shut down afterwards."""

from __future__ import annotations

import time

import rclpy
from rclpy.executors import SingleThreadedExecutor


def node_names(seconds: float = 1.5) -> list[tuple[str, str]]:
    """(namespace, name) of every node seen within `seconds` (this look's own node left out)."""
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node(
            "fay_doctor_look", context=context, start_parameter_services=False, enable_rosout=False
        )
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        deadline = time.monotonic() + seconds
        seen: set[tuple[str, str]] = set()
        while time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)  # discovery runs in the middleware meanwhile
            seen |= {(ns, name) for name, ns in node.get_node_names_and_namespaces()}
        executor.shutdown()
        node.destroy_node()
        return sorted(seen - {("/", "fay_doctor_look")})
    finally:
        rclpy.shutdown(context=context)
