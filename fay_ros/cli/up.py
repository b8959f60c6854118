"""`fay-ros up`: pip-only bring-up of the companion graph (one process per node)."""
from __future__ import annotations

import argparse
import os
import signal

from ..bringup.graph import companion_nodes, namespace
from ..bringup.supervisor import Supervisor


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("up", help="start the companion node graph, restart crashed nodes, Ctrl-C stops all")
    p.add_argument("--namespace", default=None, help="ROS namespace of the graph (default /fay)")
    p.add_argument("--no-demo", action="store_true", help="do not start the scripted demo talker")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    options = {"namespace": args.namespace, "demo": not args.no_demo}
    env = dict(os.environ)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    supervisor = Supervisor(companion_nodes(options), namespace(options), env=env)
    signal.signal(signal.SIGTERM, lambda *_: supervisor.request_stop())
    print(f"[fay-ros up] namespace {namespace(options)}, ROS_DOMAIN_ID={env.get('ROS_DOMAIN_ID', '0')}; Ctrl-C stops")
    return supervisor.run()
