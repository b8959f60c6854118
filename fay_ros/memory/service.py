"""MemoryService: the memory node's core, without ROS, and the facade its callers use.
Remember / confirm / recall / forget / active rules / profile, the recording of conversation turns the
node hears (conversation.py), what a forget refers to (forget.py), and the background work
the scheduler hands to the node's worker (scheduler.py).

All policy lives here or in policy.py, so the rclpy shell only converts messages.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..llm.client import ChatClient, Endpoint
from .backend import MemoryBackend, open_store
from .conversation import ConversationRecorder
from .embeddings import Embedder, make_embedder

# --- turn log (issue 35) ---
from .evidence import HYBRID, Evidence, SearchWeights, TurnIndex
from .evidence import search as search_turns
from .forget import ForgetMatcher
from .layers import LayersConfig, ProfilePipeline, is_safety_fact, signals_from_turn
from .layers.core_memory import split_fact
from .layers.layer_pipeline import IngestReport
from .model import (
    CANDIDATE,
    CONFIRMED,
    NODE_TYPES,
    PERSISTENT_TAG,
    RULE_TAG,
    SUPERSEDED,
    MemoryInputError,
    MemoryNode,
    is_guest,
    normalise_tags,
    tag_value,
)
from .policy import GUEST_REFUSAL, RememberRequest, decide_remember
from .profile import Profile, ProfileKeeper, ProfileSettings
from .reflection import ReflectionSettings, Reflector
from .retrieval import DEFAULT_DECAY_PER_HOUR, Weights
from .self_facts import extract_self_facts, pronoun_context, relatives_known
from .temporal import resolve_dates
from .turn_log import ASSISTANT, USER, Turn, check_turn

# A turn listener: (the stored turn, the memories hear_turn wrote from it) -> None.
TurnListener = Callable[[Turn, list[MemoryNode]], None]
# A forget listener: (owner, the forgotten turn ids) -> None.
ForgetListener = Callable[[str, list[str]], None]
# Memories (observations, reflections) searched with the turns, newest first.
EVIDENCE_NODES = 500
log = logging.getLogger(__name__)
# --- end turn log ---

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
    # --- turn log (issue 35) ---
    # The node's own hearing (hear_user) writes the self-facts of what it hears. Off while the
    # dialogue writes them (memory/remember, attributed to the heard turn): one writer each.
    learn_heard_facts: bool = False
    # --- end turn log ---


class MemoryService:
    def __init__(
        self,
        store: MemoryBackend,
        settings: ServiceSettings,
        reflector: Reflector,
        profiles: ProfileKeeper,
        llm: ChatClient,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.reflector = reflector
        self.profiles = profiles
        self.llm = llm
        self.clock = clock or store.clock
        self.recorder = ConversationRecorder(
            self.clock,
            explicit_window=settings.explicit_window,
            conversation_ttl=settings.conversation_ttl,
            user_label=settings.user_label,
            assistant_label=settings.assistant_label,
        )
        self.forgetting = ForgetMatcher(
            store,
            min_similarity=settings.forget_min_similarity,
            margin=settings.forget_margin,
            transcript_overlap=settings.transcript_overlap,
        )
        # --- turn log (issue 35) ---
        # Called after a new turn is stored (and its self-facts written), in order; a listener
        # that raises is logged and does not stop the others. The layered profile hooks in here.
        self.turn_listeners: list[TurnListener] = []
        # Called after forget_turn, with (owner, turn ids): evidence that must be taken back.
        self.forget_listeners: list[ForgetListener] = []
        self._turn_indexes: dict[str, TurnIndex] = {}
        # Each owner's last heard words, for whom "she" or "he" means in their next (self_facts).
        self._said_before: dict[str, str] = {}
        self._heard_turns: dict[str, int] = {}  # owner -> turns heard by hear_user / hear_reply
        self._exchange_turns: dict[str, list[str]] = {}  # owner -> user turn ids awaiting the reply
        # owner -> (memory id of the last recorded exchange, its user turns, its reply turn)
        self._recorded_turns: dict[str, tuple[str, list[str], str]] = {}
        self._last_heard_turn: dict[str, str] = {}  # owner -> the last user turn hear_user stored
        # --- end turn log ---

    # ------------------------------------------------------------------ remember
    def _known_relatives(self, owner: str) -> list[tuple[str, str]]:
        """The relatives the owner's confirmed facts name ("Claire is getting married" a week
        after "my daughter Claire is a nurse": the daughter)."""
        facts = self.store.list(owner, statuses=[CONFIRMED], tags_all=["kind:fact"])
        return relatives_known({n.key: n.content for n in reversed(facts) if n.key.startswith("family:")})

    def remember(self, req: RememberRequest) -> Outcome:
        if is_guest(req.owner):
            return Outcome(False, GUEST_REFUSAL)
        heard = self.recorder.heard_recently(req.owner)
        if heard and not req.source_session and not req.source_turn:
            # written during a heard turn: attributed to it, so one turn is one piece of evidence
            session, turn = self.recorder.current_turn(req.owner)
            req = dataclasses.replace(req, source_session=session, source_turn=turn)
        kind = ""
        try:
            kind = tag_value(normalise_tags(req.tags), "kind")
            corrects_fact = bool(req.key.strip()) and bool(
                self.store.find_keyed(req.owner, kind, req.key.strip(), [CONFIRMED])
            )
            decision = decide_remember(
                req,
                heard,
                self.settings.verify_explicit,
                corrects_confirmed_fact=corrects_fact,
                stated_texts=self.recorder.said_recently(req.owner),
                known_relatives=lambda: self._known_relatives(req.owner),
            )
        except PermissionError as exc:
            return Outcome(False, str(exc))
        except MemoryInputError as exc:
            return Outcome(False, f"invalid request: {exc}")
        vector = self.store.embedder.embed([decision.content])[0]
        now = self.clock()
        owner = req.owner
        with self.store.lock:
            active = [CONFIRMED, CANDIDATE]
            same = [
                n for n in self.store.find_content(owner, decision.content, active) if n.node_type == decision.node_type
            ]
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
                if heard and owner in self._last_heard_turn:  # turn log: a candidate rests on it too
                    node.sources = [self._last_heard_turn[owner]]
                self.store.write(add=[(node, vector)])
                return Outcome(True, f"{decision.reason}: {node.id}", [node])

            # Confirmed: promote an identical candidate, or store new; supersede older values.
            identical = next((n for n in same if not decision.key or (n.key == decision.key)), None)
            if identical is not None and identical.status == CONFIRMED:
                return Outcome(True, f"unchanged: already stored {identical.id}", [identical])
            replaced = [n for n in keyed if identical is None or n.id != identical.id]
            if identical is not None:
                # The confirming request's kind wins: one memory has one kind.
                kept = [t for t in identical.tags if not (t.startswith("kind:") and tag_value(decision.tags, "kind"))]
                node = identical.copy(
                    status=CONFIRMED,
                    key=decision.key or identical.key,
                    tags=list(dict.fromkeys(kept + decision.tags)),
                    importance=max(identical.importance, decision.importance),
                    expires=now + req.ttl if req.ttl > 0 else identical.expires,
                )
                adds, updates = [], [node]
                message = f"confirmed {node.id} (was a candidate)"
            else:
                node = self._new_node(req, decision, now)
                if heard and owner in self._last_heard_turn:  # turn log: the heard turn is its evidence
                    node.sources = [self._last_heard_turn[owner]]
                adds, updates = [(node, vector)], []
                message = f"stored {node.id}"
            status_changes, superseded_confirmed = self._supersede(owner, node, replaced)
            if superseded_confirmed:
                message += f"; superseded {', '.join(superseded_confirmed)}"
            self.store.write(add=adds, update=updates, status=status_changes)
            return Outcome(True, message, [node])

    def _supersede(
        self, owner: str, node: MemoryNode, replaced: list[MemoryNode]
    ) -> tuple[list[tuple[str, str, str, str]], list[str]]:
        """The status changes when confirmed `node` replaces the other active values of its
        key (`replaced`), and the ids of the confirmed values among them."""
        status_changes = [(owner, old.id, SUPERSEDED, node.id) for old in replaced]
        old_values = [o for o in replaced if o.status == CONFIRMED]
        if old_values:
            # The recorded turns that stated an old value are no longer current facts.
            for transcript in self.forgetting.transcripts_repeating(owner, old_values, node):
                status_changes.append((owner, transcript.id, SUPERSEDED, node.id))
        return status_changes, [o.id for o in old_values]

    # ------------------------------------------------------------------ confirm
    def confirm(self, owner: str, node_id: str) -> Outcome:
        """Confirm the owner's candidate `node_id`: an operator's or the owner's decision after
        review (memory/confirm, the admin page, `fay-ros memory confirm`), taken as it is --
        unlike a Remember flagged user_confirmed, which the policy checks against the owner's
        recent words. A keyed candidate supersedes the owner's other values of its key, as a
        confirmed write does. Another owner's id is simply not found."""
        if is_guest(owner):
            return Outcome(False, GUEST_REFUSAL)
        node_id = (node_id or "").strip()
        if not node_id:
            return Outcome(False, "invalid request: give the id of the candidate to confirm")
        with self.store.lock:
            node = self.store.get(owner, node_id)
            if node is None:
                return Outcome(False, f"no candidate {node_id} of {owner}")
            if node.status == CONFIRMED:
                return Outcome(True, "already confirmed", [node])
            if node.status != CANDIDATE:
                return Outcome(
                    False,
                    f"{node_id} of {owner} is {node.status}"
                    + (f" by {node.superseded_by}" if node.superseded_by else "")
                    + ", not a candidate",
                )
            twin = next(
                (
                    n
                    for n in self.store.find_content(owner, node.content, [CONFIRMED])
                    if n.node_type == node.node_type and n.key == node.key
                ),
                None,
            )
            if twin is not None:
                # The same memory is already confirmed: the candidate adds nothing but a duplicate.
                self.store.write(status=[(owner, node.id, SUPERSEDED, twin.id)])
                return Outcome(True, f"already confirmed as {twin.id}; candidate {node.id} superseded by it", [twin])
            confirmed = node.copy(status=CONFIRMED)
            keyed = self.store.find_keyed(owner, node.kind, node.key, [CONFIRMED, CANDIDATE]) if node.key else []
            status_changes, superseded = self._supersede(owner, confirmed, [n for n in keyed if n.id != node.id])
            self.store.write(update=[confirmed], status=status_changes)
        message = "confirmed" + (f"; superseded {', '.join(superseded)}" if superseded else "")
        return Outcome(True, message, [confirmed])

    def _new_node(self, req: RememberRequest, decision, now: float) -> MemoryNode:
        return MemoryNode(
            owner=req.owner,
            content=decision.content,
            node_type=decision.node_type,
            importance=decision.importance,
            created=now,
            last_retrieved=now,
            tags=decision.tags,
            status=decision.status,
            key=decision.key,
            source_session=req.source_session,
            source_turn=int(req.source_turn),
            expires=now + req.ttl if req.ttl > 0 else 0.0,
        )

    # ------------------------------------------------------------------ recall
    def recall(
        self,
        owner: str,
        query: str,
        tags_all: Sequence[str] = (),
        tags_any: Sequence[str] = (),
        n: int = 0,
        include_candidates: bool = False,
        stateless: bool = False,
        node_type: str = "",
        time_ordered: bool = False,
    ) -> Outcome:
        """The owner's best n memories for `query` (recency + relevance + importance), of
        `node_type` only when set (Fay's retrieve filter). `time_ordered` (Fay's time-ordered
        retrieve): with an empty query, the last n matching memories by creation time; with a
        query, the best n. Either way oldest first. A time-ordered listing without a query
        retrieves nothing, so it leaves last-retrieved times alone."""
        if is_guest(owner):
            return Outcome(False, GUEST_REFUSAL)
        try:
            tags_all, tags_any = normalise_tags(list(tags_all)), normalise_tags(list(tags_any))
        except MemoryInputError as exc:
            return Outcome(False, f"invalid request: {exc}")
        node_type = (node_type or "").strip()
        if node_type and node_type not in NODE_TYPES:
            return Outcome(
                False,
                f"invalid request: node_type {node_type!r}: expected one of {', '.join(NODE_TYPES)}, or '' for any",
            )
        node_types = [node_type] if node_type else []
        n = min(int(n) if n else self.settings.recall_n, MAX_RECALL)
        statuses = [CONFIRMED, CANDIDATE] if include_candidates else [CONFIRMED]
        if time_ordered and not (query or "").strip():
            newest = self.store.list(
                owner,
                statuses=statuses,
                node_types=node_types,
                tags_all=tags_all,
                tags_any=tags_any,
                limit=n,
                newest_first=True,
            )
            nodes = newest[::-1]
        else:
            nodes = self.store.recall(
                owner,
                query,
                n=n,
                statuses=statuses,
                tags_all=tags_all,
                tags_any=tags_any,
                node_types=node_types,
                weights=self.settings.weights,
                decay_per_hour=self.settings.decay_per_hour,
                stateless=stateless,
            )
            if time_ordered:
                nodes.sort(key=lambda node: node.created)  # stable: equal times keep their rank
        message = f"{len(nodes)} memories" + (" in time order" if time_ordered else "")
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
                matches = self.forgetting.match(owner, query)
                if not matches:
                    return Outcome(False, "not found: nothing matches the query")
                if len(matches) > 1 and not confirm_all:
                    return Outcome(
                        False,
                        f"ambiguous: confirm ({len(matches)} memories match; forget one by id or set confirm_all)",
                        matches,
                        needs_confirmation=True,
                    )
            else:
                return Outcome(False, "invalid request: give the id or a query of what to forget")
            deleted = self.forgetting.with_traces(owner, matches)
            self.store.write(delete=[(owner, node.id) for node in deleted])
            if any(node.status == CONFIRMED for node in deleted):
                self.profiles.invalidate(owner)
        return Outcome(
            True,
            f"deleted {len(matches)} memories"
            + (f" and {len(deleted) - len(matches)} derived traces" if len(deleted) > len(matches) else ""),
            deleted,
        )

    # ------------------------------------------------------------------ profile
    def profile(self, owner: str) -> tuple[Outcome, Profile | None]:
        if is_guest(owner):
            return Outcome(False, GUEST_REFUSAL), None
        profile = self.profiles.get(owner)
        message = "profile"
        if not profile.portrait:
            message = (
                f"no portrait yet: {profile.pending_evidence} of {self.profiles.settings.min_evidence} "
                "pieces of evidence (distinct turns) collected"
            )
        return Outcome(True, message), profile

    # ------------------------------------------------------------------ hearing
    def hear_user(self, owner: str, text: str) -> None:
        """A final transcript (or typed input) of the owner; stored in the turn log too."""
        self.recorder.hear_user(owner, text)
        if not is_guest(owner) and (text or "").strip():
            turn_id = self._next_heard_turn(owner)
            out = self.hear_turn(
                owner,
                turn_id,
                self.clock(),
                USER,
                text,
                session=self.recorder.session,
                learn_facts=self.settings.learn_heard_facts,
            )
            if out.success:
                self._exchange_turns.setdefault(owner, []).append(turn_id)
                self._last_heard_turn[owner] = turn_id

    def hear_reply(
        self, owner: str, conversation_id: str, text: str, is_end: bool, source: str = "", replaces: str = ""
    ) -> MemoryNode | None:
        """One sentence of a reply; at is_end the exchange is stored as one conversation node.
        `replaces`: an earlier reply that never reached the owner, whose exchange is void (its
        recorded conversation is deleted; this reply's exchange has its user words)."""
        if replaces:
            void = self.recorder.void(owner, replaces)
            if void is not None:
                self.store.write(delete=[(owner, void)])
                recorded = self._recorded_turns.pop(owner, None)
                if recorded is not None and recorded[0] == void:  # its user words wait again
                    self._exchange_turns[owner] = recorded[1] + self._exchange_turns.get(owner, [])
                    if recorded[2]:  # the reply never reached them: it was not said to them
                        with self.store.lock:
                            self.store.delete_turns(owner, [recorded[2]])
                            self._turn_indexes.pop(owner, None)
        node = self.recorder.hear_reply(owner, conversation_id, text, is_end, source)
        if node is not None:
            # --- turn log (issue 35): the reply is a turn; the exchange rests on its turns ---
            answered = node.content.startswith(f"{self.settings.user_label}: ")
            sources: list[str] = self._exchange_turns.pop(owner, []) if answered else []
            user_turns = list(sources)
            said = self._assistant_words(node.content)
            reply_turn = ""
            if said:
                turn_id = self._next_heard_turn(owner)
                out = self.hear_turn(owner, turn_id, node.created, ASSISTANT, said, session=self.recorder.session)
                if out.success:
                    sources.append(turn_id)
                    reply_turn = turn_id
            if answered:
                self._recorded_turns[owner] = (node.id, user_turns, reply_turn)
            node.sources = sources
            # --- end turn log ---
            self.store.write(add=[(node, self.store.embedder.embed([node.content])[0])])
        return node

    # ------------------------------------------------------------------ turn log (issue 35)
    def _next_heard_turn(self, owner: str) -> str:
        """A turn id for a turn the node heard: this process's listening session + a counter
        per owner (unique per owner: the session id is new in every process)."""
        count = self._heard_turns.get(owner, 0) + 1
        self._heard_turns[owner] = count
        return f"{self.recorder.session}:{count}"

    def _assistant_words(self, content: str) -> str:
        label = f"{self.settings.assistant_label}: "
        if content.startswith(label):
            return content[len(label) :]
        _before, sep, after = content.partition("\n" + label)
        return after if sep else ""

    def hear_turn(
        self,
        owner: str,
        turn_id: str,
        time: float,
        speaker: str,
        text: str,
        session: str = "",
        learn_facts: bool = True,
    ) -> Outcome:
        """Store one heard turn in the turn log (idempotent by owner + turn id) and, for a user
        turn (unless `learn_facts` is false), the self-facts it states
        (self_facts.extract_self_facts) as confirmed keyed observations resting on it
        (sources=[turn_id]), written at the turn's time; a newer value of a key supersedes the
        older. Then the turn listeners. Everything derived takes `time`, never the wall clock (a
        replayed log keeps its history). Outcome.nodes: the memories written."""
        if is_guest(owner):
            return Outcome(False, GUEST_REFUSAL)
        try:
            turn = check_turn(Turn(owner, turn_id, time, speaker, text, session))
        except MemoryInputError as exc:
            return Outcome(False, f"invalid turn: {exc}")
        turn.dates = resolve_dates(turn.text, turn.time)
        vector = self.store.embedder.embed([turn.text])
        written: list[MemoryNode] = []
        with self.store.lock:
            if not self.store.add_turns([turn], vector):
                return Outcome(True, f"turn {turn.turn_id} already stored")
            index = self._turn_indexes.get(owner)
            if index is not None:
                count, newest = index.stamp
                index.add(turn, vector[0])
                index.stamp = (count + 1, max(newest, turn.time))
            if speaker == USER and learn_facts:
                before = self._said_before.get(owner, "")
                self._said_before[owner] = pronoun_context(before, turn.text)
                # (a day the words name is the one it was when said: the turn's time, not the clock's)
                said_at = datetime.datetime.fromtimestamp(turn.time).astimezone()
                known = self._known_relatives(owner)
                for fact in extract_self_facts(turn.text, now=said_at, before=before, known=known):
                    node = self._write_heard_fact(turn, fact, before, known)
                    if node is not None:
                        written.append(node)
        for listener in list(self.turn_listeners):
            try:
                listener(turn, written)
            except Exception:  # noqa: BLE001 - one listener's failure must not lose the turn
                log.exception("turn listener %r failed on turn %s", listener, turn.turn_id)
        return Outcome(True, f"stored turn {turn.turn_id}" + (f"; {len(written)} facts" if written else ""), written)

    def _write_heard_fact(
        self, turn: Turn, fact, before: str = "", known: Sequence[tuple[str, str]] = ()
    ) -> MemoryNode | None:
        """A self-fact of `turn`, as the dialogue writes it (confirmed, keyed), resting on the
        turn; an identical current memory gains the turn as evidence instead."""
        req = RememberRequest(
            owner=turn.owner,
            content=fact.content,
            node_type="observation",
            tags=list(fact.tags),
            key=fact.key,
            user_confirmed=True,
            source_session=turn.session,
        )
        try:
            stated = [before, turn.text] if before else [turn.text]  # (whom "she" means: the words before)
            decision = decide_remember(
                req,
                [turn.text],
                self.settings.verify_explicit,
                stated_texts=stated,
                known_relatives=lambda: known,  # (the turn's, read once for all its facts)
            )
        except (PermissionError, MemoryInputError) as exc:
            log.debug("self-fact %s of turn %s not written: %s", fact.key, turn.turn_id, exc)
            return None
        if decision.status != CONFIRMED:
            return None
        owner, kind = turn.owner, tag_value(decision.tags, "kind")
        same = [
            n
            for n in self.store.find_content(owner, decision.content, [CONFIRMED])
            if n.node_type == "observation" and n.key == decision.key
        ]
        if same:
            node = same[0]
            if turn.turn_id not in node.sources:
                node = node.copy(sources=[*node.sources, turn.turn_id])
                self.store.write(update=[node])
            return node
        node = self._new_node(req, decision, turn.time)
        node.sources = [turn.turn_id]
        keyed = self.store.find_keyed(owner, kind, decision.key, [CONFIRMED, CANDIDATE]) if decision.key else []
        status_changes, _superseded = self._supersede(owner, node, keyed)
        self.store.write(add=[(node, None)], status=status_changes)
        return node

    def forget_turns(self, owner: str, turn_ids: Sequence[str]) -> Outcome:
        """Forget several heard turns, all or none: every id is checked first, and one that is
        not a turn of this owner fails the request with its name and nothing is deleted; then
        each as `forget_turn`. Outcome.nodes: the memories deleted."""
        if is_guest(owner):
            return Outcome(False, GUEST_REFUSAL)
        ids = list(dict.fromkeys(t.strip() for t in turn_ids))
        known = {t.turn_id for t in self.store.get_turns(owner, ids)}
        unknown = [t for t in ids if t not in known]
        if unknown:
            named = ", ".join(repr(t) for t in unknown)
            return Outcome(False, f"not found: no turn {named} for this owner; nothing forgotten")
        deleted: list[MemoryNode] = []
        for turn_id in ids:
            out = self.forget_turn(owner, turn_id)
            if not out.success:
                return Outcome(False, out.message, deleted)
            deleted += out.nodes
        return Outcome(True, f"forgot {len(ids)} turn(s) and {len(deleted)} memories resting only on them", deleted)

    def forget_turn(self, owner: str, turn_id: str) -> Outcome:
        """Forget one heard turn: delete it, take it out of every memory's sources, delete the
        memories that rested on nothing else, the recorded exchanges that quote it and the
        reflections distilled from those, then call the forget listeners with
        (owner, [turn_id]). Outcome.nodes: the memories deleted. An older value that a deleted
        one had superseded stays superseded (it is history, and rests on its own turns)."""
        if is_guest(owner):
            return Outcome(False, GUEST_REFUSAL)
        turn_id = (turn_id or "").strip()
        with self.store.lock:
            if not self.store.get_turns(owner, [turn_id]):
                return Outcome(False, f"not found: no turn {turn_id} for this owner")
            resting = self.store.resting_on(owner, [turn_id])
            # What rests only on it, and the verbatim records of an exchange that quote it.
            doomed = {
                n.id: n for n in resting if n.node_type == "conversation" or not [s for s in n.sources if s != turn_id]
            }
            frontier = list(doomed)
            while frontier:  # reflections distilled from them
                derived = [d for d in self.store.pointing_to(owner, frontier) if d.id not in doomed]
                doomed.update((d.id, d) for d in derived)
                frontier = [d.id for d in derived]
            deleted = list(doomed.values())
            gone = set(doomed)
            kept = [n.copy(sources=[s for s in n.sources if s != turn_id]) for n in resting if n.id not in gone]
            self.store.write(delete=[(owner, n.id) for n in deleted], update=kept)
            self.store.delete_turns(owner, [turn_id])
            self._turn_indexes.pop(owner, None)
            if any(n.status == CONFIRMED for n in deleted):
                self.profiles.invalidate(owner)
        for listener in list(self.forget_listeners):
            try:
                listener(owner, [turn_id])
            except Exception:  # noqa: BLE001
                log.exception("forget listener %r failed on turn %s", listener, turn_id)
        return Outcome(
            True, f"forgot turn {turn_id}; deleted {len(deleted)} memories, {len(kept)} kept other evidence", deleted
        )

    def turn_index(self, owner: str) -> TurnIndex:
        """The owner's turn index for hybrid recall, reloaded when the stored turns changed
        (another process replayed or forgot some)."""
        with self.store.lock:
            stamp = self.store.turn_stamp(owner)
            index = self._turn_indexes.get(owner)
            if index is not None and index.stamp == stamp:
                return index
            index = TurnIndex(self.store.embedder.dim)
            rows = self.store.turns_with_vectors(owner)
            missing = [i for i, (_t, v) in enumerate(rows) if v is None]
            fresh: dict[int, np.ndarray] = {}
            for start in range(0, len(missing), 256):
                chunk = missing[start : start + 256]
                for i, vec in zip(chunk, self.store.embedder.embed([rows[i][0].text for i in chunk])):
                    fresh[i] = vec
            for i, (turn, vec) in enumerate(rows):
                index.add(turn, vec if vec is not None else fresh[i])
            index.stamp = stamp
            self._turn_indexes[owner] = index
            return index

    def search_evidence(
        self,
        owner: str,
        query: str,
        n: int = 10,
        now: float | None = None,
        weights: SearchWeights = HYBRID,
        include_memories: bool = True,
    ) -> list[Evidence]:
        """The owner's best n pieces of evidence for `query`: heard turns and memories by hybrid
        recall (evidence.py: words, meaning, time, facts), each with its source turn ids and
        absolute date. `now`: the reference time of the question's time words (default the
        service clock). Read-only; a guest gets nothing."""
        if is_guest(owner) or not (query or "").strip():
            return []
        n = max(1, min(int(n) if n else self.settings.recall_n, MAX_RECALL))
        index = self.turn_index(owner)
        nodes: list[MemoryNode] = []
        if include_memories:
            nodes = self.store.list(
                owner, statuses=[CONFIRMED, SUPERSEDED], node_types=["observation", "reflection"], limit=EVIDENCE_NODES
            )
        vectors = self.store.vectors(owner, nodes) if nodes else None
        query_vector = self.store.embedder.embed([query])[0]
        with self.store.lock:  # hear_turn appends to the index under the same lock
            return search_turns(
                index,
                nodes,
                vectors,
                query,
                query_vector,
                self.clock() if now is None else float(now),
                n=n,
                weights=weights,
                include_nodes=bool(nodes),
            )

    # --- end turn log (issue 35) ---

    # ------------------------------------------------------------------ background work
    @property
    def llm_configured(self) -> bool:
        return self.llm.configured

    def owners(self) -> list[str]:
        return self.store.owners()

    def reflection_due(self, owner: str) -> bool:
        """The importance of the owner's new memories passed the threshold (and an LLM is set)."""
        return not is_guest(owner) and self.reflector.due(owner)

    def reflection_has_material(self, owner: str) -> bool:
        """Enough new confirmed memories for a scheduled reflection, whatever their importance."""
        return not is_guest(owner) and len(self.reflector.pending(owner)) >= self.reflector.settings.min_sources

    def reflect(self, owner: str) -> list[MemoryNode]:
        """Distil and store insights now. Raises LlmError when the LLM fails (nothing stored)."""
        return self.reflector.reflect(owner)

    def profile_due(self, owner: str) -> bool:
        return not is_guest(owner) and self.profiles.due(owner)

    def rebuild_profile(self, owner: str) -> Profile:
        return self.profiles.rebuild(owner, self.llm if self.llm.configured else None)

    def maintain(self) -> int:
        """Write pending recall times, give memories written under another embedder this
        store's vectors, and purge expired memories; returns how many were purged."""
        self.store.flush_touches()
        self.store.maintain_embeddings()
        return self.store.purge_expired()

    # --- issue 35: the layered profile (fay_ros/memory/layers) ---------------------------------
    def enable_layers(
        self, config: LayersConfig | None = None, run: Callable[[Callable[[], object]], object] | None = None
    ) -> ProfilePipeline:
        """Keep the layered profile in this store: every user turn the turn log stores
        (hear_turn: heard live or replayed) is ingested with its own id and time, and a
        forgotten turn is taken back from the layers. `run` executes an ingest (the node passes
        its worker, as an LLM updater may take seconds; default: at once, in the caller)."""
        self._layers = ProfilePipeline(
            self.store.profile_layers(),  # type: ignore[attr-defined]
            config or LayersConfig(),
            llm=self.llm,
            facts=self.profiles.facts,
        )
        self._run_layers = run or (lambda job: job())
        if self._layers_hear not in self.turn_listeners:
            self.turn_listeners.append(self._layers_hear)
        if self._layers_forget not in self.forget_listeners:
            self.forget_listeners.append(self._layers_forget)
        return self._layers

    def _layers_hear(self, turn: Turn, _written: list[MemoryNode]) -> None:
        if turn.speaker == USER:
            self._run_layers(lambda: self.ingest_turn(turn.owner, turn.turn_id, turn.time, turn.speaker, turn.text))

    def _layers_forget(self, owner: str, turn_ids: list[str]) -> None:
        self._run_layers(lambda: self.forget_evidence(owner, turn_ids))

    @property
    def layered(self) -> ProfilePipeline:
        """The layered profile's pipeline (with the default settings unless enable_layers set them)."""
        return getattr(self, "_layers", None) or self.enable_layers()

    def ingest_turn(self, owner: str, turn_id: str, time: float, speaker: str, text: str) -> IngestReport:
        """One heard turn into the layered profile (the turn's own time, not the clock)."""
        report = IngestReport()
        for signal in signals_from_turn(owner, str(turn_id), float(time), speaker, text):
            report = self.layered.ingest(signal)
        return report

    def core_memory(self, owner: str, budget_tokens: int = 400) -> str:
        """What every LLM call should know of the owner (safety facts first, never trimmed)."""
        return "" if is_guest(owner) else self.layered.core_memory(owner, budget_tokens)

    def forget_evidence(self, owner: str, turn_ids: Sequence[str]) -> Outcome:
        """Forget turns in the layered profile: items resting only on them go, others lose the ids."""
        if is_guest(owner):
            return Outcome(False, GUEST_REFUSAL)
        changes = self.layered.forget_evidence(owner, [str(t) for t in turn_ids])
        return Outcome(True, f"forgot {len(turn_ids)} turn(s): {len(changes)} layer item(s) removed")

    def layered_profile(self, owner: str, budget_tokens: int = 400) -> tuple[Outcome, Profile | None]:
        """memory/profile with the layers: portrait = the core memory text (with the rebuilt
        portrait while the soul has none), facts safety-first."""
        out, profile = self.profile(owner)
        if profile is None:
            return out, None
        keys = [split_fact(line) for line in profile.facts]
        order = sorted(range(len(keys)), key=lambda i: not is_safety_fact(keys[i][0], keys[i][1]))
        profile.facts = [profile.facts[i] for i in order]
        # the facts just read for the profile: memory/profile is asked every turn, read them once
        profile.portrait = self.layered.core_memory(
            owner, budget_tokens, portrait=profile.portrait, facts=profile.facts
        )
        return out, profile

    # --- end issue 35 ------------------------------------------------------------------------


def build_service(
    db_path: str | Path,
    embedder: str | Embedder = "auto",
    llm: ChatClient | None = None,
    clock: Callable[[], float] | None = None,
    **settings,
) -> MemoryService:
    """A ready MemoryService on `db_path`, a SQLite file or any location backend.open_store
    takes (postgresql://...), for tools and tests (the node builds its own).
    `settings`: ServiceSettings fields, plus `reflection` and `profile` dicts of their settings."""
    store = open_store(
        db_path, make_embedder(embedder) if isinstance(embedder, str) else embedder, clock=clock or time.time
    )
    llm = llm or ChatClient(Endpoint())  # no endpoint: no reflection, plain portraits
    reflection = ReflectionSettings(**settings.pop("reflection", {}))
    profile = ProfileSettings(**settings.pop("profile", {}))
    return MemoryService(
        store, ServiceSettings(**settings), Reflector(store, llm, reflection), ProfileKeeper(store, profile), llm
    )
