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
        "from fay_ros.voice.engine_types import VoiceError, VoiceSettings\n"
        "create_engine('pyttsx3', VoiceSettings())\n"
        "try:\n"
        "    create_engine('espeak-ng', VoiceSettings())\n"
        "except VoiceError as exc:\n"
        "    print(exc)\n"
    )
    assert out == (
        "the espeak-ng engine cannot run in a process that already uses the pyttsx3 engine "
        "(both drive the one libespeak-ng); use one engine per process"
    )


def test_a_failed_start_leaves_libespeak_free_and_one_engine_may_start_twice():
    out = run_python(
        "from fay_ros.voice import libespeak_owner\n"
        "try:\n"
        "    with libespeak_owner.starting('pyttsx3'):\n"
        "        raise RuntimeError('driver missing')\n"
        "except RuntimeError:\n"
        "    pass\n"
        "from fay_ros.voice.engines import create_engine\n"
        "from fay_ros.voice.engine_types import VoiceSettings\n"
        "first = create_engine('espeak-ng', VoiceSettings())\n"
        "second = create_engine('espeak-ng', VoiceSettings(rate_wpm=200))\n"
        "print(len(second.synthesize('hi').samples) > 0)\n"
    )
    assert out == "True"


def test_an_unknown_engine_names_the_choices():
    from fay_ros.voice.engine_types import VoiceError, VoiceSettings
    from fay_ros.voice.engines import ENGINES, create_engine

    assert ENGINES == ("espeak-ng", "pyttsx3")
    with pytest.raises(VoiceError, match="unknown TTS engine 'festival'; choose one of espeak-ng, pyttsx3"):
        create_engine("festival", VoiceSettings())


def test_settings_change_from_the_next_sentence_and_an_unknown_voice_changes_nothing():
    # (the tts node's live parameters: Engine.use_settings)
    out = run_python(
        "from fay_ros.voice.engines import create_engine\n"
        "from fay_ros.voice.engine_types import VoiceError, VoiceSettings\n"
        "engine = create_engine('espeak-ng', VoiceSettings())\n"
        "text = 'How are you today, my friend?'\n"
        "normal = engine.synthesize(text).duration\n"
        "engine.use_settings(VoiceSettings(rate_wpm=90))\n"
        "slow = engine.synthesize(text).duration\n"
        "try:\n"
        "    engine.use_settings(VoiceSettings(rate_wpm=300, english_voice='nosuchvoice'))\n"
        "except VoiceError as exc:\n"
        "    print(exc)\n"
        "still = engine.synthesize(text).duration\n"
        "engine.close()\n"
        "print(slow > 1.6 * normal, abs(still - slow) < 0.05 * slow)\n"
    )
    refused, durations = out.splitlines()
    assert "no voice 'nosuchvoice'" in refused
    assert durations == "True True"


def test_pyttsx3_checks_a_new_voice_before_using_it():
    # (Its rate is not checked here: pyttsx3 2.99 drives libespeak-ng in asynchronous retrieval
    # mode, where a rate set between two files is taken only now and then.)
    out = run_python(
        "from fay_ros.voice.engines import create_engine\n"
        "from fay_ros.voice.engine_types import VoiceError, VoiceSettings\n"
        "engine = create_engine('pyttsx3', VoiceSettings())\n"
        "engine.use_settings(VoiceSettings(english_voice='en-GB-scotland'))\n"
        "print(engine.synthesize('Hello there.').runs[0].voice)\n"
        "try:\n"
        "    engine.use_settings(VoiceSettings(english_voice='nosuchvoice'))\n"
        "except VoiceError as exc:\n"
        "    print(exc)\n"
        "print(engine.synthesize('Hello there.').runs[0].voice)\n"
        "engine.close()\n"
    )
    assert out.splitlines() == [
        "en-GB-scotland",
        "pyttsx3 (espeak) has no voice 'nosuchvoice' (see `fay-ros say --engine pyttsx3 --list-voices`)",
        "en-GB-scotland",
    ]
