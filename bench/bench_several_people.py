"""Several people in the room (dialogue.room): what the first layer costs per utterance, against
tokenizing the same words once (the baseline, measured in the same run), and whether the
chime-in keeps its configured rate: the share of close-topic lines it joins with the chance
alone, and how many per minute the cooldown lets through."""

from __future__ import annotations

import random

from bench.stats import summary, time_calls
from fay_ros.dialogue.people import SpeakingRules
from fay_ros.dialogue.room import CHIME_IN, Room
from fay_ros.memory.evidence import tokens

TITLE = "Several people: the speak decision's cost and the chime-in rate"

LINES = [
    "Did you finish your homework?",
    "Not yet, after lunch.",
    "Fay, what's the weather like tomorrow?",
    "The triceratops had three horns and a big frill.",
    "妈妈，我的鞋子在哪里？",
    "Fay，明天几点提醒我买牛奶？",
]
CALLS = 20_000
RATE_LINES = 10_000


def _room(rules: SpeakingRules, seed: int = 1) -> Room:
    room = Room(rules, ("Fay",), random.Random(seed))
    room.tracked(("anna", "mia"))  # two present: every rule is consulted
    room.hear("anna", "Fay, tell me about the triceratops and its three horns.", 0.0)
    room.companion_said("anna", "The triceratops had three horns and lived long ago.", 1.0)
    return room


def _cost() -> tuple[dict[str, float], dict[str, float]]:
    room = _room(SpeakingRules(chime_in_chance=0.2, cooldown=0.0, room_memory=1e9, presence_window=1e9))
    clock = iter(float(i) for i in range(2, 10 * CALLS))
    lines = iter(LINES * (CALLS // len(LINES) + 1))
    decide = time_calls(lambda: room.hear("mia", next(lines), next(clock)), CALLS)
    lines = iter(LINES * (CALLS // len(LINES) + 1))
    baseline = time_calls(lambda: tokens(next(lines)), CALLS)
    return summary(decide), summary(baseline)


def _chance_rate(chance: float) -> float:
    room = _room(SpeakingRules(chime_in_chance=chance, cooldown=0.0, room_memory=1e9, presence_window=1e9))
    chimes = sum(
        room.hear("mia", "The triceratops had three horns.", 2.0 + i).decision == CHIME_IN for i in range(RATE_LINES)
    )
    return chimes / RATE_LINES


def _per_minute(cooldown: float, every: float) -> float:
    """Chime-ins per minute with chance 1 and a close line every `every` seconds for an hour."""
    room = _room(SpeakingRules(chime_in_chance=1.0, cooldown=cooldown, room_memory=1e9, presence_window=1e9))
    seconds = 3600.0
    steps = int(seconds / every)
    chimes = sum(
        room.hear("mia", "The triceratops had three horns.", 2.0 + i * every).decision == CHIME_IN for i in range(steps)
    )
    return chimes / (seconds / 60.0)


def run() -> str:
    decide, baseline = _cost()
    rows = [
        "| | p50 | p95 | ratio to tokenizing the line (p50) |",
        "|---|---:|---:|---:|",
        f"| tokenize the line once (baseline) | {baseline['p50'] * 1e6:.1f} µs "
        f"| {baseline['p95'] * 1e6:.1f} µs | 1.0 |",
        f"| `Room.hear` (decide and record) | {decide['p50'] * 1e6:.1f} µs | {decide['p95'] * 1e6:.1f} µs "
        f"| {decide['p50'] / baseline['p50']:.1f} |",
    ]
    rates = [
        "| configured chance (cooldown 0) | measured share of close lines joined |",
        "|---:|---:|",
        *(f"| {chance:.2f} | {_chance_rate(chance):.3f} |" for chance in (0.05, 0.2, 0.5)),
    ]
    cooldowns = [
        "| cooldown | close line every | chime-ins per minute (chance 1, one hour) | bound 60 / cooldown |",
        "|---:|---:|---:|---:|",
        *(
            f"| {cooldown:.0f} s | {every:.0f} s | {_per_minute(cooldown, every):.2f} | {60.0 / cooldown:.2f} |"
            for cooldown, every in ((60.0, 5.0), (60.0, 1.0), (300.0, 2.0))
        ),
    ]
    return "\n".join(
        [
            f"{CALLS:,} decisions over six lines (English and Chinese, addressed and not), two people",
            "present, the companion's conversation on one topic; the baseline tokenizes the same line",
            "once (the decision tokenizes it and unites the recent talk's terms, kept per line). One run on",
            "this machine; the ratio is what compares across machines.",
            "",
            *rows,
            "",
            f"The chance alone ({RATE_LINES:,} close-topic lines, seeded):",
            "",
            *rates,
            "",
            "The cooldown bounds the rate whatever the chance:",
            "",
            *cooldowns,
        ]
    )
