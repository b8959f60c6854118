"""Voice activity: a per-frame speech classifier plus start/stop hysteresis.

A frame (30 ms) counts as voiced when the WebRTC VAD classifies it as speech AND its level is
clearly above the tracked noise floor (and above an absolute minimum), so hum, clicks and
a quiet room do not count. Voice starts after `start_ms` of voiced frames within a short
window (one noisy frame never starts it) and stops after `stop_ms` of continuous unvoiced
frames (a pause between words does not end an utterance).

Sample positions in events count input samples since the detector was created.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import webrtcvad

from .audio import level_dbfs, resample

WEBRTC_RATES = (8000, 16000, 32000, 48000)


@dataclass(frozen=True)
class VadSettings:
    frame_ms: int = 30
    aggressiveness: int = 2  # WebRTC VAD mode 0 (permissive) .. 3 (strict)
    start_ms: int = 150  # voiced time needed (within start_window_ms) to start
    start_window_ms: int = 300
    stop_ms: int = 500  # continuous unvoiced time that ends voice activity
    min_level_dbfs: float = -50.0  # quieter frames are never speech
    snr_db: float = 9.0  # a voiced frame must be this far above the noise floor

    def validate(self) -> None:
        if self.frame_ms not in (10, 20, 30):
            raise ValueError(f"frame_ms must be 10, 20 or 30 (got {self.frame_ms})")
        if not 0 <= self.aggressiveness <= 3:
            raise ValueError(f"aggressiveness must be 0..3 (got {self.aggressiveness})")
        if self.start_ms <= 0 or self.start_window_ms < self.start_ms:
            raise ValueError("need 0 < start_ms <= start_window_ms")
        if self.stop_ms <= 0:
            raise ValueError("stop_ms must be > 0")


@dataclass(frozen=True)
class VadEvent:
    kind: str  # "start" or "end"
    sample: int  # "start": first sample of the first voiced frame; "end": end of the last voiced frame


@dataclass(frozen=True)
class Frame:
    start: int  # input-sample index of the frame's first sample
    end: int
    level_db: float
    voiced: bool


class FrameClassifier:
    """WebRTC VAD decision gated by level: voiced = speech-like AND clearly above the noise."""

    def __init__(self, settings: VadSettings, rate: int) -> None:
        self.settings = settings
        self.rate = rate
        self._vad = webrtcvad.Vad(settings.aggressiveness)
        self.noise_floor_db = -70.0

    def update(self, settings: VadSettings) -> None:
        """New mode and thresholds from the next frame on; the tracked noise floor stays."""
        self.settings = settings
        self._vad.set_mode(settings.aggressiveness)

    def classify(self, frame: np.ndarray) -> tuple[bool, float]:
        level = level_dbfs(frame)
        speechy = self._vad.is_speech(frame.astype("<i2").tobytes(), self.rate)
        loud = level >= max(self.settings.min_level_dbfs, self.noise_floor_db + self.settings.snr_db)
        voiced = speechy and loud
        if not voiced:
            # Track the floor: fall fast (a quieter room), rise slowly (steady noise).
            alpha = 0.5 if level < self.noise_floor_db else 0.02
            self.noise_floor_db += alpha * (level - self.noise_floor_db)
        return voiced, level


class VoiceActivityDetector:
    """Feed any number of int16 samples; get start/end events and the per-frame decisions."""

    def __init__(self, sample_rate: int, settings: VadSettings | None = None) -> None:
        self.settings = settings or VadSettings()
        self.settings.validate()
        self.sample_rate = sample_rate
        # WebRTC VAD only takes 8/16/32/48 kHz; other rates are resampled for the decision.
        self.vad_rate = sample_rate if sample_rate in WEBRTC_RATES else 16000
        self.frame_len = self.vad_rate * self.settings.frame_ms // 1000
        self.classifier = FrameClassifier(self.settings, self.vad_rate)
        self.active = False
        self._pending = np.zeros(0, dtype=np.int16)
        self._consumed_vad = 0  # vad-rate samples framed so far
        self._consumed_in = 0  # input samples received so far
        self._window: deque[Frame] = deque()
        self._apply_hysteresis()
        self._silent_run = 0
        self._last_voiced_end = 0

    def _frames(self, ms: int) -> int:
        return max(1, round(ms / self.settings.frame_ms))

    def _apply_hysteresis(self) -> None:
        self._start_needed = self._frames(self.settings.start_ms)
        self._stop_needed = self._frames(self.settings.stop_ms)
        self._window = deque(self._window, maxlen=self._frames(self.settings.start_window_ms))

    def update(self, settings: VadSettings) -> None:
        """New thresholds (live parameters) from the next frame on. The noise floor, the frames
        in the start window and an ongoing voice stay: a change never cuts or invents speech
        by itself. The frame length cannot change (the frames in flight have the old one)."""
        settings.validate()
        if settings.frame_ms != self.settings.frame_ms:
            raise ValueError(f"frame_ms cannot change while running ({self.settings.frame_ms} -> {settings.frame_ms})")
        self.settings = settings
        self.classifier.update(settings)
        self._apply_hysteresis()

    def _to_input_index(self, vad_index: int) -> int:
        return round(vad_index * self.sample_rate / self.vad_rate)

    def process(self, samples: np.ndarray) -> tuple[list[VadEvent], list[Frame]]:
        samples = np.asarray(samples, dtype=np.int16)
        self._consumed_in += len(samples)
        if self.vad_rate != self.sample_rate:
            samples = resample(samples, self.sample_rate, self.vad_rate)
        buf = np.concatenate([self._pending, samples]) if len(self._pending) else samples
        events: list[VadEvent] = []
        frames: list[Frame] = []
        n = len(buf) // self.frame_len
        for i in range(n):
            chunk = buf[i * self.frame_len : (i + 1) * self.frame_len]
            voiced, level = self.classifier.classify(chunk)
            start = self._to_input_index(self._consumed_vad)
            self._consumed_vad += self.frame_len
            frame = Frame(start, self._to_input_index(self._consumed_vad), level, voiced)
            frames.append(frame)
            event = self._step(frame)
            if event:
                events.append(event)
        self._pending = buf[n * self.frame_len :].copy()
        return events, frames

    def _step(self, frame: Frame) -> VadEvent | None:
        self._window.append(frame)
        if frame.voiced:
            self._silent_run = 0
            self._last_voiced_end = frame.end
        else:
            self._silent_run += 1
        if not self.active:
            voiced = [f for f in self._window if f.voiced]
            if len(voiced) >= self._start_needed:
                self.active = True
                self._silent_run = 0
                return VadEvent("start", voiced[0].start)
        elif self._silent_run >= self._stop_needed:
            self.active = False
            self._window.clear()
            return VadEvent("end", self._last_voiced_end)
        return None

    def force_end(self) -> VadEvent | None:
        """End an active utterance now (e.g. it reached the maximum length)."""
        if not self.active:
            return None
        self.active = False
        self._window.clear()
        self._silent_run = 0
        return VadEvent("end", max(self._last_voiced_end, 0))

    @property
    def last_voiced_end(self) -> int:
        """Input-sample index just after the last voiced frame."""
        return self._last_voiced_end

    @property
    def silent_ms(self) -> int:
        """Continuous unvoiced time at the end of an active utterance (0 when inactive)."""
        return self._silent_run * self.settings.frame_ms if self.active else 0

    @property
    def samples_seen(self) -> int:
        return self._consumed_in
