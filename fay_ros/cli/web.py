"""`fay-ros web`: serve the web face and the authenticated websocket it talks to.

Loopback only unless told otherwise (--host). The websocket is the web door
(fay_ros.web.gate): a token from the access file (fay_ros.web.access) and the face's own
origin are required, the token binds the user id and role, and the rosbridge server behind
it listens on loopback only and exposes only an allow-list of topics and services
(fay_ros.web.allowlist). The face's mapping table and the access file are validated before
anything starts; a bad table, name, access file or Live2D folder stops the command with exit
code 2 and the reason.
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
from ..common.exit_codes import EXIT_CONFIG_ERROR

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PAGE_PORT = 8080
DEFAULT_BRIDGE_PORT = 9090
BRIDGE_START_TIMEOUT = 30.0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "web",
        help="serve the web face (http) and its authenticated websocket (rosbridge behind a token check)",
        description="Serve web/ on http://HOST:PORT and a rosbridge v2 websocket on ws://HOST:BRIDGE_PORT. "
        "Every websocket needs a token from the access file (created at the first start, mode 0600; "
        "its link is printed once) and a page from the face's own origin; the token decides who "
        "the client is and what it may do. The rosbridge server itself listens on loopback only.",
    )
    p.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help="address to bind the page and the websocket to (default 127.0.0.1; 0.0.0.0 exposes them to the network)",
    )
    p.add_argument("--port", type=int, default=DEFAULT_PAGE_PORT, help="http port of the page (default 8080)")
    p.add_argument(
        "--bridge-port", type=int, default=DEFAULT_BRIDGE_PORT, help="websocket port clients connect to (default 9090)"
    )
    p.add_argument(
        "--bridge",
        choices=("auto", "rs", "apt", "none"),
        default="auto",
        help="rosbridge server: apt rosbridge_server when installed, else rosbridge-server-rs (auto); "
        "none = page only, for a rosbridge started (and protected) elsewhere",
    )
    p.add_argument("--no-page", action="store_true", help="start only the websocket endpoint")
    p.add_argument("--namespace", default=topics.DEFAULT_NAMESPACE, help="namespace of the companion graph")
    p.add_argument(
        "--allow-subscribe",
        action="append",
        default=[],
        metavar="TOPIC",
        help="also let clients subscribe TOPIC (name or glob; relative names are under --namespace)",
    )
    p.add_argument(
        "--allow-publish", action="append", default=[], metavar="TOPIC", help="also let clients publish on TOPIC"
    )
    p.add_argument(
        "--allow-service",
        action="append",
        default=[],
        metavar="SERVICE",
        help="let admin clients call SERVICE (none by default; memory services are private data)",
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also accept websockets from pages of ORIGIN (scheme://host:port); the face's own "
        "origin is always accepted",
    )
    p.add_argument(
        "--access-file",
        type=Path,
        default=None,
        help="tokens, their users and roles (default ~/.config/fay_ros/web_access.yaml)",
    )
    p.add_argument(
        "--admin",
        "--enable-admin",
        dest="enable_admin",
        action="store_true",
        help="serve the admin page (/admin/) and accept admin-role tokens (off by default; see "
        "docs/SECURITY.md for what an admin client may do)",
    )
    p.add_argument(
        "--add-admin",
        metavar="USER_ID",
        default=None,
        help="add an admin client (a new token) labelled USER_ID to the access file, print its admin page link, exit",
    )
    admin_files = p.add_argument_group(
        "files the admin page edits (default: the shipped config/ files, which the "
        "nodes read when their *_file parameter is '')"
    )
    for option, what in (
        ("--rules-file", "action rules CSV (action_semantics rules_file)"),
        ("--lexicon-file", "sentiment lexicon CSV (action_semantics lexicon_file)"),
        ("--persona-file", "persona YAML (dialogue persona_file)"),
        ("--qa-file", "qa.csv (dialogue qa_file)"),
        ("--schedule-file", "schedule YAML (dialogue and memory schedule_file)"),
    ):
        admin_files.add_argument(option, type=Path, default=None, metavar="FILE", help=what)
    admin_files.add_argument(
        "--memory-db",
        default=None,
        metavar="URL",
        help="the memory node's database (a path, sqlite:///<path> or postgresql://...): the admin "
        "page then shows each owner's layered profile, read-only (default: not shown)",
    )
    admin_files.add_argument(
        "--knowledge-db",
        default=None,
        metavar="URL",
        help="the knowledge base (a path, sqlite:///<path> or postgresql://...; `fay-ros knowledge add`): "
        "the admin page then lists its documents, chunk counts, when each was indexed and errors",
    )
    p.add_argument(
        "--show-urls", action="store_true", help="print the face link of every client in the access file, then exit"
    )
    p.add_argument(
        "--add-client",
        metavar="USER_ID",
        default=None,
        help="add a face client (a new token) for USER_ID to the access file, print its link, exit",
    )
    p.add_argument(
        "--add-guest",
        action="store_true",
        help="add a face client with no identity (a guest: no private memory), print its link, exit",
    )
    p.add_argument("--face-map", type=Path, default=None, help="the face's mapping table (default web/face_map.json)")
    p.add_argument(
        "--live2d",
        default=None,
        metavar="DIR",
        help="drive a Live2D model instead of the SVG face: 'sample' for the sample set-up installs "
        "(shizuku), or DIR holding a Cubism core, the renderer and your model (see web/README.md); "
        "without it the installed sample is still offered to pages that ask (?face=live2d)",
    )
    p.add_argument(
        "--live2d-model",
        default=None,
        metavar="PATH",
        help="the *.model3.json / *.model.json inside DIR (default: the only one found)",
    )
    p.add_argument(
        "--user-id",
        default="user",
        help="user the token created at the first start speaks as (default 'user', the one-person default)",
    )
    p.set_defaults(func=run)


def _probe_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "") else ("::1" if host == "::" else host)


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((_probe_host(host), port), timeout=0.5):
            return True
    except OSError:
        return False


def _bridge_listening(host: str, port: int, path: str = "/") -> bool:
    """True once the bridge completes a websocket handshake (a bare TCP probe makes it log a
    protocol error for every poll)."""
    from websockets.sync.client import connect

    address = _probe_host(host)
    address = f"[{address}]" if ":" in address else address
    try:
        with connect(f"ws://{address}:{port}{path}", open_timeout=1.0, close_timeout=0.5):
            return True
    except Exception:  # noqa: BLE001 - refused, reset, or not yet a websocket: not listening yet
        return False


def _free_loopback_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _config_error(message: str) -> int:
    print(f"[fay-ros web] cannot start: {message}", file=sys.stderr, flush=True)
    return EXIT_CONFIG_ERROR


def _say(message: str) -> None:
    print(f"[fay-ros web] {message}", flush=True)


def face_link(
    host: str, page_port: int, token: str, *, page: bool = True, bridge_port: int = DEFAULT_BRIDGE_PORT
) -> str:
    """The link a client opens: the page with the token in the fragment (a fragment is never
    sent to the server, so the token stays out of request lines and Referer headers), or
    the websocket URL itself when no page is served."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else ("[::1]" if host == "::" else host)
    shown = f"[{shown}]" if ":" in shown and not shown.startswith("[") else shown
    if page:
        return f"http://{shown}:{page_port}/#token={token}"
    return f"ws://{shown}:{bridge_port}/?token={token}"


def admin_link(host: str, page_port: int, token: str) -> str:
    """The admin page's link: like the face's, under /admin/ (token in the fragment)."""
    return face_link(host, page_port, token).replace("/#token=", "/admin/#token=", 1)


def _client_link(args: argparse.Namespace, role: str, token: str) -> str:
    if role == "admin" and not args.no_page:
        return admin_link(args.host, args.port, token)
    return face_link(args.host, args.port, token, page=not args.no_page, bridge_port=args.bridge_port)


def _access_commands(args: argparse.Namespace, path: Path) -> int:
    """--show-urls / --add-client / --add-guest / --add-admin: manage the access file, then exit."""
    from pydantic import ValidationError

    from ..web.access import AccessError, Role, add_client, load

    try:
        if args.add_client is not None or args.add_guest or args.add_admin is not None:
            role: Role = "admin" if args.add_admin is not None else "face"
            user_id = "" if args.add_guest else (args.add_admin if role == "admin" else args.add_client)
            option = "--add-admin" if role == "admin" else "--add-client"
            try:
                client = add_client(path, user_id, role=role, label="added with fay-ros web")
            except ValidationError as exc:
                return _config_error(f"{option} {user_id!r}: {exc.errors()[0]['msg']}")
            print(f"{client.describe()} added to {path}; its link (give it only to that person):")
            print(_client_link(args, role, client.token))
            if role == "admin":
                print("the admin page opens only while `fay-ros web --admin` runs")
            return 0
        access = load(path)
    except AccessError as exc:
        return _config_error(str(exc))
    for client in access.clients:
        print(f"{client.describe()}:\n  " + _client_link(args, client.role, client.token))
    return 0


def run(args: argparse.Namespace) -> int:
    import secrets

    from pydantic import ValidationError

    from ..web.access import AccessError, default_path, load_or_create
    from ..web.allowlist import AllowList, AllowListError
    from ..web.bridge import BridgeUnavailable, choose
    from ..web.face_map import FaceMapError, load_face_map
    from ..web.gate import Gate, loopback_origins
    from ..web.gate_policy import RolePermissions, admin_bridge_allow
    from ..web.page_server import FaceServer, Live2DError, find_live2d, installed_sample, web_root

    for name, port in (("--port", args.port), ("--bridge-port", args.bridge_port)):
        if not 0 < port < 65536:
            return _config_error(f"{name} {port} is not a TCP port")
    access_path = args.access_file or default_path()
    if args.show_urls or args.add_client is not None or args.add_guest or args.add_admin is not None:
        return _access_commands(args, access_path)
    namespace = "/" + args.namespace.strip("/") if args.namespace.strip("/") else "/"
    try:
        allow = AllowList.build(
            namespace,
            extra_subscribe=tuple(args.allow_subscribe),
            extra_publish=tuple(args.allow_publish),
            extra_services=tuple(args.allow_service),
        )
    except AllowListError as exc:
        return _config_error(str(exc))
    try:
        root = web_root()
        table = load_face_map(args.face_map or root / "face_map.json")
        live2d = find_live2d(args.live2d, args.live2d_model) if args.live2d else None
        offered = live2d or installed_sample()  # served; used by default only with --live2d
    except (FaceMapError, Live2DError, FileNotFoundError) as exc:
        return _config_error(str(exc))
    access = None
    created = None
    if args.bridge != "none":
        try:
            access, created = load_or_create(access_path, args.user_id)
        except AccessError as exc:
            return _config_error(str(exc))
        except ValidationError as exc:  # --user-id that is no valid user id (the new client's check)
            return _config_error(f"--user-id {args.user_id!r}: {exc}")
        origins = set()
        for origin in args.allow_origin:
            if "://" not in origin or origin.count("/") > 2:
                return _config_error(f"--allow-origin {origin!r} is not an origin (scheme://host[:port])")
            origins.add(origin.rstrip("/"))
    if args.enable_admin and args.bridge == "none":
        return _config_error("--admin needs the web door (its tokens); it cannot run with --bridge none")
    bridge_allow = admin_bridge_allow(allow, namespace) if args.enable_admin else allow
    admin_permissions = RolePermissions.for_role("admin", allow, namespace)
    admin_api = None
    if args.enable_admin and not args.no_page:
        from ..web.admin_files import EditableFiles
        from ..web.admin_http import AdminApi

        assert access is not None
        files = EditableFiles(
            {
                "rules": args.rules_file,
                "lexicon": args.lexicon_file,
                "persona": args.persona_file,
                "qa": args.qa_file,
                "schedule": args.schedule_file,
            }
        )
        missing = [f"{name}: {path}" for name, path in files.paths.items() if not path.parent.is_dir()]
        if missing:
            return _config_error("the folder of an editable file does not exist: " + "; ".join(missing))
        admin_api = AdminApi(
            access,
            files,
            set(),
            profiles=_profile_reader(args.memory_db),
            reminders=_reminder_reader(args.memory_db),
            knowledge=_knowledge_reader(args.knowledge_db),
            cards=_card_reader(args.memory_db),
        )
    if args.bridge == "none":
        _say(
            "--bridge none: the page talks to a rosbridge started elsewhere; no token or origin check "
            "protects that one (docs/SECURITY.md)"
        )
    if args.allow_service:
        print(
            f"[fay-ros web] --allow-service opens {', '.join(allow.services)} to admin clients only "
            "(fay-ros web --enable-admin)",
            file=sys.stderr,
            flush=True,
        )
    if access is not None and access.has_admin() and not args.enable_admin:
        _say(f"admin clients in {access_path} are refused (admin is off; --enable-admin turns it on)")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"[fay-ros web] WARNING: bound to {args.host}: anyone who can reach it sees the page; the websocket "
            "still needs a token, which travels unencrypted over plain http/ws",
            file=sys.stderr,
            flush=True,
        )

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    workdir = Path(tempfile.mkdtemp(prefix="fay_web_"))
    bridge: subprocess.Popen | None = None
    server: FaceServer | None = None
    gate: Gate | None = None
    try:
        page_port = args.port
        if not args.no_page:
            page_config = {
                "rosbridge_port": args.bridge_port,
                "namespace": namespace,
                "face_map": table,
                "live2d": offered.page_config(default=live2d is not None) if offered else None,
            }
            try:
                server = FaceServer(args.host, args.port, page_config, root, offered, admin=admin_api).start()
            except OSError as exc:
                print(
                    f"[fay-ros web] cannot serve the page on {args.host}:{args.port}: {exc.strerror or exc}",
                    file=sys.stderr,
                    flush=True,
                )
                return 1
            page_port = server.port
            if admin_api is not None:  # the admin page is a page of this very origin
                admin_api.origins |= loopback_origins(args.host, page_port) | {o.lower() for o in origins}
        if args.bridge != "none":
            assert access is not None
            if _port_open(args.host, args.bridge_port):
                print(
                    f"[fay-ros web] port {args.bridge_port} is already in use (another rosbridge?); "
                    "stop it or pass --bridge-port / --bridge none",
                    file=sys.stderr,
                    flush=True,
                )
                return 1
            # The bridge listens on loopback, on a port of its own and (rosbridge-server-rs)
            # a secret path; only the gate below talks to it.
            internal_port = _free_loopback_port()
            secret_path = "/" + secrets.token_urlsafe(24)
            try:
                command = choose(
                    args.bridge,
                    bridge_allow,
                    address="127.0.0.1",
                    port=internal_port,
                    namespace=namespace,
                    workdir=workdir,
                    url_path=secret_path,
                )
            except BridgeUnavailable as exc:
                return _config_error(str(exc))
            upstream_path = secret_path if command.kind == "rs" else "/"
            command.write_config()
            bridge = subprocess.Popen(command.argv, env=command.env, start_new_session=True)
            deadline = time.monotonic() + BRIDGE_START_TIMEOUT
            while not _bridge_listening("127.0.0.1", internal_port, upstream_path):
                if bridge.poll() is not None:
                    print(
                        f"[fay-ros web] the rosbridge server exited with code {bridge.returncode} at start-up",
                        file=sys.stderr,
                        flush=True,
                    )
                    return 1
                if time.monotonic() > deadline or stop.wait(0.05):
                    if not stop.is_set():
                        print(
                            f"[fay-ros web] the rosbridge server did not listen within {BRIDGE_START_TIMEOUT:.0f}s",
                            file=sys.stderr,
                            flush=True,
                        )
                    return 1
            try:
                gate = Gate(
                    access=access,
                    allow=allow,
                    namespace=namespace,
                    upstream_url=f"ws://127.0.0.1:{internal_port}{upstream_path}",
                    host=args.host,
                    port=args.bridge_port,
                    origins=loopback_origins(args.host, page_port) | origins,
                    admin_enabled=args.enable_admin,
                    page_port=page_port,
                    log=_say,
                ).start()
            except OSError as exc:
                print(
                    f"[fay-ros web] cannot listen on {args.host}:{args.bridge_port}: {exc.strerror or exc}",
                    file=sys.stderr,
                    flush=True,
                )
                return 1
            kind = {"rs": "rosbridge-server-rs", "apt": "rosbridge_server"}[command.kind]
            _say(
                f"websocket: ws://{args.host}:{args.bridge_port} (token required; {kind} behind it on loopback)\n"
                f"  {allow.describe()}\n  clients: {len(access.clients)} in {access_path}"
                + (
                    "\n  admin clients instead: subscribe "
                    + ", ".join(admin_permissions.subscribe)
                    + "; services "
                    + ", ".join(admin_permissions.services)
                    + "; publish nothing"
                    if args.enable_admin
                    else ""
                )
            )
        if server is not None:
            _say(
                f"face: http://{args.host}:{page_port}/"
                + (" (Live2D: " + str(live2d.folder / live2d.model) + ")" if live2d else " (SVG face)")
            )
        if created is not None:
            _say(
                "created "
                + str(access_path)
                + " with a token for user '"
                + created.user_id
                + "'. Open the face with this link (shown once; `fay-ros web --show-urls` shows it again):\n  "
                + face_link(args.host, page_port, created.token, page=server is not None, bridge_port=args.bridge_port)
            )
        if admin_api is not None:
            admins = [c for c in access.clients if c.role == "admin"] if access is not None else []
            _say(
                f"admin page: http://{args.host}:{page_port}/admin/ (admin token required; "
                + (
                    f"{len(admins)} admin client(s): `fay-ros web --show-urls` prints their links)"
                    if admins
                    else "no admin client yet: `fay-ros web --add-admin NAME` adds one and prints its link)"
                )
            )
        if created is None and access is not None:
            _say(
                "open the face with your link (`fay-ros web --show-urls` prints it; --add-client USER_ID adds a person)"
            )
        _say("ready; Ctrl-C stops")
        while not stop.wait(0.2):
            if bridge is not None and bridge.poll() is not None:
                print(
                    f"[fay-ros web] the rosbridge server exited with code {bridge.returncode}",
                    file=sys.stderr,
                    flush=True,
                )
                return 1
            if gate is not None and not gate.alive:
                print("[fay-ros web] the websocket gate stopped", file=sys.stderr, flush=True)
                return 1
        return 0
    finally:
        if gate is not None:
            gate.stop()
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


# --- issue 35: the layered profile on the admin page ---------------------------------------------
def _profile_reader(location: str | None):
    """owner -> the owner's layered profile, read from the memory database per request
    (read-only), or None when no database is given."""
    if not location:
        return None

    def read(owner: str) -> dict:
        from ..memory.layers.layer_pipeline import ProfilePipeline
        from ..memory.layers.layer_reader import open_readonly

        repo, close = open_readonly(location)
        try:
            return ProfilePipeline(repo).snapshot(owner)
        finally:
            close()

    return read


def _card_reader(location: str | None):
    """owner -> the owner's speaker card (name, formality, language with each memory's id and
    evidence), read from the memory database per request (read-only), or None when no database
    is given."""
    if not location:
        return None
    from ..dialogue.card_reader import card_reader

    return card_reader(location)


def _reminder_reader(location: str | None):
    """owner -> the owner's active reminders (next due as local time in their zone, the repeat
    in words, status) and open commitments, read from the memory database per request through
    the one ReminderBook (read-only), or None when no database is given."""
    if not location:
        return None

    def read(owner: str) -> dict:
        from ..dialogue.reminder_tools import commitment_view, reminder_view
        from ..memory.reminder_reader import open_reminders_readonly
        from ..schedule.config import local_zone_name

        book, close = open_reminders_readonly(location)
        try:
            reminders, commitments = book.list(owner), book.commitments(owner)
        finally:
            close()
        zone = local_zone_name()
        return {
            "owner": owner,
            "reminders": [reminder_view(r) for r in reminders],
            "commitments": [commitment_view(c, zone) for c in commitments],
        }

    return read


# --- issue 41: the knowledge base's documents on the admin page ----------------------------------
def _knowledge_reader(location: str | None):
    """() -> the knowledge base's documents (shared: no owner), read from the store per request,
    or None when no store is given."""
    if not location:
        return None

    def read() -> dict:
        from ..dialogue.knowledge_tools import document_view
        from ..knowledge.base import KnowledgeBase, KnowledgeSettings
        from ..knowledge.kb_store import KnowledgeStoreError
        from ..memory.backend import is_postgres, sqlite_path

        if not is_postgres(location) and not sqlite_path(location).is_file():  # a reader makes no file
            raise KnowledgeStoreError(f"{sqlite_path(location)}: no knowledge base there (`fay-ros knowledge add`)")
        kb = KnowledgeBase(KnowledgeSettings(db=location))
        try:
            return {"location": kb.location, "documents": [document_view(d) for d in kb.documents()]}
        finally:
            kb.close()

    return read
