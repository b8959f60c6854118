"""The dialogue recalls the evidence for a question (issue 35): every recalled line in a prompt
carries its absolute date, a superseded value is marked as history, and the tiny profile
answers "when did I…?" from the dates without a model call. Against the scripted
OpenAI-compatible server on loopback and a REAL MemoryService on a temporary SQLite file."""

from __future__ import annotations

import asyncio
import datetime

import pytest

import dialogue_fake_llm as fake
from evidence_memory import DAY, OldServiceMemory, ServiceMemory
from fay_ros.dialogue import prompts, when_answers
from fay_ros.dialogue.toolbox import builtin_tools
from fay_ros.dialogue.tools import Memory, NoMemory, ToolContext, recall_evidence
from fay_ros.text.when import format_date
from test_dialogue_engine import DictMemory, Rig, run


@pytest.fixture
def fresh(llm):
    llm.reset()
    yield llm
    llm.reset()


def _noon(days_ago: int) -> float:
    """Noon (local time) `days_ago` days before today."""
    day = datetime.date.today() - datetime.timedelta(days=days_ago)
    return datetime.datetime.combine(day, datetime.time(12, 0)).timestamp()


def _day(days_ago: int) -> datetime.date:
    return datetime.date.today() - datetime.timedelta(days=days_ago)


def _all_text(request) -> str:
    return "\n".join(str(m["content"]) for m in request["messages"])


@pytest.fixture
def memory(tmp_path):
    gw = ServiceMemory(tmp_path)
    gw.hear("tom", _noon(20), "My name is Tom.")
    gw.hear("tom", _noon(12), "Yesterday I went hiking with Ella in the hills.")
    gw.hear("tom", _noon(12) + 60, "Hiking with Ella sounds lovely!", speaker="assistant")
    gw.hear("tom", _noon(9), "I started a new job at Acme Robotics this morning.")
    gw.hear("tom", _noon(5), "我昨天去了长城，人特别多。")
    gw.hear("tom", _noon(3), "The weather is nice.")
    return gw


# -- what a prompt carries ---------------------------------------------------------------------


def test_capable_prompt_carries_dated_evidence_lines(fresh, memory):
    async def scenario():
        rig = Rig(fresh, memory=memory)
        fresh.script(fake.judge_finish("You went hiking with Ella."))
        await rig.engine.run_turn("tom", "Did I go hiking recently?", "en")
        system = fresh.requests[0]["messages"][0]["content"]
        hiked, said = _day(13).isoformat(), _day(12).isoformat()
        assert f"[{hiked}] (said {said}) User: Yesterday I went hiking with Ella in the hills." in system
        assert prompts.MEMORY_HEAD_DATED in system
        assert f"Today is {format_date(datetime.date.today(), False)}." in system
        # one memory call for the recall, and it is the evidence search (not recall as well)
        assert ("search_evidence", "tom") in memory.calls and ("recall", "tom") not in memory.calls
        await rig.close()

    run(scenario())


def test_a_superseded_value_is_marked_as_history(fresh, tmp_path):
    async def scenario():
        gw = ServiceMemory(tmp_path)
        gw.hear("tom", _noon(30), "I live in Berlin.")
        gw.hear("tom", _noon(2), "I live in Munich now.")
        rig = Rig(fresh, memory=gw, judge=False)
        fresh.script(fake.text("You live in Munich."))
        await rig.engine.run_turn("tom", "Where do I live these days, and where did I live before?", "en")
        lines = [line for line in fresh.requests[0]["messages"][0]["content"].splitlines() if "Berlin" in line]
        assert lines, "the earlier home is recalled"
        assert all(line.startswith("- [") for line in lines), lines  # dated
        assert any("superseded" in line for line in lines), lines  # marked as history
        assert not any("Munich" in line and "superseded" in line for line in lines)
        await rig.close()

    run(scenario())


def test_tiny_prompt_gets_dated_sentences_without_role_labels(fresh, memory):
    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        fresh.script(fake.text("That sounds like fun."))
        await rig.engine.run_turn("tom", "Tell me about my hike with Ella.", "en")
        [request] = fresh.requests
        volatile = request["messages"][-2]["content"]
        said = format_date(_day(12), False, weekday=False)
        assert f'On {said}, Tom said: "Yesterday I went hiking with Ella in the hills."' in volatile
        assert format_date(_day(13), False) in volatile  # the day it is about
        text = _all_text(request)
        assert "User:" not in text and "Assistant:" not in text
        assert "sounds lovely" not in text  # the companion's own words are not recalled to a tiny model
        assert volatile.count("\n- ") <= 2  # a small number of lines
        await rig.close()

    run(scenario())


def test_tiny_prompt_carries_only_turns_that_tell_something_new(fresh, memory):
    async def scenario():
        memory.hear("tom", _noon(2), "Can you tell me a joke about hiking?")  # a question: not evidence
        rig = Rig(fresh, memory=memory, profile="tiny")
        fresh.script(fake.text("Good night, Tom."), fake.text("Hiking is fun."))
        await rig.engine.run_turn("tom", "Thank you, good night!", "en")
        assert "You remember" not in _all_text(fresh.requests[0])  # nothing that shares a word with it
        await rig.engine.run_turn("tom", "I want to go hiking again.", "en")
        text = _all_text(fresh.requests[1])
        assert "hiking with Ella" in text and "joke" not in text
        await rig.close()

    run(scenario())


@pytest.mark.parametrize("profile", ["tiny", "capable"])
def test_the_words_just_said_are_no_memory(fresh, memory, profile):
    """The memory records what the person says as it arrives, often before the dialogue's
    evidence search: the words of this very turn come back from it, and a prompt carried them
    twice (a tiny one as 'Tom said: "…"'). An earlier turn with other words still comes."""
    now = datetime.datetime.now().timestamp()

    async def scenario():
        said = "I want to go hiking with Ella again."
        memory.hear("tom", now, said)  # recorded before the turn's recall, as the node does
        rig = Rig(fresh, memory=memory, profile=profile, judge=False)
        fresh.script(fake.text("That sounds lovely."))
        await rig.engine.run_turn("tom", said, "en")
        text = _all_text(fresh.requests[0])
        assert text.count("again") == 1, text  # the question, once
        assert "hiking with Ella in the hills" in text, text  # the earlier turn, recalled
        await rig.close()

    run(scenario())


def test_the_recall_is_the_same_before_and_after_the_question_is_recorded(memory):
    """A speculative probe recalls before the memory node has recorded the question, its real
    turn after: both must recall the same items, or the real turn's request differs from the
    probe's and the stream started early is thrown away."""
    said = "Shall I go hiking with Ella again on Sunday?"

    async def recalled() -> list[str]:
        return [m.content for m in await recall_evidence(memory, "tom", said, 2, 5.0)]

    async def scenario():
        before = await recalled()
        memory.hear("tom", datetime.datetime.now().timestamp(), said)
        after = await recalled()
        assert len(before) == 2 and after == before, (before, after)

    run(scenario())


def test_a_gateway_without_the_evidence_search_falls_back_to_recall(fresh, tmp_path):
    async def scenario():
        old = OldServiceMemory(tmp_path)
        await old.remember("tom", "User likes green tea.", node_type="observation", user_confirmed=True)
        rig = Rig(fresh, memory=old, judge=False)
        fresh.script(fake.text("You like green tea."), fake.text("Hello."))
        trace = await rig.engine.run_turn("tom", "What tea do I like?", "en")
        assert not trace.error and rig.texts() == ["You like green tea."]
        system = fresh.requests[0]["messages"][0]["content"]
        assert prompts.MEMORY_HEAD + "\n- User likes green tea." in system
        assert old.calls.count(("search_evidence", "tom")) == 1 and ("recall", "tom") in old.calls
        # a gateway that has no search_evidence at all
        plain = DictMemory()
        plain.memories["tom"] = [Memory("m1", "User likes black coffee.")]
        rig2 = Rig(fresh, memory=plain, judge=False)
        await rig2.engine.run_turn("tom", "What do I drink?", "en")
        assert "- User likes black coffee." in fresh.requests[1]["messages"][0]["content"]
        await rig.close()
        await rig2.close()

    run(scenario())


def test_guest_gets_no_evidence(fresh, memory):
    async def scenario():
        rig = Rig(fresh, memory=memory, judge=False)
        fresh.script(fake.text("Nice to meet you."))
        await rig.engine.run_turn("", "When did I go hiking?", "en")
        assert not [c for c in memory.calls if c[0] in ("search_evidence", "recall")]
        assert "hiking with Ella" not in _all_text(fresh.requests[0])
        # the tiny profile answers a guest's when-question without their (absent) memory
        tiny = Rig(fresh, memory=memory, profile="tiny")
        await tiny.engine.run_turn("", "When did I go hiking?", "en")
        assert len(fresh.requests) == 1 and "don't remember" in " ".join(tiny.texts())
        await rig.close()
        await tiny.close()

    run(scenario())


def test_memory_recall_tool_returns_dated_evidence(memory):
    async def scenario():
        tools = builtin_tools()
        ctx = ToolContext("tom", "When did I start at Acme?", memory=memory)
        found = await tools.run("memory_recall", {"query": "new job at Acme"}, ctx)
        assert f"[{_day(9).isoformat()}] User: I started a new job at Acme Robotics this morning." in found
        ctx_old = ToolContext("tom", "x", memory=NoMemory())
        assert "unavailable" in await tools.run("memory_recall", {"query": "job"}, ctx_old)
        guest = ToolContext("", "x", memory=memory)
        assert "guest" in await tools.run("memory_recall", {"query": "job"}, guest)

    run(scenario())


# -- when-questions on the tiny profile ----------------------------------------------------------

HIKE_EN = [
    "When did I go hiking?",
    "when was it that I went on a hike with Ella",
    "Do you remember when I went hiking?",
    "What day did I go hiking in the hills?",
]
JOB_TOLD_EN = [
    "When did I tell you about my new job?",
    "When did I first mention Acme Robotics?",
]
WALL_ZH = [
    "我什么时候去的长城？",
    "我是哪天去长城的？",
    "你还记得我啥时候去过长城吗",
]


@pytest.mark.parametrize("question", HIKE_EN)
def test_tiny_when_question_in_english_is_answered_with_the_absolute_date(fresh, memory, question):
    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        trace = await rig.engine.run_turn("tom", question, "en")
        said = " ".join(rig.texts())
        assert trace.path == "memory" and not fresh.requests, said  # no model call
        assert format_date(_day(13), False) in said  # the day "yesterday" was, not the day it was said
        assert "hiking with Ella" in said
        await rig.close()

    run(scenario())


@pytest.mark.parametrize("question", JOB_TOLD_EN)
def test_tiny_when_did_i_tell_you_is_the_day_it_was_said(fresh, memory, question):
    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        await rig.engine.run_turn("tom", question, "en")
        said = " ".join(rig.texts())
        assert not fresh.requests and format_date(_day(9), False) in said and "Acme" in said, said
        await rig.close()

    run(scenario())


@pytest.mark.parametrize("question", WALL_ZH)
def test_tiny_when_question_in_chinese(fresh, memory, question):
    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        await rig.engine.run_turn("tom", question, "zh")
        said = "".join(rig.texts())
        day = _day(6)
        assert not fresh.requests and f"{day.year}年{day.month}月{day.day}日" in said and "长城" in said, said
        await rig.close()

    run(scenario())


def test_tiny_what_did_i_do_in_a_span(fresh, tmp_path):
    async def scenario():
        gw = ServiceMemory(tmp_path)
        today = datetime.date.today()
        last_monday = today - datetime.timedelta(days=today.weekday() + 7)
        wednesday = last_monday + datetime.timedelta(days=2)
        noon = datetime.datetime.combine(wednesday, datetime.time(12)).timestamp()
        gw.hear("tom", noon, "我今天去博物馆看了恐龙化石。")
        gw.hear("tom", noon + 3600, "I baked bread with my daughter today.")
        gw.hear("tom", noon - 30 * DAY, "我去了海边。")  # a month before: not last week
        rig = Rig(fresh, memory=gw, profile="tiny")
        await rig.engine.run_turn("tom", "我上周都干了些什么？", "zh")
        zh = "".join(rig.texts())
        assert f"{wednesday.month}月{wednesday.day}日" in zh and "恐龙" in zh and "海边" not in zh, zh
        await rig.engine.run_turn("tom", "What did I get up to last week?", "en")
        en = rig.texts()
        assert not fresh.requests
        assert format_date(wednesday, False) in " ".join(en) and "baked bread" in " ".join(en), en
        await rig.close()

    run(scenario())


@pytest.mark.parametrize(
    ("question", "language", "expected"),
    [
        ("When did I go skydiving?", "en", "don't remember"),
        ("我什么时候去的埃及？", "zh", "不记得"),
        ("What did I do the week before last?", "en", "don't remember"),
    ],
)
def test_tiny_when_question_with_nothing_that_fits_says_so_and_asks(fresh, memory, question, language, expected):
    async def scenario():
        rig = Rig(fresh, memory=memory, profile="tiny")
        await rig.engine.run_turn("tom", question, language)
        said = " ".join(rig.texts())
        assert not fresh.requests and expected in said and ("?" in said or "？" in said), said
        assert not any(ch.isdigit() for ch in said)  # no date invented
        await rig.close()

    run(scenario())


@pytest.mark.parametrize(
    "question",
    [
        "What time is it?",
        "When will I go hiking?",
        "我什么时候要去长城？",
        "What did I tell you about Ella?",
        "几点了？",
        "我哪天能拿到结果？",
        "When should I take my pills?",
    ],
)
def test_not_a_question_about_a_day_gone_by(question):
    assert when_answers.recognise(question) is None


def test_recognition_kinds():
    now = datetime.datetime.now().astimezone()
    assert when_answers.recognise("How long ago did I move to Munich?", now=now).kind == when_answers.EVENT
    assert when_answers.recognise("When was the last time I saw my sister?", now=now).kind == when_answers.EVENT
    assert when_answers.recognise("When was it that I told you about the trip?", now=now).kind == when_answers.TOLD
    assert when_answers.recognise("我什么时候跟你说我换工作了？", now=now).kind == when_answers.TOLD
    assert when_answers.recognise("我上个月去哪儿了？", now=now).kind == when_answers.SPAN
    assert when_answers.recognise("Where did I go yesterday?", now=now).kind == when_answers.SPAN
    assert when_answers.recognise("我上次去医院是什么时候？", now=now).kind == when_answers.EVENT
    assert when_answers.recognise("How long ago was it that I quit smoking", now=now).kind == when_answers.EVENT
    assert when_answers.recognise("我上次跟你聊长城是哪天", now=now).kind == when_answers.TOLD
    assert set(when_answers.recognise("When did I visit my daughter's school?", now=now).topic) == {
        "visit",
        "daughter",
        "school",
    }
    # the question's frame is not its topic: a weekday, "how many days ago", "哪些地方"
    assert when_answers.recognise("What was I doing last Tuesday?", now=now).topic == {}
    assert set(when_answers.recognise("How many days ago did I go hiking?", now=now).topic) == {"hik"}
    assert when_answers.recognise("上个月我去了哪些地方？", now=now).topic == {}


def test_questions_and_the_companions_words_are_not_evidence():
    now = datetime.datetime.now().astimezone()
    today = datetime.date.today().isoformat()
    evidence = [
        Memory("a", "", node_type="turn", text="When did I go hiking?", date=today, said=today, speaker="user"),
        Memory("b", "", node_type="turn", text="You went hiking!", date=today, said=today, speaker="assistant"),
    ]
    assert "don't remember" in when_answers.answer("When did I go hiking?", evidence, "en", now)


# -- what the user told, quoted (the tiny model made doses and names up) -------------------------


@pytest.fixture
def told(tmp_path):
    gw = ServiceMemory(tmp_path)
    gw.hear("joan", _noon(9), "we had a lovely walk by the river, and my knee held up fine.")
    gw.hear("joan", _noon(8), "my blood pressure tablet, ramipril, they've doubled it, it was five mg, now it's ten.")
    gw.hear("joan", _noon(7), "our Karen's moved to Swansea, she got a job at the library there.")
    gw.hear("joan", _noon(6), "I've got a tortoise, called Mabel, she's older than me near enough.")
    gw.hear("joan", _noon(5), "I'm on simvastatin at bedtime, so no grapefruit, it fights with the statin.")
    gw.hear("li", _noon(9), "嗯，我养了只八哥，叫豆豆，会说你好")
    gw.hear("li", _noon(5), "我有痛风，海鲜不吃了，啤酒也不喝了")
    gw.hear("li", _noon(8), "那个钙片，原来一天一片，现在医生让我一天吃两片")
    gw.hear("li", _noon(7), "我闺女在青岛，嫁过去十年了")
    gw.hear("li", _noon(6), "我原来住城西，今年开春搬到儿子那儿去了，在城东，楼房有电梯")
    return gw


@pytest.mark.parametrize(
    "owner, question, language, said",
    [
        ("joan", "how much ramipril am I on now?", "en", "now it's ten"),
        ("joan", "where did I have my walk?", "en", "by the river"),
        ("joan", "where does Karen live these days?", "en", "Swansea"),
        ("li", "我那八哥叫啥来着？", "zh", "叫豆豆"),
        ("li", "钙片我现在一天吃几片？", "zh", "两片"),
        ("li", "我闺女在哪儿来着？", "zh", "青岛"),
        # why: the reason said with it ("…so no grapefruit, it fights with the statin")
        ("joan", "why is it I'm off grapefruit?", "en", "statin"),
        ("li", "我为啥不能喝啤酒来着？", "zh", "痛风"),
        # no fact says where she lives now ("you haven't told me"), her words do
        ("li", "我现在住哪儿来着？", "zh", "城东"),
    ],
)
def test_tiny_question_about_what_they_told_is_their_own_words_quoted(fresh, told, owner, question, language, said):
    async def scenario():
        rig = Rig(fresh, memory=told, profile="tiny")
        trace = await rig.engine.run_turn(owner, question, language)
        text = "".join(rig.texts())
        assert trace.path == "memory" and not fresh.requests, text  # no model call
        assert said in text and ("You told me" in text or "你跟我说过" in text), text
        await rig.close()

    run(scenario())


@pytest.mark.parametrize(
    "owner, question, language, said",
    [
        # never told: said so, not made up (nor a name of another's pet, nor the old dose)
        ("joan", "what's my dog called?", "en", "told me"),
        ("joan", "what's my granddaughter studying?", "en", "told me"),
        ("li", "我那只猫叫啥？", "zh", "我"),
        ("li", "我儿子在哪儿上班来着？", "zh", "我"),
    ],
)
def test_tiny_question_about_what_they_never_told_says_so(fresh, told, owner, question, language, said):
    async def scenario():
        rig = Rig(fresh, memory=told, profile="tiny")
        await rig.engine.run_turn(owner, question, language)
        text = "".join(rig.texts())
        honest = ("haven't told me", "don't remember", "还没告诉我", "不记得")
        assert said in text and any(h in text for h in honest) and "说过：" not in text, text
        assert "told me:" not in text and not fresh.requests, text
        await rig.close()

    run(scenario())


@pytest.mark.parametrize(
    "question",
    [
        "what should I cook for tea tonight?",
        "what do you think of Swansea?",
        "what's the weather doing?",
        # a question of general knowledge that shares a place with what she told
        "what's the biggest town in Swansea?",
    ],
)
def test_advice_and_questions_about_the_companion_are_not_quoted(question, told):
    evidence = asyncio.run(recall_evidence(told, "joan", question, 5, 5.0))
    assert when_answers.told_answer(question, evidence, "en") is None


def test_a_value_told_again_later_is_the_one_quoted(fresh, tmp_path):
    """(the thirty-third round: the clinic moved twice; the first move was quoted)"""
    gw = ServiceMemory(tmp_path)
    gw.hear("idris", _noon(20), "the chest clinic is on the seventeenth, at Nevill Hall.")
    gw.hear("idris", _noon(12), "letter came, they've moved the chest clinic, it's the twentieth now.")
    gw.hear("idris", _noon(5), "moved again would you believe, the clinic's on the twenty-seventh now.")

    async def scenario():
        rig = Rig(fresh, memory=gw, profile="tiny")
        await rig.engine.run_turn("idris", "when is my chest clinic now?", "en")
        text = "".join(rig.texts())
        assert "twenty-seventh" in text and "twentieth" not in text and not fresh.requests, text
        await rig.close()

    run(scenario())


def test_quoted_answers_read_lists_leads_and_whose_it_is(fresh, tmp_path):
    """(the thirty-fifth round) a list of days said with commas, a question after a lead-in or
    "did I tell you…", a neighbour's dog for "my dog", a helper named without "I"."""
    gw = ServiceMemory(tmp_path)
    gw.hear("ray", _noon(9), "the home help is Bernie, she comes tuesday, thursday and saturday in the mornings")
    gw.hear("ray", _noon(8), "next door, Walt's got a boxer called Tyson, barks all night")
    gw.hear("ray", _noon(7), "I keep the spare key under the blue pot by the back door")
    gw.hear("mei", _noon(9), "小刘每个礼拜二和礼拜五来给我打扫卫生")
    gw.hear("mei", _noon(8), "隔壁王姐家那只猫叫咪咪，天天上我家阳台")
    gw.hear("mei", _noon(7), "我搬到新家了，今儿早上在楼下走了一圈，我住二楼")

    async def ask(owner, question, language):
        rig = Rig(fresh, memory=gw, profile="tiny")
        await rig.engine.run_turn(owner, question, language)
        await rig.close()
        return "".join(rig.texts())

    async def scenario():
        days = await ask("ray", "which days does Bernie come?", "en")
        assert "tuesday, thursday and saturday" in days, days
        dog = await ask("ray", "what's my dog called?", "en")
        assert "Tyson" not in dog, dog
        key = await ask("ray", "I'm all at sixes and sevens today, where did I say the spare key was?", "en")
        assert "blue pot" in key, key
        told = await ask("ray", "did I tell you where the spare key is?", "en")
        assert "blue pot" in told, told
        who = await ask("mei", "小刘是礼拜几来的？", "zh")
        assert "礼拜二和礼拜五" in who, who
        cat = await ask("mei", "我那只猫叫啥来着？", "zh")  # the neighbour's cat is not hers
        assert "咪咪" not in cat, cat
        floor = await ask("mei", "我现在住几楼？", "zh")  # a floor, not "走了一圈"
        assert "二楼" in floor, floor
        assert not fresh.requests

    run(scenario())


def test_an_appointment_moved_is_dated_where_it_is_now(fresh, tmp_path):
    """(the thirty-fifth round: "我心内科复查是哪天来着？" got the first date, not the one it moved to)"""
    gw = ServiceMemory(tmp_path)
    gw.hear("wang", _noon(20), "我闺女给我约了个心内科复查，十二月二十号，礼拜天上午")
    gw.hear("wang", _noon(10), "医院又打电话来，心内科复查改了，改到十二月二十三号")

    async def scenario():
        rig = Rig(fresh, memory=gw, profile="tiny")
        await rig.engine.run_turn("wang", "我心内科复查是哪天来着？", "zh")
        text = "".join(rig.texts())
        assert "12月23日" in text and "12月20日" not in text and not fresh.requests, text
        await rig.close()

    run(scenario())


@pytest.mark.parametrize(
    "question",
    [
        "what's my heart doctor's name, did I tell you?",  # "the heart doctor's office called" names no one
        "what's the name of my audiologist?",  # "the audiologist in the Bon Secours": a place
    ],
)
def test_a_name_never_told_is_not_quoted_from_a_call_or_a_place(fresh, tmp_path, question):
    gw = ServiceMemory(tmp_path)
    gw.hear("walt", _noon(9), "the heart doctor's office called, they moved me to tuesday at one fifteen")
    gw.hear("walt", _noon(8), "I've an appointment with the audiologist in the Bon Secours on the eighteenth")
    evidence = asyncio.run(recall_evidence(gw, "walt", question, 5, 5.0))
    assert when_answers.told_answer(question, evidence, "en") == when_answers._QUOTED_EN.not_remembered


def test_a_name_in_a_when_question_weighs_double(fresh, tmp_path):
    """(the thirty-third round: "when did I say Bronwen's baby is due?" of "Bronwen rang, she's
    expecting again in May" found nothing: one word of three)"""
    gw = ServiceMemory(tmp_path)
    gw.hear("dai", _noon(6), "Bronwen rang, she's expecting again in May, number three")
    gw.hear("dai", _noon(4), "the pigeons came back late from the race, the weather was awful")

    async def scenario():
        rig = Rig(fresh, memory=gw, profile="tiny")
        await rig.engine.run_turn("dai", "when did I say Bronwen's baby is due?", "en")
        text = "".join(rig.texts())
        assert "May" in text and format_date(_day(6), False) in text and not fresh.requests, text
        await rig.close()

    run(scenario())


def test_the_tiny_window_leaves_out_the_quoted_answers(fresh, told):
    """The exchange whose answer quoted the person is not shown to the tiny model (it copied the
    form with words of its own); the exchanges around it are."""

    async def scenario():
        rig = Rig(fresh, memory=told, profile="tiny")
        await rig.engine.run_turn("joan", "how much ramipril am I on now?", "en")
        fresh.script(fake.text("That sounds lovely."))
        await rig.engine.run_turn("joan", "I had a nice cup of tea with Karen today.", "en")
        window = [str(m["content"]) for m in fresh.requests[-1]["messages"]]
        assert not any("You told me" in text for text in window), window
        assert any("how much ramipril" in text for text in window) is False, window
        await rig.close()

    run(scenario())
