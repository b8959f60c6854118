"""The knowledge base as a tool (issue 41): `knowledge_search` for the dialogue's tool loop,
and the view of a passage that `fay-ros mcp` and the ROS service answer with as well.

Knowledge is shared: the tool needs no owner, so a guest may use it, and it only reads. The
passages it returned are what the turn's answer was taken from ("where does that come from?",
`KnowledgeDesk.used`).
"""

from __future__ import annotations

import time
from typing import Any

from ..knowledge.api import DocumentInfo, Passage
from .knowledge_talk import where_words
from .tools import Tool, ToolContext, ToolError, ToolRegistry

UNAVAILABLE = "the knowledge base is not configured here (no documents to search)"
MAX_QUESTION = 500
MAX_K = 20


def passage_view(p: Passage) -> dict[str, Any]:
    """A passage as a tool or a client sees it (the fields of `knowledge search --json`)."""
    return {"text": p.text, "source": p.source, "locator": p.locator, "score": round(p.score, 4), "kb": p.kb}


def document_view(d: DocumentInfo) -> dict[str, Any]:
    """An indexed (or refused) file as the admin page shows it: indexed_local is "" when it never indexed."""
    shown = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(d.indexed_at)) if d.indexed_at else ""
    return {
        "kb": d.kb,
        "source": d.source,
        "chunks": d.chunks,
        "indexed_at": d.indexed_at,
        "indexed_local": shown,
        "error": d.error,
    }


def check_question(question: str, k: int) -> tuple[str, int]:
    """The question and k a caller may ask for, or ToolError saying what is wrong."""
    question = question.strip()
    if not question:
        raise ToolError("knowledge_search needs 'question' (what to look up in the documents)")
    if len(question) > MAX_QUESTION:
        raise ToolError(f"knowledge_search: 'question' is longer than {MAX_QUESTION} characters")
    if not 0 <= k <= MAX_K:
        raise ToolError(f"knowledge_search: 'k' must be 1..{MAX_K} (0 = the default)")
    return question, k


async def _knowledge_search(args: dict[str, Any], ctx: ToolContext) -> str:
    if ctx.knowledge is None:
        raise ToolError(UNAVAILABLE)
    try:
        k = int(args.get("k") or 0)
    except (TypeError, ValueError):
        raise ToolError("knowledge_search: 'k' must be a whole number") from None
    question, k = check_question(str(args.get("question") or ctx.question), k)
    found = await ctx.knowledge.search(question, k, str(args.get("kb") or ""))
    ctx.knowledge.used(ctx.owner, found)
    if not found:
        return "nothing in the documents matches: tell the user you don't have that in your documents"
    return "\n".join(f"- ({where_words(p, False)}; score {p.score:.2f}) {p.text}" for p in found)


def add_knowledge_tools(registry: ToolRegistry) -> ToolRegistry:
    """`knowledge_search` into the dialogue's `registry` (it answers 'not configured' without a store)."""
    registry.add(
        Tool(
            "knowledge_search",
            "Search this place's documents (opening hours, prices, products, rules): passages with their "
            "source. Use it for any question about the place; answer only from what it returns.",
            {
                "question": {"type": "string", "description": "what to look up, in the user's words"},
                "kb": {"type": "string", "description": "a knowledge base name ('' = all configured)"},
            },
            _knowledge_search,
            required=("question",),
        )
    )
    return registry
