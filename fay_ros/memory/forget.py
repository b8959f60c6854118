"""What a forget request refers to, within one owner's memories.

`match` finds the memories a query designates; `with_traces` adds what would bring them back
(older values of the same key, reflections distilled from them, recorded transcripts that
repeat them). Every lookup names the owner, so another owner's memories are never found.
Deleting is the service's part.
"""
from __future__ import annotations

import unicodedata

import numpy as np

from .model import CANDIDATE, CONFIRMED, CONVERSATION_SOURCE_TAG, SUPERSEDED, MemoryNode
from .store import MemoryStore

# At most this many memories are offered when a semantic match is ambiguous.
MAX_SEMANTIC_MATCHES = 10


def _norm_text(text: str) -> str:
    """Case-folded NFKC text without punctuation, spaces, symbols or control characters."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in text if unicodedata.category(c)[0] not in ("P", "Z", "C", "S"))


def _bigrams(text: str) -> set[str]:
    t = _norm_text(text)
    if len(t) < 2:
        return {t} if t else set()
    return {t[i:i + 2] for i in range(len(t) - 1)}


class ForgetMatcher:
    def __init__(self, store: MemoryStore, *, min_similarity: float = 0.35, margin: float = 0.15,
                 transcript_overlap: float = 0.6) -> None:
        self.store = store
        self.min_similarity = min_similarity
        self.margin = margin
        self.transcript_overlap = transcript_overlap

    def match(self, owner: str, query: str) -> list[MemoryNode]:
        """Active (confirmed or candidate) memories the query designates, not counting the
        transcripts the memory node recorded itself: by key, exact content, contained text,
        tag, then semantic similarity."""
        active = [n for n in self.store.list(owner, statuses=[CONFIRMED, CANDIDATE])
                  if CONVERSATION_SOURCE_TAG not in n.tags]
        if not active:
            return []
        q = _norm_text(query)
        by_key = [n for n in active if n.key and (_norm_text(n.key) == q or _norm_text(f"{n.kind}:{n.key}") == q
                                                  or (len(_norm_text(n.key)) >= 2 and _norm_text(n.key) in q))]
        if by_key:
            return by_key
        exact = [n for n in active if _norm_text(n.content) == q]
        if exact:
            return exact
        contained = [n for n in active if len(q) >= 2 and (
            q in _norm_text(n.content) or (len(_norm_text(n.content)) >= 2 and _norm_text(n.content) in q))]
        if contained:
            return contained
        tagged = [n for n in active if query.strip().lower() in n.tags]
        if tagged:
            return tagged
        qv = self.store.embedder.embed([query])[0]
        vectors = self._vectors(owner, active)
        sims = vectors @ qv
        order = np.argsort(-sims)
        above = [i for i in order if sims[i] >= self.min_similarity]
        if not above:
            return []
        if len(above) == 1 or sims[above[0]] - sims[above[1]] >= self.margin:
            return [active[above[0]]]
        return [active[i] for i in above[:MAX_SEMANTIC_MATCHES]]

    def _vectors(self, owner: str, nodes: list[MemoryNode]) -> np.ndarray:
        index = self.store.index(owner)
        missing = [n.content for n in nodes if n.id not in index.pos]
        fresh = iter(self.store.embedder.embed(missing)) if missing else iter(())
        return np.stack([index.emb[index.pos[n.id]] if n.id in index.pos else next(fresh) for n in nodes])

    def with_traces(self, owner: str, matches: list[MemoryNode]) -> list[MemoryNode]:
        """The matches and what would bring them back: older values of the same key,
        reflections distilled from them, transcripts that repeat them."""
        doomed: dict[str, MemoryNode] = {n.id: n for n in matches}
        for node in matches:
            if node.key:
                for old in self.store.find_keyed(owner, node.kind, node.key, [SUPERSEDED, CONFIRMED, CANDIDATE]):
                    doomed.setdefault(old.id, old)
        frontier = list(doomed)
        while frontier:
            derived = self.store.pointing_to(owner, frontier)
            frontier = [d.id for d in derived if d.id not in doomed]
            for d in derived:
                doomed.setdefault(d.id, d)
        transcripts = self.store.list(owner, statuses=[CONFIRMED], tags_all=[CONVERSATION_SOURCE_TAG],
                                      include_expired=True)
        for node in list(doomed.values()):
            grams = _bigrams(node.content)
            if not grams:
                continue
            for t in transcripts:
                if t.id not in doomed and len(grams & _bigrams(t.content)) / len(grams) >= self.transcript_overlap:
                    doomed[t.id] = t
        return list(doomed.values())
