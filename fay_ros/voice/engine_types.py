"""What every speech engine takes and returns: settings, the synthesis result, the Engine
protocol and VoiceError.

Its own module so the engines (espeak_ng, pyttsx3_engine) and the factory that imports them
(engines.create_engine) never import each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from ..common.errors import ConfigError
from .language_runs import Language
from .visemes import TimedPhoneme

EngineName = Literal["espeak-ng", "pyttsx3"]

# Debian 12's espeak-ng 1.51 ships a `cmn` voice whose dictionary is broken (it reads Han
# characters as "Chinese letter ..."); `cmn-latn-pinyin` is the working Mandarin voice.
BROKEN_VOICES = {
    "cmn": "the 'cmn' voice is broken on Debian 12's espeak-ng; use 'cmn-latn-pinyin'",
    "sit/cmn": "the 'cmn' voice is broken on Debian 12's espeak-ng; use 'cmn-latn-pinyin'",
}


class VoiceError(ConfigError, RuntimeError):
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

    def synthesize(
        self, text: str, cancelled: Callable[[], bool] = lambda: False, language: Language | None = None
    ) -> Synthesis:
        """`language`: of text without letters (digits); None = settings.default_language."""
        ...

    def voices(self) -> list[str]: ...

    def use_settings(self, settings: VoiceSettings) -> None:
        """Check `settings` (its voices must exist: VoiceError otherwise, nothing changed) and
        use them from the next synthesize() call on; a synthesis in progress keeps the
        settings it started with. Safe while another thread synthesizes."""
        ...

    def close(self) -> None:
        """Release what the engine holds (the library itself stays loaded in the process)."""
        ...
