"""The microphone's logic without ROS: voice activity, half duplex and barge-in per chunk."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..common.wav import downmix
from .duplex import DuplexGate, DuplexSettings
from .vad import VadSettings, VoiceActivityDetector


@dataclass
class MicOutput:
    chunks: list[tuple[np.ndarray, Any]] = field(default_factory=list)  # (samples, stamp) for audio/raw
    voice_active: bool | None = None   # the new state when it changed
    interrupt: bool = False


class MicCore:
    def __init__(self, sample_rate: int, vad: VadSettings | None = None, duplex: DuplexSettings | None = None,
                 preroll_ms: int = 300, chunk_ms: float = 30.0) -> None:
        self.vad = VoiceActivityDetector(sample_rate, vad)
        self.gate = DuplexGate(duplex or DuplexSettings(), self.vad.settings.frame_ms)
        self._chunk_ms = chunk_ms
        self._held: deque[tuple[np.ndarray, Any]] = deque(maxlen=self._held_chunks(preroll_ms))
        self._forwarding = True
        self.voice_active = False

    def _held_chunks(self, preroll_ms: int) -> int:
        return max(1, int(round(preroll_ms / max(self._chunk_ms, 1.0))))

    def update(self, vad: VadSettings, duplex: DuplexSettings, preroll_ms: int) -> None:
        """New voice-activity, barge-in and pre-roll settings (live parameters) from the next
        chunk on; the noise floor, the learned echo level and the held audio stay."""
        self.vad.update(vad)
        self.gate.update(duplex)
        self._held = deque(self._held, maxlen=self._held_chunks(preroll_ms))

    def set_robot_speaking(self, speaking: bool, now: float) -> None:
        self.gate.set_robot_speaking(speaking, now)

    def process(self, samples: np.ndarray, stamp: Any, now: float) -> MicOutput:
        """One captured chunk (int16, mono or frames x channels) with its capture stamp."""
        out = MicOutput()
        mono = downmix(samples) if samples.ndim > 1 else samples
        _events, frames = self.vad.process(mono)
        decisions = [self.gate.step(f.voiced, f.level_db, now) for f in frames]
        if decisions:
            self._forwarding = any(d.forward for d in decisions)
        if any(d.interrupt for d in decisions):
            out.interrupt = True
            out.chunks.extend(self._held)
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
