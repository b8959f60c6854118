"""The reminder runner (dialogue.reminder_runner) on a real store through the service's dispatch
and the real ReminderTalk, with a hand-moved clock: what it says, when, and what it waits for.
`speak` is the engine's boundary; here it records the lines (and can refuse, as the engine does
while the user's turn runs)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from fay_ros.dialogue.reminder_runner import ReminderRunner
from fay_ros.dialogue.reminder_talk import ReminderTalk
from fay_ros.memory.backend import open_store
from fay_ros.memory.embeddings import HashedNgramEmbedder
from fay_ros.memory.reminder_book import ReminderBook
from fay_ros.memory.reminder_service import LocalReminders, ReminderAnswer, ReminderDesk, ReminderRequest

TZ = "Asia/Shanghai"


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(TZ)).timestamp()


class Rig:
    def __init__(self, tmp_path, clock) -> None:
        self.clock = clock
        self.store = open_store(str(tmp_path / "memory.db"), HashedNgramEmbedder(), clock=clock)
        self.port = LocalReminders(ReminderDesk(ReminderBook(self.store.reminder_tables(), clock=clock), TZ))
        self.talk = ReminderTalk(self.port, TZ, clock)
        self.lines: list[tuple[str, str]] = []
        self.refuse = False
        self.runner = ReminderRunner(self.port, self.talk, self.speak, busy=lambda _user: self.refuse)

    def speak(self, user: str, line: str) -> str:
        if self.refuse:
            return ""
        self.lines.append((user, line))
        return f"{user}-{len(self.lines)}"

    def add(self, owner: str, start: str, text: str, repeat: str = "") -> str:
        answer = self.port.desk.handle(ReminderRequest("add", owner, text=text, start_local=start, repeat=repeat))
        assert answer.success, answer.message
        return answer.reminders[0].id

    def tick(self, when: str, speaking: bool = False, present: str = ""):
        self.clock.t = at(when)
        return asyncio.run(self.runner.tick(self.clock.t, speaking=speaking, present=present))


@pytest.fixture
def rig(tmp_path, clock):
    clock.t = at("2026-12-04T09:00:00")
    r = Rig(tmp_path, clock)
    yield r
    r.store.close()


def test_a_due_reminder_waits_for_speech_to_end_then_is_said_once_and_again_until_acknowledged(rig):
    rid = rig.add("alice", "2026-12-04T09:30:00", "交周报")
    assert rig.tick("2026-12-04T09:29:59") == [] and rig.lines == []
    waiting = rig.tick("2026-12-04T09:30:00", speaking=True)
    assert [(e.event, e.ids) for e in waiting] == [("waiting", (rid,))] and rig.lines == []
    assert rig.tick("2026-12-04T09:30:01", speaking=True) == []  # reported once while it waits
    said = rig.tick("2026-12-04T09:30:02")
    assert [(e.event, e.user, e.ids) for e in said] == [("reminder", "alice", (rid,))]
    assert rig.lines == [("alice", "提醒你：交周报。")]
    assert rig.tick("2026-12-04T09:31:00") == []  # not again at once
    rig.tick("2026-12-04T09:35:02")  # said again after resay_after (5 min): nobody answered
    assert len(rig.lines) == 2
    # the user's "知道了" refers to the reminder just said
    reply = asyncio.run(rig.talk.answer("alice", "知道了"))
    assert reply is not None and reply.action == "ack"
    rig.tick("2026-12-04T09:45:00")
    assert len(rig.lines) == 2


def test_what_fell_due_while_down_is_one_summary_said_when_its_owner_is_back(rig):
    rig.add("alice", "2026-12-04T09:10:00", "喝水")
    rig.add("alice", "2026-12-04T09:20:00", "吃药")
    bob = rig.add("bob", "2026-12-04T10:05:00", "call the bank")
    # the graph comes up at 10:00: alice's two are an hour late; bob's is still ahead
    assert rig.tick("2026-12-04T10:00:00") == [] and rig.lines == []  # alice is not here yet
    assert rig.tick("2026-12-04T10:00:01", present="bob") == []
    rig.refuse = True  # alice's turn is running: the summary is not consumed
    assert rig.tick("2026-12-04T10:00:02", present="alice") == []
    rig.refuse = False
    [summary] = rig.tick("2026-12-04T10:00:03", present="alice")
    assert summary.event == "overdue" and summary.user == "alice" and len(summary.ids) == 2
    assert rig.lines == [("alice", "我不在的时候，有2个提醒到了时间：喝水；吃药。")]
    assert rig.tick("2026-12-04T10:00:04", present="alice") == []  # once
    [bank] = rig.tick("2026-12-04T10:05:00")  # bob's is said on time, one by one as usual
    assert bank.ids == (bob,) and rig.lines[-1] == ("bob", "Reminder: call the bank.")


def test_follow_ups_go_to_the_present_user_and_an_absent_memory_is_reported_once(rig):
    rig.port.desk.handle(ReminderRequest("commit", "alice", text="给牙医打电话"))
    assert rig.tick("2026-12-04T09:00:00") == []  # nobody present: no follow-up
    [up] = rig.tick("2026-12-04T09:00:01", present="alice")
    assert up.event == "followup" and rig.lines == [("alice", "你给牙医打电话了吗？")]
    assert rig.tick("2026-12-04T09:00:30", present="alice") == []  # one look a minute

    class Down:
        async def call(self, request: ReminderRequest) -> ReminderAnswer:
            return ReminderAnswer(False, "service memory/reminders is not running")

    rig.runner.reminders = Down()
    first = rig.tick("2026-12-04T09:02:00")
    assert [(e.event, e.reason) for e in first] == [("unavailable", "service memory/reminders is not running")]
    assert rig.tick("2026-12-04T09:02:01") == []
    rig.runner.reminders = rig.port
    assert [e.event for e in rig.tick("2026-12-04T09:02:02")] == ["available"]
