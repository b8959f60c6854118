"""The turn log: every heard turn, the event layer's raw data (issue 35).

A turn is one thing said in a conversation -- by the owner ("user") or by the companion
("assistant") -- with its owner, a turn id (a string, unique per owner), the session it
belongs to and the time it was said. Memories name the turns they rest on (`MemoryNode.sources`),
so an answer can show its evidence and forgetting a turn takes back what rests only on it.

`dates`: the calendar days the turn's words refer to ("yesterday I went hiking", said on
2026-11-03, refers to 2026-11-02), resolved against the turn's own time when it is stored
(temporal.py), so a later question is answered with absolute dates.

Pure Python, no ROS; both backends store turns (store.py, pg_store.py).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from .model import MemoryInputError

USER = "user"
ASSISTANT = "assistant"
SPEAKERS = (USER, ASSISTANT)
MAX_TURN_ID_CHARS = 200
MAX_TURN_CHARS = 8000


@dataclass
class Turn:
    owner: str
    turn_id: str
    time: float  # seconds since the epoch, when it was said (never the time it was stored)
    speaker: str  # "user" or "assistant"
    text: str
    session: str = ""
    dates: list[str] = field(default_factory=list)  # ISO days its words refer to

    @property
    def day(self) -> str:
        """The ISO day the turn was said (local time)."""
        return datetime.datetime.fromtimestamp(self.time).date().isoformat()


def check_turn(turn: Turn) -> Turn:
    """The turn with its fields checked and trimmed; raises MemoryInputError naming the field."""
    turn_id = str(turn.turn_id or "").strip()
    if not turn_id or len(turn_id) > MAX_TURN_ID_CHARS or any(c in turn_id for c in "\x00\n\r\t"):
        raise MemoryInputError(f"turn id {turn.turn_id!r}: expected 1..{MAX_TURN_ID_CHARS} characters, one line")
    if turn.speaker not in SPEAKERS:
        raise MemoryInputError(f"speaker {turn.speaker!r}: expected one of {', '.join(SPEAKERS)}")
    text = str(turn.text or "").strip()
    if not text:
        raise MemoryInputError("text: empty")
    try:
        when = float(turn.time)
    except (TypeError, ValueError):
        raise MemoryInputError(f"time {turn.time!r}: expected seconds since the epoch") from None
    if not when > 0:
        raise MemoryInputError(f"time {turn.time!r}: expected seconds since the epoch")
    return Turn(
        owner=turn.owner,
        turn_id=turn_id,
        time=when,
        speaker=turn.speaker,
        text=text[:MAX_TURN_CHARS],
        session=str(turn.session or "").strip(),
        dates=list(turn.dates),
    )
