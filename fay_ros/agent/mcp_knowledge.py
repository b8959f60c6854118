"""The knowledge tool of `fay-ros mcp` (issue 41): knowledge_search over the shared knowledge base
(`RosKnowledge` on the dialogue node's `knowledge/search` in `fay-ros mcp`), so an external agent
reads the same documents, with the same bases, k and threshold, as the conversation.

Knowledge is shared by everyone the companion serves: the tool needs no owner, a guest client
may use it, and it only reads. An argument naming a person, or one it does not declare, is
refused as for the memory tools. No rclpy in this module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import Field

from ..dialogue.knowledge_tools import MAX_K, MAX_QUESTION, check_question, passage_view
from ..dialogue.tools import Tool, ToolContext, ToolError, ToolRegistry
from ..knowledge.api import Passage
from .mcp_memory import _Args, _json, _properties, check_arguments

Search = Callable[[str, int, str], Awaitable[list[Passage]]]


class SearchArgs(_Args):
    question: str = Field(min_length=1, max_length=MAX_QUESTION, description="what to look up, in plain words")
    kb: str = Field("", max_length=100, description="a knowledge base name ('' = every configured one)")
    k: int = Field(0, ge=0, le=MAX_K, description="how many passages at most (0 = the companion's default)")


def add_knowledge_tools(registry: ToolRegistry, search: Search) -> ToolRegistry:
    """knowledge_search into the MCP server's `registry`, over `search` (question, k, kb)."""
    properties, required = _properties(SearchArgs)

    async def executor(args: dict[str, Any], _ctx: ToolContext) -> str:
        parsed = check_arguments(SearchArgs, "knowledge_search", args)
        question, k = check_question(parsed.question, parsed.k)
        try:
            found = await search(question, k, parsed.kb.strip())
        except ToolError:
            raise
        except Exception as exc:  # KnowledgeUnavailable and the like: said to the client, not raised
            raise ToolError(f"knowledge_search: {exc}") from None
        return _json({"passages": [passage_view(p) for p in found]})

    registry.add(
        Tool(
            "knowledge_search",
            "Search the companion's documents (the place's opening hours, prices, products, rules): passages, "
            "best first, each with text, source (the file), locator (page or heading) and score 0..1; an empty "
            "list when nothing reaches the threshold. Shared knowledge: no owner.",
            properties,
            executor,
            required,
        )
    )
    return registry
