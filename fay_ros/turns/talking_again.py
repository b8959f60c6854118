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
recogniser makes nothing of) stops counting `FINAL_DUE_S` after it ends.

Pure logic on one monotonic clock; the tts node feeds it events and polls `waiting`.
"""

from __future__ import annotations

from .turn_timing import FINAL_DUE_S


class TalkingAgain:
    def __init__(self) -> None:
        self._voice = False
        self._rose = float("-inf")  # when the voice activity last rose
        self._fell = float("-inf")  # ... and last fell
        self._final = float("-inf")  # when the last final transcript came

    def voice(self, active: bool, now: float) -> None:
        if active and not self._voice:
            self._rose = now
        if not active and self._voice:
            self._fell = now
        self._voice = active

    def final(self, now: float) -> None:
        self._final = now

    def waiting(self, now: float) -> bool:
        """The person talks, or talked, since their last final, and that talk's final is due."""
        if self._rose <= self._final:
            return False
        return self._voice or now - self._fell < FINAL_DUE_S
