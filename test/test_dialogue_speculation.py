"""Speculative reply (fay_ros/dialogue/speculation.py): the model starts on the recogniser's
early text; the final that says the same is answered from that stream, anything else
discards it. Against the real loopback LLM server."""

from __future__ import annotations

import asyncio
import time

import pytest

import dialogue_fake_llm as fake
from fay_ros.dialogue.qa import QaTable
from fay_ros.dialogue.speculation import SpeculativeClient, request_key
from fay_ros.llm.client import Endpoint
from test_dialogue_engine import WAIT, DictMemory, Rig, assert_one_reply, run, wait_thread_event


@pytest.fixture
def fresh(llm):
    llm.reset()
    yield llm
    llm.reset()


class RecordingMemory(DictMemory):
    """DictMemory that also records whether each recall was stateless."""

    def __init__(self) -> None:
        super().__init__()
        self.stateless: list[bool] = []

    async def recall(self, owner, query, n=5, *, stateless=False):
        self.stateless.append(stateless)
        return await super().recall(owner, query, n)


def speculative_rig(llm: fake.ScriptedLlm, **kw) -> Rig:
    rig = Rig(llm, **kw)
    rig.engine.small = SpeculativeClient(
        Endpoint(llm.base_url, "small-model", connect_timeout=2.0, first_token_timeout=10.0, idle_timeout=5.0)
    )
    return rig


def test_the_final_that_says_the_same_is_answered_from_the_early_stream(fresh):
    async def scenario():
        rig = speculative_rig(fresh)
        # gated after its first chunk: the stream is still open when the final arrives
        [early] = fresh.script(fake.judge_finish("It is sunny today. Enjoy it!", gate_after=1))
        probe = rig.engine.speculate("alice", "What is the weather like?", "en")
        await asyncio.wait_for(probe, WAIT)
        assert await wait_thread_event(early.started), "the model was not started on the speculative text"
        assert rig.pieces == [] and not rig.engine.traces, "a speculation said or recorded something"
        assert rig.engine.small.parked

        submitted = time.monotonic()
        task = rig.engine.submit("alice", "What is the weather like?", "en")
        early.gate.set()
        trace = await asyncio.wait_for(task, WAIT)
        assert rig.texts() == ["It is sunny today.", "Enjoy it!"]
        assert_one_reply(rig.pieces)
        assert len(fresh.requests) == 1, "the final's turn asked the model again"
        stats = rig.engine.small.stats
        assert (stats.started, stats.used, stats.discarded) == (1, 1, 0)
        # the model's time to first token counts from the speculative request, before the final
        assert trace.llm_time_to_first_token is not None and trace.llm_time_to_first_token > 0
        assert trace.first_token_at - trace.llm_time_to_first_token < submitted
        # the history holds the turn once, as a normal turn would
        assert [m["role"] for m in rig.engine.history("alice")] == ["user", "assistant"]
        await rig.close()

    run(scenario())


def test_a_final_that_went_on_discards_the_early_stream_and_asks_afresh(fresh):
    async def scenario():
        rig = speculative_rig(fresh)
        [early, real] = fresh.script(
            fake.judge_finish("Guess answer.", gate_after=1), fake.judge_finish("Tea it is. Green or black?")
        )
        await asyncio.wait_for(rig.engine.speculate("bob", "I would like", "en"), WAIT)
        assert await wait_thread_event(early.started)
        await asyncio.wait_for(rig.engine.submit("bob", "I would like a cup of tea.", "en"), WAIT)
        assert rig.texts() == ["Tea it is.", "Green or black?"]
        assert await wait_thread_event(early.closed), "the discarded stream was left running"
        assert fresh.requests[1]["messages"][-1]["content"].endswith("I would like a cup of tea.")
        assert "Guess" not in " ".join(rig.texts())
        stats = rig.engine.small.stats
        assert (stats.started, stats.used, stats.discarded) == (1, 0, 1)
        await rig.close()

    run(scenario())


def test_a_withdrawn_speculation_stops_the_model_and_says_nothing(fresh):
    async def scenario():
        rig = speculative_rig(fresh)
        [early] = fresh.script(fake.judge_finish("Never said.", gate_after=1))
        await asyncio.wait_for(rig.engine.speculate("carol", "Tell me", "en"), WAIT)
        assert await wait_thread_event(early.started)
        assert rig.engine.speculate("carol", "", "en") is None  # the person went on
        assert await wait_thread_event(early.closed), "the withdrawn stream was left running"
        assert not rig.engine.small.parked and rig.engine.small.stats.discarded == 1
        assert rig.pieces == [] and rig.engine.history("carol") == []
        await rig.close()

    run(scenario())


def test_a_probe_reads_statelessly_and_stores_learns_nothing(fresh):
    async def scenario():
        memory = RecordingMemory()
        rig = speculative_rig(fresh, memory=memory)
        [early] = fresh.script(fake.judge_finish("Nice to meet you! How is your day?", gate_after=1))
        await asyncio.wait_for(rig.engine.speculate("tom", "Hi, my name is Tom.", "en"), WAIT)
        assert await wait_thread_event(early.started)
        assert memory.stateless == [True]
        assert ("remember", "tom") not in memory.calls, "a probe wrote to memory"
        assert not any(session.facts for session in rig.engine.sessions.all()), "a probe changed what the session knows"
        key = rig.engine.small._parked.key
        assert "Tom" in key  # the fact the text states is in the parked prompt, as the real turn will have it

        task = rig.engine.submit("tom", "Hi, my name is Tom.", "en")
        early.gate.set()  # nothing else is scripted: a second request would fail
        await asyncio.wait_for(task, WAIT)
        assert rig.texts() == ["Nice to meet you!", "How is your day?"]
        assert memory.stateless == [True, False]
        assert rig.engine.small.stats.used == 1
        await rig.engine.settle()
        assert [c for c in memory.calls if c[0] == "remember"] == [("remember", "tom")]
        await rig.close()

    run(scenario())


class SlowProbeMemory(RecordingMemory):
    """A probe's (stateless) recall waits until `release` is set: the final arrives while the
    probe is still gathering its context."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()

    async def recall(self, owner, query, n=5, *, stateless=False):
        if stateless:
            await self.release.wait()
        return await super().recall(owner, query, n, stateless=stateless)


def test_a_final_during_the_probes_context_lets_it_start_the_model_and_takes_that_stream(fresh):
    async def scenario():
        memory = SlowProbeMemory()
        rig = speculative_rig(fresh, memory=memory)
        [early] = fresh.script(fake.judge_finish("It will rain. Take an umbrella.", gate_after=1))
        probe = rig.engine.speculate("eve", "Is it going to rain today?", "en")
        await asyncio.sleep(0)  # the probe is now waiting for its recall
        task = rig.engine.submit("eve", "Is it going to rain today?", "en")
        await asyncio.sleep(0)
        assert not probe.done(), "the final's turn cancelled the probe on the same words"
        memory.release.set()
        assert await wait_thread_event(early.started)
        early.gate.set()  # nothing else is scripted: a second request would fail
        await asyncio.wait_for(task, WAIT)
        assert rig.texts() == ["It will rain.", "Take an umbrella."]
        assert len(fresh.requests) == 1
        stats = rig.engine.small.stats
        assert (stats.started, stats.used, stats.discarded) == (1, 1, 0)
        assert memory.stateless == [True, False]  # the probe's recall came first
        await rig.close()

    run(scenario())


def test_a_final_with_other_words_cancels_the_probe_still_gathering(fresh):
    async def scenario():
        memory = SlowProbeMemory()
        rig = speculative_rig(fresh, memory=memory)
        fresh.script(fake.judge_finish("Tea it is."))
        probe = rig.engine.speculate("fay", "I would like", "en")
        await asyncio.sleep(0)
        task = rig.engine.submit("fay", "I would like a cup of tea.", "en")
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(probe, WAIT)
        await asyncio.wait_for(task, WAIT)
        assert rig.texts() == ["Tea it is."]
        assert len(fresh.requests) == 1 and fresh.requests[0]["messages"][-1]["content"].endswith("a cup of tea.")
        assert rig.engine.small.stats.started == 0
        await rig.close()

    run(scenario())


class ChangingProfileMemory(RecordingMemory):
    """DictMemory whose profile facts can change between turns."""

    def __init__(self) -> None:
        super().__init__()
        self.facts: list[str] = []

    async def profile(self, owner):
        await super().profile(owner)
        return list(self.facts)


def test_a_probe_reuses_the_rules_and_profile_of_the_last_turn_and_the_real_turn_checks_them(fresh):
    async def scenario():
        memory = ChangingProfileMemory()
        rig = speculative_rig(fresh, memory=memory)
        fresh.script(fake.judge_finish("Hello Captain."))
        await asyncio.wait_for(rig.engine.submit("alice", "Hello.", "en"), WAIT)  # a first, real turn
        calls = len(memory.calls)

        # unchanged since that turn: the probe asks memory only for the recall, and its stream is used
        [early] = fresh.script(fake.judge_finish("I am fine, Captain.", gate_after=1))
        await asyncio.wait_for(rig.engine.speculate("alice", "How are you?", "en"), WAIT)
        assert await wait_thread_event(early.started)
        assert memory.calls[calls:] == [("recall", "alice")]
        assert "Always call the user Captain." in fresh.requests[-1]["messages"][0]["content"]
        task = rig.engine.submit("alice", "How are you?", "en")
        early.gate.set()
        await asyncio.wait_for(task, WAIT)
        assert sorted(c[0] for c in memory.calls[calls + 1 :]) == ["profile", "recall", "rules"]
        assert rig.engine.small.stats.used == 1

        # the profile changed after the last turn read it: the probe's prompt is out of date, so
        # the real turn (which reads it afresh) does not take its stream and asks again
        memory.facts = ["fact:user.city=Lisbon"]
        [stale, real] = fresh.script(
            fake.judge_finish("Old guess.", gate_after=1), fake.judge_finish("Lisbon is lovely.")
        )
        await asyncio.wait_for(rig.engine.speculate("alice", "Where do I live?", "en"), WAIT)
        assert await wait_thread_event(stale.started)
        assert "Lisbon" not in fresh.requests[-1]["messages"][0]["content"]
        await asyncio.wait_for(rig.engine.submit("alice", "Where do I live?", "en"), WAIT)
        assert "Lisbon" in fresh.requests[-1]["messages"][0]["content"]
        assert rig.texts()[-1] == "Lisbon is lovely."
        assert (rig.engine.small.stats.used, rig.engine.small.stats.discarded) == (1, 1)
        await rig.close()

    run(scenario())


def test_a_qa_hit_is_not_speculated(fresh, tmp_path):
    table = tmp_path / "qa.csv"
    table.write_text("问题,答案,脚本\n你叫什么名字,我是Fay。,\n", encoding="utf-8")

    async def scenario():
        rig = speculative_rig(fresh, qa=QaTable.load(table, threshold=0.8))
        await asyncio.wait_for(rig.engine.speculate("dan", "你叫什么名字", "zh"), WAIT)
        assert fresh.requests == [] and rig.pieces == [] and not rig.engine.small.parked
        await asyncio.wait_for(rig.engine.submit("dan", "你叫什么名字", "zh"), WAIT)
        assert rig.texts() == ["我是Fay。"]
        await rig.close()

    run(scenario())


def test_request_key_is_the_request():
    messages = [{"role": "user", "content": "你好"}]
    assert request_key(messages, {"max_tokens": 10, "temperature": 0.7}) == request_key(
        [dict(messages[0])], {"temperature": 0.7, "max_tokens": 10}
    )
    assert request_key(messages, {"max_tokens": 10}) != request_key(messages, {"max_tokens": 11})
    assert request_key(messages, {}) != request_key([{"role": "user", "content": "你好!"}], {})
