"""Issue 15 end to end: cancel_task, while a background task runs, stops a running ROS action goal.

Real processes: the robot stand-in (test/procs/robot_server.py, whose /fibonacci server holds a
goal of order >= HOLD after its first feedback until it is cancelled) and the dialogue node in
dual-model mode (background tasks on), with two scripted loopback LLMs: the small model judges
and routes, the big model runs the tool loop and calls the allow-listed action tool.

The user's "cancel that" is routed to cancel_task (by the scripted classifier, or by the keyword
rules when the classifier talks nonsense); the task is cancelled, the action tool cancels its
goal, the robot stand-in reports the goal canceled, task/progress says cancelled, the persona's
task_cancelled line is spoken, and no task result follows.
"""

from __future__ import annotations

import json

import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from std_msgs.msg import String

import dialogue_fake_llm as fake
from fay_msgs.msg import Transcript, Utterance
from fay_ros.common import topics
from fay_ros.common.paths import config_file
from fay_ros.dialogue.persona import Persona
from harness import NodeProcess, RosProbe, write_tools_file

ORDER = 1000  # >= robot_server.HOLD: the goal holds after its first feedback until cancelled
TOOL = "ros_action_fibonacci"
# Only the action is allow-listed. Its timeout and the node's tool_timeout are far beyond the
# test's waits: the goal can end only by the cancel (or by the stand-in's HOLD_LIMIT, 60 s).
ALLOW_LIST = """\
actions:
  - {name: /fibonacci, type: test_msgs/action/Fibonacci, description: Fibonacci numbers (slow)., timeout: 120,
     feedback_limit: 2}
"""
PERSONA = Persona.load(config_file("persona.yaml"))  # the node's persona (parameter persona_file unset)


def values(status: DiagnosticStatus) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


def route(intent: str, confidence: float = 0.9) -> fake.Scripted:
    return fake.text(json.dumps({"intent": intent, "confidence": confidence}))


class Rig:
    """The robot stand-in, both scripted models, the dialogue node and a probe seeing their topics."""

    def __init__(self, tmp_path) -> None:
        self.probe = RosProbe("agent_e2e_probe")
        self.small = fake.ScriptedLlm()
        self.big = fake.ScriptedLlm()
        self.robot: NodeProcess | None = None
        self.dialogue: NodeProcess | None = None
        self.tmp_path = tmp_path

    def start(self) -> None:
        tools_file = write_tools_file(self.tmp_path / "tools.yaml", ros=ALLOW_LIST)
        self.robot = NodeProcess("procs.robot_server")
        self.robot.wait_ready(probe=self.probe)
        self.events = self.probe.collect(String, "/robot/events")
        self.probe.wait_for_publishers("/robot/events")
        self.dialogue = NodeProcess(
            "fay_ros.nodes.dialogue",
            {
                "base_url": self.small.base_url,
                "model": "small-scripted",
                "big_base_url": self.big.base_url,
                "big_model": "big-scripted",
                "background_tasks": "dual",
                "model_profile": "capable",
                "memory": False,
                "qa_file": "none",
                "first_token_timeout": 10.0,
                "tool_timeout": 120.0,
                "tools_file": str(tools_file),
            },
        )
        self.dialogue.wait_ready(probe=self.probe)
        self.replies = self.probe.collect(Utterance, topics.REPLY)
        self.progress = self.probe.collect(DiagnosticStatus, topics.TASK_PROGRESS)
        self.text_input = self.probe.publisher(Transcript, topics.TEXT_INPUT)
        self.probe.wait_for_subscribers(self.text_input)
        self.probe.wait_for_publishers(topics.REPLY)
        self.probe.wait_for_publishers(topics.TASK_PROGRESS)

    def reset(self) -> None:
        for llm in (self.small, self.big):
            llm.reset()
        for collector in (self.events, self.replies, self.progress):
            collector.clear()

    def say(self, text: str) -> None:
        self.text_input.publish(Transcript(text=text, user_id="alice", language="en", is_final=True, confidence=1.0))

    def reply_of(self, source: str, what: str) -> list[Utterance]:
        """The pieces of the first complete reply stream with this source."""

        def complete(msgs: list[Utterance]) -> list[Utterance] | None:
            end = next((m for m in msgs if m.source == source and m.is_end), None)
            if end is None:
                return None
            return [m for m in msgs if m.conversation_id == end.conversation_id and m.source == source]

        return self.replies.wait_for(complete, what=what)

    def close(self) -> None:
        for proc in (self.dialogue, self.robot):
            if proc is not None:
                proc.stop()
        self.small.close()
        self.big.close()
        self.probe.close()

    def output(self) -> str:
        return "\n".join(f"----- {p.module} -----\n{p.output()[-3000:]}" for p in (self.dialogue, self.robot) if p)


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    built = Rig(tmp_path_factory.mktemp("agent_e2e"))
    try:
        built.start()
        yield built
    finally:
        print(f"\n{built.output()}")
        built.close()


def start_held_goal(rig: Rig) -> Utterance:
    """The small model's judge chooses tools; in the background the big model's tool loop calls the
    action tool, whose goal the stand-in holds. Returns the filler that ended the turn."""
    rig.small.script(fake.judge_tool("fibonacci"))
    [call] = rig.big.script(fake.tool_call(TOOL, json.dumps({"order": ORDER})))
    rig.say("Please compute a very long Fibonacci sequence.")
    [filler] = rig.reply_of("filler", "the filler that ends the turn")
    assert filler.is_first and filler.is_end
    # the goal runs at the stand-in, and the task reports that tool as running
    rig.events.wait_for_match(lambda m: m.data == f"goal {ORDER}", what=f"the stand-in executing goal {ORDER}")
    running = rig.progress.wait_for_match(
        lambda s: values(s)["state"] == "running" and values(s)["tool"] == TOOL, what="the task running the tool"
    )
    assert values(running)["user"] == "alice" and values(running)["conversation_id"] == filler.conversation_id
    assert call.started.is_set() and len(rig.big.requests) == 1, "one tool-loop step so far"
    assert rig.big.requests[0]["model"] == "big-scripted"
    assert TOOL in {t["function"]["name"] for t in rig.big.requests[0]["tools"]}
    return filler


def check_cancelled(rig: Rig, filler: Utterance, next_reply: str) -> None:
    """The spoken cancel line, the goal canceled at the stand-in, task/progress cancelled, and no
    task result afterwards."""
    [line] = [m for m in rig.reply_of("task_status", "the task_cancelled line") if m.text]
    assert line.text == PERSONA.line("task_cancelled", "en")
    # the stand-in saw the cancel and ended the goal canceled (never succeeded)
    rig.events.wait_for_match(lambda m: m.data == "goal canceled", what="the goal canceled at the stand-in")
    assert [m.data for m in rig.events.messages][:3] == [f"goal {ORDER}", "cancel requested", "goal canceled"]
    cancelled = rig.progress.wait_for_match(
        lambda s: values(s)["state"] == "cancelled", what="the cancelled report on task/progress"
    )
    assert cancelled.level == DiagnosticStatus.WARN and values(cancelled)["tool"] == TOOL
    assert values(cancelled)["conversation_id"] == filler.conversation_id
    assert values(cancelled)["step"] == "0", "the tool never finished"
    # No task result follows: a later turn of the same user is answered as usual (no task runs,
    # so it is not routed), and by the time its reply has ended nothing else was said.
    rig.small.script(fake.judge_finish(next_reply))
    rig.say("Thanks anyway.")
    [after] = [m for m in rig.reply_of("llm", "the reply to the next message") if m.text]
    assert after.text == next_reply
    assert not [m for m in rig.replies.messages if m.source in ("task", "fallback")], [
        (m.source, m.text) for m in rig.replies.messages
    ]
    assert len(rig.big.requests) == 1, "no tool-loop step after the cancel"
    assert not any(m.data == "goal succeeded" for m in rig.events.messages)


def test_cancel_task_by_the_classifier_cancels_the_running_action_goal(rig):
    rig.reset()
    filler = start_held_goal(rig)
    rig.small.script(route("cancel_task"))
    rig.say("cancel that")
    check_cancelled(rig, filler, "Sure, what else can I do?")
    router = rig.small.requests[1]  # judge, router, the next turn's judge
    assert router["response_format"]["json_schema"]["name"] == "task_route"
    assert router["messages"][-1]["content"] == "cancel that"
    assert len(rig.small.requests) == 3


def test_cancel_task_by_the_keyword_rules_when_the_classifier_talks_nonsense(rig):
    rig.reset()
    filler = start_held_goal(rig)
    rig.small.script(fake.text("banana"))  # no JSON, no intent: the keyword rules decide
    rig.say("cancel that")
    check_cancelled(rig, filler, "You are welcome, just ask again later.")  # the guard refuses repeats
    assert len(rig.small.requests) == 3
    assert rig.small.requests[1]["response_format"]["json_schema"]["name"] == "task_route"
    assert "routed to cancel_task by rules" in rig.dialogue.output()  # after the events that prove the route
