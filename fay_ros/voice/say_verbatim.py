"""Speaking a given text verbatim: the `say` action and the `broadcast` topic of the tts node.

Pure (no ROS): the node shell maps goals and messages onto these.

- `plan_say` turns a text into the sentences that will be spoken and published: its structure
  (code, tool calls, think blocks, markup) is removed first, as the dialogue does for a whole
  text, so a block spanning sentences goes as a whole; then it is split with the dialogue's
  sentence splitter, each sentence passes the speech sanitiser, and a sentence longer than
  `max_sentence_chars` is cut into pieces at the best boundary (`bound_text`), so every word
  is said and no piece holds the synthesis worker long.
- `check_say` refuses what is not to be spoken at all (an unknown language, a text beyond
  `max_chars`): the reason becomes the result "rejected: <why>".
- `SayJob` follows one say through the speech pipeline's sentence events: progress when each
  sentence starts, and the outcome once every sentence has ended.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from ..text.outbound import Dropped, strip_structure
from ..text.sentences import split_sentences
from .language_runs import Language
from .pipeline import FINAL_KINDS, SentenceEvent
from .sanitize import sanitize_for_speech

# One sentence is one reply message; 1,000 characters are over a minute of speech. Without a
# bound, one 100 kB message held the synthesis worker for minutes and hundreds of MB.
MAX_SENTENCE_CHARS = 1000
# A whole say text: about five minutes of speech (the CLI's `fay-ros say` limit too).
MAX_SAY_CHARS = 5000
SAY_ID_PREFIX = "say-"
# Results' reasons (Say.action).
SPOKEN, CANCELLED, INTERRUPTED, NOTHING_SPEAKABLE, FAILED = (
    "spoken",
    "cancelled",
    "interrupted",
    "nothing speakable",
    "failed",
)
_BREAKS = (".!?。！？", ",;:，；：、", " \t\n")


def bound_text(text: str, limit: int) -> str:
    """`text` if it has at most `limit` characters, else its longest head within the limit
    that ends at a sentence end, else a clause mark, else a space -- when such a head keeps
    at least half the limit -- else exactly `limit` characters."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    for marks in _BREAKS:
        cut = max(head.rfind(m) for m in marks)
        if cut + 1 >= limit // 2:
            return head[: cut + 1].rstrip()
    return head


def pieces_within(text: str, limit: int) -> list[str]:
    """`text` cut into consecutive pieces of at most `limit` characters (bound_text's cuts)."""
    pieces = []
    rest = text.strip()
    while rest:
        head = bound_text(rest, limit)
        pieces.append(head)
        rest = rest[len(head) :].strip()
    return pieces


def say_language(tag: str) -> Language | None:
    """ "en"/"zh" (any BCP-47 tag of them: "en-US", "zh-Hans"), None for "" (the default);
    ValueError for any other language."""
    primary = tag.strip().replace("_", "-").split("-")[0].lower()
    if not primary:
        return None
    if primary in ("en", "zh"):
        return primary  # type: ignore[return-value]
    raise ValueError(f"language {tag.strip()[:20]!r} is not 'en', 'zh' or '' (the default)")


def check_say(text: str, language: str, max_chars: int) -> str | None:
    """Why this text is not to be spoken at all, or None."""
    if len(text) > max_chars:
        return f"the text is {len(text)} characters; the limit is {max_chars} (max_say_chars)"
    try:
        say_language(language)
    except ValueError as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class SayPlan:
    sentences: list[str]
    dropped: Dropped  # what the sanitiser removed (kinds and counts, never the content)


def plan_say(text: str, *, max_sentence_chars: int = MAX_SENTENCE_CHARS, min_chars: int = 4) -> SayPlan:
    dropped = Dropped()
    sentences = []
    for sentence in split_sentences(strip_structure(text, dropped), min_chars):
        cleaned = sanitize_for_speech(sentence)
        for kind, (count, chars) in cleaned.dropped.items():
            dropped.add(kind, chars, count)
        sentences.extend(pieces_within(cleaned.text, max_sentence_chars))
    return SayPlan(sentences, dropped)


def new_say_id() -> str:
    return SAY_ID_PREFIX + uuid.uuid4().hex[:8]


@dataclass(frozen=True)
class SayProgress:
    """Sent when a sentence starts to play."""

    index: int
    count: int
    sentence: str

    @property
    def progress(self) -> float:
        return (self.index + 1) / self.count if self.count else 1.0


@dataclass(frozen=True)
class SayOutcome:
    spoken: bool
    reason: str
    conversation_id: str
    sentences: int
    sentences_spoken: int


class SayJob:
    """One say in the speech pipeline. `on_event` takes the pipeline's events of its sentences
    (seq = sentence index) from any thread; `on_progress` runs when a sentence starts,
    `on_done` once, when every sentence has ended (or at once for a plan with no sentences)."""

    def __init__(
        self,
        conversation_id: str,
        sentences: list[str],
        *,
        on_progress: Callable[[SayProgress], None] = lambda _p: None,
        on_done: Callable[[SayOutcome], None] = lambda _o: None,
    ) -> None:
        self.conversation_id = conversation_id
        self.sentences = list(sentences)
        self._on_progress = on_progress
        self._on_done = on_done
        self._lock = threading.Lock()
        self._ends: dict[int, str] = {}
        self._cancelled = False
        self.outcome: SayOutcome | None = None

    @classmethod
    def finished(cls, conversation_id: str, reason: str) -> SayOutcome:
        """The outcome of a say that never reached the pipeline."""
        return SayOutcome(False, reason, conversation_id, 0, 0)

    def start(self) -> None:
        """Call after registering the job for events: a plan without sentences ends here."""
        if not self.sentences:
            self._finish()

    def cancel(self) -> bool:
        """Mark it cancelled (its outcome says so unless all of it was spoken); False if it
        had ended already."""
        with self._lock:
            if self.outcome is not None:
                return False
            self._cancelled = True
            return True

    @property
    def done(self) -> bool:
        with self._lock:
            return self.outcome is not None

    def on_event(self, seq: int, event: SentenceEvent) -> None:
        if not 0 <= seq < len(self.sentences):
            return
        if event.kind == "started":
            self._on_progress(SayProgress(seq, len(self.sentences), self.sentences[seq]))
            return
        if event.kind not in FINAL_KINDS:
            return
        with self._lock:
            if seq in self._ends or self.outcome is not None:
                return
            self._ends[seq] = event.kind
            if len(self._ends) < len(self.sentences):
                return
        self._finish()

    def _finish(self) -> None:
        with self._lock:
            if self.outcome is not None:
                return
            ends = list(self._ends.values())
            played = ends.count("finished")
            speakable = len(ends) - ends.count("skipped")
            spoken = speakable > 0 and played == speakable
            if spoken:
                reason = SPOKEN
            elif not self.sentences or speakable == 0:
                reason = NOTHING_SPEAKABLE
            elif self._cancelled:
                reason = CANCELLED
            elif "failed" in ends:
                reason = FAILED
            else:
                reason = INTERRUPTED
            self.outcome = SayOutcome(spoken, reason, self.conversation_id, len(self.sentences), played)
            outcome = self.outcome
        self._on_done(outcome)
