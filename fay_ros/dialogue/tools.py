"""Tools the dialogue's tool loop may call, and the registry that holds them.

A tool is an async function `(args: dict, ctx: ToolContext) -> str` plus a name, a
description and a JSON-schema for its arguments (what the model sees). Registering more is
one decorator:

    @registry.tool("weather", "Weather for a city", {"city": {"type": "string"}})
    async def weather(args, ctx): ...

The session's identity lives in `ToolContext` and is never read from model output: the
memory tools' schemas have no `owner`, and any `owner` the model puts in the arguments is
dropped before the tool runs. Memory goes through a `MemoryGateway` (the node implements it
with the memory/* ROS services); when it is absent the tools answer that memory is
unavailable instead of failing the turn.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..common.errors import FayError
from ..knowledge.api import Passage
from ..memory.policy import is_explicit_request
from ..memory.reminder_service import Reminders
from ..text.words import spoken_words

log = logging.getLogger("fay_ros.dialogue")

# Argument names that identify a person: always injected from the session, never from the model.
IDENTITY_ARGS = ("owner", "user_id", "user")


RECALL_TOOL_TIMEOUT = 5.0  # the memory_recall tool's own bound per call (the tool loop bounds the tool too)


class MemoryUnavailable(FayError):
    """The memory services are not running (or did not answer in time)."""


@dataclass(frozen=True)
class Memory:
    id: str
    content: str
    status: str = "confirmed"
    score: float = 0.0
    node_type: str = ""
    tags: tuple[str, ...] = ()
    key: str = ""
    # An evidence item (MemoryGateway.search_evidence; node_type "turn" or "memory") also has
    # its words as said or written (`content` is then the rendered line, the date first), the
    # ISO day it is about, the day it was said, and for a turn who said it ("user" /
    # "assistant"); status "superseded" marks an earlier value of a fact (history).
    text: str = ""
    date: str = ""
    said: str = ""
    speaker: str = ""

    @property
    def is_evidence(self) -> bool:
        return bool(self.date)

    @classmethod
    def of_evidence(cls, item: Any, rendered: str) -> Memory:
        """An evidence item (fay_msgs Evidence or memory.evidence.Evidence: the same fields) with
        its rendered line (the absolute date first) as the content."""
        return cls(
            item.id,
            rendered,
            item.status or "confirmed",
            float(item.score),
            item.kind,
            text=item.text,
            date=item.date or item.said,
            said=item.said,
            speaker=item.speaker,
        )


@dataclass(frozen=True)
class MemoryResult:
    success: bool
    message: str
    memories: tuple[Memory, ...] = ()
    needs_confirmation: bool = False


class MemoryGateway(Protocol):
    async def recall(self, owner: str, query: str, n: int = 5, *, stateless: bool = False) -> list[Memory]:
        """`stateless`: read without marking the memories retrieved (a speculative probe)."""
        ...

    async def search_evidence(self, owner: str, query: str, n: int = 5) -> list[Memory]:
        """The evidence for `query` over the owner's whole history (heard turns and memories,
        current and superseded), each with its absolute date (`Memory.is_evidence`). Read-only.
        Optional: `recall_evidence` falls back to `recall` for a gateway without it."""
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
    async def forget(self, owner: str, query: str = "", memory_id: str = "") -> MemoryResult: ...
    async def active_rules(self, owner: str) -> list[Memory]: ...
    async def profile(self, owner: str) -> list[str]:
        """The owner's profile facts, "kind:key=content" lines (confirmed keyed memories)."""
        ...


class NoMemory:
    """The gateway used when no memory is configured: every call is 'unavailable'."""

    async def recall(self, owner: str, query: str, n: int = 5, *, stateless: bool = False) -> list[Memory]:
        raise MemoryUnavailable("memory is not configured")

    async def search_evidence(self, owner: str, query: str, n: int = 5) -> list[Memory]:
        raise MemoryUnavailable("memory is not configured")

    async def remember(self, owner: str, content: str, **_kw: Any) -> MemoryResult:
        raise MemoryUnavailable("memory is not configured")

    async def forget(self, owner: str, query: str = "", memory_id: str = "") -> MemoryResult:
        raise MemoryUnavailable("memory is not configured")

    async def active_rules(self, owner: str) -> list[Memory]:
        raise MemoryUnavailable("memory is not configured")

    async def profile(self, owner: str) -> list[str]:
        raise MemoryUnavailable("memory is not configured")


# Statuses a prompt may show: a candidate (an unconfirmed guess) never reaches one.
SHOWN_STATUSES = ("confirmed", "superseded")


async def recall_evidence(
    memory: MemoryGateway, owner: str, query: str, n: int, timeout: float, *, stateless: bool = False
) -> list[Memory]:
    """What a turn recalls for `query`: the evidence search (dated turns and memories, a
    superseded value kept as history), or -- for a gateway without it, or a memory node that
    does not answer it -- `recall` (confirmed memories, no dates). Candidates never come back,
    nor a heard turn that says the query itself: the memory records what the person says as it
    arrives, often before this search, and the words they just said are no memory (a tiny
    prompt carried every question twice, once as 'the user said: "…"'). Each call is bounded by
    `timeout`; MemoryUnavailable (or TimeoutError) when neither answers."""
    search = getattr(memory, "search_evidence", None)
    if search is not None:
        try:
            # one more than asked for: with the question recorded or not yet, the same n come back
            # (a speculative probe and its real turn must build the same request)
            found = await asyncio.wait_for(search(owner, query, n + 1), timeout)
        except (MemoryUnavailable, TimeoutError, NotImplementedError) as exc:
            log.debug("evidence search unavailable (%s); recalling instead", exc or type(exc).__name__)
        else:
            asked = spoken_words(query)
            return [
                m
                for m in found
                if (m.status in SHOWN_STATUSES or (m.node_type == "turn" and not m.status))
                and not (m.node_type == "turn" and spoken_words(m.text) == asked)
            ][:n]
    found = await asyncio.wait_for(memory.recall(owner, query, n, stateless=stateless), timeout)
    return [m for m in found if m.status == "confirmed"]


@dataclass(frozen=True)
class ReminderAccess:
    """What the reminder tools need (dialogue.reminder_tools): the port, the owner's time zone
    (IANA name) and the clock `when` is read against (the dialogue's: the node clock)."""

    port: Reminders
    tz: str
    clock: Callable[[], float] = time.time


class KnowledgeLookup(Protocol):
    """What the knowledge tool needs of the dialogue's knowledge desk (`knowledge_talk.KnowledgeDesk`)."""

    async def search(self, question: str, k: int = 0, kb: str = "") -> list[Passage]: ...
    def used(self, owner: str, passages: Sequence[Passage]) -> None: ...


@dataclass
class ToolContext:
    owner: str  # the session's user_id ("" = guest)
    question: str
    conversation_id: str = ""
    turn: int = 0
    language: str = ""
    memory: MemoryGateway = field(default_factory=NoMemory)
    user_name: str = ""  # what the user said their name is (from their facts; "" = not known)
    core_memory: str = ""  # the layered profile's text for every prompt of this turn (issue 35)
    # False: the owner's profile could not be read this turn (memory out of reach) and no
    # earlier read of this session stands in; "you haven't told me" would then be untrue
    profile_read: bool = True
    # the user's safety facts (allergies, medication, conditions; key -> content): in every
    # prompt of the turn, and the reply guard drops a sentence that goes against them
    safety_facts: dict[str, str] = field(default_factory=dict)
    # all the user's known facts (key -> content): a reply sentence that says otherwise is
    # replaced by the fact (the reply guard)
    facts: dict[str, str] = field(default_factory=dict)
    # the user's plans whose days have gone by (key -> content): for the fact answers only, never
    # a prompt (`TurnContext.gone_plans`)
    gone_plans: dict[str, str] = field(default_factory=dict)
    # the reminders port, zone and clock (issue 36; dialogue.reminder_tools): None = no reminders
    reminders: ReminderAccess | None = None
    # a scheduled or proactive turn (nobody asked): it creates and cancels no reminder
    scheduled: bool = False
    # the shared knowledge base (issue 41; dialogue.knowledge_talk): None = no documents
    knowledge: KnowledgeLookup | None = None
    # the tools this speaker's role may use (dialogue.people, by server-bound identity): a call
    # of any other is refused when it runs, whoever asked for it; None = no identity limit
    allowed_tools: tuple[str, ...] | None = None
    # the speaker card and the voice examples of this turn (style.addressing_blocks): in the
    # system prompt of every answer, never in the history
    addressing: tuple[str, ...] = ()


Executor = Callable[[dict[str, Any], ToolContext], Awaitable[str]]


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema "properties"
    executor: Executor
    required: tuple[str, ...] = ()
    callable_by_llm: bool = True  # False: prestart-only

    def schema(self) -> dict[str, Any]:
        """The OpenAI `tools` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {"type": "object", "properties": self.parameters, "required": list(self.required)},
            },
        }


class ToolError(FayError):
    pass


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def add(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    def tool(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any] | None = None,
        *,
        required: tuple[str, ...] = (),
        callable_by_llm: bool = True,
    ) -> Callable[[Executor], Executor]:
        def decorate(fn: Executor) -> Executor:
            self.add(Tool(name, description, parameters or {}, fn, required, callable_by_llm))
            return fn

        return decorate

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def llm_tools(self, allowed: list[str] | None = None) -> list[Tool]:
        return [t for t in self._tools.values() if t.callable_by_llm and (allowed is None or t.name in allowed)]

    async def run(self, name: str, args: dict[str, Any], ctx: ToolContext, timeout: float = 10.0) -> str:
        tool = self._tools.get(name)
        if tool is None:
            raise ToolError(f"unknown tool {name!r}; available: {', '.join(self.names())}")
        if ctx.allowed_tools is not None and name not in ctx.allowed_tools:
            log.info("tool %s refused: not in the speaker's tool set", name)
            raise ToolError(f"tool {name!r} is not allowed for this speaker")
        clean = {k: v for k, v in args.items() if k not in IDENTITY_ARGS}
        missing = [r for r in tool.required if r not in clean]
        if missing:
            raise ToolError(f"tool {name!r} needs argument(s) {missing}")
        try:
            return str(await asyncio.wait_for(tool.executor(clean, ctx), timeout))
        except TimeoutError:
            raise ToolError(f"tool {name!r} did not finish within {timeout:g}s") from None
        except MemoryUnavailable as exc:
            return f"memory is unavailable right now ({exc})"


def canonical_call(name: str, args: dict[str, Any]) -> str:
    """Identity of a call for the no-repeat guard (same name + same arguments)."""
    clean = {k: v for k, v in args.items() if k not in IDENTITY_ARGS}
    return name + json.dumps(clean, sort_keys=True, ensure_ascii=False)


# -- built-in tools -------------------------------------------------------------------------


async def _current_time(args: dict[str, Any], ctx: ToolContext) -> str:
    now = datetime.datetime.now().astimezone()
    weekday = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"][now.weekday()]
    return f"{now:%Y-%m-%d %H:%M} ({weekday}, {now.tzname()})"


def _guest_refusal(ctx: ToolContext) -> str | None:
    return "this speaker is not identified (guest): there is no private memory" if not ctx.owner else None


async def _memory_recall(args: dict[str, Any], ctx: ToolContext) -> str:
    if (refusal := _guest_refusal(ctx)) is not None:
        return refusal
    query = str(args.get("query") or ctx.question)
    # dated evidence ("[2026-11-02] (said 2026-11-03) User: ..."; a superseded value marked as
    # history) when the memory offers it, else the confirmed memories
    memories = await recall_evidence(ctx.memory, ctx.owner, query, int(args.get("n") or 5), RECALL_TOOL_TIMEOUT)
    if not memories:
        return "no matching memories"
    return "\n".join(f"- {m.content}" for m in memories)


async def _memory_remember(args: dict[str, Any], ctx: ToolContext) -> str:
    if (refusal := _guest_refusal(ctx)) is not None:
        return refusal
    content = str(args.get("content") or "").strip()
    if not content:
        raise ToolError("memory_remember needs 'content'")
    # A fact about the person (an observation tagged kind:fact), not a raw conversation record:
    # the memory policy supersedes it by owner + kind + key when the fact changes.
    result = await ctx.memory.remember(
        ctx.owner,
        content,
        node_type="observation",
        tags=("kind:fact", "source:fay_dialogue"),
        key=str(args.get("key") or ""),
        # the user asked in words ("记住…") only if the model says so AND the words are there,
        # by the same rule the memory node checks heard words with
        user_confirmed=bool(args.get("user_asked")) and is_explicit_request(ctx.question),
        source_session=ctx.conversation_id,
        source_turn=ctx.turn,
    )
    return result.message or ("stored" if result.success else "not stored")


async def _memory_forget(args: dict[str, Any], ctx: ToolContext) -> str:
    if (refusal := _guest_refusal(ctx)) is not None:
        return refusal
    result = await ctx.memory.forget(ctx.owner, query=str(args.get("query") or ""), memory_id=str(args.get("id") or ""))
    if result.needs_confirmation:
        listed = "; ".join(m.content for m in result.memories)
        return f"several memories match, ask the user which one to forget: {listed}"
    return result.message or ("forgotten" if result.success else "nothing forgotten")


def base_tools() -> ToolRegistry:
    """The clock and memory tools (`toolbox.builtin_tools` adds the reminder tools)."""
    registry = ToolRegistry()
    registry.add(Tool("current_time", "Current local date, time and weekday.", {}, _current_time))
    registry.add(
        Tool(
            "memory_recall",
            "Recall what you know about the current user: dated lines (the day it is about first) of what "
            "they said and what you noted; a line marked superseded is an earlier value, not the current one.",
            {"query": {"type": "string", "description": "what to look for"}},
            _memory_recall,
        )
    )
    registry.add(
        Tool(
            "memory_remember",
            "Store a fact about the current user.",
            {
                "content": {"type": "string", "description": "the fact, one sentence"},
                "key": {"type": "string", "description": "optional key of an updatable fact"},
                "user_asked": {"type": "boolean", "description": "the user explicitly asked you to remember"},
            },
            _memory_remember,
            required=("content",),
        )
    )
    registry.add(
        Tool(
            "memory_forget",
            "Forget something about the current user.",
            {"query": {"type": "string", "description": "what to forget"}},
            _memory_forget,
            required=("query",),
        )
    )
    return registry
