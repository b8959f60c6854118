"""Whether the person has said something since their last turn ended that has not become a
turn yet: the mic's voice activity (`audio/voice_active`) rose after their last final
transcript (`speech/final`), and that talk's own final has not come.

That is the person going on after a pause the recogniser took for the end of their turn
("Please call me" ... "tomorrow morning"). A reply about to start from silence then waits
(SpeechPipeline.set_person_talking, the tts node's `wait_for_person_s`): speaking would talk
over them, and in half duplex it would mute the microphone and lose the rest of their words.
It waits past the end of their voice too, for the final that voice is due to bring (the mic's
voice activity may fall before the recogniser's final comes): that final drops the waiting
reply, since the dialogue answers all they said. Voice that brings no final (a cough the
recogniser makes nothing of) stops counting `FINAL_DUE_S` after it ends, or longer when the
recogniser runs behind: the last final's lag behind the end of its speech (its stamp), times
`FINAL_LAG_MARGIN`, up to `FINAL_DUE_MAX_S`.

Pure logic on one monotonic clock; the tts node feeds it events and polls `waiting`.
"""

from __future__ import annotations

from .turn_timing import FINAL_DUE_MAX_S, FINAL_DUE_S, FINAL_LAG_MARGIN


class TalkingAgain:
    def __init__(self) -> None:
        self._voice = False
        self._rose = float("-inf")  # when the voice activity last rose
        self._fell = float("-inf")  # ... and last fell
        self._final = float("-inf")  # when the speech the last final transcript covers ended
        self._lag = 0.0  # how long after the end of its speech the last final came (the recogniser's pace)

    def voice(self, active: bool, now: float) -> None:
        if active and not self._voice:
            self._rose = now
        if not active and self._voice:
            self._fell = now
        self._voice = active

    def final(self, now: float, behind_s: float | None = None) -> None:
        """A final came; `behind_s`: how long after the end of its speech (None: not known).
        It covers the talk up to the end of its speech: voice that rose after that is talk of
        its own, even when this final came later (a recogniser running behind delivered the
        first half's final after the second half had begun)."""
        if behind_s is not None and 0.0 <= behind_s <= FINAL_DUE_MAX_S * 10:  # (a clock mix-up is no pace)
            self._lag = behind_s
            self._final = now - behind_s
        else:
            self._final = now

    def final_due_s(self) -> float:
        """How long after the voice fell its final is due, at the recogniser's present pace."""
        return min(FINAL_DUE_MAX_S, max(FINAL_DUE_S, FINAL_LAG_MARGIN * self._lag))

    def waiting(self, now: float) -> bool:
        """The person talks, or talked, since their last final, and that talk's final is due."""
        if self._rose <= self._final:
            return False
        return self._voice or now - self._fell < self.final_due_s()
