"""A reminder request in words → when, what, how often (English and Chinese; pure Python).

`parse_reminder(text, now, tz)` reads "Remind me to call my mother tomorrow at 6 pm" or
"明天下午三点提醒我交周报" and returns a `ParsedReminder`: `due` (an aware datetime in `tz`, or
None), `text` (what to remind of, without the time words and "remind me to" / "提醒我"),
`repeat` (an RFC 5545 RRULE such as "FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=7;BYMINUTE=30", or
None), `question` (why the companion should ask instead of guessing, or None) and `is_request`
(False for "don't remind me", "不用提醒我", "what time is it?", plain chat).

What it understands (each a small rule of its own, so a new phrasing is one more pattern):

- Relative: "in 40 seconds", "in ten minutes", "in half an hour", "in an hour and a half",
  "in an hour and a quarter", "in a quarter of an hour", "in an hour and 30 minutes",
  "20 minutes from now", "半小时后", "十分钟以后", "过两个小时", "一个半小时后". Exact: no
  rounding; the time zone's daylight saving change is counted in real seconds.
- Days: today / tonight / tomorrow / the day after tomorrow / (this|next) Friday / on December
  24 / on the 5th / in 3 days / next month on the 5th; 今天 / 明天 / 后天 / 大后天 / 明早 /
  明晚 / 今晚 / (这|下)周五 / 12月24号 / 五号 / 下个月五号 / 三天后.
- Times of day: "at 7", "7:30", "6 pm" (and "6 p m", as a recogniser writes it), "noon",
  "lunchtime" (12:30),
  "midnight", "half past 7", "half seven" (7:30), "quarter to 8", "in the morning/evening",
  "tonight"; "下午三点", "七点半", "八点一刻", "十点二十分",
  "早上/上午/中午/下午/傍晚/晚上/夜里/半夜/凌晨", "差五分八点" (19:55), "十一点差十分" (10:50).
- Repeats: "every day", "daily", "every morning", "every weekday", "on weekends", "every
  Monday, Wednesday and Friday", "every month on the 5th", "every 3 days", "every other day",
  "every 2 hours", "every year on March 8"; "每天", "天天", "每晚", "工作日", "周一到周五",
  "每个周末", "每周一三五", "每个星期二", "每月五号", "每年3月8号", "每隔一天", "每隔两小时".
  A bare 周末 is this weekend (two days: "ambiguous"), not a repeat. An hourly repeat may
  say its first time ("every 8 hours starting at two", "every 4 hours from 8 am",
  "每两个小时从下午两点开始"): the series runs from that time, the first due the next one
  ahead. "Twice a day", "three times a day", "每天三次", "早中晚各一次" are a daily repeat at
  as many clock times: said with them, BYHOUR takes each; said without, question "no_time"
  (with the daily repeat, so the answer "8 am and 8 pm" keeps it).

Decisions (documented, tested in test/test_reminder_text.py):

- A clock hour without am/pm or a part of the day is read in the waking day, 07:00-18:59:
  7-11 are morning, 12 is noon, 1-6 are afternoon ("every day at 7:30" is 07:30, "tomorrow at
  3" is 15:00). Without a day ("at 7") the first such reading still ahead is taken: said at
  09:00, "at 7" is 19:00 today; said at 20:00 it is 07:00 tomorrow. A 24-hour time ("at
  19:30", "at 07:00") or an explicit part of the day is taken as said.
- A day without a time of day ("tomorrow", "next Friday", "every Monday") is not guessed:
  question "no_time", due None. So is a request with no time at all ("remind me to call mum").
- A time with no day that has passed today moves to tomorrow ("at 8 am" said at 09:00); a
  time on a day said explicitly that has passed ("today at 8" at 09:00, "yesterday") keeps
  its due and asks: question "past".
- A one-shot due between 23:00 and 05:59 that was not said as night (pm, am, "tonight", "at
  night", "midnight", "晚上", "夜里", "半夜", "凌晨", a 24-hour time) asks: question "night"
  (due kept, for "did you mean …?"). A relative time shorter than four hours never asks.
- A time or day taken back is replaced by the one said after it ("at 5, no, make it 6", "tomorrow
  at 9, sorry I mean 10", "on Tuesday no wait Wednesday", "五点，不对，六点", "明天，不对，后天"),
  and a hedge is dropped ("in like half an hour", "at about 11", "at 8 sharp", "大概半小时后",
  "七点左右"): an about-time is taken as said.
- Vague or alternative times ("later", "soon", "in a few minutes", "at 7 or 8", "at 7 or half
  past", "待会儿", "过几天", "七点或者八点", two hours at once as "两三点" or "十一二点", "every
  morning except Sunday") ask: question "ambiguous", due None. An alarm at a small hour ("set
  an alarm for quarter past six") is in the morning, as "wake me up at 6" is.
- A date without a year is the next one ("on December 24" said on December 25 is next year);
  a day of the month alone ("on the 5th", "五号") is this month's if still ahead, else next
  month's. A weekday said on that day ("on Friday at 8", "周五早上八点" on a Friday) is today's
  if still ahead, else next week's; "next Friday" is the Friday of next week (Monday to Sunday),
  as a plan told to the memory reads it (text.when), never today. "12/24" and "24/12" are read
  where only one reading is a date; "3/4" asks "ambiguous", and so do two weekdays for a
  one-shot ("on Monday and Thursday"; "on Mondays and Thursdays" and "every …" repeat). A
  weekday with a date is that date when they agree ("on Monday the 14th", "Monday 14th"),
  and asks "ambiguous" when they do not.
- Days that fall on the same date every year are that date ("on Christmas Eve at 4", "new
  year's eve at 11.55 pm", 元旦上午十点, 平安夜; text.when.FIXED_DATE_DAYS_EN/ZH). Days this
  parser does not count ask "ambiguous": holidays that move (Easter, Mother's Day, 春节, 中秋),
  "on my birthday", "the night before", "the first Monday of the month", 月底, lunar dates
  (腊月二十三, 初八).
  "Birthday" naming a thing ("a birthday card") is part of the reminder's words, as is a part
  of the day naming a thing ("my evening pills", "the morning paper"): neither says when.
- 每隔一天 / "every other day" is every two days; 每隔两天 is said for every two days as well
  (as 每隔两小时 is every two hours), so 每隔N天 is INTERVAL=N for N > 1.
- Not a request: a negation before the request word ("don't remind me", "no need to remind
  me", "不用提醒我", "别提醒我了", "不想被提醒", "取消明天的提醒"), a question about reminders ("what
  reminders do I have?", "did you remind me…?", "我有哪些提醒", "提醒功能怎么用"), thanks ("thanks
  for reminding me", "谢谢你提醒我"), recall ("remind me what my wife's name is", "you remind me of
  …", "this song reminds me of home"), and anything without a request word ("remind me",
  "set a reminder/alarm", "wake me up", "提醒", "叫我", "闹钟", …).
- Several clock times: a repeat at the same minute fires at each ("every day at 8am and 8pm",
  "每天早上八点和晚上八点": BYHOUR=8,20); a one-shot with two times, or times at different
  minutes, asks: question "ambiguous" (never one of them dropped unsaid).
- Someone else's reminding told to the companion is no request ("他提醒我明天开会", "妈妈昨天
  提醒我带伞", "老伴天天提醒我少吃盐", "护工每天提醒我吃药", "the nurse will remind me at two",
  "my wife sets an alarm for six"), nor is "提醒我一下我刚才说了什么" (recall), nor a question about past
  reminders ("你提醒我了吗", "what time did you remind me yesterday?", "did you set an alarm
  for tomorrow?").
- A repeat's `due` is its first occurrence after `now`, found with dateutil's rrule over the
  wall clock of `tz`, so "every day at 7:30" stays 07:30 across a daylight saving change.

Why no date library (measured on this module's phrase set, December 2026):

- dateparser 1.5 reads a date, not a sentence: "Remind me to call my mother tomorrow at 6 pm"
  → None; "on December 24 at 9" → None after 2.2 s (its first call loads language data);
  "at 7" → July 4. Its `search_dates` is slower still.
- recurrent 0.4 turns English repeats into RRULEs but reads "every day at 7:30" as 19:30.
- jionlp-time 1.0 resolves 明天下午三点, 三天后早上八点, 半小时后, 下个月五号 right but reads 明早八点
  as today, 工作日 as a single day and 每周一三五 as a weekly period with no days, and gives no
  span to take out of the sentence, so the words "what to remind" could not be cleaned.
  Once the time words are found (which the cleaning needs anyway), resolving them is the
  small part: this module does both with regular expressions, Chinese and English numerals
  from `fay_ros.text.when`, and dateutil's rrule for repeats.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from dateutil import rrule as du_rrule

from ..text.when import EN_NUMBER as _EN_NUMBER_WORDS
from ..text.when import (
    FIXED_DATE_DAYS_EN,
    FIXED_DATE_DAYS_ZH,
    day_of_month,
    fixed_date_day,
    month_start,
    next_anniversary,
    number,
    resolve_day,
)
from ..text.words import as_written

EN_NUMBER = rf"(?:{_EN_NUMBER_WORDS})"

PAST = "past"
NO_TIME = "no_time"
NIGHT = "night"
AMBIGUOUS = "ambiguous"
QUESTIONS = (PAST, NO_TIME, NIGHT, AMBIGUOUS)

NIGHT_FROM, NIGHT_UNTIL = 23, 6  # a one-shot at 23:00-05:59 not said as night asks
# ... and a relative one this long or longer: "in 90 minutes" at 21:40 is a timer the person
# counted themselves; "in 5 hours" at 20:00 lands at 01:00, easily not what they pictured
RELATIVE_NIGHT_FROM = timedelta(hours=4)
DAY_FROM, DAY_UNTIL = 7, 19  # bare clock hours are read in 07:00-18:59
WEEKDAY_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


@dataclass(frozen=True)
class ParsedReminder:
    due: datetime | None  # aware, in the given zone; None: not known (see question)
    text: str  # what to remind of
    repeat: str | None = None  # RFC 5545 RRULE (no "RRULE:" prefix), None: once
    question: str | None = None  # None, "past", "no_time", "night" or "ambiguous"
    is_request: bool = True  # False: the text asks for no reminder

    def as_dict(self) -> dict[str, str | None]:
        """The CLI's JSON: due as local wall-clock time without offset."""
        return {
            "due": self.due.replace(tzinfo=None).isoformat(timespec="seconds") if self.due else None,
            "text": self.text,
            "repeat": self.repeat,
            "question": self.question,
        }


# -- what is and is not a request ------------------------------------------------------------

# A request asked as a favour: "would you mind reminding me…", "do you mind reminding us…"
_POLITE_ASK = re.compile(r"\b(?:would|do|could) you mind reminding (me|us)\b", re.I)
# Other ways of asking for one, said as "remind me": "nag me to…", "make sure I take my tablet at
# eight" (asked of the companion: first in the utterance, not "I always make sure I…"), "I need
# to remember to X … can you help?", "help me remember to…"
_ASKED_AS_REMIND = (
    (re.compile(r"\bnag (me|us)\b", re.I), r"remind \1"),
    (
        re.compile(
            r"^((?:\s*(?:please|can you|could you|will you|would you|and|just|oh|um|er|well)\b[,\s]*)*)"
            r"make sure (i|we) (?!(?:remind|set|have|get) (?:a |an )?(?:reminder|alarm))",
            re.I,
        ),
        lambda m: f"{m.group(1)}remind {'me' if m.group(2).lower() == 'i' else 'us'} to ",
    ),
    (
        re.compile(
            r"^((?:\s*(?:um|er|oh|well|so|now)\b[,\s]*)*)(i|we) (?:need|have|must|ought|'ve got|have got|got) to "
            r"remember to (.+?)[,\s]*(?:(?:can|could|will|would) you help(?: me| us)?(?: with that| out)?"
            r"(?: (?:please|love|dear))?)\s*\??\s*$",
            re.I,
        ),
        lambda m: f"{m.group(1)}remind {'me' if m.group(2).lower() == 'i' else 'us'} to {m.group(3)}",
    ),
    (re.compile(r"\bhelp (me|us) (?:to )?remember to\b", re.I), r"remind \1 to"),
    (
        re.compile(r"\b(i|we) (?:need|want|'d like|would like) reminding (to|about|of)\b", re.I),
        lambda m: f"remind {'me' if m.group(1).lower() == 'i' else 'us'} {m.group(2)}",
    ),
)


# the kindness around a request, no part of what to remind of: "would you be a love and remind
# me…", "…, would you love?", "…, will you?"
_ENDEARMENT = r"(?:love|dear|darling|sweetheart|pet|petal|star|angel|treasure|hun|duck|mate)"
_KIND_WORDS = (
    re.compile(rf"\b(?:would|could|will|can) you be an? {_ENDEARMENT} and\s+", re.I),
    re.compile(rf"[,\s]+(?:would|will|could|can) you(?: {_ENDEARMENT}| please)?\s*\??\s*$", re.I),
)


_WEEKDAYS_LIST_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAYS_ZH = "一二三四五六日"
# Times and days said in ways the scanners take in their other form: "at eight in the morning and
# eight at night" (the second "at"), "every day except sunday" (the other six), "每天早晚八点各一次"
# (早上八点和晚上八点), "每天除了星期天" (每周一二三四五六)
_SAID_OTHERWISE: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (
        re.compile(
            rf"\band ({EN_NUMBER}|\d{{1,2}}(?:[:.]\d\d)?) (?=(?:at night|in the (?:morning|afternoon|evening))\b)",
            re.I,
        ),
        r"and at \1 ",
    ),
    # ("at eight in the morning and eight at night": each time with its own part of the day)
    (re.compile(rf"\b({EN_NUMBER}|\d{{1,2}}(?:[:.]\d\d)?) (?:o'?clock )?in the morning\b", re.I), r"\1 am"),
    (
        re.compile(
            rf"\b(?!twelve\b|12\b)({EN_NUMBER}|\d{{1,2}}(?:[:.]\d\d)?) (?:o'?clock )?"
            r"(?:at night|in the (?:afternoon|evening))\b",
            re.I,
        ),
        r"\1 pm",
    ),
    (
        re.compile(
            r"\b(?:every day|daily|each day) (?:except|apart from|but not|bar) (?:on )?(?:a )?"
            r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b",
            re.I,
        ),
        lambda m: "every " + ", ".join(d for d in _WEEKDAYS_LIST_EN if d != m.group(1).lower()),
    ),
    (re.compile(r"早晚((?:\d{1,2}|[一二两三四五六七八九十]{1,3})[点點](?:半|一刻|三刻)?)各一次"), r"早上\1和晚上\1"),
    (
        re.compile(r"(?:每天|天天)[，,]?除了(?:周|星期|礼拜)([一二三四五六日天])(?:以外|之外)?[，,]?"),
        lambda m: "每周" + _WEEKDAYS_ZH.replace("日" if m.group(1) in "日天" else m.group(1), ""),
    ),
)


def _as_asked(text: str) -> str:
    """The request in the words the readers know: "would you mind reminding me", "nag me",
    "make sure I…", "I need to remember to X, can you help?" → "remind me…"; times and days
    said otherwise in the form the scanners read (`_SAID_OTHERWISE`)."""
    text = _POLITE_ASK.sub(r"remind \1", text)
    for kind in _KIND_WORDS:
        text = kind.sub("", text)
    for pattern, said in _SAID_OTHERWISE:
        text = pattern.sub(said, text)
    for pattern, said in _ASKED_AS_REMIND:
        text = pattern.sub(said, text)
    return text


_EN_REQUEST = re.compile(
    r"\bremind (?:me|us)\b|"
    r"\b(?:set|add|create|make|need|want|like|put|schedule|give me|get)\b[^.?!]{0,20}\b(?:alarm|reminder)s?\b"
    r"(?! clock)|"
    r"^\s*reminder\s*(?:to|for|about|at|in|on|:)|"
    r"\balarm (?:for|at|in)\b|\bwake me\b|\bget me up\b|don'?t let me forget|\bnudge me\b|\bping me\b|"
    r"\bgive me a (?:nudge|heads[- ]up|gentle reminder)\b|\bgive me a (?:shout|buzz) (?:in|at|around|on|tomorrow)\b|"
    r"\btell me to\b",
    re.I,
)
# Someone else reminding the user, told to the companion: "the nurse will remind me at two", "my
# wife sets an alarm for six every day" (a person, then at most a few words of how often)
_EN_REPORTED = re.compile(
    # (not a time said before the request: "every friday at 3 in the afternoon remind me to…")
    r"\b(?:he|she|they|(?:my|the|our) (?!(?:morning|afternoon|evening|night|day|weekend|week|month)\b)[a-z]+"
    r"(?: (?!(?:morning|afternoon|evening|night)\b)[a-z]+)?|"
    r"(?!(?-i:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Tonight|Today|Tomorrow)\b)(?-i:[A-Z])[a-z]+)"
    r" (?:will |'ll |always |usually |often |"
    r"normally |sometimes |already |then )*(?:reminds? me|reminded me|sets? (?:an? |the |my )?alarms?|"
    r"set (?:an? |the |my )?alarms?|wakes? me(?: up)?|"
    # "my daughter set a reminder on my phone"
    r"(?:set|sets|made|makes|put|puts|added|adds) (?:an? |the |some |my )?reminders?)\b",
    re.I,
)
_EN_NEGATIVE = re.compile(
    r"\b(?:don'?t|do not|doesn'?t|does not|no need to|never|stop|not|won'?t need)\b(?:\s+[\w']+){0,5}?\s+"
    r"(?:remind\w*|alarms?)\b|\bno (?:more )?(?:need for (?:a |any )?)?(?:reminders?|alarms?)\b|"
    r"\bwithout (?:a |any )?reminder|"
    r"\b(?:cancel|delete|remove|turn off|switch off|disable|clear)\b[^.?!]{0,30}\b(?:reminders?|alarms?)\b",
    re.I,
)
_EN_ASKING_ABOUT = re.compile(
    r"^\s*(?:(?:what|which|do i|have i|how many|any|list|show|when is|where)\b[^?]*\breminders?\b|"
    r"(?:did|have|has) you\b[^?]*\bremind)|\byou remind me of\b|\bthanks?(?: you)? for (?:the )?remind|"
    # ("remind me, who was the prime minister before her?": a comma after "remind me" too)
    r"\bremind me,? (?:again,? )?(?:what|who|whose|where|which|how|why|whether|if|of (?:your|my|the) name)\b|"
    # ("whose dog is Bruno, remind me?", "which medicine am I allergic to, remind me again?")
    r"^\s*(?:and |so )?(?:what|who|whose|where|which|how|why|when)\b[^?]*,\s*remind me(?: again)?\s*[?.!]*\s*$|"
    # "what time did you remind me yesterday?", "did you set an alarm for tomorrow?", "do you
    # remember what I asked you to remind me about?": about reminders, not for one
    r"^\s*(?:what|when|which|why|how|who)\b[^?]*\b(?:did|have|has) you\b[^?]*\b(?:remind|alarm)|"
    r"^\s*(?:did|have|has) you\b[^?]*\b(?:set|make|add|create)\b[^?]*\b(?:alarm|reminder)s?\b|"
    r"\b(?:what|which) (?:i|we) (?:asked|told) you to remind\b|"
    # the user's own doing, a how-to, or someone else asked to remind them: "I set a reminder
    # yesterday", "how do I set an alarm?", "did I ask you to remind me…", "I told my wife to remind me…"
    r"\bI (?:set|made|created|had|already set|have set|'ve set|'d set) (?:a|an|the|my) (?:reminder|alarm)s?\b|"
    r"\bI (?:forgot|forget|never|didn'?t|did not|tried) to (?:set|make|add|put)\b[^.?!]{0,12}\b(?:reminder|alarm)s?\b|"
    r"\bhow (?:do|can|would|should) (?:i|you) (?:set|make|add|create|use|turn on|change|cancel)\b|"
    r"^\s*(?:did|have|had) i (?:ask|tell|told|asked)\b|"
    r"\b(?:told|asked) (?:my|his|her|the|our) \w+(?: \w+)? to remind me\b",
    re.I,
)
_ZH_REQUEST = re.compile(
    r"提醒(?:我|一下|下我)|(?:帮我|记得|请)提醒|(?:设|定|订|加|建|添加|创建|设置|设定|开)[^，。！？]{0,14}(?:提醒|闹钟)|"
    r"[点分半](?:钟)?的闹钟|"  # "七点的闹钟" (not "我的闹钟坏了")
    # (not "叫我老王就行", "都喊我张婆婆": call me)
    r"[叫喊]我(?=起床|起来|一下|一声|[，。！？!?,.\s]|$)|叫醒|别让我忘|通知我|"
    # ("帮我记着后天上午十点半体检": with a time it is for then; "帮我记着我孙子叫小宝" is a memory)
    r"帮我记(?:着|住|一下)(?=[^。！？]*?(?:[点點]|[号號]|分钟|小时|钟头|[周星期礼拜][一二三四五六日天]|[明后]天))|"
    r"把我(?:叫|喊)(?:起来|醒)|"
    r"闹钟(?:定|设|调|订)(?:在|到|成)"  # "把闹钟定在六点"
)
_ZH_NEGATIVE = re.compile(
    r"(?:不用|不要(?!忘)|别(?!忘)|无需|不需要|不必|甭|用不着|没必要|取消|不想)[^，。！？,.!?]{0,4}(?:提醒|叫我|叫醒|喊我|闹钟)"
)
_ZH_ASKING_ABOUT = re.compile(
    r"谢谢(?:你|您)?(?:的)?提醒|提醒功能|怎么(?:设置|设|用)?提醒|怎么让你[^，。？?]{0,6}提醒|"
    r"(?:昨天|前天|刚才|之前|上次|以前|早上)[^，。！？]{0,4}(?:定|设|订)了[^，。！？]{0,3}(?:闹钟|提醒)|闹钟(?:没|不)响|(?:会|能)提醒吗|(?:有什么|有哪些|有没有|几个|什么)提醒|提醒(?:了吗|过我吗|呢)|我的提醒|"
    r"提醒(?:了)?我(?:了吗|什么|的(?:那|事|东西))|提醒过我|提醒了我|"
    r"(?:上礼拜|上星期|上周|上个月|昨天|前天|上次|那天|之前|以前)你[^，。！？\s]{0,3}提醒(?:过)?我|(?<!后|钟|点|半)(?<!以后|之后|分钟|小时)提醒我[^，。？?]{0,8}(?:了没有|了没|没有)\s*[？?]?$|"
    r"提醒我(?:一下)?(?:我)?(?:刚才|之前|上次|昨天)?(?:说了|说过|讲了|讲过|做了)什么|"
    r"提醒我(?:一下)?(?:我们|咱们)?(?:刚才)?(?:说到|聊到|讲到)哪|倒提醒(?:了)?我了?(?!吗)"
)
# Someone else reminding the user, told to the companion: "他提醒我明天开会", "妈妈昨天提醒我带伞",
# "我女儿每天都提醒我锻炼" (a person, then at most a few words of when and how often)
_ZH_REPORTED = re.compile(
    r"(?:他|她|他们|她们|人家|别人|大家|"
    + "|".join(
        "老婆 妻子 老公 丈夫 儿子 女儿 妈妈 母亲 爸爸 父亲 哥哥 弟弟 姐姐 妹妹 奶奶 爷爷 外婆 外公 朋友 女朋友 男朋友 "
        "孩子 老板 同事 医生 老师 领导 经理 秘书 护士 邻居 同学 室友 老伴儿 老伴 闺女 护工 保姆 孙子 孙女 "
        "外孙女 外孙 儿媳 女婿 家人 阿姨".split()
    )
    + r")(?:昨天|今天|前天|刚才|刚刚|早上|上午|中午|下午|晚上|上次|以前|之前|总是|老是|一直|经常|常常|每天|天天|"
    r"也|都|又|还|总|会|要|就|每次|平时){0,4}(?:打电话|发微信|发消息|打个电话)?"
    r"提醒(?:过|了)?我|"
    r"提醒我[^，。！？]{0,12}的那(?:个|位)"  # "提醒我吃药的那个护士今天没来": who, not a request
)
_WAKE = re.compile(r"\bwake me\b|\bget me up\b|叫醒|叫我起(?:床|来)|喊我起(?:床|来)|把我(?:叫|喊)(?:起来|醒)", re.I)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_ALARM = re.compile(r"\balarm\b|闹钟", re.I)


def without_address(text: str, names: tuple[str, ...]) -> str:
    """`text` without the companion's name said first to address it ("Nova, remind me…", "hey
    Nova remind me…", "小诺，提醒我…"): a renamed companion's name is no part of the reminder
    (the built-in Fay / 菲菲 are taken out by the cleaning itself)."""
    said = [re.escape(n.strip()) for n in names if n.strip()]
    if not said:
        return text
    either = "|".join(sorted(said, key=len, reverse=True))
    return re.sub(
        rf"^\s*(?:(?:hey|hi|ok|okay|嘿|喂)[,!，！]?\s*)?(?:{either})(?![\w-])[,!，！]?\s*", "", text, flags=re.I
    )


def is_reminder_request(text: str) -> bool:
    """Whether `text` asks for a reminder (not "don't remind me", a question about reminders,
    or plain chat)."""
    text = _as_asked(text)
    if _CJK.search(text):
        return (
            bool(_ZH_REQUEST.search(text))
            and not _ZH_NEGATIVE.search(text)
            and not _ZH_ASKING_ABOUT.search(text)
            and not _ZH_REPORTED.search(text)
        )
    if re.search(r"don'?t let me forget|(?:don'?t|do not) forget to (?:remind|wake|set)", text, re.I):
        return not _EN_ASKING_ABOUT.search(text)
    return (
        bool(_EN_REQUEST.search(text))
        and not _EN_NEGATIVE.search(text)
        and not _EN_ASKING_ABOUT.search(text)
        and not _EN_REPORTED.search(text)
    )


# -- what the words say ----------------------------------------------------------------------


@dataclass
class _Found:
    """What the time words said, before resolving against now."""

    day: date | None = None  # an explicit day
    day_said: bool = False  # a day was named (today, tomorrow, a date)
    day_is_past: bool = False  # "yesterday"
    hour: int | None = None
    minute: int = 0
    clock_exact: bool = False  # 24-hour time or am/pm: take as said
    period: str | None = None  # morning, noon, afternoon, evening, night, early (凌晨)
    delta: timedelta | None = None  # relative
    byday: list[str] = field(default_factory=list)
    freq: str | None = None  # DAILY, WEEKLY, MONTHLY, HOURLY, MINUTELY
    interval: int = 1
    bymonthday: int | None = None
    bymonth: int | None = None
    vague: bool = False
    weekday_bare: bool = False  # "on Friday" said on a Friday: today if still ahead, else in a week
    end_of_day: bool = False  # "midnight", "晚上十二点": 00:00 after the day named
    spans: list[tuple[int, int]] = field(default_factory=list)
    weekdays: list[int] = field(default_factory=list)  # every weekday named ("every two weeks on Monday")
    # every clock time read, as (hour, minute, exact, period): "every day at 8am and 8pm",
    # "每天早上八点和晚上八点" say two (hour/minute/clock_exact/period above: the last one)
    clocks: list[tuple[int, int, bool, str | None]] = field(default_factory=list)
    times_a_day: int = 0  # "twice a day", "每天三次": how many clock times the repeat needs

    def said_clock(self, exact: bool) -> None:
        """Keep the clock time just read (`hour`, `minute`), with its own exactness."""
        assert self.hour is not None
        self.clocks.append((self.hour, self.minute, exact, self.period))


def _num(text: str | None, default: int | None = None) -> int | None:
    if text is None:
        return default
    t = text.strip().lower()
    if t in ("a", "an", "one"):
        return 1
    if t in ("a couple of", "couple of", "a couple"):
        return 2
    return number(t)


_UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800, "fortnight": 1209600}
_ZH_UNIT_SECONDS = {
    "秒": 1,
    "秒钟": 1,
    "分": 60,
    "分钟": 60,
    "小时": 3600,
    "钟头": 3600,
    "天": 86400,
    "周": 604800,
    "星期": 604800,
    "礼拜": 604800,
}
_EN_NUM = rf"(?:\d+\.\d+|{EN_NUMBER}|an?|a couple of)"
_EN_UNIT = r"(sec(?:ond)?|min(?:ute)?|hour|hr|day|week|fortnight)s?"
_ZH_NUM = r"(?:\d{1,4}|[零〇一二两三四五六七八九十百]{1,5})"
_ZH_UNIT = r"(秒钟?|分钟|小时|钟头|天|周|星期|礼拜)"

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            "jan january",
            "feb february",
            "mar march",
            "apr april",
            "may",
            "jun june",
            "jul july",
            "aug august",
            "sep sept september",
            "oct october",
            "nov november",
            "dec december",
        ]
    )
    for m in names.split()
}
_MONTH_RE = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAYS_EN = {
    "mon": 0,
    "monday": 0,
    "tue": 1,
    "tues": 1,
    "tuesday": 1,
    "wed": 2,
    "wednesday": 2,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "thursday": 3,
    "fri": 4,
    "friday": 4,
    "sat": 5,
    "saturday": 5,
    "sun": 6,
    "sunday": 6,
}
_WD_ONE = r"(?:" + "|".join(sorted(_WEEKDAYS_EN, key=len, reverse=True)) + r")"
_WD_EN = _WD_ONE + r"s?"
_WD_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "七": 6}
_ORDINAL_WORDS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()
_ORD = (
    r"(\d{1,2}(?:st|nd|rd|th)?|(?:twenty-|thirty-)?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)|"
    r"tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|"
    r"twentieth|thirtieth)"
)


def _ordinal(text: str) -> int:
    """ "5th", "5", "fifth", "twenty-first" → 5, 5, 5, 21."""
    t = text.lower()
    digits = re.match(r"\d+", t)
    if digits:
        return int(digits.group(0))
    tens = 20 if t.startswith("twenty") else 30 if t.startswith("thirty") else 0
    t = t.split("-")[-1]
    if t in ("twentieth", "thirtieth"):
        return 20 if t == "twentieth" else 30
    return tens + _ORDINAL_WORDS.index(t) + 1


_PERIODS_EN = {
    "morning": "morning",
    "afternoon": "afternoon",
    "evening": "evening",
    "night": "night",
    "tonight": "night",
}


def _en_weekday(word: str) -> int:
    word = word.lower()
    return _WEEKDAYS_EN[word[:-1] if word not in _WEEKDAYS_EN and word.endswith("s") else word]


class _Scanner:
    """Finds patterns in the text, one kind after the other, and blanks what it used so that
    later patterns and the reminder's own words do not see it again."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.blank = list(text)

    @property
    def rest(self) -> str:
        return "".join(self.blank)

    def each(self, pattern: str, flags: int = re.I):
        for m in list(re.finditer(pattern, self.rest, flags)):
            if all(c != "\0" for c in self.rest[m.start() : m.end()]):
                yield m

    def take(self, m: re.Match[str]) -> None:
        for i in range(m.start(), m.end()):
            self.blank[i] = "\0"


# Days a person names that this parser does not count: asked about, never read as today
_UNCOUNTED_DAYS_EN = (
    r"\b(?:new year'?s|easter|thanksgiving|"
    r"mother'?s day|father'?s day|"
    r"(?:(?:at|by|on|towards?) )?(?:the )?end of (?:the|this|next) month|the (?:night|day|evening|morning) before|"
    # a birthday as the day ("on my birthday", "the day before Jo's birthday"), not "a birthday card"
    r"(?:on|before|by|until|till|the day before|the morning of) (?:my|his|her|their|our|your|the|\w+'s) "
    r"(?:\w+'s )?birthday(?! (?:card|cake|present|gift|party|presents|gifts|cards|dinner|lunch|meal|list)s?\b)|"
    r"(?:on )?(?:the )?(?:first|second|third|fourth|last) (?:day|week|weekday|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday)(?: of (?:every|each|the|this|next) month)?)\b"
)
_UNCOUNTED_DAYS_ZH = (
    r"春节|除夕|大年|(?:中秋|端午|清明)节?|国庆(?!节)|母亲节|父亲节|最后一天|月底|月末|生日那天|过年|"
    r"腊月|正月|农历|阴历|初[一二三四五六七八九十](?!点)"
)


# Words before "night"/"evening"/… that make it when ("Friday night", "every evening", "late
# night"); another word makes it a name ("bin night", "parents evening")
_NOT_A_THING = (
    rf"{_WD_ONE}s?|today|tomorrow|tonight|yesterday|every|each|this|next|that|on|in|at|by|the|a|late|early|"
    r"mid|same|one|following|and|or|from|until|till|to|me|us|o'?clock|[ap]\.?m\.?|\d+"
)


# What follows a day's name when it names a thing ("christmas cards", "圣诞礼物"), not the day
_DAY_AS_A_THING_EN = (
    r"(?! (?:cards?|trees?|presents?|gifts?|dinner|lunch|party|parties|shopping|lights|pudding|cake|"
    r"jumpers?|decorations|list|market|films?|movies?|songs?|carols?|box|bonus|do|fair|play|concert|"
    r"costumes?|sweets|pumpkins?|flowers|chocolates)\b)"
)
_DAY_AS_A_THING_ZH = r"(?!的|礼物|晚会|假期|快乐|活动|聚会|大餐|贺卡|树|老人|帽)"


def _fixed_date_days(s: _Scanner, f: _Found, today: date, zh: bool) -> None:
    """ "on Christmas Eve", "元旦": the day's next date (text.when.FIXED_DATE_DAYS_EN/ZH). A name
    alone ("Christmas", "Halloween") is the day after on/at/for/over/by/before/until only:
    "buy Christmas cards" names a thing."""
    table = FIXED_DATE_DAYS_ZH if zh else FIXED_DATE_DAYS_EN
    names = "|".join(f"(?:{pattern})" for pattern in table)
    if zh:
        pattern = rf"(?P<name>{names})(?:那天|当天)?{_DAY_AS_A_THING_ZH}"
    else:
        pattern = (
            rf"\b(?:(?P<prep>on|at|for|over|by|before|until|till) )?(?:the )?(?P<name>{names})"
            rf"(?: (?P<period>morning|afternoon|evening|night))?\b{_DAY_AS_A_THING_EN}"
        )
    for m in s.each(pattern):
        name = m.group("name").lower()
        month_day = fixed_date_day(name)
        if month_day is None or (not zh and not m.group("prep") and not re.search(r" (?:day|eve)$", name)):
            continue
        f.day, f.day_said = next_anniversary(*month_day, today), True
        if not zh and m.group("period") and f.period is None:
            f.period = m.group("period").lower()
        s.take(m)


def _scan_en(s: _Scanner, f: _Found, today: date) -> None:
    _fixed_date_days(s, f, today, zh=False)
    _ask_about(s, f, _UNCOUNTED_DAYS_EN)
    # "the 8 o'clock train", "my 10 am appointment": a time that names a thing, not the reminder's
    _ask_about(
        s, f, rf"\b(?:the|my|your|our|an?) (?:\d{{1,2}}(?::\d\d)?|{EN_NUMBER})(?: ?o'?clock| ?[ap]\.? ?m\.?)(?= [a-z])"
    )
    # vague or alternatives
    _ask_about(
        s, f, r"\b(?:later|soon|sometime|some time|in a (?:little )?(?:few|while|bit)(?: \w+)?|in a moment|someday)\b"
    )
    # "every morning except Sunday": a repeat with days left out is asked, never run on them
    _ask_about(s, f, rf"\b(?:except|apart from|but not|not on) (?:on )?(?:{_WD_ONE})s?\b")
    _ask_about(
        s,
        f,
        rf"\b(?:at )?{EN_NUMBER}(?::\d\d)?(?: ?[ap]\.? ?m\.?)? or (?:at )?(?:{EN_NUMBER}(?::\d\d)?(?: ?[ap]\.? ?m\.?)?|"
        r"half past|quarter past|quarter to|just after|a bit later)",
    )
    day_word = rf"(?:today|tomorrow|tonight|(?:on )?{_WD_ONE})"
    _ask_about(s, f, rf"\b{day_word} or {day_word}\b")  # "tomorrow or Friday": ask which
    # repeats
    for m in s.each(rf"\bevery (other|second|{EN_NUMBER}) ({_WD_ONE})\b"):
        f.freq, f.interval = "WEEKLY", 2 if m.group(1).lower() in ("other", "second") else _num(m.group(1)) or 1
        f.byday = [WEEKDAY_CODES[_en_weekday(m.group(2))]]  # "every other Tuesday"
        s.take(m)
    for m in s.each(rf"\bevery (other|{EN_NUMBER}) (day|week)s?\b"):
        f.freq = "DAILY" if m.group(2).lower() == "day" else "WEEKLY"
        f.interval = 2 if m.group(1).lower() == "other" else _num(m.group(1)) or 1
        if f.freq == "WEEKLY":
            f.byday = [WEEKDAY_CODES[today.weekday()]]
        s.take(m)
    for m in s.each(r"\bevery (\d+|" + EN_NUMBER + r") (minute|hour)s?\b"):
        f.freq = "MINUTELY" if m.group(2).lower() == "minute" else "HOURLY"
        f.interval = _num(m.group(1)) or 1
        s.take(m)
    for m in s.each(r"\b(?:every|each) (minute|hour)\b|\bhourly\b"):
        f.freq = "MINUTELY" if (m.group(1) or "").lower() == "minute" else "HOURLY"
        s.take(m)
    if f.freq in ("HOURLY", "MINUTELY"):  # "every 8 hours starting at two", "every 4 hours from 8 am"
        start = (
            rf"\b(?:starting|beginning|from)(?: at)? (?:(\d{{1,2}})(?:[:.](\d\d))?|({EN_NUMBER}))"
            r"(?: ?([ap])\.? ?m\b\.?)?"
        )
        for m in s.each(rf"{start}(?![\w:])(?! (?:minutes?|hours?|now)\b)"):
            hour = int(m.group(1)) if m.group(1) else _num(m.group(3))
            if hour is None or hour > 23:
                continue
            f.hour, f.minute = hour, int(m.group(2) or 0)
            exact = bool(m.group(4)) or hour >= 13
            if m.group(4):
                f.hour = hour % 12 + (12 if m.group(4).lower() == "p" else 0)
            f.clock_exact = f.clock_exact or exact
            f.said_clock(exact)
            s.take(m)
        for m in s.each(
            r"\b(?:(?:starting|beginning)(?: from)?|from)(?= (?:at )?(?:noon|midday|tomorrow|today|tonight)\b)|"
            r"\b(?:starting|beginning|from) now\b"
        ):
            s.take(m)
    # "twice a day", "three times a day", "once daily": a daily repeat at as many clock times
    for m in s.each(
        rf"\b(once|twice|thrice|{EN_NUMBER} times) (?:a|per|each|every) day\b|"
        rf"\b(once|twice|{EN_NUMBER} times) daily\b"
    ):
        count = (m.group(1) or m.group(2)).lower()
        f.freq = "DAILY"
        f.times_a_day = {"once": 1, "twice": 2, "thrice": 3}.get(count) or _num(count.split()[0]) or 1
        s.take(m)
    for m in s.each(r"\b(?:(?:on )?every (?:week ?day|workday|working day)|(?:on )?weekdays|each weekday)\b"):
        f.freq, f.byday = "WEEKLY", list(WEEKDAY_CODES[:5])
        s.take(m)
    for m in s.each(r"\b(?:(?:on )?every weekend|(?:on )?weekends)\b"):
        f.freq, f.byday = "WEEKLY", ["SA", "SU"]
        s.take(m)
    days_list = rf"{_WD_EN}(?:\s*(?:,|and|&|,\s*and)\s*{_WD_EN})*"
    for m in s.each(
        rf"\b(?:every|each) (?:week on )?({days_list})\b|\bon ({_WD_ONE})s\b(?:\s*(?:,|and|&)\s*({days_list}))?"
    ):
        words = re.findall(_WD_EN, " ".join(g for g in m.groups() if g), re.I)
        f.freq = "WEEKLY"
        f.byday = sorted({WEEKDAY_CODES[_en_weekday(w)] for w in words}, key=WEEKDAY_CODES.index)
        s.take(m)
    monthly = (
        rf"(?:every|each) month on the {_ORD}|on the {_ORD} (?:day )?of (?:every|each) month|monthly on the {_ORD}|"
        rf"(?:every|each) {_ORD} (?:day )?of the month"
    )
    yearly = (
        rf"(?:every year on|each year on|annually on|yearly on|every) (?:the )?(?:{_ORD} (?:of )?{_MONTH_RE}|"
        rf"{_MONTH_RE} (?:the )?{_ORD})"
    )
    for m in s.each(rf"\b{yearly}\b"):
        f.freq = "YEARLY"
        f.bymonthday = _ordinal(m.group(1) or m.group(4))
        f.bymonth = _MONTHS[(m.group(2) or m.group(3)).lower()]
        s.take(m)
    for m in s.each(rf"\b(?:{monthly})\b"):
        f.freq, f.bymonthday = "MONTHLY", _ordinal(next(g for g in m.groups() if g))
        s.take(m)
    for m in s.each(r"\b(?:every|each) (day|morning|evening|night|afternoon)\b|\bdaily\b|\bnightly\b"):
        f.freq = "DAILY"
        word = (m.group(1) or "").lower()
        if word in _PERIODS_EN:
            f.period = _PERIODS_EN[word]
        elif m.group(0).lower() == "nightly":
            f.period = "night"
        s.take(m)
    # relative
    rel = (
        rf"(?:in|after) (?:another )?({_EN_NUM}|half an?|an? half)(?: and (?:a half|an? quarter|three quarters))? ?"
        rf"{_EN_UNIT}(?: and (?:a half|an? quarter|three quarters))?"
        rf"(?:,? (?:and )?({_EN_NUM}) (min(?:ute)?|sec(?:ond)?)s?)?"  # "in an hour and 30 minutes"
    )
    for m in s.each(rf"\b(?:{rel}|({_EN_NUM}) {_EN_UNIT} (?:from now|later))\b"):
        if m.group(1):
            amount_text, unit = m.group(1).lower(), m.group(2).lower()
        else:
            amount_text, unit = m.group(5).lower(), m.group(6).lower()
        amount: float = (
            0.5
            if amount_text.startswith("half") or amount_text.endswith("half")
            else float(amount_text)
            if re.fullmatch(r"\d+\.\d+", amount_text)
            else float(_num(amount_text) or 1)
        )
        said = m.group(0).lower()
        amount += (
            0.5 if "and a half" in said else 0.75 if "three quarters" in said else 0.25 if "quarter" in said else 0
        )
        key = next(k for k in _UNIT_SECONDS if k.startswith(unit[:3].replace("hr", "hou")))
        if key in ("day", "week", "fortnight"):
            f.day, f.day_said = today + timedelta(days=int(amount * _UNIT_SECONDS[key] / 86400)), True
        else:
            f.delta = timedelta(seconds=amount * _UNIT_SECONDS[key])
            if m.group(3):
                more = next(k for k in _UNIT_SECONDS if k.startswith(m.group(4).lower()[:3]))
                f.delta += timedelta(seconds=(_num(m.group(3).lower()) or 0) * _UNIT_SECONDS[more])
        s.take(m)
    for m in s.each(r"\b(?:in|after) (a|one|three) quarters? of an hour\b"):
        f.delta = timedelta(minutes=45 if m.group(1).lower() == "three" else 15)
        s.take(m)
    for m in s.each(rf"\bin ({_EN_NUM}) (?:days?|weeks?)\b"):  # pragma: no cover - covered above
        s.take(m)
    # days
    for m in s.each(r"\b(?:the )?day after tomorrow\b"):
        f.day, f.day_said = today + timedelta(days=2), True
        s.take(m)
    for m in s.each(r"\btomorrow\b|\btmr\b"):
        f.day, f.day_said = today + timedelta(days=1), True
        s.take(m)
    for m in s.each(r"\byesterday\b"):
        f.day, f.day_said, f.day_is_past = today - timedelta(days=1), True, True
        s.take(m)
    for m in s.each(r"\btoday\b"):
        f.day, f.day_said = today, True
        s.take(m)
    for m in s.each(r"\btonight\b"):
        f.day, f.day_said, f.period = f.day or today, True, "night"
        s.take(m)
    for m in s.each(rf"\b(?:on )?(this|next|coming|this coming)? ?({_WD_ONE})\b"):
        weekday = _en_weekday(m.group(2))
        ahead = (weekday - today.weekday()) % 7
        if (m.group(1) or "").lower() == "next":
            # "next Friday": the Friday of next week, as the user's plans read it (text.when);
            # the confirmation says the date ("on Friday 18 December, in 11 days")
            next_one = resolve_day(f"next {m.group(2)}", datetime.combine(today, time()))
            ahead = (next_one - today).days if next_one is not None else ahead or 7
        if f.day is not None and f.day != today + timedelta(days=ahead):
            f.vague = True  # "on Monday and Thursday" once: two reminders, ask
        f.day, f.day_said = today + timedelta(days=ahead), True
        f.weekday_bare = ahead == 0 and not m.group(1)
        f.weekdays.append(weekday)
        s.take(m)
    for m in s.each(r"\b(?:on )?(?:(\d{4})-(\d{1,2})-(\d{1,2})|(\d{1,2})/(\d{1,2})(?:/(\d{2}|\d{4}))?)\b"):
        if m.group(1):
            f.day = _next_date(today, int(m.group(2)), int(m.group(3)), int(m.group(1)))
        else:
            first, second = int(m.group(4)), int(m.group(5))
            year: int | None = int(m.group(6)) + (2000 if len(m.group(6)) == 2 else 0) if m.group(6) else None
            if first > 12 >= second:
                f.day = _next_date(today, second, first, year)  # 24/12
            elif second > 12 >= first or first == second:
                f.day = _next_date(today, first, second, year)  # 12/24
            else:
                f.day, f.vague = None, True  # 3/4: March 4 or 3 April, ask
        f.day_said = True
        f.vague = f.vague or f.day is None
        s.take(m)
    for m in s.each(
        rf"\b(?:on )?(?:(?:the )?{_ORD} (?:of )?{_MONTH_RE}|{_MONTH_RE} (?:the )?{_ORD})(?:,? (\d{{4}}))?\b(?!:)"
    ):
        day_n = _ordinal(m.group(1) or m.group(4))
        month = _MONTHS[(m.group(2) or m.group(3)).lower()]
        f.day, f.day_said = _next_date(today, month, day_n, int(m.group(5)) if m.group(5) else None), True
        f.vague = f.vague or f.day is None  # "February 30": no such day, ask
        s.take(m)
    # (or "14th" right after a weekday: "on Monday 14th")
    the_nth = rf"on the {_ORD}|the (\d{{1,2}}(?:st|nd|rd|th))|(?<=\0 )(\d{{1,2}}(?:st|nd|rd|th))"
    for m in s.each(rf"\b(?:next month )?(?:{the_nth})(?: of next month)?\b"):
        day_n = _ordinal(m.group(1) or m.group(2) or m.group(3))
        if "next month" in m.group(0).lower():
            f.day = day_of_month(month_start(today, 1), day_n)
        else:
            f.day = day_of_month(today, day_n)
            if f.day is not None and f.day < today:
                f.day = day_of_month(month_start(today, 1), day_n)
        f.day_said = True
        if f.day is None or _not_the_weekday(f):
            f.vague = True  # no such day, or a weekday that is not that date's: ask
        s.take(m)
    # times of day
    for m in s.each(r"\b(?:at )?(noon|midday|midnight)\b"):
        f.hour, f.minute, f.clock_exact = (0 if m.group(1).lower() == "midnight" else 12), 0, True
        if f.hour == 0:
            f.period, f.end_of_day = "night", True
        f.said_clock(True)
        s.take(m)
    # ("tomorrow at lunchtime": half past twelve)
    # (not "for lunch", "eat lunch", "after lunch": a task's words, or a time to ask about)
    for m in s.each(r"(?<!\bafter )\b(?:at )?(?:lunchtime|lunch time)\b|\bat lunch\b(?! with\b)"):
        f.hour, f.minute, f.clock_exact = 12, 30, True
        f.said_clock(True)
        s.take(m)
    for m in s.each(
        rf"\b(?:at )?(half|(?:a )?quarter|{EN_NUMBER})(?: minutes?)? (past|after|to|before) ({EN_NUMBER})\b"
    ):
        hour = _num(m.group(3)) or 0
        word = m.group(1).lower()
        minute = 30 if word == "half" else 15 if word.endswith("quarter") else _num(word) or 0
        if hour > 12 or minute >= 60:
            continue
        if m.group(2).lower() in ("to", "before"):
            hour, minute = hour - 1, 60 - minute
        f.hour, f.minute = hour % 24, minute
        f.said_clock(False)
        s.take(m)
    for m in s.each(rf"\b(?:at )?half ({EN_NUMBER})\b(?!\s*(?:hours?|minutes?|days?))"):
        said_hour = _num(m.group(1))
        if said_hour is not None and 1 <= said_hour <= 12:
            f.hour, f.minute = said_hour, 30  # "at half eight": 8:30
            f.said_clock(False)
            s.take(m)
    spoken = rf"\b(?:at )?({EN_NUMBER}) (o'?clock|oh (?:one|two|three|four|five|six|seven|eight|nine)|{EN_NUMBER})"
    for m in s.each(rf"{spoken}(?:\s*([ap]\.? ?m\.?)(?![a-z]))?"):
        spoken_hour, tail = _num(m.group(1)), m.group(2).lower()
        spoken_minute = 0 if "clock" in tail else _num(tail.removeprefix("oh "))
        if spoken_hour is None or spoken_minute is None or not 1 <= spoken_hour <= 12:
            continue
        if not (tail.startswith(("oh", "o")) or 10 <= spoken_minute <= 59):
            continue
        f.hour, f.minute = spoken_hour, spoken_minute
        if m.group(3):
            f.clock_exact = True
            f.hour = spoken_hour % 12 + (12 if m.group(3).lower().startswith("p") else 0)
        f.said_clock(bool(m.group(3)))
        s.take(m)
    clock = rf"(\d{{1,2}})[:.](\d\d)|({EN_NUMBER})"
    ampm = r"\s*([ap]\.? ?m\.?|o'?clock)(?![a-z])"
    not_amount = r"(?!\s*(?:min|sec|hour|hr|day|week|month|year|time|people|person|of\b))"
    for m in s.each(rf"\b(?:at|@|by|around|for) (?:{clock})(?:{ampm})?(?![\w:]){not_amount}|\b(?:{clock}){ampm}"):
        g = m.groups()
        hour_t, minute_t, word, mark = (g[0], g[1], g[2], g[3]) if any(g[:4]) else (g[4], g[5], g[6], g[7])
        clock_hour = int(hour_t) if hour_t else _num(word)
        if clock_hour is None or clock_hour > 24 or (minute_t and int(minute_t) > 59):
            f.vague = True
            s.take(m)
            continue
        f.hour, f.minute = clock_hour, int(minute_t) if minute_t else 0
        mark = (mark or "").lower().replace(".", "").replace(" ", "")
        if mark in ("am", "pm"):
            f.clock_exact = True
            if mark == "pm" and f.hour < 12:
                f.hour += 12
            if mark == "am" and f.hour == 12:
                f.hour = 0
            if mark == "am" and f.hour < DAY_FROM:
                f.period = f.period or "early"
        elif hour_t and (clock_hour >= 13 or hour_t.startswith("0")):
            f.clock_exact = True
        f.said_clock(mark in ("am", "pm") or bool(hour_t and (clock_hour >= 13 or hour_t.startswith("0"))))
        s.take(m)
    _stretch(s, f, r"\b(?:(?:this|next|the) (?:coming )?(?:week|weekend|month|year)|(?:this|next|the) (?:few )?days)\b")
    for m in s.each(r"\b(?:in the |this |at |tomorrow )?(morning|afternoon|evening|night)\b"):
        before, after = s.rest[: m.start()], s.rest[m.end() :]
        if re.search(r"\b(?:my|the|a|your|his|her|our|their)\s+$", before, re.I) and re.match(
            r"\s+(?!(?:before|after|of|at|too|and|or|then)\b)[a-z]", after, re.I
        ):
            continue  # "my evening pills", "the morning paper": a thing, not when
        named = re.search(r"\b([a-z']+)\s+$", before, re.I)
        if m.group(0).lower() == m.group(1).lower() and named and not re.fullmatch(_NOT_A_THING, named.group(1), re.I):
            continue  # "it's bin night", "the parents evening", "date night": an event's name
        f.period = _PERIODS_EN[m.group(1).lower()]
        if m.group(0).lower().startswith("this") and f.day is None:
            f.day, f.day_said = today, True
        s.take(m)


_ZH_PERIODS = {
    "早上": "morning",
    "早晨": "morning",
    "清晨": "morning",
    "上午": "morning",
    "早": "morning",
    "中午": "noon",
    "下午": "afternoon",
    "傍晚": "evening",
    "晚上": "night",
    "晚": "night",
    "夜里": "night",
    "夜间": "night",
    "半夜": "night",
    "凌晨": "early",
}
_ZH_PERIOD_RE = "|".join(sorted(_ZH_PERIODS, key=len, reverse=True))


def _scan_zh(s: _Scanner, f: _Found, today: date) -> None:
    _fixed_date_days(s, f, today, zh=True)
    _ask_about(s, f, _UNCOUNTED_DAYS_ZH)
    _ask_about(s, f, rf"{_ZH_NUM}[点點](?:半|{_ZH_NUM}分?)?的(?=[\u4e00-\u9fff])(?!提醒|闹钟|时候)")  # 三点的电影
    _ask_about(
        s,
        f,
        r"待会儿?|等会儿?|一会儿|过几天|改天|有空的?时候|晚点|稍后|过阵子|几分钟后|过一会儿?|过几个小时|几个小时(?:以|之)?后",
    )
    _ask_about(s, f, rf"(?:{_ZH_PERIOD_RE})?{_ZH_NUM}点半?(?:或者?|还是|或)(?:{_ZH_PERIOD_RE})?{_ZH_NUM}点半?")
    zh_day = r"(?:今天|明天|后天|大后天|今晚|明晚|明早|(?:这|本|下)?个?(?:周|星期|礼拜)[一二三四五六日天])"
    _ask_about(s, f, rf"{zh_day}(?:或者?|还是|或){zh_day}")  # 明天或者后天: ask which
    # repeats
    for m in s.each(rf"每隔?({_ZH_NUM})个?(天|周|星期|礼拜)|隔天"):
        f.freq = "DAILY" if m.group(0) == "隔天" or m.group(2) == "天" else "WEEKLY"
        f.interval = 2 if m.group(0) == "隔天" else _num(m.group(1)) or 1
        if m.group(0).startswith("每隔") and f.interval == 1:
            f.interval = 2  # 每隔一天: every other day (每隔两天 is said for every two days)
        if f.freq == "WEEKLY":
            f.byday = [WEEKDAY_CODES[today.weekday()]]
        s.take(m)
    for m in s.each(rf"每隔?({_ZH_NUM})?个?(分钟|小时|钟头)"):
        f.freq = "MINUTELY" if m.group(2) == "分钟" else "HOURLY"
        f.interval = _num(m.group(1)) or 1
        s.take(m)
    if f.freq in ("HOURLY", "MINUTELY"):  # "每两个小时从下午两点开始": the clock time is the first
        for m in s.each(r"从(?=[^，。！？]{1,8}开始)|(?<=[点半分\0])开始"):
            s.take(m)
    # "每天三次", "一天两次", "早中晚各一次": a daily repeat at as many clock times
    for m in s.each(rf"(?:每天|一天|每日|天天)({_ZH_NUM})次|早中晚(?:各)?(?:一次)?"):
        f.freq = "DAILY"
        f.times_a_day = _num(m.group(1)) or 1 if m.group(1) else 3
        s.take(m)
    for m in s.each(r"(?:每个?|逢)?工作日|每周一到(?:周)?五|周一到周五|每个?(?:周|星期|礼拜)一至五"):
        f.freq, f.byday = "WEEKLY", list(WEEKDAY_CODES[:5])
        s.take(m)
    for m in s.each(r"每个?周末|逢周末|周末都"):
        f.freq, f.byday = "WEEKLY", ["SA", "SU"]
        s.take(m)
    for m in s.each(
        r"每个?(?:周|星期|礼拜)的?(?:周|星期|礼拜)?([一二三四五六日天](?:[、,，和及与]?(?:周|星期|礼拜)?[一二三四五六日天])*)"
    ):
        f.freq = "WEEKLY"
        f.byday = sorted({WEEKDAY_CODES[_WD_ZH[c]] for c in m.group(1) if c in _WD_ZH}, key=WEEKDAY_CODES.index)
        s.take(m)
    for m in s.each(rf"每年的?({_ZH_NUM})月({_ZH_NUM})(?:号|日)"):
        f.freq, f.bymonth, f.bymonthday = "YEARLY", _num(m.group(1)), _num(m.group(2))
        s.take(m)
    for m in s.each(rf"每个?月的?({_ZH_NUM})(?:号|日)"):
        f.freq, f.bymonthday = "MONTHLY", _num(m.group(1))
        s.take(m)
    for m in s.each(rf"(?:每天|每日|天天)({_ZH_PERIOD_RE})?|每(早|晚)上?"):
        f.freq = "DAILY"
        word = m.group(1) or m.group(2)
        if word:
            f.period = _ZH_PERIODS[word]
        s.take(m)
    # relative
    for m in s.each(rf"(过)?({_ZH_NUM})个?刻钟(后|以后|之后)?"):
        if m.group(1) or m.group(3):
            f.delta = timedelta(minutes=15 * (_num(m.group(2)) or 1))
            s.take(m)
    for m in s.each(rf"(再过|过)?({_ZH_NUM}个半|{_ZH_NUM}|半)个?{_ZH_UNIT}(半)?(后|以后|之后)?"):
        if not (m.group(1) or m.group(5)):
            continue  # "三天" alone is a duration, not a time
        amount_text = m.group(2)
        amount = 0.5 if amount_text == "半" else float(_num(amount_text.removesuffix("个半")) or 0)
        if amount_text.endswith("个半") or m.group(4):
            amount += 0.5
        seconds = _ZH_UNIT_SECONDS[m.group(3)]
        if seconds >= 86400:
            f.day, f.day_said = today + timedelta(days=int(amount * seconds / 86400)), True
        else:
            f.delta = timedelta(seconds=amount * seconds)
        s.take(m)
    # days
    for day_word, offset, period in (
        ("大后天", 3, None),
        ("后天", 2, None),
        ("明早", 1, "morning"),
        ("明晚", 1, "night"),
        ("明天|明日|明儿", 1, None),
        ("今早", 0, "morning"),
        ("今晚", 0, "night"),
        ("今天|今日|今儿", 0, None),
        ("昨天|昨晚|昨日", -1, None),
    ):
        for m in s.each(day_word):
            f.day, f.day_said = today + timedelta(days=offset), True
            f.day_is_past = offset < 0
            if period:
                f.period = period
            s.take(m)
    for m in s.each(r"(下下|下|这|本)?个?(?:周|星期|礼拜)([一二三四五六日天])"):
        weekday = _WD_ZH[m.group(2)]
        monday = today - timedelta(days=today.weekday())
        if m.group(1) == "下":
            f.day = monday + timedelta(days=7 + weekday)
        elif m.group(1) == "下下":
            f.day = monday + timedelta(days=14 + weekday)
        elif m.group(1):
            f.day = monday + timedelta(days=weekday)
        else:
            f.day = today + timedelta(days=(weekday - today.weekday()) % 7)
            f.weekday_bare = f.day == today
        f.day_said = True
        f.weekdays.append(weekday)
        s.take(m)
    for m in s.each(rf"(?:(\d{{4}})年|(明年|今年))?({_ZH_NUM})月({_ZH_NUM})(?:号|日)"):
        month, day_n = _num(m.group(3)), _num(m.group(4))
        year = int(m.group(1)) if m.group(1) else None
        if m.group(2):
            year = today.year + (1 if m.group(2) == "明年" else 0)
        f.day = _next_date(today, month or 0, day_n or 0, year)
        f.day_said = True
        f.vague = f.vague or f.day is None or _not_the_weekday(f)
        s.take(m)
    for m in s.each(rf"(下个?月|这个?月|本月)?({_ZH_NUM})(?:号|日)"):
        day_n = _num(m.group(2)) or 0
        if m.group(1) and m.group(1).startswith("下"):
            f.day = day_of_month(month_start(today, 1), day_n)
        else:
            f.day = day_of_month(today, day_n)
            if not m.group(1) and f.day is not None and f.day < today:
                f.day = day_of_month(month_start(today, 1), day_n)
        f.day_said = True
        f.vague = f.vague or f.day is None or _not_the_weekday(f)
        s.take(m)
    # times of day
    # two hours at once ("十一二点", "两三点"): which one is asked
    _ask_about(s, f, r"(?:十一二|一两|两三|三四|四五|五六|六七|七八|八九|九十)[点點]")
    # minutes short of an hour: "差五分八点", "晚上差一刻九点", "十一点差十分"
    for m in s.each(
        rf"({_ZH_PERIOD_RE})?\s*(?:差({_ZH_NUM}分钟?|一刻|五分)({_ZH_NUM})[点點]|({_ZH_NUM})[点點]差({_ZH_NUM}分钟?|一刻))"
    ):
        short = m.group(2) or m.group(5)
        hour = _num(m.group(3) or m.group(4))
        minutes = 15 if short == "一刻" else _num(re.sub(r"分钟?$", "", short)) or 0
        if hour is None or not 1 <= hour <= 24 or not 0 < minutes < 60:
            continue
        f.hour, f.minute = (hour - 1) % 24, 60 - minutes
        if m.group(1):
            f.period = _ZH_PERIODS[m.group(1)]
        f.said_clock(False)
        s.take(m)
    for m in s.each(
        rf"({_ZH_PERIOD_RE})?\s*(?:(\d{{1,2}})[:：](\d\d)|({_ZH_NUM})[点點时](?:钟)?(?:(半)|(一刻)|(三刻)|过?({_ZH_NUM})分?)?)整?"
    ):
        hour = int(m.group(2)) if m.group(2) else _num(m.group(4))
        if m.group(2):
            minute = int(m.group(3))
        elif m.group(5):
            minute = 30
        elif m.group(6):
            minute = 15
        elif m.group(7):
            minute = 45
        else:
            minute = _num(m.group(8)) or 0
        if hour is None or hour > 24 or minute > 59:
            f.vague = True
            s.take(m)
            continue
        f.hour, f.minute = hour, minute
        if m.group(1):
            f.period = _ZH_PERIODS[m.group(1)]
        elif m.group(2) and (hour >= 13 or m.group(2).startswith("0")):
            f.clock_exact = True
        f.said_clock(bool(m.group(2) and (hour >= 13 or m.group(2).startswith("0"))))
        s.take(m)
    _stretch(s, f, r"(?:下|这|本)个?(?:周末?|星期|礼拜|月)|周末|月底|月初|年底")
    for m in s.each(_ZH_PERIOD_RE):
        if m.group(0) == "早" or m.group(0) == "晚":
            continue  # a lone 早/晚 is too often another word (早点, 晚饭)
        f.period = _ZH_PERIODS[m.group(0)]
        s.take(m)


def _not_the_weekday(f: _Found) -> bool:
    """A weekday said with a date that is another day ("Tuesday the 14th" when the 14th is a
    Monday, 下周四九号 when the 9th is a Wednesday): which one is meant is asked."""
    return bool(f.day is not None and f.weekdays and {f.day.weekday()} != set(f.weekdays))


def _ask_about(s: _Scanner, f: _Found, pattern: str) -> None:
    """Words read but not turned into one time (a holiday, "later", "7 or 8", "the 8 o'clock
    train"): taken out of the reminder's words, and the reminder asks."""
    for m in s.each(pattern):
        f.vague = True
        s.take(m)


def _stretch(s: _Scanner, f: _Found, pattern: str) -> None:
    """A stretch of time ("next week", "这周末") with nothing else saying when: ask which day.
    With a day or time said it is part of the reminder's words ("prepare next week's slides")."""
    if f.day is not None or f.hour is not None or f.freq or f.delta is not None:
        return
    _ask_about(s, f, pattern)


# -- a time said again, corrected -----------------------------------------------------------

# "at 5, no, make it 6", "tomorrow at 9, sorry I mean 10", "on Thursday, no wait, Friday": the
# words that take back what was just said, before the time said in its place
_EN_TAKE_BACK = (
    r"(?:,\s*|\s+|\s*-+\s*)(?:(?:no|nope|nah|sorry|oops|wait|hang on|actually|or rather|rather|scratch that|"
    r"make (?:it|that)|i mean|i meant|let'?s say|say)\b[,.]?\s*)+"
)
_EN_CLOCK_SAID = (
    rf"(?:(?:at|@|by|around|for) )?(?:\d{{1,2}}(?:[:.]\d\d)?|{EN_NUMBER})(?:\s*(?:[ap]\.? ?m\.?|o'?clock))?"
    rf"|(?:(?:at|by|around) )?(?:half past|quarter past|quarter to|half|(?:five|ten|twenty|twenty-five|twenty five|"
    rf"\d{{1,2}}) (?:past|to)) (?:\d{{1,2}}|{EN_NUMBER})"
)
_EN_DAY_SAID = r"(?:on )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|today|tomorrow|tonight"
_ZH_TAKE_BACK = (
    r"[，,、\s]*(?:(?:[哦噢啊呃哎]?不对|不是|啊不是|哦不|噢不|不不|我是说|我说错了|说错了|改成|改到|换成|应该是)"
    r"[，,、\s]*)+"
)
_ZH_CLOCK_SAID = rf"{_ZH_NUM}[点點](?:半|一刻|三刻|{_ZH_NUM}分?)?|\d{{1,2}}[:：]\d\d"
_ZH_DAY_SAID = r"(?:下|这|本)?个?(?:周|星期|礼拜)[一二三四五六日天]|大后天|后天|明天|今天"


def _weeks_from_today(text: str) -> str:
    """ "a week today" (British: seven days from today), "a fortnight today", "a week tomorrow":
    said as the interval they are ("in a week", "in 8 days")."""
    text = re.sub(r"\ba (week|fortnight) (?:today|from today)\b", r"in a \1", text, flags=re.I)
    return re.sub(r"\ba week (?:tomorrow|from tomorrow)\b", "in 8 days", text, flags=re.I)


def _without_hedges(text: str) -> str:
    """ "in like half an hour", "at about 11", "at either 7 or 8", "at 8 sharp": the time without
    the word that hedges it (an about-time is taken as said; "either … or" is still asked)."""
    text = re.sub(r"(\d|o'?clock|[ap]\.?m\.?)\s+(?:sharp|on the dot)\b", r"\1", text, flags=re.I)
    # "in an hour or so", "in 20 minutes or so": the time as said
    text = re.sub(r"\b((?:minutes?|mins?|hours?|hrs?|days?|weeks?))\s+or so\b", r"\1", text, flags=re.I)
    return re.sub(
        rf"\b(in|at|by|around|for) (?:like|about|roughly|approximately|around|maybe|say|either),? "
        rf"(?=\d|an?\b|half\b|quarter\b|(?:{EN_NUMBER})\b)",
        r"\1 ",
        text,
        flags=re.I,
    )


def _corrected(text: str, zh: bool) -> str:
    """The request with a time or day the person took back replaced by the one said after it:
    "remind me at 5, no, make it 6, to start dinner" -> "remind me at 6, to start dinner";
    "下午五点，不对，六点提醒我做饭" -> "下午六点提醒我做饭". Only a time said right after the
    taking-back words counts ("at 5, no later" is left as it is)."""
    kinds = (_ZH_CLOCK_SAID, _ZH_DAY_SAID) if zh else (_EN_CLOCK_SAID, _EN_DAY_SAID)
    take_back = _ZH_TAKE_BACK if zh else _EN_TAKE_BACK
    if zh:  # "早上八点，不是八点，是七点半": the time said last
        for said in kinds:
            text = re.sub(rf"({said})[，,、\s]*不是\1[，,、\s]*(?:是|而是)[，,、\s]*({said})", r"\2", text)
    for _ in range(3):  # "at 5, no 6, sorry, 7"
        changed = False
        for said in kinds:
            start, end = ("", "") if zh else (r"\b", r"(?![\w:])")
            m = re.search(rf"{start}({said}){end}{take_back}({said}){end}", text, re.I)
            if m is None:
                continue
            new = m.group(m.lastindex or 0)
            said_with = re.match(r"(at|@|by|around|for|on) ", m.group(1), re.I)
            if not zh and not re.match(r"(?:at|@|by|around|for|on) ", new, re.I):
                # "at 5, no, make it 6": 6 as the earlier time was said ("at 6"), a clock time
                if said_with:
                    new = f"{said_with.group(1)} {new}"
                elif re.fullmatch(r"\d{1,2}(?:[:.]\d\d)?|" + EN_NUMBER, new, re.I):
                    new = f"at {new}"
                elif re.fullmatch(r"monday|tuesday|wednesday|thursday|friday|saturday|sunday", new, re.I):
                    new = f"on {new}"
            text = text[: m.start()] + new + text[m.end() :]
            changed = True
        if not changed:
            break
    for said in kinds:
        start, end = ("", "") if zh else (r"\b", r"(?![\w:])")
        # the time taken back at the end, after what to do ("每天晚上九点提醒我吃安眠药，不对，九点半",
        # "remind me at four to start the tea, no, half four"): in place of the one time said
        late = re.search(rf"{take_back}({start}(?:{said}){end})[\s。.!！]*$", text, re.I)
        if late is not None:
            earlier = list(re.finditer(rf"{start}(?:{said}){end}", text[: late.start()], re.I))
            if len(earlier) == 1:
                e = earlier[0]
                new = late.group(late.lastindex or 0)
                if (
                    not zh
                    and re.match(r"(?:at|@|by|around|for|on) ", e.group(0), re.I)
                    and not re.match(r"(?:at|@|by|around|for|on) ", new, re.I)
                ):
                    new = e.group(0).split(" ", 1)[0] + " " + new
                text = text[: e.start()] + new + text[e.end() : late.start()]
    if zh:  # a time said again, more exactly, at once: "明天上午十点 十点三刻吧"
        text = re.sub(rf"(?:{_ZH_CLOCK_SAID})[\s，,]+((?:{_ZH_CLOCK_SAID}))吧?", r"\1", text)
    return text


# -- resolving ------------------------------------------------------------------------------


def _next_date(today: date, month: int, day_n: int, year: int | None) -> date | None:
    try:
        if year is not None:
            return date(year, month, day_n)
        candidate = date(today.year, month, day_n)
        return candidate if candidate >= today else date(today.year + 1, month, day_n)
    except ValueError:
        return None


def _hour_in_period(hour: int, period: str | None, exact: bool) -> int:
    """A clock hour with the part of the day it was said in (or the waking-day reading)."""
    if exact or hour >= 13 or hour == 0:
        return hour % 24
    if period in ("afternoon", "evening") and hour < 12:
        return hour + 12
    if period == "night":
        if hour == 12:
            return 0
        return hour + 12 if hour >= 5 else hour  # 晚上十一点 23:00, 夜里两点 02:00
    if period == "noon":
        return hour + 12 if hour < 11 else hour  # 中午一点 13:00, 中午十二点 12:00
    if period in ("morning", "early"):
        return 0 if hour == 12 else hour
    # no period: the waking day (DAY_FROM-DAY_UNTIL)
    return hour if DAY_FROM <= hour <= 12 else hour + 12 if hour < DAY_FROM else hour


def _said_as_night(f: _Found) -> bool:
    # "3 in the morning", "早上五点": a small hour with its part of the day is said on purpose
    return f.period in ("night", "early", "morning") or f.clock_exact or f.hour == 0


def _at(day: date, hour: int, minute: int, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=zone)


def _rrule(f: _Found, hour: int | None) -> str:
    parts = [f"FREQ={f.freq}"]
    if f.interval > 1:
        parts.append(f"INTERVAL={f.interval}")
    if f.byday:
        parts.append("BYDAY=" + ",".join(f.byday))
    if f.bymonth:
        parts.append(f"BYMONTH={f.bymonth}")
    if f.bymonthday:
        parts.append(f"BYMONTHDAY={f.bymonthday}")
    if hour is not None:
        parts += [f"BYHOUR={hour}", f"BYMINUTE={f.minute}"]
    return ";".join(parts)


def next_occurrence(rule: str, after: datetime, tz: str, start: datetime | None = None) -> datetime | None:
    """The first occurrence of an RRULE strictly after `after`, on the wall clock of `tz`
    (daylight saving changes keep the wall-clock time). `start` is the rule's DTSTART (a
    reminder's first due: "every 3 days" counts from it); without it, the first wall-clock
    time the rule names after `after` (its INTERVAL not yet counting)."""
    zone = ZoneInfo(tz)
    local = after.astimezone(zone).replace(tzinfo=None, microsecond=0)
    if start is not None:
        dtstart = start.astimezone(zone).replace(tzinfo=None, microsecond=0)
    elif "FREQ=HOURLY" in rule or "FREQ=MINUTELY" in rule:
        dtstart = local.replace(second=0)
    else:
        rule = re.sub(r";?INTERVAL=\d+", "", rule)
        dtstart = local.replace(hour=0, minute=0, second=0)
    found = du_rrule.rrulestr(rule, dtstart=dtstart).after(local, inc=False)
    return found.replace(tzinfo=zone) if found else None


def parse_reminder(text: str, now: datetime, tz: str) -> ParsedReminder:
    """What a reminder request says, seen from `now` (aware) in the zone `tz` (IANA name)."""
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    text = _as_asked(text)  # "would you mind reminding me in an hour to…", "nag me to…"
    zone = ZoneInfo(tz)
    local_now = now.astimezone(zone)
    today = local_now.date()
    if not is_reminder_request(text):
        return ParsedReminder(due=None, text=text.strip(), question=None, is_request=False)
    zh = bool(_CJK.search(text))
    # ("ive got to ring the gas board", "dont forget"; "in like half an hour", "at 5, no, 6")
    text = _corrected(_without_hedges(_weeks_from_today(as_written(text))), zh)
    scanner = _Scanner(text)
    f = _Found()
    (_scan_zh if zh else _scan_en)(scanner, f, today)
    what = _clean(scanner.rest, zh)
    wake = _WAKE.search(text)
    if (wake or _ALARM.search(text)) and not f.period and f.hour is not None and f.hour < 12 and not f.clock_exact:
        # "wake me up at 6", "set an alarm for quarter past six": 06:00 and 06:15, as asked for
        f.period = "early" if f.hour < DAY_FROM else "morning"
    if wake and not what:
        what = "起床" if zh else "wake up"

    if f.vague:
        return ParsedReminder(None, what, None, AMBIGUOUS)
    if f.freq == "WEEKLY" and f.weekdays:
        # "every two weeks on Monday", "每两周的周六": the day said, not today's
        f.byday = sorted({WEEKDAY_CODES[d] for d in f.weekdays}, key=WEEKDAY_CODES.index)
    times = _clock_times(f)
    if f.times_a_day > max(1, len(times)):
        return ParsedReminder(None, what, _rrule(f, None), NO_TIME)  # "twice a day": ask at what times
    if len(times) > 1:
        # (the words that joined the times: at either end once the times are out)
        joiners = r"^(?:和|跟|还有|以及|、)+|(?:和|跟|还有|以及|、)+$" if zh else r"^and\s+|\s+and$"
        what = re.sub(joiners, "", what, flags=re.I)
        if f.freq in ("DAILY", "WEEKLY", "MONTHLY", "YEARLY") and len({minute for _, minute in times}) == 1:
            # "every day at 8am and 8pm": one repeat at both hours (an RRULE takes several)
            hours = ",".join(str(hour) for hour, _ in times)
            rule = f"{_rrule(f, None)};BYHOUR={hours};BYMINUTE={times[0][1]}"
            return ParsedReminder(next_occurrence(rule, local_now, tz), what, rule)
        return ParsedReminder(None, what, None, AMBIGUOUS)  # two times once, or at different minutes: ask
    if f.freq:
        if f.freq in ("HOURLY", "MINUTELY"):
            if f.hour is not None:  # "every 8 hours starting at two": from that time, each step
                rule = _rrule(f, None)
                if f.day_said and f.day is not None:
                    first = _at(f.day, _hour_in_period(f.hour, f.period, f.clock_exact), f.minute, zone)
                    return ParsedReminder(first, what, rule, PAST if first <= local_now else None)
                # no day: the series as if it started today ("every 4 hours from 8 am", said at 10: 12:00)
                first = _at(today, _hour_in_period(f.hour, f.period, f.clock_exact), f.minute, zone)
                if first <= local_now:
                    first = next_occurrence(rule, local_now, tz, start=first) or first
                return ParsedReminder(first, what, rule)
            step = timedelta(hours=f.interval) if f.freq == "HOURLY" else timedelta(minutes=f.interval)
            due = (local_now.astimezone(UTC) + step).astimezone(zone)
            return ParsedReminder(due, what, _rrule(f, None))
        if f.hour is None:
            return ParsedReminder(None, what, _rrule(f, None), NO_TIME)
        hour = _hour_in_period(f.hour, f.period, f.clock_exact)
        rule = _rrule(f, hour)
        return ParsedReminder(next_occurrence(rule, local_now, tz), what, rule)
    if f.delta is not None:
        due = (local_now.astimezone(UTC) + f.delta).astimezone(zone)
        night = f.delta >= RELATIVE_NIGHT_FROM and _is_night(due)
        return ParsedReminder(due, what, None, NIGHT if night else None)
    if f.hour is None:
        return ParsedReminder(None, what, None, NO_TIME)
    if f.period == "night" and f.hour == 12:
        f.end_of_day = True
    if f.day_said and f.day is not None:
        day = f.day + timedelta(days=1) if f.end_of_day else f.day
        due = _at(day, _hour_in_period(f.hour, f.period, f.clock_exact), f.minute, zone)
        if due <= local_now and f.weekday_bare:
            due = _at(day + timedelta(days=7), due.hour, due.minute, zone)
        if due <= local_now:
            return ParsedReminder(due, what, None, PAST)
    else:
        due = _first_ahead(f, today, local_now, zone)
    question = NIGHT if _is_night(due) and not _said_as_night(f) else None
    return ParsedReminder(due, what, None, question)


def _clock_times(f: _Found) -> list[tuple[int, int]]:
    """The distinct (hour, minute) of every clock time said, each in its own part of the day
    ("早上八点和晚上八点": 08:00, 20:00), in the order of the day."""
    return sorted({(_hour_in_period(h, period or f.period, exact), m) for h, m, exact, period in f.clocks})


def _first_ahead(f: _Found, today: date, now: datetime, zone: ZoneInfo) -> datetime:
    """A clock time with no day: the first day on which a reading is still ahead (today, else
    tomorrow); a bare hour is read on that day in the waking day when it can be (said at 04:00,
    "at 5" is 17:00), else as the first reading ahead (said at 20:00, "at 11" is 23:00, which
    asks "night")."""
    assert f.hour is not None
    preferred = _hour_in_period(f.hour, f.period, f.clock_exact)
    readings = [preferred]
    if not f.clock_exact and f.period is None and 0 < f.hour <= 12:
        readings.append((preferred + 12) % 24)
    candidates = sorted(
        (_at(today + timedelta(days=d), h, f.minute, zone) for d in (0, 1) for h in readings),
        key=lambda c: c.timestamp(),
    )
    ahead = [c for c in candidates if c > now]
    waking = [c for c in ahead if c.date() == ahead[0].date() and DAY_FROM <= c.hour < NIGHT_FROM]
    return (waking or ahead)[0]


def _is_night(due: datetime) -> bool:
    return due.hour >= NIGHT_FROM or due.hour < NIGHT_UNTIL


_EN_ASK = re.compile(
    r"^\s*(?:(?:um+|uh+|er+m?|so|well)[,]?\s+)*"
    r"(?:(?:hey|hi|ok|okay)[,!]?\s+(?:(?:fay|\w+[,!])\s+)?)?"
    r"(?:(?:can|could|would|will) you\s+(?:possibly\s+|please\s+|just\s+|kindly\s+)*|please\s+|pls\s+|i need you to\s+|"
    r"i want you to\s+|i'?d like you to\s+|(?:don'?t|do not) forget to\s+)?"
    r"(?:i(?:'ve)? (?:need|have|want|must|should|got) to\s+(?=\w+\s+\w))?",
    re.I,
)
_EN_LEAD = re.compile(
    r"^(?:(?:please\s+)?(?:(?:set|add|create|make|put|schedule)(?: up)? (?:a|an|the|me a|my) (?:reminder|alarm)"
    r"(?: for me)?|i(?: need| want| would like|'d like) (?:a|an) (?:reminder|alarm)(?: for me)?|"
    r"reminder\s*:?|remind (?:me|us)|"
    r"don'?t let me forget|"
    r"wake me(?: up)?|get me up|nudge me|ping me|tell me|"
    r"give me a (?:reminder|nudge|heads[- ]up|gentle reminder|shout|buzz))\s*)+"
    r"(?:(?:to|that|about|for|of|i (?:need|have) to|i should)\s+)*",
    re.I,
)
_EN_EDGE_WORDS = re.compile(
    r"^(?:(?:to|that|about|for|at|on|and|then|please|,)\s+)+|"
    r"(?:\s+(?:at|(?<!kettle )(?<!kettle's )(?<!heating )(?<!lights )(?<!oven )(?<!'s )on|by|and|to|for|please|,))+$",
    re.I,
)


_ZH_ASK = re.compile(
    r"^(?:(?:呃|嗯|嘿|喂|哎|诶|那个)[，,]?|(?:菲菲|小菲|fay)[，,]?|请|麻烦|(?:您|你)(?:能不能|可不可以|能否|可以|能|会)?|能不能|可不可以|能否|可以|帮我|帮忙|记得|给我|在|到|"
    r"别让我忘(?:了|记)?|别忘了?|不要忘了?|别忘记|不要忘记|你?记一下|帮我记着|我是说|大概|大约|差不多|左右)+"
)


def _clean(rest: str, zh: bool) -> str:
    """What is left once the time words are out: the thing to remind of."""
    t = rest.replace("\0", " ")
    if zh:
        t = re.sub(r"\s+", "", t)
        t = re.sub(r"[嗯呃]+[，,]?", "", t)  # a filler mid-sentence ("提醒我三点 嗯 吃药")
        t = _ZH_ASK.sub("", t)
        t = re.sub(r"把?闹钟(?:定|设|调|订)(?:在|到|成)|把我(?:叫|喊)(?:起来|醒)", "", t)
        t = re.sub(r"^(?:帮我)?(?:定|设|订|加|建|添加|创建|设置|设定)一?个|的?闹钟", "", t)
        t = re.sub(
            r"(?:请|麻烦你?|你)?(?:记得)?(?:帮我)?(?:设(?:置|定)?一?个)?(?:提醒|闹钟)(?:一下|下)?(?:我)?(?:一下)?(?:，|,)?",
            "",
            t,
        )
        t = re.sub(r"叫醒我?|(?:叫我|喊我)(?:一声|一下)?|(?:帮我)?记(?:着|住|一下)", "", t)
        t = re.sub(r"^(?:在|到|的|要|该|记得|时候|那个|以后|从今以后|今后|都|去?(?=去))+", "", t)
        # "吃完午饭提醒我吃药": the moment is asked for (as "after lunch"), the thing is the rest
        t = re.sub(
            r"^(?:(?:吃完|吃过)(?:早|午|晚)?饭(?:以后|之后|后)?|(?:(?:早|午|晚)?饭|下班|放学|睡觉|起床|回家|到家|洗完澡)"
            r"(?:以后|之后|以前|之前|后|前))[，,]?"
            r"|^(?:睡前|饭前|饭后)[，,]?(?=.)",
            "",
            t,
        )
        t = re.sub(r"[，,]?(?:到时候?|届时)", "", t)
        t = re.sub(r"[，,]?(?:别忘了|不要忘了|千万别忘了?)[哦啊呀]?$", "", t)
        t = re.sub(r"(?:的时候|时|吧|哦|啊|呀|好吗|好不好|可以吗|行吗|谢谢|一下|吗|呢)+$", "", t)
        return t.strip("，,。.！!？?、 ")
    t = re.sub(r"\b(?:um+|uh+|erm|er)\b,?", " ", t, flags=re.I)  # a filler anywhere ("remind me uh tomorrow")
    t = re.sub(r"\s+", " ", t).strip()
    request = re.search(r"\b(?:remind (?:me|us)|set (?:a|an) reminder) (?:to|that|about|of|for)\b", t, re.I)
    if request:
        t = t[request.start() :]  # "it's not urgent, but remind me to …": what comes first is talk
    t = re.sub(r"^(?:fay|faye)[,!]?\s+(?:(?:will|can|could|would) you\s+)?", "", t, flags=re.I)
    t = _EN_ASK.sub("", t)
    t = _EN_LEAD.sub("", t)
    # "after lunch to sort out the car insurance": the moment is asked for, the thing is the rest
    t = re.sub(r"^(?:after|before|once|when) (?:[\w']+ ){0,3}?[\w']+,? (?:to|that|about) (?=\w)", "", t, flags=re.I)
    # ("remind me I've got to ring the gas board")
    t = re.sub(r"^I(?:'ve)? (?:need|have|got|must|should) to\s+(?=\w+\s+\w)", "", t, flags=re.I)
    # "…, remind me" / "call mum, please remind me" at the end
    t = re.sub(
        r"[,.]?\s*(?:please\s+)?(?:remind me|set a reminder|(?:and )?don'?t forget|ok(?:ay)?|thanks|thank you)"
        r"(?: about it| of it| of that)?\s*[.!]?\s*$",
        "",
        t,
        flags=re.I,
    )
    t = re.sub(r"\s+([,.!?])", r"\1", t)
    for _ in range(3):
        t = _EN_EDGE_WORDS.sub("", t.strip(" ,.!?;:")).strip(" ,.!?;:")
    if t.lower() in ("for", "to", "at", "on", "about", "that", "by"):
        t = ""  # "set an alarm for seven thirty": only the time was said
    return re.sub(r"\s+", " ", t)
