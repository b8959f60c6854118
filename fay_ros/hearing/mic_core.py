"""The microphone's logic without ROS: echo cancellation, voice activity, half duplex and
barge-in per chunk.

With an `EchoCanceller` the robot's played audio (`add_played`, the tts node's `audio/played`)
is taken out of each chunk before the VAD and the duplex gate see it, and the published audio
is the cancelled signal (the recogniser must not hear the robot either). With a `RoomEcho`
(headless runs, tests) the played audio is first mixed into the chunk as a loudspeaker in the
room would be heard.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..common.wav import downmix
from ..turns.duplex_gate import DuplexGate, DuplexSettings, GateDecision
from ..turns.turn_timing import PHRASE_GAP_S
from .audio import from_loud_onset, high_band_dbfs, level_dbfs, periodicity
from .echo import EchoCanceller, PlayedReference, RoomEcho
from .vad import VadSettings, VoiceActivityDetector

# For this long after the robot's voice starts again from silence, the canceller still lets
# bursts of it through (measured: ~150 ms at the robot's phrase onsets), which the double-talk
# rule would take for a person: the gate judges only by level then.
ONSET_GUARD_S = 0.15
# ... and after that, until the canceller has taken its converged share (`converged_db`) out of
# a loud frame of the new phrase again, it is settling: on some onsets (espeak-ng's Mandarin 嗯
# after a pause) it takes only 2-6 dB for a further 100 ms, and the robot held itself. The gate
# then takes only a frame with almost nothing taken out for a person (turns.turn_timing.SETTLING_DOUBLE_TALK_DB,
# the hold's only: "Hold on" 4 s in, 120 ms after the robot began a phrase, held at 93 ms, was
# 152; "Excuse me" at 78 ms, was 378). A person talking from the phrase's start keeps the
# canceller from ever getting there, so the settling ends after this long.
RECANCEL_MAX_S = 0.3
# A played block that comes after the microphone audio of its time was processed (a busy
# machine, DDS) was missing from the canceller's reference: the echo it leaves is not taken out
# for the canceller's span after it, and looks like a person. The gate does not judge that audio
# (measured: with a 60-150 ms late stretch in 2% of chunks, 14 of 24 replies held themselves).
LATE_SPAN_S = 0.2  # (without a canceller: the room's echo path)
# ... but a block only this little late (the canceller missed at most one output block's worth)
# leaves too little echo to matter, and a busy machine delivers many: the gate then went blind
# for 220 ms at a time and missed a "Stop!". Measured on the robot's own voice (12 replies x 4
# rooms, blocks 3-60 ms late at 10% of the chunks): 0 of 48 held with this floor (2 of 48 with
# none, 0 with every late block judged blind), and 112 chunks not judged instead of 3028.
LATE_MIN_S = 0.02


@dataclass
class MicOutput:
    chunks: list[tuple[np.ndarray, Any]] = field(default_factory=list)  # (samples, stamp) for audio/raw
    voice_active: bool | None = None  # the new state when it changed
    interrupt: bool = False
    talk_over: bool | None = None  # True: hold the robot's voice; False: let it go on (DuplexGate)
    talk_over_clip: np.ndarray | None = None  # at a release: the held audio (the words, the pre-roll before)


class MicCore:
    def __init__(
        self,
        sample_rate: int,
        vad: VadSettings | None = None,
        duplex: DuplexSettings | None = None,
        preroll_ms: int = 300,
        chunk_ms: float = 30.0,
        *,
        echo: EchoCanceller | None = None,
        room_echo: RoomEcho | None = None,
    ) -> None:
        self.sample_rate = sample_rate
        self.vad = VoiceActivityDetector(sample_rate, vad)
        self.gate = DuplexGate(duplex or DuplexSettings(), self.vad.settings.frame_ms)
        self.echo = echo
        self.room_echo = room_echo
        self.played = PlayedReference()
        self._chunk_ms = chunk_ms
        self._held: deque[tuple[np.ndarray, Any]] = deque(maxlen=self._held_chunks(preroll_ms))
        self._forwarding = True
        self.voice_active = False
        self._voice_since = float("-inf")  # when the robot's voice started after silence (a phrase)
        self._sounded_until = float("-inf")  # capture time of the end of the last chunk the robot's voice was in
        self._recancelled = False  # ... and the canceller has taken its share out of it since
        self._processed_until = float("-inf")  # capture time of the end of the last chunk
        self._unsure_until = float("-inf")  # the gate does not judge audio captured before this
        self.late_blocks = 0  # (statistics: played blocks that came late,
        self.unjudged_chunks = 0  # ... and the chunks not judged for them)

    def _held_chunks(self, preroll_ms: int) -> int:
        # The pre-roll before the talk-over, plus the talk-over the gate waited for: the
        # person's first words are published with the barge-in, not lost to the wait.
        gate = self.gate.settings
        waited_ms = max(gate.window_ms, gate.hold_ms + gate.long_hold_ms if gate.hold_ms else 0)
        held_ms = preroll_ms + (waited_ms if gate.barge_in else 0)
        return max(1, int(round(held_ms / max(self._chunk_ms, 1.0))))

    def _from_the_words(self, held: list[tuple[np.ndarray, Any]]) -> list[tuple[np.ndarray, Any]]:
        """The held chunks from the one where the person's words begin (audio.from_loud_onset):
        before them the held audio is the canceller's residue of the robot's voice, and Whisper
        decoded a barged-in "yeah yeah yeah" with it as "I'm not a fan of you." (a turn)."""
        if len(held) < 2 or held[0][0].ndim != 1:
            return held
        audio = np.concatenate([chunk for chunk, _stamp in held])
        skip = len(audio) - len(from_loud_onset(audio, self.sample_rate))
        for index, (chunk, _stamp) in enumerate(held):
            if skip < len(chunk):
                return held[index:]
            skip -= len(chunk)
        return held[-1:]

    def update(self, vad: VadSettings, duplex: DuplexSettings, preroll_ms: int) -> None:
        """New voice-activity, barge-in and pre-roll settings (live parameters) from the next
        chunk on; the noise floor, the learned echo level and the held audio stay."""
        self.vad.update(vad)
        self.gate.update(duplex)
        self._held = deque(self._held, maxlen=self._held_chunks(preroll_ms))

    def set_robot_speaking(self, speaking: bool, now: float) -> None:
        self.gate.set_robot_speaking(speaking, now)

    def add_played(self, samples: np.ndarray, rate: int, start: float) -> float:
        """Audio the robot played, `start` = when its first sample played (the audio clock).
        Returns how late it came when that keeps the gate from judging the audio its echo is in:
        how much microphone audio of its time was processed without it (0.0: in time, or too
        little late to matter, LATE_MIN_S)."""
        late = max(0.0, self._processed_until - start)
        if late < LATE_MIN_S:  # see LATE_SPAN_S
            late = 0.0
        else:
            span = self.echo.tail_s if self.echo is not None else LATE_SPAN_S
            self._unsure_until = max(self._unsure_until, start + len(samples) / rate + span)
            self.late_blocks += 1
        self.played.add(samples, rate, start)
        return late

    def process(self, samples: np.ndarray, stamp: Any, now: float, captured: float | None = None) -> MicOutput:
        """One captured chunk (int16, mono or frames x channels) with its capture stamp;
        `captured`: the capture time of its first sample on the audio clock (aligns the played
        reference; needed with an echo canceller or a room echo)."""
        out = MicOutput()
        suppression = input_db = None
        settling = False
        if (self.room_echo is not None or self.echo is not None) and captured is not None and samples.ndim == 1:
            if self.room_echo is not None:
                samples = self.room_echo.add(samples, captured, self.sample_rate, self.played)
            # Only while the robot's voice (or its echo tail) can be in the chunk: the canceller
            # is not transparent (a DC notch), so the person alone is passed on untouched.
            if self.echo is not None and captured <= self.played.end + self.echo.tail_s:
                reference = self.played.take(captured, len(samples), self.sample_rate)
                cancelled = self.echo.cancel(samples, reference)
                if len(cancelled) == len(samples):  # (the mic node makes echo frames = chunks)
                    if reference.any():
                        # (capture times are whole samples: half a sample absorbs the float error)
                        half_sample = 0.5 / self.sample_rate
                        if captured - self._sounded_until + half_sample >= PHRASE_GAP_S:
                            self._voice_since, self._recancelled = captured, False
                        self._sounded_until = captured + len(samples) / self.sample_rate
                        # (no double-talk judgement just after the robot starts again:
                        # ONSET_GUARD_S, RECANCEL_MAX_S)
                        since = captured - self._voice_since + half_sample
                        if since >= ONSET_GUARD_S:
                            level_in = level_dbfs(samples)
                            taken = level_in - level_dbfs(cancelled)
                            self._recancelled = self._recancelled or (
                                level_in >= self.gate.settings.min_level_dbfs
                                and taken >= self.gate.settings.converged_db
                            )
                            input_db, suppression = level_in, taken
                            settling = not self._recancelled and since < RECANCEL_MAX_S
                    samples = cancelled
        mono = downmix(samples) if samples.ndim > 1 else samples
        _events, frames = self.vad.process(mono)
        judging = self.gate.robot_speaking and self.gate.settings.barge_in
        if captured is not None:
            self._processed_until = captured + len(mono) / self.sample_rate
        if judging and captured is not None and captured < self._unsure_until:
            self.unjudged_chunks += 1
            decisions = [GateDecision(self.gate.open) for _ in frames]
        else:
            # (the spectral features only where the gate judges talk-over; the high band with the
            # double-talk rule: once the canceller has the robot's phrase)
            high_band = (
                high_band_dbfs(mono, self.sample_rate) if judging and suppression is not None and not settling else None
            )
            pitch = periodicity(mono, self.sample_rate) if judging else None
            decisions = [
                self.gate.step(f.voiced, f.level_db, now, suppression, input_db, high_band, pitch, settling)
                for f in frames
            ]
        if decisions:
            self._forwarding = any(d.forward for d in decisions)
        for decision in decisions:
            if decision.hold or decision.release:
                out.talk_over = decision.hold
        if out.talk_over is False and self._held:
            # What was said over the robot, for the recogniser to tell "stop!" from "yeah"
            out.talk_over_clip = np.concatenate([chunk for chunk, _stamp in self._held] + [samples])
        if any(d.interrupt for d in decisions):
            out.interrupt = True
            out.chunks.extend(self._from_the_words(list(self._held)))
            self._held.clear()
        if self._forwarding:
            out.chunks.append((samples, stamp))
        else:
            self._held.append((samples, stamp))
        active = self.vad.active and self._forwarding
        if active != self.voice_active:
            self.voice_active = active
            out.voice_active = active
        return out
