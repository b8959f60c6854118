"""The knowledge base in the conversation (issue 41): the tiny profile's extractive answers and
don't-know line, "where does that come from?", the capable profile's prestart passages, the
knowledge_search tool; Fay's own route (an external MCP knowledge server, test/procs/
mcp_knowledge_server.py, as prestart). A real knowledge base (SQLite, the project's embeddings) over the shop's
documents in test/data/knowledge_shop, and the engine against the scripted loopback LLM."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

import dialogue_fake_llm as fake
from fay_ros.agent.mcp_client import McpClient
from fay_ros.agent.mcp_config import McpServersFile
from fay_ros.common import reply_sources
from fay_ros.dialogue.engine import DialogueEngine, EngineSettings
from fay_ros.dialogue.knowledge_talk import (
    KnowledgeDesk,
    KnowledgeTalkSettings,
    asks_for_information,
    asks_for_source,
    best_sentence,
    dont_know,
)
from fay_ros.dialogue.persona import Persona, PrestartSpec
from fay_ros.dialogue.reply import ReplyPiece
from fay_ros.dialogue.toolbox import builtin_tools
from fay_ros.dialogue.tools import ToolContext, ToolError
from fay_ros.knowledge.base import KnowledgeBase, KnowledgeSettings
from fay_ros.llm.client import ChatClient, Endpoint
from harness import REPO, ros_environment

SHOP = Path(__file__).parent / "data" / "knowledge_shop"
SATURDAY = "On Saturday the shop opens at 10 am and closes at 6 pm."
SATURDAY_ZH = "周六上午十点开门，下午六点关门。"


@pytest.fixture(scope="module")
def shop_db(tmp_path_factory) -> KnowledgeSettings:
    settings = KnowledgeSettings(db=str(tmp_path_factory.mktemp("kb") / "knowledge.db"))
    kb = KnowledgeBase(settings)
    report = kb.add([SHOP])
    kb.close()
    assert not report.failed and len(report.indexed) == 6
    return settings


@pytest.fixture
def fresh(llm):
    llm.reset()
    yield llm
    llm.reset()


class Rig:
    """An engine with the shop's documents, wired to the scripted server; collects its pieces."""

    def __init__(self, llm: fake.ScriptedLlm, shop_db: KnowledgeSettings, **settings) -> None:
        self.pieces: list[ReplyPiece] = []
        self.desk = KnowledgeDesk(lambda: KnowledgeBase(shop_db), KnowledgeTalkSettings(k=3))
        self.engine = DialogueEngine(
            Persona(),
            ChatClient(Endpoint(llm.base_url, "small-model")),
            self.pieces.append,
            tools=builtin_tools(),
            settings=EngineSettings(**settings),
        )
        self.engine.knowledge = self.desk

    async def say(self, user: str, text: str, language: str = "") -> tuple[str, set[str]]:
        """The whole reply to `text` and the sources of its pieces."""
        before = len(self.pieces)
        await self.engine.run_turn(user, text, language)
        said = self.pieces[before:]
        return " ".join(p.text for p in said if p.text).strip(), {p.source for p in said if p.text}

    async def close(self) -> None:
        await self.engine.small.close()
        self.desk.close()


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


# -- the words ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "question",
    [
        "Where does that come from?",
        "where did you get that",
        "What's your source?",
        "这是哪里说的？",
        "出处是什么？",
        "你在哪看到的？",
    ],
)
def test_asking_for_the_source_is_recognised(question):
    assert asks_for_source(question)


@pytest.mark.parametrize(
    "question", ["Where are the toilets?", "When does it come?", "你从哪里来？", "洗手间在哪里？", "在哪里看到熊猫？"]
)
def test_other_questions_are_not_asking_for_the_source(question):
    assert not asks_for_source(question)


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("Do you sell skateboards?", True),
        ("When do you open on Sunday?", True),
        ("how much is a flat tyre", True),
        ("你们卖滑板吗？", True),
        ("自行车多少钱", True),
        ("How are you?", False),
        ("What's your name?", False),
        ("Tell me a joke.", False),
        ("I like bikes.", False),
        ("你好吗？", False),
        ("你叫什么名字？", False),
    ],
)
def test_a_question_about_the_place_is_told_from_small_talk(question, asks):
    assert asks_for_information(question) is asks


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Is the shop open on Sunday?", "On Sunday the shop is closed."),
        ("When does the shop open on Saturday?", SATURDAY),
        ("Until when are repairs taken on weekdays?", "The workshop takes repairs until 5 pm on weekdays."),
        ("Is the shop open on holidays?", "The shop is closed on public holidays."),
        ("周日开门吗？", "周日不营业。"),
        ("周六几点开门？", SATURDAY_ZH),
    ],
)
def test_the_best_sentence_answers_the_question_not_its_neighbour(question, expected):
    text = (SHOP / ("营业时间.md" if "周" in question else "hours.md")).read_text(encoding="utf-8")
    assert best_sentence(question, text) == expected


# -- the tiny profile ---------------------------------------------------------------------------
def test_tiny_answers_from_the_documents_names_the_source_and_says_it_does_not_know(fresh, shop_db):
    async def scenario():
        rig = Rig(fresh, shop_db, profile="tiny")
        before = [(d.source, d.chunks) for d in await rig.desk.documents()]

        said, sources = await rig.say("user", "When does the shop open on Saturday?")
        assert said == SATURDAY and sources == {reply_sources.KNOWLEDGE}
        said, _ = await rig.say("user", "Where does that come from?")
        assert "hours.md" in said and "Weekends" in said, said
        said, _ = await rig.say("user", "How much does it cost to rent an electric bike?")
        assert "35 euros" in said
        said, _ = await rig.say("user", "where did you get that?")
        assert "prices.md" in said and "hours.md" not in said, said

        said, sources = await rig.say("user", "Do you sell skateboards?")
        assert said == dont_know(False) and sources == {reply_sources.KNOWLEDGE}
        said, _ = await rig.say("user", "Where does that come from?")
        assert "did not come from my documents" in said
        assert fresh.requests == [], "the documents' answers needed no model call"

        # small talk and the user's own facts are not the documents'
        fresh.script(fake.text("I'm fine, thank you."))
        said, sources = await rig.say("user", "How are you?")
        assert said == "I'm fine, thank you." and sources == {reply_sources.LLM}
        said, sources = await rig.say("user", "What's my name?")
        assert sources == {reply_sources.MEMORY}

        # nothing a user says is written into the knowledge base
        await rig.say("user", "Remember that the shop sells skateboards now.")
        assert [(d.source, d.chunks) for d in await rig.desk.documents()] == before
        await rig.close()

    fresh.default = lambda: fake.text("Okay.")
    run(scenario())


def test_tiny_answers_in_chinese_and_a_guest_may_ask(fresh, shop_db):
    async def scenario():
        rig = Rig(fresh, shop_db, profile="tiny")
        said, _ = await rig.say("", "周六几点开门？")
        assert said == SATURDAY_ZH
        said, _ = await rig.say("", "这是哪里说的？")
        assert "营业时间.md" in said and "周末" in said, said
        said, _ = await rig.say("", "电动自行车租一天多少钱？")
        assert said == "电动自行车租一天三十五欧元，含充电器。"
        said, _ = await rig.say("", "你们卖滑板吗？")
        assert said == dont_know(True)
        # one user's last answer is not another's
        said, _ = await rig.say("tom", "出处是什么？")
        assert "不是从我的资料里来的" in said
        assert fresh.requests == []
        await rig.close()

    run(scenario())


# -- the capable profile: Fay's prestart route, and the tool -------------------------------------
def test_capable_profile_gets_the_passages_and_sources_before_its_one_call(fresh, shop_db):
    async def scenario():
        rig = Rig(fresh, shop_db, judge=False)
        fresh.script(fake.text("We open at 10 am on Saturday."))
        said, _ = await rig.say("user", "When does the shop open on Saturday?")
        assert said == "We open at 10 am on Saturday."
        prompt = "\n".join(m["content"] for m in fresh.requests[0]["messages"])
        assert SATURDAY in prompt and "hours.md, under Opening hours > Weekends" in prompt
        said, _ = await rig.say("user", "Where does that come from?")
        assert said.startswith("That comes from hours.md")
        assert len(fresh.requests) == 1

        fresh.script(fake.text("I don't have that in my documents."))
        await rig.say("user", "Do you sell skateboards?")
        prompt = "\n".join(m["content"] for m in fresh.requests[1]["messages"])
        assert "nothing in the documents matches" in prompt
        await rig.close()

    run(scenario())


def test_knowledge_search_tool_serves_a_guest_and_says_when_there_are_no_documents(shop_db):
    async def scenario():
        tools = builtin_tools()
        desk = KnowledgeDesk(lambda: KnowledgeBase(shop_db))
        guest = ToolContext("", "", knowledge=desk)
        found = await tools.run("knowledge_search", {"question": "electric bike rent"}, guest)
        assert "prices.md" in found and "35 euros" in found
        assert desk.last_used("")[0].source == "prices.md"
        nothing = await tools.run("knowledge_search", {"question": "skateboard sale"}, guest)
        assert nothing.startswith("nothing in the documents matches")
        with pytest.raises(ToolError, match="not configured"):
            await tools.run("knowledge_search", {"question": "hours"}, ToolContext("user", ""))
        with pytest.raises(ToolError, match="'k'"):
            await tools.run("knowledge_search", {"question": "hours", "k": 99}, guest)
        desk.close()

    run(scenario())


# -- Fay's own route: an external MCP knowledge server as prestart -------------------------------
@pytest.mark.parametrize("profile", ["capable", "tiny"])
def test_an_external_mcp_knowledge_server_as_prestart_feeds_the_one_model_call(fresh, profile):
    """tools.yaml names the server, the persona's prestart its tool with the question: the passages
    and their sources reach the prompt of the turn's one model call (no knowledge_db needed)."""
    servers = McpServersFile.model_validate(
        {
            "servers": [
                {
                    "name": "kb",
                    "command": sys.executable,
                    "args": [str(Path(__file__).parent / "procs" / "mcp_knowledge_server.py")],
                    "tools": ["search_knowledge"],
                    "start_timeout": 20,
                    "call_timeout": 10,
                }
            ]
        }
    )
    persona = Persona(prestart=[PrestartSpec(tool="mcp_kb_search_knowledge", args={"query": "{{question}}"})])

    async def scenario() -> None:
        client = McpClient(servers)
        registry = builtin_tools()
        for tool in client.tools():
            registry.add(tool)
        engine = DialogueEngine(
            persona,
            ChatClient(Endpoint(fresh.base_url, "small-model")),
            lambda _piece: None,
            tools=registry,
            settings=EngineSettings(profile=profile, judge=False, prestart_timeout=20.0),
        )
        try:
            fresh.script(fake.text("On Saturday we open at 10 am."))
            trace = await engine.run_turn("user", "When does the shop open on Saturday?", "en")
            assert trace.error == "" and len(fresh.requests) == 1
            prompt = "\n".join(m["content"] for m in fresh.requests[0]["messages"])
            assert "[mcp_kb_search_knowledge]" in prompt and '"source": "hours.md"' in prompt, prompt
            assert SATURDAY in prompt
        finally:
            await engine.small.close()
            await client.close()

    run(scenario())


def test_fay_ros_chat_answers_from_a_knowledge_base(fresh, shop_db):
    """`fay-ros chat --knowledge-db`: the same answers in the terminal, without ROS."""
    done = subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "chat", "--base-url", fresh.base_url, "--model", "m", "--qa", "none"]
        + ["--profile", "tiny", "--knowledge-db", shop_db.db],
        input="When does the shop open on Saturday?\nWhere does that come from?\n",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(REPO),
        env=ros_environment(),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [SATURDAY, "That comes from hours.md, under Opening hours > Weekends."]
    assert fresh.requests == []
