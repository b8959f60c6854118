"""Spoken test material: espeak-ng sentences as 16-bit WAV at the recogniser's rate.

Used by the tests and the benchmarks (bench/run.py puts test/ on sys.path); no recorded
speech ships with the project. Voices: en-us, cmn-latn-pinyin (Mandarin; plain `cmn` is broken
on Debian 12), ko.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np

from fay_ros.common.wav import read_wav, write_wav
from fay_ros.hearing.audio import ASR_RATE, resample


def speak(text: str, voice: str, rate: int = ASR_RATE, speed: int = 160) -> np.ndarray:
    """Synthesize `text`; int16 mono samples at `rate`."""
    with tempfile.TemporaryDirectory(prefix="fay_speak_") as tmp:
        raw = Path(tmp) / "speech.wav"
        subprocess.run(
            ["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(raw), text], check=True, capture_output=True
        )
        wav = read_wav(raw)
    return resample(wav.samples, wav.sample_rate, rate)


def silence(seconds: float, rate: int = ASR_RATE) -> np.ndarray:
    return np.zeros(int(seconds * rate), dtype=np.int16)


def speak_to_wav(path: str | Path, parts: list, rate: int = ASR_RATE) -> np.ndarray:
    """Write a WAV made of parts: (text, voice) tuples are spoken, floats are seconds of silence."""
    chunks = [silence(p, rate) if isinstance(p, (int, float)) else speak(p[0], p[1], rate) for p in parts]
    samples = np.concatenate(chunks) if chunks else silence(0.0, rate)
    write_wav(path, samples, rate)
    return samples
