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

This module is the factory; what engines take and return (VoiceSettings, Synthesis, Engine,
VoiceError) is in voice.types. An engine is imported only when chosen, so a process never
loads the other one's library state.
"""

from __future__ import annotations

from typing import get_args

from .engine_types import Engine, EngineName, VoiceError, VoiceSettings

ENGINES: tuple[str, ...] = get_args(EngineName)


def create_engine(name: str, settings: VoiceSettings) -> Engine:
    if name == "espeak-ng":
        from .espeak_ng import EspeakNgEngine

        return EspeakNgEngine(settings)
    if name == "pyttsx3":
        from .pyttsx3_engine import Pyttsx3Engine

        return Pyttsx3Engine(settings)
    raise VoiceError(f"unknown TTS engine {name!r}; choose one of {', '.join(ENGINES)}")
