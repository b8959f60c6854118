"""Whether a user's new words join their last turn, whose answer they have not heard.

The person went on after a pause the recogniser took for the end of their turn ("Please call
me." ... "tomorrow morning."): one turn answers both parts, so nothing they said is lost, and
the first answer, never heard, is replaced (the tts drops it) and leaves the history. The
dialogue engine (`dialogue/turn_flow.py`) carries the decision out: it cancels a running turn,
takes a finished one's exchange back from the history, and names the replaced conversation
(`Utterance.replaces`, which the memory node makes void: `memory/conversation.py`).

- The last turn still runs (it is the user's running turn): it is joined.
- It has finished, its answer waiting unheard in the tts while the person talked: it is joined
  if it ended normally and its exchange is still in the history (a model or qa answer; not
  an apology for a failure, not a cancelled turn).
- A turn that is neither the running one nor finished (an older one still winding down) and
  a turn whose answer was heard (the engine then no longer keeps it) are not joined.

Pure: the engine passes what it knows of the last turn; no asyncio, no clock.
"""

from __future__ import annotations

import enum


class Join(enum.Enum):
    NONE = "none"
    RUNNING = "running"  # cancel the running turn; the new one answers both
    FINISHED = "finished"  # take the finished, unheard exchange back; the new one answers both


def join_unheard(*, is_running_turn: bool, done: bool, cancelled: bool) -> Join:
    """The decision for the user's last turn whose answer they have not heard yet.
    `is_running_turn`: it is the user's running turn; `done`: its task has ended; `cancelled`:
    it ended cancelled. A FINISHED join holds only if the engine can still take the exchange
    back from the history (it ended normally)."""
    if not done:
        return Join.RUNNING if is_running_turn else Join.NONE
    return Join.NONE if cancelled else Join.FINISHED


def joined_text(unheard: str, new: str) -> str:
    """What the joined turn answers: both parts, in the order they were said."""
    return f"{unheard} {new}"
