"""Transcribe recordings that have a reference transcript and score them (WER/CER, real-time
factor): what `fay-ros transcribe --bench DIR` prints and bench/bench_real_speech.py tabulates.

A clip is NAME.wav with NAME.txt beside it (the reference, UTF-8), anywhere under the folder.
Each clip goes through the path a live utterance takes (VAD segmenter -> recogniser, AsrCore),
so a recording with pauses is heard as the node would hear it; its finals joined are the
hypothesis. A quiet recording is raised to a microphone's usual level first
(audio.recording_gain_db): the VAD takes nothing under -50 dBFS for voice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .asr_core import AsrCore, TranscriptEvent
from .audio import amplified, recording_gain_db
from .recognition import Recognizer
from .scoring import Score, is_chinese, max_repeats, score
from .vad import VadSettings


@dataclass
class Clip:
    path: Path
    reference: str

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def chinese(self) -> bool:
        return is_chinese(self.reference)


@dataclass
class ClipResult:
    clip: Clip
    hypothesis: str
    score: Score
    duration: float  # seconds of audio
    seconds: float  # decoding time
    repeats: int  # most back-to-back repeats of a phrase in the hypothesis
    reference_repeats: int

    @property
    def rtf(self) -> float:
        return self.seconds / self.duration if self.duration else 0.0


def find_clips(folder: str | Path) -> list[Clip]:
    """Every WAV under `folder` with a reference transcript beside it, sorted by path."""
    clips = []
    for wav in sorted(Path(folder).rglob("*.wav")):
        ref = wav.with_suffix(".txt")
        if ref.is_file():
            clips.append(Clip(wav, ref.read_text(encoding="utf-8").strip()))
    return clips


def transcribe_stream(
    recognizer: Recognizer,
    samples: np.ndarray,
    rate: int,
    endpoint_ms: int = 500,
    max_utterance_s: float = 30.0,
    gain_db: float | None = None,
) -> list[TranscriptEvent]:
    """The finals of a recording fed in 100 ms chunks through the VAD segmenter; a quiet
    recording raised by `gain_db` first (None: `recording_gain_db`'s)."""
    if gain_db is None:
        gain_db = recording_gain_db(samples, rate)
    samples = amplified(samples, gain_db)
    core = AsrCore(recognizer, VadSettings(stop_ms=endpoint_ms), max_utterance_s=max_utterance_s)
    chunk = max(1, rate // 10)
    finals: list[TranscriptEvent] = []
    for i in range(0, len(samples), chunk):
        finals += [e for e in core.feed(samples[i : i + chunk], rate, i / rate) if e.is_final]
    return finals + [e for e in core.flush() if e.is_final]


def joined(finals: list[TranscriptEvent]) -> str:
    """The finals as one text (Chinese pieces joined without a space)."""
    out = ""
    for ev in finals:
        text = ev.text.strip()
        if out and text and not (is_chinese(out[-1:]) or is_chinese(text[:1])):
            out += " "
        out += text
    return out


def run_clip(recognizer: Recognizer, clip: Clip, endpoint_ms: int = 500) -> ClipResult:
    from ..common.wav import read_wav

    wav = read_wav(str(clip.path))
    t0 = time.perf_counter()
    finals = transcribe_stream(recognizer, wav.samples, wav.sample_rate, endpoint_ms)
    seconds = time.perf_counter() - t0
    hyp = joined(finals)
    return ClipResult(
        clip,
        hyp,
        score(clip.reference, hyp, clip.chinese),
        len(wav.samples) / wav.sample_rate,
        seconds,
        max_repeats(hyp),
        max_repeats(clip.reference),
    )


@dataclass
class Totals:
    english: Score
    chinese: Score
    duration: float
    seconds: float

    @property
    def rtf(self) -> float:
        return self.seconds / self.duration if self.duration else 0.0


def totals(results: list[ClipResult]) -> Totals:
    en, zh = Score(0, 0, "word"), Score(0, 0, "char")
    for r in results:
        if r.clip.chinese:
            zh += r.score
        else:
            en += r.score
    return Totals(en, zh, sum(r.duration for r in results), sum(r.seconds for r in results))
