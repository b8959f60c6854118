"""The knowledge base end to end (issue 41) on the bring-up `fay-ros up nodes:=memory,dialogue`
with the embedded model (SmolLM2-135M, the tiny profile) and a small shop's documents
(test/data/knowledge_shop, English and Chinese), indexed into a real SQLite knowledge base:
typed questions answered with the fact, "where does that come from?" naming the document, the
don't-know line for what the documents do not say; the same graph's knowledge/search service
for robot programs, and `fay-ros mcp`'s knowledge_search tool for a guest client.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from fay_msgs.msg import Transcript, Utterance
from fay_msgs.srv import KnowledgeSearch
from fay_ros.common import reply_sources, topics
from fay_ros.dialogue.knowledge_talk import dont_know
from fay_ros.knowledge.base import KnowledgeBase, KnowledgeSettings
from fay_ros.text.words import has_cjk
from harness import NodeProcess, RosProbe, ros_environment
from test_bringup_e2e import companion_config

pytestmark = pytest.mark.slow

SHOP = Path(__file__).parent / "data" / "knowledge_shop"
USER = "user"  # the bring-up's default speaker


class Graph:
    def __init__(self, probe: RosProbe, process: NodeProcess) -> None:
        self.probe, self.process = probe, process
        self.replies = probe.collect(Utterance, topics.REPLY)
        self.typed = probe.publisher(Transcript, topics.TEXT_INPUT)

    def ask(self, text: str, user: str = USER, timeout: float = 90.0) -> tuple[str, set[str]]:
        """Type `text`; the whole reply to it (its sentences joined) and the sources of its pieces."""
        seen = {m.conversation_id for m in self.replies.messages}
        self.typed.publish(Transcript(text=text, user_id=user))
        end = self.replies.wait_for_match(
            lambda m: m.is_end and m.conversation_id not in seen, timeout=timeout, what=f"the reply to {text!r}"
        )
        pieces = [m for m in self.replies.messages if m.conversation_id == end.conversation_id and m.text]
        return ("" if has_cjk(text) else " ").join(m.text for m in pieces), {m.source for m in pieces}


@pytest.fixture(scope="module")
def graph(embedded_llm, tmp_path_factory):
    llm_url, _llm = embedded_llm
    tmp = tmp_path_factory.mktemp("knowledge_e2e")
    db = tmp / "knowledge.db"
    kb = KnowledgeBase(KnowledgeSettings(db=str(db)))
    assert not kb.add([SHOP]).failed
    kb.close()
    config = companion_config(tmp, dialogue={"knowledge_db": str(db)})
    probe = RosProbe("knowledge_e2e_probe")
    process = NodeProcess(
        "fay_ros.cli",
        ros=False,
        args=["up", f"config:={config}", f"llm_base_url:={llm_url}", "nodes:=memory,dialogue"]
        + ["use_web:=false", "use_rosbridge:=false"],
    )
    try:
        probe.wait_ready("dialogue", timeout=120)
        up = Graph(probe, process)
        probe.wait_for_subscribers(up.typed)
        probe.wait_matched(up.replies, "dialogue")
        yield up
    finally:
        process.stop(timeout=30)
        probe.close()


def test_typed_questions_are_answered_from_the_documents_with_their_source(graph):
    said, sources = graph.ask("When does the shop open on Saturday?")
    assert said == "On Saturday the shop opens at 10 am and closes at 6 pm." and sources == {reply_sources.KNOWLEDGE}
    said, _ = graph.ask("Where does that come from?")
    assert said == "That comes from hours.md, under Opening hours > Weekends.", said
    said, _ = graph.ask("How much does it cost to rent an electric bike?")
    assert "35 euros" in said, said
    said, _ = graph.ask("Do you sell skateboards?")
    assert said == dont_know(False), said


def test_the_same_in_chinese(graph):
    said, sources = graph.ask("周六几点开门？")
    assert said == "周六上午十点开门，下午六点关门。" and sources == {reply_sources.KNOWLEDGE}
    said, _ = graph.ask("这是哪里说的？")
    assert "《营业时间.md》" in said and "周末" in said, said
    said, _ = graph.ask("你们卖滑板吗？")
    assert said == dont_know(True), said


def test_a_robot_program_searches_through_the_knowledge_search_service(graph):
    found = graph.probe.call(
        KnowledgeSearch, topics.SRV_KNOWLEDGE_SEARCH, KnowledgeSearch.Request(question="electric bike rent"), 30
    )
    assert found.success and found.passages, found.message
    best = found.passages[0]
    assert best.source == "prices.md" and "35 euros" in best.text and 0.0 < best.score <= 1.0
    assert best.locator and best.kb == "default"
    assert len(found.passages) <= 3  # the node's knowledge_k
    nothing = graph.probe.call(
        KnowledgeSearch, topics.SRV_KNOWLEDGE_SEARCH, KnowledgeSearch.Request(question="skateboard sale"), 30
    )
    assert nothing.success and list(nothing.passages) == []
    other_kb = graph.probe.call(
        KnowledgeSearch,
        topics.SRV_KNOWLEDGE_SEARCH,
        KnowledgeSearch.Request(question="electric bike rent", kb="museum"),
        30,
    )
    assert other_kb.success and list(other_kb.passages) == []
    empty = graph.probe.call(KnowledgeSearch, topics.SRV_KNOWLEDGE_SEARCH, KnowledgeSearch.Request(question=" "), 30)
    assert not empty.success and "empty" in empty.message
    assert graph.process.alive()


def test_mcp_knowledge_search_serves_a_guest_client(graph):
    async def run() -> tuple[dict, str, bool]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "fay_ros.cli", "mcp", "--owner", ""], env=ros_environment()
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            found = await session.call_tool("knowledge_search", {"question": "When does the shop open on Saturday?"})
            refused = await session.call_tool("knowledge_search", {"question": "hours", "owner": "tom"})
            return json.loads(found.content[0].text), refused.content[0].text, bool(refused.is_error)

    found, refused, is_error = asyncio.run(asyncio.wait_for(run(), 120))
    best = found["passages"][0]
    assert best["source"] == "hours.md" and "Saturday" in best["text"] and best["locator"]
    assert is_error and "refused" in refused


# -- the dialogue node's knowledge parameters -----------------------------------------------------
@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"knowledge_db": "{tmp}/nowhere/kb.db"}, "parameter 'knowledge_db': {tmp}/nowhere/kb.db does not exist"),
        ({"knowledge_bases": "shop,,faq"}, "knowledge_bases"),
        ({"knowledge_k": 0}, "knowledge_k"),
        ({"knowledge_embedder": "bert"}, "knowledge_embedder"),
    ],
)
def test_a_bad_knowledge_parameter_stops_the_node_naming_it(launch_node, tmp_path, params, says):
    params = {k: v.format(tmp=tmp_path) if isinstance(v, str) else v for k, v in params.items()}
    proc = launch_node("fay_ros.nodes.dialogue", {"memory": False, **params})
    assert proc.wait_exit(60) == 2
    assert says.format(tmp=tmp_path) in proc.output(), proc.output()[-2000:]
    assert not (tmp_path / "nowhere").exists()


def test_without_documents_the_service_says_why(launch_node):
    # a namespace of its own: the module's graph (with documents) may still serve /fay/knowledge/search
    proc = launch_node("fay_ros.nodes.dialogue", {"memory": False, "knowledge_db": "none"}, namespace="/bare")
    probe = RosProbe("knowledge_bare_probe", namespace="/bare")
    try:
        proc.wait_ready(60, probe=probe)
        request = KnowledgeSearch.Request(question="hours")
        answer = probe.call(KnowledgeSearch, topics.SRV_KNOWLEDGE_SEARCH, request, 30)
    finally:
        probe.close()
    assert not answer.success and "no knowledge base here" in answer.message and list(answer.passages) == []
