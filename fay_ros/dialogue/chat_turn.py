"""One turn held by a caller that waits for it (the dialogue node's `chat` action): what it
learns of the turn while it runs and how it ended. No ROS in here; the node turns it into
feedback and the action result.

- Sentences: every piece of the turn's reply with text, in order, as the engine emits it
  (the feedback); the whole reply is their texts joined.
- Cues: action_semantics publishes one cue per sentence with text (utterance id
  `<conversation_id>:<seq>`); they arrive after the sentence, so the caller waits a short,
  bounded grace after the turn for the last ones (`cues_in`) and returns what came.
- Outcome: "completed"; "cancelled" (the caller asked); "interrupted" (an `interrupt`, or
  the same user's next input replaced the turn); "failed: <why>" (the LLM failed: the
  apology was said whole, so the reply is complete and the goal is not achieved).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..common.ids import utterance_id
from .reply import ReplyPiece
from .trace import TurnTrace

COMPLETED, CANCELLED, INTERRUPTED, FAILED = "completed", "cancelled", "interrupted", "failed"


@dataclass(frozen=True)
class Outcome:
    completed: bool  # the reply was said to its end (not cut)
    reason: str  # COMPLETED, CANCELLED, INTERRUPTED or "failed: <why>"

    @property
    def achieved(self) -> bool:
        """The turn answered as asked (the goal succeeded)."""
        return self.reason == COMPLETED


class ChatTurn:
    """Sentences, cues and outcome of one held turn. Use on the engine's asyncio loop only."""

    def __init__(self) -> None:
        self.conversation_id = ""
        self.task: asyncio.Task | None = None  # the engine's turn once started: a cancel stops it alone
        self.sentences: list[tuple[int, str]] = []  # (seq, text) as published
        self.cancel_requested = False
        self.outcome: Outcome | None = None
        self._cues: dict[int, Any] = {}  # seq -> the cue (a message the caller chose)
        self._expected: dict[str, int] = {}  # utterance id -> seq, for each sentence with text
        self._all_cues = asyncio.Event()

    def on_piece(self, piece: ReplyPiece) -> tuple[int, str] | None:
        """A piece of this turn's reply was published: the (seq, sentence) to report, or None
        for an empty closing marker (which gets no cue either)."""
        if not piece.text:
            return None
        self.sentences.append((piece.seq, piece.text))
        self._expected[utterance_id(piece.conversation_id, piece.seq)] = piece.seq
        return piece.seq, piece.text

    @property
    def reply(self) -> str:
        return " ".join(text for _seq, text in self.sentences)

    def add_cue(self, cue_utterance_id: str, cue: Any) -> bool:
        """Keep the cue when it belongs to one of this turn's sentences; True then."""
        seq = self._expected.get(cue_utterance_id)
        if seq is None:
            return False
        self._cues[seq] = cue
        self._check_cues()
        return True

    @property
    def cues(self) -> list[Any]:
        """The cues that came, in sentence order."""
        return [self._cues[seq] for seq in sorted(self._cues)]

    def finish(self, task: asyncio.Future) -> Outcome:
        """How the turn's (done) task ended."""
        if task.cancelled():
            self.outcome = Outcome(False, CANCELLED if self.cancel_requested else INTERRUPTED)
        elif (error := task.exception()) is not None:  # run_turn catches its failures; kept for safety
            self.outcome = Outcome(False, f"{FAILED}: {type(error).__name__}: {error}")
        else:
            trace: TurnTrace = task.result()
            self.outcome = Outcome(True, f"{FAILED}: {trace.error}" if trace.error else COMPLETED)
        self._check_cues()
        return self.outcome

    def cancel_before_start(self) -> Outcome:
        """The caller cancelled before the turn started: nothing was said."""
        self.outcome = Outcome(False, CANCELLED)
        return self.outcome

    async def cues_in(self, grace: float) -> None:
        """Wait at most `grace` seconds (after `finish`) for the cues of every sentence."""
        if self.outcome is None:
            raise RuntimeError("cues_in() waits after finish()")
        try:
            await asyncio.wait_for(self._all_cues.wait(), grace)
        except TimeoutError:
            pass  # return what came (no action_semantics running: none)

    def _check_cues(self) -> None:
        if self.outcome is not None and len(self._cues) >= len(self._expected):
            self._all_cues.set()
