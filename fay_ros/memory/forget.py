"""What a forget request refers to, within one owner's memories.

`match` finds the memories a query designates; `with_traces` adds what would bring them back
(older values of the same key, reflections distilled from them, recorded transcripts that
repeat them). Every lookup names the owner, so another owner's memories are never found.
Deleting is the service's part.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from .backend import MemoryBackend
from .model import CANDIDATE, CONFIRMED, CONVERSATION_SOURCE_TAG, SUPERSEDED, MemoryNode

# At most this many memories are offered when a semantic match is ambiguous.
MAX_SEMANTIC_MATCHES = 10

# The nouns people use for a keyed fact ("forget my address", "忘掉住址"), by a word of its key
# (a key "address" or "home_address" is named by any of them).
KEY_NOUNS = {
    "address": ("address", "home address", "住址", "地址", "家庭住址", "住的地方", "住哪"),
    "name": ("name", "名字", "姓名"),
    "birthday": ("birthday", "生日"),
    "phone": ("phone", "phone number", "电话", "手机号", "电话号码"),
    "email": ("email", "e-mail", "邮箱", "电子邮件"),
    "job": ("job", "work", "occupation", "工作", "职业"),
    "age": ("age", "年龄"),
    "family": ("family", "家人", "家庭"),
    "plan": ("plan", "plans", "计划", "安排"),
    "taste": ("taste", "tastes", "口味"),
}
# The nouns for a kind: a bare one designates every memory of that kind (then confirmation).
KIND_NOUNS = {
    "preference": ("preference", "preferences", "偏好", "喜好"),
    "rule": ("rule", "rules", "规则"),
    "fact": ("fact", "facts", "事实"),
    "event": ("event", "events", "事件"),
    "decision": ("decision", "decisions", "决定"),
}
_KEY_SPLIT = re.compile(r"[:_\-\s/.]+")


def _norm_text(text: str) -> str:
    """Case-folded NFKC text without punctuation, spaces, symbols or control characters."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in text if unicodedata.category(c)[0] not in ("P", "Z", "C", "S"))


def _bigrams(text: str) -> set[str]:
    t = _norm_text(text)
    if len(t) < 2:
        return {t} if t else set()
    return {t[i : i + 2] for i in range(len(t) - 1)}


class ForgetMatcher:
    def __init__(
        self,
        store: MemoryBackend,
        *,
        min_similarity: float = 0.35,
        margin: float = 0.15,
        transcript_overlap: float = 0.6,
    ) -> None:
        self.store = store
        self.min_similarity = min_similarity
        self.margin = margin
        self.transcript_overlap = transcript_overlap

    def match(self, owner: str, query: str) -> list[MemoryNode]:
        """Active (confirmed or candidate) memories the query designates, not counting the
        transcripts the memory node recorded itself: by key, by a noun naming a key ("住址",
        "address": KEY_NOUNS), by a bare kind noun ("偏好", "rules"), exact content, contained
        text, tag, then semantic similarity."""
        active = [
            n for n in self.store.list(owner, statuses=[CONFIRMED, CANDIDATE]) if CONVERSATION_SOURCE_TAG not in n.tags
        ]
        if not active:
            return []
        q = _norm_text(query)
        by_key = [
            n
            for n in active
            if n.key
            and (
                _norm_text(n.key) == q
                or _norm_text(f"{n.kind}:{n.key}") == q
                or (len(_norm_text(n.key)) >= 2 and _norm_text(n.key) in q)
            )
        ]
        if by_key:
            return by_key
        named = self._named_keys(q)
        by_noun = [n for n in active if n.key and named & _key_words(n.key)]
        if by_noun:
            return by_noun
        kinds = {kind for kind, nouns in KIND_NOUNS.items() if q in {_norm_text(x) for x in nouns}}
        by_kind = [n for n in active if n.kind in kinds]
        if by_kind:
            return by_kind
        exact = [n for n in active if _norm_text(n.content) == q]
        if exact:
            return exact
        contained = [
            n
            for n in active
            if len(q) >= 2
            and (q in _norm_text(n.content) or (len(_norm_text(n.content)) >= 2 and _norm_text(n.content) in q))
        ]
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

    @staticmethod
    def _named_keys(q: str) -> set[str]:
        """The key words a query names by a noun ("住址", "my address" -> {"address"})."""
        out = set()
        for word, nouns in KEY_NOUNS.items():
            if any(len(_norm_text(noun)) >= 2 and _norm_text(noun) in q for noun in nouns):
                out.add(word)
        return out

    def transcripts_repeating(self, owner: str, old: list[MemoryNode], new: MemoryNode) -> list[MemoryNode]:
        """The recorded transcripts (still confirmed) that state the values `old` held: their
        words repeat an old value (bigram overlap) more than the `new` one, or the old value
        was written during their turn. When `new` supersedes `old` they stop counting as facts."""
        # Only the turns since the oldest value was stored (an hour before it: the turn that
        # stated it), so a supersede does not read every transcript the owner ever had.
        since = min(node.created for node in old) - 3600.0
        transcripts = self.store.list(
            owner, statuses=[CONFIRMED], tags_all=[CONVERSATION_SOURCE_TAG], include_expired=True, created_after=since
        )
        new_grams = _bigrams(new.content)
        stale = []
        for t in transcripts:
            t_grams = _bigrams(t.content)
            for node in old:
                grams = _bigrams(node.content)
                same_turn = bool(node.source_session) and node.source_session == t.source_session
                repeats = (
                    bool(grams)
                    and len(grams & t_grams) / len(grams) >= self.transcript_overlap
                    and (
                        len(grams & t_grams) / len(grams)
                        > (len(new_grams & t_grams) / len(new_grams) if new_grams else 0)
                    )
                )
                if same_turn or repeats:
                    stale.append(t)
                    break
        return stale

    def _vectors(self, owner: str, nodes: list[MemoryNode]) -> np.ndarray:
        return self.store.vectors(owner, nodes)

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
        transcripts = self.store.list(
            owner, statuses=[CONFIRMED, SUPERSEDED], tags_all=[CONVERSATION_SOURCE_TAG], include_expired=True
        )
        for node in list(doomed.values()):
            grams = _bigrams(node.content)
            if not grams:
                continue
            for t in transcripts:
                if t.id not in doomed and len(grams & _bigrams(t.content)) / len(grams) >= self.transcript_overlap:
                    doomed[t.id] = t
        return list(doomed.values())


def _key_words(key: str) -> set[str]:
    """The words of a key: "home_address" -> {"home", "address", "home_address"}."""
    key = key.casefold()
    return {key, *(w for w in _KEY_SPLIT.split(key) if w)}
