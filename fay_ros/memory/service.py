"""MemoryService: the memory node's core, without ROS. Remember / recall / forget /
active rules / profile, and the recording of conversation turns the node hears.

All policy lives here or in policy.py, so the rclpy shell only converts messages.
"""
from __future__ import annotations

import dataclasses
import datetime
import re
import unicodedata
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..dialogue.llm import ChatClient
from .model import (CANDIDATE, CONFIRMED, CONVERSATION_SOURCE_TAG, PERSISTENT_TAG, RULE_TAG, SUPERSEDED,
                    MemoryInputError, MemoryNode, is_guest, normalise_tags, tag_value)
from .policy import GUEST_REFUSAL, RememberRequest, decide_remember
from .profile import Profile, ProfileKeeper
from .reflection import Reflector
from .retrieval import DEFAULT_DECAY_PER_HOUR, Weights
from .store import MemoryStore

MAX_RECALL = 100


@dataclass
class Outcome:
    success: bool
    message: str
    nodes: list[MemoryNode] = field(default_factory=list)
    needs_confirmation: bool = False

    @property
    def node(self) -> MemoryNode | None:
        return self.nodes[0] if self.nodes else None


@dataclass(frozen=True)
class ServiceSettings:
    recall_n: int = 10
    weights: Weights = Weights()
    decay_per_hour: float = DEFAULT_DECAY_PER_HOUR
    verify_explicit: bool = True
    explicit_window: float = 120.0
    conversation_ttl: float = 90 * 86400.0
    user_label: str = "User"
    assistant_label: str = "Fay"
    forget_min_similarity: float = 0.35
    forget_margin: float = 0.15
    transcript_overlap: float = 0.6


def _norm_text(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in text if unicodedata.category(c)[0] not in ("P", "Z", "C", "S"))


def _bigrams(text: str) -> set[str]:
    t = _norm_text(text)
    if len(t) < 2:
        return {t} if t else set()
    return {t[i:i + 2] for i in range(len(t) - 1)}


class MemoryService:
    def __init__(self, store: MemoryStore, settings: ServiceSettings, reflector: Reflector,
                 profiles: ProfileKeeper, llm: ChatClient, clock: Callable[[], float] | None = None) -> None:
        self.store = store
        self.settings = settings
        self.reflector = reflector
        self.profiles = profiles
        self.llm = llm
        self.clock = clock or store.clock
        # The owner's words in the current turn (since the last reply ended): what a
        # user_confirmed write is checked against.
        self._turn_words: dict[str, list[tuple[float, str]]] = {}
        # the owner's last utterances across turns: a statement about oneself is checked
        # against these, because the dialogue writes it after its reply, when the next turn
        # may already have begun
        self._recent_words: dict[str, list[tuple[float, str]]] = {}
        self._turn_answered: set[str] = set()
        self._turn_number: dict[str, int] = {}
        # Memories written during a heard turn without source info are attributed to it, so
        # evidence from one turn counts once for the profile.
        self._session = "heard-" + uuid.uuid4().hex[:8]
        self._pending_user: dict[str, list[str]] = {}
        self._open_replies: OrderedDict[str, tuple[str, list[str]]] = OrderedDict()

    # ------------------------------------------------------------------ remember
    def heard_recently(self, owner: str) -> list[str]:
        """The owner's final transcripts of the current turn, if heard within explicit_window."""
        now = self.clock()
        return [text for when, text in self._turn_words.get(owner, ()) if now - when <= self.settings.explicit_window]

    def said_recently(self, owner: str) -> list[str]:
        """The owner's last few utterances (any turn) within explicit_window."""
        now = self.clock()
        return [text for when, text in self._recent_words.get(owner, ()) if now - when <= self.settings.explicit_window]

    def remember(self, req: RememberRequest) -> Outcome:
        if is_guest(req.owner):
            return Outcome(False, GUEST_REFUSAL)
        heard = self.heard_recently(req.owner)
        if heard and not req.source_session and not req.source_turn:
            req = dataclasses.replace(req, source_session=self._session, source_turn=self._turn_number[req.owner])
        kind = ""
        try:
            kind = tag_value(normalise_tags(req.tags), "kind")
            corrects_fact = bool(req.key.strip()) and bool(
                self.store.find_keyed(req.owner, kind, req.key.strip(), [CONFIRMED]))
            decision = decide_remember(req, heard, self.settings.verify_explicit,
                                       corrects_confirmed_fact=corrects_fact,
                                       stated_texts=self.said_recently(req.owner))
        except PermissionError as exc:
            return Outcome(False, str(exc))
        except MemoryInputError as exc:
            return Outcome(False, f"invalid request: {exc}")
        vector = self.store.embedder.embed([decision.content])[0]
        now = self.clock()
        owner = req.owner
        with self.store.lock:
            active = [CONFIRMED, CANDIDATE]
            same = [n for n in self.store.find_content(owner, decision.content, active)
                    if n.node_type == decision.node_type]
            if req.source_session or req.source_turn:
                retry = [n for n in same if (n.source_session, n.source_turn) == (req.source_session, req.source_turn)]
                if retry:
                    return Outcome(True, f"already stored {retry[0].id} (same session turn)", [retry[0]])
            keyed = self.store.find_keyed(owner, kind, decision.key, active) if decision.key else []

            if decision.status == CANDIDATE:
                confirmed_same = [n for n in same if n.status == CONFIRMED]
                if confirmed_same:
                    return Outcome(True, f"already confirmed {confirmed_same[0].id}", [confirmed_same[0]])
                if same:
                    return Outcome(True, f"already a candidate {same[0].id}", [same[0]])
                node = self._new_node(req, decision, now)
                self.store.write(add=[(node, vector)])
                return Outcome(True, f"{decision.reason}: {node.id}", [node])

            # Confirmed: promote an identical candidate, or store new; supersede older values.
            identical = next((n for n in same if not decision.key or (n.key == decision.key)), None)
            if identical is not None and identical.status == CONFIRMED:
                return Outcome(True, f"unchanged: already stored {identical.id}", [identical])
            replaced = [n for n in keyed if identical is None or n.id != identical.id]
            status_changes = []
            if identical is not None:
                # The confirming request's kind wins: one memory has one kind.
                kept = [t for t in identical.tags if not (t.startswith("kind:") and tag_value(decision.tags, "kind"))]
                node = identical.copy(status=CONFIRMED, key=decision.key or identical.key,
                                      tags=list(dict.fromkeys(kept + decision.tags)),
                                      importance=max(identical.importance, decision.importance),
                                      expires=now + req.ttl if req.ttl > 0 else identical.expires)
                adds, updates = [], [node]
                message = f"confirmed {node.id} (was a candidate)"
            else:
                node = self._new_node(req, decision, now)
                adds, updates = [(node, vector)], []
                message = f"stored {node.id}"
            for old in replaced:
                status_changes.append((owner, old.id, SUPERSEDED, node.id))
            superseded_confirmed = [o.id for o in replaced if o.status == CONFIRMED]
            if superseded_confirmed:
                message += f"; superseded {', '.join(superseded_confirmed)}"
            self.store.write(add=adds, update=updates, status=status_changes)
            return Outcome(True, message, [node])

    def _new_node(self, req: RememberRequest, decision, now: float) -> MemoryNode:
        return MemoryNode(owner=req.owner, content=decision.content, node_type=decision.node_type,
                          importance=decision.importance, created=now, last_retrieved=now, tags=decision.tags,
                          status=decision.status, key=decision.key, source_session=req.source_session,
                          source_turn=int(req.source_turn), expires=now + req.ttl if req.ttl > 0 else 0.0)

    # ------------------------------------------------------------------ recall
    def recall(self, owner: str, query: str, tags_all: list[str] = (), tags_any: list[str] = (), n: int = 0,
               include_candidates: bool = False, stateless: bool = False) -> Outcome:
        if is_guest(owner):
            return Outcome(False, GUEST_REFUSAL)
        try:
            tags_all, tags_any = normalise_tags(list(tags_all)), normalise_tags(list(tags_any))
        except MemoryInputError as exc:
            return Outcome(False, f"invalid request: {exc}")
        n = min(int(n) if n else self.settings.recall_n, MAX_RECALL)
        statuses = [CONFIRMED, CANDIDATE] if include_candidates else [CONFIRMED]
        nodes = self.store.recall(owner, query, n=n, statuses=statuses, tags_all=tags_all, tags_any=tags_any,
                                  weights=self.settings.weights, decay_per_hour=self.settings.decay_per_hour,
                                  stateless=stateless)
        message = f"{len(nodes)} memories"
        if include_candidates:
            message += " (candidates included: for review, never for answering)"
        return Outcome(True, message, nodes)

    def active_rules(self, owner: str) -> Outcome:
        if is_guest(owner):
            return Outcome(False, GUEST_REFUSAL)
        rules = self.store.list(owner, statuses=[CONFIRMED], tags_all=[RULE_TAG, PERSISTENT_TAG])
        rules.sort(key=lambda n: (-n.importance, n.created))
        return Outcome(True, f"{len(rules)} active rules", rules)

    # ------------------------------------------------------------------ forget
    def forget(self, owner: str, node_id: str = "", query: str = "", confirm_all: bool = False) -> Outcome:
        if is_guest(owner):
            return Outcome(False, GUEST_REFUSAL)
        node_id, query = (node_id or "").strip(), (query or "").strip()
        with self.store.lock:
            if node_id:
                node = self.store.get(owner, node_id)  # another owner's id is simply not found
                if node is None:
                    return Outcome(False, f"not found: no memory {node_id} for this owner")
                matches = [node]
            elif query:
                matches = self.match_forget(owner, query)
                if not matches:
                    return Outcome(False, "not found: nothing matches the query")
                if len(matches) > 1 and not confirm_all:
                    return Outcome(False, f"ambiguous: confirm ({len(matches)} memories match; "
                                          f"forget one by id or set confirm_all)", matches, needs_confirmation=True)
            else:
                return Outcome(False, "invalid request: give the id or a query of what to forget")
            deleted = self._delete_with_traces(owner, matches)
        return Outcome(True, f"deleted {len(matches)} memories"
                       + (f" and {len(deleted) - len(matches)} derived traces" if len(deleted) > len(matches) else ""),
                       deleted)

    def match_forget(self, owner: str, query: str) -> list[MemoryNode]:
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
        contained = [n for n in active if len(q) >= 2 and (q in _norm_text(n.content)
                                                           or (len(_norm_text(n.content)) >= 2 and _norm_text(n.content) in q))]
        if contained:
            return contained
        tagged = [n for n in active if query.strip().lower() in n.tags]
        if tagged:
            return tagged
        qv = self.store.embedder.embed([query])[0]
        vectors = self._vectors(owner, active)
        sims = vectors @ qv
        order = np.argsort(-sims)
        above = [i for i in order if sims[i] >= self.settings.forget_min_similarity]
        if not above:
            return []
        if len(above) == 1 or sims[above[0]] - sims[above[1]] >= self.settings.forget_margin:
            return [active[above[0]]]
        return [active[i] for i in above[:10]]

    def _vectors(self, owner: str, nodes: list[MemoryNode]) -> np.ndarray:
        index = self.store.index(owner)
        missing = [n.content for n in nodes if n.id not in index.pos]
        fresh = iter(self.store.embedder.embed(missing)) if missing else iter(())
        return np.stack([index.emb[index.pos[n.id]] if n.id in index.pos else next(fresh) for n in nodes])

    def _delete_with_traces(self, owner: str, matches: list[MemoryNode]) -> list[MemoryNode]:
        """Delete the matches and what would bring them back: older values of the same key,
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
                if t.id not in doomed and len(grams & _bigrams(t.content)) / len(grams) >= self.settings.transcript_overlap:
                    doomed[t.id] = t
        self.store.write(delete=[(owner, i) for i in doomed])
        if any(n.status == CONFIRMED for n in doomed.values()):
            self.profiles.invalidate(owner)
        return list(doomed.values())

    # ------------------------------------------------------------------ profile
    def profile(self, owner: str) -> tuple[Outcome, Profile | None]:
        if is_guest(owner):
            return Outcome(False, GUEST_REFUSAL), None
        profile = self.profiles.get(owner)
        message = "profile"
        if not profile.portrait:
            message = (f"no portrait yet: {profile.pending_evidence} of {self.profiles.settings.min_evidence} "
                       "pieces of evidence (distinct turns) collected")
        return Outcome(True, message), profile

    # ------------------------------------------------------------------ hearing
    def hear_user(self, owner: str, text: str) -> None:
        """A final transcript of the owner (speech/final)."""
        text = (text or "").strip()
        if is_guest(owner) or not text:
            return
        now = self.clock()
        if owner in self._turn_answered or owner not in self._turn_words:
            self._turn_words[owner] = []
            self._turn_answered.discard(owner)
            self._turn_number[owner] = self._turn_number.get(owner, 0) + 1
        self._turn_words[owner] = (self._turn_words[owner] + [(now, text)])[-5:]
        self._recent_words[owner] = (self._recent_words.get(owner, []) + [(now, text)])[-6:]
        pending = self._pending_user.setdefault(owner, [])
        pending.append(text)
        del pending[:-5]

    def hear_reply(self, owner: str, conversation_id: str, text: str, is_end: bool, source: str = "") -> MemoryNode | None:
        """One sentence of a reply; at is_end the exchange is stored as one conversation node."""
        if is_guest(owner) or source == "filler":
            return None
        key = f"{owner}\x00{conversation_id}"
        _owner, sentences = self._open_replies.setdefault(key, (owner, []))
        if text and text.strip():
            sentences.append(text.strip())
        while len(self._open_replies) > 64:  # replies that never ended
            self._open_replies.popitem(last=False)
        if not is_end:
            return None
        self._open_replies.pop(key, None)
        self._turn_answered.add(owner)
        user_text = " ".join(self._pending_user.pop(owner, []))
        reply = "".join(sentences) if _mostly_cjk(sentences) else " ".join(sentences)
        if not user_text and not reply:
            return None
        lines = []
        if user_text:
            lines.append(f"{self.settings.user_label}: {user_text}")
        if reply:
            lines.append(f"{self.settings.assistant_label}: {reply}")
        now = self.clock()
        day = datetime.datetime.fromtimestamp(now).strftime("%Y-%m-%d")
        tags = [CONVERSATION_SOURCE_TAG, f"date:{day}"]
        if conversation_id and not any(c.isspace() for c in conversation_id):
            tags.insert(1, f"session:{conversation_id}"[:200])
        node = MemoryNode(owner=owner, content="\n".join(lines)[:4000], node_type="conversation", importance=3.0,
                          created=now, last_retrieved=now, tags=tags, status=CONFIRMED,
                          source_session=conversation_id,
                          expires=now + self.settings.conversation_ttl if self.settings.conversation_ttl > 0 else 0.0)
        self.store.write(add=[(node, self.store.embedder.embed([node.content])[0])])
        return node

    # ------------------------------------------------------------------ background work
    def reflection_due(self, owner: str) -> bool:
        return not is_guest(owner) and self.reflector.due(owner)

    def profile_due(self, owner: str) -> bool:
        return not is_guest(owner) and self.profiles.due(owner)

    def rebuild_profile(self, owner: str) -> Profile:
        return self.profiles.rebuild(owner, self.llm if self.llm.configured else None)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _mostly_cjk(sentences: list[str]) -> bool:
    text = "".join(sentences)
    return bool(text) and len(_CJK.findall(text)) * 2 >= len(text)
