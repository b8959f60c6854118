"""`fay-ros type`: talk to a running companion by typing, from any terminal.

    fay-ros type                       one line per Enter, until Ctrl-D (or Ctrl-C)
    fay-ros type "what time is it?"    say one line and exit
    fay-ros type --user anna           type as the memory owner anna (default: user)

Each line is published on `text_input` (fay_msgs/Transcript, is_final, frame_id "keyboard"), as
the timeline does under `fay-ros up`. A launch owns its own stdin, so under `ros2 launch` this
is the way to type. The first line waits (up to --wait seconds) until the dialogue's
subscription is discovered, so it is not lost to DDS discovery.

Exit status: 0 fine, 1 nobody subscribed to text_input within --wait seconds.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Iterable

from ..common import qos, topics

EXIT_NO_LISTENER = 1


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "type", help="type lines to the running companion (published on text_input)",
        description="Publish typed lines on text_input, as the user's words, for a companion started by "
                    "`ros2 launch` or `fay-ros up` in another terminal.")
    p.add_argument("text", nargs="*", help="one line to say and exit (default: read lines from stdin)")
    p.add_argument("--user", default="user", help="user_id of the typed lines: whose memory (default: user)")
    p.add_argument("--language", default="", help="language hint, e.g. en or zh (default: detected)")
    p.add_argument("--namespace", default=topics.DEFAULT_NAMESPACE, help="namespace of the companion (default: /fay)")
    p.add_argument("--wait", type=float, default=10.0,
                   help="seconds to wait for the dialogue to subscribe before the first line (default: 10)")
    p.set_defaults(func=run)


def _lines(args: argparse.Namespace) -> Iterable[str]:
    if args.text:
        yield " ".join(args.text)
        return
    interactive = sys.stdin.isatty()
    if interactive:
        print("type a sentence and press Enter; Ctrl-D ends", flush=True)
    while True:
        if interactive:
            print("you> ", end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            return
        yield line


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    import rclpy
    from rclpy.duration import Duration

    from fay_msgs.msg import Transcript

    rclpy.init(args=[])
    node = rclpy.create_node("fay_ros_type", namespace=args.namespace)
    try:
        publisher = node.create_publisher(Transcript, topics.TEXT_INPUT, qos.EVENTS)
        waited = False
        for line in _lines(args):
            text = line.strip()
            if not text:
                continue
            if not waited:
                waited = True
                if not _wait_for_listener(node, publisher, args.wait):
                    print(f"fay-ros type: nobody subscribes to {publisher.topic_name} (is the companion running "
                          f"in namespace {args.namespace} and ROS_DOMAIN_ID {os.environ.get('ROS_DOMAIN_ID', '0')}?)",
                          file=sys.stderr)
                    return EXIT_NO_LISTENER
            msg = Transcript(text=text, is_final=True, user_id=args.user, language=args.language)
            msg.header.stamp = node.get_clock().now().to_msg()
            msg.header.frame_id = "keyboard"
            publisher.publish(msg)
        # A reliable publisher keeps the last lines for late acknowledgements; give them a moment
        # to be delivered before the process (and its DDS writer) goes away.
        publisher.wait_for_all_acked(Duration(seconds=2.0))
        return 0
    finally:
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


def _wait_for_listener(node, publisher, timeout: float) -> bool:
    import rclpy
    deadline = time.monotonic() + timeout
    while publisher.get_subscription_count() == 0:
        if time.monotonic() >= deadline:
            return False
        rclpy.spin_once(node, timeout_sec=0.05)
    return True
