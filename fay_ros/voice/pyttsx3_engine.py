"""pyttsx3 2.99 (espeak driver) as a speech engine.

pyttsx3 is the portable Python TTS API: voices are enumerated and selected through it, and
the audio comes from `save_to_file` + `runAndWait`. Its espeak driver initialises
libespeak-ng without phoneme events and reports word events by text position only, so this
engine returns no phoneme timings; the pipeline then builds the loudness-driven viseme track.

pyttsx3 initialises libespeak-ng once per process for itself, so this engine and
EspeakNgEngine must not be used in the same process (create_engine picks one per process;
the guard below says so clearly instead of producing garbled audio).
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..common.wav import read_wav
from . import libespeak_owner
from .engine_types import Synthesis, VoicedRun, VoiceError, VoiceSettings
from .language_runs import Language, split_runs

_lock = threading.Lock()


class Pyttsx3Engine:
    name = "pyttsx3"
    sample_rate = 22050  # pyttsx3's espeak driver writes 22050 Hz WAVs

    def __init__(self, settings: VoiceSettings) -> None:
        with libespeak_owner.starting("pyttsx3"):
            try:
                import pyttsx3

                self._engine = pyttsx3.init("espeak")
            except Exception as exc:  # noqa: BLE001 - pyttsx3 raises bare RuntimeErrors/ImportErrors
                raise VoiceError(f"pyttsx3 could not start its espeak driver: {exc}") from None
        self.settings = settings
        self._in_use: tuple[VoiceSettings, dict[str, str]] = (settings, {})
        self.use_settings(settings)

    def use_settings(self, settings: VoiceSettings) -> None:
        """See types.Engine: the voices are resolved first; the settings and their voice ids
        are swapped as one pair, read once per sentence, which sets rate, volume and voice."""
        with _lock:  # pyttsx3's voice list is not to be read while it synthesizes
            voice_ids = {
                settings.english_voice: self._resolve(settings.english_voice),
                settings.chinese_voice: self._resolve(settings.chinese_voice),
            }
        self._in_use = (settings, voice_ids)
        self.settings = settings

    def close(self) -> None:
        """Nothing to release: each sentence's files go with it."""

    def voices(self) -> list[str]:
        return sorted(v.id for v in self._engine.getProperty("voices"))

    def _resolve(self, voice: str) -> str:
        """pyttsx3 selects espeak voices reliably by identifier ("sit/cmn-latn-pinyin")."""
        wanted = voice.lower()
        for v in self._engine.getProperty("voices"):
            if wanted in (v.id.lower(), v.id.lower().split("/")[-1], str(v.name).lower()):
                return v.id
        raise VoiceError(f"pyttsx3 (espeak) has no voice {voice!r} (see `fay-ros say --engine pyttsx3 --list-voices`)")

    def synthesize(
        self, text: str, cancelled: Callable[[], bool] = lambda: False, language: Language | None = None
    ) -> Synthesis:
        chunks: list[np.ndarray] = []
        voiced: list[VoicedRun] = []
        offset = 0
        settings, voice_ids = self._in_use  # one sentence, one set of settings
        # pyttsx3 can only write files: one directory per sentence, gone with it (a directory for
        # the engine's life was left behind by every process that did not close the engine)
        with _lock, tempfile.TemporaryDirectory(prefix="fay_tts_pyttsx3_") as tmp:
            for index, run in enumerate(split_runs(text, language or settings.default_language)):
                if cancelled():
                    return Synthesis(np.zeros(0, np.int16), self.sample_rate, cancelled=True)
                voice = settings.voice_for(run.language)
                # Rate and volume after the voice: selecting a voice resets libespeak-ng's rate.
                self._engine.setProperty("voice", voice_ids[voice])
                self._engine.setProperty("rate", int(settings.rate_wpm))
                self._engine.setProperty("volume", float(settings.volume))
                path = Path(tmp) / f"run{index}.wav"
                self._engine.save_to_file(run.text, str(path))
                # The driver prints "Audio saved to ..." for every file; that is not our output.
                with contextlib.redirect_stdout(io.StringIO()):
                    self._engine.runAndWait()
                if not path.exists():
                    raise VoiceError(f"pyttsx3 produced no audio for {run.text!r}")
                audio = read_wav(path)
                if audio.sample_rate != self.sample_rate:
                    raise VoiceError(f"pyttsx3 wrote {audio.sample_rate} Hz audio; expected {self.sample_rate} Hz")
                samples = audio.samples
                voiced.append(VoicedRun(run.language, voice, run.text, offset / self.sample_rate))
                chunks.append(samples)
                offset += len(samples)
        samples = np.concatenate(chunks) if chunks else np.zeros(0, np.int16)
        return Synthesis(samples, self.sample_rate, [], voiced)
