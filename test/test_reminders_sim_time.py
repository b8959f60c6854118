"""Reminders and follow-ups under sim time (issue 36): a real memory node and a real dialogue
node, both with use_sim_time:=true, the test publishing /clock (no sleeps: the dialogue's
`dialogue/proactive` events say what the runner did at which node time, the lines arrive on
`reply`, and the memory's `memory/reminders` service says what is stored).

- a daily reminder keeps its wall-clock time across the change to summer time;
- "got it" acknowledges a reminder said; "remind me again in ten minutes" snoozes it;
- quiet hours hold commitment follow-ups, never a reminder the user asked for;
- at most three follow-ups per owner per hour.
"""

from __future__ import annotations

import textwrap
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rosgraph_msgs.msg import Clock

import dialogue_fake_llm as fake
from fay_msgs.msg import Transcript, Utterance
from fay_msgs.srv import Reminders
from fay_ros.common import qos, reply_sources, topics
from fay_ros.common.rostime import from_time_msg, to_time_msg
from harness import NodeProcess, RosProbe, wait_until

pytestmark = pytest.mark.slow

NS = "/simremind"
# How late (sim seconds) a line may be said after its time: the errors these tests are about (a
# zone or summer-time mistake, a snooze read wrong) are minutes or hours, not seconds.
LATE_S = 60.0
# The clock the test publishes runs on while a loaded node catches up: a look at the memory that
# takes 3.5 s of wall time under load, at 20 s of sim time per wall second, said a line 71 s of
# sim time late. From a little before a time the test checks, the clock runs at twice real time
# instead (SLOW_STEP per 0.05 s), so a node would have to stall for LATE_S / 2 = 30 s to miss it.
SLOW_STEP = 0.1
LONDON = ZoneInfo("Europe/London")
TOM = "tom"

SCHEDULE = textwrap.dedent("""\
    timezone: Europe/London
    memory:
      portrait_at: ""
      reflection_at: ""
    proactive:
      enabled: true
      quiet_hours: "22:00-07:00"
      absent_after: 0
      triggers: []
    """)


def london(*parts: int) -> float:
    return datetime(*parts, tzinfo=LONDON).timestamp()


def values(status: DiagnosticStatus) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


class SimGraph:
    """The memory and dialogue nodes on one sim clock."""

    def __init__(self, probe: RosProbe, llm: fake.ScriptedLlm, tmp_path) -> None:
        schedule = tmp_path / "schedule.yaml"
        schedule.write_text(SCHEDULE, encoding="utf-8")
        self.db = tmp_path / "memory.db"
        self.probe = probe
        self.diagnostics = probe.collect(DiagnosticArray, topics.DIAGNOSTICS, 50)
        self.events = probe.collect(DiagnosticStatus, f"{NS}/dialogue/proactive")
        self.replies = probe.collect(Utterance, f"{NS}/{topics.REPLY}")
        self.clock = probe.node.create_publisher(Clock, "/clock", 10)
        self.typed = probe.publisher(Transcript, f"{NS}/{topics.TEXT_INPUT}", qos.EVENTS)
        self.now = 0.0
        self.memory = NodeProcess(
            "fay_ros.nodes.memory",
            {
                "db_path": str(self.db),
                "embedder": "hashed",
                "schedule_file": str(schedule),
                "use_sim_time": True,
            },
            namespace=NS,
        )
        self.dialogue = NodeProcess(
            "fay_ros.nodes.dialogue",
            {
                "base_url": llm.base_url,
                "model": "scripted",
                "model_profile": "tiny",
                "schedule_file": str(schedule),
                "use_sim_time": True,
            },
            namespace=NS,
        )
        self.memory.wait_ready(timeout=60, probe=probe)
        self.dialogue.wait_ready(timeout=60, probe=probe)
        probe.wait_for_subscribers(self.clock, 2)
        probe.wait_for_subscribers(self.typed)
        probe.wait_matched(self.events, "dialogue")
        probe.wait_matched(self.replies, "dialogue")

    def stop(self) -> None:
        self.dialogue.stop()
        self.memory.stop()

    # -- the clock
    def run_clock(
        self, start: float, until, what: str, step: float = 1.0, timeout: float = 60.0, checked: float | None = None
    ):
        """Publish /clock from `start` on, one `step` per 0.05 s, until `until()` holds; from two
        seconds before `checked` (a time the test then checks a line against) one SLOW_STEP."""
        self.now = start
        result = []

        slow_from = float("inf") if checked is None else checked - 2.0

        def advance():
            self.clock.publish(Clock(clock=to_time_msg(self.now)))
            self.now += SLOW_STEP if self.now >= slow_from else min(step, slow_from - self.now)
            found = until()
            result.append(found)
            return found

        wait_until(advance, timeout, interval=0.05, message=lambda: f"{what}; events: {self.of()[-8:]}")
        return result[-1]

    # -- what the graph did
    def of(self, event: str | None = None) -> list[dict[str, str]]:
        found = [values(s) | {"message": s.message} for s in list(self.events.messages)]
        return [v for v in found if event is None or v["event"] == event]

    def said_for(self, reminder_id: str) -> list[dict[str, str]]:
        return [e for e in self.of("reminder") if e["reminders"] == reminder_id]

    def reply_of(self, conversation_id: str) -> str:
        def whole(msgs):
            if any(m.conversation_id == conversation_id and m.is_end for m in msgs):
                return " ".join(m.text for m in msgs if m.conversation_id == conversation_id and m.text)
            return None

        return self.replies.wait_for(whole, what=f"the reply {conversation_id}")

    def answer_to(self, text: str) -> str:
        """The whole reply to `text` typed by Tom (a reminder turn: source reminders)."""
        seen = {m.conversation_id for m in list(self.replies.messages)}
        self.typed.publish(Transcript(text=text, user_id=TOM))

        def whole(msgs):
            for end in (m for m in msgs if m.is_end and m.conversation_id not in seen and m.user_id == TOM):
                return " ".join(m.text for m in msgs if m.conversation_id == end.conversation_id and m.text), end.source
            return None

        words, source = self.replies.wait_for(whole, what=f"the answer to {text!r}")
        assert source == reply_sources.REMINDERS, (text, words, source)
        return words

    # -- the memory's reminders
    def reminders(self, action: str, **fields) -> Reminders.Response:
        request = Reminders.Request(action=action, owner=fields.pop("owner", TOM), **fields)
        return self.probe.call(Reminders, f"{NS}/{topics.SRV_REMINDERS}", request, resend=False)


@pytest.fixture(scope="module")
def probe():
    p = RosProbe("reminders_sim_probe")
    yield p
    p.close()


@pytest.fixture(scope="module")
def graph(probe, llm, tmp_path_factory):
    llm.reset()
    g = SimGraph(probe, llm, tmp_path_factory.mktemp("simremind"))
    # both nodes on the sim clock before anything is stored
    g.run_clock(london(2026, 3, 27, 12, 0), lambda: g.reminders("list").success, "the memory on the sim clock")
    yield g
    g.stop()


@pytest.fixture(autouse=True)
def nothing_left_over(graph):
    """Each test starts from an empty book: a test that failed half-way leaves nothing due for the next."""
    yield
    for left in graph.reminders("list").reminders:
        graph.reminders("cancel", id=left.id)
    graph.reminders("clear")


def test_a_daily_reminder_keeps_its_wall_clock_time_across_summer_time(graph):
    added = graph.reminders(
        "add", tz="Europe/London", start_local="2026-03-28T07:30:00", repeat="FREQ=DAILY", text="take the pills"
    )
    assert added.success, added.message
    rid = added.reminders[0].id
    # Saturday 28 March, 07:30 GMT (UTC+0)
    graph.run_clock(
        london(2026, 3, 28, 7, 29, 50),
        lambda: graph.said_for(rid),
        "the pills on 28 March",
        checked=london(2026, 3, 28, 7, 30),
    )
    [first] = graph.said_for(rid)
    assert london(2026, 3, 28, 7, 30) <= float(first["clock"]) < london(2026, 3, 28, 7, 30) + LATE_S
    assert graph.reply_of(first["conversation_id"]) == "Reminder: take the pills."
    assert graph.answer_to("Got it, thanks.") == "Great."
    [stored] = graph.reminders("list").reminders
    assert stored.due_local == "2026-03-29T07:30:00"
    # Sunday 29 March: the clocks went forward at 01:00; 07:30 is now BST (UTC+1), an hour earlier in UTC
    assert from_time_msg(stored.due) == london(2026, 3, 29, 7, 30) == london(2026, 3, 28, 7, 30) + 23 * 3600
    graph.run_clock(
        london(2026, 3, 29, 7, 29, 50),
        lambda: len(graph.said_for(rid)) == 2,
        "the pills on 29 March",
        checked=london(2026, 3, 29, 7, 30),
    )
    second = graph.said_for(rid)[1]
    assert london(2026, 3, 29, 7, 30) <= float(second["clock"]) < london(2026, 3, 29, 7, 30) + LATE_S
    assert graph.answer_to("ok") == "Great."
    assert graph.reminders("cancel", id=rid).success


def test_a_said_reminder_is_snoozed_in_words_and_said_again(graph):
    added = graph.reminders("add", tz="Europe/London", start_local="2026-03-30T10:00:00", text="call the plumber")
    rid = added.reminders[0].id
    graph.run_clock(
        london(2026, 3, 30, 9, 59, 55),
        lambda: graph.said_for(rid),
        "the plumber reminder",
        checked=london(2026, 3, 30, 10, 0),
    )
    assert graph.reply_of(graph.said_for(rid)[0]["conversation_id"]) == "Reminder: call the plumber."
    answer = graph.answer_to("Remind me again in ten minutes.")
    assert "10:10" in answer, answer
    [snoozed] = graph.reminders("list").reminders
    # ten minutes from when it was asked: after the line was said, by the clock the test stopped at
    said_at = float(graph.said_for(rid)[0]["clock"])
    assert snoozed.status == "scheduled" and said_at + 600 <= from_time_msg(snoozed.due) <= graph.now + 600
    graph.run_clock(
        graph.now,
        lambda: len(graph.said_for(rid)) == 2,
        "the plumber again",
        step=5.0,
        checked=from_time_msg(snoozed.due),
    )
    again = float(graph.said_for(rid)[1]["clock"])
    assert again >= from_time_msg(snoozed.due) and again < from_time_msg(snoozed.due) + LATE_S
    assert graph.answer_to("好的") == "好的。"
    assert graph.reminders("list").reminders == []


def test_quiet_hours_hold_follow_ups_but_not_reminders_and_follow_ups_keep_the_rate(graph):
    for text in ("call the dentist", "renew the passport", "water the garden", "book the train"):
        assert graph.reminders("commit", text=text).success
    late = graph.reminders("add", tz="Europe/London", start_local="2026-03-30T22:40:00", text="lock the door")
    rid = late.reminders[0].id
    # 22:30-22:45 is in the quiet hours: the reminder is said at 22:40, no follow-up at all
    graph.run_clock(london(2026, 3, 30, 22, 30), lambda: graph.said_for(rid), "the late reminder", step=5.0)
    graph.run_clock(graph.now, lambda: graph.now >= london(2026, 3, 30, 22, 45), "five quiet minutes", step=10.0)
    assert graph.of("followup") == []
    assert graph.answer_to("ok") == "Great."
    # 07:00 the next morning: three follow-ups within the hour, then none until the hour has passed
    start = london(2026, 3, 31, 7, 0)
    # (1 s per 0.05 s: the three are checked to come within ten minutes, a 20 s stall is 400 s here)
    graph.run_clock(start, lambda: len(graph.of("followup")) >= 3, "three follow-ups")
    graph.run_clock(graph.now, lambda: graph.now >= start + 3000, "the rest of the hour", step=20.0, timeout=90)
    ups = graph.of("followup")
    assert len(ups) == 3 and len({u["reminders"] for u in ups}) == 3
    assert all(float(u["clock"]) < start + 600 for u in ups)
    # (two follow-ups may arrive between two looks of the test: at least four, then the fourth's time)
    graph.run_clock(graph.now, lambda: len(graph.of("followup")) >= 4, "the fourth follow-up", step=20.0, timeout=90)
    assert float(graph.of("followup")[3]["clock"]) >= float(ups[0]["clock"]) + 3600
    line = graph.reply_of(ups[0]["conversation_id"])
    assert line.startswith("Did you ") and line.endswith("?"), line


def test_a_corrupt_row_is_reported_with_its_id_and_the_others_are_served(graph):
    import sqlite3

    kept = graph.reminders("add", tz="Europe/London", start_local="2026-04-02T09:00:00", text="post the letter")
    with sqlite3.connect(graph.db) as db:  # a row written by hand, with a zone that does not exist
        row = db.execute("SELECT * FROM reminders WHERE id = ?", (kept.reminders[0].id,)).fetchone()
        columns = [c[1] for c in db.execute("PRAGMA table_info(reminders)")]
        bad = dict(zip(columns, row, strict=True)) | {"id": "handwritten1", "tz": "Mars/Olympus"}
        db.execute(f"INSERT INTO reminders ({', '.join(bad)}) VALUES ({', '.join('?' * len(bad))})", list(bad.values()))
    listed = graph.reminders("list")
    assert listed.success and [r.text for r in listed.reminders] == ["post the letter"]
    report = graph.diagnostics.wait_for_match(
        lambda a: any(s.name == f"{NS[1:]}/memory: reminders" and "handwritten1" in s.message for s in a.status),
        what="the corrupt row on /diagnostics",
    )
    [status] = [s for s in report.status if s.name == f"{NS[1:]}/memory: reminders"]
    assert status.level == DiagnosticStatus.ERROR and "Mars/Olympus" in status.message
    assert graph.memory.alive()
    assert graph.reminders("cancel", id=kept.reminders[0].id).success
