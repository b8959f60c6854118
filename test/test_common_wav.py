"""fay_ros.common.wav, the one WAV reader and writer of hearing, voice and the tests: the
downmix rule (channel mean), the write side, and that nothing else in fay_ros parses WAV.
The reader's errors are in test_hearing_core.py (test_wav_*)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from fay_ros.common.wav import AudioFormatError, read_wav, write_wav

REPO = Path(__file__).resolve().parents[1]
RATE = 16000


def test_a_voice_on_one_channel_only_is_heard_after_the_downmix(tmp_path):
    # hearing averaged the channels, voice kept the first one; the mean won: a voice recorded
    # on the right channel alone must not become silence.
    right_only = np.stack([np.zeros(100, np.int16), np.full(100, 4000, np.int16)], axis=1)
    path = write_wav(tmp_path / "right.wav", right_only, RATE)
    mono = read_wav(path)
    assert mono.samples.shape == (100,) and np.all(mono.samples == 2000)
    both = read_wav(path, mono=False)
    assert both.samples.shape == (100, 2) and np.array_equal(both.samples, right_only)


def test_the_mean_of_full_scale_channels_stays_in_range(tmp_path):
    loud = np.stack([np.full(10, 32767, np.int16), np.full(10, 32767, np.int16), np.full(10, -32768, np.int16)], axis=1)
    assert np.all(read_wav(write_wav(tmp_path / "loud.wav", loud, RATE)).samples == 10922)


def test_write_creates_the_folder_and_round_trips_exactly(tmp_path):
    samples = (np.arange(RATE, dtype=np.int64) % 60000 - 30000).astype(np.int16)
    path = write_wav(tmp_path / "a" / "b" / "ramp.wav", samples, 22050)
    assert path == tmp_path / "a" / "b" / "ramp.wav"
    audio = read_wav(path)
    assert audio.sample_rate == 22050 and audio.samples.dtype == np.int16
    assert np.array_equal(audio.samples, samples) and audio.duration == pytest.approx(RATE / 22050)


def test_a_damaged_file_is_an_audio_format_error_naming_it_for_every_caller(tmp_path):
    # The voice side used to read with its own code (a bare wave.Error, no file name).
    from fay_ros.voice import pyttsx3_engine

    assert pyttsx3_engine.read_wav is read_wav
    whole = write_wav(tmp_path / "whole.wav", np.zeros(100, np.int16), RATE)
    cut = tmp_path / "voice_run.wav"
    cut.write_bytes(whole.read_bytes()[:30])
    with pytest.raises(AudioFormatError, match=r"voice_run\.wav: not a PCM WAV file"):
        read_wav(cut)


def test_only_the_wav_module_parses_wav_files():
    users = []
    for path in sorted((REPO / "fay_ros").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Import)
                and any(a.name == "wave" for a in node.names)
                or isinstance(node, ast.ImportFrom)
                and node.module == "wave"
            ):
                users.append(str(path.relative_to(REPO)))
    assert users == ["fay_ros/common/wav.py"]
