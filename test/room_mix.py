"""The robot's voice heard through a simulated room by the mic's core (MicCore with the echo
canceller and RoomEcho), with a person's voice mixed in: what the barge-in tests and
`make bench` (bench_bargein) measure the duplex gate on.

The room: the played audio comes back 50 ms late plus one reflection, 3 dB under the played
level (RoomEcho(-3.0)), unless another `room` is given (ROOMS: where the robot's own voice is
checked); the person is PERSON_GAIN (about 3 dB) under their own recording.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fay_ros.hearing.echo import EchoCanceller, RoomEcho
from fay_ros.hearing.mic_core import MicCore
from fay_ros.turns.duplex_gate import DuplexSettings
from synthetic_speech import silence, speak

RATE = 16000
CHUNK = 480
TTS_RATE = 22050
BLOCK = 441  # the tts node's 20 ms output block at espeak-ng's rate
ROBOT_TEXT = (
    "I am the robot and I am talking about the weather for a while now. It will be sunny tomorrow "
    "and warm in the afternoon, so you can go for a walk."
)
# What else the robot says in the "does it hold or stop on its own voice?" checks (text, voice).
ROBOT_TEXTS = [
    (ROBOT_TEXT, "en-us"),
    (
        "Good morning! Today I would like to tell you a short story about a little cat who lived by the sea "
        "and loved to watch the boats.",
        "en-us",
    ),
    (
        "Your meeting with Anna is at three o'clock. Don't forget to bring the report, and remember that the "
        "office moved to the second floor.",
        "en-us",
    ),
    (
        "Sure! Here are three ideas for dinner: a tomato soup, a rice bowl with vegetables, or pasta with "
        "mushrooms. Which one do you like?",
        "en-us",
    ),
    ("今天天气很好，下午有一点风。你可以出去散步，晚上记得早点休息。", "cmn-latn-pinyin"),
    ("我记得你喜欢喝茶。要不要我给你讲一个关于茶的小故事？从前有一个老人，他每天早上都在山上种茶。", "cmn-latn-pinyin"),
    ("Well, that depends. If you want something quick, try an omelette; if you have time, a curry is lovely.", "en-us"),
    ("Hmm. Let me think. Yes! I remember now: you told me your sister lives in Berlin, right?", "en-us"),
    ("Okay. Stopping now. Bye bye, see you tomorrow, and sleep well!", "en-gb"),
    ("Three, two, one. Go! That was fast. Shall we try it again, a little slower this time?", "en-us"),
    ("好的，我明白了。你说的是明天上午十点，对吗？我会提醒你的。", "cmn-latn-pinyin"),
    # (嗯 after a pause: the canceller takes only 2-6 dB out of it for a while, and it held itself)
    ("哈哈，这个问题很有意思！让我想一想。嗯，我觉得答案是四十二。", "cmn-latn-pinyin"),
]
# Rooms the robot's own voice is checked in: (echo level under the played audio in dB, delay in ms).
ROOMS = [(-6.0, 20.0), (-3.0, 50.0), (0.0, 50.0), (3.0, 120.0)]
PERSON_GAIN = 0.7
# The mic node's defaults (fay_ros/nodes/mic.py): 600 ms of voiced talk-over within 1000 ms.
SETTINGS = DuplexSettings(barge_in=True, min_ms=600, window_ms=1000)


@dataclass
class Heard:
    """What the gate decided, in seconds after the person's first sound (after `at_s` when
    there is no person)."""

    interrupts: list[float] = field(default_factory=list)
    talk_over: list[tuple[bool, float]] = field(default_factory=list)  # (hold?, when)
    clips: list[np.ndarray] = field(default_factory=list)  # what was said, at each release
    unjudged_chunks: int = 0  # chunks the gate did not judge for a late played block (MicCore)
    released_from: list[float] = field(default_factory=list)  # at each barge-in: where the audio it releases begins


def first_sound(samples: np.ndarray, rate: int = RATE, threshold: int = 500, after_s: float = 0.0) -> float:
    """Seconds into `samples` of the first sound after `after_s` (0.0 for silence)."""
    start = int(after_s * rate)
    loud = np.flatnonzero(np.abs(samples[start:].astype(np.int64)) > threshold)
    return (start + float(loud[0])) / rate if len(loud) else 0.0


def first_sound_in(wav, after_s: float) -> float:
    """Seconds into a WAV file of its first sound after `after_s` (the person's, in a test room)."""
    from fay_ros.common.wav import read_wav

    audio = read_wav(wav)
    return first_sound(audio.samples, audio.sample_rate, after_s=after_s)


def silenced_at(played: list, after: float) -> float:
    """When the robot's audio stopped after `after` (ROS time), from the audio/played messages
    of a real tts node: the end of the last played block before the first gap (silence is not
    published)."""
    from fay_ros.common.rostime import from_time_msg

    blocks = sorted((from_time_msg(m.header.stamp), len(m.data) / m.sample_rate) for m in played)
    for (start, length), (next_start, _) in zip(blocks, blocks[1:] + [(float("inf"), 0.0)]):
        if start + length > after and next_start > start + length + 0.03:
            return start + length
    raise AssertionError("the robot's audio never stopped")


def audible_over(played: list, start: float, end: float) -> bool:
    """Whether the robot's audio was playing all through `start`..`end` (ROS time): the
    audio/played blocks of a real tts node cover it without a gap (silence between sentences
    is not published). The premise of a talk-over, which a starved output can break."""
    from fay_ros.common.rostime import from_time_msg

    covered = start
    for at, length in sorted((from_time_msg(m.header.stamp), len(m.data) / m.sample_rate) for m in played):
        if at > covered + 0.03:
            break
        covered = max(covered, at + length)
        if covered >= end:
            return True
    return False


def robot_mix(
    person: np.ndarray | None,
    at_s: float,
    *,
    echo: bool = True,
    robot_text: str = ROBOT_TEXT,
    robot_voice: str = "en-us",
    settings: DuplexSettings = SETTINGS,
    room: tuple[float, float] = (-3.0, 50.0),
    late_share: float = 0.0,
    late_by_s: float = 0.08,
) -> Heard:
    """The robot says `robot_text` from t=0; the person's recording starts at `at_s`; `room`:
    the echo's level under the played audio (dB) and its delay (ms). The played blocks come
    50 ms ahead of their time, except, with `late_share`, at that share of the chunks (seeded):
    then for 60-150 ms they reach only `late_by_s` short of the end of the chunk being
    processed (a busy machine)."""
    rng = np.random.default_rng(0)
    late_until = 0.0
    robot = speak(robot_text, robot_voice, rate=TTS_RATE)
    core = MicCore(RATE, duplex=settings, echo=EchoCanceller(RATE, 30) if echo else None, room_echo=RoomEcho(*room))
    t0, fed = 10.0, 0
    core.set_robot_speaking(True, t0)
    wav = silence(len(robot) / TTS_RATE + 0.5)
    onset = at_s
    if person is not None:
        at = int(at_s * RATE)
        wav[at : at + len(person)] = (PERSON_GAIN * person[: len(wav) - at]).astype(np.int16)
        onset += first_sound(person)
    heard = Heard()
    for i in range(0, len(wav) - CHUNK + 1, CHUNK):
        now = t0 + i / RATE
        if late_share and now > late_until and rng.random() < late_share:
            late_until = now + rng.uniform(0.06, 0.15)
        horizon = now + 0.05 if now > late_until else now + CHUNK / RATE - late_by_s
        while fed < len(robot) and t0 + fed / TTS_RATE < horizon:  # played blocks come just ahead
            core.add_played(robot[fed : fed + BLOCK], TTS_RATE, t0 + fed / TTS_RATE)
            fed += BLOCK
        out = core.process(wav[i : i + CHUNK], now, now, captured=now)  # (stamp: the capture time)
        decided = (i + CHUNK) / RATE - onset  # a decision is made at the end of its chunk
        if out.interrupt:
            heard.interrupts.append(decided)
            heard.released_from.append(out.chunks[0][1] - t0 - onset)
        if out.talk_over is not None:
            heard.talk_over.append((out.talk_over, decided))
        if out.talk_over_clip is not None:
            heard.clips.append(out.talk_over_clip)
    heard.unjudged_chunks = core.unjudged_chunks
    return heard
