"""The slow-changing user profile (seed 001, kept simple).

- facts: "kind:key=value" lines from the owner's confirmed keyed memories (always current).
- portrait: a short description of the person, rebuilt only when enough new evidence has
  accumulated: at least `min_evidence` confirmed memories from *distinct* turns since the last
  rebuild, and at least `min_interval` seconds after it. One turn never rebuilds it, however
  many memories it wrote. Candidates and the memory node's own transcripts are not evidence.
- With an LLM the portrait is a rewrite of the previous one in the light of the new evidence
  ("keep what is still supported"); without one it is a plain summary of confirmed memories.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..llm.client import ChatClient
from .backend import MemoryBackend
from .model import CONFIRMED, CONVERSATION_SOURCE_TAG, MemoryNode

PORTRAIT_PROMPT = (
    "You keep a short portrait of one person for a companion robot: who they are, what they "
    "like and dislike, how to treat them. Rewrite the previous portrait in the light of the new "
    "evidence: keep what is still supported, change only what the evidence clearly supports, "
    "never guess. At most 120 words (or 200 Chinese characters), plain text, in the language "
    "of the evidence."
)


@dataclass(frozen=True)
class ProfileSettings:
    min_evidence: int = 5
    min_interval: float = 3600.0
    max_facts: int = 50


@dataclass
class Profile:
    portrait: str = ""
    facts: list[str] = field(default_factory=list)
    pending_evidence: int = 0
    updated: float = 0.0


def evidence_groups(nodes: list[MemoryNode]) -> int:
    """Distinct turns among `nodes`: memories written in one turn count once."""
    groups: set[tuple[str | int, ...]] = set()
    for node in nodes:
        if node.source_session or node.source_turn:
            groups.add(("turn", node.source_session, node.source_turn))
        else:
            groups.add(("node", node.id))
    return len(groups)


class ProfileKeeper:
    def __init__(self, store: MemoryBackend, settings: ProfileSettings) -> None:
        self.store = store
        self.settings = settings

    def _state(self, owner: str) -> dict:
        return self.store.get_state("profiles", owner)

    def _memories(self, owner: str, **kw) -> list[MemoryNode]:
        """Confirmed memories, not the transcripts the memory node recorded itself."""
        return [n for n in self.store.list(owner, statuses=[CONFIRMED], **kw) if CONVERSATION_SOURCE_TAG not in n.tags]

    def evidence(self, owner: str) -> list[MemoryNode]:
        """Confirmed memories (not raw transcripts) written since the last rebuild."""
        mark = float(self._state(owner).get("evidence_mark", 0.0))
        return self._memories(owner, created_after=mark, newest_first=False)

    def facts(self, owner: str) -> list[str]:
        nodes = self._memories(owner, newest_first=True)
        lines = []
        for node in nodes:
            if node.key:
                lines.append(f"{node.kind}:{node.key}={node.content}")
        return lines[: self.settings.max_facts]

    def get(self, owner: str) -> Profile:
        state = self._state(owner)
        return Profile(
            portrait=state.get("portrait", ""),
            facts=self.facts(owner),
            pending_evidence=evidence_groups(self.evidence(owner)),
            updated=float(state.get("updated", 0.0)),
        )

    def due(self, owner: str) -> bool:
        state = self._state(owner)
        if self.store.clock() - float(state.get("updated", 0.0)) < self.settings.min_interval:
            return False
        return evidence_groups(self.evidence(owner)) >= self.settings.min_evidence

    def rebuild(self, owner: str, llm: ChatClient | None) -> Profile:
        """Rebuild the portrait now (callers check `due` first). Raises LlmError if the LLM fails."""
        state = self._state(owner)
        evidence = self.evidence(owner)
        if not evidence:
            return self.get(owner)
        mark = max(n.created for n in evidence)
        if llm is not None and llm.configured:
            facts = "\n".join(f"- {line}" for line in self.facts(owner)) or "(none)"
            items = "\n".join(f"- {n.content}" for n in evidence[-60:])
            portrait = llm.complete(
                PORTRAIT_PROMPT,
                f"Previous portrait:\n{state.get('portrait') or '(none)'}\n\n"
                f"Known facts:\n{facts}\n\nNew evidence:\n{items}",
            ).strip()
        else:
            portrait = self.plain_portrait(owner)
        self.store.set_state(
            "profiles",
            owner,
            portrait=portrait[:2000],
            updated=self.store.clock(),
            evidence_mark=mark,
            rebuilds=int(state.get("rebuilds", 0)) + 1,
        )
        return self.get(owner)

    def plain_portrait(self, owner: str) -> str:
        """Without an LLM: the confirmed rules, preferences and facts, most important first."""
        nodes = [n for n in self._memories(owner, newest_first=True) if n.node_type != "reflection"]
        sections = {"rule": "Rules", "preference": "Preferences", "fact": "Facts", "decision": "Decisions", "": "Notes"}
        parts = []
        for kind, title in sections.items():
            items = sorted((n for n in nodes if n.kind == kind), key=lambda n: -n.importance)[:6]
            if items:
                parts.append(f"{title}: " + "; ".join(n.content for n in items))
        return ". ".join(parts)

    def invalidate(self, owner: str) -> None:
        """After a forget: the portrait may mention what was forgotten, so drop it and count all
        remaining confirmed memories as evidence for the next rebuild."""
        if self._state(owner):
            self.store.set_state("profiles", owner, portrait="", updated=0.0, evidence_mark=0.0)
