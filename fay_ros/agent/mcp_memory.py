"""The MCP memory server: Fay's seven memory tools for external agents (`fay-ros mcp`).

Fay's faymcp server lets a harness agent (Claude Code, Cursor, a family app) read and write
the companion's memory: memory_remember, memory_search, memory_get_recent,
memory_get_active_rules, memory_get_reflections, memory_get_user_profile, memory_get_schema.
Here they are `fay_ros.dialogue.tools.Tool`s over a `McpMemoryGateway` (the running memory
node's memory/* services; the ROS side lives in `fay_ros.ros_side.mcp_memory_gateway`), served with the
official MCP SDK's low-level server. No rclpy in this module.

Identity: the owner of every call is bound by the server, never by a tool argument: the
`--owner` of a stdio server, or the owner of the bearer token an HTTP client presented (the
access file, `fay_ros.web.access`). An argument naming a person (owner, user, user_id,
username) is refused, and so is any argument a tool does not declare. A guest (owner "")
gets no private memory: only memory_get_schema answers.

Memory policy: an MCP client is an agent, not the user speaking, so what it writes is a
candidate (never used in answers until confirmed) unless the operator started the server
with confirmed writes (`--confirmed-writes`, e.g. for a family app where a person types the
rule); even then the memory node's policy applies unchanged (it checks the flag against
the owner's recently heard words). Missing services fail the call with "memory is
unavailable"; they never hang it (the gateway's timeout).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..dialogue.tools import Memory, MemoryResult, MemoryUnavailable, Tool, ToolContext, ToolError, ToolRegistry
from ..memory.model import KINDS, MAX_CONTENT_CHARS, PERSISTENT_TAG, REFLECTION_TAGS, RULE_TAG, describe_schema

log = logging.getLogger("fay_ros.agent.mcp")

SERVER_NAME = "fay-memory"
# Argument names that would choose a person: refused (the owner is bound by the server).
IDENTITY_ARGS = ("owner", "user", "user_id", "username")
# Most results of one tool call (Recall answers at most fay_ros.memory.service.MAX_RECALL).
RECALL_WINDOW = 100
DEFAULT_SOURCE = "mcp"
OWNER_NOTE = (
    "The memory owner is bound by the server (its --owner or your access token); arguments naming a "
    "person (owner, user, user_id, username) are refused."
)
GUEST_REFUSAL = "this client is bound to a guest (no owner): there is no private memory"


@dataclass(frozen=True)
class MemoryRecord:
    """One memory as the MCP tools return it (times in seconds since the epoch)."""

    id: str
    content: str
    node_type: str
    status: str
    tags: tuple[str, ...] = ()
    key: str = ""
    importance: float = 0.0
    created: float = 0.0
    score: float = 0.0


@dataclass(frozen=True)
class EvidenceRecord:
    """One piece of evidence as memory_search's evidence mode returns it: a heard turn or a
    memory, the absolute day it is about (`date`), the day it was said (`said`) and the turn
    ids it rests on (`sources`; a turn: itself)."""

    kind: str
    id: str
    text: str
    rendered: str
    date: str
    said: str
    sources: tuple[str, ...] = ()
    speaker: str = ""
    status: str = ""
    score: float = 0.0


@dataclass(frozen=True)
class Profile:
    portrait: str
    facts: tuple[str, ...]
    pending_evidence: int = 0
    updated: float = 0.0


class McpMemoryGateway(Protocol):
    """What the tools need from the memory node (fay_ros.ros_side.mcp_memory_gateway implements it over
    the memory/* services; `remember` and `active_rules` are those of the dialogue's gateway)."""

    async def search(
        self,
        owner: str,
        query: str,
        *,
        n: int,
        tags_all: tuple[str, ...] = (),
        tags_any: tuple[str, ...] = (),
        include_candidates: bool = False,
        time_ordered: bool = False,
    ) -> list[MemoryRecord]:
        """Recall (ranked, or with `time_ordered` and no query the owner's last `n` matching
        memories, oldest first); raises ToolError with the node's message when it refuses."""
        ...

    async def remember(
        self,
        owner: str,
        content: str,
        *,
        node_type: str = "",
        user_confirmed: bool = False,
        tags: tuple[str, ...] = (),
        key: str = "",
        source_session: str = "",
        source_turn: int = 0,
    ) -> MemoryResult: ...

    async def evidence(self, owner: str, query: str, *, n: int) -> list[EvidenceRecord]:
        """Hybrid recall over the owner's whole history (memory/search_evidence); raises
        ToolError with the node's message when it refuses."""
        ...

    async def active_rules(self, owner: str) -> list[Memory]: ...

    async def user_profile(self, owner: str) -> Profile: ...


# -- arguments (validated at the edge; their JSON schema is what clients see) ---------------


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)


TagList = list[str]


class RememberArgs(_Args):
    content: str = Field(
        min_length=1, max_length=MAX_CONTENT_CHARS, description="the memory, one self-contained statement"
    )
    kind: str = Field(
        "observation", description="what it is: " + " | ".join(KINDS), json_schema_extra={"enum": list(KINDS)}
    )
    persistent: bool = Field(False, description="a long-lived constraint (every kind 'rule' is persistent)")
    source: str = Field(
        DEFAULT_SOURCE,
        pattern=r"^[a-z][a-z0-9_\-]{0,40}$",
        description="who writes it, e.g. claude_code, cursor, family_app (fay_* is reserved)",
    )
    extra_tags: TagList = Field(
        default_factory=list,
        max_length=24,
        description="more 'namespace:value' tags, e.g. domain:quant, session:2026-04-27-am",
    )
    key: str = Field("", max_length=200, description="key of an updatable fact (same kind + key supersedes)")

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        if value not in KINDS:
            raise ValueError(f"unknown kind; use one of {', '.join(KINDS)}")
        return value


class SearchArgs(_Args):
    query: str = Field(min_length=1, max_length=1000, description="what to look for (semantic search)")
    n: int = Field(10, ge=1, le=RECALL_WINDOW, description="most results")
    tags_all: TagList = Field(default_factory=list, description="every one of these tags must be present")
    tags_any: TagList = Field(default_factory=list, description="at least one of these tags (if any)")
    include_candidates: bool = Field(
        False, description="also return candidates (unconfirmed; for review, never to act on as facts)"
    )
    evidence: bool = Field(
        False,
        description="evidence mode: hybrid recall over the owner's whole history (heard turns and "
        "memories), each item with its text, absolute date and sources (the turn ids it rests on); "
        "no tag filters or candidates in this mode",
    )


class RecentArgs(_Args):
    n: int = Field(10, ge=1, le=RECALL_WINDOW, description="most results, newest first")
    tags_all: TagList = Field(default_factory=list, description="every one of these tags must be present")
    include_candidates: bool = Field(False, description="also return candidates (unconfirmed)")


class ReflectionArgs(_Args):
    n: int = Field(10, ge=1, le=RECALL_WINDOW, description="most reflections, newest first")
    include_candidates: bool = Field(
        False,
        description="also return candidate reflections (the memory node "
        "stores model insights as candidates by default)",
    )


class NoArgs(_Args):
    pass


def _properties(model: type[BaseModel]) -> tuple[dict[str, Any], tuple[str, ...]]:
    schema = model.model_json_schema()
    return schema.get("properties", {}), tuple(schema.get("required", ()))


def input_schema(tool: Tool) -> dict[str, Any]:
    """The MCP inputSchema of a tool: its properties, closed to anything else."""
    return {
        "type": "object",
        "properties": tool.parameters,
        "required": list(tool.required),
        "additionalProperties": False,
    }


def check_arguments(model: type[_Args], name: str, args: dict[str, Any]) -> Any:
    """Validated arguments; ToolError names the tool and the offending argument."""
    named = sorted(k for k in args if k.lower() in IDENTITY_ARGS)
    if named:
        raise ToolError(f"{name}: argument(s) {named} refused: {OWNER_NOTE}")
    try:
        return model.model_validate(args)
    except ValidationError as exc:
        issues = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}" for e in exc.errors())
        raise ToolError(f"{name}: invalid arguments: {issues}") from None


def _record(m: MemoryRecord) -> dict[str, Any]:
    out = asdict(m)
    out["tags"] = list(m.tags)
    return out


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# -- the tools ---------------------------------------------------------------------------


def memory_tools(gateway: McpMemoryGateway, *, confirmed_writes: bool = False) -> ToolRegistry:
    """The seven memory tools over `gateway`. Each executor returns a JSON object (text)."""
    registry = ToolRegistry()

    def add(
        name: str, description: str, model: type[_Args], run: Callable[[Any, str], Any], guest_ok: bool = False
    ) -> None:
        properties, required = _properties(model)

        async def executor(args: dict[str, Any], ctx: ToolContext) -> str:
            parsed = check_arguments(model, name, args)
            if not ctx.owner and not guest_ok:
                raise ToolError(GUEST_REFUSAL)
            return _json(await run(parsed, ctx.owner))

        registry.add(Tool(name, f"{description} {OWNER_NOTE}", properties, executor, required))

    async def remember(a: RememberArgs, owner: str) -> dict[str, Any]:
        if a.source.startswith("fay"):
            raise ToolError("memory_remember: source 'fay*' is reserved for the companion's own writers")
        tags = [f"kind:{a.kind}", f"source:{a.source}"]
        if a.persistent or a.kind == "rule":
            tags.append(PERSISTENT_TAG)
        own = [t for t in a.extra_tags if t.split(":", 1)[0].strip().lower() in ("kind", "source", "persistent")]
        if own:
            raise ToolError(
                f"memory_remember: extra_tags {own} refused: kind, source and persistent have their own arguments"
            )
        tags += a.extra_tags
        result = await gateway.remember(
            owner, a.content, node_type="observation", user_confirmed=confirmed_writes, tags=tuple(tags), key=a.key
        )
        if not result.success:
            raise ToolError(f"memory_remember: {result.message}")
        node = result.memories[0] if result.memories else None
        return {
            "ok": True,
            "message": result.message,
            "id": node.id if node else "",
            "status": node.status if node else "",
            "tags": list(node.tags) if node else tags,
        }

    async def search(a: SearchArgs, owner: str) -> dict[str, Any]:
        if a.evidence:
            unused = [k for k in ("tags_all", "tags_any", "include_candidates") if getattr(a, k)]
            if unused:
                raise ToolError(f"memory_search: {', '.join(unused)} cannot be used with evidence: true")
            items = await gateway.evidence(owner, a.query, n=a.n)
            return {"evidence": [{**asdict(e), "sources": list(e.sources)} for e in items]}
        found = await gateway.search(
            owner,
            a.query,
            n=a.n,
            tags_all=tuple(a.tags_all),
            tags_any=tuple(a.tags_any),
            include_candidates=a.include_candidates,
        )
        return {"memories": [_record(m) for m in found]}

    async def newest(owner: str, n: int, tags_all: tuple[str, ...], include_candidates: bool) -> dict[str, Any]:
        # The owner's last `n` matching memories by creation time (Recall's time_ordered mode,
        # as Fay's retrieve in time order), newest first.
        found = await gateway.search(
            owner, "", n=n, tags_all=tags_all, include_candidates=include_candidates, time_ordered=True
        )
        found.sort(key=lambda m: m.created, reverse=True)
        return {"memories": [_record(m) for m in found]}

    async def recent(a: RecentArgs, owner: str) -> dict[str, Any]:
        return await newest(owner, a.n, tuple(a.tags_all), a.include_candidates)

    async def reflections(a: ReflectionArgs, owner: str) -> dict[str, Any]:
        return await newest(owner, a.n, REFLECTION_TAGS, a.include_candidates)

    async def rules(_a: NoArgs, owner: str) -> dict[str, Any]:
        found = await gateway.active_rules(owner)
        return {"rules": [{"id": m.id, "content": m.content, "tags": list(m.tags), "key": m.key} for m in found]}

    async def profile(_a: NoArgs, owner: str) -> dict[str, Any]:
        p = await gateway.user_profile(owner)
        return {
            "portrait": p.portrait,
            "facts": list(p.facts),
            "pending_evidence": p.pending_evidence,
            "updated": p.updated,
        }

    async def schema(_a: NoArgs, _owner: str) -> dict[str, Any]:
        return describe_schema()

    add(
        "memory_remember",
        "Store a memory about the bound owner (kind, persistent, source and extra tags as "
        "memory_get_schema describes). Written as a candidate unless this server takes confirmed writes.",
        RememberArgs,
        remember,
    )
    add(
        "memory_search",
        "Semantic search in the owner's memories, with tag filters. Confirmed memories only unless include_candidates. "
        "With evidence: true, the evidence for a question over the owner's whole history instead (heard turns and "
        "memories with their absolute date and source turn ids).",
        SearchArgs,
        search,
    )
    add("memory_get_recent", "The owner's most recent memories, newest first.", RecentArgs, recent)
    add(
        "memory_get_active_rules",
        f"All active rules of the owner ({RULE_TAG} + {PERSISTENT_TAG}): load them before a task.",
        NoArgs,
        rules,
    )
    add(
        "memory_get_reflections",
        "The owner's recent reflections (kind:insight from source:fay_reflection), newest first.",
        ReflectionArgs,
        reflections,
    )
    add("memory_get_user_profile", "The owner's portrait and profile facts ('kind:key=value').", NoArgs, profile)
    add(
        "memory_get_schema",
        "The memory model: node types, statuses, kinds, tag namespaces and rules; call it before writing.",
        NoArgs,
        schema,
        guest_ok=True,
    )
    return registry


async def call_tool(
    registry: ToolRegistry, name: str, args: dict[str, Any] | None, owner: str, timeout: float = 10.0
) -> tuple[str, bool]:
    """Run one tool for `owner`: (text, is_error). Never raises for a tool's own failure."""
    tool = registry.get(name)
    if tool is None:
        return f"unknown tool {name!r}; available: {', '.join(registry.names())}", True
    args = {} if args is None else args  # a call without arguments
    if not isinstance(args, dict):
        return f"{name}: arguments must be an object", True
    try:
        text = await asyncio.wait_for(tool.executor(dict(args), ToolContext(owner=owner, question="")), timeout)
    except TimeoutError:
        return f"{name}: no answer within {timeout:g}s", True
    except MemoryUnavailable as exc:
        return f"memory is unavailable right now ({exc})", True
    except ToolError as exc:
        return str(exc), True
    return text, False


# -- the MCP server --------------------------------------------------------------------------

OwnerOf = Callable[[Any], str]


def fixed_owner(owner: str) -> OwnerOf:
    """Stdio: one client, the owner given on the command line."""
    return lambda _ctx: owner


def token_owner(ctx: Any) -> str:
    """Streamable HTTP: the owner of the bearer token this request was authenticated with
    (`TokenOwners.verify_token` put it into the access token's subject). No token, no owner."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None) or {}
    user = scope.get("user")
    token = getattr(user, "access_token", None)
    if token is None:
        raise ToolError("this request is not authenticated")
    return str(token.subject or "")


def build_server(registry: ToolRegistry, owner_of: OwnerOf, *, timeout: float = 10.0, version: str = "") -> Any:
    """The MCP low-level server listing and running the registry's tools."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    async def list_tools(_ctx: Any, _params: Any) -> Any:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=input_schema(t))
                for t in registry.llm_tools()
            ]
        )

    async def run_tool(ctx: Any, params: Any) -> Any:
        try:
            owner = owner_of(ctx)
        except ToolError as exc:
            text, failed = str(exc), True
        else:
            text, failed = await call_tool(registry, params.name, params.arguments, owner, timeout)
        # the log names the tool and the outcome, never arguments or memory content
        log.info("tool %s: %s", params.name, "refused/failed" if failed else "ok")
        structured = None if failed else json.loads(text)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=structured, is_error=failed
        )

    return Server(
        SERVER_NAME,
        version=version,
        instructions="Fay's long-term memory of one person. " + OWNER_NOTE,
        on_list_tools=list_tools,
        on_call_tool=run_tool,
    )


class TokenOwners:
    """The MCP SDK's TokenVerifier over the access file (fay_ros.web.access): a known token
    becomes an access token whose subject is the owner it is bound to ("" = guest)."""

    def __init__(self, access: Any) -> None:
        self._access = access

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        client = self._access.lookup(token)
        if client is None:
            return None
        index = self._access.clients.index(client)
        return AccessToken(token=token, client_id=f"client-{index}", scopes=[], subject=client.user_id)


def http_app(server: Any, access: Any, host: str, port: int) -> Any:
    """The streamable-HTTP ASGI app at /mcp: every request needs `Authorization: Bearer <token>`
    from the access file (401 otherwise); Host/Origin checked against loopback and the access
    file's origins (DNS rebinding)."""
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    origins = [f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"http://[::1]:{port}"]
    if host not in ("127.0.0.1", "localhost", "::1"):
        hosts.append(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins + list(access.origins)
    )
    shown = f"[{host}]" if ":" in host else host
    auth = AuthSettings(issuer_url=AnyHttpUrl(f"http://{shown}:{port}"), resource_server_url=None)
    return server.streamable_http_app(
        host=host, transport_security=security, auth=auth, token_verifier=TokenOwners(access)
    )
