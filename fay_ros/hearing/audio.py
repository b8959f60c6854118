"""PCM helpers: WAV reading, int16/float conversion, downmix and resampling (numpy only)."""
from __future__ import annotations

import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ASR_RATE = 16000
# What an audio stream may claim (AudioChunk, WAV header): anything outside is a broken
# producer, not audio (a rate of 0 divides by zero; a rate of 1 would resample 480 samples
# into 7.7 million).
MIN_RATE, MAX_RATE = 1000, 384000
MAX_CHANNELS = 32


class AudioFormatError(ValueError):
    """An audio file or buffer cannot be used; the message names the file and the reason."""


@dataclass
class PcmAudio:
    samples: np.ndarray  # int16, shape (frames,) mono or (frames, channels)
    sample_rate: int

    @property
    def duration(self) -> float:
        return len(self.samples) / float(self.sample_rate)


def read_wav(path: str | Path, mono: bool = True) -> PcmAudio:
    """Read a 16-bit PCM WAV file; downmix to mono unless `mono` is False."""
    path = Path(path)
    if not path.is_file():
        raise AudioFormatError(f"{path}: no such WAV file")
    try:
        with wave.open(str(path), "rb") as wav:
            width, channels, rate = wav.getsampwidth(), wav.getnchannels(), wav.getframerate()
            raw = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as exc:
        raise AudioFormatError(f"{path}: not a PCM WAV file ({exc})") from None
    except OSError as exc:
        raise AudioFormatError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if width != 2:
        raise AudioFormatError(f"{path}: {8 * width}-bit samples; only 16-bit PCM WAV is supported "
                               f"(convert with: sox {path.name} -b 16 out.wav)")
    if not MIN_RATE <= rate <= MAX_RATE:
        raise AudioFormatError(f"{path}: sample rate {rate} Hz in the header; expected {MIN_RATE}..{MAX_RATE} Hz")
    if len(raw) % width:
        raise AudioFormatError(f"{path}: the audio data ends in the middle of a sample ({len(raw)} bytes of "
                               f"{8 * width}-bit PCM); the file is truncated or damaged")
    data = np.frombuffer(raw, dtype="<i2").astype(np.int16)
    if channels > 1:
        data = data[: len(data) - len(data) % channels].reshape(-1, channels)
        if mono:
            data = downmix(data)
    return PcmAudio(data, rate)


def check_chunk(sample_rate: int, channels: int, length: int, source: str = "audio chunk") -> None:
    """Raise AudioFormatError (naming `source`) unless a block of interleaved int16 samples
    with this rate, channel count and length can be used."""
    if not MIN_RATE <= sample_rate <= MAX_RATE:
        raise AudioFormatError(f"{source}: sample rate {sample_rate} Hz; expected {MIN_RATE}..{MAX_RATE} Hz")
    if not 1 <= channels <= MAX_CHANNELS:
        raise AudioFormatError(f"{source}: {channels} channels; expected 1..{MAX_CHANNELS}")
    if length % channels:
        raise AudioFormatError(f"{source}: {length} samples are not whole frames of {channels} channels")


def write_wav(path: str | Path, samples: np.ndarray, sample_rate: int) -> None:
    samples = np.asarray(samples, dtype=np.int16)
    channels = 1 if samples.ndim == 1 else samples.shape[1]
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(samples.astype("<i2").tobytes())


def downmix(frames: np.ndarray) -> np.ndarray:
    """(frames, channels) int16 -> (frames,) int16 by averaging the channels."""
    if frames.ndim == 1:
        return frames
    return np.clip(frames.astype(np.int32).mean(axis=1), -32768, 32767).astype(np.int16)


def to_float(samples: np.ndarray) -> np.ndarray:
    return np.asarray(samples, dtype=np.float32) / 32768.0


def to_int16(samples: np.ndarray) -> np.ndarray:
    return np.clip(np.round(np.asarray(samples, dtype=np.float64) * 32768.0), -32768, 32767).astype(np.int16)


def resample(samples: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """Band-limited resampling of mono int16 audio (windowed-sinc low-pass, then interpolation).

    Good enough for speech (espeak-ng writes 22.05 kHz, the recognisers want 16 kHz); it keeps
    the module free of scipy.
    """
    samples = np.asarray(samples)
    if src_rate == dst_rate or len(samples) == 0:
        return samples.astype(np.int16, copy=False)
    x = samples.astype(np.float64)
    if dst_rate < src_rate:
        # Low-pass at 0.9 x the new Nyquist so the folded band stays out of the speech band.
        cutoff = 0.9 * 0.5 * dst_rate / src_rate  # cycles per input sample
        taps = 63
        n = np.arange(taps) - (taps - 1) / 2
        kernel = 2 * cutoff * np.sinc(2 * cutoff * n) * np.hamming(taps)
        kernel /= kernel.sum()
        x = np.convolve(x, kernel, mode="same")
    count = int(round(len(x) * dst_rate / src_rate))
    positions = np.arange(count) * (src_rate / dst_rate)
    y = np.interp(positions, np.arange(len(x)), x)
    return np.clip(np.round(y), -32768, 32767).astype(np.int16)


def level_dbfs(samples: np.ndarray) -> float:
    """RMS level of int16 samples in dB relative to full scale (silence -> -120)."""
    if len(samples) == 0:
        return -120.0
    rms = float(np.sqrt(np.mean(np.square(samples.astype(np.float64)))))
    return 20.0 * np.log10(max(rms, 1e-6) / 32768.0)
