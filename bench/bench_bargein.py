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

from bench.stats import percentile

TITLE = "Barge-in: how soon the robot goes quiet when a person talks over it"
INTERRUPTIONS = [("Stop, wait a moment please.", "en-us"), ("Hold on, I have a question", "en-us"),
                 ("Excuse me, can I ask something?", "en-us"), ("等一下，我有个问题", "cmn-latn-pinyin"),
                 ("不对，我说的是明天", "cmn-latn-pinyin")]
BACKCHANNELS = [("yeah", "en-us"), ("uh-huh", "en-us"), ("okay", "en-us"), ("嗯", "cmn-latn-pinyin"),
                ("对", "cmn-latn-pinyin"), ("嗯嗯", "cmn-latn-pinyin")]
# seconds into the robot's voice; the canceller converges within its first ~3 s
OFFSETS = [4.0, 5.0, 6.0, 7.0, 8.0]


def run() -> str:
    from room_mix import robot_mix
    from synthetic_speech import speak

    quiet_hold, quiet_decision, missed = [], [], []
    for text, voice in INTERRUPTIONS:
        person = speak(text, voice)
        for at in OFFSETS:
            heard = robot_mix(person, at)
            holds = [t for held, t in heard.talk_over if held]
            if not heard.interrupts:
                missed.append(f"{text} at {at:g} s")
                continue
            quiet_decision.append(heard.interrupts[0])
            quiet_hold.append(min(holds[0], heard.interrupts[0]) if holds else heard.interrupts[0])
    held_for, interrupted = [], []
    for text, voice in BACKCHANNELS:
        person = speak(text, voice)
        for at in OFFSETS:
            heard = robot_mix(person, at)
            interrupted += [f"{text} at {at:g} s"] if heard.interrupts else []
            marks = heard.talk_over
            held_for += [b - a for (h1, a), (h2, b) in zip(marks, marks[1:]) if h1 and not h2]
    alone = robot_mix(None, 0.0)
    p50_hold, p50_decision = percentile(quiet_hold, 0.5), percentile(quiet_decision, 0.5)
    lines = [
        f"{len(INTERRUPTIONS)} interruptions (English and Chinese) and {len(BACKCHANNELS)} backchannels, each "
        f"put {', '.join(f'{o:g}' for o in OFFSETS)} s into the robot's voice; espeak-ng speech, the person "
        "about 2 dB under the robot's echo.",
        "",
        "| robot goes quiet (after the person's first sound) | p50 | p95 | max |",
        "|---|---|---|---|",
        f"| at the barge-in decision (baseline: no hold) | {p50_decision * 1000:.0f} ms | "
        f"{percentile(quiet_decision, 0.95) * 1000:.0f} ms | {max(quiet_decision) * 1000:.0f} ms |",
        f"| at the hold (`barge_in_hold_ms` 60) | {p50_hold * 1000:.0f} ms | "
        f"{percentile(quiet_hold, 0.95) * 1000:.0f} ms | {max(quiet_hold) * 1000:.0f} ms |",
        "",
        f"The hold makes the robot quiet at {p50_hold / p50_decision:.2f}× the baseline's time (p50); within "
        f"150 ms of the first sound in {sum(t <= 0.150 for t in quiet_hold)} of {len(quiet_hold)} interruptions "
        f"(decision time; add one 20 ms output block). Interruptions not heard: {len(missed)}"
        + (f" ({', '.join(missed)})" if missed else "") + ".",
        "",
        f"Backchannels: {len(interrupted)} of {len(BACKCHANNELS) * len(OFFSETS)} interrupted"
        + (f" ({', '.join(interrupted)})" if interrupted else "")
        + (f"; the voice held {percentile(held_for, 0.5) * 1000:.0f} ms at p50 "
           f"({max(held_for) * 1000:.0f} ms at most) and went on, nothing lost." if held_for else "."),
        f"The robot alone: {len(alone.talk_over)} hold(s), {len(alone.interrupts)} interrupt(s) on its own voice.",
    ]
    return "\n".join(lines)
