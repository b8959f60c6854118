"""`fay-ros web`: serve the web face and start the rosbridge endpoint it talks to.

Loopback only unless told otherwise (--host). The endpoint exposes only an allow-list of
topics and services (fay_ros.web.allowlist); the face's mapping table is validated before
anything starts, and a bad table, name or Live2D folder stops the command with exit code 2
and the reason.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ..common import topics

EXIT_CONFIG_ERROR = 2
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PAGE_PORT = 8080
DEFAULT_BRIDGE_PORT = 9090
BRIDGE_START_TIMEOUT = 30.0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "web", help="serve the web face (http) and a rosbridge endpoint with a topic/service allow-list",
        description="Serve web/ on http://HOST:PORT and a rosbridge v2 websocket on ws://HOST:BRIDGE_PORT "
                    "that exposes only the allow-listed topics and services.")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help="address to bind the page and the bridge to (default 127.0.0.1; 0.0.0.0 exposes them "
                        "to the network)")
    p.add_argument("--port", type=int, default=DEFAULT_PAGE_PORT, help="http port of the page (default 8080)")
    p.add_argument("--bridge-port", type=int, default=DEFAULT_BRIDGE_PORT,
                   help="rosbridge websocket port (default 9090)")
    p.add_argument("--bridge", choices=("auto", "rs", "apt", "none"), default="auto",
                   help="rosbridge server: apt rosbridge_server when installed, else rosbridge-server-rs (auto); "
                        "none = page only, for a rosbridge started elsewhere")
    p.add_argument("--no-page", action="store_true", help="start only the rosbridge endpoint")
    p.add_argument("--namespace", default=topics.DEFAULT_NAMESPACE, help="namespace of the companion graph")
    p.add_argument("--allow-subscribe", action="append", default=[], metavar="TOPIC",
                   help="also let clients subscribe TOPIC (name or glob; relative names are under --namespace)")
    p.add_argument("--allow-publish", action="append", default=[], metavar="TOPIC",
                   help="also let clients publish on TOPIC")
    p.add_argument("--allow-service", action="append", default=[], metavar="SERVICE",
                   help="let clients call SERVICE (none by default; memory services are private data)")
    p.add_argument("--face-map", type=Path, default=None, help="the face's mapping table (default web/face_map.json)")
    p.add_argument("--live2d", type=Path, default=None, metavar="DIR",
                   help="drive your own Live2D model: DIR holds Cubism Core, the renderer and the model "
                        "(see web/README.md)")
    p.add_argument("--live2d-model", default=None, metavar="PATH",
                   help="the .model3.json inside DIR (default: the only one found)")
    p.add_argument("--user-id", default="user",
                   help="user_id written on messages typed in the page (default 'user', the one-person default)")
    p.set_defaults(func=run)


def _probe_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "") else ("::1" if host == "::" else host)


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((_probe_host(host), port), timeout=0.5):
            return True
    except OSError:
        return False


def _bridge_listening(host: str, port: int) -> bool:
    """True once the bridge completes a websocket handshake (a bare TCP probe makes it log a
    protocol error for every poll)."""
    try:
        from websockets.sync.client import connect
    except ImportError:
        return _port_open(host, port)
    address = _probe_host(host)
    address = f"[{address}]" if ":" in address else address
    try:
        with connect(f"ws://{address}:{port}", open_timeout=1.0, close_timeout=0.5):
            return True
    except Exception:  # noqa: BLE001 - refused, reset, or not yet a websocket: not listening yet
        return False


def _config_error(message: str) -> int:
    print(f"[fay-ros web] cannot start: {message}", file=sys.stderr, flush=True)
    return EXIT_CONFIG_ERROR


def run(args: argparse.Namespace) -> int:
    from ..web.allowlist import AllowList, AllowListError
    from ..web.bridge import BridgeUnavailable, choose
    from ..web.face_map import FaceMapError, load_face_map
    from ..web.page_server import FaceServer, Live2DError, find_live2d, web_root

    for name, port in (("--port", args.port), ("--bridge-port", args.bridge_port)):
        if not 0 < port < 65536:
            return _config_error(f"{name} {port} is not a TCP port")
    namespace = "/" + args.namespace.strip("/") if args.namespace.strip("/") else "/"
    try:
        allow = AllowList.build(namespace, extra_subscribe=tuple(args.allow_subscribe),
                                extra_publish=tuple(args.allow_publish), extra_services=tuple(args.allow_service))
    except AllowListError as exc:
        return _config_error(str(exc))
    try:
        root = web_root()
        table = load_face_map(args.face_map or root / "face_map.json")
        live2d = find_live2d(args.live2d, args.live2d_model) if args.live2d else None
    except (FaceMapError, Live2DError, FileNotFoundError) as exc:
        return _config_error(str(exc))

    for pattern in allow.memory_services(namespace):
        print(f"[fay-ros web] WARNING: {pattern} opens memory services to every client of the endpoint",
              file=sys.stderr, flush=True)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"[fay-ros web] WARNING: bound to {args.host}: anyone who can reach it can watch the cues and type "
              f"as user '{args.user_id}'", file=sys.stderr, flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    workdir = Path(tempfile.mkdtemp(prefix="fay_web_"))
    bridge: subprocess.Popen | None = None
    server: FaceServer | None = None
    try:
        if args.bridge != "none":
            if _port_open(args.host, args.bridge_port):
                print(f"[fay-ros web] port {args.bridge_port} is already in use (another rosbridge?); "
                      "stop it or pass --bridge-port / --bridge none", file=sys.stderr, flush=True)
                return 1
            try:
                command = choose(args.bridge, allow, address=args.host, port=args.bridge_port, namespace=namespace,
                                 workdir=workdir)
            except BridgeUnavailable as exc:
                return _config_error(str(exc))
            command.write_config()
            bridge = subprocess.Popen(command.argv, env=command.env, start_new_session=True)
            deadline = time.monotonic() + BRIDGE_START_TIMEOUT
            while not _bridge_listening(args.host, args.bridge_port):
                if bridge.poll() is not None:
                    print(f"[fay-ros web] the rosbridge server exited with code {bridge.returncode} at start-up",
                          file=sys.stderr, flush=True)
                    return 1
                if time.monotonic() > deadline or stop.wait(0.05):
                    if not stop.is_set():
                        print(f"[fay-ros web] the rosbridge server did not listen on {args.bridge_port} within "
                              f"{BRIDGE_START_TIMEOUT:.0f}s", file=sys.stderr, flush=True)
                    return 1
            kind = {"rs": "rosbridge-server-rs", "apt": "rosbridge_server"}[command.kind]
            print(f"[fay-ros web] rosbridge ({kind}): ws://{args.host}:{args.bridge_port}\n  {allow.describe()}",
                  flush=True)
        if not args.no_page:
            page_config = {
                "rosbridge_port": args.bridge_port,
                "namespace": namespace,
                "user_id": args.user_id,
                "face_map": table,
                "live2d": ({"scripts": [f"/live2d/{name}" for name in ("live2dcubismcore.min.js", "pixi.min.js",
                                                                      "cubism4.min.js")],
                            "model": f"/live2d/{live2d.model}"} if live2d else None),
            }
            try:
                server = FaceServer(args.host, args.port, page_config, root, live2d).start()
            except OSError as exc:
                print(f"[fay-ros web] cannot serve the page on {args.host}:{args.port}: {exc.strerror or exc}",
                      file=sys.stderr, flush=True)
                return 1
            print(f"[fay-ros web] face: http://{args.host}:{server.port}/"
                  + (" (Live2D: " + str(live2d.folder / live2d.model) + ")" if live2d else " (SVG face)"), flush=True)
        print("[fay-ros web] ready; Ctrl-C stops", flush=True)
        while not stop.wait(0.2):
            if bridge is not None and bridge.poll() is not None:
                print(f"[fay-ros web] the rosbridge server exited with code {bridge.returncode}",
                      file=sys.stderr, flush=True)
                return 1
        return 0
    finally:
        if server is not None:
            server.stop()
        if bridge is not None and bridge.poll() is None:
            _stop_process(bridge)
        for child in workdir.iterdir():
            child.unlink()
        workdir.rmdir()


def _stop_process(process: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGINT, 5.0), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue
