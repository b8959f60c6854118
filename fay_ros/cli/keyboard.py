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
from collections.abc import Iterable

from ..common import topics

EXIT_NO_LISTENER = 1


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "type",
        help="type lines to the running companion (published on text_input)",
        description="Publish typed lines on text_input, as the user's words, for a companion started by "
        "`ros2 launch` or `fay-ros up` in another terminal.",
    )
    p.add_argument("text", nargs="*", help="one line to say and exit (default: read lines from stdin)")
    p.add_argument("--user", default="user", help="user_id of the typed lines: whose memory (default: user)")
    p.add_argument("--language", default="", help="language hint, e.g. en or zh (default: detected)")
    p.add_argument("--namespace", default=topics.DEFAULT_NAMESPACE, help="namespace of the companion (default: /fay)")
    p.add_argument(
        "--wait",
        type=float,
        default=10.0,
        help="seconds to wait for the dialogue to subscribe before the first line (default: 10)",
    )
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
    from ..ros_side.typed_input import publish_lines

    unheard = publish_lines(
        _lines(args), user_id=args.user, language=args.language, namespace=args.namespace, wait=args.wait
    )
    if unheard:
        print(
            f"fay-ros type: nobody subscribes to {unheard} (is the companion running in namespace "
            f"{args.namespace} and ROS_DOMAIN_ID {os.environ.get('ROS_DOMAIN_ID', '0')}?)",
            file=sys.stderr,
        )
        return EXIT_NO_LISTENER
    return 0
