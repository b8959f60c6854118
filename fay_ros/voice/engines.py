"""Speech engines: text -> 16-bit mono audio (+ timed phonemes when the engine has them).

Two engines, both on espeak-ng, one per process (they share libespeak-ng's global state):

- "espeak-ng" (default, `EspeakNgEngine` in espeak_ng.py): libespeak-ng through ctypes in
  synchronous mode with phoneme events. Gives the audio and, for every phoneme, the sample
  where it starts -- that is what the viseme track is built from.
- "pyttsx3" (`Pyttsx3Engine` in pyttsx3_engine.py): pyttsx3 2.99's espeak driver, the
  portable Python TTS API. Voices are enumerated and selected through pyttsx3; the audio
  comes from `save_to_file`. pyttsx3 exposes no phoneme timings, so its viseme track is
  the coarse loudness-driven one (visemes.track_from_energy).

Mixed Chinese/English sentences are spoken run by run (language_runs.split_runs), each run
with its language's voice, and the runs' audio is joined into one sentence.
"""
from __future__ import annotations

import wave
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal, Protocol

import numpy as np

from .language_runs import Language, Run, split_runs
from .visemes import TimedPhoneme

EngineName = Literal["espeak-ng", "pyttsx3"]
ENGINES: tuple[str, ...] = ("espeak-ng", "pyttsx3")

# Debian 12's espeak-ng 1.51 ships a `cmn` voice whose dictionary is broken (it reads Han
# characters as "Chinese letter ..."); `cmn-latn-pinyin` is the working Mandarin voice.
BROKEN_VOICES = {"cmn": "the 'cmn' voice is broken on Debian 12's espeak-ng; use 'cmn-latn-pinyin'",
                 "sit/cmn": "the 'cmn' voice is broken on Debian 12's espeak-ng; use 'cmn-latn-pinyin'"}


class VoiceError(RuntimeError):
    """The engine or a configured voice is unusable; the message says which and why."""


def check_voice_name(name: str) -> str:
    """Reject names that can never work (empty, known-broken); return the name stripped."""
    cleaned = name.strip()
    if not cleaned:
        raise ValueError("voice name is empty")
    if cleaned.lower() in BROKEN_VOICES:
        raise ValueError(BROKEN_VOICES[cleaned.lower()])
    return cleaned


@dataclass(frozen=True)
class VoiceSettings:
    english_voice: str = "en-us"
    chinese_voice: str = "cmn-latn-pinyin"
    rate_wpm: int = 175
    volume: float = 1.0  # 1.0 = espeak-ng's normal loudness (its volume 100)
    default_language: Language = "en"  # for text without letters ("123")

    def voice_for(self, language: Language) -> str:
        return self.chinese_voice if language == "zh" else self.english_voice

    def __post_init__(self) -> None:
        check_voice_name(self.english_voice)
        check_voice_name(self.chinese_voice)


@dataclass(frozen=True)
class VoicedRun:
    language: Language
    voice: str
    text: str
    start: float  # seconds into the sentence audio


@dataclass
class Synthesis:
    samples: np.ndarray  # int16, mono
    sample_rate: int
    phonemes: list[TimedPhoneme] = field(default_factory=list)  # empty: engine has no timings
    runs: list[VoicedRun] = field(default_factory=list)
    cancelled: bool = False

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate if self.sample_rate else 0.0

    @property
    def has_timings(self) -> bool:
        return bool(self.phonemes)


class Engine(Protocol):
    name: str
    sample_rate: int

    def synthesize(self, text: str, cancelled: Callable[[], bool] = lambda: False) -> Synthesis: ...

    def voices(self) -> list[str]: ...


def language_runs(text: str, settings: VoiceSettings) -> list[Run]:
    return split_runs(text, settings.default_language)


def create_engine(name: str, settings: VoiceSettings) -> Engine:
    if name == "espeak-ng":
        from .espeak_ng import EspeakNgEngine
        return EspeakNgEngine(settings)
    if name == "pyttsx3":
        from .pyttsx3_engine import Pyttsx3Engine
        return Pyttsx3Engine(settings)
    raise VoiceError(f"unknown TTS engine {name!r}; choose one of {', '.join(ENGINES)}")


def write_wav(path: str | Path, samples: np.ndarray, sample_rate: int) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(np.asarray(samples, dtype="<i2").tobytes())
    return path


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as src:
        if src.getsampwidth() != 2:
            raise ValueError(f"{path}: expected 16-bit PCM, got {8 * src.getsampwidth()}-bit")
        data = np.frombuffer(src.readframes(src.getnframes()), dtype="<i2")
        channels = src.getnchannels()
        if channels > 1:
            data = data.reshape(-1, channels)[:, 0]
        return data.astype(np.int16), src.getframerate()
