"""Readiness: every node says on a latched topic when it serves, so nothing has to read its log.

Topic `~/ready` (resolved under the node's namespace and name, e.g. /fay/dialogue/ready),
std_msgs/msg/Bool, QoS `qos.LATCHED` (reliable, transient local, depth 1): `true` once the
node is ready (parameters valid, tables and models loaded, its topics and services created).
Transient local means a subscriber that joins later still gets it; the value lives in the
node's own publisher, so a node that has exited (however it ended) has no `true` left to give,
and a restarted node publishes `true` again. (`false` is free for a node that stops serving
while it is still running.)

`run_node` announces readiness right after the node's constructor returns. A node that
becomes ready later (e.g. a model loading in the background) sets the class attribute
`ANNOUNCES_READY_ITSELF = True` and calls `announce_ready(self)` at that moment.

The same moment sets the node's `state` task on /diagnostics (fay_ros.common.diagnostics):
OK "ready", or ERROR "not ready: <reason>". Lifecycle nodes (fay_ros.common.lifecycle) publish
both too: ready while active.
"""

from __future__ import annotations

from rclpy.node import Node
from std_msgs.msg import Bool

from . import qos
from .diagnostics import STATE_TASK, health

READY_TOPIC = "~/ready"
READY_QOS = qos.LATCHED
_ATTRIBUTE = "_fay_ready_publisher"


def ready_topic(node_name: str, namespace: str = "/fay") -> str:
    """The absolute readiness topic of a node, for those who watch it from outside."""
    return f"{namespace.rstrip('/')}/{node_name}/ready"


def announces_ready_itself(node: Node) -> bool:
    return bool(getattr(node, "ANNOUNCES_READY_ITSELF", False))


def announce_ready(node: Node, ready: bool = True, reason: str = "", level: str = "") -> None:
    """Publish the node's readiness (latched; the publisher is created on first use) and its
    `state` health: `reason` says why it is not ready; `level` defaults to ok when ready, else
    error."""
    publisher = getattr(node, _ATTRIBUTE, None)
    if publisher is None:
        publisher = node.create_publisher(Bool, READY_TOPIC, READY_QOS)
        setattr(node, _ATTRIBUTE, publisher)
    publisher.publish(Bool(data=ready))
    message = "ready" if ready else f"not ready: {reason or 'stopped'}"
    health(node).set(STATE_TASK, level or ("ok" if ready else "error"), message)
