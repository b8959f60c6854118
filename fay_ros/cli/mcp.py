"""`fay-ros mcp`: Fay's memory as an MCP server for external agents (Claude Code, Cursor, apps).

Seven memory tools (memory_remember, memory_search, memory_get_recent, memory_get_active_rules,
memory_get_reflections, memory_get_user_profile, memory_get_schema) and three reminder tools
(reminder_list, reminder_add, reminder_cancel; `when` read in the schedule file's time zone)
over the running memory node's memory/* services, and knowledge_search over the dialogue node's
knowledge/search (the shared documents: a guest may search them); the tools and the server are
fay_ros.agent.mcp_memory, mcp_reminders and mcp_knowledge, the ROS clients
fay_ros.ros_side.mcp_memory_gateway, reminders and knowledge.

  fay-ros mcp --owner tom              stdio (an MCP client starts this command); owner bound here
  fay-ros mcp --http --port 8765       streamable HTTP at http://127.0.0.1:8765/mcp; each request
                                       carries `Authorization: Bearer <token>` from the access file,
                                       and the token's user_id is the owner
  fay-ros mcp --add-client tom         add a token for tom to the access file, print it once, exit

The access file (~/.config/fay_ros/mcp_access.yaml, mode 0600) has the web door's format
(fay_ros.web.access): clients with token, user_id ('' = guest), label; `origins` are extra
browser origins allowed to connect. It is a separate file from the web door's: a face token
opens no memory. `role: admin` has no meaning here and is refused.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from ..common.exit_codes import EXIT_CONFIG_ERROR
from ..common.paths import user_config_dir
from ..common.urls import is_loopback_host
from .token_clients import add_token_client

ACCESS_FILE_NAME = "mcp_access.yaml"
DEFAULT_PORT = 8765  # Fay's faymcp port
DISCOVERY_WAIT = 15.0  # seconds to wait at start for the memory node's services


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "mcp",
        help="serve Fay's memory tools over MCP (stdio, or streamable HTTP with tokens)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--owner",
        default=None,
        help="stdio: the memory owner every call is bound to (default 'user'; '' = guest, no private "
        "memory). Over HTTP the token decides.",
    )
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (loopback unless --allow-remote)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT})")
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --host (tokens then cross the network in clear text: use a tunnel)",
    )
    p.add_argument(
        "--access-file",
        type=Path,
        default=None,
        help=f"HTTP tokens and their owners (default {user_config_dir() / ACCESS_FILE_NAME})",
    )
    p.add_argument(
        "--add-client",
        metavar="USER_ID",
        default=None,
        help="add a client (a new token) bound to USER_ID to the access file, print the token, exit",
    )
    p.add_argument(
        "--confirmed-writes",
        action="store_true",
        help="memory_remember asks for confirmed memories (the memory node's policy still checks "
        "them against the owner's recent words); default: candidates, since an MCP client is "
        "an agent, not the user speaking",
    )
    p.add_argument("--timeout", type=float, default=2.0, help="seconds to wait for a memory service")
    p.add_argument(
        "--schedule-file",
        default="",
        help="the schedule YAML whose timezone reminder_add reads 'when' in (the memory node's "
        "schedule_file; default: the shipped config/schedule.yaml)",
    )
    p.add_argument("--namespace", default="/fay", help="namespace of the memory node's services")
    p.set_defaults(func=run)


def _say(text: str) -> None:
    print(f"[fay-ros mcp] {text}", file=sys.stderr, flush=True)


def _load_access(path: Path) -> Any:
    """The access file, or None after saying why it is unusable."""
    from ..common.errors import Issue
    from ..web.access import AccessError, load

    try:
        access = load(path)
    except AccessError as exc:
        _say(str(exc))
        return None
    admins = [i for i, c in enumerate(access.clients) if c.role == "admin"]
    if admins:
        _say(
            str(
                AccessError(
                    path,
                    [
                        Issue(
                            0,
                            f"clients.{i}: role admin has no meaning for the MCP server; "
                            "remove the role (face is the default)",
                        )
                        for i in admins
                    ],
                )
            )
        )
        return None
    return access


def _wait_ready(reminders: Any, timeout: float) -> bool:
    """Block (a worker thread) until the memory/reminders service is discovered, or `timeout`."""
    import time

    deadline = time.monotonic() + timeout
    while not reminders.ready():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def run(args: argparse.Namespace) -> int:
    path = args.access_file or user_config_dir() / ACCESS_FILE_NAME
    if args.add_client is not None:
        return add_token_client(path, args.add_client, "fay-ros mcp", _say)
    if args.timeout <= 0:
        _say(f"--timeout {args.timeout}: expected seconds > 0")
        return EXIT_CONFIG_ERROR
    access = None
    if args.http:
        if args.owner is not None:
            _say("--owner is for stdio; over HTTP each token in the access file binds its owner")
            return EXIT_CONFIG_ERROR
        if not is_loopback_host(args.host) and not args.allow_remote:
            _say(
                f"--host {args.host} is not a loopback address: refused (memory is private; --allow-remote "
                "if you really mean it, behind TLS)"
            )
            return EXIT_CONFIG_ERROR
        if not 0 < args.port < 65536:
            _say(f"--port {args.port}: expected 1..65535")
            return EXIT_CONFIG_ERROR
        access = _load_access(path)
        if access is None:
            return EXIT_CONFIG_ERROR
    owner = "user" if args.owner is None else args.owner.strip()
    from ..common.errors import TableError
    from ..schedule.config import load_schedule, schedule_path, zone_name

    try:
        tz = zone_name(load_schedule(schedule_path(args.schedule_file)).timezone)
    except TableError as exc:
        _say(f"--schedule-file: {exc}")
        return EXIT_CONFIG_ERROR
    return asyncio.run(_serve(args, owner, access, path, tz))


async def _serve(args: argparse.Namespace, owner: str, access: Any, path: Path, tz: str) -> int:
    from .. import __version__
    from ..agent.mcp_knowledge import add_knowledge_tools
    from ..agent.mcp_memory import build_server, fixed_owner, http_app, memory_tools, token_owner
    from ..agent.mcp_reminders import add_reminder_tools
    from ..dialogue.tools import ReminderAccess
    from ..ros_side.knowledge import RosKnowledge
    from ..ros_side.mcp_memory_gateway import RosSide
    from ..ros_side.reminders import RosReminders

    # stdout is the stdio transport: every log goes to stderr (tool name and outcome, never
    # arguments, memories or tokens)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="[fay-ros mcp] %(name)s: %(message)s")
    logging.getLogger("fay_ros.agent").setLevel(logging.INFO)
    ros = RosSide(["--ros-args", "-r", f"__ns:={args.namespace}"], namespace=args.namespace)
    try:
        gateway = ros.gateway(asyncio.get_running_loop(), args.timeout)
        reminders = RosReminders(ros.node, args.timeout)
        # serve once the memory node is reachable (DDS discovery takes a moment, longer under
        # load); without it, serve anyway: each call then says memory is unavailable
        if not await asyncio.to_thread(gateway.wait_until_discovered, DISCOVERY_WAIT) or not await asyncio.to_thread(
            _wait_ready, reminders, DISCOVERY_WAIT
        ):
            _say(
                f"the memory services were not found within {DISCOVERY_WAIT:.0f}s (is the memory node running "
                f"in namespace {args.namespace}?); serving anyway"
            )
        tools = memory_tools(gateway, confirmed_writes=args.confirmed_writes)
        add_reminder_tools(tools, ReminderAccess(reminders, tz))
        add_knowledge_tools(tools, RosKnowledge(ros.node, args.timeout * 5).search)
        writes = "confirmed (policy-checked)" if args.confirmed_writes else "candidates"
        if not args.http:
            from mcp.server.stdio import stdio_server

            server = build_server(tools, fixed_owner(owner), timeout=args.timeout * 5, version=__version__)
            _say(
                f"stdio, owner {owner!r}"
                + (" (guest: no private memory)" if not owner else "")
                + f", writes as {writes}"
            )
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
            return 0
        import uvicorn

        server = build_server(tools, token_owner, timeout=args.timeout * 5, version=__version__)
        app = http_app(server, access, args.host, args.port)
        shown = f"[{args.host}]" if ":" in args.host else args.host
        _say(
            f"streamable HTTP at http://{shown}:{args.port}/mcp, {len(access.clients)} client(s) in {path}, "
            f"writes as {writes}"
        )
        config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", lifespan="on")
        web = uvicorn.Server(config)
        await web.serve()
        return 0 if web.started else 1
    finally:
        ros.close()
