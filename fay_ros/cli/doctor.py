"""`fay-ros doctor`: one line per thing the companion needs, each `ok` or `problem` with its fix.

    fay-ros doctor                       check this machine (a few seconds at most)
    fay-ros doctor --llm ollama:MODEL    ...and that endpoint (reachable, model present, latency)
    fay-ros doctor --json                the same for programs

Checks: audio devices, ROS/DDS settings, the ROS graph (a running companion's nodes), the
embedded LLM model and the whisper model, the LLM endpoint and its first-token latency, local
LLM servers found, the web door, the memory database, free disk. All run at once with short
timeouts. Exit status: 0 when no check found a problem, 1 when one did.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import threading
from pathlib import Path

from ..bringup import doctor, graph
from ..bringup.doctor import Check, ok, problem
from ..common.paths import default_memory_db
from ..common.topics import DEFAULT_NAMESPACE
from ..common.urls import safe_url
from ..llm.client import ApiKeyError, key_from_env
from ..llm.embedded import EMBEDDED_BASE_URL, EMBEDDED_MODEL, default_model_path
from ..llm.local_servers import LlmChoiceError, apply_llm_choice, find_local_servers, server_roots
from .web import DEFAULT_BRIDGE_PORT, DEFAULT_PAGE_PORT

DEADLINE = 8.0  # seconds for all checks together
HOW_TO_START = {
    "ollama": "start Ollama (`ollama serve`), or set OLLAMA_HOST to where it listens",
    "lmstudio": "start LM Studio's server (`lms server start`)",
    "llamacpp": "start llama.cpp's server (`llama-server -m MODEL.gguf --port 8080`)",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "doctor",
        help="check this machine for the companion: audio, ROS, models, LLM, web, database, disk",
        description="One line per check, ok or problem with the fix. Exit 0 when no problem, 1 when any.",
    )
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.add_argument("--llm", default="", help="check this endpoint: ollama:MODEL, lmstudio[:MODEL], llamacpp[:MODEL]")
    p.add_argument("--base-url", default="", help="check this OpenAI-compatible endpoint (default: the embedded one)")
    p.add_argument("--model", default="", help="model name at that endpoint")
    p.add_argument("--api-key-env", default="", help="NAME of the environment variable holding its API key")
    p.add_argument("--config", default="", help="bring-up parameter file (default: config/companion.yaml)")
    p.add_argument("--memory-db", default="", help="memory database (default: the memory node's db_path/db_url)")
    p.add_argument("--graph-seconds", type=float, default=1.5, help="how long to look at the ROS graph")
    p.set_defaults(func=run)


def check_whisper() -> Check:
    from ..hearing.models import (
        DEFAULT_WHISPER_NAME,
        DEFAULT_WHISPER_PARTS,
        ModelError,
        check_whisper_dir,
        default_whisper_dir,
    )

    name = "whisper model"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fay_ros" / "models"
    for where in (default_whisper_dir(), cache / DEFAULT_WHISPER_NAME):
        try:
            check_whisper_dir(where)
        except ModelError:
            continue
        return ok(name, f"{where}", path=str(where))
    if all(importlib.util.find_spec(part) for part in DEFAULT_WHISPER_PARTS):
        return ok(
            name, f"packaged ({', '.join(DEFAULT_WHISPER_PARTS)}); joined into {default_whisper_dir()} at first use"
        )
    return problem(
        name, "the default whisper model is not installed", "make setup (requirements/hashed-hearing-models.txt)"
    )


def check_ros_graph(seconds: float) -> Check:
    name = "ROS graph"
    try:
        from ..ros_side.graph_look import node_names
    except ImportError as exc:
        return problem(name, f"rclpy is not importable ({exc})", "source /opt/ros/jazzy/setup.bash, or `make setup`")
    nodes = node_names(seconds)
    ours = sorted(n for ns, n in nodes if ns == DEFAULT_NAMESPACE)
    data = {"nodes": [f"{ns.rstrip('/')}/{n}" for ns, n in nodes], "companion": ours}
    if ours:
        return ok(name, f"companion running: {len(ours)} node(s) in {DEFAULT_NAMESPACE} ({', '.join(ours)})", **data)
    return ok(name, f"rclpy ok; no companion running ({len(nodes)} other node(s) seen); make run starts it", **data)


def _llm_check(args: argparse.Namespace) -> Check:
    chosen = apply_llm_choice({"llm": args.llm, "llm_base_url": args.base_url, "llm_model": args.model})
    key = key_from_env(args.api_key_env)
    if chosen["llm_base_url"]:
        kind = args.llm.partition(":")[0].strip().lower()
        how = HOW_TO_START.get(kind, "start that server, or check the address")
        return doctor.check_llm(
            chosen["llm_base_url"], chosen["llm_model"], explicit=True, api_key=key, how_to_start=how, kind=kind
        )
    return doctor.check_llm(
        EMBEDDED_BASE_URL,
        EMBEDDED_MODEL,
        explicit=False,
        how_to_start="the embedded model starts with `make run` (or alone: `fay-ros llm`)",
    )


def _memory_location(args: argparse.Namespace) -> str:
    if args.memory_db:
        return args.memory_db
    params = graph.load_parameters(args.config or None).get("memory", {})
    return str(params.get("db_url") or params.get("db_path") or default_memory_db())


def _database_check(location: str) -> Check:
    if location.startswith(("postgresql://", "postgres://")):
        return doctor.check_postgres(location, safe_url(location))
    from ..memory.schema import MIGRATION_SET, migrations

    path = Path(location.removeprefix("sqlite:///")).expanduser()
    known = [m.name for m in migrations._migrations]  # noqa: SLF001 - sqlite-utils keeps the list there
    return doctor.check_sqlite_db(path, known, MIGRATION_SET)


def _local_servers_check() -> Check:
    return doctor.check_local_servers(find_local_servers(), server_roots())


def run(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    try:
        apply_llm_choice({"llm": args.llm, "llm_base_url": args.base_url, "llm_model": args.model})
        key_from_env(args.api_key_env)
        location = _memory_location(args)
    except (LlmChoiceError, ApiKeyError, OSError, ValueError) as exc:
        print(f"fay-ros doctor: {exc}", file=sys.stderr)
        return 2
    try:
        model_dir = default_model_path().parent
    except Exception:  # noqa: BLE001 - reported by the model check
        model_dir = Path(sys.prefix)
    db_dir = Path(location).expanduser().parent if "://" not in location else Path.home()
    checks = {
        "audio devices": doctor.check_audio,
        "ROS/DDS settings": lambda: doctor.check_dds(env),
        "ROS graph": lambda: check_ros_graph(args.graph_seconds),
        "embedded LLM model": lambda: doctor.check_embedded_model(default_model_path),
        "whisper model": check_whisper,
        "LLM": lambda: _llm_check(args),
        "local LLM servers": _local_servers_check,
        "web door": lambda: doctor.check_web("127.0.0.1", DEFAULT_PAGE_PORT, DEFAULT_BRIDGE_PORT),
        "memory database": lambda: _database_check(location),
        "disk": lambda: doctor.check_disk({"models": model_dir, "database": db_dir}),
    }
    results = doctor.run_checks(checks, DEADLINE)
    problems = [c for c in results if c.status == doctor.PROBLEM]
    if args.json:
        print(json.dumps({"ok": not problems, "checks": [c.as_dict() for c in results]}, indent=2, default=str))
    else:
        for check in results:
            print(check.line())
        print(f"{len(results)} checks, {len(problems)} problem(s)")
    code = 1 if problems else 0
    sys.stdout.flush()
    if any(t.name.startswith("doctor") and t.is_alive() for t in threading.enumerate()):
        os._exit(code)  # a check still hanging past the deadline: do not wait for it
    return code
