"""Whether the person has started talking again since their last turn ended: the mic's voice
activity (`audio/voice_active`) rose after their last final transcript (`speech/final`).

That is the person going on after a pause the recogniser took for the end of their turn
("Please call me" ... "tomorrow morning"). A reply about to start from silence then waits
(SpeechPipeline.set_person_talking, the tts node's `wait_for_person_s`): speaking would talk
over them, and in half duplex it would mute the microphone and lose the rest of their words.
The answer to the whole sentence replaces the waiting reply (the dialogue joins the two texts
while the first turn has said nothing yet).

Pure logic on one monotonic clock; the tts node feeds it events.
"""
from __future__ import annotations


class TalkingAgain:
    def __init__(self) -> None:
        self._voice = False
        self._rose = float("-inf")    # when the voice activity last rose
        self._final = float("-inf")   # when the last final transcript came

    def voice(self, active: bool, now: float) -> bool:
        if active and not self._voice:
            self._rose = now
        self._voice = active
        return self.talking

    def final(self, now: float) -> bool:
        self._final = now
        return self.talking

    @property
    def talking(self) -> bool:
        return self._voice and self._rose > self._final
