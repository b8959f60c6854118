"""The web door: an authenticating websocket proxy in front of the rosbridge server.

Neither rosbridge server can tell who is connecting, so the bridge listens on loopback only
(rosbridge-server-rs additionally on a secret, random URL path) and this small proxy, built
on the `websockets` library, is what browsers reach. For each connection it:

1. refuses, before the websocket opens, a browser page from an origin other than the face
   page's own (or one the user listed): HTTP 403. Browsers always send Origin; a client that
   sends none is not a web page and still needs a token;
2. refuses a connection without a valid token (`?token=` in the URL): HTTP 401;
3. binds the identity and role of that token (fay_ros.web.access) to the connection, opens
   its own connection to the bridge, and passes every frame both ways through the session
   policy (fay_ros.web.gate_policy), which enforces the role and overwrites user ids.

Tokens never reach a log: the request path is not logged, only the outcome.
"""

from __future__ import annotations

import asyncio
import http
import logging
import threading
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from .access import Access, Client
from .allowlist import AllowList
from .gate_policy import MAX_CLIENT_FRAME, ClientSession, Refused, RolePermissions

# The bridge may send large messages (a long viseme track); the client may not.
UPSTREAM_MAX_FRAME = 16 * 1024 * 1024


def loopback_origins(host: str, port: int) -> set[str]:
    """The origins the face page itself has when served on host:port."""
    names = {host}
    if host in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::", ""):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    return {
        f"{scheme}://{name if ':' not in name or name.startswith('[') else '[' + name + ']'}:{port}"
        for name in names
        if name not in ("0.0.0.0", "::", "")
        for scheme in ("http", "https")
    }


class Gate:
    """Runs the proxy in a background thread with its own event loop."""

    def __init__(
        self,
        *,
        access: Access,
        allow: AllowList,
        namespace: str,
        upstream_url: str,
        host: str,
        port: int,
        origins: set[str],
        admin_enabled: bool = False,
        page_port: int | None = None,
        log: Callable[[str], None] = print,
    ) -> None:
        self.access = access
        self.allow = allow
        self.namespace = namespace
        self.upstream_url = upstream_url
        self.host = host
        self.port = port
        self.origins = {o.lower() for o in origins} | set(access.origins)
        self.admin_enabled = admin_enabled
        self.page_port = page_port
        self.log = log
        self._clients: dict[int, Client] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        # The library's own access log would print each rejected handshake; this class
        # prints one line per outcome instead, never the request path (it holds the token).
        logging.getLogger("websockets").setLevel(logging.ERROR)

    # ---- handshake ----------------------------------------------------------------------

    def _reject(self, connection: ServerConnection, status: http.HTTPStatus, why: str) -> Response:
        peer = _peer(connection)
        self.log(f"refused a websocket from {peer}: {why}")
        return connection.respond(status, f"{status.phrase}: {why}\n")

    def check(self, connection: ServerConnection, request: Request) -> Response | None:
        origin = request.headers.get("Origin")
        if origin is not None and not self._origin_allowed(origin.lower(), request.headers.get("Host", "")):
            return self._reject(
                connection,
                http.HTTPStatus.FORBIDDEN,
                f"page origin {origin[:100]!r} is not the face's (add it to 'origins' in "
                f"{self.access.path} to allow it)",
            )
        token = _token(request.headers, request.path)
        if not token:
            return self._reject(connection, http.HTTPStatus.UNAUTHORIZED, "no token")
        client = self.access.lookup(token)
        if client is None:
            return self._reject(connection, http.HTTPStatus.UNAUTHORIZED, "unknown token")
        if client.role == "admin" and not self.admin_enabled:
            return self._reject(
                connection, http.HTTPStatus.FORBIDDEN, "admin clients are off (fay-ros web --enable-admin)"
            )
        self._clients[id(connection)] = client
        return None

    def _origin_allowed(self, origin: str, host_header: str) -> bool:
        if origin in self.origins:
            return True
        if self.host not in ("0.0.0.0", "::", "") or self.page_port is None:
            return False
        # Bound to every interface, the page's origin is whatever address the browser used
        # (a tablet: http://192.168.1.5:8080). Accept the page port on the very host the
        # websocket request is addressed to; a page of another site has another host.
        parts = urlsplit(origin)
        try:
            origin_port = parts.port
        except ValueError:
            return False
        requested = urlsplit("//" + host_header).hostname
        return (
            parts.scheme in ("http", "https")
            and origin_port == self.page_port
            and parts.hostname is not None
            and parts.hostname == requested
        )

    # ---- one session --------------------------------------------------------------------

    async def _serve_client(self, connection: ServerConnection) -> None:
        client = self._clients.pop(id(connection))
        session = ClientSession(
            client, RolePermissions.for_role(client.role, self.allow, self.namespace), self.namespace
        )
        peer = _peer(connection)
        try:
            upstream = await connect(self.upstream_url, max_size=UPSTREAM_MAX_FRAME, open_timeout=5)
        except (TimeoutError, OSError, Exception) as exc:  # noqa: BLE001 - any failure: close the client
            self.log(f"cannot reach the rosbridge server for {peer} ({type(exc).__name__})")
            await connection.close(1011, "bridge unavailable")
            return
        self.log(f"{client.describe()} connected from {peer}")

        async def client_to_bridge() -> None:
            async for frame in connection:
                try:
                    forward = session.from_client(frame)
                except Refused as exc:
                    await connection.send(ClientSession.refusal(str(exc), exc.message_id))
                    continue
                await upstream.send(forward)

        async def bridge_to_client() -> None:
            async for frame in upstream:
                passed = session.to_client(frame)
                if passed is not None:
                    await connection.send(passed)

        tasks = [asyncio.create_task(client_to_bridge()), asyncio.create_task(bridge_to_client())]
        try:
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            for task in done:
                if task.exception() is not None and not isinstance(task.exception(), ConnectionClosed):
                    self.log(f"session of {peer} ended on {type(task.exception()).__name__}")
        finally:
            await upstream.close()
            await connection.close()
            self.log(
                f"{client.describe()} from {peer} disconnected (refused {session.refused}, withheld {session.dropped})"
            )

    # ---- life cycle ---------------------------------------------------------------------

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        try:
            async with serve(
                self._serve_client,
                self.host,
                self.port,
                process_request=self.check,
                max_size=MAX_CLIENT_FRAME * 2,
                server_header=None,
            ) as server:
                sockets = list(server.sockets)
                if sockets and self.port == 0:
                    self.port = sockets[0].getsockname()[1]
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - reported to start()
            self._error = exc
            self._ready.set()

    def start(self, timeout: float = 10.0) -> Gate:
        def run() -> None:
            self._loop = asyncio.new_event_loop()
            try:
                self._loop.run_until_complete(self._main())
            finally:
                self._loop.close()

        self._thread = threading.Thread(target=run, name="fay-web-gate", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("the websocket gate did not start")
        if self._error is not None:
            raise self._error
        return self

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None and self._thread and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(5)


def _token(headers: Headers, path: str) -> str:
    """The token from `?token=` (browsers cannot set headers on a websocket) or an
    `Authorization: Bearer` header (other clients)."""
    values = parse_qs(urlsplit(path).query).get("token")
    if values:
        return values[0]
    authorization = headers.get("Authorization", "")
    if authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    return ""


def _peer(connection: ServerConnection) -> str:
    try:
        host, port = connection.remote_address[:2]
        return f"{host}:{port}"
    except (TypeError, ValueError, AttributeError):
        return "?"
