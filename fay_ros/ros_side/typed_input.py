"""The ROS side of `fay-ros type` (fay_ros.cli.keyboard): a short-lived publisher of typed lines
on `text_input` (fay_msgs/Transcript, is_final, frame_id "keyboard")."""

from __future__ import annotations

import time
from collections.abc import Iterable

import rclpy
from rclpy.duration import Duration

from fay_msgs.msg import Transcript

from ..common import qos, topics


def publish_lines(lines: Iterable[str], *, user_id: str, language: str, namespace: str, wait: float) -> str | None:
    """Publish each non-blank line; before the first, wait up to `wait` seconds for a subscriber.
    Returns None, or the resolved topic name when nobody subscribed in time."""
    rclpy.init(args=[])
    node = rclpy.create_node("fay_ros_type", namespace=namespace)
    try:
        publisher = node.create_publisher(Transcript, topics.TEXT_INPUT, qos.EVENTS)
        waited = False
        for line in lines:
            text = line.strip()
            if not text:
                continue
            if not waited:
                waited = True
                if not _wait_for_listener(node, publisher, wait):
                    return publisher.topic_name
            msg = Transcript(text=text, is_final=True, user_id=user_id, language=language)
            msg.header.stamp = node.get_clock().now().to_msg()
            msg.header.frame_id = "keyboard"
            publisher.publish(msg)
        # The publisher is reliable: wait until the last lines are acknowledged before the
        # process (and its DDS writer) goes away.
        publisher.wait_for_all_acked(Duration(seconds=2.0))
        return None
    finally:
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


def _wait_for_listener(node, publisher, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while publisher.get_subscription_count() == 0:
        if time.monotonic() >= deadline:
            return False
        rclpy.spin_once(node, timeout_sec=0.05)
    return True
