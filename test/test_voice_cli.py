"""`fay-ros say`: offline audio + viseme track, both engines, clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from fay_ros.common.wav import read_wav
from harness import REPO


def say(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "say", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        env=env,
    )


def test_say_writes_wav_and_a_matching_viseme_track(tmp_path):
    wav, visemes = tmp_path / "out.wav", tmp_path / "out.json"
    done = say(
        "Hello **there**, see https://example.com/x. 我喜欢Python。", "--wav", str(wav), "--visemes", str(visemes)
    )
    assert done.returncode == 0, done.stderr
    assert "not spoken" in done.stderr and "url" in done.stderr and "example.com" not in done.stderr
    audio = read_wav(wav)
    samples, rate = audio.samples, audio.sample_rate
    doc = json.loads(visemes.read_text(encoding="utf-8"))
    assert rate == doc["sample_rate"] == 22050
    assert doc["duration"] == pytest.approx(len(samples) / rate, abs=1e-3)
    assert doc["timing"] == "phoneme events" and doc["engine"] == "espeak-ng"
    assert [r["voice"] for r in doc["runs"]] == ["en-us", "cmn-latn-pinyin", "en-us"]
    assert doc["text"] == "Hello there, see. 我喜欢Python。"
    assert doc["phonemes"] and all(p["start"] <= doc["duration"] for p in doc["phonemes"])
    frames = doc["frames"]
    assert frames[0]["start"] == 0.0 and frames[-1]["name"] == "sil"
    assert {"id", "name", "start", "mouth_open"} <= set(frames[0])
    assert abs(samples.astype(int)).max() > 1000


def test_say_with_the_pyttsx3_engine(tmp_path):
    wav, visemes = tmp_path / "p.wav", tmp_path / "p.json"
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    done = say(
        "--engine",
        "pyttsx3",
        "Hello 你好",
        "--wav",
        str(wav),
        "--visemes",
        str(visemes),
        env={**os.environ, "TMPDIR": str(temporary)},
    )
    assert done.returncode == 0, done.stderr
    # (libpulse, which libespeak-ng's audio output loads, leaves its own pulse-* directory)
    left = [p.name for p in temporary.iterdir() if p.name.startswith("fay_")]
    assert not left, f"the engine's files are left in the temporary directory: {left}"
    doc = json.loads(visemes.read_text(encoding="utf-8"))
    audio = read_wav(wav)
    samples, rate = audio.samples, audio.sample_rate
    assert doc["engine"] == "pyttsx3" and doc["timing"].startswith("loudness")
    assert [r["voice"] for r in doc["runs"]] == ["en-us", "cmn-latn-pinyin"]
    assert doc["duration"] == pytest.approx(len(samples) / rate, abs=1e-3) and doc["duration"] > 0.5
    assert any(f["name"] != "sil" for f in doc["frames"])
    listed = say("--engine", "pyttsx3", "--list-voices")
    assert listed.returncode == 0 and "sit/cmn-latn-pinyin" in listed.stdout.split()


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--chinese-voice", "cmn", "你好"], 2, "broken on Debian 12"),
        (["--english-voice", "nosuchvoice", "hi"], 2, "no voice 'nosuchvoice'"),
        (["--rate", "5", "hi"], 2, "--rate"),
        (["```\ncode only\n```"], 1, "nothing speakable"),
        ([], 2, "give the TEXT"),
    ],
)
def test_say_errors_are_specific(args, code, message):
    done = say(*args)
    assert done.returncode == code
    assert message in done.stderr


def test_say_refuses_text_over_the_limit_naming_limit_and_length(tmp_path):
    from fay_ros.cli.say import MAX_SAY_CHARS

    huge = "This is a very long text. " * 3846  # 99,996 characters: uncut, minutes and ~800 MB
    done = say(huge, "--wav", str(tmp_path / "huge.wav"))
    assert done.returncode == 2
    assert f"the text is {len(huge)} characters; the limit is {MAX_SAY_CHARS} (--max-chars)" in done.stderr
    assert not (tmp_path / "huge.wav").exists()
    # The limit is an option: lowered, it refuses short text; text within it is spoken.
    assert "the text is 19 characters; the limit is 10" in say("Hello there, friend", "--max-chars", "10").stderr
    ok = say("Hello there.", "--max-chars", "12", "--wav", str(tmp_path / "ok.wav"))
    assert ok.returncode == 0, ok.stderr
    assert len(read_wav(tmp_path / "ok.wav").samples) > 0
