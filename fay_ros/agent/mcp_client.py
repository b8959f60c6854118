"""MCP client: the tools of configured MCP servers become Fay's agent tools.

`McpClient(servers_file)` holds one `McpServer` per server of the MCP servers file
(`mcp_config.py`) and one `fay_ros.dialogue.tools.Tool` per allow-listed tool, named
`mcp_<server>_<tool>` (or with the server's `prefix`). Register `client.tools()` in the
dialogue's ToolRegistry; a name the allow-list does not hold is never a tool, and
`McpServer.call` refuses it too.

Lifecycle, all on ONE asyncio loop (the dialogue engine's; MCP sessions are bound to it):
- The tools exist from construction, by name, so a persona `prestart` can name one, but the
  model is offered a tool (`callable_by_llm`) only once its server has listed it: the
  description and the argument schema are the server's. `start()` lists every server in
  the background, each bounded by its `start_timeout`; a server that fails then stays
  hidden from the model until a call (a prestart, or a later listing) reaches it.
- A server is started lazily by the first listing or call. Each connection lives in a task
  of its own (the SDK's transports are anyio task groups: entered and left by one task).
- A call that finds the connection lost (a crashed stdio server, a dropped HTTP session)
  fails, and the server is started again on the next call, after a back-off that starts at
  `restart_backoff` and doubles up to `max_backoff` while failures repeat; a call that
  succeeds resets it. A call waits out the back-off when it fits in its `call_timeout`.
- `close()` ends every session; the SDK closes a stdio server's stdin, then terminates its
  process group, so no child process outlives the client.

A call's result content becomes text for the model: text blocks verbatim, embedded text
resources by their text, other blocks as a short `[image/png]`-style note, structured
content as JSON when there is no content; a tool error is returned as "error: ...".
Secrets (`env_from`, `headers_from_env`) are read from the environment when a server is
connected and never logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

import mcp.types as mcp_types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from ..dialogue.tools import Tool, ToolContext, ToolError
from .mcp_config import McpServerConfig, McpServersFile

# under "fay_ros.dialogue" so the dialogue node forwards these records to its ROS log
log = logging.getLogger("fay_ros.dialogue.mcp")

CLIENT_INFO = mcp_types.Implementation(name="fay_ros", version="1")
PLACEHOLDER = "MCP tool {tool} of server {server} (not listed yet)"


class McpClientError(ToolError):
    """An MCP call or connection failed; the message names the server and the tool."""


class McpToolRefused(McpClientError):
    """The tool is not on the server's allow-list."""


class McpUnavailable(McpClientError):
    """The server could not be started or reached (it is tried again on the next call)."""


def _root_cause(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    exc = _root_cause(exc)
    if isinstance(exc, MCPError):
        return f"{exc.message} (MCP error {exc.code})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def result_text(result: mcp_types.CallToolResult) -> str:
    """The model's view of a tool result."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                parts.append(resource.text)
            else:
                parts.append(f"[{resource.mime_type or 'binary'} resource {resource.uri}]")
        elif isinstance(block, mcp_types.ResourceLink):
            parts.append(f"[resource {block.uri}]")
        elif isinstance(block, (mcp_types.ImageContent, mcp_types.AudioContent)):
            parts.append(f"[{block.mime_type}]")
        else:
            parts.append(f"[{getattr(block, 'type', type(block).__name__)}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, sort_keys=True))
    text = "\n".join(parts)
    return f"error: {text or 'the tool failed'}" if result.is_error else text


class _Connection:
    """One running session: its task owns the transport and the session contexts."""

    def __init__(self) -> None:
        self.ready: asyncio.Future[tuple[ClientSession, dict[str, mcp_types.Tool]]] = (
            asyncio.get_running_loop().create_future()
        )
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.lost = False


class McpServer:
    """One configured MCP server: lazy start, restart with back-off, allow-listed calls."""

    def __init__(
        self, config: McpServerConfig, *, environ: Mapping[str, str] | None = None, errlog: TextIO | None = None
    ) -> None:
        self.config = config
        self._environ = os.environ if environ is None else environ
        self._errlog = errlog or sys.stderr
        self._connection: _Connection | None = None
        self._lock: asyncio.Lock | None = None
        self._failures = 0
        self._retry_at = 0.0  # time.monotonic() before which no restart is tried
        self._closed = False
        self._stopping: set[asyncio.Task[None]] = set()  # broken sessions being wound down
        self.listed: dict[str, mcp_types.Tool] = {}  # allow-listed tools the server offers
        self.starts = 0  # sessions started (1 + restarts), for diagnostics and tests
        self.on_listed: list[Any] = []  # callbacks(server) after each successful listing

    @property
    def name(self) -> str:
        return self.config.name

    def missing_environment(self) -> list[str]:
        """Variables named by env_from / headers_from_env that are not set (or empty)."""
        names = [*self.config.env_from.values(), *self.config.headers_from_env.values()]
        return [n for n in names if not self._environ.get(n)]  # empty counts as not set

    # -- connection -------------------------------------------------------------------
    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        c = self.config
        missing = self.missing_environment()
        if missing:
            raise McpUnavailable(f"MCP server {c.name!r}: environment variable(s) {missing} not set")
        if c.kind == "stdio":
            env = dict(c.env) | {child: self._environ[ours] for child, ours in c.env_from.items()}
            params = StdioServerParameters(command=c.command, args=list(c.args), env=env or None, cwd=c.cwd or None)
            return stdio_client(params, errlog=self._errlog)
        headers = {header: self._environ[ours] for header, ours in c.headers_from_env.items()}
        if c.kind == "sse":
            return sse_client(c.url, headers=headers or None, timeout=c.start_timeout)
        return self._streamable_http(headers)

    @contextlib.asynccontextmanager
    async def _streamable_http(self, headers: dict[str, str]) -> Any:
        async with create_mcp_http_client(headers=headers or None) as http:
            async with streamable_http_client(self.config.url, http_client=http) as streams:
                yield streams

    async def _list(self, session: ClientSession) -> dict[str, mcp_types.Tool]:
        offered: dict[str, mcp_types.Tool] = {}
        cursor: str | None = None
        while True:
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            offered.update({t.name: t for t in page.tools})
            cursor = page.next_cursor
            if not cursor:
                break
        allowed = {name: offered[name] for name in self.config.tools if name in offered}
        absent = [name for name in self.config.tools if name not in offered]
        if absent:
            log.warning(
                "MCP server %s does not offer allow-listed tool(s) %s; it offers %s", self.name, absent, sorted(offered)
            )
        return allowed

    async def _run(self, connection: _Connection) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(
                    ClientSession(read, write, read_timeout_seconds=self.config.start_timeout, client_info=CLIENT_INFO)
                )
                await session.initialize()
                tools = await self._list(session)
                if not connection.ready.done():
                    connection.ready.set_result((session, tools))
                await connection.stop.wait()
        except asyncio.CancelledError:
            if not connection.ready.done():
                connection.ready.cancel()
            raise
        except BaseException as exc:  # noqa: BLE001 - any failure ends this session; the next call restarts
            if not connection.ready.done():
                connection.ready.set_exception(
                    McpUnavailable(f"MCP server {self.name!r} could not be started: {_describe(exc)}")
                )
            elif not connection.stop.is_set():
                log.warning("MCP server %s: session ended: %s", self.name, _describe(exc))
        finally:
            connection.lost = True

    async def _stop(self, connection: _Connection) -> None:
        connection.stop.set()
        task = connection.task
        if task is None or task.done():
            return
        if not connection.ready.done():
            task.cancel()  # still starting (e.g. past start_timeout): the transport still stops its process
        try:
            # the SDK's stdio shutdown waits ~2 s for a server to leave, then kills its group
            await asyncio.wait_for(asyncio.shield(task), 8.0)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        except BaseException:  # noqa: BLE001 - the task's own failure was reported by _run
            pass

    def _fail(self, connection: _Connection) -> None:
        """The connection is broken: forget it and schedule the back-off."""
        if self._connection is connection:
            self._connection = None
        connection.lost = True
        self._failures += 1
        c = self.config
        delay = min(c.max_backoff, c.restart_backoff * 2 ** (self._failures - 1))
        self._retry_at = time.monotonic() + delay
        task = asyncio.get_running_loop().create_task(self._stop(connection))
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def session(self, budget: float | None = None) -> ClientSession:
        """The live session, starting (or restarting) the server if needed."""
        if self._closed:
            raise McpUnavailable(f"MCP server {self.name!r}: the client is closed")
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            connection = self._connection
            if connection is not None and connection.lost:
                self._fail(connection)
                connection = None
            if connection is None:
                wait = self._retry_at - time.monotonic()
                if wait > 0:
                    if budget is not None and wait > budget:
                        raise McpUnavailable(
                            f"MCP server {self.name!r} failed {self._failures} time(s); next restart in {wait:.1f}s"
                        )
                    await asyncio.sleep(wait)  # the restart back-off
                connection = _Connection()
                connection.task = asyncio.get_running_loop().create_task(self._run(connection), name=f"mcp-{self.name}")
                self._connection = connection
                self.starts += 1
                if self.starts > 1:
                    log.info("MCP server %s: restarting (start %d)", self.name, self.starts)
            try:
                session, tools = await asyncio.wait_for(asyncio.shield(connection.ready), self.config.start_timeout)
            except TimeoutError:
                self._fail(connection)
                raise McpUnavailable(
                    f"MCP server {self.name!r} did not start within {self.config.start_timeout:g}s (start_timeout)"
                ) from None
            except McpUnavailable:
                self._fail(connection)
                raise
        if tools is not self.listed:
            self.listed = tools
            for callback in self.on_listed:
                callback(self)
        return session

    async def list_tools(self) -> dict[str, mcp_types.Tool]:
        """Start the server if needed; its allow-listed tools, as listed at connection."""
        await self.session()
        return self.listed

    async def call(self, tool: str, args: dict[str, Any]) -> str:
        if tool not in self.config.tools:
            raise McpToolRefused(
                f"MCP server {self.name!r}: tool {tool!r} is not on the allow-list {self.config.tools}"
            )
        session = await self.session(budget=self.config.call_timeout)
        if tool not in self.listed:
            raise McpClientError(
                f"MCP server {self.name!r} does not offer tool {tool!r}; it offers "
                f"{sorted(self.listed)} of the allow-list"
            )
        connection = self._connection
        try:
            result = await session.call_tool(tool, args, read_timeout_seconds=self.config.call_timeout)
        except MCPError as exc:
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                raise McpClientError(
                    f"MCP tool {tool!r} of server {self.name!r} did not answer within "
                    f"{self.config.call_timeout:g}s (call_timeout)"
                ) from None
            if exc.code == mcp_types.CONNECTION_CLOSED:
                if connection is not None:
                    self._fail(connection)
                raise McpUnavailable(
                    f"MCP server {self.name!r} was lost during {tool!r} (it is restarted on the next call)"
                ) from None
            raise McpClientError(f"MCP server {self.name!r} refused {tool!r}: {exc.message}") from None
        except (OSError, EOFError) as exc:
            if connection is not None:
                self._fail(connection)
            raise McpUnavailable(f"MCP server {self.name!r} failed during {tool!r}: {_describe(exc)}") from None
        self._failures = 0
        return result_text(result)

    async def close(self) -> None:
        self._closed = True
        connection, self._connection = self._connection, None
        if connection is not None:
            await self._stop(connection)
        await asyncio.gather(*self._stopping, return_exceptions=True)


class McpClient:
    """Every configured server and its allow-listed tools (construct and use on one loop)."""

    def __init__(
        self, servers: McpServersFile, *, environ: Mapping[str, str] | None = None, errlog: TextIO | None = None
    ) -> None:
        self.servers = {s.name: McpServer(s, environ=environ, errlog=errlog) for s in servers.servers}
        self._tools: dict[str, Tool] = {}
        self._listing: list[asyncio.Task[Any]] = []
        for server in self.servers.values():
            for tool, agent_name in server.config.tool_names().items():
                self._tools[agent_name] = Tool(
                    agent_name,
                    PLACEHOLDER.format(tool=tool, server=server.name),
                    {},
                    self._executor(server, tool),
                    callable_by_llm=False,
                )
            server.on_listed.append(self._update)

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> McpClient:
        return cls(McpServersFile.load(path), **kwargs)

    def missing_environment(self) -> dict[str, list[str]]:
        """Per server, the named environment variables that are not set."""
        return {name: missing for name, s in self.servers.items() if (missing := s.missing_environment())}

    @staticmethod
    def _executor(server: McpServer, tool: str) -> Any:
        async def run(args: dict[str, Any], ctx: ToolContext) -> str:
            return await server.call(tool, args)  # the session's identity (ctx) is never sent

        return run

    def _update(self, server: McpServer) -> None:
        """Fill the tools in from a listing: description, schema, and offer them to the model."""
        for tool, agent_name in server.config.tool_names().items():
            entry = self._tools[agent_name]
            listed = server.listed.get(tool)
            if listed is None:
                entry.callable_by_llm = False
                continue
            schema = listed.input_schema or {}
            entry.description = listed.description or listed.title or tool
            entry.parameters = dict(schema.get("properties") or {})
            entry.required = tuple(schema.get("required") or ())
            entry.callable_by_llm = True

    def tools(self) -> list[Tool]:
        """One Tool per allow-listed tool (the same objects for the client's life)."""
        return list(self._tools.values())

    def tool_names(self) -> list[str]:
        return list(self._tools)

    def start(self, on_listed: Callable[[str, bool, str], None] | None = None) -> list[asyncio.Task[Any]]:
        """List every server in the background (each bounded by its start_timeout).
        `on_listed(server, ok, message)` reports each outcome (the node puts it on /diagnostics)."""

        async def list_one(server: McpServer) -> None:
            try:
                listed = await server.list_tools()
                message = f"MCP server {server.name}: {len(listed)} tool(s) {sorted(listed)}"
                log.info("%s", message)
                ok = True
            except McpClientError as exc:
                message = f"{exc}; its tools are offered once a call reaches it"
                log.warning("%s", message)
                ok = False
            if on_listed is not None:
                on_listed(server.name, ok, message)

        self._listing = [asyncio.get_running_loop().create_task(list_one(s)) for s in self.servers.values()]
        return self._listing

    async def call(self, agent_name: str, args: dict[str, Any]) -> str:
        """Call a tool by its agent name (refused when it is not an allow-listed tool)."""
        tool = self._tools.get(agent_name)
        if tool is None:
            raise McpToolRefused(f"{agent_name!r} is not an allow-listed MCP tool; allowed: {self.tool_names()}")
        return await tool.executor(args, ToolContext(owner="", question=""))

    async def close(self) -> None:
        for task in self._listing:
            task.cancel()
        await asyncio.gather(*self._listing, return_exceptions=True)
        await asyncio.gather(*(s.close() for s in self.servers.values()), return_exceptions=True)
