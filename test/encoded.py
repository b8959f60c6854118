"""A recording as a recorder, phone, messenger or browser stores it: encoded by FFmpeg's own
encoders (PyAV) into their formats and read back by the one recording reader
(common.wav.read_audio). test_recordings.py and bench_real_speech.py use it."""

from __future__ import annotations

import tempfile
from pathlib import Path

import av
import numpy as np

from fay_ros.common.wav import read_audio
from fay_ros.hearing.audio import resample

RATE = 16000
# (label, container, codec, suffix, the codec's own rate, bit rate): what people send a companion
FORMATS = (
    ("MP3 64 kbit/s (Common Voice's format)", "mp3", "mp3", ".mp3", RATE, 64_000),
    ("AAC 32 kbit/s (a phone's voice memo)", "ipod", "aac", ".m4a", RATE, 32_000),
    ("Opus 16 kbit/s (a messenger's voice note)", "ogg", "libopus", ".ogg", 48_000, 16_000),
)


def encode(
    samples: np.ndarray, path: Path, container: str, codec: str, rate: int = RATE, bit_rate: int | None = None
) -> Path:
    """`samples` (16 kHz int16, mono or (frames, 2)) encoded by FFmpeg's `codec` at its `rate`
    (and `bit_rate`, bit/s; None: the encoder's default) into `path`."""
    layout = "mono" if samples.ndim == 1 else "stereo"
    with av.open(str(path), "w", format=container) as out:
        stream = out.add_stream(codec, rate=rate)
        stream.layout = layout
        if bit_rate:
            stream.bit_rate = bit_rate
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout=layout)
        frame.sample_rate = RATE
        resampler = av.AudioResampler(format=stream.format.name, layout=layout, rate=rate)
        for piece in [*resampler.resample(frame), *resampler.resample(None), None]:
            for packet in stream.encode(piece):
                out.mux(packet)
    return path


def through_codec(samples: np.ndarray, container: str, codec: str, suffix: str, rate: int, bit_rate: int) -> np.ndarray:
    """16 kHz mono `samples` as they come back out of that format (at 16 kHz)."""
    with tempfile.TemporaryDirectory() as folder:
        heard = read_audio(encode(samples, Path(folder) / f"clip{suffix}", container, codec, rate, bit_rate))
    return heard.samples if heard.sample_rate == RATE else resample(heard.samples, heard.sample_rate, RATE)
