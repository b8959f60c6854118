"""When to speak in a room of several people: the first layer before a spoken turn runs.

Each spoken utterance gets a `Decision`: `direct` (answer it), `chime_in` (answer it though it
was not addressed to the companion) or `ignore` (stay silent), with a one-token reason a robot
program reads on `dialogue/decision`:

- direct: `name` (the companion's name or a wake word is in the words), `reply_to_question`
  (the companion asked this person something within `reply_window` seconds), `only_person`
  (nobody else is present: whoever speaks is talking to the companion);
- chime_in: `topic_close` (the words share enough of the companion's current conversation,
  `topic_overlap`, the cooldown has passed and the seeded chance said yes);
- ignore: `talking_to_each_other` (two or more present, not addressed, no chime-in), `cooldown`
  (a close topic, but the companion chimed in too recently).

Who is present: whoever spoke within `presence_window` seconds, and the persons a REP-155
tracker lists (`tracked`). Overheard (ignored) lines go to `overheard`, a ring buffer of
`room_memory` seconds in this process only: never into anyone's long-term memory, never into
another person's prompt. The companion's conversation (the lines it answered and its own
replies) is what a chime-in must be close to. Times are the caller's clock (seconds); the
random source is injectable (a seeded `random.Random` in tests). Pure Python, no ROS.
"""

from __future__ import annotations

import random
import re
from collections import deque
from dataclasses import dataclass

from ..memory.evidence import tokens
from .people import SpeakingRules

DIRECT, CHIME_IN, IGNORE = "direct", "chime_in", "ignore"
# reasons
NAME, REPLY_TO_QUESTION, ONLY_PERSON = "name", "reply_to_question", "only_person"
TOPIC_CLOSE, TALKING_TO_EACH_OTHER, COOLDOWN = "topic_close", "talking_to_each_other", "cooldown"
QUESTION_END = re.compile(r"[?？]\s*[\"'”’)）]*\s*$")


@dataclass(frozen=True)
class Decision:
    decision: str  # direct | chime_in | ignore
    reason: str
    present: tuple[str, ...]  # user ids present ("" = a guest), sorted

    @property
    def answers(self) -> bool:
        return self.decision != IGNORE


@dataclass(frozen=True)
class Line:
    at: float
    user_id: str
    text: str
    terms: frozenset[str] = frozenset()  # its topic terms (memory.evidence.tokens), once


def _line(at: float, user_id: str, text: str) -> Line:
    return Line(at, user_id, text, frozenset(tokens(text)))


class Room:
    def __init__(self, rules: SpeakingRules, names: tuple[str, ...], rng: random.Random | None = None) -> None:
        self.rules = rules
        self.names = names
        self.rng = rng or random.Random()
        self._last_heard: dict[str, float] = {}  # user id -> when they last spoke
        self._tracked: tuple[str, ...] = ()  # user ids a REP-155 tracker lists as present
        self._asked: dict[str, float] = {}  # user id -> when the companion last asked them something
        self._talk: deque[Line] = deque(maxlen=rules.room_memory_lines)  # the companion's conversation
        self._overheard: deque[Line] = deque(maxlen=rules.room_memory_lines)
        self._last_chime = float("-inf")

    def configure(self, rules: SpeakingRules, names: tuple[str, ...]) -> None:
        """The people file or the persona changed: the next decision uses the new rules."""
        self.rules, self.names = rules, names
        self._talk = deque(self._talk, maxlen=rules.room_memory_lines)
        self._overheard = deque(self._overheard, maxlen=rules.room_memory_lines)

    # -- what the room tells -----------------------------------------------------------------
    def tracked(self, user_ids: tuple[str, ...]) -> None:
        """The persons a REP-155 tracker sees now, as user ids ("" for an unknown person)."""
        self._tracked = tuple(user_ids)

    def companion_said(self, user_id: str, text: str, now: float) -> None:
        """A whole reply of the companion to `user_id`: part of its conversation; a reply that
        ends in a question makes the person's next words an answer to it."""
        text = text.strip()
        if not text:
            return
        self._talk.append(_line(now, user_id, text))
        if QUESTION_END.search(text):
            self._asked[user_id] = now
        else:
            self._asked.pop(user_id, None)

    # -- the decision ---------------------------------------------------------------------------
    def hear(self, user_id: str, text: str, now: float) -> Decision:
        """Decide on one spoken utterance and record it (answered: the companion's conversation;
        ignored: the overheard ring)."""
        self._last_heard[user_id] = now
        present = self.present(now)
        decision = self._decide(user_id, text, now, present)
        line = _line(now, user_id, text.strip())
        if decision.answers:
            self._talk.append(line)
            self._asked.pop(user_id, None)
            if decision.decision == CHIME_IN:
                self._last_chime = now
        else:
            self._overheard.append(line)
        return decision

    def preview(self, user_id: str, text: str, now: float) -> str:
        """What `hear` would decide, without recording anything or drawing a chance: direct
        when the words are addressed to the companion, else ignore (a chime-in is not known
        before its draw)."""
        present = tuple(sorted({*self.present(now), user_id}))
        decision = self._decide(user_id, text, now, present, draw=False)
        return DIRECT if decision.decision == DIRECT else IGNORE

    def _decide(self, user_id: str, text: str, now: float, present: tuple[str, ...], draw: bool = True) -> Decision:
        if self._names_companion(text):
            return Decision(DIRECT, NAME, present)
        asked = self._asked.get(user_id)
        if asked is not None and now - asked <= self.rules.reply_window:
            return Decision(DIRECT, REPLY_TO_QUESTION, present)
        if len(present) <= 1:
            return Decision(DIRECT, ONLY_PERSON, present)
        if self.rules.chime_in_chance <= 0.0 or not self._close_to_talk(text, now):
            return Decision(IGNORE, TALKING_TO_EACH_OTHER, present)
        if now - self._last_chime < self.rules.cooldown:
            return Decision(IGNORE, COOLDOWN, present)
        if draw and self.rng.random() < self.rules.chime_in_chance:
            return Decision(CHIME_IN, TOPIC_CLOSE, present)
        return Decision(IGNORE, TALKING_TO_EACH_OTHER, present)

    def present(self, now: float) -> tuple[str, ...]:
        recent = {u for u, at in self._last_heard.items() if now - at <= self.rules.presence_window}
        return tuple(sorted(recent | set(self._tracked)))

    def overheard(self, now: float) -> list[Line]:
        """Overheard lines younger than `room_memory` seconds (older ones are dropped)."""
        self._forget_old(now)
        return list(self._overheard)

    # -- helpers --------------------------------------------------------------------------------
    def _names_companion(self, text: str) -> bool:
        said = " ".join(re.findall(r"\w+", text.casefold()))
        for name in (*self.names, *self.rules.wake_words):
            wanted = " ".join(re.findall(r"\w+", name.casefold()))
            if wanted and re.search(
                rf"(?<!\w){re.escape(wanted)}(?!\w)" if wanted.isascii() else re.escape(wanted), said
            ):
                return True
        return False

    def _close_to_talk(self, text: str, now: float) -> bool:
        """Whether enough of the utterance's terms are in the companion's recent conversation."""
        self._forget_old(now)
        terms = set(tokens(text))
        if not terms or not self._talk:
            return False
        talked = frozenset().union(*(line.terms for line in self._talk))
        return len(terms & talked) / len(terms) >= self.rules.topic_overlap

    def _forget_old(self, now: float) -> None:
        for ring in (self._talk, self._overheard):
            while ring and now - ring[0].at > self.rules.room_memory:
                ring.popleft()
