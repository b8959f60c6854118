"""`fay-ros chat "TEXT"`: one dialogue turn in the terminal, the reply printed as it streams.

For trying a persona, a qa table or an endpoint without ROS. Without --base-url it uses the
embedded offline model: the running `fay-ros llm` if there is one, else it starts one in
this process for the turn.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import sys
from urllib.parse import urlparse

from ..common.paths import config_file
from ..dialogue.local_llm import EMBEDDED_BASE_URL, EMBEDDED_MODEL



def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("chat", help="one dialogue turn: print the streamed reply (try a persona or endpoint)")
    p.add_argument("text", help="what the user says")
    p.add_argument("--base-url", default="", help=f"OpenAI-compatible endpoint (default: embedded, {EMBEDDED_BASE_URL})")
    p.add_argument("--model", default="", help=f"model name (default {EMBEDDED_MODEL} for the embedded endpoint)")
    p.add_argument("--api-key-env", default="", help="NAME of the environment variable that holds the API key")
    p.add_argument("--big-model", default="", help="big model for the tool loop (dual-model mode)")
    p.add_argument("--persona", default=str(config_file("persona.yaml")), help="persona YAML")
    p.add_argument("--qa", default=str(config_file("qa.csv")), help="qa.csv ('none' = no table)")
    p.add_argument("--user", default="user", help="user id of the session")
    p.add_argument("--language", default="", help="language of TEXT (en, zh; default: guessed)")
    p.add_argument("--no-judge", action="store_true", help="skip the chat judge: answer directly")
    p.add_argument("--judge-format", default="json_schema", choices=["none", "json_object", "json_schema"])
    p.add_argument("--max-tokens", type=int, default=150, help="most tokens per LLM answer (as the node)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the first token")
    p.add_argument("--verbose", action="store_true", help="show the engine's log (path, tool calls)")
    p.set_defaults(func=run)


def _reachable(base_url: str) -> bool:
    url = urlparse(base_url)
    try:
        with socket.create_connection((url.hostname or "127.0.0.1", url.port or 80), timeout=0.5):
            return True
    except OSError:
        return False


def run(args: argparse.Namespace) -> int:
    from ..dialogue.engine import DialogueEngine, EngineSettings, ReplyPiece
    from ..dialogue.llm import ChatClient, Endpoint
    from ..dialogue.local_llm import LocalLlmError, LocalLlmServer
    from ..dialogue.persona import Persona, PersonaError
    from ..dialogue.qa import QaTable, QaTableError
    from ..dialogue.tools import builtin_tools

    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR, format="[%(levelname)s] %(message)s",
                        stream=sys.stderr)
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    key = ""
    if args.api_key_env:
        key = os.environ.get(args.api_key_env, "")
        if not key:
            print(f"fay-ros chat: environment variable {args.api_key_env} is not set", file=sys.stderr)
            return 2
    try:
        persona = Persona.load(args.persona)
        qa = None if args.qa.lower() == "none" else QaTable.load(args.qa)
    except (PersonaError, QaTableError) as exc:
        print(f"fay-ros chat: {exc}", file=sys.stderr)
        return 2
    local = None
    base_url, model = args.base_url, args.model
    if not base_url:
        base_url, model = EMBEDDED_BASE_URL, model or EMBEDDED_MODEL
        if not _reachable(base_url):
            try:
                local = LocalLlmServer(port=0)
            except LocalLlmError as exc:
                print(f"fay-ros chat: {exc}", file=sys.stderr)
                return 2
            base_url = local.base_url
    endpoint = Endpoint(base_url, model or "default", key, first_token_timeout=args.timeout)
    settings = EngineSettings(judge=not args.no_judge, judge_format=args.judge_format, max_tokens=args.max_tokens,
                              frequency_penalty=0.3, qa_script_tools=("current_time",))
    first = True

    def emit(piece: ReplyPiece) -> None:
        nonlocal first
        if piece.text:
            tag = f"[{piece.source}] " if args.verbose else ""
            print(("" if first else "\n") + tag + piece.text, end="", flush=True)
            first = False
        if piece.is_end:
            print(flush=True)

    async def turn() -> int:
        big = ChatClient(Endpoint(base_url, args.big_model, key, first_token_timeout=args.timeout)) \
            if args.big_model else None
        small = ChatClient(endpoint)
        engine = DialogueEngine(persona, small, emit, big=big, qa=qa, tools=builtin_tools(), settings=settings)
        trace = await engine.run_turn(args.user, args.text, args.language)
        await small.close()
        if big:
            await big.close()
        if trace.error:
            print(f"fay-ros chat: the LLM failed ({trace.error})", file=sys.stderr)
            return 1
        return 0

    try:
        return asyncio.run(turn())
    finally:
        if local is not None:
            local.close()
