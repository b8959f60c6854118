"""The dialogue's reminder and commitment turns (fay_ros.dialogue.reminder_talk) on a real
SQLite store through ReminderDesk + LocalReminders, with a fixed clock (no sleeps)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from fay_ros.dialogue.reminder_talk import ReminderTalk, TalkReply, until_words
from fay_ros.memory.backend import open_store
from fay_ros.memory.embeddings import HashedNgramEmbedder
from fay_ros.memory.reminder_book import ReminderBook
from fay_ros.memory.reminder_service import LocalReminders, ReminderDesk

SHANGHAI = "Asia/Shanghai"
LONDON = "Europe/London"


def at(text: str, tz: str = SHANGHAI) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(tz)).timestamp()


class Rig:
    def __init__(self, tmp_path, clock, tz: str = SHANGHAI, now: str = "2026-12-04T09:00:00") -> None:
        clock.t = at(now, tz)
        self.clock = clock
        self.store = open_store(str(tmp_path / f"memory-{tz.replace('/', '_')}.db"), HashedNgramEmbedder(), clock=clock)
        self.book = ReminderBook(self.store.reminder_tables(), clock=clock)
        self.talk = ReminderTalk(LocalReminders(ReminderDesk(self.book, tz)), tz, clock)

    def say(self, text: str, user: str = "alice", language: str = "") -> TalkReply | None:
        return asyncio.run(self.talk.answer(user, text, language=language, source_turn="turn-1"))

    def rows(self, user: str = "alice") -> list[tuple[str, str, str]]:
        return [(r.start_local, r.rrule, r.text) for r in self.book.list(user)]


@pytest.fixture
def rig(tmp_path, clock):
    made: list[Rig] = []

    def make(**kwargs) -> Rig:
        r = Rig(tmp_path, clock, **kwargs)
        made.append(r)
        return r

    yield make
    for r in made:
        r.store.close()


# (words, start_local, rrule, stored text, what the reply must say)
SET_PHRASES = [
    (
        "Remind me to call my mother tomorrow at 6 pm",
        "2026-12-05T18:00:00",
        "",
        "call my mother",
        "call your mother tomorrow, Saturday 5 December, at 18:00 (in 1 day 9 hours)",
    ),
    (
        "remind me in 40 seconds to look at the blue screen",
        "2026-12-04T09:00:40",
        "",
        "look at the blue screen",
        "at 09:00:40 (in 40 seconds)",
    ),
    (
        "remind me in ten minutes to check the rice",
        "2026-12-04T09:10:00",
        "",
        "check the rice",
        "today at 09:10 (in 10 minutes)",
    ),
    ("remind me in half an hour to stretch", "2026-12-04T09:30:00", "", "stretch", "today at 09:30"),
    ("remind me at 7 to lock the door", "2026-12-04T19:00:00", "", "lock the door", "today at 19:00 (in 10 hours)"),
    (
        "remind me at 3:30 pm to pick up the kids",
        "2026-12-04T15:30:00",
        "",
        "pick up the kids",
        "today at 15:30 (in 6 hours 30 minutes)",
    ),
    (
        "remind me tomorrow at 3 to send the invoice",
        "2026-12-05T15:00:00",
        "",
        "send the invoice",
        "tomorrow, Saturday 5 December, at 15:00",
    ),
    (
        "remind me on Monday at 9 am to call the bank",
        "2026-12-07T09:00:00",
        "",
        "call the bank",
        "on Monday 7 December at 09:00 (in 3 days)",
    ),
    (
        "remind me on December 24 at 10 am to buy a tree",
        "2026-12-24T10:00:00",
        "",
        "buy a tree",
        "on Thursday 24 December at 10:00 (in 20 days 1 hour)",
    ),
    (
        "remind me the day after tomorrow at noon to water the garden",
        "2026-12-06T12:00:00",
        "",
        "water the garden",
        "on Sunday 6 December at 12:00",
    ),
    (
        "remind me every day at 8am and 8pm to take my pills",
        "2026-12-04T20:00:00",
        "FREQ=DAILY;BYHOUR=8,20;BYMINUTE=0",
        "take my pills",
        "every day at 08:00 and 20:00, first today",
    ),
    (
        "每天早上八点和晚上八点提醒我吃药",
        "2026-12-04T20:00:00",
        "FREQ=DAILY;BYHOUR=8,20;BYMINUTE=0",
        "吃药",
        "每天08:00和20:00提醒你吃药",
    ),
    (
        "set a reminder for 8 pm to take out the trash",
        "2026-12-04T20:00:00",
        "",
        "take out the trash",
        "today at 20:00",
    ),
    (
        "remind me to take my pills every day at 7:30",
        "2026-12-05T07:30:00",
        "FREQ=DAILY;BYHOUR=7;BYMINUTE=30",
        "take my pills",
        "take your pills every day at 07:30, first tomorrow",
    ),
    (
        "remind me every weekday at 7:30 to take my pills",
        "2026-12-07T07:30:00",
        "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=30",
        "take my pills",
        "every weekday at 07:30, first on Monday 7 December (in 2 days 22 hours)",
    ),
    (
        "remind me every Monday, Wednesday and Friday at 6 pm to go running",
        "2026-12-04T18:00:00",
        "FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=18;BYMINUTE=0",
        "go running",
        "every Monday, Wednesday and Friday at 18:00, first today",
    ),
    (
        "remind me every month on the 1st at 9 am to pay the rent",
        "2027-01-01T09:00:00",
        "FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=9;BYMINUTE=0",
        "pay the rent",
        "every month on the 1st at 09:00, first on Friday 1 January 2027",
    ),
    (
        "remind me every 2 hours to drink water",
        "2026-12-04T11:00:00",
        "FREQ=HOURLY;INTERVAL=2",
        "drink water",
        "every 2 hours, first today at 11:00",
    ),
    (
        "remind me tonight at 9 to call my sister",
        "2026-12-04T21:00:00",
        "",
        "call my sister",
        "call your sister today at 21:00",
    ),
    ("wake me up at 6 tomorrow", "2026-12-05T06:00:00", "", "wake up", "tomorrow, Saturday 5 December, at 06:00"),
    (
        "remind me in an hour and a half to check the oven",
        "2026-12-04T10:30:00",
        "",
        "check the oven",
        "today at 10:30 (in 1 hour 30 minutes)",
    ),
    (
        "remind me next Friday at 5 pm to submit my timesheet",
        "2026-12-11T17:00:00",
        "",
        "submit my timesheet",
        "submit your timesheet on Friday 11 December at 17:00 (in 7 days 8 hours)",
    ),
    (
        "remind me every Sunday at 8 pm to plan my week",
        "2026-12-06T20:00:00",
        "FREQ=WEEKLY;BYDAY=SU;BYHOUR=20;BYMINUTE=0",
        "plan my week",
        "every Sunday at 20:00, first on Sunday 6 December",
    ),
    (
        "明天下午六点提醒我交周报",
        "2026-12-05T18:00:00",
        "",
        "交周报",
        "好的，明天（12月5日星期六）18:00提醒你交周报，还有1天9小时",
    ),
    ("十分钟后提醒我关火", "2026-12-04T09:10:00", "", "关火", "今天09:10提醒你关火，还有10分钟"),
    ("半小时后提醒我喝水", "2026-12-04T09:30:00", "", "喝水", "今天09:30"),
    ("今晚八点提醒我给妈妈打电话", "2026-12-04T20:00:00", "", "给妈妈打电话", "今天20:00提醒你给妈妈打电话"),
    ("明天早上八点提醒我带伞", "2026-12-05T08:00:00", "", "带伞", "明天（12月5日星期六）08:00"),
    ("后天中午十二点提醒我取快递", "2026-12-06T12:00:00", "", "取快递", "后天（12月6日星期日）12:00"),
    ("下午三点提醒我开会", "2026-12-04T15:00:00", "", "开会", "今天15:00提醒你开会，还有6小时"),
    (
        "每天早上七点半提醒我吃药",
        "2026-12-05T07:30:00",
        "FREQ=DAILY;BYHOUR=7;BYMINUTE=30",
        "吃药",
        "每天07:30提醒你吃药，第一次是明天（12月5日星期六）",
    ),
    (
        "工作日每天早上八点提醒我打卡",
        "2026-12-07T08:00:00",
        "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=8;BYMINUTE=0",
        "打卡",
        "每个工作日08:00提醒你打卡，第一次是12月7日（星期一）",
    ),
    (
        "每周一三五晚上七点提醒我去跑步",
        "2026-12-04T19:00:00",
        "FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=19;BYMINUTE=0",
        "去跑步",
        "每周一、三、五19:00",
    ),
    (
        "每月15号上午十点提醒我还信用卡",
        "2026-12-15T10:00:00",
        "FREQ=MONTHLY;BYMONTHDAY=15;BYHOUR=10;BYMINUTE=0",
        "还信用卡",
        "每月15号10:00提醒你还信用卡，第一次是12月15日（星期二）",
    ),
    (
        "下周五下午四点提醒我交报告",
        "2026-12-11T16:00:00",
        "",
        "交报告",
        "12月11日（星期五）16:00提醒你交报告，还有7天7小时",
    ),
    ("12月24号晚上八点提醒我买礼物", "2026-12-24T20:00:00", "", "买礼物", "12月24日（星期四）20:00"),
    ("两个小时后提醒我休息一下", "2026-12-04T11:00:00", "", "休息", "今天11:00提醒你休息，还有2小时"),
    ("明早七点叫我起床", "2026-12-05T07:00:00", "", "起床", "明天（12月5日星期六）07:00提醒你起床"),
    ("提醒我明天上午十点给我爸爸打电话", "2026-12-05T10:00:00", "", "给我爸爸打电话", "10:00提醒你给你爸爸打电话"),
    ("今天下午五点半提醒我接孩子", "2026-12-04T17:30:00", "", "接孩子", "今天17:30"),
    ("每天晚上十点提醒我关窗户", "2026-12-04T22:00:00", "FREQ=DAILY;BYHOUR=22;BYMINUTE=0", "关窗户", "每天22:00"),
    (
        "每隔两小时提醒我站起来活动",
        "2026-12-04T11:00:00",
        "FREQ=HOURLY;INTERVAL=2",
        "站起来活动",
        "每2小时提醒你站起来活动",
    ),
    ("一个半小时后提醒我看烤箱", "2026-12-04T10:30:00", "", "看烤箱", "今天10:30提醒你看烤箱，还有1小时30分钟"),
]


def test_phrase_tables_are_big_enough():
    chinese = [p for p in SET_PHRASES if any("\u4e00" <= c <= "\u9fff" for c in p[0])]
    assert len(SET_PHRASES) >= 40 and len(chinese) >= 20
    assert (
        len(NOT_ABOUT_REMINDERS) >= 20
        and sum(any("\u4e00" <= c <= "\u9fff" for c in p) for p in NOT_ABOUT_REMINDERS) >= 10
    )


@pytest.mark.parametrize("words,start,rule,text,said", SET_PHRASES, ids=[p[0] for p in SET_PHRASES])
def test_set_stores_the_row_and_says_the_absolute_time(rig, words, start, rule, text, said):
    r = rig()
    reply = r.say(words)
    assert reply is not None and reply.action == "set", reply
    assert r.rows() == [(start, rule, text)]
    assert said in reply.text
    assert "FREQ" not in reply.text and "BYHOUR" not in reply.text
    stored = r.book.list("alice")[0]
    assert stored.source_utterance == words and stored.source_turn == "turn-1" and stored.tz == SHANGHAI
    assert stored.id not in reply.text


NOT_ABOUT_REMINDERS = [
    "I like tea",
    "what time is it?",
    "remind me what my wife's name is",
    "this song reminds me of home",
    "I don't need a reminder",
    "thanks for reminding me",
    "you remind me of my brother",
    "I'll have the pasta",
    "I won't call him",
    "I'm not going to finish it today",
    "I called the dentist",
    "I think I'll see",
    "what's the weather tomorrow?",
    "谢谢你提醒我",
    "我喜欢喝茶",
    "现在几点了？",
    "不用提醒我了",
    "这首歌让我想起家乡",
    "我不会去的",
    "我不想给他打电话",
    "你明天有空吗？",
    "我昨天给牙医打了电话",
    "今天天气怎么样",
    "他提醒我明天下午三点开会",
    "妈妈昨天提醒我要带伞",
    "你提醒我了吗",
    "what time did you remind me yesterday",
]


@pytest.mark.parametrize("words", NOT_ABOUT_REMINDERS)
def test_plain_chat_is_not_about_reminders(rig, words):
    r = rig()
    assert r.say(words) is None
    assert r.rows() == []
    assert r.book.commitments("alice") == []


def test_a_guest_is_refused_and_nothing_is_stored(rig):
    r = rig()
    reply = r.say("Remind me to call my mother tomorrow at 6 pm", user="")
    assert reply == TalkReply(
        "I can only keep reminders for someone I know — tell me your name first.", action="refuse"
    )
    zh = r.say("明天下午六点提醒我交周报", user="")
    assert zh is not None and zh.action == "refuse" and "名字" in zh.text
    assert r.rows("") == []


def test_until_words_two_largest_units():
    assert until_words(40, False) == "in 40 seconds"
    assert until_words(8 * 3600 + 59 * 60 + 20, False) == "in 8 hours 59 minutes"
    assert until_words(2 * 86400 + 3 * 3600 + 120, False) == "in 2 days 3 hours"
    assert until_words(3600, False) == "in 1 hour"
    assert until_words(40, True) == "40秒后"
    assert until_words(8 * 3600 + 59 * 60, True) == "8小时59分钟后"
    assert until_words(2 * 86400 + 3 * 3600, True) == "2天3小时后"


def test_london_clock_and_a_language_given(rig):
    r = rig(tz=LONDON, now="2026-12-04T14:02:30")
    reply = r.say("remind me in 40 seconds to look at the blue screen")
    assert reply is not None
    assert reply.text == "OK — I'll remind you to look at the blue screen at 14:03:10 (in 40 seconds)."
    assert r.rows() == [("2026-12-04T14:03:10", "", "look at the blue screen")]
    assert r.book.list("alice")[0].tz == LONDON
    reply = r.say("明天早上八点提醒我带伞", language="zh")
    assert reply is not None and "明天（12月5日星期六）08:00提醒你带伞" in reply.text


# -- pending questions -------------------------------------------------------------------------
def test_no_time_then_the_time(rig):
    r = rig()
    ask = r.say("remind me tomorrow to call my mother")
    assert ask == TalkReply("What time tomorrow should I remind you to call your mother?", action="ask")
    assert r.rows() == []
    done = r.say("at 6 pm")
    assert done is not None and done.action == "set" and "tomorrow, Saturday 5 December, at 18:00" in done.text
    assert r.rows() == [("2026-12-05T18:00:00", "", "call my mother")]


def test_no_time_then_the_time_in_chinese(rig):
    r = rig()
    ask = r.say("明天提醒我交周报")
    assert ask is not None and ask.text == "明天（12月5日星期六）几点提醒你交周报？" and ask.action == "ask"
    done = r.say("下午三点")
    assert done is not None and done.action == "set" and "明天（12月5日星期六）15:00提醒你交周报" in done.text
    assert r.rows() == [("2026-12-05T15:00:00", "", "交周报")]


def test_times_a_day_asks_for_the_times_and_keeps_the_repeat(rig):
    r = rig()
    ask = r.say("remind me to take my pills twice a day")
    assert ask == TalkReply("What time every day should I remind you to take your pills?", action="ask")
    done = r.say("8 am and 8 pm")
    assert done is not None and done.action == "set" and "every day at 08:00 and 20:00" in done.text
    assert r.rows() == [("2026-12-04T20:00:00", "FREQ=DAILY;BYHOUR=8,20;BYMINUTE=0", "take my pills")]
    r = rig()
    assert r.say("每天三次提醒我吃药") == TalkReply("每天几点提醒你吃药？", action="ask")
    done = r.say("早上八点、中午十二点和晚上六点")
    assert done is not None and "每天08:00、12:00和18:00提醒你吃药" in done.text
    assert ("2026-12-04T12:00:00", "FREQ=DAILY;BYHOUR=8,12,18;BYMINUTE=0", "吃药") in r.rows()


def test_a_renamed_companions_name_said_first_is_no_part_of_the_reminder(rig):
    r = rig()
    r.talk.names = lambda: ("Nova", "小诺")
    done = r.say("Nova, remind me at 5 to call Jo")
    assert done is not None and done.action == "set"
    assert r.say("小诺，明天下午三点提醒我吃药").action == "set"
    assert r.rows() == [("2026-12-04T17:00:00", "", "call Jo"), ("2026-12-05T15:00:00", "", "吃药")]
    assert r.talk.wants("alice", "hey Nova remind me to eat")
    assert r.say("remind me at 6 to call Nova") is not None
    assert ("2026-12-04T18:00:00", "", "call Nova") in r.rows()  # (a name not said first stays)


def test_no_time_then_a_day_and_a_time(rig):
    r = rig()
    assert r.say("remind me to call the plumber").action == "ask"
    done = r.say("tomorrow morning at 8")
    assert done is not None and done.action == "set"
    assert r.rows() == [("2026-12-05T08:00:00", "", "call the plumber")]


def test_night_question_yes(rig):
    r = rig(now="2026-12-04T20:00:00")
    ask = r.say("remind me at 11 to take the laundry out")
    assert ask == TalkReply("Do you mean 23:00 at night? Say yes, or give me another time.", action="ask")
    assert r.rows() == []
    done = r.say("yes")
    assert done is not None and done.action == "set" and "today at 23:00 (in 3 hours)" in done.text
    assert r.rows() == [("2026-12-04T23:00:00", "", "take the laundry out")]


def test_night_question_another_time_and_no(rig):
    r = rig(now="2026-12-04T20:00:00")
    assert r.say("remind me at 11 to take the laundry out").action == "ask"
    done = r.say("no, 9 pm")
    assert done is not None and done.action == "set" and "21:00" in done.text
    assert r.rows() == [("2026-12-04T21:00:00", "", "take the laundry out")]
    assert r.say("remind me at 11 to lock up").action == "ask"
    assert r.say("no").text == "OK, no reminder then."
    assert len(r.rows()) == 1


def test_night_question_answered_with_the_part_of_the_day(rig):
    r = rig(now="2026-12-04T20:00:00")
    assert r.say("remind me at 11 to take the laundry out").action == "ask"
    done = r.say("no, in the morning")
    assert done is not None and done.action == "set" and "11:00" in done.text
    assert r.rows() == [("2026-12-05T11:00:00", "", "take the laundry out")]
    assert r.say("十一点提醒我吃药").action == "ask"
    done = r.say("不是，上午")
    assert done is not None and done.action == "set" and "11:00" in done.text
    assert ("2026-12-05T11:00:00", "", "吃药") in r.rows() and len(r.rows()) == 2


def test_past_question_yes_moves_to_tomorrow(rig):
    r = rig()
    ask = r.say("remind me today at 8 to stretch")
    assert ask == TalkReply("08:00 today has already passed. Tomorrow at 08:00 instead?", action="ask")
    assert r.say("yes").action == "set"
    assert r.rows() == [("2026-12-05T08:00:00", "", "stretch")]
    assert r.say("今天早上八点提醒我拉伸").text == "今天08:00已经过了。改成明天（12月5日星期六）08:00可以吗？"
    assert r.say("是的").action == "set"
    assert len(r.rows()) == 2


def test_ambiguous_asks_for_an_exact_time(rig):
    r = rig()
    ask = r.say("remind me later to water the plants")
    assert ask is not None and ask.action == "ask" and "When exactly" in ask.text
    assert r.say("in 20 minutes").action == "set"
    assert r.rows() == [("2026-12-04T09:20:00", "", "water the plants")]
    ask = r.say("待会儿提醒我收衣服")
    assert ask is not None and ask.action == "ask" and "具体什么时候" in ask.text
    assert r.say("半小时后").action == "set"
    assert ("2026-12-04T09:30:00", "", "收衣服") in r.rows()


def test_a_pending_question_expires_and_other_talk_drops_it(rig):
    r = rig()
    assert r.say("remind me tomorrow to call my mother").action == "ask"
    r.clock.t += 301
    assert r.say("at 6 pm") is None
    assert r.rows() == []
    assert r.say("remind me tomorrow to call my mother").action == "ask"
    assert r.say("I like tea") is None  # not an answer: the question is dropped
    assert r.say("at 6 pm") is None
    assert r.rows() == []


# -- list ----------------------------------------------------------------------------------------
def test_list_in_both_languages_and_by_day(rig):
    r = rig()
    assert r.say("what are my reminders").text == "You have no reminders."
    assert r.say("我有哪些提醒").text == "你现在没有提醒。"
    r.say("Remind me to call my mother tomorrow at 6 pm")
    r.say("remind me to take my pills every day at 7:30")
    r.say("remind me at 3:30 pm to pick up the kids")
    reply = r.say("do I have any reminders?")
    assert reply is not None and reply.action == "list"
    assert reply.text == (
        "You have 3 reminders: pick up the kids today at 15:30; take your pills every day at 07:30; "
        "call your mother tomorrow Saturday 5 December at 18:00."
    )
    tomorrow = r.say("what reminders do I have tomorrow?")
    assert tomorrow is not None and "2 reminders tomorrow" in tomorrow.text and "kids" not in tomorrow.text
    today = r.say("any reminders today?")
    assert today is not None and "pick up the kids" in today.text and "mother" not in today.text
    zh = r.say("我明天有什么提醒")
    assert zh is not None and zh.text.startswith("你明天有2个提醒：") and "每天07:30 take your pills" in zh.text
    assert r.say("今天有提醒吗").text.startswith("你今天有1个提醒")
    assert (
        r.say("what reminders do I have on Monday?").text == "You have 1 reminder on Monday 7 December: "
        "take your pills every day at 07:30."
    )


# -- cancel --------------------------------------------------------------------------------------
def test_cancel_by_name_time_next_and_several(rig):
    r = rig()
    r.say("remind me to call mum at 6 pm")
    r.say("remind me to call mum tomorrow at 6 pm")
    r.say("remind me to water the plants at 5 pm")
    r.say("明天下午六点提醒我交周报")
    which = r.say("cancel the reminder to call mum")
    assert which is not None and which.action == "cancel_ask" and "Which one?" in which.text
    done = r.say("the second one")
    assert done is not None and done.action == "cancel" and "tomorrow" in done.text
    assert [t for _s, _r, t in r.rows()] == ["water the plants", "call mum", "交周报"]
    gone = r.say("forget the plants reminder")
    assert gone is not None and gone.action == "cancel" and "water the plants" in gone.text
    gone = r.say("取消明天下午六点的提醒")
    assert gone is not None and gone.action == "cancel" and "交周报" in gone.text
    assert r.say("cancel my 6 pm reminder").action == "cancel"
    assert r.rows() == []


def test_cancel_the_one_about_a_thing_only_when_a_reminder_is_about_it(rig):
    r = rig()
    assert r.say("cancel the one about the gym") is None  # no reminders: not about reminders
    r.say("remind me at 3 pm to ring sue")
    r.say("remind me at 5 pm to walk the dog")
    assert r.say("cancel the one about the gym") is None  # (a membership, say): the dialogue answers
    gone = r.say("cancel the one about sue")
    assert gone is not None and gone.action == "cancel" and "ring sue" in gone.text
    assert [t for _s, _r, t in r.rows()] == ["walk the dog"]


def test_cancel_next_and_by_name_in_chinese(rig):
    r = rig()
    r.say("下午三点提醒我开会")
    r.say("明天下午六点提醒我交周报")
    reply = r.say("取消下一个提醒")
    assert reply is not None and reply.action == "cancel" and "开会" in reply.text
    reply = r.say("取消交周报的提醒")
    assert reply is not None and reply.text == "好的，取消了：明天（12月5日星期六）18:00交周报。"
    assert r.rows() == []
    r.say("remind me at 5 pm to feed the cat")
    assert r.say("cancel my next reminder").action == "cancel"
    assert r.rows() == []


def test_cancel_all_asks_first(rig):
    r = rig()
    r.say("remind me at 5 pm to feed the cat")
    r.say("明天下午六点提醒我交周报")
    ask = r.say("cancel all my reminders")
    assert ask is not None and ask.action == "cancel_ask" and "all 2" in ask.text
    assert r.say("no").text == "OK, I'll keep them."
    assert len(r.rows()) == 2
    ask = r.say("取消所有提醒")
    assert ask is not None and ask.text == "要取消你所有的2个提醒吗？"
    assert r.say("是的").action == "cancel"
    assert r.rows() == []


def test_which_one_can_be_answered_by_words(rig):
    r = rig()
    r.say("remind me to call mum at 6 pm")
    r.say("remind me to water plants at 6 pm")
    assert r.say("cancel my 6 pm reminder").action == "cancel_ask"
    assert r.say("water plants").action == "cancel"
    assert r.rows() == [("2026-12-04T18:00:00", "", "call mum")]


# -- snooze / acknowledge ------------------------------------------------------------------------
def test_snooze_and_acknowledge_after_a_reminder_was_said(rig):
    r = rig()
    r.say("remind me at 9:30 to call my mother")
    reminder = r.book.list("alice")[0]
    assert r.say("snooze") is None  # nothing was said yet
    r.clock.t = at("2026-12-04T09:30:00")
    r.talk.said("alice", reminder, r.clock.t)
    reply = r.say("remind me again in ten minutes")
    assert reply == TalkReply("OK, I'll remind you again at 09:40.", action="snooze")
    assert r.book.get("alice", reminder.id).due_local == "2026-12-04T09:40:00"
    r.clock.t = at("2026-12-04T09:40:00")
    r.talk.said("alice", reminder, r.clock.t)
    assert r.say("got it") == TalkReply("Great.", action="ack")
    assert r.book.get("alice", reminder.id).status == "acknowledged"
    assert r.say("ok") is None  # nothing left to acknowledge


def test_snooze_and_acknowledge_in_chinese(rig):
    r = rig()
    r.say("今天下午五点半提醒我接孩子")
    reminder = r.book.list("alice")[0]
    r.clock.t = at("2026-12-04T17:30:00")
    r.talk.said("alice", reminder, r.clock.t)
    reply = r.say("再过十分钟提醒我")
    assert reply == TalkReply("好的，17:40再提醒你。", action="snooze")
    r.clock.t = at("2026-12-04T17:40:00")
    r.talk.said("alice", reminder, r.clock.t)
    assert r.say("等会儿再提醒我").text == "好的，17:50再提醒你。"  # the default: ten minutes
    r.clock.t = at("2026-12-04T17:50:00")
    r.talk.said("alice", reminder, r.clock.t)
    assert r.say("知道了") == TalkReply("好的。", action="ack")
    assert r.book.get("alice", reminder.id).status == "acknowledged"


def test_acknowledge_only_within_fifteen_minutes(rig):
    r = rig()
    r.say("remind me at 9:30 to call my mother")
    reminder = r.book.list("alice")[0]
    r.talk.said("alice", reminder, at("2026-12-04T09:30:00"))
    r.clock.t = at("2026-12-04T09:46:00")
    assert r.say("thanks") is None
    assert r.book.get("alice", reminder.id).status == "scheduled"
    r.talk.said("alice", reminder, r.clock.t)
    assert r.say("谢谢你提醒我").action == "ack"


# -- change --------------------------------------------------------------------------------------
def test_change_in_both_languages(rig):
    r = rig()
    r.say("remind me to call mum at 6 pm")
    r.say("remind me to call the dentist at 3 pm")
    r.say("明天下午六点提醒我交周报")
    r.say("remind me to take my pills every day at 7:30")
    moved = r.say("move my reminder to call mum to 7 pm")
    assert moved is not None and moved.action == "change" and "call mum today at 19:00 (in 10 hours)" in moved.text
    moved = r.say("change the dentist reminder to tomorrow at 9")
    assert moved is not None and moved.action == "change" and "tomorrow, Saturday 5 December, at 09:00" in moved.text
    moved = r.say("把交周报的提醒改到下午四点")
    assert moved is not None and moved.action == "change" and "今天16:00提醒你交周报" in moved.text
    moved = r.say("move my pills reminder to 8 am")
    assert moved is not None and moved.action == "change"
    assert sorted(r.rows()) == [
        ("2026-12-04T16:00:00", "", "交周报"),
        ("2026-12-04T19:00:00", "", "call mum"),
        ("2026-12-05T08:00:00", "FREQ=DAILY;BYHOUR=8;BYMINUTE=0", "take my pills"),
        ("2026-12-05T09:00:00", "", "call the dentist"),
    ]


# -- commitments ---------------------------------------------------------------------------------
COMMITMENTS = [
    ("I'll call the dentist tomorrow", "call the dentist", "Good luck with calling the dentist"),
    ("I'm going to finish the report tonight", "finish the report", "Good luck with finishing the report"),
    ("I need to buy milk later", "buy milk", "Good luck with buying milk"),
    # going somewhere, not a verb after "going to"
    ("I'm going to a gig on Saturday", "go to a gig", "Good luck with going to a gig"),
    ("I have to renew my passport this week", "renew your passport", "renewing your passport"),
    ("我明天要给牙医打电话", "给牙医打电话", "好的，晚点我问问你给牙医打电话的事。"),
    ("我今晚要把报告写完", "把报告写完", "把报告写完"),
    ("我待会儿去买菜", "买菜", "买菜"),
]


@pytest.mark.parametrize("words,text,said", COMMITMENTS)
def test_commitments_are_kept(rig, words, text, said):
    r = rig()
    reply = r.say(words)
    assert reply is not None and reply.action == "commit" and said in reply.text
    kept = r.book.commitments("alice")
    assert [c.text for c in kept] == [text]
    assert kept[0].due_hint_utc > r.clock.t and kept[0].source_turn == "turn-1"
    assert r.rows() == []


def test_commitment_due_hint(rig):
    r = rig()
    r.say("I'll call the dentist tomorrow at 10 am")
    r.say("I need to buy milk later")
    hints = {c.text: c.due_hint_utc for c in r.book.commitments("alice")}
    assert hints == {"call the dentist": at("2026-12-05T10:00:00"), "buy milk": r.clock.t + 7200}


DONE = [
    ("I'll call the dentist tomorrow", "I called the dentist", "Well done — I've ticked off calling the dentist."),
    ("I'm going to finish the report tonight", "I've finished the report", "finishing the report"),
    ("I need to buy milk later", "I bought the milk", "buying milk"),
    ("我明天要给牙医打电话", "我已经给牙医打过电话了", "给牙医打电话"),
    ("我今晚要把报告写完", "报告写完了", "把报告写完"),
    ("我待会儿去买菜", "菜买好了", "买菜"),
]


@pytest.mark.parametrize("promise,done,said", DONE)
def test_a_commitment_done(rig, promise, done, said):
    r = rig()
    r.say(promise)
    reply = r.say(done)
    assert reply is not None and reply.action == "commit_done" and said in reply.text
    assert r.book.commitments("alice") == []
    assert r.book.commitments("alice", include_closed=True)[0].status == "done"


def test_done_that_matches_no_commitment_is_a_normal_turn(rig):
    r = rig()
    r.say("I'll call the dentist tomorrow")
    assert r.say("I called my sister") is None
    assert r.say("我已经给妈妈打过电话了") is None
    assert len(r.book.commitments("alice")) == 1


def test_followup_due_and_overdue_lines(rig):
    r = rig()
    r.say("I'll call the dentist tomorrow")
    r.say("我明天要给牙医打电话")
    lines = sorted(r.talk.followup_line(c) for c in r.book.commitments("alice"))
    assert lines == ["Did you call the dentist?", "你给牙医打电话了吗？"]
    r.say("Remind me to call my mother tomorrow at 6 pm")
    r.say("明天下午六点提醒我交周报")
    rows = {x.text: x for x in r.book.list("alice")}
    assert r.talk.due_line(rows["call my mother"]) == "Reminder: call your mother."
    assert r.talk.due_line(rows["交周报"]) == "提醒你：交周报。"
    assert r.talk.overdue_line("alice", [rows["call my mother"]], [3]) == (
        "While I was away, 1 reminder came due: call your mother (3 times)."
    )
    assert r.talk.overdue_line("alice", [rows["交周报"]], [1]) == "我不在的时候，有1个提醒到了时间：交周报。"
    assert r.talk.overdue_line("alice", [], []) == ""


# -- clear ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "words,said",
    [
        ("clear our conversation", "OK — let's start over."),
        ("let's start over", "OK — let's start over."),
        ("start a new conversation", "OK — let's start over."),
        ("清空对话", "好的，我们重新开始吧。"),
        ("重新开始吧", "好的，我们重新开始吧。"),
    ],
)
def test_clear_cancels_open_commitments(rig, words, said):
    r = rig()
    r.say("I'll call the dentist tomorrow")
    r.say("remind me at 5 pm to feed the cat")
    assert r.say(words) == TalkReply(said, clear_history=True, action="clear")
    assert r.book.commitments("alice") == []
    assert len(r.rows()) == 1  # reminders stay


@pytest.mark.parametrize(
    ("words", "said"),
    [
        ("remind me in 10 minutes that the kettle's on", "I'll remind you that the kettle's on today at 09:10"),
        ("remind me in an hour that the car needs petrol", "I'll remind you that the car needs petrol today at 10:00"),
        ("remind me at 4 about the dentist's appointment", "I'll remind you about the dentist's appointment"),
        ("remind me at 4 about the meeting", "I'll remind you about the meeting today"),
    ],
)
def test_a_reminder_of_how_things_are_is_confirmed_as_such(rig, words, said):
    r = rig(now="2026-12-04T09:00:00")
    reply = r.say(words)
    assert reply is not None and reply.action == "set" and said in reply.text, reply


# -- bad input: impossible, past or missing times ----------------------------------------------
@pytest.mark.parametrize(
    ("words", "question"),
    [
        ("Remind me on February 30 to pay rent", "When exactly should I remind you to pay rent?"),
        ("remind me yesterday to eat", "Thursday 3 December has already passed. When should I remind you to eat?"),
        ("昨天提醒我吃饭", "已经过去了。什么时候提醒你吃饭？"),
        ("remind me to eat", "What time should I remind you to eat?"),
        ("提醒我吃饭", "几点提醒你吃饭？"),
        ("提醒我2月30号交房租", "具体什么时候提醒你交房租？"),
    ],
)
def test_an_impossible_past_or_missing_time_gets_a_question_and_stores_nothing(rig, words, question):
    r = rig(now="2026-12-04T14:02:30")
    reply = r.say(words)
    assert reply is not None and reply.action == "ask" and question in reply.text, reply
    assert r.rows() == []


def test_a_memory_that_does_not_answer_is_said_as_such_and_nothing_is_pretended(clock):
    from fay_ros.memory.reminder_service import ReminderAnswer, ReminderRequest

    class Down:
        async def call(self, request: ReminderRequest) -> ReminderAnswer:
            return ReminderAnswer(False, "service memory/reminders is not running", unavailable=True)

    talk = ReminderTalk(Down(), SHANGHAI, clock)
    reply = asyncio.run(talk.answer("alice", "Remind me in 40 seconds to look at the blue screen."))
    assert reply is not None and reply.action == "unavailable" and "can't keep reminders right now" in reply.text
    zh = asyncio.run(talk.answer("alice", "明天下午三点提醒我交周报"))
    assert zh is not None and zh.action == "unavailable" and "记不了提醒" in zh.text
    assert asyncio.run(talk.answer("alice", "I like tea.")) is None  # other words still go to the model
