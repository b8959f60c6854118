"""A quiet voice (a microphone at low gain, a phone on the table, a far speaker), from the real
recordings of test/data/speech turned down: a recording is raised to a microphone's usual level
before the VAD hears it (`fay-ros transcribe`, `--bench`), and a live VAD says when a voice is
too quiet to be heard and by how much to raise it (the asr node's input_gain_db: the node test
is in test_hearing_nodes.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fay_ros.common.wav import read_wav, write_wav
from fay_ros.hearing.audio import MAX_GAIN_DB, PEAK_TARGET_DBFS, amplified, recording_gain_db
from fay_ros.hearing.clip_bench import find_clips, joined, transcribe_stream
from fay_ros.hearing.scoring import score
from fay_ros.hearing.vad import QUIET_WINDOW_S, VadSettings, VoiceActivityDetector
from fay_ros.hearing.whisper_backend import WhisperRecognizer

DATA = Path(__file__).resolve().parent / "data" / "speech"
RATE = 16000


@pytest.fixture(scope="module")
def whisper():
    return WhisperRecognizer("", language="en")


def _recording(name: str, gain_db: float = 0.0) -> np.ndarray:
    return amplified(read_wav(str(DATA / "en" / f"{name}.wav")).samples, gain_db)


def _loud_frames_dbfs(samples: np.ndarray) -> float:
    """The level of the 10th loudest 30 ms frame (as recording_gain_db measures it)."""
    frames = samples[: len(samples) // 480 * 480].astype(np.float64).reshape(-1, 480)
    levels = np.sort(10 * np.log10(np.maximum(np.mean(frames**2, axis=1), 1e-12) / 32768.0**2))
    return float(levels[-10])


def test_every_recording_of_the_set_is_left_at_its_level():
    clips = find_clips(DATA)
    assert len(clips) >= 20
    assert {c.name: recording_gain_db(read_wav(str(c.path)).samples, RATE) for c in clips} == {
        c.name: 0.0 for c in clips
    }


@pytest.mark.parametrize("down_db", [-20.0, -30.0, -40.0])
def test_a_quiet_recording_is_raised_to_a_microphones_usual_level(down_db):
    quiet = _recording("librivox_austen_0920", down_db)
    gain = recording_gain_db(quiet, RATE)
    assert 0 < gain <= MAX_GAIN_DB
    expected = min(PEAK_TARGET_DBFS, _loud_frames_dbfs(quiet) + MAX_GAIN_DB)  # (40 dB at most)
    assert abs(_loud_frames_dbfs(amplified(quiet, gain)) - expected) < 1.0


def test_noise_alone_and_a_whole_file_of_silence_are_not_raised():
    rng = np.random.default_rng(3)
    hiss = np.clip(rng.normal(0, 30, 5 * RATE), -32768, 32767).astype(np.int16)  # -61 dBFS, nothing stands out
    assert recording_gain_db(hiss, RATE) == 0.0
    assert recording_gain_db(np.zeros(5 * RATE, np.int16), RATE) == 0.0
    assert recording_gain_db(np.zeros(100, np.int16), RATE) == 0.0  # (too short to measure)


def test_a_quiet_real_recording_loses_no_words(whisper):
    """JFK's line 40 dB down: without raising it the VAD keeps only its loudest syllables."""
    reference = (DATA / "en" / "jfk_inaugural.txt").read_text(encoding="utf-8")
    quiet = _recording("jfk_inaugural", -40.0)
    raised = score(reference, joined(transcribe_stream(whisper, quiet, RATE)), False)
    as_is = score(reference, joined(transcribe_stream(whisper, quiet, RATE, gain_db=0.0)), False)
    assert raised.rate <= 0.1, raised
    assert as_is.rate >= 0.5, as_is


def test_transcribe_says_it_raised_a_quiet_recording(tmp_path):
    write_wav(tmp_path / "quiet.wav", _recording("goforward", -30.0), RATE)
    out = subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "transcribe", "--language", "en", str(tmp_path / "quiet.wav")],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    assert "a quiet recording: raised by" in out.stderr, out.stderr
    assert "go forward" in out.stdout.lower(), out.stdout


def _heard(vad: VoiceActivityDetector, audio: np.ndarray) -> list[str]:
    kinds = []
    for i in range(0, len(audio), 480):
        kinds += [e.kind for e in vad.process(audio[i : i + 480])[0]]
    return kinds


def test_the_vad_says_when_a_voice_is_too_quiet_and_by_how_much_to_raise_it():
    silence = np.zeros(RATE // 2, np.int16)
    vad = VoiceActivityDetector(RATE, VadSettings())
    assert _heard(vad, np.concatenate([silence, _recording("goforward", -30.0), silence])) == []
    room = vad.room()
    assert room.quiet_voice_db is not None and -70 < room.quiet_voice_db < -50, room
    level, message, values = room.status()
    assert level == "warning" and "vad_min_level_dbfs" in message and "input_gain_db" in message, message
    assert 25 <= float(values["suggested_gain_db"]) <= 40, values
    # raised by that much, the same voice is heard, and nothing is said about it
    louder = VoiceActivityDetector(RATE, VadSettings())
    heard = _heard(louder, amplified(np.concatenate([silence, _recording("goforward", -30.0), silence]), 30.0))
    assert heard == ["start", "end"]
    assert louder.room().quiet_voice_db is None and louder.room().status()[0] == "ok"
    # the warning is about the last QUIET_WINDOW_S: silence after it lets it go
    _heard(vad, np.zeros(int((QUIET_WINDOW_S + 1) * RATE), np.int16))
    assert vad.room().quiet_voice_db is None and vad.room().status()[0] == "ok"


def test_a_voice_at_its_usual_level_raises_no_warning():
    vad = VoiceActivityDetector(RATE, VadSettings())
    silence = np.zeros(RATE // 2, np.int16)
    assert _heard(vad, np.concatenate([silence, _recording("librivox_austen_0920"), silence]))[:1] == ["start"]
    assert vad.room().quiet_voice_db is None
