"""Twenty people typing at once (issue 39), through the memory and dialogue nodes with the
loopback scripted model answering at once:

- on `text_input`: 10 lines/s for 20 s from 20 users (each user's lines 2 s apart); the time
  from a line to the first `reply` piece that answers it;
- on `fay-ros openai`: 20 streaming clients of the official `openai` package asking together,
  a line each every 2 s for 20 s (bursts of 20 requests); the time to the first content delta.

Baselines, same run and graph: one user alone, each line after the last answer. The aim
(issue 39): p95 ≤ 3 s under load, every line answered to its own user."""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path

from bench.stats import ms, percentile

TITLE = "Room load: 20 users typing at once"
USERS = 20
RATE = 10.0  # lines per second, all users together
SECONDS = 20.0
ALONE_LINES = 20
AIM_P95_S = 3.0
ODD_ANSWERS: list[str] = []  # the endpoint's answers other than "Noted <tag>." in the last run


def _at(start: float, offset: float) -> None:
    """Wait until `offset` seconds after `start` (the typing pace, not a test wait)."""
    delay = start + offset - time.monotonic()
    if delay > 0:
        time.sleep(delay)


def _row(name: str, samples: list[float], base: float) -> str:
    return (
        f"| {name} | {len(samples)} | {ms(percentile(samples, 0.5))} | {ms(percentile(samples, 0.95))} "
        f"| {ms(max(samples))} | {percentile(samples, 0.95) / base:.1f}× |"
    )


def _topic(rig) -> tuple[list[float], list[float], int, int]:
    for k in range(1, ALONE_LINES + 1):
        rig.line(f"u00-{k}")
        rig.wait_answered([f"u00-{k}"], timeout=60)
    alone = rig.outcome.latencies()
    rig.outcome = type(rig.outcome)()
    schedule = [(j / RATE, f"u{j % USERS:02d}-{j // USERS + 1}") for j in range(int(RATE * SECONDS))]
    start = time.monotonic()
    for offset, tag in schedule:
        _at(start, offset)
        rig.line(tag)
    try:
        rig.wait_answered([tag for _offset, tag in schedule], timeout=120)
    except TimeoutError:
        pass  # counted as unanswered
    return alone, rig.outcome.latencies(), len(rig.outcome.unanswered()), len(rig.outcome.misrouted)


def _endpoint(root: str, tokens: dict[str, str]) -> tuple[list[float], list[float], int, int]:
    from room_load import TAG, openai_client, stream_tag, user_of

    chats = {user: openai_client(root, token) for user, token in tokens.items()}
    alone = [stream_tag(chats["u00"], f"u00-{k}")[0] for k in range(1, ALONE_LINES + 1)]
    firsts: list[float] = []
    wrong: list[str] = []  # answers naming another user's line
    odd: list[str] = []  # answers that are not "Noted <tag>." (reported with an example)
    failed: list[BaseException] = []
    lock = threading.Lock()
    start = time.monotonic() + 0.5

    def client(n: int) -> None:
        user = f"u{n:02d}"
        for k in range(int(RATE * SECONDS) // USERS):
            _at(start, k * USERS / RATE)  # all 20 at once, every 2 s
            tag = f"{user}-{k + 101}"  # not the text_input phase's tags
            try:
                first, answer = stream_tag(chats[user], tag)
            except Exception as exc:  # noqa: BLE001 - counted, the others go on
                with lock:
                    failed.append(exc)
                continue
            with lock:
                firsts.append(first)
                if any(user_of(other) != user for other in TAG.findall(answer)):
                    wrong.append(tag)
                if answer != f"Noted {tag}.":
                    odd.append(f"{tag}: {answer!r}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(USERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ODD_ANSWERS[:] = odd
    return alone, firsts, len(failed), len(wrong)


def run() -> str:
    import dialogue_fake_llm as fake
    from harness import RosProbe
    from room_load import openai_endpoint, room

    llm = fake.ScriptedLlm()
    probe = RosProbe("room_load_bench")
    try:
        with tempfile.TemporaryDirectory() as tmp, room(probe, llm, Path(tmp)) as rig:
            topic = _topic(rig)
            with openai_endpoint(Path(tmp), [f"u{n:02d}" for n in range(USERS)]) as (root, tokens):
                endpoint = _endpoint(root, tokens)
    finally:
        probe.close()
        llm.close()
    lines = int(RATE * SECONDS)
    rows = [
        "| | lines | p50 | p95 | max | p95 / alone p50 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, (alone, loaded, lost, wrong), what in (
        ("`text_input` → first `reply` piece", topic, "unanswered"),
        ("`fay-ros openai` → first content delta (bursts of 20)", endpoint, "failed"),
    ):
        base = percentile(alone, 0.5)
        rows += [
            _row(f"{name}, one user alone (baseline)", alone, base),
            _row(f"{name}, {USERS} users, {RATE:.0f} lines/s for {SECONDS:.0f} s", loaded, base),
        ]
        rows.append(f"| ({lines} lines: {lost} {what}, {wrong} answered to another user) | | | | | |")
    if ODD_ANSWERS:
        rows += [
            "",
            f"{len(ODD_ANSWERS)} endpoint answers were not the line's own words, e.g. " + "; ".join(ODD_ANSWERS[:3]),
        ]
    rows += [
        "",
        f"Aim (issue 39): p95 ≤ {AIM_P95_S:.0f} s under load, every line answered to its own user. The loopback "
        "model answers at once, so the figures are the graph's own cost: the memory round trips, the "
        "dialogue's turn, DDS, the endpoint's HTTP and action hops.",
    ]
    return "\n".join(rows)
