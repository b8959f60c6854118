"""Audio files: the one WAV reader (8, 16, 24 or 32-bit integer PCM, heard as 16-bit), the one
recording reader (any format a person's recorder, phone or browser writes) and the one writer
(16-bit PCM WAV), numpy and the standard `wave` module.

`read_wav` reads the WAV files the project writes and most recorders do, with no decoder.
`read_audio` reads what a user brings: integer PCM WAV through `read_wav`; a float or
WAVE_FORMAT_EXTENSIBLE WAV, FLAC (LibriSpeech), MP3 (Common Voice), Ogg Vorbis/Opus, M4A/AAC (a
phone's voice memo) or WebM (a browser's recording) through PyAV, FFmpeg's decoders in the `av`
wheel the hearing requirements already install for faster-whisper. Hearing (the mic's file
source, `fay-ros transcribe`, its `--bench`) reads with `read_audio`; voice (pyttsx3's files, the
tts node's `wav_dir`, `fay-ros say --wav`) with `read_wav` and `write_wav`. Every caller gets the
same checks and the same AudioFormatError naming the file.

Downmix rule: the mean of the channels (what sox and ffmpeg do for `-c 1` / `-ac 1`). Taking
one channel would hear nothing of a voice recorded on the other one; the mean keeps both.
"""

from __future__ import annotations

import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import FayError

# What an audio stream may claim (AudioChunk, WAV header): anything outside is a broken
# producer, not audio (a rate of 0 divides by zero; a rate of 1 would resample 480 samples
# into 7.7 million).
MIN_RATE, MAX_RATE = 1000, 384000


class AudioFormatError(FayError, ValueError):
    """An audio file or buffer cannot be used; the message names the file and the reason."""


class NotPcmWavError(AudioFormatError):
    """The `wave` module reads no PCM from the file (float samples, WAVE_FORMAT_EXTENSIBLE, no
    RIFF header at all: perhaps another format under a .wav name); `read_audio` then asks FFmpeg.
    A PCM WAV that is damaged (cut mid-sample, an impossible rate) is an AudioFormatError."""


@dataclass
class PcmAudio:
    samples: np.ndarray  # int16, shape (frames,) mono or (frames, channels)
    sample_rate: int

    @property
    def duration(self) -> float:
        return len(self.samples) / float(self.sample_rate)


def read_wav(path: str | Path, mono: bool = True) -> PcmAudio:
    """Read an integer PCM WAV file (8, 16, 24 or 32-bit: a recorder's 24-bit file too) as int16;
    downmix to mono (channel mean) unless `mono` is False.

    Raises AudioFormatError naming the file for anything that is not usable audio: missing
    file, not a WAV, float samples, a rate outside MIN_RATE..MAX_RATE, data cut mid-sample.
    """
    path = Path(path)
    if not path.is_file():
        raise AudioFormatError(f"{path}: no such WAV file")
    try:
        with wave.open(str(path), "rb") as wav:
            width, channels, rate = wav.getsampwidth(), wav.getnchannels(), wav.getframerate()
            raw = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as exc:
        hint = f" (float samples? convert with: sox {path.name} -b 16 out.wav)" if "format: 3" in str(exc) else ""
        raise NotPcmWavError(f"{path}: not a PCM WAV file ({exc}){hint}") from None
    except OSError as exc:
        raise AudioFormatError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if width not in PCM_WIDTHS:
        raise AudioFormatError(
            f"{path}: {8 * width}-bit samples; only 8, 16, 24 and 32-bit PCM WAV is supported "
            f"(convert with: sox {path.name} -b 16 out.wav)"
        )
    if not MIN_RATE <= rate <= MAX_RATE:
        raise AudioFormatError(f"{path}: sample rate {rate} Hz in the header; expected {MIN_RATE}..{MAX_RATE} Hz")
    if len(raw) % width:
        raise AudioFormatError(
            f"{path}: the audio data ends in the middle of a sample ({len(raw)} bytes of "
            f"{8 * width}-bit PCM); the file is truncated or damaged"
        )
    data = _to_int16(raw, width)
    return _framed(data, channels, rate, mono)


# What `read_audio` looks for in a folder of recordings (`fay-ros transcribe --bench`); it decodes
# any file FFmpeg can, whatever its name.
AUDIO_SUFFIXES = (".wav", ".wave", ".flac", ".mp3", ".ogg", ".oga", ".opus", ".m4a", ".aac", ".mp4", ".webm", ".mka")


def read_audio(path: str | Path, mono: bool = True) -> PcmAudio:
    """Read a recording in any common format as int16 at its own rate; downmix to mono (channel
    mean) unless `mono` is False. An integer PCM WAV goes through `read_wav`; anything else, or
    a WAV the `wave` module reads no PCM from (float samples, WAVE_FORMAT_EXTENSIBLE), is decoded
    by PyAV. A damaged PCM WAV (cut mid-sample, an impossible rate) is refused as `read_wav`
    refuses it, not guessed at. Raises AudioFormatError naming the file when neither can."""
    path = Path(path)
    if not path.is_file():
        raise AudioFormatError(f"{path}: no such audio file")
    if not path.stat().st_size:
        raise AudioFormatError(f"{path}: the file is empty")
    wav_error: AudioFormatError | None = None
    if path.suffix.lower() in (".wav", ".wave"):
        try:
            return read_wav(path, mono)
        except NotPcmWavError as exc:
            wav_error = exc
    try:
        return _decode(path, mono)
    except AudioFormatError:
        if wav_error is not None:
            raise wav_error from None  # (a broken WAV: the WAV reader's reason is the precise one)
        raise


def _decode(path: Path, mono: bool) -> PcmAudio:
    """The first audio stream of `path` through FFmpeg (PyAV), as interleaved int16."""
    try:
        import av
    except ImportError:
        raise AudioFormatError(
            f"{path}: reading {path.suffix or 'this'} files needs PyAV (pip install -r requirements/hearing.txt); "
            "or convert it with: sox IN -b 16 out.wav"
        ) from None
    try:
        with av.open(str(path)) as container:
            if not container.streams.audio:
                raise AudioFormatError(f"{path}: no audio stream in the file")
            stream = container.streams.audio[0]
            rate = stream.rate
            if not MIN_RATE <= (rate or 0) <= MAX_RATE:
                raise AudioFormatError(f"{path}: sample rate {rate} Hz; expected {MIN_RATE}..{MAX_RATE} Hz")
            # packed s16 at the stream's own rate and channels: the WAV reader's form
            resampler = av.AudioResampler(format="s16", rate=rate)
            frames = [out for frame in container.decode(stream) for out in resampler.resample(frame)]
            frames += resampler.resample(None)
    except av.FFmpegError as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise AudioFormatError(f"{path}: not a recording FFmpeg can decode ({reason})") from None
    if not frames:
        raise AudioFormatError(f"{path}: the file holds no audio samples")
    channels = len(frames[0].layout.channels)
    data = np.concatenate([f.to_ndarray().reshape(-1) for f in frames]).astype(np.int16)
    return _framed(data, channels, rate, mono)


def _framed(data: np.ndarray, channels: int, rate: int, mono: bool) -> PcmAudio:
    """Interleaved int16 `data` as frames (a last partial frame dropped), downmixed when `mono`."""
    if channels > 1:
        data = data[: len(data) - len(data) % channels].reshape(-1, channels)
        if mono:
            data = downmix(data)
    return PcmAudio(data, rate)


PCM_WIDTHS = (1, 2, 3, 4)  # bytes per sample the reader takes: 8, 16, 24 and 32-bit integer PCM


def _to_int16(raw: bytes, width: int) -> np.ndarray:
    """Integer PCM of `width` bytes per sample as int16: its top 16 bits (8-bit WAV is unsigned,
    the others signed little-endian). A recorder's 24-bit or 32-bit file is heard as 16-bit."""
    if width == 1:
        return ((np.frombuffer(raw, np.uint8).astype(np.int16) - 128) << 8).astype(np.int16)
    if width == 2:
        return np.frombuffer(raw, dtype="<i2").astype(np.int16)
    top = np.frombuffer(raw, np.uint8).reshape(-1, width)[:, width - 2 :]  # (the high two bytes)
    return np.frombuffer(top.tobytes(), dtype="<i2").astype(np.int16)


def write_wav(path: str | Path, samples: np.ndarray, sample_rate: int) -> Path:
    """Write int16 samples, (frames,) mono or (frames, channels), as a 16-bit PCM WAV file;
    the parent directories are created. Returns the path."""
    path = Path(path)
    samples = np.asarray(samples, dtype=np.int16)
    channels = 1 if samples.ndim == 1 else samples.shape[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(samples.astype("<i2").tobytes())
    return path


def downmix(frames: np.ndarray) -> np.ndarray:
    """(frames, channels) int16 -> (frames,) int16, the mean of the channels."""
    if frames.ndim == 1:
        return frames
    return np.clip(frames.astype(np.int32).mean(axis=1), -32768, 32767).astype(np.int16)
