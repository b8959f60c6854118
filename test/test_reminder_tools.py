"""The reminder tools of the dialogue's tool loop (fay_ros.dialogue.reminder_tools): on a real
SQLite store through ReminderDesk + LocalReminders with a clock set by hand, and through the
real engine against the scripted loopback LLM (a model's call; a proactive turn's prestart)."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

import dialogue_fake_llm as fake
from fay_ros.dialogue.engine import DialogueEngine, EngineSettings
from fay_ros.dialogue.persona import Persona, PrestartSpec
from fay_ros.dialogue.reminder_talk import ReminderTalk
from fay_ros.dialogue.reminder_tools import ReminderAccess
from fay_ros.dialogue.toolbox import builtin_tools
from fay_ros.dialogue.tools import ToolContext, ToolError
from fay_ros.llm.client import ChatClient, Endpoint
from fay_ros.memory.backend import open_store
from fay_ros.memory.embeddings import HashedNgramEmbedder
from fay_ros.memory.reminder_book import ReminderBook
from fay_ros.memory.reminder_service import LocalReminders, ReminderDesk

TZ = "Asia/Shanghai"


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(TZ)).timestamp()


class Book:
    def __init__(self, tmp_path, clock) -> None:
        clock.t = at("2026-12-04T09:00:00")  # a Friday
        self.clock = clock
        self.store = open_store(str(tmp_path / "memory.db"), HashedNgramEmbedder(), clock=clock)
        self.book = ReminderBook(self.store.reminder_tables(), clock=clock)
        self.port = LocalReminders(ReminderDesk(self.book, TZ))
        self.access = ReminderAccess(self.port, TZ, clock)
        self.tools = builtin_tools()

    def ctx(self, owner: str = "alice", **kw) -> ToolContext:
        return ToolContext(owner, "", "conv-1", 3, reminders=self.access, **kw)

    def run(self, name: str, args: dict, ctx: ToolContext) -> str:
        return asyncio.run(self.tools.run(name, args, ctx))

    def rows(self, owner: str = "alice") -> list[tuple[str, str, str]]:
        return [(r.start_local, r.rrule, r.text) for r in self.book.list(owner)]


@pytest.fixture
def book(tmp_path, clock):
    b = Book(tmp_path, clock)
    yield b
    b.store.close()


def test_add_reads_when_in_the_owners_zone_and_list_and_cancel_by_id(book):
    said = book.run("reminder_add", {"when": "tomorrow at 6 pm", "what": "call my mother"}, book.ctx())
    assert "call my mother" in said and "2026-12-05 18:00" in said, said
    said_zh = book.run("reminder_add", {"when": "明天下午三点", "what": "交周报"}, book.ctx())
    assert "2026-12-05 15:00" in said_zh and "交周报" in said_zh, said_zh
    book.run("reminder_add", {"when": "every weekday at 7:30", "what": "take my pills"}, book.ctx())
    assert sorted(book.rows()) == [
        ("2026-12-05T15:00:00", "", "交周报"),
        ("2026-12-05T18:00:00", "", "call my mother"),
        ("2026-12-07T07:30:00", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=30", "take my pills"),
    ]
    stored = {r.text: r for r in book.book.list("alice")}
    assert stored["call my mother"].source_turn == "conv-1#3"

    listed = book.run("reminder_list", {}, book.ctx())
    for r in stored.values():
        assert f"id {r.id}: {r.text}" in listed, listed
    assert "every weekday" in listed

    target = stored["call my mother"].id
    assert book.run("reminder_cancel", {"id": target}, book.ctx()) == "cancelled: call my mother"
    assert "call my mother" not in [t for _s, _r, t in book.rows()]
    with pytest.raises(ToolError, match="not cancelled"):
        book.run("reminder_cancel", {"id": target}, book.ctx())  # already cancelled


@pytest.mark.parametrize(
    ("when", "why"),
    [
        ("today at 8 am", "in the past"),  # 09:00 now
        ("tomorrow", "no time of day"),
        ("later", "vague or ambiguous"),
        ("明天", "no time of day"),
        ("at 7 or 8", "vague or ambiguous"),
    ],
)
def test_a_time_the_dialogue_would_ask_about_is_refused_not_guessed(book, when, why):
    with pytest.raises(ToolError, match=why):
        book.run("reminder_add", {"when": when, "what": "call my mother"}, book.ctx())
    assert book.rows() == []


def test_a_night_time_not_said_as_night_is_refused_and_said_as_night_is_kept(book):
    book.clock.t = at("2026-12-04T22:30:00")
    with pytest.raises(ToolError, match="falls in the night"):
        book.run("reminder_add", {"when": "in 5 hours", "what": "check the oven"}, book.ctx())
    assert book.rows() == []
    book.run("reminder_add", {"when": "tomorrow at 2 am", "what": "check the oven"}, book.ctx())
    assert book.rows() == [("2026-12-05T02:00:00", "", "check the oven")]


def test_owner_comes_from_the_session_never_from_arguments(book):
    book.run(
        "reminder_add", {"when": "in 20 minutes", "what": "stretch", "owner": "mallory", "user_id": "bob"}, book.ctx()
    )
    assert [t for _s, _r, t in book.rows("alice")] == ["stretch"]
    assert book.rows("mallory") == [] and book.rows("bob") == []
    alices = book.book.list("alice")[0].id
    # another person's id is not theirs to cancel, nor to see
    with pytest.raises(ToolError, match="not cancelled"):
        book.run("reminder_cancel", {"id": alices, "owner": "alice"}, book.ctx("bob"))
    assert "stretch" not in book.run("reminder_list", {}, book.ctx("bob"))
    assert book.rows("alice") != []


def test_a_guest_and_a_scheduled_turn_get_tool_errors(book):
    for name, args in (
        ("reminder_add", {"when": "in 20 minutes", "what": "stretch"}),
        ("reminder_list", {}),
        ("reminder_cancel", {"id": "x"}),
    ):
        with pytest.raises(ToolError, match="guest"):
            book.run(name, args, book.ctx(""))
    with pytest.raises(ToolError, match="scheduled or proactive"):
        book.run("reminder_add", {"when": "in 20 minutes", "what": "stretch"}, book.ctx(scheduled=True))
    book.run("reminder_add", {"when": "in 20 minutes", "what": "stretch"}, book.ctx())
    target = book.book.list("alice")[0].id
    with pytest.raises(ToolError, match="scheduled or proactive"):
        book.run("reminder_cancel", {"id": target}, book.ctx(scheduled=True))
    assert "stretch" in book.run("reminder_list", {}, book.ctx(scheduled=True)), "reading is fine"
    assert [t for _s, _r, t in book.rows()] == ["stretch"]
    with pytest.raises(ToolError, match="unavailable"):
        book.run("reminder_list", {}, ToolContext("alice", ""))


# -- through the engine --------------------------------------------------------------------


class EngineRig:
    def __init__(self, llm, book: Book, persona: Persona | None = None) -> None:
        self.pieces: list = []
        self.engine = DialogueEngine(
            persona or Persona(),
            ChatClient(Endpoint(llm.base_url, "small-model", "", connect_timeout=2.0, first_token_timeout=10.0)),
            self.pieces.append,
            tools=book.tools,
            settings=EngineSettings(),
        )
        self.engine.reminder_talk = ReminderTalk(book.port, TZ, book.clock)

    async def close(self) -> None:
        await self.engine.small.close()


@pytest.fixture
def fresh(llm):
    llm.reset()
    yield llm
    llm.reset()


def test_the_model_sets_a_reminder_for_the_sessions_owner(fresh, book):
    async def scenario():
        rig = EngineRig(fresh, book)
        fresh.script(
            fake.judge_tool("set a reminder"),
            fake.tool_call(
                "reminder_add",
                json.dumps({"when": "tomorrow at 6 pm", "what": "call my mother", "owner": "mallory"}),
                call_id="call_1",
            ),
            fake.loop_finish("set"),
            fake.text("Done, tomorrow at six."),
        )
        # words the reminder talk does not take, so the turn goes to the model and its tools
        trace = await rig.engine.run_turn("alice", "could you sort it so I phone mum after work tomorrow", "en")
        assert trace.error == "" and trace.path == "tool", trace
        tool_msg = next(m for m in fresh.requests[2]["messages"] if m["role"] == "tool")
        assert "added" in tool_msg["content"] and "2026-12-05 18:00" in tool_msg["content"], tool_msg
        assert book.rows("alice") == [("2026-12-05T18:00:00", "", "call my mother")]
        assert book.rows("mallory") == []
        await rig.close()

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_proactive_turn_cannot_create_a_reminder(fresh, book, caplog):
    """A tool runs in a proactive turn only as a persona prestart: there reminder_add is refused,
    while the same prestart in the user's own turn adds."""
    persona = Persona(
        prestart=[PrestartSpec(tool="reminder_add", args={"when": "tomorrow at 6 pm", "what": "drink water"})]
    )

    async def scenario():
        rig = EngineRig(fresh, book, persona)
        fresh.script(fake.text("Good morning! ", "How did you sleep?"))
        with caplog.at_level(logging.WARNING, logger="fay_ros.dialogue"):
            await rig.engine.speak_first("alice", prompt="Greet the user.", language="en").task
        assert any("scheduled or proactive" in r.getMessage() for r in caplog.records), caplog.text
        assert book.rows("alice") == [], "a proactive turn created a schedule"
        fresh.script(fake.judge_finish("OK."))
        await rig.engine.run_turn("alice", "good morning", "en")
        assert book.rows("alice") == [("2026-12-05T18:00:00", "", "drink water")]
        await rig.close()

    asyncio.run(asyncio.wait_for(scenario(), 60))
