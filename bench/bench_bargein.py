"""Barge-in without headphones: how soon the robot's voice goes quiet when a person talks over
it, against waiting for the barge-in decision (the design before the hold), in the same run.

The mic's core (MicCore: echo canceller, VAD, duplex gate) hears the robot's voice through a
simulated room (test/room_mix.py: echo 3 dB under the played level, 50 ms + one reflection)
with a person mixed in at several points of the robot's speech. Times are audio time (when
the chunk that decides ends, after the person's first sound), not machine time: the figures
are properties of the gate and do not depend on the machine. The voice is silent one output
block (20 ms) plus DDS after the decision (test_hearing_bargein measures that through the real
nodes)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from unittest import mock

import numpy as np

from bench.stats import percentile
from fay_ros.hearing import mic_core
from fay_ros.turns import duplex_gate as duplex
from fay_ros.turns.duplex_gate import DuplexSettings

TITLE = "Barge-in: how soon the robot goes quiet when a person talks over it"
INTERRUPTIONS = [
    ("Stop, wait a moment please.", "en-us"),
    ("Hold on, I have a question", "en-us"),
    ("Excuse me, can I ask something?", "en-us"),
    ("等一下，我有个问题", "cmn-latn-pinyin"),
    ("不对，我说的是明天", "cmn-latn-pinyin"),
]
BACKCHANNELS = [
    ("yeah", "en-us"),
    ("uh-huh", "en-us"),
    ("okay", "en-us"),
    ("嗯", "cmn-latn-pinyin"),
    ("对", "cmn-latn-pinyin"),
    ("嗯嗯", "cmn-latn-pinyin"),
]
STOP_REQUESTS = [
    ("Stop!", "en-us"),
    ("Wait!", "en-us"),
    ("No, stop.", "en-us"),
    ("Hold on!", "en-us"),
    ("停！", "cmn-latn-pinyin"),
    ("等一下", "cmn-latn-pinyin"),
]
# seconds into the robot's voice; the canceller converges within its first ~3 s
OFFSETS = [4.0, 5.0, 6.0, 7.0, 8.0]


@dataclass
class Outcome:
    quiet: dict[str, float] = field(default_factory=dict)  # interruptions: robot quiet (s after onset)
    decided: list[float] = field(default_factory=list)  # ... the barge-in decision
    missed: list[str] = field(default_factory=list)  # interruptions never decided
    interrupted: list[str] = field(default_factory=list)  # backchannels that barged in
    held_for: list[float] = field(default_factory=list)  # backchannel holds, hold to release
    self_events: int = 0  # replies of the robot alone it held or stopped on


def measure(settings: DuplexSettings, people: dict[str, list[np.ndarray]]) -> Outcome:
    from room_mix import ROBOT_TEXTS, ROOMS, robot_mix

    out = Outcome()
    for kind, voices in people.items():
        for name, person in zip(INTERRUPTIONS if kind == "interruption" else BACKCHANNELS, voices):
            for at in OFFSETS:
                heard = robot_mix(person, at, settings=settings)
                holds = [t for held, t in heard.talk_over if held]
                where = f"{name[0]} at {at:g} s"
                if kind == "backchannel":
                    out.interrupted += [where] if heard.interrupts else []
                    marks = heard.talk_over
                    out.held_for += [b - a for (h1, a), (h2, b) in zip(marks, marks[1:]) if h1 and not h2]
                elif not heard.interrupts:
                    out.missed.append(where)
                else:
                    out.decided.append(heard.interrupts[0])
                    out.quiet[where] = min([*holds[:1], heard.interrupts[0]])
    for text, voice in ROBOT_TEXTS:
        for room in ROOMS:
            alone = robot_mix(None, 0.0, settings=settings, robot_text=text, robot_voice=voice, room=room)
            out.self_events += bool(alone.talk_over or alone.interrupts)
    return out


def stop_requests(people: dict[str, list[np.ndarray]]) -> str:
    """Short stop requests (no barge-in): does the recogniser find them in the held words the
    mic hands on at the release, and never in a backchannel's?"""
    from fay_ros.hearing.asr_core import AsrCore
    from fay_ros.hearing.whisper_backend import WhisperRecognizer
    from fay_ros.turns.stop_request import is_stop_request
    from room_mix import RATE, robot_mix
    from synthetic_speech import speak

    asr = AsrCore(WhisperRecognizer(language="auto"))  # (the clip decoded as the asr node does)
    found: dict[str, int] = {}
    decode_s: list[float] = []
    for (text, _voice), person in [*((t, speak(*t)) for t in STOP_REQUESTS), *zip(BACKCHANNELS, people["backchannel"])]:
        found[text] = 0
        for at in OFFSETS:
            heard = robot_mix(person, at)
            stopped = bool(heard.interrupts)  # a barge-in (a longer request) stops it too
            for clip in heard.clips:
                t0 = time.perf_counter()
                heard_said = asr.transcribe_clip(clip, RATE)
                stopped |= heard_said is not None and is_stop_request(heard_said.text)
                decode_s.append(time.perf_counter() - t0)
            found[text] += stopped
    per = ", ".join(f"{text} {found[text]}/{len(OFFSETS)}" for text, _voice in STOP_REQUESTS)
    false = sum(found[text] for text, _voice in BACKCHANNELS)
    return (
        f"Short stop requests, robot stopped (by a barge-in, or by the asr reading a stop request in the "
        f"held words at the release, language auto): {per}. Backchannels that stopped it: {false} of "
        f"{len(BACKCHANNELS) * len(OFFSETS)}. "
        f"Decode of a held clip: {percentile(decode_s, 0.5) * 1000:.0f} ms at p50 (the tts waits "
        "`release_grace_s`, 300 ms, before going on). Whisper base garbles espeak-ng's Mandarin, so 停 and "
        "等一下 are rarely found here."
    )


def _row(label: str, values: list[float]) -> str:
    return (
        f"| {label} | {percentile(values, 0.5) * 1000:.0f} ms | {percentile(values, 0.95) * 1000:.0f} ms | "
        f"{max(values) * 1000:.0f} ms |"
    )


def _slower(now: Outcome, eager: Outcome) -> str:
    """The interruptions the wait for the canceller makes the robot quiet later (by > 50 ms)."""
    later = [
        f"{where} (+{(now.quiet[where] - eager.quiet[where]) * 1000:.0f} ms)"
        for where in now.quiet
        if where in eager.quiet and now.quiet[where] - eager.quiet[where] > 0.05
    ]
    return ", ".join(later) or "none by more than 50 ms"


def run() -> str:
    from room_mix import ROBOT_TEXTS, ROOMS, SETTINGS
    from synthetic_speech import speak

    people = {
        "interruption": [speak(t, v) for t, v in INTERRUPTIONS],
        "backchannel": [speak(t, v) for t, v in BACKCHANNELS],
    }
    # the gate before the hold: 500 ms of talk-over within 900 ms, the voice talks on until then
    before = measure(replace(SETTINGS, min_ms=500, window_ms=900, hold_ms=0), people)
    now = measure(SETTINGS, people)
    # the double-talk rule judged as soon as the onset guard ends, not waiting for the canceller
    # to take its share out of the new phrase (RECANCEL_MAX_S)
    with mock.patch.object(mic_core, "RECANCEL_MAX_S", mic_core.ONSET_GUARD_S):
        eager = measure(SETTINGS, people)
    # no hold on a first consonant's high band (DuplexSettings.high_band_margin_db)
    level_only = measure(replace(SETTINGS, high_band_margin_db=0.0), people)
    tried = len(INTERRUPTIONS) * len(OFFSETS)
    lines = [
        f"{len(INTERRUPTIONS)} interruptions (English and Chinese) and {len(BACKCHANNELS)} backchannels, each "
        f"put {', '.join(f'{o:g}' for o in OFFSETS)} s into the robot's voice; espeak-ng speech, the person "
        "about 2 dB under the robot's echo. Baseline: no hold, and the barge-in after 500 ms of "
        "talk-over within 900 ms (the defaults before the hold; the robot talks on until then). "
        "Now: the mic's defaults (hold after 60 ms, or at once on a first consonant's high band, "
        f"barge-in after {SETTINGS.min_ms} ms within {SETTINGS.window_ms} ms or a hold of "
        f"{SETTINGS.long_hold_ms} ms).",
        "",
        "| robot goes quiet, after the person's first sound | p50 | p95 | max |",
        "|---|---|---|---|",
        _row("baseline: at the barge-in", list(before.quiet.values())),
        _row("now: at the hold", list(now.quiet.values())),
        _row(
            "now, without waiting for the canceller at the robot's phrase onsets: at the hold",
            list(eager.quiet.values()),
        ),
        _row("now, without the high band (a first consonant): at the hold", list(level_only.quiet.values())),
        _row("now: the barge-in decision (the robot quiet already)", now.decided),
        "",
        f"Quiet at {percentile(list(now.quiet.values()), 0.5) / percentile(list(before.quiet.values()), 0.5):.2f}× "
        "the baseline's time (p50), within 150 ms of the first sound in "
        f"{sum(t <= 0.150 for t in now.quiet.values())} of {len(now.quiet)} "
        "(decision time; the voice is silent one 20 ms output block after).",
        "",
        "| | interruptions missed | backchannels that interrupted | replies of the robot's own voice held or "
        f"stopped ({len(ROBOT_TEXTS)} replies, en and zh, in {len(ROOMS)} rooms: echo "
        f"{', '.join(f'{db:+g} dB / {ms:g} ms' for db, ms in ROOMS)}) |",
        "|---|---|---|---|",
    ]
    for label, o in (
        ("baseline", before),
        ("now", now),
        ("now, without waiting for the canceller", eager),
        ("now, without the high band", level_only),
    ):
        lines.append(
            f"| {label} | {len(o.missed)} of {tried}"
            + (f" ({', '.join(o.missed)})" if o.missed else "")
            + f" | {len(o.interrupted)} of {len(BACKCHANNELS) * len(OFFSETS)}"
            + (f" ({', '.join(o.interrupted)})" if o.interrupted else "")
            + f" | {o.self_events} of {len(ROBOT_TEXTS) * len(ROOMS)} |"
        )
    lines += [
        "",
        "Waiting for the canceller at the robot's phrase onsets (until it has taken its converged "
        f"share out of a frame of the new phrase again, or {mic_core.RECANCEL_MAX_S * 1000:.0f} ms, the "
        f"double-talk rule takes only a frame with at most {duplex.SETTLING_DOUBLE_TALK_DB:g} dB taken out "
        "for a person, and for the hold only) is what keeps the robot from holding on its own voice; "
        f"it costs the interruptions that begin just as the robot starts a phrase: {_slower(now, eager)}.",
        "",
        stop_requests(people),
    ]
    if now.held_for:
        lines += [
            "",
            f"A backchannel holds the voice {percentile(now.held_for, 0.5) * 1000:.0f} ms at p50 "
            f"({max(now.held_for) * 1000:.0f} ms at most), then it goes on; nothing is lost.",
        ]
    return "\n".join(lines)
