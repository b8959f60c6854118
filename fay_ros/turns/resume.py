"""Resuming after a false interruption: the robot was cut off by a barge-in, but the person's
words became no turn (nothing recognised, or only a backchannel such as "mm-hm", 嗯, 对).

The smallest design that needs no new message and no change to the dialogue: the mic publishes
`audio/barge_in` just before its `interrupt`; the tts node pairs the two (either order, within
`PAIR_S`) and keeps what the interrupt took off the voice (the cut sentence and those queued
behind it). Once the person has been silent (`audio/voice_active` false) for `resume_after_s`
and no final transcript with words other than a backchannel came (`speech/final`), the kept
sentences are spoken again from the start of the cut one. A real turn (a final with words), a
new reply or say, or any interrupt that is not a barge-in forgets them. What the dialogue had
not yet sent when it stopped its reply stream is not recoverable here.

Pure logic on one monotonic clock; the tts node feeds it events and polls `due`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from .backchannel import is_backchannel
from .turn_timing import PAIR_S

Kept = TypeVar("Kept")


@dataclass
class ResumeSettings:
    resume: bool = True
    resume_after_s: float = 1.5  # the person's silence (after the barge-in) before resuming


class ResumeKeeper(Generic[Kept]):
    def __init__(self, settings: ResumeSettings | None = None) -> None:
        self.settings = settings or ResumeSettings()
        self._barge_in_at: float | None = None
        self._cut: tuple[list[Kept], float] | None = None  # the last interrupt's sentences
        self._kept: list[Kept] = []  # paired with a barge-in: resumable
        self._paired_at = float("-inf")
        self._voice_active = False
        self._quiet_since: float | None = None

    @property
    def pending(self) -> bool:
        return bool(self._kept)

    def kept_keys(self, key: Callable[[Kept], str]) -> set[str]:
        return {key(item) for item in self._kept}

    def barge_in(self, now: float) -> None:
        self._barge_in_at = now
        self._pair(now)

    def interrupted(self, sentences: list[Kept], now: float) -> None:
        """An interrupt stopped the voice, taking `sentences` off it (the cut one first)."""
        if self._kept:
            if now - self._paired_at <= PAIR_S:
                return  # the same event arriving twice
            self.forget()  # a later, deliberate interrupt: nothing to resume
        self._cut = (list(sentences), now)
        self._pair(now)

    def _pair(self, now: float) -> None:
        if self._cut is None or self._barge_in_at is None or not self.settings.resume:
            return
        sentences, at = self._cut
        if abs(at - self._barge_in_at) <= PAIR_S and sentences:
            self._kept = sentences
            self._paired_at = now
            self._quiet_since = None if self._voice_active else now
        self._cut, self._barge_in_at = None, None

    def voice(self, active: bool, now: float) -> None:
        self._voice_active = active
        self._quiet_since = None if active else (self._quiet_since if self._quiet_since is not None else now)

    def heard(self, text: str) -> bool:
        """A final transcript; True when it is a turn (the kept sentences are forgotten)."""
        if is_backchannel(text):
            return False
        self.forget()
        return True

    def forget(self) -> None:
        self._kept = []
        self._cut = None
        self._barge_in_at = None

    def due(self, now: float) -> list[Kept]:
        """The sentences to speak again, once (empty until the person has been quiet long enough)."""
        if not self._kept or self._quiet_since is None or now - self._quiet_since < self.settings.resume_after_s:
            return []
        kept, self._kept = self._kept, []
        return kept
