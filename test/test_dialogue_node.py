"""The dialogue node as a real process: Transcripts in, streamed Utterances out, over DDS.

The LLM is a scripted OpenAI-compatible server on loopback in the test process; the memory
services are a tiny real service server (a dict) on the test's probe node.
"""

from __future__ import annotations

import itertools
import json
import threading

import pytest
from action_msgs.msg import GoalStatus
from diagnostic_msgs.msg import DiagnosticStatus
from std_msgs.msg import Empty, String

import dialogue_fake_llm as fake
from fay_msgs.action import Chat
from fay_msgs.msg import ActionCue, MemoryNode, Transcript, Utterance
from fay_msgs.srv import GetActiveRules, Recall, Remember
from fay_ros.common import topics
from fay_ros.common.diagnostics import status_name
from fay_ros.dialogue.persona import Persona
from harness import DEFAULT_TIMEOUT, Collector, NodeProcess, RosProbe, free_port, publish_until, wait_until

NODE = "fay_ros.nodes.dialogue"


class DictMemoryService:
    """memory/recall, memory/remember and memory/active_rules over a dict, on the probe node."""

    def __init__(self, probe: RosProbe) -> None:
        self.lock = threading.Lock()
        self.stored: list[Remember.Request] = []
        self.recalls: list[Recall.Request] = []
        self.facts = {
            "alice": [
                ("m1", "Alice's cat is called Mochi.", "confirmed"),
                ("m2", "Alice may be allergic to pollen.", "candidate"),
            ]
        }
        probe.node.create_service(Recall, topics.SRV_RECALL, self._recall)
        probe.node.create_service(Remember, topics.SRV_REMEMBER, self._remember)
        probe.node.create_service(GetActiveRules, topics.SRV_ACTIVE_RULES, self._rules)

    def _recall(self, request, response):
        with self.lock:
            self.recalls.append(request)
        response.success = True
        response.nodes = [
            MemoryNode(id=i, owner=request.owner, content=c, status=s)
            for i, c, s in self.facts.get(request.owner, [])
            if s == "confirmed" or request.include_candidates
        ]
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
    node = NodeProcess(
        NODE, {"base_url": llm.base_url, "model": "scripted", "first_token_timeout": 5.0, "memory_timeout": 2.0}
    )
    try:
        node.wait_ready(probe=probe)
        replies = probe.collect(Utterance, topics.REPLY)
        pubs = {name: probe.publisher(Transcript, name) for name in (topics.SPEECH_FINAL, topics.TEXT_INPUT)}
        pubs[topics.INTERRUPT] = probe.publisher(Empty, topics.INTERRUPT)
        for pub in pubs.values():
            probe.wait_for_subscribers(pub)
        probe.wait_matched(replies, "dialogue")  # the node's first reply must reach the collector
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
    pubs[topics.SPEECH_FINAL].publish(transcript("what a lovely morning"))
    replies.wait_for(reply_done, what="the end of the reply")
    msgs = list(replies.messages)
    assert [m.text for m in msgs] == ["Hello Alice!", "The weather is lovely today.", "Shall we go out?"]
    assert [m.seq for m in msgs] == [0, 1, 2]
    assert [m.is_first for m in msgs] == [True, False, False] and [m.is_end for m in msgs] == [False, False, True]
    assert len({m.conversation_id for m in msgs}) == 1 and msgs[0].conversation_id
    assert all(m.user_id == "alice" and m.source == "llm" and m.header.stamp.sec > 0 for m in msgs)
    assert llm.requests[0]["messages"][-1]["content"] == "what a lovely morning"


def test_diagnostics_name_the_memory_services_the_dialogue_cannot_call(fresh):
    """The probe offers recall, remember and active_rules only: the dialogue's `memory` health
    warns and names the three it cannot reach (so an operator sees why the profile is missing)."""
    probe, node, memory, replies, pubs = fresh
    status = probe.wait_status("fay/dialogue: memory", lambda s: s.level == DiagnosticStatus.WARN)
    missing = {kv.key: kv.value for kv in status.values}["missing"]
    assert {name.rsplit("/", 1)[-1] for name in missing.split(", ")} == {"forget", "profile", "search_evidence"}
    assert "not reachable" in status.message


def test_reply_reports_llm_time_to_first_token_as_a_typed_message(fresh, llm):
    from fay_msgs.msg import LlmLatency
    from fay_ros.common.rostime import from_time_msg

    probe, node, memory, replies, pubs = fresh
    latency = probe.collect(LlmLatency, topics.LLM_LATENCY)
    probe.wait_matched(latency, "dialogue")
    llm.script(fake.judge_finish("It is a fine day.", pieces=3))
    asked = probe.node.get_clock().now().nanoseconds * 1e-9
    pubs[topics.SPEECH_FINAL].publish(transcript("how is the day"))
    first = replies.wait_for(lambda msgs: next((m for m in msgs if m.is_first), None), what="the first sentence")
    msg = latency.wait_for_match(lambda m: m.conversation_id == first.conversation_id)
    assert 0.0 < msg.time_to_first_token < 5.0 and msg.context_seconds >= 0.0
    # stamped when the first token came: after the turn was asked, before its first sentence went out
    token_at = from_time_msg(msg.header.stamp)
    assert asked < token_at <= from_time_msg(first.header.stamp)


def test_speech_speculative_starts_the_model_and_the_matching_final_is_answered_from_it(fresh, llm):
    from fay_msgs.msg import LlmLatency

    probe, node, memory, replies, pubs = fresh
    speculative = probe.publisher(Transcript, topics.SPEECH_SPECULATIVE)
    probe.wait_for_subscribers(speculative)
    latency = probe.collect(LlmLatency, topics.LLM_LATENCY)
    probe.wait_matched(latency, "dialogue")
    [early] = llm.script(fake.judge_finish("It opens at nine. See you there!", pieces=4, gate_after=1))
    guess = transcript("when does the bakery open?")
    guess.is_final = False
    speculative.publish(guess)
    assert early.started.wait(DEFAULT_TIMEOUT), "the model was not started on speech/speculative"
    assert replies.messages == [], "a speculation said something before its final"
    pubs[topics.SPEECH_FINAL].publish(transcript("when does the bakery open?"))
    early.gate.set()
    done = replies.wait_for(reply_done, what="the end of the reply")
    assert [m.text for m in replies.messages] == ["It opens at nine.", "See you there!"]
    assert len(llm.requests) == 1, "the final's turn asked the model again"
    msg = latency.wait_for_match(lambda m: m.conversation_id == done.conversation_id)
    # counted from the speculative request: the gate opened only after the final was published
    assert msg.time_to_first_token > 0.0 and msg.context_seconds >= 0.0

    # turned off (a live parameter): speech/speculative is ignored
    assert all(r.successful for r in probe.set_parameters("dialogue", speculative_reply=False))
    try:
        replies.clear()
        llm.script(fake.judge_finish("Fine."), fake.judge_finish("Tea time."))
        speculative.publish(guess)
        pubs[topics.SPEECH_FINAL].publish(transcript("is it tea time?"))
        replies.wait_for(reply_done, what="the end of the second reply")
        assert [r["messages"][-1]["content"] for r in llm.requests[1:]] == ["is it tea time?"]
    finally:
        probe.set_parameters("dialogue", speculative_reply=True)


def test_text_input_with_memory_services_owner_from_session(fresh, llm):
    probe, node, memory, replies, pubs = fresh
    # the dialogue node must have discovered the memory services before the turn
    wait_until(
        lambda: any(
            name.endswith("memory/recall")
            for name, _t in probe.node.get_client_names_and_types_by_node("dialogue", "/fay")
        ),
        message="the dialogue node's memory/recall client",
    )
    llm.script(
        fake.judge_tool("remember"),
        fake.tool_call(
            "memory_remember",
            json.dumps({"content": "Alice's favourite colour is green", "owner": "mallory", "user_asked": True}),
        ),
        fake.loop_finish(),
        fake.text("Got it, green it is."),
    )
    pubs[topics.TEXT_INPUT].publish(transcript("Remember that my favourite colour is green."))
    replies.wait_for(reply_done, what="the end of the reply")
    assert [m.source for m in replies.messages] == ["filler", "llm"]
    assert replies.messages[-1].text == "Got it, green it is."
    # the model's memory_remember call, then (after the reply) the user's own statement as a keyed fact
    wait_until(lambda: len(memory.stored) >= 2, message="the self-fact write after the reply")
    with memory.lock:
        assert [(r.owner, r.content, r.user_confirmed) for r in memory.stored] == [
            ("alice", "Alice's favourite colour is green", True),
            ("alice", "User's favorite colour is green.", True),
        ]
        assert memory.stored[0].node_type == "observation" and "kind:fact" in memory.stored[0].tags
        assert memory.stored[1].key == "favorite:colour" and set(memory.stored[1].tags) == {
            "kind:preference",
            "source:user",
        }
        assert memory.recalls and all(r.owner == "alice" and not r.include_candidates for r in memory.recalls)
    judge_prompt = llm.requests[0]["messages"][0]["content"]
    assert "Mochi" in judge_prompt, "confirmed memories from memory/recall feed the prompt"
    assert "pollen" not in json.dumps(llm.requests), "candidates never reach a prompt"


def test_interrupt_topic_cancels_the_stream(fresh, llm):
    probe, node, memory, replies, pubs = fresh
    [stream] = llm.script(
        fake.text('{"action": "finish", "message": "Once upon a time. ', 'There was a fox."}', gate_after=1)
    )
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
    node = launch_node(
        NODE,
        {
            "base_url": f"http://fay:pw-91d0@127.0.0.1:{port}/v1?api_key=sk-query-3b7c",
            "model": "m",
            "api_key_env": "FAY_TEST_DIALOGUE_KEY",
            "memory": False,
        },
        namespace="/cred",
        env={"FAY_TEST_DIALOGUE_KEY": key},
    )
    try:
        replies = probe.collect(Utterance, topics.REPLY)
        pub = probe.publisher(Transcript, topics.TEXT_INPUT)
        probe.wait_for_subscribers(pub, timeout=40)
        probe.wait_for_publishers(topics.REPLY)
        # again until a reply comes: under load the node's reply publisher may not have
        # matched this probe yet when the first apology goes out
        publish_until(pub, transcript("hello"), lambda: reply_done(replies.messages), timeout=40)
        assert reply_done(replies.messages).source == "fallback"
        assert "LLM failed" in node.output()  # logged before the apology is spoken
    finally:
        probe.close()
    output = node.output()
    assert f"at http://127.0.0.1:{port}/v1" in output and f"cannot reach http://127.0.0.1:{port}/v1" in output
    assert not [s for s in (key, *secrets) if s in output], output


def test_missing_api_key_stops_the_node_with_the_reason(launch_node):
    proc = launch_node(
        NODE,
        {"base_url": "https://llm.invalid/v1", "api_key_env": "FAY_TEST_UNSET_KEY"},
        env={"FAY_TEST_UNSET_KEY": ""},
    )
    assert proc.wait_exit(30) == 2
    assert "FAY_TEST_UNSET_KEY is not set" in proc.output()


def test_malformed_qa_table_stops_the_node_naming_file_and_line(launch_node, tmp_path):
    table = tmp_path / "qa.csv"
    table.write_text("问题,答案,脚本\n你好,你好呀,\n只有问题\n", encoding="utf-8")
    proc = launch_node(NODE, {"qa_file": str(table)})
    assert proc.wait_exit(30) == 2
    assert f"{table}:3" in proc.output()


def test_persona_and_qa_edits_are_used_from_the_next_turn_and_a_bad_edit_is_refused(launch_node, llm, tmp_path):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from rclpy.qos import QoSProfile

    from fay_ros.common.paths import config_file

    persona = tmp_path / "persona.yaml"
    persona.write_text(config_file("persona.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    table = tmp_path / "qa.csv"
    table.write_text("问题,答案,脚本\n你好,你好呀,\n", encoding="utf-8")
    probe = RosProbe("reload_probe", namespace="/reload")
    launch_node(
        NODE,
        {
            "base_url": llm.base_url,
            "model": "scripted",
            "memory": False,
            "persona_file": str(persona),
            "qa_file": str(table),
        },
        namespace="/reload",
    ).wait_ready(probe=probe)
    try:
        llm.reset()
        files = probe.collect(DiagnosticArray, "/diagnostics", QoSProfile(depth=100))
        replies = probe.collect(Utterance, topics.REPLY)
        pub = probe.publisher(Transcript, topics.TEXT_INPUT)
        probe.wait_for_subscribers(pub)
        probe.wait_for_publishers(topics.REPLY)

        files_status = status_name("dialogue", "files", "/reload")

        def reported(path, level: int, what: str) -> str:
            array = files.wait_for_match(
                lambda a: any(
                    s.name == files_status
                    and s.level == level
                    and s.message.startswith(str(path))
                    and s.message not in seen
                    for s in a.status
                ),
                what=what,
            )
            message = next(s.message for s in array.status if s.name == files_status)
            seen.add(message)
            return message

        def answer(text: str) -> list[Utterance]:
            replies.clear()
            pub.publish(transcript(text))
            end = replies.wait_for(reply_done, what=f"the reply to {text!r}")
            return [m for m in replies.messages if m.conversation_id == end.conversation_id]

        seen: set[str] = set()
        table.write_text(
            '问题,答案,脚本\n你好,你好呀,\nWhat is your favourite colour?,"Green, like leaves.",\n', encoding="utf-8"
        )
        assert "reloaded" in reported(table, DiagnosticStatus.OK, "the qa.csv reload")
        said = answer("What is your favourite colour?")
        assert [(m.text, m.source) for m in said] == [("Green, like leaves.", "qa")] and not llm.requests

        persona.write_text(
            persona.read_text(encoding="utf-8")
            .replace("You are Fay,", "You are Nova,")
            .replace("name: Fay", "name: Nova"),
            encoding="utf-8",
        )
        reported(persona, DiagnosticStatus.OK, "the persona reload")
        llm.script(fake.judge_finish("I am Nova."))
        assert [m.text for m in answer("who are you")] == ["I am Nova."]
        assert "You are Nova," in llm.requests[-1]["messages"][0]["content"]

        # a bad edit: refused with file and line; the last good table answers on
        table.write_text("问题,答案,脚本\n你好,你好呀,\n只有问题\n", encoding="utf-8")
        refused = reported(table, DiagnosticStatus.ERROR, "the refused qa.csv edit")
        assert f"{table}:3" in refused and "NOT reloaded" in refused
        assert [m.text for m in answer("What is your favourite colour?")] == ["Green, like leaves."]
        # a persona the engine refuses (a prestart tool that does not exist) keeps the last good one
        persona.write_text(
            persona.read_text(encoding="utf-8").replace("prestart: []", "prestart:\n  - tool: no_such_tool"),
            encoding="utf-8",
        )
        refused = reported(persona, DiagnosticStatus.ERROR, "the refused persona")
        assert "no_such_tool" in refused and "NOT reloaded" in refused
        llm.script(fake.judge_finish("Still Nova."))
        assert [m.text for m in answer("and now?")] == ["Still Nova."]
        assert "You are Nova," in llm.requests[-1]["messages"][0]["content"]
    finally:
        probe.close()


# -- the chat action ------------------------------------------------------------------------


def wait_future(future, what: str, timeout: float = DEFAULT_TIMEOUT):
    """The result of an rclpy future completed by the probe's executor thread."""
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    if not done.wait(timeout):
        raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
    return future.result()


class ChatGoal:
    """One goal of the dialogue's `chat` action sent from the probe: its feedback and result."""

    def __init__(self, client, text: str, user: str = "alice", language: str = "en") -> None:
        self.feedback = Collector()
        sent = client.send_goal_async(
            Chat.Goal(text=text, user_id=user, language=language),
            feedback_callback=lambda msg: self.feedback._on_message(msg.feedback),
        )
        self.handle = wait_future(sent, "the goal response")
        assert self.handle.accepted
        self._result = self.handle.get_result_async()

    def result(self):
        """(status, result). Feedback and result travel separately: wait for the feedback itself."""
        response = wait_future(self._result, "the chat result")
        return response.status, response.result

    def cancel(self):
        return wait_future(self.handle.cancel_goal_async(), "the cancel response")


@pytest.fixture(scope="module")
def chat(rig):
    from fay_ros.ros_side.ros_tools import ThreadSafeActionClient

    probe = rig[0]
    client = ThreadSafeActionClient(probe.node, Chat, topics.ACTION_CHAT)
    assert client.wait_for_server(timeout_sec=DEFAULT_TIMEOUT), "the dialogue's chat action server"
    yield client
    client.destroy()


def test_chat_action_holds_a_turn_feedback_per_sentence_and_the_whole_reply(fresh, llm, chat):
    probe, node, memory, replies, pubs = fresh
    llm.script(fake.judge_finish("Hello Alice! The weather is lovely today. Shall we go out?", pieces=6))
    goal = ChatGoal(chat, "what a lovely morning")
    status, result = goal.result()
    assert status == GoalStatus.STATUS_SUCCEEDED
    assert (result.completed, result.reason) == (True, "completed")
    assert result.reply == "Hello Alice! The weather is lovely today. Shall we go out?"
    goal.feedback.wait_for_count(3)
    assert [(f.seq, f.sentence) for f in goal.feedback.messages] == [
        (0, "Hello Alice!"),
        (1, "The weather is lovely today."),
        (2, "Shall we go out?"),
    ]
    # the same turn as a text_input message's: on `reply`, the user's words in the prompt
    end = replies.wait_for(reply_done, what="the end of the reply")
    assert end.conversation_id == result.conversation_id and end.user_id == "alice"
    assert llm.requests[0]["messages"][-1]["content"] == "what a lovely morning"
    assert "Mochi" in llm.requests[0]["messages"][0]["content"], "alice's memories feed the prompt"
    assert list(result.cues) == [], "no action_semantics running: no cues"


def test_chat_action_result_carries_the_cues_of_action_semantics(fresh, llm, chat, launch_node):
    probe, node, memory, replies, pubs = fresh
    launch_node("fay_ros.nodes.action_semantics").wait_ready(probe=probe)
    cues = probe.collect(ActionCue, topics.ACTION_CUE)
    probe.wait_matched(cues, "action_semantics")

    attempts = []

    def turn_with_cues():
        # The graph shows action_semantics before the dialogue and it have matched each other's
        # endpoints (nothing outside the two processes can see that): a goal whose sentences
        # reached action_semantics and whose cues came back in the grace is the event waited for.
        attempts.append(len(attempts) + 1)
        answer = "Welcome back! Please come in."
        llm.reset()
        llm.script(fake.judge_finish(answer, pieces=4))
        # a new user each time: the reply guard would drop a repeat of what this user just heard
        status, result = ChatGoal(chat, "I'm home", user=f"visitor{len(attempts)}").result()
        assert status == GoalStatus.STATUS_SUCCEEDED and result.reply == answer
        return result if len(result.cues) == 2 else None

    result = wait_until(turn_with_cues, message="a chat result with the cues of its two sentences")
    assert [c.utterance_id for c in result.cues] == [f"{result.conversation_id}:0", f"{result.conversation_id}:1"]
    assert [c.text for c in result.cues] == ["Welcome back!", "Please come in."]

    def this_turns(msgs):
        found = [c for c in msgs if c.utterance_id.startswith(f"{result.conversation_id}:")]
        return found if len(found) == 2 else None

    published = cues.wait_for(this_turns, what="the cues of this turn on action_cue")
    assert [(c.utterance_id, c.code, c.behavior) for c in published] == [
        (c.utterance_id, c.code, c.behavior) for c in result.cues
    ], "the cues as action_semantics published them"


def reply_end_of(conversation_id: str):
    """The closing piece of this reply (a late end of an earlier test's reply is not it)."""
    return lambda msgs: next((m for m in msgs if m.is_end and m.conversation_id == conversation_id), None)


def test_chat_action_cancel_stops_the_turn_and_its_voice(fresh, llm, chat):
    probe, node, memory, replies, pubs = fresh
    cancels = probe.collect(String, topics.REPLY_CANCEL)
    probe.wait_matched(cancels, "dialogue")
    [stream] = llm.script(
        fake.text('{"action": "finish", "message": "Once upon a time. ', 'There was a fox."}', gate_after=1)
    )
    goal = ChatGoal(chat, "tell me a story")
    goal.feedback.wait_for_count(1)
    assert goal.cancel().goals_canceling, "the cancel is accepted"
    status, result = goal.result()
    assert status == GoalStatus.STATUS_CANCELED
    assert (result.completed, result.reason, result.reply) == (False, "cancelled", "Once upon a time.")
    # the voice of this reply stops (the tts drops it), not the robot's whole voice
    assert [m.data for m in cancels.wait_for_count(1)] == [result.conversation_id]
    assert stream.closed.wait(10) and not stream.finished.is_set(), "the LLM stream was closed"
    end = replies.wait_for(reply_end_of(result.conversation_id), what="the closing marker of the cut reply")
    assert end.text == "" and end.seq == 1


def test_cancelling_one_users_chat_goal_leaves_another_users_turn_running(fresh, llm, chat):
    """Two people talk to the robot at once: carol's client cancels her goal; dave's turn,
    streaming at the same moment, is neither cut nor replaced and ends with its whole reply."""
    probe, node, memory, replies, pubs = fresh
    cancels = probe.collect(String, topics.REPLY_CANCEL)
    probe.wait_matched(cancels, "dialogue")
    streams = {
        "tell me a story": fake.text(
            '{"action": "finish", "message": "Once upon a time. ', 'There was a fox."}', gate_after=1
        ),
        "tell me about foxes": fake.text(
            '{"action": "finish", "message": "Foxes are clever. ', 'They live in dens."}', gate_after=1
        ),
    }
    # each request answered by its words: the two turns reach the model in either order
    llm.responder = lambda body: streams[body["messages"][-1]["content"]]
    carol = ChatGoal(chat, "tell me a story", user="carol")
    dave = ChatGoal(chat, "tell me about foxes", user="dave")
    carol.feedback.wait_for_count(1)
    dave.feedback.wait_for_count(1)  # both turns are streaming, both held at their gate
    assert carol.cancel().goals_canceling
    status, cancelled = carol.result()
    assert (status, cancelled.reason) == (GoalStatus.STATUS_CANCELED, "cancelled")
    assert [m.data for m in cancels.wait_for_count(1)] == [cancelled.conversation_id]
    assert streams["tell me a story"].closed.wait(10), "carol's stream was closed"
    streams["tell me about foxes"].gate.set()  # dave's model goes on only now, after the cancel
    status, result = dave.result()
    assert status == GoalStatus.STATUS_SUCCEEDED
    assert (result.completed, result.reason) == (True, "completed")
    assert result.reply == "Foxes are clever. They live in dens."
    assert [(f.seq, f.sentence) for f in dave.feedback.wait_for_count(2)] == [
        (0, "Foxes are clever."),
        (1, "They live in dens."),
    ]
    assert streams["tell me about foxes"].finished.is_set() and not streams["tell me about foxes"].closed.is_set()
    # on `reply`: dave's reply whole, replacing nothing; only carol's was asked to stop
    replies.wait_for(reply_end_of(result.conversation_id), what="the end of dave's reply")
    daves = [m for m in replies.messages if m.conversation_id == result.conversation_id]
    assert [m.text for m in daves if m.text] == ["Foxes are clever.", "They live in dens."]
    assert not any(m.replace for m in daves)
    assert [m.data for m in cancels.messages] == [cancelled.conversation_id]


def test_chat_action_ends_interrupted_by_an_interrupt_message(fresh, llm, chat):
    probe, node, memory, replies, pubs = fresh
    llm.script(fake.text('{"action": "finish", "message": "Let me think. ', 'Maybe."}', gate_after=1))
    goal = ChatGoal(chat, "what is the answer", user="bob")
    goal.feedback.wait_for_count(1)
    pubs[topics.INTERRUPT].publish(Empty())
    status, result = goal.result()
    assert status == GoalStatus.STATUS_ABORTED
    assert (result.completed, result.reason, result.reply) == (False, "interrupted", "Let me think.")


def test_chat_action_llm_outage_returns_the_spoken_apology(fresh, llm, chat):
    probe, node, memory, replies, pubs = fresh
    llm.script(fake.status(502, "bad gateway"))
    status, result = ChatGoal(chat, "how are you").result()
    assert status == GoalStatus.STATUS_ABORTED
    assert result.reply == Persona().line("apology", "en") and result.completed
    assert result.reason.startswith("failed: ") and "502" in result.reason
    end = replies.wait_for(reply_done)
    assert end.source == "fallback" and end.conversation_id == result.conversation_id


def test_words_said_by_the_tts_node_are_the_companions_in_the_next_prompt(fresh, llm):
    """`reply` with source "say" (the tts node's say action / broadcast topic) is recorded in
    that user's history as what the companion said."""
    probe, node, memory, replies, pubs = fresh
    said = probe.publisher(Utterance, topics.REPLY)
    wait_until(
        lambda: (
            said.get_subscription_count() >= 2
            and any(  # the probe's collector and the dialogue
                s.node_name == "dialogue"
                for s in probe.node.get_subscriptions_info_by_topic(probe.resolve(topics.REPLY))
            )
        ),
        message="the dialogue's reply subscription",
    )
    for seq, text in enumerate(["Time for your medicine.", ""]):
        said.publish(
            Utterance(
                user_id="carol",
                conversation_id="say-7",
                seq=seq,
                text=text,
                is_first=seq == 0,
                is_end=bool(seq),
                source="say",
            )
        )
    replies.wait_for(lambda msgs: any(m.source == "say" and m.is_end for m in msgs), what="the say reply")
    answers = itertools.cycle(
        ["Yes, the blue pill.", "The small white one.", "Take the round tablet now.", "Ask your doctor first."]
    )

    def prompt_with_it():
        # `reply` and `text_input` are separate topics with no order between them: the event
        # waited for is a turn of carol's whose prompt has the recorded words
        llm.reset()
        llm.script(fake.judge_finish(next(answers)))
        replies.clear()
        pubs[topics.TEXT_INPUT].publish(transcript("which one?", user="carol"))
        replies.wait_for(lambda msgs: any(m.user_id == "carol" and m.is_end for m in msgs), what="carol's reply")
        messages = llm.requests[0]["messages"]
        return messages if {"role": "assistant", "content": "Time for your medicine."} in messages else None

    messages = wait_until(prompt_with_it, message="a prompt with the words the tts node said")
    assert not [m for m in messages if m["role"] == "user" and "medicine" in m["content"]], (
        "the companion's words are never the user's"
    )
