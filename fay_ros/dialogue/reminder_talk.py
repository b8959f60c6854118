"""The dialogue's reminder and commitment turns (issue 36), English and Chinese, no ROS.

`ReminderTalk.answer(user_id, text)` reads one user turn and, when it is about reminders or
commitments, does it through the `Reminders` port (`fay_ros.memory.reminder_service`) and
returns the reply to say (`TalkReply`); anything else is None and the normal turn goes on.
The intents, checked in this order so that they do not steal each other's phrases:

1. the answer to this user's pending question (a time, "yes", "no", "the first one"), for 5
   minutes of clock; a turn that is no answer drops the question and is read afresh;
2. snooze / acknowledge the reminder just said (`said`) within 15 minutes: "snooze", "in 5
   minutes", "再过十分钟提醒我"; "ok", "got it", "知道了";
3. set: `fay_ros.schedule.reminder_text.parse_reminder`; a missing, night, past or vague time
   is asked, not guessed; the confirmation says the absolute time and how long until it;
4. list ("what are my reminders tomorrow?", "我有哪些提醒");
5. cancel by words, by time, the next one, or all (asked first);
6. change ("move my reminder to call mum to 7 pm", "把交周报的提醒改到下午四点");
7. commitments: "I'll call the dentist tomorrow" is kept and followed up later; "I called the
   dentist" ticks it off (only when it matches an open one);
8. clear the conversation ("let's start over", "清空对话").

The replies carry no ids, no rule strings and no exception text: times are 24-hour local
wall-clock times in the zone given, dates in words.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Literal, overload
from zoneinfo import ZoneInfo

from ..common.errors import FayError
from ..memory.reminder_book import LOCAL_FORMAT, Commitment, Reminder
from ..memory.reminder_service import KEEP_RULE, ReminderAnswer, ReminderRequest, Reminders
from ..schedule.reminder_text import (
    NIGHT,
    NO_TIME,
    PAST,
    WEEKDAY_CODES,
    ParsedReminder,
    is_reminder_request,
    next_occurrence,
    parse_reminder,
    without_address,
)
from ..text import when
from ..text.words import and_list, has_cjk

PENDING_FOR = 300.0  # seconds a question waits for its answer
SAID_FOR = 900.0  # seconds after a reminder was said in which "ok" / "snooze" refer to it
SNOOZE_DEFAULT = 600.0
COMMIT_HINT = 7200.0  # a commitment with no time is asked about two hours later


class _Unavailable(FayError):
    """The reminder service did not answer (ReminderAnswer.unavailable)."""


@dataclass(frozen=True)
class TalkReply:
    text: str  # what to say (never empty)
    clear_history: bool = False  # the user asked to clear the conversation
    action: str = ""  # set|ask|list|cancel|cancel_ask|snooze|ack|change|commit|commit_done|clear|refuse|unavailable


@dataclass
class _Pending:
    kind: str  # "time" (a reminder waiting for its time), "which", "cancel_all"
    made: float
    zh: bool
    original: str = ""  # the request's words so far (kind "time")
    parsed: ParsedReminder | None = None
    candidates: tuple[Reminder, ...] = ()
    op: str = ""  # kind "which": "cancel" or "change"
    new: ParsedReminder | None = None  # kind "which", op "change": the new time
    target: Reminder | None = None  # kind "time": a change waiting for its new time


# ----------------------------------------------------------------------------- words
def second_person(text: str, zh: bool | None = None) -> str:
    """The user's own words said back to them: "call my mother" → "call your mother",
    "给我妈妈打电话" → "给你妈妈打电话"."""
    if has_cjk(text) if zh is None else zh:
        return re.sub(r"我(?!们)", "你", text)
    swaps = {
        "my": "your",
        "me": "you",
        "myself": "yourself",
        "mine": "yours",
        "i": "you",
        "i'm": "you're",
        "i've": "you've",
        "i'll": "you'll",
        "i'd": "you'd",
        "am": "are",
    }
    # (the longer words first: "I'm" is not "I" and "'m"; "am" only after "I")
    return re.sub(
        r"\b(I'm|I've|I'll|I'd|my|me|myself|mine|I)\b(?:( )(am)\b)?",
        lambda m: swaps[m.group(1).lower()] + (f" {swaps['am']}" if m.group(3) else ""),
        text,
        flags=re.I,
    )


def _clock(moment: datetime, seconds: bool = False) -> str:
    return moment.strftime("%H:%M:%S" if seconds else "%H:%M")


def _day_words(day: date, today: date, zh: bool, label: bool = True) -> str:
    """ "today" / "tomorrow, Saturday 5 December," / "on Monday 7 December"; "今天" /
    "明天（12月5日星期六）" / "12月7日（星期一）"."""
    offset = (day - today).days
    md = when.format_month_day(day.month, day.day, zh)
    if day.year != today.year:
        md = f"{day.year}年{md}" if zh else f"{md} {day.year}"
    weekday = when.WEEKDAYS_EN[day.weekday()]
    weekday_zh = "星期" + "一二三四五六日"[day.weekday()]
    if zh:
        if offset == 0 and label:
            return "今天"
        if offset in (1, 2) and label:
            return ("明天" if offset == 1 else "后天") + f"（{md}{weekday_zh}）"
        return f"{md}（{weekday_zh}）"
    if offset == 0 and label:
        return "today"
    if offset == 1 and label:
        return f"tomorrow, {weekday} {md},"
    return f"on {weekday} {md}"


def _moment_words(due: datetime, now: datetime, zh: bool) -> str:
    """ "today at 18:00", "tomorrow, Saturday 5 December, at 18:00", "at 14:03:10" (within five minutes:
    time with seconds); "今天18:00", "明天（12月5日星期六）18:00"."""
    close = due.second != 0 and (due - now) < timedelta(minutes=5)
    hhmm = _clock(due, seconds=close)
    if close and due.date() == now.date():
        return hhmm if zh else f"at {hhmm}"
    day = _day_words(due.date(), now.date(), zh)
    return f"{day}{hhmm}" if zh else f"{day} at {hhmm}"


def until_words(seconds: float, zh: bool, suffix: bool = True) -> str:
    """How long until, in its two largest units: "in 40 seconds", "in 8 hours 59 minutes", "in
    2 days 3 hours"; "40秒后", "8小时59分钟后" (without `suffix`: "8小时59分钟")."""
    left = max(0, int(round(seconds)))
    parts = [(left // 86400, "day", "天"), (left % 86400 // 3600, "hour", "小时")]
    parts += [(left % 3600 // 60, "minute", "分钟"), (left % 60, "second", "秒")]
    first = next((i for i, p in enumerate(parts) if p[0]), len(parts) - 1)
    shown = [p for p in parts[first : first + 2] if p[0]] or [parts[-1]]
    if zh:
        words = "".join(f"{n}{unit}" for n, _en, unit in shown)
        return words + ("后" if suffix else "")
    words = " ".join(f"{n} {unit}{'' if n == 1 else 's'}" for n, unit, _zh in shown)
    return f"in {words}" if suffix else words


_RULE_PART = re.compile(r"([A-Z]+)=([^;]+)")
_WEEKDAYS_ZH = "一二三四五六日"


def rule_words(rule: str, zh: bool) -> str:
    """An RRULE in words (without its time of day): "every weekday", "every Monday and
    Friday", "every 2 hours", "every month on the 5th"; "每个工作日", "每周一、五", "每2小时"."""
    parts = dict(_RULE_PART.findall(rule.upper()))
    freq = parts.get("FREQ", "")
    n = int(parts.get("INTERVAL", "1") or 1)
    days = [WEEKDAY_CODES.index(d[-2:]) for d in parts.get("BYDAY", "").split(",") if d[-2:] in WEEKDAY_CODES]
    if freq in ("HOURLY", "MINUTELY"):
        unit_en, unit_zh = ("hour", "小时") if freq == "HOURLY" else ("minute", "分钟")
        if zh:
            return f"每{n}{unit_zh}" if n > 1 else f"每{unit_zh}"
        return f"every {n} {unit_en}s" if n > 1 else f"every {unit_en}"
    if freq == "DAILY" and days and n == 1:
        freq = "WEEKLY"  # "every day on weekdays" is every weekday
    if freq == "DAILY" or (freq == "WEEKLY" and len(days) == 7):
        if n == 2:
            return "每隔一天" if zh else "every other day"
        return (f"每{n}天" if n > 1 else "每天") if zh else (f"every {n} days" if n > 1 else "every day")
    if freq == "WEEKLY":
        every = (
            ("每两周" if n == 2 else f"每{n}周" if n > 1 else "每周")
            if zh
            else "every" + (" other week on" if n == 2 else f" {n} weeks on" if n > 1 else "")
        )
        if days == [0, 1, 2, 3, 4] and n == 1:
            return "每个工作日" if zh else "every weekday"
        if days == [5, 6] and n == 1:
            return "每个周末" if zh else "every weekend"
        if zh:
            return every + "、".join(_WEEKDAYS_ZH[d] for d in days)
        names = [when.WEEKDAYS_EN[d] for d in days]
        return f"{every} {and_list(names)}".strip()
    if freq == "MONTHLY":
        day = parts.get("BYMONTHDAY", "")
        if zh:
            return f"每月{day}号" if day else "每月"
        return f"every month on the {_ordinal(int(day))}" if day.isdigit() else "every month"
    if freq == "YEARLY":
        month, day = parts.get("BYMONTH", ""), parts.get("BYMONTHDAY", "")
        if month.isdigit() and day.isdigit():
            md = when.format_month_day(int(month), int(day), zh)
            return f"每年{md}" if zh else f"every year on {md}"
        return "每年" if zh else "every year"
    return "定期" if zh else "regularly"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _rule_times(rule: str) -> list[tuple[int, int]]:
    """The (hour, minute) a rule fires at each day it fires: one, or several ("BYHOUR=8,20")."""
    parts = dict(_RULE_PART.findall(rule.upper()))
    if "BYHOUR" not in parts:
        return []
    minutes = [int(m) for m in parts.get("BYMINUTE", "0").split(",")]
    return sorted((int(h), m) for h in parts["BYHOUR"].split(",") for m in minutes)


def _rule_time(rule: str) -> tuple[int, int] | None:
    """The one time of day a rule fires at (None: none, or several)."""
    times = _rule_times(rule)
    return times[0] if len(times) == 1 else None


def _repeat_words(rule: str, zh: bool) -> str:
    """ "every weekday at 07:30" / "每个工作日07:30"; "every day at 08:00 and 20:00"."""
    words = rule_words(rule, zh)
    times = [f"{h:02d}:{m:02d}" for h, m in _rule_times(rule)]
    if not times:
        return words
    if zh:
        return words + (times[0] if len(times) == 1 else "、".join(times[:-1]) + "和" + times[-1])
    return f"{words} at {and_list(times)}"


# ----------------------------------------------------------------------------- matching words
_STOP_EN = set(
    "a an the to my your me you i of for about on at in and or with reminder reminders alarm alarms "
    "that this it please".split()
)
_SAME_EN = {"mum": "mother", "mom": "mother", "mommy": "mother", "mummy": "mother", "dad": "father", "daddy": "father"}
_IRREGULAR = {
    "bought": "buy",
    "did": "do",
    "done": "do",
    "made": "make",
    "went": "go",
    "gone": "go",
    "wrote": "write",
    "written": "write",
    "sent": "send",
    "paid": "pay",
    "took": "take",
    "taken": "take",
    "got": "get",
    "gave": "give",
    "given": "give",
    "ran": "run",
    "sold": "sell",
    "told": "tell",
    "met": "meet",
    "found": "find",
    "brought": "bring",
    "spoke": "speak",
    "spoken": "speak",
    "ate": "eat",
    "drank": "drink",
    "fed": "feed",
    "left": "leave",
    "booked": "book",
}
_STOP_ZH = set("的了我你他她们提醒闹钟个一下把给要去过已经吧呢啊呀吗和跟在到得着")
# Verbs and function characters: what a Chinese task shares with any other task.
_GENERIC_ZH = _STOP_ZH | set("打电话做买写完好交发看")


def _stem(word: str) -> str:
    w = _SAME_EN.get(word, _IRREGULAR.get(word, word))
    for suffix in ("ing", "ed", "es", "s", "e"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # "shopp" (shopping, shopped) → "shop"
    return w


def _en_words(text: str) -> list[str]:
    return [_stem(w) for w in re.findall(r"[a-z']+", text.lower()) if w not in _STOP_EN]


def _zh_marks(text: str) -> set[str]:
    chars = [c for c in text if has_cjk(c)]
    marks = {c for c in chars if c not in _STOP_ZH}
    marks |= {a + b for a, b in zip(chars, chars[1:], strict=False) if a not in _STOP_ZH or b not in _STOP_ZH}
    return marks


def _overlap(said: str, stored: str) -> int:
    """How many words (English stems; Chinese characters and pairs of characters) `said` and
    `stored` share."""
    if has_cjk(said) or has_cjk(stored):
        return len(_zh_marks(said) & _zh_marks(stored))
    return len(set(_en_words(said)) & set(_en_words(stored)))


def _object_overlap(said: str, task: str) -> int:
    """The words of `task` besides its verb (English: after the first word; Chinese: not the
    generic verbs) that `said` has: "I called my sister" is not "call the dentist"."""
    if has_cjk(said) or has_cjk(task):
        own = {c for c in task if has_cjk(c) and c not in _GENERIC_ZH}
        if not own:
            return _overlap(said, task)
        return len(own & {c for c in said if has_cjk(c)})
    words = _en_words(task)
    objects = set(words[1:]) or set(words)
    return len(objects & set(_en_words(said)))


# ----------------------------------------------------------------------------- phrases
_YES_EN = re.compile(
    r"^(?:yes|yeah|yep|yup|sure|ok(?:ay)?|right|correct|exactly|please do|do it|go ahead|fine|alright|"
    r"of course|that'?s (?:right|fine|correct)|sounds good|please)\b",
    re.I,
)
_NO_EN = re.compile(
    r"^(?:no|nope|nah|never ?mind|forget it|cancel(?: it)?|don'?t|not really|leave it|skip it|keep (?:them|it)|"
    r"stop)\b",
    re.I,
)
_YES_ZH = re.compile(r"^(?:是的?|对的?|对啊|好的?|好啊|可以|行|嗯|没错|确定|当然|要的?|就这样)")
_NO_ZH = re.compile(r"^(?:不用了?|不要了?|不是|不行|不|算了|别|取消|没有|没)")
_ALL_EN = re.compile(r"\b(?:all|both|every one|everything|each)\b", re.I)
_ALL_ZH = re.compile(r"所有|全部|都|两个都|每个")
_ORDINALS_EN = ("first", "second", "third", "fourth", "fifth")
_ORDINALS_ZH = "一二三四五"
_FILLER_EN = re.compile(
    r"^(?:(?:um+|uh+|er+|well|so|ok(?:ay)?|no|yes|yeah|maybe|how about|what about|let'?s say|make it|"
    r"please|at about|around|about|then|instead)[,\s]+)+|[\s,.!?]*(?:please|then|instead|thanks)?[\s.!?]*$",
    re.I,
)
_FILLER_ZH = re.compile(
    r"^(?:嗯|呃|那|就|那就|改成|换成|还是|不是|不|在|是)+|(?:吧|啊|呀|好了|可以吗|行吗|就行|吧)+$|[，。！？,.!?]"
)

_SNOOZE_EN = re.compile(
    r"\bsnooze\b|\bremind me (?:again|later)\b|\b(?:again|later) in\b|^\s*(?:in|after|give me) (?:another )?"
    r"(?:\d+|[a-z]+(?:[- ][a-z]+)?|a|an|half an?) (?:more )?(?:sec(?:ond)?|min(?:ute)?|hour)s?\b|"
    r"^\s*(?:later|not now|not yet|maybe later)\b",
    re.I,
)
_SNOOZE_ZH = re.compile(
    r"再过|(?:分钟|小时)(?:以后|之后|后)?(?:再|重新)?提醒|等(?:一)?会儿?(?:再)?|过(?:一)?会儿?(?:再)?|"
    r"晚(?:一)?点(?:再)?|稍后|再提醒|待会儿?(?:再)?|一会儿?再"
)
_SPAN_EN = re.compile(
    r"(\d+|half an?|an?|[a-z]+(?:[- ][a-z]+)?) (?:more )?(sec(?:ond)?|min(?:ute)?|hour|hr)s?\b",
    re.I,
)
_SPAN_ZH = re.compile(r"(\d+|[零一二两三四五六七八九十半]+)(?:个)?(秒钟?|分钟|小时|钟头)")
_ACK_EN = re.compile(
    r"^(?:ok(?:ay)?|got it|done|i did(?: it)?|i've done it|i have done it|did it|will do|thanks?|thank you|"
    r"cheers|sure|alright|all right|i know|on it|right|roger|understood|noted|yes|yeah|yep|great|cool|good)\b"
    r"(?:[\s,.!]+(?:thanks?|thank you|i will|will do|got it|done|i did|i know|fine|right|you|so much|"
    r"a lot|for (?:the|reminding me)|reminder|doing it now)*)*[\s.!]*$",
    re.I,
)
_ACK_ZH = re.compile(
    r"^(?:好的?|好嘞|好啊|知道了?|收到|谢谢(?:你|您)?(?:的)?(?:提醒)?(?:我)?|明白了?|行|嗯+|好的知道了|"
    r"我知道了?|做了|做完了|已经(?:做|弄|搞)(?:完|好)?了|马上(?:去|做)?|这就去|没问题|ok)+[了啦呀啊哦，,。.!！]*$",
    re.I,
)

_LIST_EN = re.compile(
    r"\b(?:what|which|any|list|show|tell me|read)\b[^?]*\breminders?\b|\bdo i have (?:any )?reminders?\b|"
    r"^\s*(?:my )?reminders\s*\??$|\bwhat (?:do )?i (?:have|need) to (?:remember|do)\b[^?]*\breminders?\b",
    re.I,
)
_LIST_ZH = re.compile(r"(?:有什么|有哪些|有没有|有几个|什么|哪些)(?:的)?提醒|有提醒吗|我的提醒|提醒(?:列表|有哪些)")
_CANCEL_EN = re.compile(
    r"\b(?:cancel|delete|remove|forget|drop|scrap|clear|turn off|switch off|stop|disable|get rid of)\b"
    r"(?P<rest>.*?)\b(?:reminders?|alarms?)\b(?P<after>.*)$|"
    r"\b(?:don'?t|no need to|you don'?t need to) remind me (?:to |about )?(?P<dont>.+)$|"
    # "cancel the one about Sue": a reminder only when one of them is about Sue (see _cancel)
    r"^\s*(?:please\s+)?(?:cancel|delete|remove|scrap|drop|get rid of) the one (?:about|for|to|at|with) (?P<one>.+)$",
    re.I,
)
_CANCEL_ZH = re.compile(
    r"(?:取消|删掉|删除|去掉|关掉|撤销|删了|不要|别再?)(?P<rest>.*?)(?:的)?(?:提醒|闹钟)(?P<after>.*)$|"
    r"(?:不用|不需要|别再?)提醒我(?P<dont>[^了]{2,}?)了?$|把(?P<ba>.*?)的?(?:提醒|闹钟)(?:取消|删掉|删除|去掉|关掉)"
)
_NEXT_EN = re.compile(r"\b(?:next|upcoming|first)\b", re.I)
_NEXT_ZH = re.compile(r"下一个|下个|最近的?(?:一个)?|第一个")
_CHANGE_EN = re.compile(
    r"^\s*(?:please\s+|can you\s+|could you\s+)?(?:move|change|reschedule|push|shift|put|set|make)\s+(?P<body>.*?"
    r"\breminders?\b.*)$",
    re.I,
)
_CHANGE_ZH = re.compile(
    r"把?(?P<name>.*?)的?(?:提醒|闹钟)(?:时间)?(?:改|换|挪|推|调|推迟)(?:到|成|为|在)(?P<time>.+)$|"
    r"(?:提醒|闹钟)(?P<name2>.*?)(?:改|换|挪|推|调)(?:到|成|为|在)(?P<time2>.+)$"
)
_CLEAR_EN = re.compile(
    r"\b(?:clear|wipe|reset|erase|delete)\b[\w\s]{0,20}\b(?:conversation|chat|history|talk)\b|"
    r"\blet'?s start (?:over|again|afresh|fresh|from scratch)\b|^\s*start over\b|"
    r"\bstart (?:a )?(?:new|fresh|clean) (?:conversation|chat)\b|\bforget (?:our|this) conversation\b",
    re.I,
)
_CLEAR_ZH = re.compile(
    r"清空(?:我们的|一下)?(?:对话|聊天|记录|上下文)|清除(?:对话|聊天记录)|重新开始|开始新的?对话|重开(?:对话|聊天)"
)

_COMMIT_EN = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|well|so|right|anyway|alright)[,\s]+)?(?:tomorrow|tonight|later|today)?[,\s]*"
    r"i(?:'ll| will| shall|'m going to| am going to|'m gonna| am gonna| need to| have to| must|'ve got to| have got to|"
    r" gotta| got to)\s+(?P<task>.+?)[\s.!]*$",
    re.I,
)
_NOT_TASK_EN = re.compile(
    r"^(?:not|never|probably|maybe|perhaps|just|have|be|take it|think|see|try|like|love|hate|want|miss|let|tell|say|"
    r"sleep|wait|keep|remember|need|feel|know|guess|bet|look|watch|listen|talk|stay|eat|drink|come|go (?:to )?"
    r"(?:bed|sleep|home)|get (?:back|better|some rest|going|used)|leave|pass|admit|pretend|ask you|"
    r"do (?:it|that|this|so)|"
    r"die|kill|give up|stop|start (?:now|again)|check (?:it|that)|figure|consider|wonder|work on it|manage|handle it|"
    r"be back|brb|go now|go$|do my best|answer|reply|explain|help you|show you|call you|text you)\b",
    re.I,
)
_HEDGE_EN = re.compile(r"\b(?:if|unless|maybe|perhaps|might|probably|whether|when you|you)\b|\?", re.I)
_DONE_EN = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|well|so|yes|yeah|by the way)[,\s]+)?(?:i(?:'ve| have)?|i just|i've just|i have just|"
    r"i already|i've already|i have already|i finally|i've finally)\s+(?:just\s+|already\s+|finally\s+)?"
    r"(?P<verb>(?!need\b|feed\b|speed\b|shed\b)[a-z]+ed|bought|did|made|went|wrote|sent|paid|took|got|gave|sold|told|met|found|brought|spoke|"
    r"ate|drank|fed|left|done|written|taken|given|gone)\b(?P<rest>.*)$|"
    r"^\s*(?:i'?m|i am) (?:done|finished) with (?P<with>.+)$",
    re.I,
)
_TIME_WORDS_ZH = (
    "今天|明天|后天|今晚|明晚|明早|待会儿?|一会儿?|等会儿?|等一下|下午|晚上|早上|上午|中午|周末|这周|下周|这个星期|"
    "马上|晚点|回头|过几天|稍后"
)
_COMMIT_ZH = re.compile(
    rf"^(?:好吧?|那|嗯)?[，,]?我(?:(?:{_TIME_WORDS_ZH})[，,]?)+(?:就|得|要|会|打算|准备|需要|必须|应该)?"
    rf"(?:得|要|去|会|打算|准备)?(?P<task>.+?)[。！!，,]*$"
)
_NOT_TASK_ZH = re.compile(
    r"^(?:不|没|别|想|是|觉得|喜欢|睡觉|休息|走了|一个|一杯|这个|那个|有|在|说|吃饭|回家|上班)|吗|？|\?|什么|几|呢$|了$"
)
_DONE_ZH = re.compile(r"(?:已经.*了|(?:完|好|过|掉)了|做完|写完了|买好了|办好了|搞定了?)[。！!]*$")
_DONE_NOT_ZH = re.compile(r"^(?:我)?(?:还)?(?:没|不|别)|吗|？|\?|要")


# ----------------------------------------------------------------------------- the talk
class ReminderTalk:
    """The dialogue's reminder and commitment turns for every user of one companion (the
    pending questions and the reminder last said are kept per user, in memory)."""

    def __init__(self, reminders: Reminders, tz: str, clock: Callable[[], float] = time.time) -> None:
        self.reminders = reminders
        self.tz = tz
        self.zone = ZoneInfo(tz)
        self.clock = clock
        self._pending: dict[str, _Pending] = {}
        self._said: dict[str, tuple[Reminder, float]] = {}
        # the companion's names (its persona's), read at each turn: said first, they address it
        self.names: Callable[[], tuple[str, ...]] = tuple

    # -- the port
    async def _call(self, action: str, owner: str, **fields) -> tuple[bool, tuple[Reminder, ...], str]:
        answer = await self._ask(ReminderRequest(action=action, owner=owner, tz=self.tz, **fields))
        return answer.success, answer.reminders, answer.message

    async def _ask(self, request: ReminderRequest) -> ReminderAnswer:
        answer = await self.reminders.call(request)
        if answer.unavailable:
            raise _Unavailable(answer.message)
        return answer

    def _now(self) -> datetime:
        # whole seconds: a reminder is stored to the second, so "in 40 seconds" is confirmed as
        # 40 seconds, not the 39.4 left after the stored time lost its fraction
        return datetime.fromtimestamp(self.clock(), self.zone).replace(microsecond=0)

    # -- the turn
    async def answer(self, user_id: str, text: str, language: str = "", source_turn: str = "") -> TalkReply | None:
        """The reply to a turn about reminders or commitments, or None (not about them: the
        normal turn goes on). The memory not answering is said as such: nothing was kept."""
        zh = language == "zh" if language in ("en", "zh") else has_cjk(text)
        try:
            return await self._answer(user_id, text, language, source_turn)
        except _Unavailable:
            return TalkReply(
                "抱歉，我现在记不了提醒（记忆没有响应），请过一会儿再说一次。"
                if zh
                else "Sorry, I can't keep reminders right now — my memory isn't answering. "
                "Please ask me again in a moment.",
                action="unavailable",
            )

    async def _answer(self, user_id: str, text: str, language: str, source_turn: str) -> TalkReply | None:
        words = without_address(text, self.names()).strip()
        if not words:
            return None
        zh = language == "zh" if language in ("en", "zh") else has_cjk(words)
        now = self._now()
        pending = self._pending.pop(user_id, None)
        if pending is not None and self.clock() - pending.made <= PENDING_FOR:
            reply = await self._answer_pending(user_id, pending, words, zh, now, source_turn)
            if reply is not None:
                return reply
        said = self._said.get(user_id)
        if said is not None and self.clock() - said[1] <= SAID_FOR:
            reply = await self._snooze_or_ack(user_id, said[0], words, zh, now)
            if reply is not None:
                return reply
        for step in (self._set, self._list, self._cancel, self._change, self._commitment, self._clear):
            reply = await step(user_id, words, zh, now, source_turn)
            if reply is not None:
                return reply
        return None

    def wants(self, user_id: str, text: str) -> bool:
        """Whether `answer` might take this turn, without doing anything (no memory call, no
        state change): a speculative guess at the user's words must not set or cancel anything,
        so the engine does not speculate on such a turn. Errs on the side of True."""
        words = without_address(text, self.names()).strip()
        if not words:
            return False
        if user_id in self._pending or user_id in self._said:
            return True
        if is_reminder_request(words):
            return True
        patterns = (_LIST_EN, _LIST_ZH, _CANCEL_EN, _CANCEL_ZH, _CHANGE_EN, _CHANGE_ZH, _CLEAR_EN, _CLEAR_ZH) + (
            _COMMIT_EN,
            _COMMIT_ZH,
            _DONE_EN,
            _DONE_ZH,
        )
        return any(p.search(words) for p in patterns)

    def said(self, user_id: str, reminder: Reminder, at: float) -> None:
        """The scheduler just said `reminder` to `user_id` at `at`: "ok"/"got it"/"snooze"/"再过十分钟"
        now refer to it."""
        if user_id:
            self._said[user_id] = (reminder, at)

    # -- lines the scheduler says
    def due_line(self, reminder: Reminder) -> str:
        """ "Reminder: call your mother." / "提醒你：交周报。" (the language of the reminder's text)."""
        zh = has_cjk(reminder.text)
        what = second_person(reminder.text, zh).rstrip("。.!！")
        return f"提醒你：{what}。" if zh else f"Reminder: {what}."

    def overdue_line(self, owner: str, reminders: Sequence[Reminder], times: Sequence[int]) -> str:
        """One short line for what fell due while nobody was there ("" when nothing did)."""
        if not reminders:
            return ""
        zh = sum(has_cjk(r.text) for r in reminders) * 2 >= len(reminders)
        counts = list(times) + [1] * (len(reminders) - len(times))
        shown = []
        for r, n in list(zip(reminders, counts, strict=False))[:3]:
            what = second_person(r.text, has_cjk(r.text)).rstrip("。.!！")
            shown.append(what + ((f"（{n}次）" if zh else f" ({n} times)") if n > 1 else ""))
        more = len(reminders) - len(shown)
        if zh:
            tail = f"等{len(reminders)}个" if more > 0 else ""
            return f"我不在的时候，有{len(reminders)}个提醒到了时间：{'；'.join(shown)}{tail}。"
        count = len(reminders)
        tail = f" and {more} more" if more > 0 else ""
        plural = "s" if count > 1 else ""
        return f"While I was away, {count} reminder{plural} came due: {'; '.join(shown)}{tail}."

    def followup_line(self, commitment: Commitment) -> str:
        """ "Did you call the dentist?" / "你给牙医打电话了吗？"."""
        what = commitment.text.rstrip("。.!！?？")
        if has_cjk(what):
            return f"你{re.sub(r'^你', '', what)}了吗？"
        return f"Did you {what}?"

    # -- 1. the pending question
    async def _answer_pending(
        self, user_id: str, p: _Pending, words: str, zh: bool, now: datetime, turn: str
    ) -> TalkReply | None:
        yes, no = self._yes_no(words, zh)
        if p.kind == "cancel_all":
            if yes or (re.search(r"取消|cancel|delete|都", words, re.I) and not no):
                for r in p.candidates:
                    await self._call("cancel", user_id, id=r.id)
                n = len(p.candidates)
                return TalkReply(
                    f"好的，{n}个提醒都取消了。" if p.zh else f"Done — I cancelled all {n} reminders.", action="cancel"
                )
            if no:
                return TalkReply("好的，提醒都保留着。" if p.zh else "OK, I'll keep them.", action="cancel")
            return None
        if p.kind == "which":
            return await self._which(user_id, p, words, zh, now, yes, no)
        # kind "time": a reminder (or a change) waiting for its time
        assert p.parsed is not None
        answered = self._time_answer(p, words, now)
        if answered is not None:
            if p.target is not None:
                return await self._do_change(user_id, p.target, answered, p.zh, now)
            return await self._settle(user_id, f"{p.original} {words}", answered, p.zh, now, turn)
        if no and not yes:
            return TalkReply("好的，那就不提醒了。" if p.zh else "OK, no reminder then.", action="ask")
        if yes and p.parsed.due is not None and p.parsed.question in (NIGHT, PAST):
            due = p.parsed.due
            if p.parsed.question == PAST:
                due = self._next_same_time(due, now)
            fixed = replace(p.parsed, due=due, question=None)
            if p.target is not None:
                return await self._do_change(user_id, p.target, fixed, p.zh, now)
            return await self._add(user_id, p.original, fixed, p.zh, now, turn)
        return None

    def _yes_no(self, words: str, zh: bool) -> tuple[bool, bool]:
        w = words.strip().lower()
        no = bool(_NO_ZH.search(w) if has_cjk(w) else _NO_EN.search(w))
        yes = not no and bool(_YES_ZH.search(w) if has_cjk(w) else _YES_EN.search(w))
        return yes, no

    def _next_same_time(self, due: datetime, now: datetime) -> datetime:
        moved = datetime.combine(now.date(), due.timetz())
        while moved <= now:
            moved = datetime.combine(moved.date() + timedelta(days=1), due.timetz())
        return moved

    def _time_answer(self, p: _Pending, words: str, now: datetime) -> ParsedReminder | None:
        """The request with its time, when `words` is a time and nothing else ("at 6 pm",
        "tomorrow morning at 8", "下午三点")."""
        assert p.parsed is not None
        zh = has_cjk(p.original) or has_cjk(words)
        answer = (_FILLER_ZH if zh else _FILLER_EN).sub("", words.strip()).strip()
        if not answer:
            return None
        answers = [answer]
        if not zh and re.match(r"^(?:\d|[a-z]+(?:[- ][a-z]+)?$)", answer, re.I) and when.number(answer.split()[0]):
            answers.append("at " + answer)  # "6" / "six pm"
        what = p.parsed.text or ("提醒" if zh else "reminder")
        tries = []
        for a in answers:
            if p.parsed.question == NO_TIME:
                tries.append(f"{p.original} {a}" if not zh else f"{p.original}{a}")
            elif p.parsed.question == NIGHT and p.target is None:
                # "at 11?" - "no, in the morning": the part of the day for the clock time asked about
                tries.append(f"{p.original} {a}" if not zh else f"{a}{p.original}")
            tries.append(f"{a}提醒我{what}" if zh else f"remind me to {what} {a}")
        for attempt in tries:
            found = parse_reminder(attempt, now, self.tz)
            if not found.is_request or _norm(found.text) != _norm(p.parsed.text):
                continue  # the answer had words that are no time
            if found.due is None:
                continue  # no time in it
            return replace(found, text=p.parsed.text) if p.target is not None else found
        return None

    async def _which(
        self, user_id: str, p: _Pending, words: str, zh: bool, now: datetime, yes: bool, no: bool
    ) -> TalkReply | None:
        chosen: list[Reminder] = []
        low = words.lower()
        if (_ALL_ZH if has_cjk(words) else _ALL_EN).search(words) and p.op == "cancel":
            chosen = list(p.candidates)
        else:
            for i, r in enumerate(p.candidates[:5]):
                if re.search(rf"\b{_ORDINALS_EN[i]}\b|\b{i + 1}\b|#{i + 1}", low) or f"第{_ORDINALS_ZH[i]}" in words:
                    chosen = [r]
                    break
            if not chosen and re.search(r"\b(?:last|latter|later one)\b|最后|后面那个", low):
                chosen = [p.candidates[-1]]
            if not chosen:
                scores = [_overlap(words, r.text) + self._time_match(words, r, now) for r in p.candidates]
                best = max(scores) if scores else 0
                if best > 0 and scores.count(best) == 1:
                    chosen = [p.candidates[scores.index(best)]]
        if not chosen:
            if no:
                return TalkReply("好的，都不动。" if p.zh else "OK, I'll leave them as they are.", action="cancel")
            return None
        if p.op == "change" and p.new is not None:
            return await self._do_change(user_id, chosen[0], p.new, p.zh, now)
        return await self._cancel_these(user_id, chosen, p.zh, now)

    def _time_match(self, words: str, reminder: Reminder, now: datetime) -> int:
        probe = parse_reminder(f"{words}提醒我" if has_cjk(words) else f"remind me {words}", now, self.tz)
        if probe.due is None:
            return 0
        due = datetime.fromtimestamp(reminder.next_due_utc, self.zone)
        return 2 if (due.hour, due.minute) == (probe.due.hour, probe.due.minute) else 0

    # -- 2. snooze / acknowledge
    async def _snooze_or_ack(
        self, user_id: str, reminder: Reminder, words: str, zh: bool, now: datetime
    ) -> TalkReply | None:
        w = words.strip()
        if (_SNOOZE_ZH if has_cjk(w) else _SNOOZE_EN).search(w):
            seconds = self._span(w) or SNOOZE_DEFAULT
            until = self.clock() + seconds
            ok, _, _ = await self._call("snooze", user_id, id=reminder.id, at=until)
            self._said.pop(user_id, None)
            if not ok:
                return TalkReply("那个提醒已经不在了。" if zh else "That reminder is no longer there.", action="snooze")
            at = datetime.fromtimestamp(until, self.zone)
            hhmm = _clock(at, seconds=seconds < 60 and at.second != 0)
            return TalkReply(
                f"好的，{hhmm}再提醒你。" if zh else f"OK, I'll remind you again at {hhmm}.", action="snooze"
            )
        if (_ACK_ZH if has_cjk(w) else _ACK_EN).search(w):
            await self._call("acknowledge", user_id, id=reminder.id)
            self._said.pop(user_id, None)
            return TalkReply("好的。" if zh else "Great.", action="ack")
        return None

    def _span(self, words: str) -> float:
        m = _SPAN_ZH.search(words) if has_cjk(words) else _SPAN_EN.search(words)
        if not m:
            return 0.0
        count_text, unit = m.group(1).lower(), m.group(2).lower()
        if count_text.startswith("half") or count_text == "半":
            count: float = 0.5
        elif count_text in ("a", "an"):
            count = 1
        else:
            count = float(when.number(count_text) or 0)
        size = 3600 if unit.startswith(("hour", "hr", "小时", "钟头")) else 1 if unit.startswith(("sec", "秒")) else 60
        return count * size

    # -- 3. set
    async def _set(self, user_id: str, words: str, zh: bool, now: datetime, turn: str) -> TalkReply | None:
        parsed = parse_reminder(words, now, self.tz)
        if not parsed.is_request:
            return None
        if not user_id:
            return _refusal(zh)
        return await self._settle(user_id, words, parsed, zh, now, turn)

    async def _settle(
        self, user_id: str, words: str, parsed: ParsedReminder, zh: bool, now: datetime, turn: str
    ) -> TalkReply:
        """Add `parsed`, or ask its question and keep it pending."""
        if parsed.question is None and parsed.due is not None:
            return await self._add(user_id, words, parsed, zh, now, turn)
        self._pending[user_id] = _Pending("time", self.clock(), zh, original=words, parsed=parsed)
        return TalkReply(self._question(words, parsed, zh, now), action="ask")

    def _question(self, words: str, parsed: ParsedReminder, zh: bool, now: datetime) -> str:
        what = _what(parsed.text, zh)
        if parsed.question == NIGHT and parsed.due is not None:
            due = parsed.due
            day = "" if due.date() == now.date() else _day_words(due.date(), now.date(), zh)
            if zh:
                return f"你是说{day}夜里{_clock(due)}吗？说“是”，或者告诉我别的时间。"
            day_en = f" ({day.rstrip(',')})" if day else ""
            return f"Do you mean {_clock(due)} at night{day_en}? Say yes, or give me another time."
        if parsed.question == PAST and parsed.due is not None:
            instead = self._next_same_time(parsed.due, now)
            if zh:
                said = _moment_words(parsed.due, now, zh)
                return f"{said}已经过了。改成{_moment_words(instead, now, zh)}可以吗？"
            said = f"{_clock(parsed.due)} {_short_day(parsed.due.date(), now.date())}"
            other = _capital(_short_day(instead.date(), now.date()))
            return f"{said} has already passed. {other} at {_clock(instead)} instead?"
        if parsed.question == NO_TIME:
            day = self._day_said(words, now, zh)
            rule = rule_words(parsed.repeat, zh) if parsed.repeat else ""
            named = self._day_said(words, now, zh, date_only=True)
            if named is not None and named < now.date() and not rule:
                if zh:
                    return f"{day}已经过去了。什么时候提醒你{what}？"
                gone = _capital(_short_day(named, now.date()).removeprefix("on "))
                return f"{gone} has already passed. When should I remind you{_to(what)}?"
            if zh:
                head = rule or day
                return f"{head}几点提醒你{what}？" if what else f"{head}几点提醒你？"
            probe_day = self._day_said(words, now, zh, date_only=True)
            head = f" {rule}" if rule else f" {_short_day(probe_day, now.date())}" if probe_day else ""
            return f"What time{head} should I remind you{_to(what)}?"
        if zh:
            return f"具体什么时候提醒你{what}？说一个时间，比如下午六点，或者二十分钟后。"
        return f"When exactly should I remind you{_to(what)}? Tell me a time, like 6 pm or in 20 minutes."

    @overload
    def _day_said(self, words: str, now: datetime, zh: bool) -> str: ...
    @overload
    def _day_said(self, words: str, now: datetime, zh: bool, date_only: Literal[True]) -> date | None: ...
    def _day_said(self, words: str, now: datetime, zh: bool, date_only: bool = False) -> str | date | None:
        """The day a request without a time names ("tomorrow", "明天"): in words, or the date."""
        noon = parse_reminder(f"{words}12:00" if zh else f"{words} at 12:00", now, self.tz)
        # with no day named the parser takes the first of each time still ahead: 12:00 and
        # 23:59 then fall on different days (or both today); a named day holds both
        late = parse_reminder(f"{words}23:59" if zh else f"{words} at 23:59", now, self.tz)
        if noon.due is None or late.due is None or noon.due.date() != late.due.date():
            return None if date_only else ""
        if noon.due.date() == now.date():
            return None if date_only else ""
        return noon.due.date() if date_only else _day_words(noon.due.date(), now.date(), zh)

    async def _add(
        self, user_id: str, words: str, parsed: ParsedReminder, zh: bool, now: datetime, turn: str
    ) -> TalkReply:
        assert parsed.due is not None
        text = parsed.text or ("闹钟" if zh else "your alarm")
        ok, added, message = await self._call(
            "add",
            user_id,
            text=text,
            start_local=parsed.due.replace(tzinfo=None).strftime(LOCAL_FORMAT),
            repeat=parsed.repeat or "",
            source_utterance=words,
            source_turn=turn,
        )
        if not ok or not added:
            return TalkReply(_refused_add(message, zh), action="refuse")
        return TalkReply(self._confirm(added[0], zh, now), action="set")

    def _confirm(self, reminder: Reminder, zh: bool, now: datetime, changed: bool = False) -> str:
        due = datetime.fromtimestamp(reminder.next_due_utc, self.zone)
        what = _what(reminder.text, zh)
        left = reminder.next_due_utc - now.timestamp()
        if reminder.repeats:
            rule = _repeat_words(reminder.rrule, zh)
            first = (
                _moment_words(due, now, zh)
                if reminder.rrule.startswith(("FREQ=HOURLY", "FREQ=MINUTELY"))
                else (_day_words(due.date(), now.date(), zh, label=True))
            )
            if zh:
                return f"好的，{rule}提醒你{what}，第一次是{first.rstrip(',')}，还有{until_words(left, True, False)}。"
            first_en = first.rstrip(",")
            first_en = first_en if first_en.startswith(("on ", "at ")) else first_en
            return f"OK — I'll remind you{_to(what)} {rule}, first {first_en} ({until_words(left, False)})."
        moment = _moment_words(due, now, zh)
        if zh:
            head = "好的，改成" if changed else "好的，"
            return f"{head}{moment}提醒你{what}，还有{until_words(left, True, False)}。"
        head = "OK — I'll now remind you" if changed else "OK — I'll remind you"
        return f"{head}{_to(what)} {moment} ({until_words(left, False)})."

    # -- 4. list
    async def _list(self, user_id: str, words: str, zh: bool, now: datetime, _turn: str) -> TalkReply | None:
        if not (_LIST_ZH if has_cjk(words) else _LIST_EN).search(words):
            return None
        if re.search(r"取消|删|cancel|delete|remove|clear", words, re.I):
            return None
        if not user_id:
            return _refusal(zh)
        ok, found, _ = await self._call("list", user_id)
        day = _named_day(words, now)
        if day is not None:
            found = tuple(r for r in found if self._falls_on(r, day))
        day_zh = "" if day is None else _day_words(day, now.date(), True).split("（")[0]
        day_en = "" if day is None else " " + _day_words(day, now.date(), False).rstrip(",").split(",")[0]
        if not found:
            return TalkReply(
                f"你{day_zh}没有提醒。"
                if zh and day_zh
                else "你现在没有提醒。"
                if zh
                else f"You have no reminders{day_en}.",
                action="list",
            )
        items = [self._item(r, zh, now, day) for r in found[:5]]
        more = len(found) - len(items)
        n = len(found)
        if zh:
            tail = f"，还有{more}个" if more > 0 else ""
            return TalkReply(f"你{day_zh}有{n}个提醒：{'；'.join(items)}{tail}。", action="list")
        tail = f"; and {more} more" if more > 0 else ""
        plural = "s" if n > 1 else ""
        return TalkReply(f"You have {n} reminder{plural}{day_en}: {'; '.join(items)}{tail}.", action="list")

    def _item(self, r: Reminder, zh: bool, now: datetime, day: date | None = None) -> str:
        """ "call your mother tomorrow at 18:00" / "明天18:00交周报"."""
        what = second_person(r.text, has_cjk(r.text))
        if r.repeats and _rule_time(r.rrule) is not None:
            when_words = _repeat_words(r.rrule, zh)
        else:
            due = datetime.fromtimestamp(r.next_due_utc, self.zone)
            when_words = _moment_words(due, now, zh).replace(",", "")
            if r.repeats:
                when_words = (
                    f"{rule_words(r.rrule, zh)}，下次{when_words}"
                    if zh
                    else (f"{rule_words(r.rrule, zh)}, next {when_words}")
                )
        if zh:
            return f"{when_words}{what}" if has_cjk(what) else f"{when_words} {what}"
        return f"{what} {when_words}"

    def _falls_on(self, r: Reminder, day: date) -> bool:
        start = datetime.combine(day, datetime.min.time(), tzinfo=self.zone)
        end = start + timedelta(days=1)
        due = datetime.fromtimestamp(r.next_due_utc, self.zone)
        if start <= due < end:
            return True
        if not r.repeats or due >= end:
            return False
        first = datetime.strptime(r.start_local, LOCAL_FORMAT).replace(tzinfo=self.zone)
        nxt = next_occurrence(r.rrule, start - timedelta(seconds=1), r.tz, start=first)
        return nxt is not None and nxt < end

    # -- 5. cancel
    async def _cancel(self, user_id: str, words: str, zh: bool, now: datetime, _turn: str) -> TalkReply | None:
        m = (_CANCEL_ZH if has_cjk(words) else _CANCEL_EN).search(words)
        if not m:
            return None
        if not user_id:
            return _refusal(zh)
        named = " ".join(g for g in m.groupdict().values() if g)
        named = re.sub(
            r"\b(?:my|the|your|a|all|to|about|for|of|that|one|please)\b|^\s*我的|^\s*那个", " ", named, flags=re.I
        )
        named = re.sub(r"\s+", " ", named).strip(" ,.!?，。")
        _ok, found, _ = await self._call("list", user_id)
        if not found:
            if m.groupdict().get("one"):
                return None
            return TalkReply("你现在没有提醒。" if zh else "You have no reminders to cancel.", action="cancel")
        if (_ALL_ZH if has_cjk(words) else _ALL_EN).search(words):
            self._pending[user_id] = _Pending("cancel_all", self.clock(), zh, candidates=found)
            n = len(found)
            if zh:
                return TalkReply(f"要取消你所有的{n}个提醒吗？", action="cancel_ask")
            return TalkReply(f"Cancel all {n} of your reminders? Say yes or no.", action="cancel_ask")
        if (_NEXT_ZH if has_cjk(words) else _NEXT_EN).search(words):
            return await self._cancel_these(user_id, [found[0]], zh, now)
        matches = self._matching(named, found, now)
        if not matches and m.groupdict().get("one"):
            return None  # "cancel the one about the gym": not about reminders
        if not matches:
            listed = (
                "；".join(self._item(r, zh, now) for r in found[:3])
                if zh
                else "; ".join(self._item(r, zh, now) for r in found[:3])
            )
            if zh:
                return TalkReply(f"我没找到这个提醒。你的提醒有：{listed}。", action="cancel")
            return TalkReply(f"I couldn't find that reminder. You have: {listed}.", action="cancel")
        if len(matches) > 1:
            return self._ask_which(user_id, matches, "cancel", None, zh, now)
        return await self._cancel_these(user_id, matches, zh, now)

    def _matching(self, named: str, found: Sequence[Reminder], now: datetime) -> list[Reminder]:
        """The reminders `named` means: by their time ("6 pm", "明天下午六点") and by words."""
        zh = has_cjk(named)
        probe = parse_reminder(f"{named}提醒我" if zh else f"remind me {named}", now, self.tz) if named else None
        candidates = list(found)
        rest = named
        if probe is not None and probe.due is not None:
            day_said = _named_day(named, now) is not None
            candidates = [
                r
                for r in candidates
                if (d := datetime.fromtimestamp(r.next_due_utc, self.zone)).hour == probe.due.hour
                and d.minute == probe.due.minute
                and (not day_said or d.date() == probe.due.date())
            ]
            rest = probe.text
        if not _norm(rest):
            return candidates
        scores = [_overlap(rest, r.text) for r in candidates]
        best = max(scores, default=0)
        return [r for r, s in zip(candidates, scores, strict=False) if best > 0 and s == best]

    def _ask_which(
        self, user_id: str, matches: Sequence[Reminder], op: str, new: ParsedReminder | None, zh: bool, now: datetime
    ) -> TalkReply:
        self._pending[user_id] = _Pending("which", self.clock(), zh, candidates=tuple(matches[:5]), op=op, new=new)
        items = [self._item(r, zh, now) for r in matches[:5]]
        if zh:
            listed = "；".join(f"第{_ORDINALS_ZH[i]}个，{item}" for i, item in enumerate(items))
            return TalkReply(f"有{len(matches)}个提醒对得上：{listed}。是哪一个？", action="cancel_ask")
        listed = "; ".join(f"{_ORDINALS_EN[i]}, {item}" for i, item in enumerate(items))
        return TalkReply(f"{len(matches)} reminders match: {listed}. Which one?", action="cancel_ask")

    async def _cancel_these(self, user_id: str, chosen: Sequence[Reminder], zh: bool, now: datetime) -> TalkReply:
        done = []
        for r in chosen:
            ok, _, _ = await self._call("cancel", user_id, id=r.id)
            if ok:
                done.append(r)
        if not done:
            return TalkReply("那个提醒已经不在了。" if zh else "That reminder is no longer there.", action="cancel")
        items = [self._item(r, zh, now) for r in done]
        if zh:
            return TalkReply(f"好的，取消了：{'；'.join(items)}。", action="cancel")
        return TalkReply(
            f"OK, I cancelled the reminder{'s' if len(done) > 1 else ''}: {'; '.join(items)}.", action="cancel"
        )

    # -- 6. change
    async def _change(self, user_id: str, words: str, zh: bool, now: datetime, turn: str) -> TalkReply | None:
        split = self._change_split(words, now)
        if split is None:
            return None
        if not user_id:
            return _refusal(zh)
        named, new = split
        _ok, found, _ = await self._call("list", user_id)
        matches = self._matching(named, found, now) if named else list(found)
        if not matches:
            return TalkReply("我没找到这个提醒。" if zh else "I couldn't find that reminder.", action="change")
        if len(matches) > 1:
            return self._ask_which(user_id, matches, "change", new, zh, now)
        return await self._do_change(user_id, matches[0], new, zh, now)

    def _change_split(self, words: str, now: datetime) -> tuple[str, ParsedReminder] | None:
        """(the words that name the reminder, its new time) of a change request."""
        if has_cjk(words):
            m = _CHANGE_ZH.search(words)
            if not m:
                return None
            named = (m.group("name") or m.group("name2") or "").strip()
            new_time = (m.group("time") or m.group("time2") or "").strip("。！!，, ")
            named = re.sub(r"^(?:请|帮我|你)?把?", "", named)
            parsed = parse_reminder(f"{new_time}提醒我{named or '提醒'}", now, self.tz)
            return (named, parsed) if parsed.due is not None or parsed.question else None
        m = _CHANGE_EN.search(words)
        if not m:
            return None
        body = m.group("body")
        for cut in reversed(list(re.finditer(r"\b(?:to|for|until|till|at)\b", body, re.I))):
            tail = body[cut.start() :].strip()
            if cut.group(0).lower() == "to":
                tail = tail[2:].strip()
            head = body[: cut.start()]
            probe = parse_reminder(f"remind me {tail}", now, self.tz)
            if probe.due is None and probe.question is None or _norm(probe.text):
                continue
            named = re.sub(r"\b(?:my|the|your|reminders?|alarms?|to|about|for)\b", " ", head, flags=re.I)
            named = re.sub(r"\s+", " ", named).strip()
            parsed = parse_reminder(f"remind me to {named or 'it'} {tail}", now, self.tz)
            return named, parsed
        return None

    async def _do_change(
        self, user_id: str, target: Reminder, new: ParsedReminder, zh: bool, now: datetime
    ) -> TalkReply:
        if new.question is not None or new.due is None:
            parsed = replace(new, text=target.text)
            self._pending[user_id] = _Pending(
                "time", self.clock(), zh, original=self._request_words(target, zh), parsed=parsed, target=target
            )
            return TalkReply(self._question(parsed.text, parsed, zh, now), action="ask")
        repeat = KEEP_RULE
        if target.repeats and _rule_time(target.rrule) is not None:
            repeat = re.sub(r"BYHOUR=\d+", f"BYHOUR={new.due.hour}", target.rrule)
            repeat = re.sub(r"BYMINUTE=\d+", f"BYMINUTE={new.due.minute}", repeat)
        ok, changed, message = await self._call(
            "change",
            user_id,
            id=target.id,
            start_local=new.due.replace(tzinfo=None).strftime(LOCAL_FORMAT),
            repeat=repeat,
        )
        if not ok or not changed:
            return TalkReply(_refused_add(message, zh), action="refuse")
        return TalkReply(self._confirm(changed[0], zh, now, changed=True), action="change")

    def _request_words(self, target: Reminder, zh: bool) -> str:
        return f"提醒我{target.text}" if zh else f"remind me to {target.text}"

    # -- 7. commitments
    async def _commitment(self, user_id: str, words: str, zh: bool, now: datetime, turn: str) -> TalkReply | None:
        if not user_id:
            return None
        done = _done_words(words)
        if done is not None:
            return await self._tick(user_id, done, zh)
        task = _commitment_task(words)
        if task is None:
            return None
        cn = has_cjk(task)
        probe = parse_reminder(f"提醒我{task}" if cn else f"remind me to {task}", now, self.tz)
        text = second_person(probe.text or task, cn).strip(" ,.!?，。")
        if len(text) < 2:
            return None
        if probe.due is not None and probe.question is None:
            at = probe.due.timestamp()
        else:
            day = self._day_said(f"提醒我{task}" if cn else f"remind me to {task}", now, cn)
            at = self.clock() + COMMIT_HINT
            noon_probe = parse_reminder(f"提醒我{task}12:00" if cn else f"remind me to {task} at 12:00", now, self.tz)
            if day and noon_probe.due is not None:
                at = noon_probe.due.timestamp()
        ok, _, _ = await self._call("commit", user_id, text=text, at=at, source_turn=turn)
        if not ok:
            return None
        if zh:
            return TalkReply(f"好的，晚点我问问你{text.removeprefix('去')}的事。", action="commit")
        return TalkReply(f"Good luck with {_gerund(text)} — I'll ask you about it later.", action="commit")

    async def _tick(self, user_id: str, done: str, zh: bool) -> TalkReply | None:
        answer = await self._ask(ReminderRequest(action="commitments", owner=user_id))
        open_ones = answer.commitments
        scores = [_object_overlap(done, c.text) for c in open_ones]
        best = max(scores, default=0)
        if best <= 0 or scores.count(best) > 1:
            return None
        item = open_ones[scores.index(best)]
        got = await self._ask(ReminderRequest(action="commitment_done", owner=user_id, id=item.id))
        if not got.success:
            return None
        if zh:
            return TalkReply(f"真棒！{item.text}这件事我帮你勾掉了。", action="commit_done")
        return TalkReply(f"Well done — I've ticked off {_gerund(item.text)}.", action="commit_done")

    # -- 8. clear
    async def _clear(self, user_id: str, words: str, zh: bool, _now: datetime, _turn: str) -> TalkReply | None:
        if not (_CLEAR_ZH if has_cjk(words) else _CLEAR_EN).search(words):
            return None
        if user_id:
            await self._call("clear", user_id)
        self._pending.pop(user_id, None)
        self._said.pop(user_id, None)
        text = "好的，我们重新开始吧。" if zh else "OK — let's start over."
        return TalkReply(text, clear_history=True, action="clear")


# ----------------------------------------------------------------------------- helpers
def _norm(text: str) -> str:
    return re.sub(r"[\s,.!?，。！？]+", " ", text.lower()).strip()


def _what(text: str, zh: bool) -> str:
    return second_person(text, has_cjk(text)).rstrip("。.!！") if text else ""


# A task that says how things are ("the kettle's on", "the shop closes at 5", "my tablets are in
# the drawer"), from "remind me that …": a noun, then a verb (a possessive 's before a noun, "the
# dentist's appointment", is no verb)
_STATE_EN = re.compile(
    r"^(?:the|a|an|your|my|his|her|our|their)\s+(?:[\w-]+\s+)?[\w-]+"
    r"(?:'s\s+(?:on|off|in|out|up|down|open|closed|ready|done|due|here|there|back|over|empty|full|\w+ing)\b"
    r"|'re\b|\s+(?:is|are|isn't|aren't|was|were|needs?|has|have|will|won't|goes|go|comes|come|closes|opens|starts|"
    r"ends|finishes|leaves)\b)",
    re.I,
)


def _to(what: str) -> str:
    """ " to call your mother" (a task), " about the meeting" (no verb to start with), " that the
    kettle's on" (how things are)."""
    if not what:
        return ""
    if has_cjk(what):
        return f": {what}"
    if _STATE_EN.match(what):
        return f" that {what}"
    if re.match(r"^(?:the|a|an|your|my|his|her|our|their)\b", what, re.I):
        return f" about {what}"
    return f" to {what}"


def _short_day(day: date, today: date) -> str:
    """ "today", "tomorrow", "on Monday 7 December"."""
    offset = (day - today).days
    if offset in (0, 1):
        return ("today", "tomorrow")[offset]
    return _day_words(day, today, False, label=False)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _refusal(zh: bool) -> TalkReply:
    if zh:
        return TalkReply("我只能给认识的人记提醒——先告诉我你的名字吧。", action="refuse")
    return TalkReply("I can only keep reminders for someone I know — tell me your name first.", action="refuse")


def _refused_add(message: str, zh: bool) -> str:
    """Why the store said no, in plain words (never its text: it may hold ids and rules)."""
    low = message.lower()
    if "past" in low:
        return "这个时间已经过了，换一个以后的时间吧。" if zh else "That time has already passed — tell me a later one."
    if "guest" in low or "owner" in low:
        return _refusal(zh).text
    if "no occurrence" in low:
        return "这个重复规则以后不会再有了。" if zh else "That repeat never comes round again."
    if "no active reminder" in low:
        return "那个提醒已经不在了。" if zh else "That reminder is no longer there."
    return (
        "抱歉，这个提醒我没记下来，换个说法试试？"
        if zh
        else "Sorry, I couldn't keep that reminder — could you say it another way?"
    )


def _named_day(words: str, now: datetime) -> date | None:
    """The day a list or cancel names: "tomorrow", "on Monday", "明天", "周五"; None."""
    m = re.search(rf"(?<![a-z])({when.EN_DAY})(?![a-z])", words, re.I) or re.search(f"({when.ZH_DAY})", words)
    if m is None:
        m2 = re.search(r"今晚|明早|明晚|大后天", words)
        if m2 is None:
            return None
        offset = {"今晚": 0, "明早": 1, "明晚": 1, "大后天": 3}[m2.group(0)]
        return now.date() + timedelta(days=offset)
    return when.resolve_day(m.group(1), now)


def _commitment_task(words: str) -> str | None:
    """What the user says they will do ("call the dentist tomorrow"), or None."""
    text = words.strip()
    if has_cjk(text):
        m = _COMMIT_ZH.search(text)
        if not m or re.search(r"不|没|别|吗|？|\?|什么|几点|怎么|哪|谁", text):
            return None
        task = re.sub(r"^(?:得|要|去|会|打算|准备)+", "", m.group("task"))
        if _NOT_TASK_ZH.search(task) or len(task) < 2:
            return None
        time_words = re.findall(_TIME_WORDS_ZH, text)
        return "".join(time_words) + task
    m = _COMMIT_EN.search(text)
    if not m:
        return None
    task = m.group("task").strip()
    if re.match(r"(?:a|an|the|my|our|his|her|their|some|this|that)\b", task, re.I):
        task = f"go to {task}"  # "I'm going to a gig on Saturday": going somewhere, not a verb
    if _NOT_TASK_EN.search(task) or _HEDGE_EN.search(text) or re.search(r"n'?t\b|\bnot\b|\bnever\b", text, re.I):
        return None
    if len(task.split()) < 2 or re.fullmatch(r"\w+\s+(?:it|that|this|them|so|now|then|too|later|soon)", task, re.I):
        return None
    return task


def _done_words(words: str) -> str | None:
    """What the user says they have done ("called the dentist", "报告写完了"), or None."""
    text = words.strip()
    if has_cjk(text):
        if _DONE_ZH.search(text) and not _DONE_NOT_ZH.search(text):
            return text
        return None
    if re.search(r"\?|\b(?:not|never|didn'?t|haven'?t|hasn'?t|forgot|if|will|going to)\b", text, re.I):
        return None
    m = _DONE_EN.search(text)
    if not m:
        return None
    if m.group("with"):
        return m.group("with")
    verb = m.group("verb").lower()
    base = _IRREGULAR.get(verb, verb)
    return f"{base} {m.group('rest').strip()}".strip()


_DOUBLE = {"stop", "get", "put", "run", "shop", "plan", "swim", "sit", "set", "cut", "drop", "jog", "chat", "hit"}


def _gerund(task: str) -> str:
    """ "call the dentist" → "calling the dentist", "renew your passport" → "renewing your passport"."""
    verb, _, rest = task.partition(" ")
    low = verb.lower()
    if low in _DOUBLE:
        ing = verb + verb[-1] + "ing"
    elif low.endswith("ie"):
        ing = verb[:-2] + "ying"
    elif low.endswith("e") and not low.endswith(("ee", "ye", "oe")) and len(low) > 2:
        ing = verb[:-1] + "ing"
    else:
        ing = verb + "ing"
    return f"{ing} {rest}".strip()
