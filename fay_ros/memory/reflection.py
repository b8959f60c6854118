"""Reflection: the LLM distils insights from recent memories (Generative Agents / Fay).

Due when the importance of an owner's memories since the last reflection passes a threshold
(Generative Agents uses 150), or on a schedule. Only confirmed memories are reflected on, so
a guess never turns into an insight. Each insight points to the records it cites (records it
cites that do not exist are dropped; an insight citing none is dropped) and inherits their
tags minus session:/date:/schedule:, plus kind:insight + source:fay_reflection.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

from ..llm.client import ChatClient, LlmMalformed
from .backend import MemoryBackend
from .model import CANDIDATE, CONFIRMED, MemoryNode, inherited_tags

SYSTEM_PROMPT = (
    "You distil insights about one person from their memory records. Answer with JSON only: "
    '{{"insights": [{{"insight": "<one sentence>", "sources": [<record numbers>]}}]}}. '
    "Give at most {max_insights} insights. Every insight must cite the numbered records it is "
    "based on and must not claim anything the records do not support. Write each insight in "
    "the language of its records."
)


@dataclass(frozen=True)
class ReflectionSettings:
    threshold: float = 150.0
    max_sources: int = 100
    max_insights: int = 5
    min_sources: int = 3
    status: str = CANDIDATE


class Reflector:
    def __init__(self, store: MemoryBackend, llm: ChatClient, settings: ReflectionSettings) -> None:
        self.store = store
        self.llm = llm
        self.settings = settings

    def _mark(self, owner: str) -> float:
        return float(self.store.get_state("reflection_state", owner).get("mark", 0.0))

    def pending(self, owner: str) -> list[MemoryNode]:
        """Confirmed memories (not reflections) created since the last reflection, oldest first."""
        nodes = self.store.list(
            owner,
            statuses=[CONFIRMED],
            node_types=["observation", "conversation"],
            created_after=self._mark(owner),
            newest_first=True,
            limit=self.settings.max_sources,
        )
        return list(reversed(nodes))

    def pending_importance(self, owner: str) -> float:
        return sum(n.importance for n in self.pending(owner))

    def due(self, owner: str) -> bool:
        return self.llm.configured and self.pending_importance(owner) >= self.settings.threshold

    def reflect(self, owner: str) -> list[MemoryNode]:
        """Ask the LLM for insights about the owner's pending memories and store them.
        Raises LlmError when the LLM cannot be used (nothing is stored then)."""
        sources = self.pending(owner)
        if len(sources) < self.settings.min_sources:
            return []
        records = "\n".join(f"{i + 1}. {node.content}" for i, node in enumerate(sources))
        answer = self.llm.complete_json(
            SYSTEM_PROMPT.format(max_insights=self.settings.max_insights), f"Records:\n{records}"
        )
        insights = answer.get("insights")
        if not isinstance(insights, list):
            raise LlmMalformed("reflection answer has no 'insights' list")
        now = self.store.clock()
        new_nodes: list[MemoryNode] = []
        for item in insights[: self.settings.max_insights]:
            if not isinstance(item, dict):
                continue
            text = str(item.get("insight", "")).strip()
            cited = item.get("sources", [])
            if not text or not isinstance(cited, list):
                continue
            picked = []
            for number in cited:
                if isinstance(number, int) and 1 <= number <= len(sources) and sources[number - 1] not in picked:
                    picked.append(sources[number - 1])
            if not picked or self.store.find_content(owner, text, [CONFIRMED, CANDIDATE]):
                continue
            importance = min(10.0, round(statistics.fmean(n.importance for n in picked) + 1.0, 1))
            new_nodes.append(
                MemoryNode(
                    owner=owner,
                    content=text[:2000],
                    node_type="reflection",
                    importance=importance,
                    created=now,
                    last_retrieved=now,
                    pointer_ids=[n.id for n in picked],
                    tags=inherited_tags([n.tags for n in picked]),
                    status=self.settings.status,
                )
            )
        vectors: np.ndarray | list[np.ndarray] = (
            self.store.embedder.embed([n.content for n in new_nodes]) if new_nodes else []
        )
        self.store.write(add=list(zip(new_nodes, vectors)))
        self.store.set_state("reflection_state", owner, mark=max(n.created for n in sources), last_run=now)
        return new_nodes
