"""The embedded default never harms (issue 37, part 3), through the real DialogueEngine and
the scripted loopback LLM (test/dialogue_fake_llm.py):

1. the reply guard never drops a right answer because an earlier reply said the same
   (many users asking the same question again and again; an emoji-only turn between), and
   still cuts a reply that loops within itself and drops the user's words parroted back;
2. a model sentence that contradicts a stored fact about the user is replaced by the fact;
3. Chinese on the English-only embedded model names the commands that pull and use a
   bilingual model, once per session in full, then shorter; a bilingual model answers.
"""

from __future__ import annotations

import asyncio
import json

import dialogue_fake_llm as fake
from fay_ros.dialogue.persona import Persona
from fay_ros.dialogue.settings import EngineConfig, engine_settings
from fay_ros.llm.embedded import EMBEDDED_MODEL
from fay_ros.llm.profiles import TinyDecoding
from test_dialogue_engine import Rig, run

NO_ANSWER = Persona().no_answer


def spoken(rig: Rig) -> list[str]:
    return [p.text for p in rig.pieces if p.text]


# -- 1. repeats --------------------------------------------------------------------------------


def test_many_users_asking_the_same_question_again_all_get_the_right_answer(llm):
    """20 users, 10 questions each, the same right answer every time: none is dropped (before
    issue 37, 140 of 200 were the no_answer line, "reply guard: 1 repeated")."""
    llm.reset()
    answer = "The secret word is pineapple."
    llm.default = lambda: fake.text("The secret word ", "is pineapple.")
    users = [f"u{n:02d}" for n in range(20)]

    async def scenario():
        rig = Rig(llm, profile="tiny")
        traces = []
        for line in range(10):
            traces += await asyncio.gather(
                *(rig.engine.run_turn(u, f"Line {line} from {u}: what is the secret word?", "en") for u in users)
            )
        said = spoken(rig)
        assert len(said) == 200 and said.count(answer) == 200, [s for s in said if s != answer][:5]
        assert not any(t.guard != "nothing dropped" for t in traces), {t.guard for t in traces}
        assert not any(s in NO_ANSWER["en"] for s in said)
        await rig.close()

    run(scenario())


def test_a_right_answer_after_an_emoji_only_turn_is_said(llm):
    llm.reset()

    async def scenario():
        for profile, script in (
            ("tiny", fake.text),
            ("capable", fake.judge_finish),
        ):
            rig = Rig(llm, profile=profile)
            llm.script(script("The secret word is pineapple."))
            await rig.engine.run_turn("tom", "What is the secret word?", "en")
            llm.script(script("😊"))
            await rig.engine.run_turn("tom", "😊", "en")
            rig.pieces.clear()
            llm.script(script("The secret word is pineapple."))
            trace = await rig.engine.run_turn("tom", "What is the secret word?", "en")
            assert spoken(rig) == ["The secret word is pineapple."], (profile, spoken(rig), trace.guard)
            await rig.close()

    run(scenario())


def test_a_reply_that_loops_within_itself_is_still_cut(llm):
    llm.reset()

    async def scenario():
        rig = Rig(llm, profile="tiny")
        llm.script(
            fake.text("I love the sea. ", "I love the sea! ", "The sea is the sea is the sea is the sea. ", "Bye now.")
        )
        trace = await rig.engine.run_turn("tom", "Tell me about the sea.", "en")
        assert spoken(rig) == ["I love the sea."], spoken(rig)
        assert trace.guard == "1 loops, 1 repeated", trace.guard
        rig.pieces.clear()
        llm.script(fake.text("我喜欢大海我喜欢大海我喜欢大海我喜欢大海"))
        await rig.engine.run_turn("tom", "Tell me more about the sea.", "en")
        assert spoken(rig) == [Persona().line("no_answer", "en")], "nothing left of a loop: the plain line"
        await rig.close()

    run(scenario())


def test_a_reply_that_parrots_the_user_is_still_dropped(llm):
    llm.reset()

    async def scenario():
        rig = Rig(llm, profile="tiny")
        llm.script(fake.text("I went hiking with my neighbour today. ", "That sounds lovely!"))
        trace = await rig.engine.run_turn("tom", "I went hiking with my neighbour today.", "en")
        assert spoken(rig) == ["That sounds lovely!"], spoken(rig)
        assert trace.guard == "1 parrots the user", trace.guard
        await rig.close()

    run(scenario())


# -- 2. the user's facts win ------------------------------------------------------------------

CONTRADICTIONS = [
    # (what the user said, the model's answer, what is said)
    ("My name is Tom.", "Your name is Bob. Nice to see you!", ["Your name is Tom.", "Nice to see you!"]),
    ("I live in Leeds.", "You live in London. It rains a lot there.", ["You live in Leeds.", "It rains a lot there."]),
    (
        "I have two daughters.",
        "You have three daughters. Do they like books?",
        ["You have two daughters.", "Do they like books?"],
    ),
    ("I'm a nurse.", "You are a teacher. That is a busy job.", ["You are a nurse.", "That is a busy job."]),
    ("我住在上海。", "你住在北京。北京很大。", ["你住在上海。", "北京很大。"]),
    ("我有两个女儿。", "你有三个女儿。真热闹！", ["你有两个女儿。", "真热闹！"]),
    ("我叫林。", "你叫小明。很高兴见到你！", ["你叫林。", "很高兴见到你！"]),
]


def test_a_model_sentence_that_contradicts_a_stated_fact_is_replaced_by_the_fact(llm):
    """Tiny (the embedded default) and capable flows, English and Chinese: the wrong sentence is
    never said, the fact is said once in its place, the rest of the answer stays."""
    llm.reset()

    async def scenario():
        for profile, script in (("tiny", fake.text), ("capable", fake.judge_finish)):
            for n, (told, answer, expected) in enumerate(CONTRADICTIONS):
                # a tiny model that speaks Chinese (a small Qwen): the embedded one does not
                rig = Rig(llm, profile=profile, tiny=TinyDecoding(languages=("en", "zh")))
                user = f"{profile}{n}"
                llm.script(script("Got it."))  # a capable model hears the statement; tiny acknowledges it
                await rig.engine.run_turn(user, told, "")
                llm.reset()  # the tiny flow acknowledges most statements without the model
                rig.pieces.clear()
                llm.script(script(answer))
                trace = await rig.engine.run_turn(user, "Tell me about my life." if n < 4 else "说说我的生活吧。", "")
                assert spoken(rig) == expected, (profile, told, spoken(rig))
                assert trace.guard == "1 contradicts a fact (replaced)", trace.guard
                await rig.close()

    run(scenario())


def test_a_contradiction_after_the_fact_was_said_is_dropped_not_said_twice(llm):
    llm.reset()

    async def scenario():
        rig = Rig(llm, profile="tiny")
        await rig.engine.run_turn("tom", "I live in Leeds.", "en")
        rig.pieces.clear()
        llm.script(fake.text("You live in Leeds. ", "You live in London, I think. ", "Leeds is lovely."))
        # (not a question about what he told: "where do I go shopping?" is answered "I don't
        # remember you telling me that" without the model)
        trace = await rig.engine.run_turn("tom", "What's nice to do around here?", "en")
        assert spoken(rig) == ["You live in Leeds.", "Leeds is lovely."], spoken(rig)
        assert trace.guard == "1 contradicts a fact", trace.guard
        # what agrees with the fact, is about someone else or about the companion is left alone
        rig.pieces.clear()
        llm.script(
            fake.text("I live in London with my robot friends. ", "Do you live in London? ", "You live in Leeds!")
        )
        # (London asked about: a place no one named is the tiny model's invention, dropped)
        await rig.engine.run_turn("tom", "Have you ever been to London?", "en")
        assert spoken(rig) == [
            "I live in London with my robot friends.",
            "Do you live in London?",
            "You live in Leeds!",
        ]
        await rig.close()

    run(scenario())


# -- 3. Chinese on a model that is not bilingual ------------------------------------------------

PULL = "fay-ros models pull qwen2.5-1.5b-instruct"
USE = "fay-ros models use qwen2.5-1.5b-instruct"


def test_chinese_on_the_embedded_model_names_the_commands_once_then_shorter(llm):
    """The embedded SmolLM2 (tiny, English only) as `fay-ros chat` and the node configure it."""
    llm.reset()
    settings = engine_settings(EngineConfig(), base_url="http://127.0.0.1:18765/v1", model=EMBEDDED_MODEL)
    assert settings.profile == "tiny" and settings.tiny.languages == ("en",)

    async def scenario():
        rig = Rig(llm, profile=settings.profile, tiny=settings.tiny)
        trace = await rig.engine.run_turn("lin", "给我讲一个关于大海的故事吧", "zh")
        first = "".join(spoken(rig))
        assert trace.path == "language" and PULL in first and USE in first, first
        for _ in range(2):
            rig.pieces.clear()
            await rig.engine.run_turn("lin", "你觉得人生的意义是什么？", "zh")
            again = "".join(spoken(rig))
            assert USE in again and PULL not in again and len(again) < len(first) / 2, again
        rig.pieces.clear()
        await rig.engine.run_turn("wang", "你好", "zh")  # another user's session hears it all
        assert PULL in "".join(spoken(rig))
        assert not llm.requests, "no model call for a language it cannot speak"
        await rig.close()

    run(scenario())


def test_chinese_on_a_bilingual_model_gets_a_chinese_answer(llm):
    """qwen2.5-1.5b-instruct as `fay-ros models use` would configure it: on the embedded port
    (tiny flow, but bilingual) and on another server (capable flow): the Chinese turn goes to
    the model, whose prompt asks for the user's language, and its Chinese answer is said."""
    llm.reset()
    answer = "好的！从前有一片大海，海里住着一条小鱼。"

    async def scenario():
        for base_url, profile in (("http://127.0.0.1:18765/v1", "tiny"), ("http://127.0.0.1:11434/v1", "capable")):
            settings = engine_settings(EngineConfig(), base_url=base_url, model="qwen2.5-1.5b-instruct")
            assert settings.profile == profile and "zh" in settings.tiny.languages
            llm.reset()
            rig = Rig(llm, profile=settings.profile, tiny=settings.tiny)
            llm.script(fake.text(answer) if profile == "tiny" else fake.judge_finish(answer))
            trace = await rig.engine.run_turn("lin", "给我讲一个关于大海的故事吧", "zh")
            assert "".join(spoken(rig)) == answer and trace.path != "language", (profile, spoken(rig))
            prompt = json.dumps(llm.requests[0]["messages"], ensure_ascii=False)
            assert "language the user writes in" in prompt or "user's language" in prompt, prompt[:500]
            await rig.close()

    run(scenario())


def test_a_forecast_question_gets_the_honest_line_not_a_made_up_forecast(llm):
    """The embedded model, asked "what's the weather going to do?", forecast rain for tomorrow
    (an own long conversation): with no weather tool the tiny flow says it cannot see one."""
    llm.reset()

    async def scenario():
        rig = Rig(llm, profile="tiny")
        line = Persona().line("no_forecast", "en")
        for asked in ("what's the weather going to do?", "Is it going to rain tomorrow?", "what's the forecast"):
            rig.pieces.clear()
            trace = await rig.engine.run_turn("tom", asked, "en")
            assert trace.path == "forecast" and " ".join(spoken(rig)) == line, (asked, spoken(rig))
        assert not llm.requests, "no model call for a forecast it cannot know"
        # in Chinese too, which the tiny model does not speak: the line, not the language apology
        rig.pieces.clear()
        trace = await rig.engine.run_turn("tom", "今天天气怎么样？", "zh")
        assert trace.path == "forecast" and "".join(spoken(rig)) == Persona().line("no_forecast", "zh"), spoken(rig)
        # a joke asked for in Chinese: the persona's, in turn, not the language apology
        jokes = [Persona().line("jokes", "zh", index=i) for i in range(2)]
        for expected in jokes:
            rig.pieces.clear()
            trace = await rig.engine.run_turn("tom", "讲个笑话吧", "zh")
            assert trace.path == "joke" and "".join(spoken(rig)) == expected, spoken(rig)
        assert jokes[0] != jokes[1] and not llm.requests
        # a remark about the weather is talk, for the model
        llm.script(fake.text("It really is."))
        rig.pieces.clear()
        trace = await rig.engine.run_turn("tom", "lovely weather today, isn't it?", "en")
        assert trace.path == "tiny" and spoken(rig) == ["It really is."], spoken(rig)
        await rig.close()

    run(scenario())
