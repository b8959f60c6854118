"""What the engine knows of each user between and during turns: one `UserSession` per user id
("" is the guest), kept in `Sessions`. State only; the turn flow (`turn_flow.py`) and the
engine decide what changes it. Lives on the engine's loop (no locks). Pure Python, no ROS.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field

# One exchange as it went into the history: the messages `Histories.remember_turn` added.
Exchange = tuple[dict[str, str], ...]


@dataclass
class Unanswered:
    """A chat turn whose answer has not reached its user yet (`TurnFlow.start`)."""

    task: asyncio.Task
    text: str
    conversation_id: str


@dataclass
class UserSession:
    turns: int = 0  # the number of the user's last opened turn
    # The user's running turn: the one their next input or an interrupt cancels.
    running: asyncio.Task | None = None
    # The user's chat turn whose answer has not reached them yet, and the words it answers:
    # nothing said yet; with a voice, a spoken input's answer until a sentence of it was heard.
    unanswered: Unanswered | None = None
    # The user's last finished chat exchange (conversation id, messages): taken out of the
    # history again if its answer turns out never to have been heard.
    last_exchange: tuple[str, Exchange] | None = None
    # Active rules and profile facts as the user's last real turn read them: a probe reuses
    # them and asks memory only for what depends on the words (the recall).
    standing: tuple[list[str], list[str]] | None = None
    # The core memory (layered profile) the last real turn read, for a probe likewise.
    core_memory: str = ""
    # What the user said about themselves in this process: key -> content (newest last).
    facts: dict[str, str] = field(default_factory=dict)
    # The owner's corrections of tone said in this process (memory.tone): key -> rule, in the
    # prompt from the turn that said them on, while memory stores them as rules.
    tone_rules: dict[str, str] = field(default_factory=dict)
    # The user's last words that named a relative, for whom "she" or "he" means next.
    said_before: str = ""

    def running_turn(self) -> asyncio.Task | None:
        """The running turn, if it has not finished."""
        return self.running if self.running is not None and not self.running.done() else None


class Sessions:
    """Every user's session, made on first use."""

    def __init__(self) -> None:
        self._users: dict[str, UserSession] = {}

    def of(self, user_id: str) -> UserSession:
        """The user's session (a new one for a user not seen yet)."""
        return self._users.setdefault(user_id, UserSession())

    def get(self, user_id: str) -> UserSession | None:
        """The user's session if there is one (a read that must not make one)."""
        return self._users.get(user_id)

    def all(self) -> Iterator[UserSession]:
        return iter(list(self._users.values()))
