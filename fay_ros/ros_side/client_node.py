"""A process's own ROS client node spun on a thread: what `fay-ros mcp` and `fay-ros openai`
(servers that live outside the graph's nodes and call into it) both need."""

from __future__ import annotations

import os
import sys
import threading

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node

from ..common import topics
from ..common.node_main import spin


class ClientNode:
    """rclpy, a node named `<prefix>_<pid>` (two servers stay apart in the graph) and its
    executor thread; `close()` ends all three."""

    def __init__(self, prefix: str, ros_args: list[str], namespace: str = topics.DEFAULT_NAMESPACE) -> None:
        rclpy.init(args=[sys.argv[0], *ros_args])
        self.namespace = namespace
        self.node = Node(f"{prefix}_{os.getpid()}", namespace=namespace)
        self._executor = MultiThreadedExecutor(num_threads=2)
        self._executor.add_node(self.node)
        self._closing = False
        self._thread = threading.Thread(target=self._spin, name=f"{prefix}-ros", daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            spin(self._executor, lambda: not self._closing)
        except (KeyboardInterrupt, ExternalShutdownException):
            pass

    def close(self) -> None:
        self._closing = True
        self._executor.shutdown(timeout_sec=2)
        self.destroy_clients()  # with the executor stopped, before the node goes
        self.node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
        self._thread.join(2)

    def destroy_clients(self) -> None:
        """What a subclass made on the node that needs its own destroy (action clients)."""
