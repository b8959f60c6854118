"""The dialogue node as a real process: Transcripts in, streamed Utterances out, over DDS.

The LLM is a scripted OpenAI-compatible server on loopback in the test process; the memory
services are a tiny real service server (a dict) on the test's probe node.
"""
from __future__ import annotations

import json
import threading

import pytest

import dialogue_fake_llm as fake
from fay_msgs.msg import MemoryNode, Transcript, Utterance
from fay_msgs.srv import GetActiveRules, Recall, Remember
from harness import NodeProcess, RosProbe, free_port, wait_until
from std_msgs.msg import Empty

from fay_ros.common import topics
from fay_ros.dialogue.persona import Persona

NODE = "fay_ros.nodes.dialogue"


class DictMemoryService:
    """memory/recall, memory/remember and memory/active_rules over a dict, on the probe node."""

    def __init__(self, probe: RosProbe) -> None:
        self.lock = threading.Lock()
        self.stored: list[Remember.Request] = []
        self.recalls: list[Recall.Request] = []
        self.facts = {"alice": [("m1", "Alice's cat is called Mochi.", "confirmed"),
                                ("m2", "Alice may be allergic to pollen.", "candidate")]}
        probe.node.create_service(Recall, topics.SRV_RECALL, self._recall)
        probe.node.create_service(Remember, topics.SRV_REMEMBER, self._remember)
        probe.node.create_service(GetActiveRules, topics.SRV_ACTIVE_RULES, self._rules)

    def _recall(self, request, response):
        with self.lock:
            self.recalls.append(request)
        response.success = True
        response.nodes = [MemoryNode(id=i, owner=request.owner, content=c, status=s)
                          for i, c, s in self.facts.get(request.owner, [])
                          if s == "confirmed" or request.include_candidates]
        return response

    def _remember(self, request, response):
        with self.lock:
            self.stored.append(request)
        response.success = True
        response.message = "stored"
        response.node = MemoryNode(id="new", owner=request.owner, content=request.content, status="confirmed")
        return response

    def _rules(self, request, response):
        response.success = True
        return response


@pytest.fixture(scope="module")
def rig(llm):
    """One dialogue node process, a probe with the memory services, reply collector, publishers."""
    probe = RosProbe("dialogue_test_probe")
    memory = DictMemoryService(probe)
    node = NodeProcess(NODE, {"base_url": llm.base_url, "model": "scripted", "first_token_timeout": 5.0,
                              "memory_timeout": 2.0})
    try:
        node.wait_ready(probe=probe)
        replies = probe.collect(Utterance, topics.REPLY)
        pubs = {name: probe.publisher(Transcript, name) for name in (topics.SPEECH_FINAL, topics.TEXT_INPUT)}
        pubs[topics.INTERRUPT] = probe.publisher(Empty, topics.INTERRUPT)
        for pub in pubs.values():
            probe.wait_for_subscribers(pub)
        probe.wait_for_publishers(topics.REPLY)
        yield probe, node, memory, replies, pubs
    finally:
        node.stop()
        probe.close()
        print(f"\n----- dialogue node output -----\n{node.output()[-3000:]}")


@pytest.fixture
def fresh(rig, llm):
    probe, node, memory, replies, pubs = rig
    llm.reset()
    replies.clear()
    yield rig
    llm.reset()


def transcript(text: str, user: str = "alice", language: str = "en") -> Transcript:
    return Transcript(text=text, user_id=user, language=language, is_final=True, confidence=0.9)


def reply_done(msgs):
    return next((m for m in msgs if m.is_end), None)


def test_speech_final_yields_streamed_utterances_on_reply(fresh, llm):
    probe, node, memory, replies, pubs = fresh
    llm.script(fake.judge_finish("Hello Alice! The weather is lovely today. Shall we go out?", pieces=6))
    pubs[topics.SPEECH_FINAL].publish(transcript("good morning"))
    replies.wait_for(reply_done, what="the end of the reply")
    msgs = list(replies.messages)
    assert [m.text for m in msgs] == ["Hello Alice!", "The weather is lovely today.", "Shall we go out?"]
    assert [m.seq for m in msgs] == [0, 1, 2]
    assert [m.is_first for m in msgs] == [True, False, False] and [m.is_end for m in msgs] == [False, False, True]
    assert len({m.conversation_id for m in msgs}) == 1 and msgs[0].conversation_id
    assert all(m.user_id == "alice" and m.source == "llm" and m.header.stamp.sec > 0 for m in msgs)
    assert llm.requests[0]["messages"][-1]["content"] == "good morning"


def test_reply_reports_llm_time_to_first_token_on_diagnostics(fresh, llm):
    from diagnostic_msgs.msg import DiagnosticArray

    from fay_ros.bringup.latency import LLM_STATUS_NAME, LLM_TTFT_KEY

    probe, node, memory, replies, pubs = fresh
    diagnostics = probe.collect(DiagnosticArray, topics.DIAGNOSTICS)
    probe.wait_for_publishers(topics.DIAGNOSTICS)
    llm.script(fake.judge_finish("It is a fine day.", pieces=3))
    pubs[topics.SPEECH_FINAL].publish(transcript("how is the day"))
    first = replies.wait_for(lambda msgs: next((m for m in msgs if m.is_first), None), what="the first sentence")
    status = diagnostics.wait_for_match(lambda a: a.status and a.status[0].name == LLM_STATUS_NAME).status[0]
    values = {kv.key: kv.value for kv in status.values}
    assert values["conversation_id"] == first.conversation_id
    assert 0.0 < float(values[LLM_TTFT_KEY]) < 5000.0
    # /diagnostics is global: ids and timings only, never what was said
    shown = [status.name, status.message, status.hardware_id, *(f"{kv.key}={kv.value}" for kv in status.values)]
    assert not [s for s in shown for words in ("how is the day", "fine day") if words in s.lower()], shown


def test_text_input_with_memory_services_owner_from_session(fresh, llm):
    probe, node, memory, replies, pubs = fresh
    # the dialogue node must have discovered the memory services before the turn
    wait_until(lambda: any(name.endswith("memory/recall") for name, _t in
                           probe.node.get_client_names_and_types_by_node("dialogue", "/fay")),
               message="the dialogue node's memory/recall client")
    llm.script(fake.judge_tool("remember"),
               fake.tool_call("memory_remember", json.dumps({"content": "Alice's favourite colour is green",
                                                             "owner": "mallory", "user_asked": True})),
               fake.loop_finish(), fake.text("Got it, green it is."))
    pubs[topics.TEXT_INPUT].publish(transcript("Remember that my favourite colour is green."))
    replies.wait_for(reply_done, what="the end of the reply")
    assert [m.source for m in replies.messages] == ["filler", "llm"]
    assert replies.messages[-1].text == "Got it, green it is."
    # the model's memory_remember call, then (after the reply) the user's own statement as a keyed fact
    wait_until(lambda: len(memory.stored) >= 2, message="the self-fact write after the reply")
    with memory.lock:
        assert [(r.owner, r.content, r.user_confirmed) for r in memory.stored] == [
            ("alice", "Alice's favourite colour is green", True), ("alice", "User's favorite colour is green.", True)]
        assert memory.stored[0].node_type == "observation" and "kind:fact" in memory.stored[0].tags
        assert memory.stored[1].key == "favorite:colour" and set(memory.stored[1].tags) == {"kind:preference",
                                                                                           "source:user"}
        assert memory.recalls and all(r.owner == "alice" and not r.include_candidates for r in memory.recalls)
    judge_prompt = llm.requests[0]["messages"][0]["content"]
    assert "Mochi" in judge_prompt, "confirmed memories from memory/recall feed the prompt"
    assert "pollen" not in json.dumps(llm.requests), "candidates never reach a prompt"


def test_interrupt_topic_cancels_the_stream(fresh, llm):
    probe, node, memory, replies, pubs = fresh
    [stream] = llm.script(fake.text('{"action": "finish", "message": "Once upon a time. ', 'There was a fox."}',
                                    gate_after=1))
    pubs[topics.TEXT_INPUT].publish(transcript("tell me a story"))
    replies.wait_for_count(1)
    pubs[topics.INTERRUPT].publish(Empty())
    end = replies.wait_for(reply_done, what="the closing marker")
    assert end.text == "" and end.seq == 1
    assert stream.closed.wait(10), "the LLM stream was not closed by the interrupt"
    assert not stream.finished.is_set()
    assert [m.text for m in replies.messages] == ["Once upon a time.", ""]
    # the next reply cuts off whatever is still being spoken
    replies.clear()
    llm.script(fake.judge_finish("Okay."))
    pubs[topics.TEXT_INPUT].publish(transcript("never mind"))
    first = replies.wait_for_match(lambda m: m.text == "Okay.")
    assert first.replace and first.is_first and first.is_end


def test_llm_outage_is_a_spoken_apology_and_the_node_lives_on(fresh, llm):
    probe, node, memory, replies, pubs = fresh
    llm.script(fake.status(502, "bad gateway"))
    pubs[topics.SPEECH_FINAL].publish(transcript("how are you"))
    msg = replies.wait_for(reply_done)
    assert msg.source == "fallback" and msg.is_first and msg.text == Persona().line("apology", "en")
    # The engine logs the failure before it speaks the apology.
    assert "LLM failed" in node.output() and "HTTP 502" in node.output()
    replies.clear()
    llm.script(fake.judge_finish("I'm fine, thanks."))
    pubs[topics.SPEECH_FINAL].publish(transcript("how are you now"))
    assert replies.wait_for(reply_done).text == "I'm fine, thanks."
    assert node.alive()


def test_endpoint_credentials_never_reach_the_log(launch_node):
    port = free_port()  # nothing listens there: every turn fails, and says why
    key, secrets = "sk-dialogue-node-4f1e2d", ("pw-91d0", "sk-query-3b7c", "api_key=")
    probe = RosProbe("credentials_probe", namespace="/cred")
    node = launch_node(NODE, {"base_url": f"http://fay:pw-91d0@127.0.0.1:{port}/v1?api_key=sk-query-3b7c",
                              "model": "m", "api_key_env": "FAY_TEST_DIALOGUE_KEY", "memory": False},
                       namespace="/cred", env={"FAY_TEST_DIALOGUE_KEY": key})
    try:
        replies = probe.collect(Utterance, topics.REPLY)
        pub = probe.publisher(Transcript, topics.TEXT_INPUT)
        probe.wait_for_subscribers(pub, timeout=40)
        probe.wait_for_publishers(topics.REPLY)
        pub.publish(transcript("hello"))
        assert replies.wait_for(reply_done).source == "fallback"
        assert "LLM failed" in node.output()  # logged before the apology is spoken
    finally:
        probe.close()
    output = node.output()
    assert f"at http://127.0.0.1:{port}/v1" in output and f"cannot reach http://127.0.0.1:{port}/v1" in output
    assert not [s for s in (key, *secrets) if s in output], output


def test_missing_api_key_stops_the_node_with_the_reason(launch_node):
    proc = launch_node(NODE, {"base_url": "https://llm.invalid/v1", "api_key_env": "FAY_TEST_UNSET_KEY"},
                       env={"FAY_TEST_UNSET_KEY": ""})
    assert proc.wait_exit(30) == 2
    assert "FAY_TEST_UNSET_KEY is not set" in proc.output()


def test_malformed_qa_table_stops_the_node_naming_file_and_line(launch_node, tmp_path):
    table = tmp_path / "qa.csv"
    table.write_text("问题,答案,脚本\n你好,你好呀,\n只有问题\n", encoding="utf-8")
    proc = launch_node(NODE, {"qa_file": str(table)})
    assert proc.wait_exit(30) == 2
    assert f"{table}:3" in proc.output()
