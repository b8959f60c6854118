"""Multi-turn conversations through the real graph: the memory node (real SQLite) and the
dialogue node as processes, typed turns on `text_input`, replies collected from `reply`.

1. On the real embedded model (SmolLM2-135M, tiny profile): a scripted English
   conversation. The companion uses the user's name and stated likes correctly turns
   later; never leaks role labels, judge JSON, think text or tool names; never sends emoji,
   an empty reply or the apology; keeps within the persona's sentence limit. After both
   nodes restart, a new conversation still knows the name; a candidate never wins over it.
2. The same conversation against a scripted capable endpoint (a loopback server that reads
   its prompt): the judge → tool loop → final reply path is unchanged there, and the tool
   results come from the real memory node.
3. Chinese: the tiny profile answers a Chinese turn honestly in Chinese from the persona;
   a capable endpoint gets the turn and answers in Chinese.
4. Personal facts on the real embedded model, English and Chinese: occupation, a daughter's
   coming birthday and a peanut allergy are acknowledged, answered from memory (also after
   both nodes restart), and a snack suggestion offers no peanut.
5. When-questions on the real embedded model, English and Chinese: "when did I go hiking?"
   is answered with the absolute date the heard turn named (memory/search_evidence), not by
   the model.
"""

from __future__ import annotations

import datetime
import json
import re
import uuid

import emoji
import pytest
from diagnostic_msgs.msg import DiagnosticStatus

import dialogue_fake_llm as fake
from fay_msgs.msg import Transcript, Utterance
from fay_msgs.srv import GetProfile, Remember
from fay_ros.common import topics
from fay_ros.common.paths import config_file
from fay_ros.dialogue.persona import Persona
from fay_ros.memory import health
from fay_ros.text.when import format_date
from fay_ros.text.words import CJK_IDEOGRAPHS, has_cjk
from harness import EMBEDDED_PATIENCE, NodeProcess, RosProbe, wait_until

PERSONA = Persona.load(config_file("persona.yaml"))
USER = "tom"
TOOL_NAMES = ("current_time", "memory_recall", "memory_remember", "memory_forget")
LEAKS = re.compile(
    r"\b(?:user|assistant|system|human|fay|tom)\s*:|<\||\|>|<think|</think|[{}]|\"action\"|"
    r"\bjudge\b|\bjson\b|\bas an ai\b|\bthe user\b|" + "|".join(TOOL_NAMES),
    re.I,
)
SENTENCE_END = re.compile(r"[.!?。！？…~]['\"”’)）]*$")
CLAIMS_USER_NAME = re.compile(r"\b(?:my name is|my name's|i am|i'm|call me)\s+tom\b", re.I)

# (what the user types, words the answer must contain: the user's facts said back)
CONVERSATION = [
    ("Hi Fay, my name is Tom.", ()),
    ("I like hiking and coffee.", ()),
    ("How are you today?", ()),
    ("Tell me something about the sea.", ()),
    ("What's my name?", ("Tom",)),
    ("What should I do this weekend?", ()),
    ("What do I like?", ("hiking", "coffee")),
    ("I have a sister called Anna.", ()),
    ("Can you tell me a joke?", ()),
    ("Who is my sister?", ("Anna",)),
    ("Thank you, good night!", ()),
]


class Companion:
    """The memory and dialogue nodes as processes, and a probe that types and listens."""

    def __init__(self, db: str, dialogue_params: dict) -> None:
        self.db = db
        self.dialogue_params = EMBEDDED_PATIENCE | dialogue_params
        self.probe = RosProbe(f"conversation_probe_{uuid.uuid4().hex[:6]}")
        self.replies = self.probe.collect(Utterance, topics.REPLY)
        self.typed = self.probe.publisher(Transcript, topics.TEXT_INPUT)
        self.nodes: list[NodeProcess] = []
        try:
            self.start()
        except BaseException:
            # a companion that never came up leaves no nodes behind (a CI run: the nodes of one
            # that timed out here answered the next tests' turns beside their own companion's)
            self.close()
            raise

    def start(self) -> None:
        self.nodes = [
            NodeProcess("fay_ros.nodes.memory", {"db_path": self.db, "embedder": "hashed"}),
            NodeProcess("fay_ros.nodes.dialogue", self.dialogue_params),
        ]
        # ready = both subscribe to text_input, the dialogue publishes replies, memory answers;
        # matched with these nodes' own endpoints (after a restart a count could still be the
        # stopped nodes', and a line typed then was lost: CI flake)
        for name in ("memory", "dialogue"):
            self.probe.wait_subscribed(self.typed, name, timeout=60)
        self.probe.wait_matched(self.replies, "dialogue", timeout=60)
        # and the dialogue can call memory (until then a turn answers without the user's facts:
        # after a restart, "Do you remember my name?" was told memory was out of reach)
        self.probe.wait_status("fay/dialogue: memory", lambda s: s.level == DiagnosticStatus.OK, timeout=60)
        # memory answers the probe too (as long as the waits above on a loaded 2-core CI machine:
        # a CI run's restarted memory node first answered after more than 30 s)
        self.profile(timeout=60)

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.stop()

    def restart(self) -> None:
        self.stop()
        # the stopped nodes' endpoints leave the graph before the new ones are looked for
        wait_until(
            lambda: (
                not self.probe.node.get_subscriptions_info_by_topic(self.typed.topic_name)
                and not self.probe.node.get_publishers_info_by_topic(self.replies.subscription.topic_name)
            ),
            30,
            message="the stopped nodes' text_input and reply endpoints to leave the graph",
        )
        self.start()

    def close(self) -> None:
        self.stop()
        self.probe.close()

    def output(self) -> str:
        # more than one memory server in the graph would answer some recalls from another store
        servers = self.probe.node.count_services(f"{topics.DEFAULT_NAMESPACE}/{topics.SRV_RECALL}")
        return "\n".join(
            [
                f"memory/recall servers in the graph: {servers}",
                *(f"----- {n.module} -----\n{n.output()[-4000:]}" for n in self.nodes),
            ]
        )

    def say(self, text: str, user: str = USER, language: str = "", timeout: float = 120) -> list[Utterance]:
        """Type one line; return the whole reply (every Utterance of its conversation)."""
        seen = {m.conversation_id for m in self.replies.messages}
        self.typed.publish(Transcript(text=text, user_id=user, language=language, is_final=True, confidence=1.0))
        end = self.replies.wait_for_match(lambda m: m.is_end and m.conversation_id not in seen, timeout=timeout)
        return [m for m in self.replies.messages if m.conversation_id == end.conversation_id]

    def profile(self, owner: str = USER, timeout: float = 30) -> list[str]:
        return list(self.probe.call(GetProfile, topics.SRV_PROFILE, GetProfile.Request(owner=owner), timeout).facts)


def spoken(reply: list[Utterance]) -> str:
    return " ".join(m.text for m in reply if m.text and m.source != "filler")


def check_reply(question: str, reply: list[Utterance], must_contain: tuple[str, ...]) -> None:
    """The quality bar of every answer, whatever the model."""
    where = f"answer to {question!r}: {[(m.source, m.text) for m in reply]}"
    assert [m.seq for m in reply] == list(range(len(reply))), where
    assert reply[-1].is_end and sum(m.is_end for m in reply) == 1, where
    text = spoken(reply)
    assert text.strip(), "empty reply; " + where
    assert not any(m.source == "fallback" for m in reply), "the apology or no-answer line; " + where
    assert text not in PERSONA.apologies["en"], where
    assert not LEAKS.search(text), f"leak {LEAKS.search(text).group(0)!r}; " + where
    assert not CLAIMS_USER_NAME.search(text), "Fay introduced herself with the user's name; " + where
    assert emoji.emoji_count(text) == 0, "emoji; " + where
    pieces = [m for m in reply if m.text.strip() and m.source != "filler"]
    sentences = [m for m in pieces if SENTENCE_END.search(m.text)]
    assert len(sentences) <= PERSONA.max_sentences, f"{len(sentences)} sentences; " + where
    # the pieces that are not whole sentences: a long first sentence's first clause, and a
    # semicolon's clause (the splitter speaks it as a piece of its own: fay_ros.text.sentences;
    # "…a body of water;" then "it's also…"), which the sentence limit does not count, as the guard
    assert all(
        (m is pieces[0] and m.text.rstrip().endswith((",", ":", "，", "：", "、")))
        or m.text.rstrip().endswith((";", "；"))
        for m in pieces
        if m not in sentences
    ), "a fragment was spoken; " + where
    for word in must_contain:
        assert word.lower() in text.lower(), f"{word!r} missing; " + where


def run_conversation(companion: Companion) -> list[list[Utterance]]:
    replies = []
    for question, must_contain in CONVERSATION:
        reply = companion.say(question)
        check_reply(question, reply, must_contain)
        replies.append(reply)
    return replies


def check_memory_after(companion: Companion) -> None:
    """The user's own statements are confirmed keyed facts in memory; a restart keeps them,
    and a candidate (not the user's word) never reaches an answer."""
    expected = {
        "fact:name=User's name is Tom.",
        "preference:taste:hiking=User likes hiking.",
        "preference:taste:coffee=User likes coffee.",
        "fact:family:sister=User's sister is called Anna.",
    }
    wait_until(
        lambda: expected <= set(companion.profile()),
        30,
        message=lambda: f"the facts in memory; profile has {companion.profile()}",
    )
    companion.restart()
    companion.probe.call(
        Remember,
        topics.SRV_REMEMBER,
        Remember.Request(
            owner=USER, content="User's name is Bob.", key="name", tags=["kind:fact"], user_confirmed=False
        ),
        30,
    )
    reply = companion.say("Do you remember my name?")
    check_reply("Do you remember my name? (after a restart)", reply, ("Tom",))
    assert "Bob" not in spoken(reply), "a candidate reached an answer"


# -- 1. the real embedded model -------------------------------------------------------------


@pytest.mark.slow
def test_conversation_on_the_embedded_model(embedded_llm, tmp_path):
    url, server = embedded_llm
    companion = Companion(str(tmp_path / "memory.db"), {"base_url": url, "memory_timeout": 2.0})
    try:
        replies = run_conversation(companion)
        sources = [{m.source for m in r} for r in replies]
        assert {"memory"} in sources, f"facts questions are answered from memory: {sources}"
        # (the name in the first line is greeted without the model, as the tiny profile does)
        assert sources[0] == {"memory"}, f"the name is greeted from what was said: {sources}"
        # (the four chat turns; the tastes are acknowledged from what was said, as the tiny profile does)
        assert sum("llm" in s for s in sources) >= 4, f"the model answers the chat turns: {sources}"
        assert sources[1] == {"memory"}, f"the tastes are acknowledged from what was said: {sources}"
        check_memory_after(companion)
        assert server.alive()
    except BaseException:
        print(companion.output())
        raise
    finally:
        companion.close()


# -- 2. a scripted capable endpoint ---------------------------------------------------------


def capable_model(body: dict) -> fake.Scripted:
    """A loopback stand-in for a cloud model: follows the judge format, calls memory_recall
    for questions about the user, answers from the tool results, in the user's language."""
    messages = body["messages"]
    question = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    chinese = has_cjk(question)
    about_user = bool(re.search(r"\bmy\b|\bwhat do i\b|我叫什么|我喜欢什么", question, re.I))
    if body.get("response_format"):  # the chat judge
        if about_user and "?" in question or "？" in question:
            return fake.judge_tool("user facts")
        small_talk = {
            "hi fay": "Hello Tom, nice to meet you!",
            "i like": "Oh, nice! Tell me more.",
            "how are": "I'm doing great, thanks for asking.",
            "sea": "The sea is deep and full of life.",
            "weekend": "A walk in the park would be nice.",
            "sister": "Sisters are wonderful.",
            "joke": "Why did the robot cross the road? To recharge!",
            "night": "Good night, sleep well!",
        }
        message = next((v for k, v in small_talk.items() if k in question.lower()), "That sounds lovely.")
        return fake.judge_finish("你好呀！很高兴和你聊天。" if chinese else message)
    if body.get("tools"):  # the tool loop
        if not any(m["role"] == "tool" for m in messages):
            return fake.tool_call("memory_recall", json.dumps({"query": question}))
        return fake.loop_finish("found the facts")
    # the final reply: answer from what the prompt holds (tool results, the conversation)
    everything = " ".join(str(m.get("content") or "") for m in messages)
    if "name" in question.lower():
        name = re.search(r"User's name is (\w+)", everything)
        return fake.text(f"Your name is {name.group(1)}." if name else "I don't know your name yet.")
    if "sister" in question.lower():
        sister = re.search(r"sister (?:is )?called (\w+)", everything)
        return fake.text(f"Your sister is called {sister.group(1)}." if sister else "You haven't told me.")
    likes = re.findall(r"User likes (\w+)", everything) or re.split(
        r" and |, ", (re.search(r"I like ([\w ,]+)", everything) or re.match("()", "")).group(1)
    )
    likes = sorted({x.strip() for x in likes if x.strip()})
    return fake.text(f"You like {' and '.join(likes)}." if likes else "You haven't told me.")


@pytest.fixture
def capable(tmp_path):
    server = fake.ScriptedLlm()
    server.responder = capable_model
    # The tool results must come from the real memory node; in a loaded full suite one memory
    # call has taken over 2 s (the memory service's delivery stalls, a known open problem), so
    # this path is given 5 s: what is tested here is the judge -> tool loop -> reply path.
    companion = Companion(
        str(tmp_path / "memory.db"), {"base_url": server.base_url, "model": "cloud-large", "memory_timeout": 5.0}
    )
    try:
        yield server, companion
    except BaseException:
        print(companion.output())
        # what the model was given in the last turn (a missing fact shows where it was lost)
        for request in server.requests[-4:]:
            print(json.dumps(request["messages"], ensure_ascii=False)[-3000:])
        raise
    finally:
        companion.close()
        server.close()


def test_conversation_on_a_capable_endpoint_keeps_the_judge_and_tool_path(capable):
    server, companion = capable
    replies = run_conversation(companion)
    # every model turn starts with the judge (structured output requested)...
    judged = [r for r in server.requests if r.get("response_format")]
    assert len(judged) == sum(1 for r in replies if any(m.source != "qa" for m in r))
    # ...and the questions about the user went judge -> filler -> tool loop -> final reply
    for (_question, must_contain), reply in zip(CONVERSATION, replies):
        if must_contain:
            assert reply[0].source == "filler" and reply[0].text in PERSONA.fillers["en"], reply
    tool_results = [m["content"] for r in server.requests for m in r["messages"] if m["role"] == "tool"]
    assert any("User's name is Tom." in t for t in tool_results), "memory_recall answered from the memory node"
    check_memory_after(companion)


# -- 3. Chinese -----------------------------------------------------------------------------


@pytest.mark.slow
def test_chinese_turn_on_the_tiny_profile_gets_an_honest_chinese_answer(embedded_llm, tmp_path):
    url, _server = embedded_llm
    companion = Companion(str(tmp_path / "memory.db"), {"base_url": url})
    try:
        reply = companion.say("给我讲一个关于大海的故事吧")
        assert "".join(m.text for m in reply) == PERSONA.line("unsupported_language", "zh"), reply
        assert "fay-ros models pull qwen2.5-1.5b-instruct" in spoken(reply)
        assert re.search(f"[{CJK_IDEOGRAPHS}]{{10}}", spoken(reply))
        # what the user says about themselves is still kept, in any language
        reply = companion.say("我叫林。我喜欢咖啡。")
        wait_until(
            lambda: "fact:name=用户的名字是林。" in companion.profile(),
            30,
            message=lambda: f"the Chinese name fact; profile has {companion.profile()}",
        )
        reply = companion.say("我叫什么名字？")
        assert spoken(reply) == "你叫林。", reply
    finally:
        companion.close()


def test_chinese_turn_on_a_capable_endpoint_is_answered_in_chinese(capable):
    server, companion = capable
    reply = companion.say("今天天气真好，我们聊聊天吧。")
    assert "".join(m.text for m in reply) == "你好呀！很高兴和你聊天。", reply
    assert server.requests[0]["response_format"]["type"] == "json_schema"


# -- 4. personal facts on the embedded model -------------------------------------------------

PEANUT_WORDS = re.compile(
    "|".join(re.escape(w) for w in (*health.ALLERGENS[0].en, *health.ALLERGENS[0].foods_en, "peanut", "花生")), re.I
)


def coming_sunday(today: datetime.date) -> datetime.date:
    return today + datetime.timedelta(days=(6 - today.weekday()) % 7)


def offered(text: str) -> str:
    """What a reply offers: without the food ideas' closing "Both are free of peanuts." (a
    warning names the allergen, and offers nothing)."""
    return re.sub(r"\s*(?:Both are|It is) free of [^.]*\.$", "", text)


@pytest.mark.slow
def test_personal_facts_are_answered_from_memory_and_a_snack_is_never_peanuts(embedded_llm, tmp_path):
    url, _server = embedded_llm
    # the memory's first answers after the restart below come from a fresh process on a busy
    # machine: its default 0.5 s budget left a CI run's profile unread ("You haven't told me…")
    companion = Companion(str(tmp_path / "memory.db"), {"base_url": url, "memory_timeout": 2.0})
    try:
        sunday = coming_sunday(datetime.date.today())
        for statement in ("I teach chemistry.", "My daughter Lena turns seven on Sunday.", "I am allergic to peanuts."):
            reply = companion.say(statement)
            assert spoken(reply).startswith("Got it") and {m.source for m in reply if m.text} == {"memory"}, reply
        assert spoken(companion.say("What do I do for a living?")) == "You teach chemistry."
        said = spoken(companion.say("How old will my daughter be?"))
        if sunday == datetime.date.today():
            assert said == "Lena turns seven today!", said
        else:
            assert "seven" in said and f"{sunday.day} {sunday:%B} {sunday.year}" in said, said
        assert spoken(companion.say("What am I allergic to?")) == "You're allergic to peanuts."
        for question in ("Can you suggest a snack?", "What should I eat for a snack tonight?"):
            reply = companion.say(question)
            assert not PEANUT_WORDS.search(offered(spoken(reply))), reply
            assert spoken(reply) != PERSONA.line("apology", "en"), reply
        # Chinese: acknowledged and answered in Chinese, not the English-only apology
        reply = companion.say("我是化学老师。")
        assert spoken(reply) == "好的，我记住了：你是化学老师。", reply
        assert spoken(companion.say("我对花生过敏。")) == "好的，我记住了：你对花生过敏。"
        assert spoken(companion.say("我对什么过敏？")) == "你对花生过敏。"
        assert spoken(companion.say("我是做什么工作的？")) == "你是化学老师。"
        said = spoken(companion.say("我女儿几岁了？"))
        assert "Lena" in said and ("七岁" in said or "六岁" in said) and has_cjk(said), said
        # from memory, not only the session: the facts were stored confirmed and come back
        wait_until(
            lambda: any(f.startswith("fact:health:allergy:peanut=") for f in companion.profile()),
            30,
            message=lambda: f"the allergy in the profile; it has {companion.profile()}",
        )
        companion.restart()
        assert spoken(companion.say("What am I allergic to?")) == "You're allergic to peanuts."
        assert spoken(companion.say("我是做什么工作的？")) == "你是化学老师。"
        reply = companion.say("Any ideas for a quick snack?")
        assert not PEANUT_WORDS.search(offered(spoken(reply))), reply
        assert spoken(reply).endswith("free of peanuts."), "the food ideas say what they are free of"
    except BaseException:
        print(companion.output())
        raise
    finally:
        companion.close()


# -- 5. when-questions on the embedded model --------------------------------------------------


@pytest.mark.slow
def test_when_questions_are_answered_with_the_absolute_date(embedded_llm, tmp_path):
    url, _server = embedded_llm
    companion = Companion(str(tmp_path / "memory.db"), {"base_url": url, "memory_timeout": 2.0})
    try:
        today = datetime.date.today()
        companion.say("Yesterday I went hiking with Ella.")
        companion.say("前天我去了长城。")
        reply = companion.say("When did I go hiking?")
        said = spoken(reply)
        assert format_date(today - datetime.timedelta(days=1), False) in said and "hiking" in said, reply
        assert {m.source for m in reply if m.text} == {"memory"}, reply
        reply = companion.say("我什么时候去的长城？")
        day = today - datetime.timedelta(days=2)
        said = spoken(reply)
        assert f"{day.year}年{day.month}月{day.day}日" in said and "长城" in said, reply
    except BaseException:
        print(companion.output())
        raise
    finally:
        companion.close()
