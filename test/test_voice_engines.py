"""The engine factory and the one-libespeak-ng-per-process rule (voice.libespeak_owner), in
fresh processes: the owner is process state, and the test process already runs espeak-ng."""
from __future__ import annotations

import subprocess
import sys

import pytest


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_espeak_ng_is_refused_after_pyttsx3_in_one_process():
    out = run_python(
        "from fay_ros.voice.engines import create_engine\n"
        "from fay_ros.voice.types import VoiceError, VoiceSettings\n"
        "create_engine('pyttsx3', VoiceSettings())\n"
        "try:\n"
        "    create_engine('espeak-ng', VoiceSettings())\n"
        "except VoiceError as exc:\n"
        "    print(exc)\n")
    assert out == ("the espeak-ng engine cannot run in a process that already uses the pyttsx3 engine "
                   "(both drive the one libespeak-ng); use one engine per process")


def test_a_failed_start_leaves_libespeak_free_and_one_engine_may_start_twice():
    out = run_python(
        "from fay_ros.voice import libespeak_owner\n"
        "try:\n"
        "    with libespeak_owner.starting('pyttsx3'):\n"
        "        raise RuntimeError('driver missing')\n"
        "except RuntimeError:\n"
        "    pass\n"
        "from fay_ros.voice.engines import create_engine\n"
        "from fay_ros.voice.types import VoiceSettings\n"
        "first = create_engine('espeak-ng', VoiceSettings())\n"
        "second = create_engine('espeak-ng', VoiceSettings(rate_wpm=200))\n"
        "print(len(second.synthesize('hi').samples) > 0)\n")
    assert out == "True"


def test_an_unknown_engine_names_the_choices():
    from fay_ros.voice.engines import ENGINES, create_engine
    from fay_ros.voice.types import VoiceError, VoiceSettings

    assert ENGINES == ("espeak-ng", "pyttsx3")
    with pytest.raises(VoiceError, match="unknown TTS engine 'festival'; choose one of espeak-ng, pyttsx3"):
        create_engine("festival", VoiceSettings())
