"""Cut a continuous audio stream into utterances for a recogniser, with pre-roll.

The VAD reports a start only after `start_ms` of voiced audio, so the segmenter keeps the
recent past and begins each utterance `preroll_ms` before the first voiced frame: the first
syllable is never lost. An utterance that reaches `max_utterance_s` is closed there; in its
last `CUT_SEARCH_FRACTION` before that, a pause of `CUT_PAUSE_MS` already closes it, so a long
turn or recording is cut between two words rather than in one ("Had he | married" came back
as "How do you marry?" at a 30 s cut in the middle of a word).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .vad import VadSettings, VoiceActivityDetector

# The share of max_utterance_s, at its end, in which a short pause closes the utterance, and
# that pause: longer than the gaps between a reader's words (most under 100 ms), shorter than
# the pauses between phrases (200 ms and more).
CUT_SEARCH_FRACTION = 0.25
CUT_PAUSE_MS = 150


@dataclass
class SegmentEvent:
    kind: str  # "start", "audio" or "end"
    sample: int  # absolute sample index (start: utterance start; end: last voiced sample)
    voiced: int = 0  # "start" only: the first voiced sample (after the pre-roll)
    samples: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int16))  # "audio" only


class Segmenter:
    def __init__(
        self,
        sample_rate: int,
        vad: VadSettings | None = None,
        preroll_ms: int = 300,
        max_utterance_s: float = 20.0,
        tail_ms: int = 150,
        history_ms: int = 0,
    ) -> None:
        if max_utterance_s <= 0:
            raise ValueError("max_utterance_s must be > 0")
        self.rate = sample_rate
        self.vad = VoiceActivityDetector(sample_rate, vad)
        self.tail = sample_rate * tail_ms // 1000
        self.history = sample_rate * history_ms // 1000  # audio kept for utterance_audio()
        self._set_lengths(preroll_ms, max_utterance_s)
        self._buf = np.zeros(0, dtype=np.int16)
        self._buf_start = 0
        self._emitted = 0
        self._utt_start = 0
        self.active = False

    def _set_lengths(self, preroll_ms: int, max_utterance_s: float) -> None:
        self.preroll = self.rate * preroll_ms // 1000
        self.max_samples = int(max_utterance_s * self.rate)
        settings = self.vad.settings
        # the audio kept: enough for the pre-roll before a start the VAD reports late
        self._keep = self.preroll + self.rate * (settings.start_window_ms + 2 * settings.frame_ms) // 1000 + self.rate
        self._keep = max(self._keep, self.history)

    def update(self, vad: VadSettings, preroll_ms: int, max_utterance_s: float) -> None:
        """New VAD thresholds and lengths (live parameters), for the next utterance: call it
        between utterances (AsrCore does), so an utterance is cut by one set of rules."""
        if max_utterance_s <= 0:
            raise ValueError("max_utterance_s must be > 0")
        self.vad.update(vad)
        self._set_lengths(preroll_ms, max_utterance_s)

    def abandon(self) -> None:
        """Drop the open utterance without an end (the node stopped listening mid-utterance)."""
        if self.active:
            self.vad.force_end()
            self.active = False

    @property
    def end_index(self) -> int:
        return self._buf_start + len(self._buf)

    def _slice(self, a: int, b: int) -> np.ndarray:
        a, b = max(a, self._buf_start), min(b, self.end_index)
        if b <= a:
            return np.zeros(0, dtype=np.int16)
        return self._buf[a - self._buf_start : b - self._buf_start].copy()

    def feed(self, samples: np.ndarray) -> list[SegmentEvent]:
        samples = np.asarray(samples, dtype=np.int16)
        self._buf = np.concatenate([self._buf, samples])
        events, _frames = self.vad.process(samples)
        out: list[SegmentEvent] = []
        for ev in events:
            if ev.kind == "start":
                self._open(ev.sample, out)
            else:
                self._close(ev.sample, out)
        if self.active:
            end = self.end_index
            if end > self._emitted:
                out.append(SegmentEvent("audio", self._emitted, samples=self._slice(self._emitted, end)))
                self._emitted = end
            if end - self._utt_start >= self.max_samples:
                forced = self.vad.force_end()
                self._close(forced.sample if forced else end, out)
        drop = len(self._buf) - self._keep
        if drop > 0:
            self._buf = self._buf[drop:]
            self._buf_start += drop
        return out

    def _open(self, first_voiced: int, out: list[SegmentEvent]) -> None:
        start = max(first_voiced - self.preroll, self._buf_start, self._emitted)
        self.active = True
        self._utt_start = self._emitted = start
        self.vad.end_sooner(start + int(self.max_samples * (1.0 - CUT_SEARCH_FRACTION)), CUT_PAUSE_MS)
        out.append(SegmentEvent("start", start, voiced=first_voiced))

    def _close(self, last_voiced: int, out: list[SegmentEvent]) -> None:
        if not self.active:
            return
        upto = min(self.end_index, max(last_voiced + self.tail, self._emitted))
        if upto > self._emitted:
            out.append(SegmentEvent("audio", self._emitted, samples=self._slice(self._emitted, upto)))
            self._emitted = upto
        self.active = False
        out.append(SegmentEvent("end", last_voiced))

    def recent_voice(self, ms: int) -> np.ndarray:
        """The last `ms` of the open utterance up to its last voiced sample (for prosody)."""
        end = self.vad.last_voiced_end
        return self._slice(max(end - self.rate * ms // 1000, self._utt_start), end)

    def utterance_audio(self, ms: int) -> np.ndarray:
        """The last `ms` of the open utterance up to now, silence after its last voice included
        (at most `history_ms` of it is kept)."""
        return self._slice(max(self.end_index - self.rate * ms // 1000, self._utt_start), self.end_index)

    def close_now(self) -> list[SegmentEvent]:
        """End the open utterance at once (the recogniser judged it complete)."""
        return self.flush()

    def flush(self) -> list[SegmentEvent]:
        """End of input: close an open utterance."""
        out: list[SegmentEvent] = []
        if self.active:
            forced = self.vad.force_end()
            self._close(forced.sample if forced else self.end_index, out)
        return out
