"""One reply as it goes out: the outbound gate every piece passes, and its numbering.

A reply is a run of `ReplyPiece`s sharing a conversation id: seq 0, 1, ...; `is_first` on
seq 0 (with `replace` when the reply replaces what is being spoken); `is_end` on the last
one, which is an empty piece when the stream ended on a complete sentence (so no sentence
waits to learn it was the last) or when the reply was cut by an interrupt. A piece with
nothing speakable left after the gate is not published; a reply that would end with nothing
said (fillers aside) says the persona's no_answer line instead, unless the model chose to
say nothing: an answer of only `[SILENCE]` (seed 003) is no reply at all (nothing is
published, or only the empty is_end marker when a filler went out before it).

Pure Python, no ROS.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..text.outbound import SILENCE, Dropped, OutboundStream, sanitize, strip_structure
from ..text.sentences import split_sentences


@dataclass
class ReplyPiece:
    user_id: str
    conversation_id: str
    seq: int
    text: str
    is_first: bool
    is_end: bool
    replace: bool
    source: str  # "llm", "qa", "memory", "broadcast", "fallback", "filler", "task", "task_status"
    stamp: float = field(default_factory=time.monotonic)
    replaces: str = ""  # the conversation id of an unheard reply this one answers in its place


class Reply:
    """One reply: the outbound gate every piece passes, numbering and is_first/is_end.

    `no_answer` is said when the reply would otherwise end with nothing said (everything
    sanitised away or dropped by the guard); "" means no reply at all then (a broadcast
    that had nothing speakable: nobody asked, so nothing is sent).

    A background task's result is a new stream of the conversation that started it:
    `start_seq` continues that conversation's numbering (so `conversation_id:seq` stays
    unique; `is_first` marks the stream's first piece) and `source` marks every piece of it
    ("task")."""

    def __init__(
        self,
        emit: Callable[[ReplyPiece], None],
        user_id: str,
        conversation_id: str,
        replace: bool,
        no_answer: str = "",
        *,
        start_seq: int = 0,
        source: str = "",
        replaces: str = "",
    ) -> None:
        self._emit = emit
        self.replaces = replaces
        self.user_id = user_id
        self.conversation_id = conversation_id
        self.replace = replace
        self.no_answer = no_answer
        self.start_seq = start_seq
        self.source = source  # "" = each piece says its own source
        self.seq = start_seq
        self.closed = False
        self.last_source = ""
        self.spoken: list[str] = []  # what was published, fillers aside
        self.dropped = Dropped()  # what the outbound sanitiser removed from this reply, by kind

    def stream(self) -> OutboundStream:
        """The structural stage for one model stream of this reply."""
        return OutboundStream(self.dropped)

    def say(self, text: str, source: str) -> bool:
        """Publish one piece; False (nothing published) when nothing of it is speakable."""
        clean = sanitize(text, self.dropped).text
        if clean and not self.closed:
            self._send(clean, source, is_end=False)
            return True
        return False

    def say_whole(self, text: str, source: str, sentence_min_chars: int) -> bool:
        """A whole text (qa answer, memory or clock answer, broadcast, stock line) as the whole
        reply, sentence by sentence: its structure is removed before it is split, like a model
        stream's. True when the no_answer line was said instead (see `end`)."""
        sentences = split_sentences(strip_structure(text, self.dropped), sentence_min_chars)
        for sentence in sentences[:-1]:
            self.say(sentence, source)
        return self.end(sentences[-1] if sentences else "", source)

    def end(self, text: str = "", source: str | None = None) -> bool:
        """Close the reply with its last piece. When neither that piece nor anything before it
        (a filler aside) is speakable, the no_answer line is said instead; returns True then."""
        if self.closed:
            return False
        clean = sanitize(text, self.dropped).text
        fallback = not clean and not self.spoken
        if fallback and self.silenced:
            self.cut()  # the model chose silence: no stock line either
            self.closed = True
            return False
        if fallback:
            clean, source = self.no_answer, "fallback"
            if not clean and self.seq == self.start_seq:
                self.closed = True  # nothing was said and nothing is to be said: no reply at all
                return True
        self._send(clean, source or self.last_source or "llm", is_end=True)
        self.closed = True
        return fallback

    @property
    def silenced(self) -> bool:
        """The model answered with the silence marker and nothing speakable."""
        return SILENCE in self.dropped and not self.spoken

    def cut(self) -> None:
        """Close a reply that was interrupted: an empty is_end marker, if anything went out."""
        if self.seq > self.start_seq and not self.closed:
            self._send("", self.last_source or "llm", is_end=True)
            self.closed = True

    def _send(self, text: str, source: str, is_end: bool) -> None:
        if self.closed:
            return
        source = self.source or source
        first = self.seq == self.start_seq
        piece = ReplyPiece(
            self.user_id,
            self.conversation_id,
            self.seq,
            text,
            first,
            is_end,
            self.replace and first,
            source,
            replaces=self.replaces,
        )
        self.seq += 1
        self.last_source = source
        if text and source != "filler":
            self.spoken.append(text)
        self._emit(piece)
