"""DialogueEngine against a real loopback HTTP server that speaks the OpenAI streaming protocol."""

from __future__ import annotations

import asyncio
import json
import logging
import re

import pytest

import dialogue_fake_llm as fake
from fay_ros.dialogue.engine import OBSERVATION, DialogueEngine, EngineSettings
from fay_ros.dialogue.persona import Persona, PrestartSpec
from fay_ros.dialogue.qa import QaTable
from fay_ros.dialogue.reply import ReplyPiece
from fay_ros.dialogue.toolbox import builtin_tools
from fay_ros.dialogue.tools import Memory, MemoryResult, Tool
from fay_ros.llm.client import ChatClient, Endpoint
from harness import REPO, free_port

WAIT = 15.0
SECRET = "sk-test-SECRET-1234567890"


@pytest.fixture
def fresh(llm):
    llm.reset()
    yield llm
    llm.reset()


class DictMemory:
    """A MemoryGateway over dicts, recording every call."""

    def __init__(self) -> None:
        self.stored: list[tuple[str, str, str, bool]] = []  # owner, content, node_type, user_confirmed
        self.memories: dict[str, list[Memory]] = {}
        self.calls: list[tuple[str, str]] = []

    async def recall(self, owner, query, n=5, *, stateless=False):
        self.calls.append(("recall", owner))
        return list(self.memories.get(owner, []))

    async def remember(self, owner, content, *, node_type="", user_confirmed=False, **_kw):
        self.calls.append(("remember", owner))
        self.stored.append((owner, content, node_type, user_confirmed))
        return MemoryResult(True, "stored")

    async def forget(self, owner, query="", memory_id=""):
        self.calls.append(("forget", owner))
        return MemoryResult(True, "deleted")

    async def active_rules(self, owner):
        self.calls.append(("rules", owner))
        return [Memory("r1", "Always call the user Captain.")] if owner == "alice" else []

    async def profile(self, owner):
        self.calls.append(("profile", owner))
        return []


class Rig:
    """An engine wired to the scripted server; collects the ReplyPieces it emits."""

    def __init__(
        self,
        llm: fake.ScriptedLlm,
        *,
        big: fake.ScriptedLlm | None = None,
        qa: QaTable | None = None,
        persona: Persona | None = None,
        memory=None,
        key: str = "",
        first_token_timeout: float = 10.0,
        base_url: str | None = None,
        **settings,
    ) -> None:
        self.pieces: list[ReplyPiece] = []
        self.changed = asyncio.Event()
        self.tools = builtin_tools()
        self.tool_runs: list[tuple[str, dict, str]] = []
        self.tool_gate = asyncio.Event()
        self.tool_cancelled = asyncio.Event()
        self.tool_started = asyncio.Event()

        async def lookup(args, ctx):
            self.tool_runs.append(("lookup", args, ctx.owner))
            return f"result for {args.get('q')}: the shop opens at 9"

        async def slow(args, ctx):
            self.tool_runs.append(("slow", args, ctx.owner))
            self.tool_started.set()
            try:
                await self.tool_gate.wait()
            except asyncio.CancelledError:
                self.tool_cancelled.set()
                raise
            return "slow result"

        self.tools.add(Tool("lookup", "Look something up.", {"q": {"type": "string"}}, lookup))
        self.tools.add(Tool("slow", "A tool that waits.", {}, slow))
        endpoint = Endpoint(
            base_url or llm.base_url,
            "small-model",
            key,
            connect_timeout=2.0,
            first_token_timeout=first_token_timeout,
            idle_timeout=5.0,
        )
        big_client = ChatClient(Endpoint(big.base_url, "big-model")) if big else None
        self.engine = DialogueEngine(
            persona or Persona(),
            ChatClient(endpoint),
            self._emit,
            big=big_client,
            qa=qa,
            tools=self.tools,
            memory=memory,
            settings=EngineSettings(**settings),
        )

    def _emit(self, piece: ReplyPiece) -> None:
        self.pieces.append(piece)
        self.changed.set()

    async def wait_pieces(self, predicate, what: str = "pieces") -> list[ReplyPiece]:
        async def loop():
            while not predicate(self.pieces):
                self.changed.clear()
                await self.changed.wait()

        try:
            await asyncio.wait_for(loop(), WAIT)
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what}; got {self.texts()}") from None
        return list(self.pieces)

    def texts(self) -> list[str]:
        return [p.text for p in self.pieces]

    async def close(self) -> None:
        await self.engine.small.close()
        if self.engine.big:
            await self.engine.big.close()


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def assert_one_reply(pieces: list[ReplyPiece]) -> None:
    """Structure of a streamed reply: one conversation, seq 0.., is_first on 0, is_end on the last only."""
    assert pieces, "no reply"
    assert len({p.conversation_id for p in pieces}) == 1
    assert [p.seq for p in pieces] == list(range(len(pieces)))
    assert [p.is_first for p in pieces] == [True] + [False] * (len(pieces) - 1)
    assert [p.is_end for p in pieces] == [False] * (len(pieces) - 1) + [True]


async def wait_thread_event(event, timeout: float = WAIT) -> bool:
    return await asyncio.get_running_loop().run_in_executor(None, event.wait, timeout)


# -- finish path ------------------------------------------------------------------------------


def test_finish_path_streams_first_sentence_before_the_llm_is_done(fresh):
    async def scenario():
        rig = Rig(fresh)
        # the judge's JSON verdict, paused by the server after the first sentence
        raw = json.dumps({"action": "finish", "message": "Hello Alice! Nice to see you again. How are you?"})
        cut = raw.index("Nice")
        [judge] = fresh.script(fake.text(raw[:12], raw[12:cut], raw[cut:], gate_after=2))
        task = rig.engine.submit("alice", "hi there", "en")
        await rig.wait_pieces(lambda ps: len(ps) >= 1, "the first sentence")
        assert rig.texts() == ["Hello Alice!"]
        assert not judge.finished.is_set(), "the first sentence must go out while the LLM is still streaming"
        judge.gate.set()
        trace = await task
        assert trace.path == "finish"
        assert_one_reply(rig.pieces)
        assert " ".join(rig.texts()).strip() == "Hello Alice! Nice to see you again. How are you?"
        assert {p.source for p in rig.pieces} == {"llm"} and all(p.user_id == "alice" for p in rig.pieces)
        assert len(fresh.requests) == 1
        request = fresh.requests[0]
        assert request["stream"] is True and request["response_format"]["type"] == "json_schema"
        assert request["messages"][-1] == {"role": "user", "content": "hi there"}
        assert rig.engine.history("alice")[-2:] == [
            {"role": "user", "content": "hi there"},
            {"role": "assistant", "content": "Hello Alice! Nice to see you again. How are you?"},
        ]
        await rig.close()

    run(scenario())


def test_judge_plain_text_is_taken_as_the_reply_and_history_is_per_user(fresh):
    async def scenario():
        rig = Rig(fresh)
        fresh.script(fake.text("Sure, ", "I am Fay. ", "Good morning!"), fake.judge_finish("Hi Bob."))
        await rig.engine.run_turn("alice", "who are you", "en")
        assert rig.texts() == ["Sure, I am Fay.", "Good morning!"]
        assert rig.engine.traces[-1].path == "text"
        await rig.engine.run_turn("bob", "hello", "en")
        bob_request = fresh.requests[1]["messages"]
        assert not any("who are you" in str(m.get("content")) for m in bob_request), "alice's history leaked to bob"
        assert rig.engine.history("alice")[0]["content"] == "who are you"
        assert [m["content"] for m in rig.engine.history("bob")] == ["hello", "Hi Bob."]
        await rig.close()

    run(scenario())


# -- tool path --------------------------------------------------------------------------------


def test_tool_path_streamed_tool_call_then_second_turn_then_final_reply(fresh):
    async def scenario():
        rig = Rig(fresh)
        fresh.script(
            fake.judge_tool("shop hours"),
            fake.tool_call("lookup", json.dumps({"q": "shop hours", "owner": "mallory"}), call_id="call_42"),
            fake.loop_finish("found the hours"),
            fake.text("The shop ", "opens at nine. ", "See you there!"),
        )
        trace = await rig.engine.run_turn("alice", "when does the shop open?", "en")
        assert trace.path == "tool" and trace.error == ""
        assert rig.tool_runs == [("lookup", {"q": "shop hours"}, "alice")], "owner comes from the session only"
        assert_one_reply(rig.pieces)
        assert rig.pieces[0].source == "filler" and rig.pieces[0].text == Persona().line("filler", "en", 1)
        assert rig.texts()[1:] == ["The shop opens at nine.", "See you there!"]
        assert {p.source for p in rig.pieces[1:]} == {"llm"}
        # the loop's first request offers the tools natively; the second carries the call and its result
        loop1, loop2, final = fresh.requests[1], fresh.requests[2], fresh.requests[3]
        assert {t["function"]["name"] for t in loop1["tools"]} >= {"lookup", "current_time", "memory_recall"}
        assert all("owner" not in t["function"]["parameters"]["properties"] for t in loop1["tools"])
        assistant = next(m for m in loop2["messages"] if m.get("tool_calls"))
        assert assistant["tool_calls"][0]["id"] == "call_42"
        assert assistant["tool_calls"][0]["function"]["name"] == "lookup"
        tool_msg = next(m for m in loop2["messages"] if m["role"] == "tool")
        assert tool_msg["tool_call_id"] == "call_42" and "opens at 9" in tool_msg["content"]
        assert "opens at 9" in final["messages"][0]["content"], "tool results feed the final reply"
        assert "tools" not in final and "response_format" not in final
        await rig.close()

    run(scenario())


def test_tool_loop_json_actions_and_repeated_call_guard(fresh):
    async def scenario():
        rig = Rig(fresh)
        same = json.dumps({"action": "tool", "tool": "lookup", "args": {"q": "x"}})
        fresh.script(
            fake.judge_tool("x"), fake.text(same), fake.text(same), fake.text(same), fake.text("Here is what I found.")
        )
        trace = await rig.engine.run_turn("alice", "look up x", "en")
        assert [r[0] for r in rig.tool_runs] == ["lookup"], "an identical call must run only once"
        assert trace.tool_calls == ['lookup({"q": "x"})']
        assert trace.skipped_repeats == ['lookup({"q": "x"})', 'lookup({"q": "x"})']
        # the model was told, and the loop stopped after the second repeat: judge + 3 loop steps + final
        assert len(fresh.requests) == 5
        assert "NOT RUN" in json.dumps(fresh.requests[3]["messages"], ensure_ascii=False)
        assert rig.texts()[-1] == "Here is what I found." and rig.pieces[-1].is_end
        await rig.close()

    run(scenario())


def test_tool_loop_stops_at_max_steps(fresh):
    async def scenario():
        rig = Rig(fresh, max_tool_steps=2)
        fresh.script(
            fake.judge_tool(),
            *[fake.text(json.dumps({"action": "tool", "tool": "lookup", "args": {"q": f"q{i}"}})) for i in range(2)],
            fake.text("Done."),
        )
        trace = await rig.engine.run_turn("alice", "look up many things", "en")
        assert [r[1]["q"] for r in rig.tool_runs] == ["q0", "q1"]
        assert len(fresh.requests) == 4 and trace.error == ""
        assert rig.texts()[-1] == "Done."
        await rig.close()

    run(scenario())


def test_dual_model_mode_runs_the_tool_loop_on_the_big_model(fresh):
    big = fake.ScriptedLlm()
    try:

        async def scenario():
            # the tool loop inside the turn (background tasks, the default with a big model, are
            # test_dialogue_tasks.py's)
            rig = Rig(fresh, big=big, background_tasks="off")
            fresh.script(fake.judge_tool("t"), fake.text("It is late."))
            big.script(fake.tool_call("current_time", "{}"), fake.loop_finish())
            await rig.engine.run_turn("alice", "what's the time in words", "en")
            assert len(fresh.requests) == 2 and len(big.requests) == 2
            assert all(r["model"] == "big-model" for r in big.requests)
            assert all(r["model"] == "small-model" for r in fresh.requests)
            assert rig.texts()[-1] == "It is late." and rig.engine.traces[-1].tool_calls == ["current_time({})"]
            await rig.close()

        run(scenario())
    finally:
        big.close()


# -- qa.csv -----------------------------------------------------------------------------------


def test_qa_hit_answers_without_llm_and_never_executes_the_script(fresh, tmp_path):
    marker = tmp_path / "pwned"
    table = tmp_path / "qa.csv"
    table.write_text(
        "问题,答案,脚本\n"
        "你叫什么名字|你是谁,我是Fay。很高兴认识你！,\n"
        f"现在几点了,现在是{{{{result}}}}。,tool:current_time\n"
        f"开灯,好的。,touch {marker}\n"
        "查一下,好的，{{result}},tool:lookup\n",
        encoding="utf-8",
    )
    qa = QaTable.load(table, threshold=0.8)

    async def scenario():
        rig = Rig(fresh, qa=qa, qa_script_tools=("current_time",))
        await rig.engine.run_turn("alice", "你叫什么名字呀？", "zh")
        assert rig.texts() == ["我是Fay。", "很高兴认识你！"] and {p.source for p in rig.pieces} == {"qa"}
        assert_one_reply(rig.pieces)
        rig.pieces.clear()
        await rig.engine.run_turn("alice", "现在几点了", "zh")
        assert rig.texts()[0].startswith("现在是20") and "{{result}}" not in rig.texts()[0]
        rig.pieces.clear()
        await rig.engine.run_turn("alice", "开灯", "zh")
        await rig.engine.run_turn("alice", "查一下", "zh")
        assert rig.tool_runs == [], "a script naming a tool that is not allow-listed must not run"
        assert "{{result}}" not in " ".join(rig.texts())
        assert fresh.requests == [], "qa hits never reach the LLM"
        await rig.close()

    run(scenario())
    assert not marker.exists()


@pytest.mark.parametrize("profile", ["tiny", "capable"])
def test_a_turn_that_is_only_a_social_move_gets_its_qa_row_with_the_tiny_model(fresh, profile):
    """The embedded model cannot speak Chinese at all and answered an English good night with
    'Right on time, right on time!': a turn that only takes leave or thanks, in words the qa table
    does not list, gets that row's answer; a capable model still answers it itself."""
    qa = QaTable.load(REPO / "config" / "qa.csv")

    async def scenario():
        rig = Rig(fresh, qa=qa, profile=profile)
        await rig.engine.run_turn("alice", "好了，我去睡觉了，晚安", "zh")
        await rig.engine.run_turn("alice", "right, i'm off to bed, night fay", "en")
        if profile == "tiny":
            assert rig.texts() == ["晚安，好梦！", "Good night!", "Sleep well."]
            assert {p.source for p in rig.pieces} == {"qa"} and fresh.requests == []
        else:
            assert fresh.requests and "qa" not in {p.source for p in rig.pieces}
        await rig.close()

    run(scenario())


# -- interrupt ---------------------------------------------------------------------------------


def test_interrupt_cancels_the_llm_stream_and_marks_the_next_reply_replace(fresh):
    async def scenario():
        rig = Rig(fresh)
        [judge] = fresh.script(
            fake.text(
                '{"action": "finish", "message": "First sentence here. ', 'Second sentence never comes."}', gate_after=1
            )
        )
        task = rig.engine.submit("alice", "tell me a story", "en")
        await rig.wait_pieces(lambda ps: len(ps) >= 1)
        assert rig.engine.interrupt() == 1
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await wait_thread_event(judge.closed), "the HTTP stream must be closed by the interrupt"
        assert not judge.finished.is_set()
        assert rig.texts() == ["First sentence here.", ""], "an empty closing is_end marker ends the cut reply"
        assert_one_reply(rig.pieces)
        assert rig.engine.traces[-1].cancelled
        # the next turn's prompt knows what was asked and what had been said before the cut
        assert rig.engine.history("alice") == [
            {"role": "user", "content": "tell me a story"},
            {"role": "assistant", "content": "First sentence here."},
        ]
        fresh.script(fake.judge_finish("Okay, stopping."))
        await rig.engine.submit("alice", "stop", "en")
        new = [p for p in rig.pieces if p.conversation_id != rig.pieces[0].conversation_id]
        assert new[0].replace is True and new[0].text == "Okay, stopping."
        await rig.close()

    run(scenario())


def test_interrupt_cancels_the_tool_loop(fresh):
    async def scenario():
        rig = Rig(fresh)
        fresh.script(fake.judge_tool(), fake.tool_call("slow", "{}"))
        task = rig.engine.submit("alice", "do the slow thing", "en")
        await rig.wait_pieces(lambda ps: len(ps) >= 1, "the filler")
        await asyncio.wait_for(rig.tool_started.wait(), WAIT)
        rig.engine.interrupt()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert rig.tool_cancelled.is_set()
        assert len(fresh.requests) == 2, "no final reply after an interrupt"
        assert rig.pieces[-1].is_end and rig.pieces[-1].text == ""
        await rig.close()

    run(scenario())


def test_new_input_from_the_same_user_replaces_the_running_turn(fresh):
    async def scenario():
        rig = Rig(fresh)
        [slow] = fresh.script(fake.text('{"action": "finish", "message": "Long answer. ', 'more"}', gate_after=1))
        first = rig.engine.submit("alice", "first question", "en")
        await rig.wait_pieces(lambda ps: len(ps) >= 1)
        fresh.script(fake.judge_finish("Second answer."))
        second = rig.engine.submit("alice", "second question", "en")
        with pytest.raises(asyncio.CancelledError):
            await first
        await second
        assert await wait_thread_event(slow.closed)
        replies = {}
        for p in rig.pieces:
            replies.setdefault(p.conversation_id, []).append(p)
        assert len(replies) == 2 and all(assert_one_reply(r) is None for r in replies.values())
        second_reply = [r for r in replies.values() if r[0].text == "Second answer."][0]
        assert second_reply[0].replace is True
        await rig.close()

    run(scenario())


def test_the_user_going_on_before_their_turn_said_a_word_is_answered_as_one_turn(fresh):
    """The recogniser ended the turn at a pause inside the sentence and the user went on: the
    next words arrive while the first turn has said nothing yet, so one turn answers both parts
    and the history holds the whole sentence (once the first turn has spoken, the next words
    are a turn of their own: the test above)."""

    async def scenario():
        rig = Rig(fresh)
        [slow] = fresh.script(fake.text('{"action": "finish", "message": "Sure', ', I will."}', gate_after=1))
        first = rig.engine.submit("alice", "Please call me.", "en")
        assert await wait_thread_event(slow.started)
        assert rig.pieces == [], "nothing said yet"
        fresh.script(fake.judge_finish("I will call you tomorrow morning."))
        second = rig.engine.submit("alice", "tomorrow morning.", "en")
        with pytest.raises(asyncio.CancelledError):
            await first
        await second
        assert await wait_thread_event(slow.closed)
        assert fresh.requests[-1]["messages"][-1]["content"].endswith("Please call me. tomorrow morning."), (
            fresh.requests[-1]["messages"][-1]
        )
        assert rig.texts() == ["I will call you tomorrow morning."]
        assert rig.pieces[0].replace is True
        assert [m["content"] for m in rig.engine.history("alice") if m["role"] == "user"] == [
            "Please call me. tomorrow morning."
        ]
        # the next input after a spoken answer is a turn of its own
        fresh.script(fake.judge_finish("You are welcome."))
        await rig.engine.submit("alice", "Thank you.", "en")
        assert fresh.requests[-1]["messages"][-1]["content"].endswith("Thank you.")
        assert not fresh.requests[-1]["messages"][-1]["content"].endswith("morning. Thank you.")
        await rig.close()

    run(scenario())


async def _going_on_after_a_said_sentence(fresh, rig, answer: str) -> str:
    """ "Please call me." answered with a sentence said (its model stream then waits), and the
    user goes on: "tomorrow morning." Returns what the model was asked last."""
    [slow] = fresh.script(
        fake.text('{"action": "finish", "message": "Okay, I will call you. ', 'When?"}', gate_after=1)
    )
    first = rig.engine.submit("alice", "Please call me.", "en", spoken=True)
    await rig.wait_pieces(lambda ps: len(ps) >= 1, "the first sentence, said")
    fresh.script(fake.judge_finish(answer))
    second = rig.engine.submit("alice", "tomorrow morning.", "en", spoken=True)
    with pytest.raises(asyncio.CancelledError):
        await first
    await second
    assert await wait_thread_event(slow.closed)
    return fresh.requests[-1]["messages"][-1]["content"]


def test_with_a_voice_the_user_going_on_before_the_answer_was_heard_is_answered_as_one_turn(fresh):
    """With a voice, a spoken input's answer reaches the user when it is heard, not when it is
    said: the tts keeps a reply from starting while the person talks on (and drops it at their
    next final), so the next words join the first ones though a sentence was said, and that
    unheard sentence joins no history. Once the voice began the answer (`heard`), the next
    words are a turn of their own."""

    async def scenario():
        rig = Rig(fresh)
        rig.engine.voice = True
        asked = await _going_on_after_a_said_sentence(fresh, rig, "I will call you tomorrow morning.")
        assert asked.endswith("Please call me. tomorrow morning."), asked
        assert rig.texts()[-1] == "I will call you tomorrow morning." and rig.pieces[-1].replace is True
        # (and names the reply it answers in place of, for the memory to take back what it recorded)
        assert rig.pieces[-1].replaces == rig.pieces[0].conversation_id != rig.pieces[-1].conversation_id
        assert rig.pieces[0].replaces == ""
        assert rig.engine.history("alice") == [
            {"role": "user", "content": "Please call me. tomorrow morning."},
            {"role": "assistant", "content": "I will call you tomorrow morning."},
        ], "nothing unheard in it"
        # heard: the next words are a turn of their own, and the cut answer joins the history
        fresh.script(fake.text('{"action": "finish", "message": "You are welcome. ', 'Bye."}', gate_after=1))
        third = rig.engine.submit("alice", "Thank you.", "en", spoken=True)
        await rig.wait_pieces(lambda ps: ps[-1].text == "You are welcome.", "the third answer's first sentence")
        rig.engine.heard(rig.pieces[-1].conversation_id)
        fresh.script(fake.judge_finish("Goodbye."))
        fourth = rig.engine.submit("alice", "Bye.", "en", spoken=True)
        with pytest.raises(asyncio.CancelledError):
            await third
        await fourth
        assert fresh.requests[-1]["messages"][-1]["content"].endswith("Bye.")
        assert not fresh.requests[-1]["messages"][-1]["content"].endswith("Thank you. Bye.")
        assert {"role": "assistant", "content": "You are welcome."} in rig.engine.history("alice")
        await rig.close()

    run(scenario())


def test_with_a_voice_a_finished_answer_not_heard_yet_is_joined_and_leaves_the_history(fresh):
    """The answer to "Please call me." was produced whole, but the voice holds it while the
    person talks on (the tts drops it at their next final): "tomorrow morning." is answered
    with both parts, the new answer replaces whatever is still queued, and the unheard exchange
    leaves the history. An answer the voice began stays, and the next words are their own turn."""

    async def scenario():
        rig = Rig(fresh)
        rig.engine.voice = True
        fresh.script(fake.judge_finish("Okay, I will call you."))
        await rig.engine.submit("alice", "Please call me.", "en", spoken=True)
        fresh.script(fake.judge_finish("I will call you tomorrow morning."))
        await rig.engine.submit("alice", "tomorrow morning.", "en", spoken=True)
        asked = fresh.requests[-1]["messages"][-1]["content"]
        assert asked.endswith("Please call me. tomorrow morning."), asked
        second = [p for p in rig.pieces if p.conversation_id == rig.pieces[-1].conversation_id]
        assert second[0].replace is True and rig.texts()[-1] == "I will call you tomorrow morning."
        assert {p.replaces for p in second} == {rig.pieces[0].conversation_id} != {second[0].conversation_id}
        assert rig.engine.history("alice") == [
            {"role": "user", "content": "Please call me. tomorrow morning."},
            {"role": "assistant", "content": "I will call you tomorrow morning."},
        ], "nothing unheard in it"
        rig.engine.heard(rig.pieces[-1].conversation_id)
        fresh.script(fake.judge_finish("You are welcome."))
        await rig.engine.submit("alice", "Thank you.", "en", spoken=True)
        asked = fresh.requests[-1]["messages"][-1]["content"]
        assert asked.endswith("Thank you.") and not asked.endswith("morning. Thank you."), asked
        assert len(rig.engine.history("alice")) == 4 and rig.pieces[-1].replaces == ""
        await rig.close()

    run(scenario())


def test_without_a_voice_a_said_answer_has_reached_the_user(fresh):
    # (text input, the chat action, or no tts: nothing would ever be heard)
    async def scenario():
        rig = Rig(fresh)
        asked = await _going_on_after_a_said_sentence(fresh, rig, "Tomorrow morning, then.")
        assert asked.endswith("tomorrow morning.") and not asked.endswith("Please call me. tomorrow morning."), asked
        await rig.close()

    run(scenario())


# -- failures ----------------------------------------------------------------------------------


@pytest.mark.parametrize("failure", ["unreachable", "http500", "http401", "malformed", "timeout", "empty"])
def test_llm_failure_gives_a_spoken_apology_and_a_clear_log_line(fresh, failure, caplog):
    caplog.set_level(logging.INFO, logger="fay_ros.dialogue")

    async def scenario():
        kwargs = {}
        if failure == "unreachable":
            kwargs["base_url"] = f"http://127.0.0.1:{free_port()}/v1"
        elif failure == "http500":
            fresh.script(fake.status(500, "model exploded"))
        elif failure == "http401":
            fresh.script(fake.status(401, f"Incorrect API key provided: {SECRET}"))
        elif failure == "malformed":
            fresh.script(fake.malformed())
        elif failure == "timeout":
            fresh.script(fake.silent())
            kwargs["first_token_timeout"] = 0.5
        elif failure == "empty":
            fresh.script(fake.text(""))
        rig = Rig(fresh, key=SECRET, **kwargs)
        trace = await rig.engine.run_turn("alice", "tell me something", "en")
        assert rig.texts() == [Persona().line("apology", "en")]
        assert rig.pieces[0].source == "fallback" and rig.pieces[0].is_first and rig.pieces[0].is_end
        expected_kind = {"http500": "http", "http401": "http"}.get(failure, failure)
        assert trace.error.startswith(expected_kind), trace.error
        await rig.close()

    run(scenario())
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "LLM failed" in errors[0], errors
    assert SECRET not in caplog.text
    if failure == "http401":
        assert "401" in errors[0] and "***" in errors[0]


def test_chinese_input_gets_the_chinese_apology(fresh):
    async def scenario():
        rig = Rig(fresh)
        fresh.script(fake.status(503))
        await rig.engine.run_turn("alice", "给我讲个故事", "")
        assert rig.texts() == [Persona().line("apology", "zh")]
        await rig.close()

    run(scenario())


# -- think tags ---------------------------------------------------------------------------------


def test_think_content_is_never_spoken(fresh):
    async def scenario():
        rig = Rig(fresh)
        fresh.script(
            fake.text(
                "<thi",
                "nk>The user greets me. I should say hello.</th",
                "ink>",
                '{"action": "finish", "message": "Hello! Nice to meet you."}',
            )
        )
        await rig.engine.run_turn("alice", "hello", "en")
        assert rig.texts() == ["Hello!", "Nice to meet you."]
        rig.pieces.clear()
        # direct mode (no judge): reasoning split over chunks, closing tag split too
        rig.engine.settings.judge = False
        fresh.script(
            fake.text("<think>Plan: be brief", " and kind.</thi", "nk>Sure thing. ", "<think>more</think>Bye.")
        )
        await rig.engine.run_turn("alice", "ok", "en")
        spoken = " ".join(rig.texts())
        assert "Plan" not in spoken and "kind" not in spoken and "more" not in spoken and "think" not in spoken
        assert rig.texts() == ["Sure thing.", "Bye."]
        assert "Plan" not in json.dumps(rig.engine.history("alice"))
        await rig.close()

    run(scenario())


# -- context: memory, rules, prestart, modes --------------------------------------------------


def test_memory_context_owner_injection_and_no_candidates_in_prompts(fresh):
    memory = DictMemory()
    memory.memories["alice"] = [
        Memory("m1", "Alice likes green tea.", "confirmed"),
        Memory("m2", "Alice might dislike cats.", "candidate"),
    ]

    async def scenario():
        rig = Rig(fresh, memory=memory)
        fresh.script(
            fake.judge_tool("remember"),
            fake.tool_call(
                "memory_remember",
                json.dumps({"content": "Alice's birthday is May 2", "owner": "mallory", "user_asked": True}),
            ),
            fake.loop_finish(),
            fake.text("I'll remember that."),
        )
        await rig.engine.run_turn("alice", "记住我的生日是五月二号", "zh")
        judge_prompt = fresh.requests[0]["messages"][0]["content"]
        assert "Alice likes green tea." in judge_prompt and "Always call the user Captain." in judge_prompt
        assert "dislike cats" not in json.dumps(fresh.requests, ensure_ascii=False), "candidates never reach a prompt"
        await rig.engine.settle()  # (the birthday is also a fact of hers, stored after the turn)
        assert ("alice", "Alice's birthday is May 2", "observation", True) in memory.stored
        assert {owner for owner, *_ in memory.stored} == {"alice"}, "the model's owner is never used"
        assert {owner for _what, owner in memory.calls} == {"alice"}
        # a guest gets no private memory at all
        memory.calls.clear()
        fresh.script(
            fake.judge_tool(),
            fake.tool_call("memory_recall", json.dumps({"query": "birthday", "owner": "alice"})),
            fake.loop_finish(),
            fake.text("I don't know you yet."),
        )
        await rig.engine.run_turn("", "when is my birthday?", "en")
        assert memory.calls == []
        assert "guest" in json.dumps(fresh.requests[-1], ensure_ascii=False)
        await rig.close()

    run(scenario())


def test_memory_services_absent_degrade_gracefully(fresh):
    async def scenario():
        rig = Rig(fresh)  # NoMemory gateway: every call is "unavailable"
        fresh.script(
            fake.judge_tool(),
            fake.tool_call("memory_recall", '{"query": "tea"}'),
            fake.loop_finish(),
            fake.text("I can't remember right now."),
        )
        trace = await rig.engine.run_turn("alice", "what tea do I like?", "en")
        assert trace.error == "" and rig.texts()[-1] == "I can't remember right now."
        assert "memory is unavailable" in json.dumps(fresh.requests[2]["messages"])
        await rig.close()

    run(scenario())


def test_prestart_tools_get_the_question_and_feed_the_prompt(fresh):
    persona = Persona(prestart=[PrestartSpec(tool="lookup", args={"q": "about: {{question}}"}, include_history=True)])

    async def scenario():
        rig = Rig(fresh, persona=persona)
        fresh.script(fake.judge_finish("At nine."))
        await rig.engine.run_turn("alice", "shop hours?", "en")
        assert rig.tool_runs == [("lookup", {"q": "about: shop hours?"}, "alice")]
        assert "result for about: shop hours?" in fresh.requests[0]["messages"][0]["content"]
        assert "opens at 9" in rig.engine.history("alice")[0]["content"]
        await rig.close()

    run(scenario())


def test_a_proactive_line_is_spoken_verbatim_and_observation_records_without_reply(fresh):
    memory = DictMemory()

    async def scenario():
        rig = Rig(fresh, memory=memory)
        await rig.engine.speak_first("alice", line="各位好。现在开始播报！Dinner is at six.").task
        assert rig.texts() == ["各位好。", "现在开始播报！", "Dinner is at six."]
        assert {p.source for p in rig.pieces} == {"proactive"} and not rig.pieces[0].replace
        assert_one_reply(rig.pieces)
        assert rig.engine.history("alice")[-1] == {
            "role": "assistant",
            "content": "各位好。 现在开始播报！ Dinner is at six.",
        }
        rig.pieces.clear()
        await rig.engine.submit("alice", "The user is watering the plants.", "en", OBSERVATION)
        assert rig.pieces == []
        assert memory.stored == [("alice", "The user is watering the plants.", "observation", False)]
        assert "watering" in rig.engine.history("alice")[-1]["content"]
        assert fresh.requests == []
        await rig.close()

    run(scenario())


def test_start_names_the_conversation_and_routes_that_turns_pieces_to_its_observer(fresh):
    """A caller holding a turn (the chat action) knows its conversation id before anything is
    said, and its observer sees exactly that turn's pieces, after they were emitted."""

    async def scenario():
        rig = Rig(fresh)
        seen: list[tuple[str, int, str, int]] = []
        # both users get the same answer (the server answers in arrival order); ids tell them apart
        fresh.script(
            fake.judge_finish("Hello there. Nice to meet you."), fake.judge_finish("Hello there. Nice to meet you.")
        )
        turn = rig.engine.start(
            "bob", "hello", "en", observer=lambda p: seen.append((p.conversation_id, p.seq, p.text, len(rig.pieces)))
        )
        assert turn is not None and turn.conversation_id.startswith("bob-1-") and seen == []
        other = rig.engine.submit("alice", "hi", "en")
        trace = await turn.task
        await other
        assert trace.conversation_id == turn.conversation_id
        assert {cid for cid, *_rest in seen} == {turn.conversation_id}, "only this turn's pieces"
        assert [text for _c, _s, text, _n in seen if text] == ["Hello there.", "Nice to meet you."]
        emitted = [p for p in rig.pieces if p.conversation_id == turn.conversation_id]
        assert emitted[-1].is_end and [(p.seq, p.text) for p in emitted] == [(seq, text) for _c, seq, text, _n in seen]
        for _cid, seq, _text, emitted_before in seen:  # each piece was emitted before the observer saw it
            assert rig.pieces[emitted_before - 1].seq == seq
        assert {p.user_id for p in rig.pieces if p.conversation_id != turn.conversation_id} == {"alice"}
        assert rig.engine.start("bob", "   ", "en") is None
        with pytest.raises(ValueError, match="observation"):
            rig.engine.start("bob", "noted", "en", OBSERVATION)
        await rig.close()

    run(scenario())


def test_a_started_turn_ends_cancelled_when_interrupted_or_replaced(fresh):
    async def scenario():
        rig = Rig(fresh)
        fresh.script(fake.text('{"action": "finish", "message": "One. ', 'Two."}', gate_after=1))
        turn = rig.engine.start("bob", "tell me", "en")
        await rig.wait_pieces(lambda ps: len(ps) >= 1)
        rig.engine.interrupt()
        await asyncio.wait({turn.task})
        assert turn.task.cancelled()
        fresh.script(
            fake.text('{"action": "finish", "message": "Three. ', 'Four."}', gate_after=1), fake.judge_finish("Five.")
        )
        first = rig.engine.start("bob", "again", "en")
        await rig.wait_pieces(lambda ps: any(p.text == "Three." for p in ps))
        second = rig.engine.start("bob", "something else", "en")
        await asyncio.wait({first.task, second.task})
        assert first.task.cancelled() and not second.task.cancelled()
        assert first.conversation_id != second.conversation_id
        await rig.close()

    run(scenario())


def test_cancel_stops_one_users_turn_and_the_other_users_turn_and_next_reply_go_on(fresh):
    """A `chat` goal's cancel (DialogueEngine.cancel) is not an interrupt: dave's turn, streaming
    at the same time, ends whole, and carol's next reply replaces nothing."""

    async def scenario():
        rig = Rig(fresh)
        streams = {
            "tell me a story": fake.text('{"action": "finish", "message": "Once. ', 'Upon."}', gate_after=1),
            "tell me about foxes": fake.text('{"action": "finish", "message": "Foxes. ', 'Dens."}', gate_after=1),
        }
        fresh.responder = lambda body: streams[body["messages"][-1]["content"]]
        carol = rig.engine.start("carol", "tell me a story", "en")
        dave = rig.engine.start("dave", "tell me about foxes", "en")
        await rig.wait_pieces(lambda ps: {p.text for p in ps} >= {"Once.", "Foxes."})
        assert rig.engine.cancel(carol.task)
        await asyncio.wait({carol.task})
        assert carol.task.cancelled() and not dave.task.done()
        assert await wait_thread_event(streams["tell me a story"].closed)
        streams["tell me about foxes"].gate.set()
        await dave.task
        assert not rig.engine.cancel(dave.task), "an ended turn is not cancelled again"
        daves = [p.text for p in rig.pieces if p.conversation_id == dave.conversation_id]
        assert daves == ["Foxes.", "Dens."]
        fresh.responder = None
        fresh.script(fake.judge_finish("Okay."))
        await rig.engine.submit("carol", "never mind", "en")
        [again] = [p for p in rig.pieces if p.text == "Okay."]
        assert again.replace is False, "a cancel is no interrupt: nothing else is replaced"
        await rig.close()

    run(scenario())


def test_words_said_outside_the_engine_are_the_companions_in_the_next_prompt(fresh):
    """The tts node's say action / broadcast topic publishes on `reply` with source "say": the
    dialogue records each such reply, once whole, as the companion's words of that user."""

    async def scenario():
        rig = Rig(fresh, judge=False)
        rig.engine.record_said("alice", "say-1", "Dinner is at six.", False)
        assert rig.engine.history("alice") == [], "recorded once the reply is whole"
        rig.engine.record_said("alice", "say-1", "Please wash your hands.", False)
        rig.engine.record_said("alice", "say-1", "", True)
        rig.engine.record_said("", "say-2", "Spoken to the room.", True)  # nobody's: not recorded
        assert rig.engine.history("alice") == [
            {"role": "assistant", "content": "Dinner is at six. Please wash your hands."}
        ]
        assert rig.engine.history("") == []
        rig.engine.record_said("alice", "say-3", "The bus leaves soon.", False)  # its end never came
        fresh.script(fake.text("Yes, at six."))
        await rig.engine.submit("alice", "when is dinner?", "en")
        messages = fresh.requests[0]["messages"]
        assert {"role": "assistant", "content": "Dinner is at six. Please wash your hands."} in messages
        assert {"role": "assistant", "content": "The bus leaves soon."} in messages
        assert not [m for m in messages if m["role"] == "user" and "Dinner" in m["content"]], (
            "the companion's words are never the user's"
        )
        await rig.close()

    run(scenario())


def test_tiny_history_window_extends_the_last_prompt_between_drops():
    """Consecutive tiny prompts share everything but the new turn (the server's prompt cache
    covers the rest); the window drops back to the minimum only when it reached the maximum."""
    engine = DialogueEngine(Persona(), None, lambda _p: None, settings=EngineSettings(profile="tiny"))
    windows = []
    for turn in range(14):
        engine.histories.remember_turn("u", f"question {turn}", f"answer {turn}")
        windows.append([m["content"] for m in engine.histories.window("u", 2, 5)])
    sizes = [len(w) // 2 for w in windows]
    assert sizes == [1, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5, 2]
    for before, after in zip(windows, windows[1:]):
        if len(after) > len(before):
            assert after[: len(before)] == before, "a growing window extends the previous prompt"
    assert windows[-1][-1] == "answer 13" and windows[5] == ["question 4", "answer 4", "question 5", "answer 5"]


def test_tiny_turn_knows_the_name_from_the_profile_after_a_restart(fresh):
    """No session facts (a new process): the name comes from memory's profile facts, reaches
    the prompt, answers the name question, and arms the guard against "my name is Tom"."""
    memory = DictMemory()

    async def profile(owner):
        return ["fact:name=User's name is Tom.", "preference:taste:hiking=User likes hiking."] if owner == "tom" else []

    memory.profile = profile

    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        fresh.script(fake.text("Hello, my name is Tom! ", "Nice to see you again. ", "Shall we go hiking?"))
        await rig.engine.run_turn("tom", "Hello again!", "en")
        assert [p.text for p in rig.pieces if p.text] == ["Nice to see you again.", "Shall we go hiking?"]
        system = fresh.requests[0]["messages"][0]["content"]
        assert "You are talking with Tom." in system and "Tom likes hiking." in system
        assert "response_format" not in fresh.requests[0] and "tools" not in fresh.requests[0], "one plain call"
        assert fresh.requests[0]["temperature"] == 0 and fresh.requests[0]["repeat_penalty"] > 1
        rig.pieces.clear()
        trace = await rig.engine.run_turn("tom", "What's my name?", "en")
        assert [p.text for p in rig.pieces] == ["Your name is Tom."] and trace.path == "memory"
        assert len(fresh.requests) == 1, "answered from the facts, no model call"
        await rig.close()

    run(scenario())


def test_a_plan_gone_by_answers_where_they_went_and_never_reaches_the_prompt(fresh):
    """'Where did Michael go?' a week after he flew: the plan told is said back as told (the
    engine left every gone-by plan out of the facts, so it got the no_answer line), and a chat
    turn's prompt still has no old plan for the model to take for a coming one."""
    memory = DictMemory()
    flew = "User's son Michael is flying to Australia on Thursday, 6 November 2025."

    async def profile(owner):
        return ["fact:family:son=User's son is called Michael.", f"event:plan:son_thursday={flew}"]

    memory.profile = profile

    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        trace = await rig.engine.run_turn("joan", "where did michael go?", "en")
        assert [p.text for p in rig.pieces] == [
            "You told me: your son Michael is flying to Australia on Thursday, 6 November 2025."
        ], trace.path
        assert fresh.requests == [], "answered from the facts, no model call"
        fresh.script(fake.text("That sounds lovely."))
        await rig.engine.run_turn("joan", "i had a lovely walk today", "en")
        # (the facts lines; the conversation window has the answer above, as said)
        facts = " ".join(str(m["content"]) for m in fresh.requests[0]["messages"] if m["role"] == "system")
        assert "Australia" not in facts and "Michael" in facts
        await rig.close()

    run(scenario())


def test_a_memory_out_of_reach_is_not_taken_for_facts_never_told(fresh):
    """The profile cannot be read (memory not reachable yet, or too slow): a question about the
    user's facts is told memory is out of reach, not "you haven't told me your name"; a fact
    said in this session still answers; a capable model is told the same by a rule."""
    from fay_ros.dialogue.engine import MEMORY_OUT_OF_REACH
    from fay_ros.dialogue.tools import MemoryUnavailable

    memory = DictMemory()

    async def unreachable(owner):
        raise MemoryUnavailable("service /fay/memory/profile is not running")

    memory.profile = unreachable

    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        persona = rig.engine.persona
        trace = await rig.engine.run_turn("tom", "Do you remember my name?", "en")
        assert " ".join(rig.texts()) == persona.line("memory_unreachable", "en") and trace.path == "memory"
        assert "told me" not in " ".join(rig.texts())
        rig.pieces.clear()
        await rig.engine.run_turn("tom", "我叫什么名字？", "zh")
        assert "".join(rig.texts()) == persona.line("memory_unreachable", "zh")
        rig.pieces.clear()
        await rig.engine.run_turn("tom", "My name is Tom.", "en")
        assert rig.texts() == ["Nice to meet you, Tom!"] and not fresh.requests, "a name is greeted, not modelled"
        rig.pieces.clear()
        fresh.script(fake.text("That sounds lovely."))
        await rig.engine.run_turn("tom", "Tell me something nice.", "en")
        assert MEMORY_OUT_OF_REACH not in json.dumps(fresh.requests[0]), "the tiny prompt stays short"
        rig.pieces.clear()
        await rig.engine.run_turn("tom", "What's my name?", "en")
        assert rig.texts() == ["Your name is Tom."], "a fact said in this session is known"
        assert len(fresh.requests) == 1
        fresh.reset()
        await rig.close()
        capable = Rig(fresh, memory=memory)
        fresh.script(fake.text(json.dumps({"action": "finish", "message": "I can't check that right now."})))
        await capable.engine.run_turn("ann", "What do I like?", "en")
        system = "\n".join(m["content"] for m in fresh.requests[0]["messages"] if m["role"] == "system")
        assert MEMORY_OUT_OF_REACH in system
        await capable.close()

    run(scenario())


def test_the_english_only_tiny_model_never_sees_the_chinese_exchanges_of_its_history(fresh):
    """A Chinese turn (the only-English line) and a Chinese acknowledgement stay out of the next
    English prompt's history (with them the 135M model answered English in broken Chinese);
    the English exchange around them stays, in order."""
    from fay_ros.text.words import has_cjk

    async def scenario():
        rig = Rig(fresh, memory=DictMemory(), profile="tiny")
        fresh.script(fake.text("Hello! Nice to see you."))
        await rig.engine.run_turn("tom", "Hello there!", "en")
        await rig.engine.run_turn("tom", "今天天气怎么样？", "zh")
        await rig.engine.run_turn("tom", "我对芒果过敏。", "zh")
        assert any(has_cjk(t) for t in rig.texts())
        fresh.script(fake.text("Let's go for a walk."))
        await rig.engine.run_turn("tom", "What shall we do today?", "en")
        messages = fresh.requests[-1]["messages"]
        assert not any(has_cjk(m["content"]) for m in messages if m["role"] != "system"), messages
        said = [m["content"] for m in messages if m["role"] in ("user", "assistant")]
        assert said[:2] == ["Hello there!", "Hello! Nice to see you."], said
        await rig.close()

    run(scenario())


def test_a_death_told_by_the_name_alone_is_read_against_the_names_memory_knows(fresh):
    """ "marley passed away this afternoon": Marley is the budgie of the profile, so the budgie
    has died; the pets answer says it of the past (not "Your budgie is called Marley.")."""
    memory = DictMemory()

    async def profile(owner):
        return ["fact:family:budgie=User's budgie is called Marley."]

    memory.profile = profile

    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        fresh.script(fake.text("I'm so sorry."))
        # (the first turn of the session: the names come from the profile read in the turn)
        await rig.engine.run_turn("wendell", "sad day. marley passed away this afternoon", "en")
        await rig.engine.settle()
        assert any(c == "User's budgie Marley has died." for _o, c, _t, _u in memory.stored), memory.stored
        rig.pieces.clear()
        await rig.engine.run_turn("wendell", "do i still have a budgie?", "en")
        assert rig.texts() == ["Your late budgie was called Marley."], rig.texts()
        await rig.close()

    run(scenario())


def test_a_profile_read_earlier_in_the_session_stands_in_when_memory_fails(fresh):
    """A later turn whose profile read fails keeps the facts this session last read: the name
    is still answered, and the allergy still keeps peanuts out of the model's suggestion."""
    memory = DictMemory()
    reachable = [True]

    async def profile(owner):
        if not reachable[0]:
            raise MemoryUnavailable("service /fay/memory/profile did not answer in 0.5s")
        return ["fact:name=User's name is Tom.", "fact:health:allergy:peanut=User is allergic to peanuts."]

    from fay_ros.dialogue.tools import MemoryUnavailable

    memory.profile = profile

    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        await rig.engine.run_turn("tom", "What's my name?", "en")
        assert rig.texts() == ["Your name is Tom."]
        reachable[0] = False
        rig.pieces.clear()
        await rig.engine.run_turn("tom", "Do you remember my name?", "en")
        assert "Tom" in " ".join(rig.texts()), rig.texts()
        rig.pieces.clear()
        fresh.script(fake.text("How about a peanut butter sandwich? ", "Or some fresh fruit."))
        # (a request for food ideas is answered from the table: a remark lets the model speak)
        await rig.engine.run_turn("tom", "I'm a bit peckish.", "en")
        spoken = " ".join(rig.texts())
        assert "peanut" not in spoken.lower() and "fruit" in spoken, rig.texts()
        assert "allergic to peanuts" in fresh.requests[0]["messages"][0]["content"] + json.dumps(
            fresh.requests[0]["messages"]
        )
        await rig.close()

    run(scenario())


def test_tiny_turn_acknowledges_a_personal_fact_and_never_offers_the_allergen(fresh, caplog):
    """A stated allergy is acknowledged without a model call and stored confirmed; the next
    model call carries it in its fact lines, and the guard drops the model's sentence that
    offers peanut butter (logged with the food, not the sentence), keeping the rest."""
    memory = DictMemory()

    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        trace = await rig.engine.run_turn("tom", "I'm allergic to peanuts.", "en")
        assert rig.texts() == ["Got it — you're allergic to peanuts.", "I'll keep that in mind."], rig.texts()
        assert trace.path == "memory" and not fresh.requests, "acknowledged without the model"
        await rig.engine.settle()
        assert ("tom", "User is allergic to peanuts.", "observation", True) in memory.stored
        rig.pieces.clear()
        fresh.script(fake.text("How about some peanut butter on toast? ", "Apple slices with honey are lovely."))
        with caplog.at_level(logging.WARNING, logger="fay_ros.dialogue"):
            await rig.engine.run_turn("tom", "I'm a bit peckish.", "en")
        assert [p.text for p in rig.pieces if p.text] == ["Apple slices with honey are lovely."]
        assert "User is allergic to peanuts." in fresh.requests[0]["messages"][0]["content"]
        assert any("'peanut butter'" in r.getMessage() and "peanut" in r.getMessage() for r in caplog.records)
        assert not any("on toast" in r.getMessage() for r in caplog.records), "the sentence is never logged"
        rig.pieces.clear()
        trace = await rig.engine.run_turn("tom", "我对什么过敏？", "zh")
        assert rig.texts() == ["你对花生过敏。"] and len(fresh.requests) == 1
        await rig.close()

    run(scenario())


def test_a_household_members_allergy_is_kept_like_the_users_own(fresh):
    """ "My son Oliver is allergic to peanuts" (the held-out slip: the allergy was dropped and
    the model offered Oliver peanut butter sandwiches): acknowledged and stored as the son's,
    in the next prompt's safety lines, the peanut suggestion dropped by the guard, and "what is
    Oliver allergic to?" answered from the fact, not by the model."""
    memory = DictMemory()

    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        trace = await rig.engine.run_turn("sarah", "My son Oliver is allergic to peanuts.", "en")
        assert rig.texts() == ["Got it — your son Oliver is allergic to peanuts.", "I'll keep that in mind."]
        assert trace.path == "memory" and not fresh.requests
        await rig.engine.settle()
        assert ("sarah", "User's son Oliver is allergic to peanuts.", "observation", True) in memory.stored
        rig.pieces.clear()
        fresh.script(fake.text("You could pack peanut butter sandwiches. ", "Apple slices are a good choice."))
        await rig.engine.run_turn("sarah", "The lunchbox is empty again.", "en")
        assert [p.text for p in rig.pieces if p.text] == ["Apple slices are a good choice."]
        assert "son Oliver is allergic to peanuts." in fresh.requests[0]["messages"][0]["content"]
        rig.pieces.clear()
        # only a first clause got out before the allergen: the sentence is finished safely
        fresh.script(
            fake.text("I'm afraid I don't know his lunchbox rules, ", "you could pack peanut butter crackers.")
        )
        await rig.engine.run_turn("sarah", "What else could Oliver take to school?", "en")
        assert rig.texts() == [
            "I'm afraid I don't know his lunchbox rules,",
            "but anything without peanuts is a safe choice.",
        ], rig.texts()
        rig.pieces.clear()
        await rig.engine.run_turn("sarah", "What is Oliver allergic to?", "en")
        assert rig.texts() == ["Your son Oliver is allergic to peanuts."] and len(fresh.requests) == 2
        rig.pieces.clear()
        await rig.engine.run_turn("sarah", "What am I allergic to?", "en")
        assert rig.texts() == ["You haven't told me about any allergies."], "the son's allergy is not hers"
        await rig.close()

    run(scenario())


def test_a_corrected_name_is_not_replayed_to_the_tiny_model(fresh):
    """ "We've got a dog named Rex." then "Actually my dog is called Max, not Rex.": the model's
    next prompt has Max in its facts and no message of the history that says Rex (the held-out
    sweep: a 135M model kept talking about Rex from its history after the correction)."""

    async def scenario():
        rig = Rig(fresh, memory=DictMemory(), profile="tiny")
        await rig.engine.run_turn("sam", "We've got a dog named Rex.", "en")
        assert rig.texts() == ["Got it — your dog is called Rex.", "I'll keep that in mind."]
        fresh.script(fake.text("Rex loves the park!"))
        await rig.engine.run_turn("sam", "What should we do this weekend?", "en")
        assert any("Rex" in (m.get("content") or "") for m in fresh.requests[0]["messages"][1:])
        await rig.engine.run_turn("sam", "Actually my dog is called Max, not Rex.", "en")
        fresh.script(fake.text("You could play fetch with Max indoors."))
        await rig.engine.run_turn("sam", "What could we do together on a rainy day?", "en")
        messages = fresh.requests[-1]["messages"]
        assert "Sam's dog is called Max." in messages[0]["content"] or "dog is called Max." in messages[0]["content"]
        assert not any("Rex" in (m.get("content") or "") for m in messages), messages
        assert any(m["role"] == "assistant" for m in messages[1:]), "the rest of the history is still there"
        await rig.close()

    run(scenario())


def test_a_tiny_request_for_food_ideas_is_answered_from_the_table_without_the_households_allergens(fresh):
    """ "What should I have for a snack?" on the tiny profile: two ideas from
    config/food_ideas.csv free of the son's peanuts and the user's eggs, said with what they are
    free of, and no model call (the 135M model answered "What kind of tea do you want?");
    in Chinese too, where the English-only model had only an apology."""
    memory = DictMemory()

    async def profile(owner):
        return [
            "fact:health:allergy:peanut:son=User's son Oliver is allergic to peanuts.",
            "fact:health:allergy:egg=User is allergic to eggs.",
        ]

    memory.profile = profile

    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        trace = await rig.engine.run_turn("sarah", "What should I have for a snack?", "en")
        spoken = " ".join(rig.texts())
        assert trace.path == "food" and not fresh.requests, spoken
        assert spoken.startswith("How about ") and spoken.endswith("Both are free of peanuts and eggs."), spoken
        assert not re.search(r"peanut butter|satay|egg(?!s\.)|cake|cookie|omelette", spoken, re.I), spoken
        rig.pieces.clear()
        trace = await rig.engine.run_turn("sarah", "晚饭做什么菜好呢？", "zh")
        said = "".join(rig.texts())
        assert trace.path == "food" and said.startswith("试试") and said.endswith("都不含花生、鸡蛋。"), said
        assert not re.search(r"蛋(?!。)|花生(?!、)", said.removesuffix("都不含花生、鸡蛋。")), said
        await rig.close()

    run(scenario())


def test_a_capable_reply_never_offers_the_allergen_and_its_prompt_lists_it_first(fresh):
    memory = DictMemory()

    async def profile(owner):
        return ["fact:occupation=User is a nurse.", "fact:health:allergy:peanut=User is allergic to peanuts."]

    memory.profile = profile

    async def scenario():
        rig = Rig(fresh, memory=memory, judge=False)
        fresh.script(fake.text("Try chicken satay tonight. ", "Or a fresh salad with lemon."))
        await rig.engine.run_turn("tom", "What should I cook tonight?", "en")
        assert [p.text for p in rig.pieces if p.text] == ["Or a fresh salad with lemon."]
        system = fresh.requests[0]["messages"][0]["content"]
        remembered = system[system.index("What you remember") :].splitlines()
        assert remembered[1:3] == ["- User is allergic to peanuts.", "- User is a nurse."], remembered
        await rig.close()

    run(scenario())


def test_a_long_first_sentence_goes_out_at_its_first_clause_with_its_comma(fresh):
    """The tiny profile releases a long first sentence at its first comma; that piece is said
    with its comma (a pause for the voice), and the rest follows as its own piece."""

    async def scenario():
        rig = Rig(fresh, profile="tiny")
        [stream] = fresh.script(
            fake.text("Well, you know what they say, ", "there's a lot to see. ", "Bye.", gate_after=1)
        )
        task = rig.engine.submit("tom", "Tell me about the world.", "en")
        await rig.wait_pieces(lambda ps: len(ps) >= 1, "the first clause")
        assert rig.texts() == ["Well, you know what they say,"]
        assert not stream.finished.is_set(), "the first clause goes out while the model still writes"
        stream.gate.set()
        await task
        assert rig.texts() == ["Well, you know what they say,", "there's a lot to see.", "Bye."]
        assert_one_reply(rig.pieces)
        await rig.close()

    run(scenario())


def test_a_self_statement_is_stored_even_when_the_reply_is_interrupted(fresh):
    """The session knows "my name is Tom" at once; an interrupt that cuts the reply must not
    leave memory without it (else the name is gone after a restart)."""
    memory = DictMemory()

    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        fresh.script(fake.text("Jazz is lovely. ", "And more.", gate_after=1))
        # (a name alone is greeted without the model: the statement comes with a chat line)
        task = rig.engine.submit("tom", "Hi, my name is Tom. Do you like jazz?", "en")
        await rig.wait_pieces(lambda ps: len(ps) >= 1)
        rig.engine.interrupt()
        with pytest.raises(asyncio.CancelledError):
            await task
        await rig.engine.settle()
        assert [(o, c, confirmed) for o, c, _t, confirmed in memory.stored] == [("tom", "User's name is Tom.", True)]
        await rig.close()

    run(scenario())


# -- outbound sanitising: what a published piece may contain ---------------------------------------

MARKUP_LEAK = re.compile(r"[<>{}`*#|\[\]]|think|remember|arguments|tool_call|http|secret-", re.I)


def test_think_tool_calls_and_markdown_never_reach_a_piece_or_the_history(fresh):
    """One character per delta: every blob is split across deltas and has sentence ends inside."""
    answer = (
        "<think>Plan. Note it first.</think>**Sure!** I noted it.\n"
        '{"name": "remember", "arguments": {"content": "Tea. Green. secret-1"}}\n'
        '```json\n{"a": 1}. x.\n```\n'
        "## Next\n- We can go for a *quiet* walk, see [the map](https://maps.example/?k=secret-2)"
    )

    async def scenario():
        rig = Rig(fresh, judge=False)
        fresh.script(fake.text(*answer))
        trace = await rig.engine.run_turn("alice", "note that I like green tea", "en")
        assert rig.texts() == ["Sure! I noted it.", "Next", "We can go for a quiet walk, see the map."]
        assert_one_reply(rig.pieces)
        assert not any(MARKUP_LEAK.search(t) for t in rig.texts())
        assert rig.engine.history("alice")[-1]["content"] == " ".join(rig.texts()), "history holds what was said"
        assert {
            "think block",
            "tool-call json",
            "code block",
            "markdown heading mark",
            "markdown list mark",
            "markdown emphasis",
            "link target",
        } <= {k.split(" (")[0].split(" ", 1)[1] for k in trace.outbound.split(", ")}
        assert "secret" not in trace.outbound and "remember" not in trace.outbound
        await rig.close()

    run(scenario())


def test_a_judge_message_with_markup_is_cleaned_while_it_streams(fresh):
    message = 'Of course! {"name": "remember", "arguments": {"content": "a. b"}} I will **remember** that.'

    async def scenario():
        rig = Rig(fresh)
        fresh.script(fake.judge_finish(message, pieces=len(message)))
        await rig.engine.run_turn("alice", "keep it in mind", "en")
        assert rig.texts() == ["Of course!", "I will remember that."]
        await rig.close()

    run(scenario())


def test_a_template_token_ends_the_reply_and_closes_the_stream(fresh):
    async def scenario():
        rig = Rig(fresh, judge=False)
        [stream] = fresh.script(
            fake.text("Good night, ", "sleep well<|im", "_end|><|im_start|>user\n", "Tell me a story.", gate_after=3)
        )
        await rig.engine.run_turn("alice", "good night", "en")
        assert await wait_thread_event(stream.closed), "the rest of the stream is not this reply: it is closed"
        assert not stream.finished.is_set()
        assert rig.texts() == ["Good night, sleep well."]
        assert "template token" in rig.engine.traces[-1].outbound
        await rig.close()

    run(scenario())


def test_an_answer_with_nothing_speakable_gets_the_no_answer_line_after_the_filler(fresh):
    async def scenario():
        rig = Rig(fresh)
        fresh.script(
            fake.judge_tool("tea"),
            fake.loop_finish(),
            fake.text("<think>I'll call the tool.</think>", '<tool_call>{"name": "lookup"}</tool_call>'),
        )
        await rig.engine.run_turn("alice", "what tea do I like", "en")
        assert rig.texts() == [Persona().line("filler", "en", 1), Persona().line("no_answer", "en", 1)]
        assert [p.source for p in rig.pieces] == ["filler", "fallback"]
        assert_one_reply(rig.pieces)
        await rig.close()

    run(scenario())


def test_qa_answers_and_broadcasts_pass_the_same_gate(fresh, tmp_path):
    table = tmp_path / "qa.csv"
    table.write_text(
        "问题,答案\n你是谁,**我是Fay**。[详情](https://fay.example/about)\nsecret,```rm -rf /tmp/x``` <br/>\n",
        encoding="utf-8",
    )

    async def scenario():
        rig = Rig(fresh, qa=QaTable.load(table, threshold=0.8))
        await rig.engine.run_turn("alice", "你是谁", "zh")
        assert rig.texts() == ["我是Fay。", "详情"] and {p.source for p in rig.pieces} == {"qa"}
        assert rig.engine.history("alice")[-1]["content"] == "我是Fay。 详情"
        rig.pieces.clear()
        await rig.engine.run_turn("alice", "secret", "en")
        assert rig.texts() == [Persona().line("no_answer", "en", 2)] and rig.pieces[0].source == "fallback"
        rig.pieces.clear()
        await rig.engine.speak_first("alice", line="# Notice\nDinner is at **six**.", language="en").task
        assert rig.texts() == ["Notice", "Dinner is at six."] and {p.source for p in rig.pieces} == {"proactive"}
        rig.pieces.clear()
        await rig.engine.speak_first("alice", line='{"name": "remember", "arguments": {}}', language="en").task
        assert rig.pieces == [], "a proactive line with nothing speakable is not sent (nobody asked for it)"
        assert fresh.requests == []
        await rig.close()

    run(scenario())


def test_a_persona_line_with_nothing_speakable_is_refused_at_start():
    persona = Persona(no_answer={"en": ["```sorry```"]})
    with pytest.raises(ValueError, match="no_answer line for 'en' has nothing speakable"):
        DialogueEngine(persona, None, lambda _p: None)


@pytest.mark.parametrize("profile", ["tiny", "capable"])
def test_a_proactive_prompt_is_the_models_own_opener_never_the_users_words(fresh, profile):
    async def scenario():
        rig = Rig(fresh, memory=DictMemory(), profile=profile, judge=False)
        fresh.script(fake.text("Good morning, Tom! ", "Did you sleep well?"))
        turn = rig.engine.speak_first("tom", prompt="Greet the user and ask how they slept.", language="en")
        await turn.task
        assert rig.texts() == ["Good morning, Tom!", "Did you sleep well?"]
        assert {p.source for p in rig.pieces} == {"proactive"} and rig.pieces[0].conversation_id == turn.conversation_id
        # the instruction went to the model as the last message, and stays out of the history
        assert "Greet the user and ask how they slept." in fresh.requests[-1]["messages"][-1]["content"]
        assert rig.engine.history("tom") == [{"role": "assistant", "content": "Good morning, Tom! Did you sleep well?"}]
        await rig.close()

    run(scenario())


def test_a_proactive_prompt_says_nothing_when_the_model_fails_or_recites_it(fresh):
    async def scenario():
        rig = Rig(fresh, profile="tiny")
        fresh.script(fake.status(503))
        await rig.engine.speak_first("tom", prompt="Remind the user to drink water.", language="en").task
        assert rig.pieces == [], "nobody asked: no apology for a failed proactive line"
        fresh.script(fake.text("Speak to me first, in one or two short sentences: Remind the user to drink water."))
        await rig.engine.speak_first("tom", prompt="Remind the user to drink water.", language="en").task
        assert rig.pieces == [] and rig.engine.history("tom") == []
        await rig.close()

    run(scenario())


def test_a_proactive_line_never_talks_over_the_users_running_turn(fresh):
    async def scenario():
        rig = Rig(fresh, profile="tiny")
        fresh.script(fake.text("Sure, ", "once upon a time.", gate_after=1))
        running = rig.engine.start("tom", "tell me a story", "en")
        assert rig.engine.speak_first("tom", line="Time for a break!") is None
        assert rig.engine.speak_first("anna", line="Hello Anna.") is not None  # another user's turn is free
        running.task.cancel()
        await asyncio.gather(running.task, return_exceptions=True)
        await rig.close()

    run(scenario())


def test_warm_up_makes_the_model_client_without_asking_the_model(llm):
    """The first turn after start-up does not wait for the OpenAI SDK's import and client."""
    llm.reset()

    async def scenario():
        rig = Rig(llm)
        assert rig.engine.small._client is None
        await rig.engine.warm_up()
        assert rig.engine.small._client is not None
        assert llm.requests == [], "the warm-up of a capable profile asked the model"
        llm.script(fake.judge_finish("Hi there."))
        await asyncio.wait_for(rig.engine.submit("gus", "Hello.", "en"), WAIT)
        assert rig.texts() == ["Hi there."]
        await rig.close()

    run(scenario())
    llm.reset()


def test_a_story_asked_for_may_name_its_people_but_a_chat_reply_may_not(fresh):
    """The tiny flow's rule against names no one told of is for what is said of the user's life:
    it dropped a whole asked-for story ("Tell me a short story." got the no_answer line in the
    conversation bench); a chat reply that names a stranger still loses that sentence."""

    async def scenario():
        rig = Rig(fresh, memory=DictMemory(), profile="tiny")
        fresh.script(fake.text("Once there was a fox called Rufus. ", "He loved the snow."))
        await rig.engine.run_turn("ann", "Tell me a short story.", "en")
        assert [p.text for p in rig.pieces if p.text] == ["Once there was a fox called Rufus.", "He loved the snow."]
        rig.pieces.clear()
        # a title asked for names its people too (the whole answer was dropped: the no_answer line)
        fresh.script(fake.text("Try Casablanca, ", "with Humphrey Bogart."))
        await rig.engine.run_turn("ann", "what's a good film to watch?", "en")
        assert [p.text for p in rig.pieces if p.text] == ["Try Casablanca, with Humphrey Bogart."], rig.pieces
        rig.pieces.clear()
        fresh.script(fake.text("The weather is mild. ", "Your friend Bertie will visit."))
        await rig.engine.run_turn("ann", "What shall I do today?", "en")
        assert [p.text for p in rig.pieces if p.text] == ["The weather is mild."]
        await rig.close()

    run(scenario())
