"""Echo cancellation of the robot's own voice (fay_ros.hearing.echo, libspeexdsp) on a WAV mix:
the robot's speech through a 50 ms echo path, 2 dB louder at the microphone than the person
who interrupts it. Barge-in on the cancelled signal hears the person and never the robot."""

from __future__ import annotations

import numpy as np
import pytest

from fay_ros.hearing.echo import EchoCanceller
from fay_ros.hearing.mic_core import MicCore
from fay_ros.turns.duplex_gate import DuplexSettings
from synthetic_speech import silence, speak

RATE = 16000
CHUNK = 480


def _db(x: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(x.astype(np.float64) ** 2) + 1e-9))


@pytest.fixture(scope="module")
def mix():
    robot = speak(
        "I am the robot and I am talking about the weather for a while now. It will be sunny "
        "tomorrow and warm in the afternoon, so you can go for a walk.",
        "en-us",
    )
    person = speak("Stop, wait a moment please.", "en-us")
    path = np.r_[np.zeros(800), 0.6, np.zeros(40), 0.25]  # 50 ms delay + one reflection
    echo = np.convolve(robot.astype(np.float64), path)[: len(robot)]
    at = len(robot) - len(person) - RATE // 2  # the person talks over the end
    mic = echo.copy()
    mic[at : at + len(person)] += 0.7 * person  # no louder than the robot's echo
    mic_i16 = np.clip(mic, -32768, 32767).astype(np.int16)
    return mic_i16, robot, person, at


def test_the_robot_voice_is_removed_and_the_person_kept(mix):
    mic, robot, person, at = mix
    out = EchoCanceller(RATE).cancel(mic, robot)
    echo_only = slice(at - 2 * RATE, at)  # after the filter converged
    assert _db(mic[echo_only]) - _db(out[echo_only]) >= 8.0  # echo return loss enhancement
    talk = slice(at, at + len(person))
    said = 0.7 * person.astype(np.float64)
    assert np.corrcoef(out[talk], said)[0, 1] > np.corrcoef(mic[talk], said)[0, 1] + 0.2


def _interrupts(mic_core: MicCore, audio: np.ndarray) -> list[float]:
    mic_core.set_robot_speaking(True, 0.0)
    found = []
    for i in range(0, len(audio) - CHUNK + 1, CHUNK):
        if mic_core.process(audio[i : i + CHUNK], None, i / RATE).interrupt:
            found.append(i / RATE)
    return found


def test_barge_in_on_the_cancelled_signal_hears_the_person_not_the_robot(mix):
    mic, robot, person, at = mix
    settings = DuplexSettings(barge_in=True)
    cancelled = EchoCanceller(RATE).cancel(np.concatenate([mic, silence(0.03)]), np.concatenate([robot, silence(0.03)]))
    heard = _interrupts(MicCore(RATE, duplex=settings), cancelled)
    assert len(heard) == 1 and at / RATE <= heard[0] <= at / RATE + 1.3  # the person, not the robot
    assert _interrupts(MicCore(RATE, duplex=settings), mic) == []  # without cancellation the echo hides them
    robot_only = EchoCanceller(RATE).cancel(mic[:at], robot[:at])
    assert _interrupts(MicCore(RATE, duplex=settings), robot_only) == []  # no self-interruption
