"""PCM helpers: int16/float conversion, resampling, levels, audio chunk checks (numpy only).

WAV files are read and written by fay_ros.common.wav (one reader, one downmix rule for hearing
and voice).
"""

from __future__ import annotations

import numpy as np

from ..common.wav import MAX_RATE, MIN_RATE, AudioFormatError

ASR_RATE = 16000
MAX_CHANNELS = 32


def check_chunk(sample_rate: int, channels: int, length: int, source: str = "audio chunk") -> None:
    """Raise AudioFormatError (naming `source`) unless a block of interleaved int16 samples
    with this rate, channel count and length can be used."""
    if not MIN_RATE <= sample_rate <= MAX_RATE:
        raise AudioFormatError(f"{source}: sample rate {sample_rate} Hz; expected {MIN_RATE}..{MAX_RATE} Hz")
    if not 1 <= channels <= MAX_CHANNELS:
        raise AudioFormatError(f"{source}: {channels} channels; expected 1..{MAX_CHANNELS}")
    if length % channels:
        raise AudioFormatError(f"{source}: {length} samples are not whole frames of {channels} channels")


def to_float(samples: np.ndarray) -> np.ndarray:
    return np.asarray(samples, dtype=np.float32) / 32768.0


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


def high_band_dbfs(samples: np.ndarray, rate: int, from_hz: float = 3500.0) -> float:
    """Level (dB, full scale = 0) of int16 samples above `from_hz`, from one Hann-windowed FFT:
    where a person's first consonant ("s", "t", "x") stands out of a robot's voiced echo."""
    if len(samples) == 0:
        return -120.0
    x = samples.astype(np.float64)
    power = np.abs(np.fft.rfft(x * np.hanning(len(x)))) ** 2
    band = power[np.fft.rfftfreq(len(x), 1.0 / rate) >= from_hz].sum()
    return 10.0 * np.log10(max(band / len(x), 1e-12) / 32768.0**2)


def periodicity(samples: np.ndarray, rate: int, low_hz: float = 80.0, high_hz: float = 400.0) -> float:
    """How periodic int16 samples are at a voice's pitch (80-400 Hz): the normalised
    autocorrelation's peak at those lags, 0..1. A vowel is well over 0.3; typing, hiss, a clap
    or a cough stay under it."""
    x = samples.astype(np.float64)
    x = x - x.mean()
    energy = float(np.dot(x, x))
    shortest, longest = int(rate / high_hz), int(rate / low_hz)
    if energy <= 0.0 or len(x) <= longest:
        return 0.0
    spectrum = np.fft.rfft(x, 2 * len(x))
    autocorrelation = np.fft.irfft(np.abs(spectrum) ** 2)[: len(x)]
    return float(max(0.0, autocorrelation[shortest : longest + 1].max() / energy))


def level_dbfs(samples: np.ndarray) -> float:
    """RMS level of int16 samples in dB relative to full scale (silence -> -120)."""
    if len(samples) == 0:
        return -120.0
    rms = float(np.sqrt(np.mean(np.square(samples.astype(np.float64)))))
    return 20.0 * np.log10(max(rms, 1e-6) / 32768.0)


# A quiet recording (a phone on the table, a recorder at low gain, a far speaker) is heard at
# a microphone's usual level: its loudest stretch (the PEAK_FRAMES loudest 30 ms frames, so a
# click does not count) is raised to PEAK_TARGET_DBFS when it stays under QUIET_PEAK_DBFS and
# stands STANDS_OUT_DB over the recording's quiet (a file of noise alone is left as it is). The
# VAD never takes a frame under its `min_level_dbfs` (-50 dBFS) for voice: JFK's line at -40 dB
# came out as "and so my fellow", a LibriVox sentence at -30 dB as "I" (bench_real_speech).
QUIET_PEAK_DBFS = -30.0
PEAK_TARGET_DBFS = -15.0  # the loud frames of the real-speech set: -25 to -8 dBFS
MAX_GAIN_DB = 40.0
PEAK_FRAMES = 10
STANDS_OUT_DB = 20.0
LEVEL_FRAME_S = 0.03


def recording_gain_db(samples: np.ndarray, rate: int) -> float:
    """The gain (dB, 0 = none) that brings a quiet recording's speech to a microphone's usual
    level (QUIET_PEAK_DBFS ...): for a whole recording, not a live stream."""
    frame = max(1, int(rate * LEVEL_FRAME_S))
    count = len(samples) // frame
    if count < 2 * PEAK_FRAMES:
        return 0.0
    x = np.asarray(samples[: count * frame], np.float64).reshape(count, frame)
    x -= x.mean(axis=1, keepdims=True)  # (a microphone's DC offset is no voice)
    levels = np.sort(10.0 * np.log10(np.maximum(np.mean(np.square(x), axis=1), 1e-12) / 32768.0**2))
    peak, quiet = float(levels[-PEAK_FRAMES]), float(np.percentile(levels, 10))
    if peak >= QUIET_PEAK_DBFS or peak - quiet < STANDS_OUT_DB:
        return 0.0
    return min(PEAK_TARGET_DBFS - peak, MAX_GAIN_DB)


def amplified(samples: np.ndarray, gain_db: float) -> np.ndarray:
    """int16 `samples` raised by `gain_db` (clipped at full scale)."""
    if not gain_db:
        return np.asarray(samples, np.int16)
    y = np.asarray(samples, np.float64) * 10.0 ** (gain_db / 20.0)
    return np.clip(np.round(y), -32768, 32767).astype(np.int16)


def from_loud_onset(
    samples: np.ndarray, rate: int, within_db: float = 15.0, before_s: float = 0.15, frame_s: float = 0.01
) -> np.ndarray:
    """`samples` from `before_s` before the first frame within `within_db` of the loudest one.

    What a person said over the robot comes as the mic's held audio: over a second of the
    canceller's residue of the robot's voice 20-30 dB under the words, then the words. Whisper
    base then often took the clip for silence (no-speech 0.42-0.67): of 24 clips from the rig
    test (12 "Stop!", 12 "yeah"), 1 "Stop!" decoded as nothing (the robot talked on) and 5 "yeah"
    as nothing or "D.A.". From 0.15 s before the words: 12 of 12 "Stop" (no-speech 0.11-0.21) and
    11 of 12 "yeah". Quieter words over a louder residue keep the clip whole (the first frame
    within reach of the peak is then the residue's)."""
    frame = max(1, int(rate * frame_s))
    count = len(samples) // frame
    if count < 2:
        return samples
    frames = samples[: count * frame].astype(np.float64).reshape(count, frame)
    levels = 10.0 * np.log10(np.maximum(np.mean(np.square(frames), axis=1), 1e-12))
    onset = int(np.argmax(levels >= levels.max() - within_db))
    return samples[max(0, onset * frame - int(rate * before_s)) :]
