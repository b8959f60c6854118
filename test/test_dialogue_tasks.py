"""Background tasks (Fay's ExecutionManager) and five-way routing, against the scripted
loopback LLM: the engine with a slow tool that waits on an asyncio.Event the test controls,
and one run through the real dialogue node process."""

from __future__ import annotations

import asyncio
import json

import pytest

import dialogue_fake_llm as fake
from fay_ros.dialogue import routing
from fay_ros.dialogue.persona import Persona
from fay_ros.dialogue.tasks import CANCELLED, COMPLETED, RUNNING, TaskProgress
from test_dialogue_engine import WAIT, Rig, run

PERSONA = Persona()


@pytest.fixture
def fresh(llm):
    llm.reset()
    yield llm
    llm.reset()


def route(intent: str, confidence: float = 0.9) -> fake.Scripted:
    return fake.text(json.dumps({"intent": intent, "confidence": confidence}))


class TaskRig(Rig):
    """A Rig with background tasks on (single model unless `big` is given) and progress collected."""

    def __init__(self, llm, **kw) -> None:
        self.progress: list[TaskProgress] = []
        kw.setdefault("background_tasks", "always")
        super().__init__(llm, **kw)
        self.engine.tasks.on_progress = self._progress  # the engine's own TaskManager reports here

    def _progress(self, p: TaskProgress) -> None:
        self.progress.append(p)
        self.changed.set()

    async def start_slow_task(self, llm, user: str = "alice") -> None:
        """judge → tool; the first loop step calls the slow tool, which holds until tool_gate."""
        llm.script(fake.judge_tool("slow"), fake.tool_call("slow", "{}"))
        turn = self.engine.submit(user, "please do the slow lookup", "en")
        await turn  # the turn ends with the filler: the task runs on in the background
        await asyncio.wait_for(self.tool_started.wait(), WAIT)
        assert self.engine.tasks.running(user) is not None

    def stream(self, conversation_id: str, source: str) -> list:
        return [p for p in self.pieces if p.conversation_id == conversation_id and p.source == source]

    async def wait_source(self, source: str, what: str) -> list:
        return await self.wait_pieces(lambda ps: any(p.source == source and p.is_end for p in ps), what)


def said(rig) -> str:
    """The words of the latest reply (the conversation of the last piece)."""
    last = rig.pieces[-1].conversation_id
    return " ".join(p.text for p in rig.pieces if p.conversation_id == last and p.text)


def check_stream(pieces, first_seq: int) -> None:
    assert [p.seq for p in pieces] == list(range(first_seq, first_seq + len(pieces)))
    assert [p.is_first for p in pieces] == [True] + [False] * (len(pieces) - 1)
    assert [p.is_end for p in pieces] == [False] * (len(pieces) - 1) + [True]


# -- the task and its completion ---------------------------------------------------------------


def test_tool_task_runs_in_background_and_answers_as_a_new_stream_of_its_conversation(fresh):
    async def scenario():
        rig = TaskRig(fresh)
        await rig.start_slow_task(fresh)
        [filler] = rig.pieces
        assert filler.source == "filler" and filler.is_first and filler.is_end, "the turn ends with the filler"
        running = [p for p in rig.progress if p.state == RUNNING]
        assert running[0].step == 0 and running[0].tool == "" and running[-1].tool == "slow"
        assert {p.user_id for p in rig.progress} == {"alice"}
        assert {p.conversation_id for p in rig.progress} == {filler.conversation_id}
        fresh.script(fake.loop_finish(), fake.text("All finished now. It says hello."))
        rig.tool_gate.set()
        await rig.wait_source("task", "the task's result")
        result = rig.stream(filler.conversation_id, "task")
        check_stream(result, first_seq=1)
        assert " ".join(p.text for p in result).strip() == "All finished now. It says hello."
        assert result[0].replace is False
        assert "slow result" in fresh.requests[-1]["messages"][0]["content"], "tool results feed the final reply"
        await rig.engine.settle()
        assert rig.progress[-1].state == COMPLETED and rig.progress[-1].step == 1
        assert rig.engine.tasks.running("alice") is None
        assert rig.engine.history("alice")[-1] == {"role": "assistant", "content": "All finished now. It says hello."}
        await rig.close()

    run(scenario())


def test_interrupt_cuts_speech_but_not_the_running_task(fresh):
    async def scenario():
        rig = TaskRig(fresh)
        await rig.start_slow_task(fresh)
        rig.engine.interrupt()
        assert not rig.tool_cancelled.is_set() and rig.engine.tasks.running("alice") is not None
        fresh.script(fake.loop_finish(), fake.text("Done after all."))
        rig.tool_gate.set()
        await rig.wait_source("task", "the task's result after the interrupt")
        assert not rig.tool_cancelled.is_set()
        assert [p.text for p in rig.pieces if p.source == "task" and p.text] == ["Done after all."]
        await rig.close()

    run(scenario())


def test_interrupt_cuts_a_task_result_being_spoken(fresh):
    async def scenario():
        rig = TaskRig(fresh)
        await rig.start_slow_task(fresh)
        [final] = fresh.script(fake.loop_finish(), fake.text("First part. ", "Second part never comes.", gate_after=1))[
            1:
        ]
        rig.tool_gate.set()
        await rig.wait_pieces(lambda ps: any(p.source == "task" for p in ps), "the first sentence of the result")
        assert rig.engine.interrupt() == 1, "the result being spoken is a turn like any reply"
        await rig.wait_pieces(lambda ps: ps[-1].is_end and ps[-1].source == "task", "the closing marker")
        assert [p.text for p in rig.pieces if p.source == "task"] == ["First part.", ""]
        final.gate.set()
        await rig.close()

    run(scenario())


def test_a_second_task_is_refused_with_a_spoken_explanation(fresh):
    async def scenario():
        rig = TaskRig(fresh)
        await rig.start_slow_task(fresh)
        # normal_chat by the router, then the judge wants tools again: a second task
        fresh.script(route("normal_chat"), fake.judge_tool("weather"))
        await rig.engine.submit("alice", "what's the weather in Paris", "en")
        refusal = [p for p in rig.pieces if p.conversation_id == rig.pieces[-1].conversation_id]
        assert said(rig) == PERSONA.line("task_busy", "en") and {p.source for p in refusal} == {"task_status"}
        check_stream(refusal, first_seq=0)
        assert rig.engine.traces[-1].path == "task_busy"
        assert [r[0] for r in rig.tool_runs] == ["slow"], "nothing of the second task ran"
        # another user may have their own task at the same time
        fresh.script(
            fake.judge_tool("x"),
            fake.tool_call("lookup", '{"q": "bob"}'),
            fake.loop_finish(),
            fake.text("Bob's answer."),
        )
        await rig.engine.submit("bob", "look up bob", "en")
        await rig.wait_pieces(lambda ps: any(p.text == "Bob's answer." and p.source == "task" for p in ps), "bob")
        assert rig.engine.tasks.running("alice") is not None
        rig.tool_gate.set()
        fresh.script(fake.loop_finish(), fake.text("Alice's answer."))
        await rig.wait_pieces(lambda ps: any(p.text == "Alice's answer." for p in ps), "alice's result")
        await rig.close()

    run(scenario())


# -- five-way routing while the task runs --------------------------------------------------------


def test_query_progress_is_answered_from_the_task_state(fresh):
    async def scenario():
        rig = TaskRig(fresh)
        await rig.start_slow_task(fresh)
        fresh.script(route("query_progress"))
        await rig.engine.submit("alice", "how is it going?", "en")
        assert said(rig) == PERSONA.line("task_progress", "en").replace("{steps}", "0")
        assert rig.pieces[-1].source == "task_status"
        assert rig.engine.traces[-1].route == "query_progress by model"
        router = fresh.requests[-1]
        assert router["response_format"]["json_schema"]["name"] == "task_route"
        assert "please do the slow lookup" in router["messages"][0]["content"]
        assert not rig.tool_cancelled.is_set()
        rig.tool_gate.set()
        fresh.script(fake.loop_finish(), fake.text("All done."))
        await rig.wait_source("task", "the result")
        await rig.close()

    run(scenario())


def test_update_task_reaches_the_next_tool_loop_step(fresh):
    async def scenario():
        rig = TaskRig(fresh)
        await rig.start_slow_task(fresh)
        fresh.script(route("update_task"))
        await rig.engine.submit("alice", "also check the weekend", "en")
        assert said(rig) == PERSONA.line("task_updated", "en")
        assert rig.engine.tasks.running("alice").updates == ["also check the weekend"]
        fresh.script(fake.loop_finish(), fake.text("Checked, weekend included."))
        rig.tool_gate.set()
        await rig.wait_source("task", "the result")
        step2 = next(r for r in fresh.requests if r.get("tools") and any(m["role"] == "tool" for m in r["messages"]))
        user_turn = [m for m in step2["messages"] if m["role"] == "user"][-1]["content"]
        assert "(the user added while you worked: also check the weekend)" in user_turn
        step1 = next(r for r in fresh.requests if r.get("tools"))
        assert "also check the weekend" not in json.dumps(step1["messages"])
        await rig.close()

    run(scenario())


def test_cancel_task_cancels_the_tool_which_sees_cancelled_error(fresh):
    async def scenario():
        rig = TaskRig(fresh)
        await rig.start_slow_task(fresh)
        fresh.script(route("cancel_task"))
        await rig.engine.submit("alice", "forget about it", "en")
        assert said(rig) == PERSONA.line("task_cancelled", "en")
        await asyncio.wait_for(rig.tool_cancelled.wait(), WAIT)
        await rig.wait_pieces(lambda ps: rig.progress[-1].state == CANCELLED, "the cancelled report")
        await rig.engine.settle()
        assert rig.engine.tasks.running("alice") is None
        assert not [p for p in rig.pieces if p.source == "task"], "a cancelled task says nothing more"
        assert not any(r.get("tools") for r in fresh.requests[2:]), "no tool-loop step after the cancel"
        await rig.close()

    run(scenario())


def test_new_task_is_refused_while_one_runs(fresh):
    async def scenario():
        rig = TaskRig(fresh)
        await rig.start_slow_task(fresh)
        fresh.script(route("new_task"))
        await rig.engine.submit("alice", "book me a taxi", "en")
        assert said(rig) == PERSONA.line("task_busy", "en")
        assert rig.engine.traces[-1].path == "task:new_task"
        assert rig.engine.tasks.running("alice") is not None and not rig.tool_cancelled.is_set()
        rig.tool_gate.set()
        fresh.script(fake.loop_finish(), fake.text("Finished the first one."))
        await rig.wait_source("task", "the first task's result")
        await rig.close()

    run(scenario())


def test_normal_chat_gets_the_usual_reply_and_the_task_goes_on(fresh):
    async def scenario():
        rig = TaskRig(fresh)
        await rig.start_slow_task(fresh)
        fresh.script(route("normal_chat"), fake.judge_finish("I'm happy too!"))
        await rig.engine.submit("alice", "I'm so happy today", "en")
        assert said(rig) == "I'm happy too!" and rig.pieces[-1].source == "llm"
        assert rig.engine.traces[-1].route == "normal_chat by model" and rig.engine.traces[-1].path == "finish"
        assert rig.engine.tasks.running("alice") is not None
        rig.tool_gate.set()
        fresh.script(fake.loop_finish(), fake.text("Here is the result."))
        await rig.wait_source("task", "the result")
        await rig.close()

    run(scenario())


@pytest.mark.parametrize(
    "answer",
    [fake.text("banana"), fake.text('{"intent": "dance"}'), fake.status(500), route("normal_chat", 0.2)],
    ids=["garbage", "unknown-intent", "http500", "unsure"],
)
def test_rules_decide_when_the_classifier_fails_or_is_unsure(fresh, answer):
    async def scenario():
        rig = TaskRig(fresh)
        await rig.start_slow_task(fresh)
        fresh.script(answer)
        await rig.engine.submit("alice", "Stop that, please.", "en")
        assert rig.engine.traces[-1].route == "cancel_task by rules"
        await asyncio.wait_for(rig.tool_cancelled.wait(), WAIT)
        await rig.close()

    run(scenario())


def test_chinese_progress_question_by_the_rules():
    assert routing.decide("查到了吗？进度怎么样", "这不是JSON", 0.6) == routing.Route(
        routing.QUERY_PROGRESS, "rules", "这不是JSON"
    )


@pytest.mark.parametrize(
    "text,intent",
    [
        ("cancel that", routing.CANCEL_TASK),
        ("never mind", routing.CANCEL_TASK),
        ("算了，取消吧", routing.CANCEL_TASK),
        ("How's it going?", routing.QUERY_PROGRESS),
        ("are you done yet", routing.QUERY_PROGRESS),
        ("现在进度怎么样", routing.QUERY_PROGRESS),
        ("also check Berlin", routing.UPDATE_TASK),
        ("make it Paris instead", routing.UPDATE_TASK),
        ("改成明天的", routing.UPDATE_TASK),
        ("I have a new task for you", routing.NEW_TASK),
        ("另外帮我订个闹钟", routing.NEW_TASK),
        ("I love sunny days", None),
        ("你好呀", None),
        ("the addendum is long", None),
    ],
)
def test_keyword_rules(text, intent):
    assert routing.keyword_route(text) == intent


def test_model_answer_parsing():
    assert routing.parse_answer('```json\n{"intent": "Cancel_Task", "confidence": 0.8}\n```') == ("cancel_task", 0.8)
    assert routing.parse_answer('{"intent": "new_task"}') == ("new_task", 1.0)
    assert routing.parse_answer('{"intent": "new_task", "confidence": "high"}') == ("new_task", 0.0)
    assert routing.parse_answer("no json") == (None, 0.0)
    # a confident model wins over the rules; no model and no rule: normal chat
    assert routing.decide("stop that", '{"intent": "normal_chat", "confidence": 0.9}', 0.6).intent == "normal_chat"
    assert routing.decide("lovely weather", None, 0.6) == routing.Route("normal_chat", "default", "")


# -- dual-model mode ---------------------------------------------------------------------------


def test_dual_model_big_model_runs_the_task_and_never_speaks(fresh):
    big = fake.ScriptedLlm()
    try:

        async def scenario():
            rig = TaskRig(fresh, big=big, background_tasks="dual")
            fresh.script(fake.judge_tool("shop"), fake.text("The shop opens at nine."))
            big.script(fake.tool_call("lookup", '{"q": "shop"}'), fake.loop_finish("BIG MODEL SUMMARY"))
            await rig.engine.submit("alice", "when does the shop open", "en")
            await rig.wait_source("task", "the result")
            assert all(r["model"] == "big-model" for r in big.requests) and len(big.requests) == 2
            assert all(r["model"] == "small-model" for r in fresh.requests) and len(fresh.requests) == 2
            assert "BIG MODEL SUMMARY" not in " ".join(rig.texts())
            assert [p.text for p in rig.pieces if p.source == "task"][0] == "The shop opens at nine."
            await rig.close()

        run(scenario())
    finally:
        big.close()


def test_dual_mode_without_a_big_model_keeps_the_turn_synchronous(fresh):
    async def scenario():
        rig = TaskRig(fresh, background_tasks="dual")
        fresh.script(
            fake.judge_tool("x"), fake.tool_call("lookup", '{"q": "x"}'), fake.loop_finish(), fake.text("Right away.")
        )
        await rig.engine.submit("alice", "look up x", "en")
        assert [p.source for p in rig.pieces] == ["filler", "llm"] and rig.progress == []
        await rig.close()

    run(scenario())


@pytest.mark.parametrize(
    "verdict,spoken",
    [
        ({"ok": False, "reply": "The shop opens at nine."}, "The shop opens at nine."),
        ({"ok": True}, "The shop opens at ten."),
    ],
    ids=["corrected", "confirmed"],
)
def test_fact_check_of_the_final_reply_by_the_big_model(fresh, verdict, spoken):
    big = fake.ScriptedLlm()
    try:

        async def scenario():
            rig = TaskRig(fresh, big=big, background_tasks="dual", fact_check=True)
            fresh.script(fake.judge_tool("shop"), fake.text("The shop opens at ten."))
            big.script(fake.tool_call("lookup", '{"q": "shop"}'), fake.loop_finish(), fake.text(json.dumps(verdict)))
            await rig.engine.submit("alice", "when does the shop open", "en")
            await rig.wait_source("task", "the checked result")
            assert [p.text for p in rig.pieces if p.source == "task" and p.text] == [spoken]
            check = big.requests[-1]
            assert (
                "opens at 9" in check["messages"][0]["content"]
                and check["messages"][1]["content"] == "The shop opens at ten."
            )
            assert len(big.requests) == 3 and len(fresh.requests) == 2
            await rig.close()

        run(scenario())
    finally:
        big.close()


def test_persona_task_lines_are_validated():
    with pytest.raises(ValueError, match="placeholder"):
        Persona(task_progress={"en": ["step {step} of {total}"]})


# -- through the real dialogue node ------------------------------------------------------------


def test_node_background_task_progress_topic_routing_and_result(llm, ros, launch_node):
    """The node process: a task whose second tool-loop step is held at the scripted server,
    progress on task/progress, a progress question answered from the task's state, then the
    result as a new stream (source "task") of the same conversation."""
    from diagnostic_msgs.msg import DiagnosticStatus

    from fay_msgs.msg import Transcript, Utterance
    from fay_ros.common import topics

    llm.reset()
    node = launch_node(
        "fay_ros.nodes.dialogue",
        {
            "base_url": llm.base_url,
            "model": "scripted",
            "first_token_timeout": 10.0,
            "memory": False,
            "background_tasks": "always",
            "qa_file": "none",
        },
    )
    node.wait_ready(probe=ros)
    replies = ros.collect(Utterance, topics.REPLY)
    progress = ros.collect(DiagnosticStatus, topics.TASK_PROGRESS)
    text_input = ros.publisher(Transcript, topics.TEXT_INPUT)
    ros.wait_for_subscribers(text_input)
    ros.wait_for_publishers(topics.REPLY)
    ros.wait_for_publishers(topics.TASK_PROGRESS)
    held_step = fake.text(json.dumps({"action": "finish", "message": "done"}), gate_after=0)
    llm.script(
        fake.judge_tool("time"),
        fake.tool_call("current_time", "{}"),
        held_step,
        route("query_progress"),
        fake.text("It is late in the evening."),
    )

    def say(text: str) -> None:
        text_input.publish(Transcript(text=text, user_id="alice", language="en", is_final=True, confidence=1.0))

    say("what time is it exactly")
    filler = replies.wait_for(lambda ms: next((m for m in ms if m.is_end), None), what="the filler")
    assert filler.source == "filler"
    assert held_step.started.wait(WAIT), "the second tool-loop step reached the server"
    step = progress.wait_for_match(lambda s: {kv.key: kv.value for kv in s.values}.get("tool") == "current_time")
    values = {kv.key: kv.value for kv in step.values}
    assert values["user"] == "alice" and values["state"] == "running" and values["step"] == "0"
    assert values["conversation_id"] == filler.conversation_id and values["task_id"]
    assert step.name == "fay/dialogue: task" and step.level == DiagnosticStatus.OK

    say("how is it going?")
    answer = replies.wait_for(
        lambda ms: (
            [m for m in ms if m.source == "task_status"]
            if any(m.source == "task_status" and m.is_end for m in ms)
            else None
        ),
        what="the progress answer",
    )
    assert " ".join(m.text for m in answer if m.text) == PERSONA.line("task_progress", "en").replace("{steps}", "1")

    held_step.gate.set()
    result = replies.wait_for(
        lambda ms: [m for m in ms if m.source == "task"] if any(m.source == "task" and m.is_end for m in ms) else None,
        what="the task's result",
    )
    assert {m.conversation_id for m in result} == {filler.conversation_id}
    assert result[0].seq == filler.seq + 1 and result[0].is_first
    assert " ".join(m.text for m in result if m.text) == "It is late in the evening."
    done = progress.wait_for_match(lambda s: {kv.key: kv.value for kv in s.values}.get("state") == "completed")
    assert {kv.key: kv.value for kv in done.values}["step"] == "1"


def test_new_task_replaces_the_running_one_when_configured(fresh):
    async def scenario():
        rig = TaskRig(fresh, new_task="replace")
        await rig.start_slow_task(fresh)
        fresh.script(route("new_task"), fake.judge_finish("Sure, a taxi then."))
        await rig.engine.submit("alice", "actually, book me a taxi instead", "en")
        await asyncio.wait_for(rig.tool_cancelled.wait(), WAIT)  # the first task is dropped...
        assert said(rig) == "Sure, a taxi then."  # ...and the new request is a fresh turn
        assert rig.engine.traces[-1].path == "finish"
        await rig.wait_pieces(lambda ps: rig.progress[-1].state == CANCELLED, "the cancelled report")
        await rig.engine.settle()
        assert rig.engine.tasks.running("alice") is None
        assert not [p for p in rig.pieces if p.source == "task"], "the replaced task says nothing"
        await rig.close()

    run(scenario())
