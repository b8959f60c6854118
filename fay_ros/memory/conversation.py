"""What the memory node hears of a conversation: the owner's words per turn, and each exchange
as one conversation memory.

The owner's words are the evidence a user_confirmed write is checked against (policy.py), so
they are kept per turn: a turn begins with the first user words after a reply ended. A user
turn (speech/final, text_input) is joined with the reply sentences of one conversation_id at
is_end into "User: …\\nFay: …". Pure: this composes the conversation memory; the service
stores it.

A reply can replace an earlier one that never reached the user (Utterance.replaces: they went
on talking before it was heard, and the new reply answers both parts of what they said). The
earlier exchange is void (`void`): its sentences are dropped, or, when it was already recorded,
its memory is taken back; its user words wait again for the reply that answers them, and
its turn stays open (the words after it are the same turn: one piece of evidence).
"""

from __future__ import annotations

import datetime
import re
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

from ..common import reply_sources
from .model import CONFIRMED, CONVERSATION_SOURCE_TAG, MemoryNode, is_guest
from .policy import CONVERSATION_IMPORTANCE

# Words kept per owner: of the current turn, and across turns (a statement about oneself is
# checked against the latter, because the dialogue writes it after its reply, when the next
# turn may already have begun).
TURN_WORDS_KEPT = 5
RECENT_WORDS_KEPT = 6
# Replies whose is_end never came are dropped beyond this many, oldest first.
MAX_OPEN_REPLIES = 64
MAX_CONVERSATION_CHARS = 4000

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _mostly_cjk(sentences: list[str]) -> bool:
    text = "".join(sentences)
    return bool(text) and len(_CJK.findall(text)) * 2 >= len(text)


def _reply_key(owner: str, conversation_id: str) -> str:
    return f"{owner}\x00{conversation_id}"


@dataclass(frozen=True)
class _Recorded:
    """A recorded exchange, as `ConversationRecorder.void` may need to take it back."""

    conversation_id: str
    user_words: list[str]
    memory_id: str
    turn: int  # the owner's turn number it answered
    turn_words: list[tuple[float, str]]  # ... and that turn's words


class ConversationRecorder:
    def __init__(
        self,
        clock: Callable[[], float],
        *,
        explicit_window: float = 120.0,
        conversation_ttl: float = 90 * 86400.0,
        user_label: str = "User",
        assistant_label: str = "Fay",
    ) -> None:
        self.clock = clock
        self.explicit_window = explicit_window
        self.conversation_ttl = conversation_ttl
        self.user_label = user_label
        self.assistant_label = assistant_label
        self._turn_words: dict[str, list[tuple[float, str]]] = {}
        self._recent_words: dict[str, list[tuple[float, str]]] = {}
        self._turn_answered: set[str] = set()
        self._turn_number: dict[str, int] = {}
        # Heard turns are numbered within this process's own session id, so memories written
        # during one turn count as one piece of evidence for the profile.
        self.session = "heard-" + uuid.uuid4().hex[:8]
        self._pending_user: dict[str, list[str]] = {}
        self._open_replies: OrderedDict[str, tuple[str, list[str]]] = OrderedDict()
        # The owner's last recorded exchange, for `void`.
        self._last_recorded: dict[str, _Recorded] = {}
        self._void: deque[str] = deque(maxlen=MAX_OPEN_REPLIES)  # replies made void (late pieces are ignored)

    def _within_window(self, words: list[tuple[float, str]]) -> list[str]:
        now = self.clock()
        return [text for when, text in words if now - when <= self.explicit_window]

    def heard_recently(self, owner: str) -> list[str]:
        """The owner's final transcripts of the current turn, if heard within explicit_window."""
        return self._within_window(self._turn_words.get(owner, []))

    def said_recently(self, owner: str) -> list[str]:
        """The owner's last few utterances (any turn) within explicit_window."""
        return self._within_window(self._recent_words.get(owner, []))

    def current_turn(self, owner: str) -> tuple[str, int]:
        """(session, turn number) of the owner's current heard turn."""
        return self.session, self._turn_number.get(owner, 0)

    def hear_user(self, owner: str, text: str) -> None:
        """A final transcript (or typed input) of the owner."""
        text = (text or "").strip()
        if is_guest(owner) or not text:
            return
        now = self.clock()
        if owner in self._turn_answered or owner not in self._turn_words:
            self._turn_words[owner] = []
            self._turn_answered.discard(owner)
            self._turn_number[owner] = self._turn_number.get(owner, 0) + 1
        self._turn_words[owner] = (self._turn_words[owner] + [(now, text)])[-TURN_WORDS_KEPT:]
        self._recent_words[owner] = (self._recent_words.get(owner, []) + [(now, text)])[-RECENT_WORDS_KEPT:]
        pending = self._pending_user.setdefault(owner, [])
        pending.append(text)
        del pending[:-TURN_WORDS_KEPT]

    def hear_reply(
        self, owner: str, conversation_id: str, text: str, is_end: bool, source: str = ""
    ) -> MemoryNode | None:
        """One sentence of a reply; at is_end, the exchange as one conversation memory (not yet
        stored). Fillers and guests are not recorded."""
        if is_guest(owner) or source == "filler":
            return None
        key = _reply_key(owner, conversation_id)
        if key in self._void:
            return None
        _owner, sentences = self._open_replies.setdefault(key, (owner, []))
        if text and text.strip():
            sentences.append(text.strip())
        while len(self._open_replies) > MAX_OPEN_REPLIES:
            self._open_replies.popitem(last=False)
        if not is_end:
            return None
        self._open_replies.pop(key, None)
        if source in reply_sources.UNPROMPTED:
            # Said unasked (a say goal, a broadcast, proactive talk): the companion's words alone.
            # The user's words still waiting for the dialogue's answer belong to that answer.
            user_text = ""
        else:
            self._turn_answered.add(owner)
            user_words = self._pending_user.pop(owner, [])
            user_text = " ".join(user_words)
        reply = "".join(sentences) if _mostly_cjk(sentences) else " ".join(sentences)
        if not user_text and not reply:
            return None
        lines = []
        if user_text:
            lines.append(f"{self.user_label}: {user_text}")
        if reply:
            lines.append(f"{self.assistant_label}: {reply}")
        now = self.clock()
        day = datetime.datetime.fromtimestamp(now).strftime("%Y-%m-%d")
        tags = [CONVERSATION_SOURCE_TAG, f"date:{day}"]
        if conversation_id and not any(c.isspace() for c in conversation_id):
            tags.insert(1, f"session:{conversation_id}"[:200])
        node = MemoryNode(
            owner=owner,
            content="\n".join(lines)[:MAX_CONVERSATION_CHARS],
            node_type="conversation",
            importance=CONVERSATION_IMPORTANCE,
            created=now,
            last_retrieved=now,
            tags=tags,
            status=CONFIRMED,
            source_session=conversation_id,
            expires=now + self.conversation_ttl if self.conversation_ttl > 0 else 0.0,
        )
        if user_text:
            self._last_recorded[owner] = _Recorded(
                conversation_id,
                user_words,
                node.id,
                self._turn_number.get(owner, 0),
                list(self._turn_words.get(owner, [])),
            )
        return node

    def void(self, owner: str, conversation_id: str) -> str | None:
        """The reply `conversation_id` never reached the owner (a later reply replaces it): drop
        what was heard of it; its user words wait again for the reply that answers them. Returns
        the id of its conversation memory, when it was recorded already (for the store to delete)."""
        key = _reply_key(owner, conversation_id)
        if key not in self._void:
            self._void.append(key)
        self._open_replies.pop(key, None)
        last = self._last_recorded.get(owner)
        if last is None or last.conversation_id != conversation_id:
            return None
        del self._last_recorded[owner]
        pending = self._pending_user.setdefault(owner, [])
        pending[:0] = last.user_words
        del pending[:-TURN_WORDS_KEPT]
        # Its turn is still open: the words after it (if heard yet) are the same turn, one piece
        # of evidence, not the next.
        current = self._turn_number.get(owner, 0)
        if current in (last.turn, last.turn + 1):
            later = self._turn_words.get(owner, []) if current == last.turn + 1 else []
            self._turn_number[owner] = last.turn
            self._turn_words[owner] = (last.turn_words + later)[-TURN_WORDS_KEPT:]
            self._turn_answered.discard(owner)
        return last.memory_id
