"""The people's names the memory knows as the recogniser's hot words (issue 38: "the owner's names
from memory"), without ROS: when to ask for them again, and the hot words they make with the
configured ones (which names a profile holds: memory.self_facts.names_in_profile, read by the
asr node, which may import memory; hearing may not).

The asr node asks memory/profile for its user's profile (never blocking: the answer comes back
on the executor) when it is activated and every few seconds until an answer came for its
user_id (memory may start later, a request may be lost at start-up), then after a final once
`refresh_s` have passed since the last answer; names that changed reach the recogniser between
utterances. Only the user the node transcribes for is asked: one person's family names are
never another's hot words.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

MAX_NAMES = 8  # names from memory (a long hot-word prompt costs decode time and accuracy)
REFRESH_S = 60.0  # after a final, ask again when the last answer is this old
ANSWER_WITHIN_S = 5.0  # a call not answered by then is given up (the memory node went away)


@dataclass
class HotwordNames:
    """The configured hot words plus the names from memory, and when to ask memory again."""

    configured: tuple[str, ...] = ()
    refresh_s: float = REFRESH_S
    names: tuple[str, ...] = ()  # from memory, for `owner`
    owner: str | None = None  # whose names they are (None: not asked yet)
    answered_at: float = -math.inf
    pending: str | None = None  # the owner asked for, while the call is out
    asked_at: float = -math.inf
    problem: str = ""  # why the last call gave nothing ("" = it did, or none was made)

    def due(self, owner: str, now: float, final: bool = False) -> bool:
        """Ask memory now? Never while a call is out (until ANSWER_WITHIN_S) or for a guest ('');
        while `owner`'s names never came (a new user, memory not up yet, a call lost), each time
        the caller asks; after a final, once the last answer is `refresh_s` old."""
        if self.pending is not None and now - self.asked_at >= ANSWER_WITHIN_S:
            self.pending, self.problem = None, f"memory/profile did not answer within {ANSWER_WITHIN_S:.0f} s"
        if self.pending is not None or not owner:
            return False
        if owner != self.owner:
            return True
        return final and now - self.answered_at >= self.refresh_s

    def asked(self, owner: str, now: float) -> None:
        self.pending, self.asked_at = owner, now

    def for_user(self, owner: str) -> str | None:
        """The node now transcribes for `owner`: another user's names are dropped at once (their
        family's names must not bias this person's transcripts while memory is asked). Returns
        the hot words without them when that changed anything, else None."""
        if self.pending is not None and self.pending != owner:
            self.pending = None  # (the other user's answer, when it comes, is ignored)
        if owner == self.owner or self.owner is None:
            return None
        self.owner, self.names, self.answered_at = None, (), -math.inf
        return self.words

    def unavailable(self) -> None:
        """memory/profile has no server now (asked again after the next final)."""
        self.problem = "memory/profile is not available"

    def answered(self, owner: str, names: Iterable[str] | None, now: float, problem: str = "") -> str | None:
        """The names in `owner`'s profile came back (memory.self_facts.names_in_profile; None: the
        call failed, `problem` says why).
        Returns the hot words to give the recogniser when they changed, else None; None too
        for an answer to a call already given up."""
        if owner != self.pending:
            return None
        self.pending = None
        self.problem = problem
        if names is None:
            return None
        self.answered_at = now
        kept = tuple(names)[:MAX_NAMES]
        if owner == self.owner and kept == self.names:
            return None
        self.owner, self.names = owner, kept
        return self.words

    @property
    def words(self) -> str:
        """The recogniser's hot words: the configured ones, then the names not already among them."""
        seen = {w.casefold() for w in self.configured}
        extra = [n for n in self.names if n.casefold() not in seen]
        return ", ".join([*self.configured, *extra])

    def status(self) -> tuple[str, str, dict[str, str]]:
        """(level, message, values) for /diagnostics: counts only, never the names."""
        values = {"configured": str(len(self.configured)), "from_memory": str(len(self.names))}
        if self.problem:
            return "warning", f"no names from memory ({self.problem}); {len(self.configured)} configured", values
        if self.owner is None:
            return "ok", "asking memory/profile for the user's names", values
        return "ok", f"{len(self.configured)} configured, {len(self.names)} names from memory", values
