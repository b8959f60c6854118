"""`fay-ros up`: pip-only bring-up of the companion graph (one process per node)."""

from __future__ import annotations

import argparse
import os
import signal

from ..bringup import graph
from ..bringup.supervisor import Supervisor
from ..common.errors import ConfigError
from ..common.urls import safe_url
from ..llm.local_servers import find_local_servers, summary_line


def register(subparsers: argparse._SubParsersAction) -> None:
    names = ", ".join(graph.LAUNCH_ARGUMENTS)
    p = subparsers.add_parser(
        "up",
        help="start the companion node graph, restart crashed nodes, Ctrl-C stops all",
        description="Start every node of the companion as its own process (the same node list and "
        "parameters as companion.launch.py). Options use the launch-argument syntax name:=value; "
        f"known names: {names}.",
    )
    p.add_argument(
        "options", nargs="*", metavar="NAME:=VALUE", help="launch arguments, e.g. audio_source:=question.wav"
    )
    p.set_defaults(func=run)


def parse_assignments(items: list[str]) -> dict[str, str]:
    result = {}
    for item in items:
        name, sep, value = item.partition(":=")
        if not sep or not name:
            raise SystemExit(f"fay-ros up: expected NAME:=VALUE, got {item!r}")
        result[name] = value
    return result


def run(args: argparse.Namespace) -> int:
    try:
        options = graph.parse_options(parse_assignments(args.options))
        nodes = graph.companion_nodes(options, terminal=True)
        processes = graph.companion_processes(options)
    except ConfigError as exc:  # options, node names, the parameter file
        print(f"fay-ros up: {exc}")
        return 2
    env = dict(os.environ)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    ns = graph.namespace(options)
    supervisor = Supervisor(nodes, ns, env=env, processes=processes)
    signal.signal(signal.SIGTERM, lambda *_: supervisor.request_stop())
    print(f"[fay-ros up] namespace {ns}, ROS_DOMAIN_ID={env.get('ROS_DOMAIN_ID', '0')}; Ctrl-C stops")
    print(f"[fay-ros up] {graph.resolve_audio_source(options['audio_source'])[1]}")
    llm = (
        safe_url(options["llm_base_url"])
        if options["llm_base_url"]
        else f"{graph.embedded_llm_url()} (embedded offline model)"
    )
    print(f"[fay-ros up] LLM: {llm}")
    if not options["llm_base_url"] and not options["llm"]:  # the embedded default: say what else is here
        print(f"[fay-ros up] {summary_line(find_local_servers())}", flush=True)
    return supervisor.run()
