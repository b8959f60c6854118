"""`fay-ros openai`: the companion as an OpenAI-compatible chat endpoint (Fay's /v1 on :5000).

Any OpenAI client talks to the companion's mind (persona, memory, tools) over HTTP:

  POST /v1/chat/completions  the last user message is one turn of the dialogue's `chat` action
                             for the token's user; stream true: SSE chunks, one per sentence
  GET  /v1/models            one model, the companion ("fay")
  GET  /health               the process, the dialogue's chat action, the memory services, the model

  fay-ros openai                          serve http://127.0.0.1:5000/v1
  fay-ros openai --add-client tom         add a token for tom to the access file, print it once, exit

Each request carries `Authorization: Bearer <token>` (the OpenAI client's api_key) from the
access file, which has the web door's format (fay_ros.web.access; by default the web door's
own file: a face token talks as its user here too). The token's user_id is whose turn it is:
a `user` field in the request changes nothing. The dialogue keeps its own history per user:
earlier messages in a request are not replayed. The dialogue node (and the memory node) must
be running, e.g. under `fay-ros up`; without the dialogue a request answers 503.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from .. import __version__
from ..common.exit_codes import EXIT_CONFIG_ERROR
from ..common.urls import is_loopback_host
from .token_clients import add_token_client

DEFAULT_PORT = 5000  # Fay's /v1/chat/completions port
DISCOVERY_WAIT = 15.0  # seconds to wait at start for the dialogue's chat action server


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "openai",
        help="serve the companion as an OpenAI-compatible chat endpoint (/v1/chat/completions)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (loopback unless --allow-remote)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --host (tokens and words then cross the network in clear text: use a tunnel)",
    )
    p.add_argument(
        "--access-file",
        type=Path,
        default=None,
        help="tokens and their users (default: the web door's access file, as `fay-ros web` uses)",
    )
    p.add_argument(
        "--add-client",
        metavar="USER_ID",
        default=None,
        help="add a client (a new token) bound to USER_ID to the access file, print the token, exit",
    )
    p.add_argument(
        "--wait",
        type=float,
        default=DISCOVERY_WAIT,
        help=f"seconds to wait at start for the dialogue's chat action before serving (default {DISCOVERY_WAIT:.0f})",
    )
    p.add_argument("--namespace", default="/fay", help="namespace of the dialogue and memory nodes")
    p.set_defaults(func=run)


def _say(text: str) -> None:
    print(f"[fay-ros openai] {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from ..web.access import AccessError, default_path, load

    path = args.access_file or default_path()
    if args.add_client is not None:
        return add_token_client(path, args.add_client, "fay-ros openai", _say)
    if not is_loopback_host(args.host) and not args.allow_remote:
        _say(
            f"--host {args.host} is not a loopback address: refused (the companion's memory is private; "
            "--allow-remote if you really mean it, behind TLS)"
        )
        return EXIT_CONFIG_ERROR
    if not 0 < args.port < 65536:
        _say(f"--port {args.port}: expected 1..65535")
        return EXIT_CONFIG_ERROR
    try:
        access = load(path)
    except AccessError as exc:
        _say(f"{exc} (`fay-ros openai --add-client USER_ID` creates it)")
        return EXIT_CONFIG_ERROR
    return asyncio.run(_serve(args, access))


async def _serve(args: argparse.Namespace, access: Any) -> int:
    import uvicorn

    from ..ros_side.openai_chat import RosCompanion
    from ..web.openai_api import build_app

    # the log names whose turn and how it ended, never the words, a token or a header
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="[fay-ros openai] %(name)s: %(message)s")
    logging.getLogger("fay_ros.web.openai_api").setLevel(logging.INFO)
    companion = RosCompanion(["--ros-args", "-r", f"__ns:={args.namespace}"], namespace=args.namespace)
    try:
        if not await asyncio.to_thread(companion.wait_for_dialogue, max(args.wait, 0.0)):
            _say(
                f"the dialogue's chat action was not found within {args.wait:.0f}s (is the dialogue node "
                f"running in namespace {args.namespace}?); serving anyway: requests answer 503 until it is"
            )
        app = build_app(companion, access.lookup, version=__version__)
        shown = f"[{args.host}]" if ":" in args.host else args.host
        _say(f"serving http://{shown}:{args.port}/v1 (model 'fay'), {len(access.clients)} client(s) in {access.path}")
        config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", access_log=False)
        server = uvicorn.Server(config)
        await server.serve()
        return 0 if server.started else 1
    finally:
        companion.close()
