"""Time expressions in English and Chinese, resolved against a reference time (issue 35).

Two uses, both pure and deterministic (the reference time is always given, never read from
the wall clock):

- `resolve_dates(text, when)`: the calendar days a turn's words refer to, against the time
  the turn was said: "yesterday I went hiking" said on 2026-11-03 → ["2026-11-02"];
  "上周六我去了长城" said on Tuesday 2026-11-10 → ["2026-11-07"].
- `question_window(query, now)`: the span of days a question asks about ("last week",
  "in November", "上个月", "昨天"), or None; and `asks_when(query)`: the question wants a
  date ("when did I…", "什么时候", "哪天").

Calendar arithmetic is dateutil's (relativedelta, weekday), already a dependency. The
expressions are a small fixed grammar matched by regular expressions: dateparser was
considered, but its search_dates reads many words as dates ("may", "sun", "second"), does not
know 上周六/上个月, and costs milliseconds per sentence -- too much for every heard turn.

Weeks start on Monday. "last Saturday" (English) is the most recent Saturday before the
reference day; "上周六" is the Saturday of the previous calendar week, "这周六" of the
current one. A weekday named alone ("周六") ("on Saturday I…") is the most recent such day, today
included.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

from dateutil.relativedelta import relativedelta

from ..text.when import WEEKDAYS_EN, put_right_zh, resolve_day

_MIDNIGHT = datetime.time()

_WEEKDAYS_EN = {
    "monday": 0,
    "mon": 0,
    "tuesday": 1,
    "tue": 1,
    "tues": 1,
    "wednesday": 2,
    "wed": 2,
    "thursday": 3,
    "thu": 3,
    "thurs": 3,
    "friday": 4,
    "fri": 4,
    "saturday": 5,
    "sat": 5,
    "sunday": 6,
    "sun": 6,
}
_MONTHS_EN = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sep": 9,
    "sept": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_NUM_ZH = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_NUMBER_WORDS_EN = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}

_WD_EN = "|".join(sorted(_WEEKDAYS_EN, key=len, reverse=True))
# Full month names anywhere; abbreviations only next to a day number (so "may" the verb is no date).
_MONTH_FULL = "january|february|march|april|may|june|july|august|september|october|november|december"
_MONTH_ANY = "|".join(sorted(_MONTHS_EN, key=len, reverse=True))
_NUM_EN = r"\d+|" + "|".join(_NUMBER_WORDS_EN)
_ZH_NUM = r"[0-9零一二两三四五六七八九十]+"


def _zh_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_NUM_ZH.get(tens, 1) if tens else 1) * 10 + (_NUM_ZH.get(ones, 0) if ones else 0)
    value = 0
    for ch in text:
        value = value * 10 + _NUM_ZH.get(ch, 0)
    return value


def _en_number(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS_EN.get(text, 1)


def _day(when: float | datetime.date) -> datetime.date:
    if isinstance(when, datetime.date):
        return when
    return datetime.datetime.fromtimestamp(when).date()


def _monday(day: datetime.date) -> datetime.date:
    return day - datetime.timedelta(days=day.weekday())


def _most_recent(day: datetime.date, weekday: int, include_today: bool) -> datetime.date:
    back = (day.weekday() - weekday) % 7
    if back == 0 and not include_today:
        back = 7
    return day - datetime.timedelta(days=back)


def _month_day(day: datetime.date, month: int, dom: int) -> datetime.date | None:
    """The month/day in the reference year, or the year before when that is more than a
    month ahead (a past event mentioned in January as "December 28")."""
    try:
        found = datetime.date(day.year, month, dom)
    except ValueError:
        return None
    if found > day + relativedelta(months=1):
        try:
            found = datetime.date(day.year - 1, month, dom)
        except ValueError:
            return None
    return found


@dataclass(frozen=True)
class Window:
    """An inclusive span of days a question asks about."""

    first: datetime.date
    last: datetime.date

    def __contains__(self, day: datetime.date) -> bool:
        return self.first <= day <= self.last


# (pattern, resolver(match, reference day) -> list of days) -- point expressions.
_Resolver = tuple[re.Pattern, object]


def _point_rules() -> list[tuple[re.Pattern, object]]:
    d = datetime.timedelta
    rules: list[tuple[str, object]] = [
        (r"\bthe day before yesterday\b", lambda m, day: [day - d(days=2)]),
        (r"\bthe day after tomorrow\b", lambda m, day: [day + d(days=2)]),
        (r"\byesterday\b|\blast night\b", lambda m, day: [day - d(days=1)]),
        (r"\btoday\b|\btonight\b|\bthis (?:morning|afternoon|evening)\b", lambda m, day: [day]),
        (r"\btomorrow\b", lambda m, day: [day + d(days=1)]),
        (
            rf"\b({_NUM_EN}) (day|week)s? ago\b",
            lambda m, day: [day - d(days=_en_number(m.group(1).lower()) * (7 if m.group(2) == "week" else 1))],
        ),
        (rf"\blast ({_WD_EN})\b", lambda m, day: [_most_recent(day, _WEEKDAYS_EN[m.group(1).lower()], False)]),
        # "next Tuesday" as everywhere else (text.when: the Tuesday of next week), so the date a
        # prompt's hint gives is the date the plan's fact says
        (
            rf"\bnext ({_WD_EN})\b",
            lambda m, day: _next_weekday(day, _WEEKDAYS_EN[m.group(1).lower()]),
        ),
        (
            rf"\b(?:on|this past) ({_WD_EN})\b",
            lambda m, day: [_weekday_said(m, day, _WEEKDAYS_EN[m.group(1).lower()])],
        ),
        (r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b", lambda m, day: _iso(m)),
        (
            rf"\b({_MONTH_ANY})\.? (\d{{1,2}})(?:st|nd|rd|th)?\b",
            lambda m, day: [x for x in [_month_day(day, _MONTHS_EN[m.group(1).lower()], int(m.group(2)))] if x],
        ),
        (
            rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({_MONTH_ANY})\b",
            lambda m, day: [x for x in [_month_day(day, _MONTHS_EN[m.group(2).lower()], int(m.group(1)))] if x],
        ),
        # Chinese
        (r"大前天", lambda m, day: [day - d(days=3)]),
        (r"(?<!大)前天", lambda m, day: [day - d(days=2)]),
        (r"昨天|昨晚|昨日|昨儿", lambda m, day: [day - d(days=1)]),
        (r"今天|今晚|今早|今儿|今日", lambda m, day: [day]),
        (r"(?<!大)后天", lambda m, day: [day + d(days=2)]),
        (r"明天|明晚|明早|明日", lambda m, day: [day + d(days=1)]),
        (rf"({_ZH_NUM})天(?:之|以)?前", lambda m, day: [day - d(days=_zh_number(m.group(1)))]),
        (
            r"(上上|上|这|本|下)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天])",
            lambda m, day: [_zh_weekday(m, day, m.group(1) or "", _WEEKDAYS_ZH[m.group(2)])],
        ),
        (
            rf"(?:(\d{{4}})年)?({_ZH_NUM})月({_ZH_NUM})[日号]",
            lambda m, day: _zh_date(day, m),
        ),
    ]
    return [(re.compile(p, re.IGNORECASE), f) for p, f in rules]


def _next_weekday(day: datetime.date, weekday: int) -> list[datetime.date]:
    """ "next Tuesday" seen from `day`, as text.when reads it (the Tuesday of next week)."""
    found = resolve_day(f"next {WEEKDAYS_EN[weekday]}", datetime.datetime.combine(day, _MIDNIGHT))
    return [found] if found else []


def _iso(m: re.Match) -> list[datetime.date]:
    try:
        return [datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))]
    except ValueError:
        return []


# A day said for what is still to come: "I'm seeing the nurse on Thursday", "星期四下午要去量血压"
_FUTURE_SAID = re.compile(
    r"\b(?:will|'ll|going to|gonna|is coming|are coming|'s coming|due|appointment|booked|have to|has to)\b|"
    r"\b(?:i'm|i am|we're|we are) (?:\w+ing)\b|"
    r"要|得去|准备|打算|约了|计划|会来|要来",
    re.IGNORECASE,
)
_PAST_SAID = re.compile(r"\b(?:was|were|went|had|did|came|got|since|ago)\b|了|过", re.IGNORECASE)


def _weekday_said(m: re.Match, day: datetime.date, weekday: int) -> datetime.date:
    """A weekday said bare ("on Thursday", "星期四"): the coming one when its sentence speaks of
    what is still to come and not of what was, else the most recent one ("周六我去了…")."""
    start = max(m.string.rfind(mark, 0, m.start()) for mark in ".!?。！？") + 1
    ends = [i for i in (m.string.find(mark, m.end()) for mark in ".!?。！？") if i >= 0]
    sentence = m.string[start : min(ends) if ends else len(m.string)]
    if _FUTURE_SAID.search(sentence) and not _PAST_SAID.search(sentence):
        # (the coming one as everywhere else: text.when reads "on Thursday" so)
        coming = resolve_day(f"on {WEEKDAYS_EN[weekday]}", datetime.datetime.combine(day, _MIDNIGHT))
        if coming is not None:
            return coming
    return _most_recent(day, weekday, True)


def _zh_weekday(m: re.Match, day: datetime.date, which: str, weekday: int) -> datetime.date:
    if not which:  # "周六我去了…": the most recent one; "星期四要去…": the coming one
        return _weekday_said(m, day, weekday)
    weeks = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1}[which]
    return _monday(day) + datetime.timedelta(days=7 * weeks + weekday)


def _zh_date(day: datetime.date, m: re.Match) -> list[datetime.date]:
    month, dom = _zh_number(m.group(2)), _zh_number(m.group(3))
    if m.group(1):
        try:
            return [datetime.date(int(m.group(1)), month, dom)]
        except ValueError:
            return []
    found = _month_day(day, month, dom)
    return [found] if found else []


_POINTS = _point_rules()


def resolve_days(text: str, when: float | datetime.date) -> list[datetime.date]:
    """The days `text` refers to, resolved against `when` (seconds since the epoch, local
    time, or a date), in the order they appear; none when it names no day."""
    day = _day(when)
    text = put_right_zh(text)  # ("十二月十号，不对，十二号": the twelfth only)
    found: list[tuple[int, datetime.date]] = []
    taken: list[tuple[int, int]] = []
    for pattern, resolve in _POINTS:
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue  # part of a longer expression already read ("the day before yesterday")
            days = resolve(m, day)  # type: ignore[operator]
            if days:
                taken.append((m.start(), m.end()))
                found += [(m.start(), x) for x in days]
    found.sort(key=lambda item: item[0])
    return list(dict.fromkeys(x for _pos, x in found))


def resolve_dates(text: str, when: float | datetime.date) -> list[str]:
    """`resolve_days` as ISO strings ("2026-11-02")."""
    return [x.isoformat() for x in resolve_days(text, when)]


# -- questions ----------------------------------------------------------------------------------
_WHEN = re.compile(
    r"\bwhen\b|\bwhat (?:day|date)\b|\bwhich day\b|\bhow long ago\b|什么时候|哪天|哪一天|几号|几月几|啥时候|何时",
    re.IGNORECASE,
)
_NOW = re.compile(
    r"\bnow\b|\bcurrently\b|\bthese days\b|\bnowadays\b|\bstill\b|\bat the moment\b|\bany ?more\b|"
    r"现在|目前|如今|这阵子|还喜欢|还在|还是",
    re.IGNORECASE,
)


def asks_when(query: str) -> bool:
    """The question asks for a date or time ("when did I…", "什么时候")."""
    return bool(_WHEN.search(query or ""))


def asks_current(query: str) -> bool:
    """The question asks about the present value of something ("now", "still", "现在")."""
    return bool(_NOW.search(query or ""))


def _month_window(day: datetime.date, month: int) -> Window:
    year = day.year if month <= day.month else day.year - 1
    first = datetime.date(year, month, 1)
    return Window(first, first + relativedelta(months=1) - datetime.timedelta(days=1))


def question_window(query: str, now: float | datetime.date) -> Window | None:
    """The days a question asks about, or None. Spans first ("last week", "上个月", "in
    November"), then single days ("yesterday", "上周六", "November 2")."""
    text = query or ""
    low = text.lower()
    day = _day(now)
    monday = _monday(day)
    week = datetime.timedelta(days=7)
    first_of_month = day.replace(day=1)
    day1 = datetime.timedelta(days=1)
    not_day = "(?![一二三四五六日天末])"
    spans: list[tuple[str, Window]] = [
        (r"\bweek before last\b|上上周|上上个?星期|上上个?礼拜", Window(monday - 2 * week, monday - week - day1)),
        (r"\blast weekend\b|上周末|上个?星期末|上个?周末", Window(monday - 2 * day1, monday - day1)),
        (r"\bthis weekend\b|这周末|这个周末|本周末", Window(monday + 5 * day1, monday + 6 * day1)),
        (
            rf"\blast week\b|\bpast week\b|上周{not_day}|上个?星期{not_day}|上个?礼拜{not_day}",
            Window(monday - week, monday - day1),
        ),
        (rf"\bthis week\b|这周{not_day}|本周{not_day}|这个?星期{not_day}", Window(monday, day)),
        (
            r"\blast month\b|上个月|上月",
            Window(first_of_month - relativedelta(months=1), first_of_month - day1),
        ),
        (r"\bthis month\b|这个月|本月", Window(first_of_month, day)),
        (r"\blast year\b|去年", Window(datetime.date(day.year - 1, 1, 1), datetime.date(day.year - 1, 12, 31))),
        (r"\brecently\b|\blately\b|\bthe past few days\b|最近|近来|这几天", Window(day - 2 * week, day)),
    ]
    for pattern, window in spans:
        if re.search(pattern, low):
            return window
    days = resolve_days(text, day)
    if days:
        return Window(min(days), max(days))
    m = re.search(rf"\b(?:in|during|of|since) ({_MONTH_FULL}|{_MONTH_ANY})\b", low) or re.search(
        rf"\b({_MONTH_FULL})\b", low
    )
    if m:
        return _month_window(day, _MONTHS_EN[m.group(1).lower()])
    m = re.search(rf"(?<![0-9年])({_ZH_NUM})月(?!{_ZH_NUM}[日号])", text)
    if m:
        month = _zh_number(m.group(1))
        if 1 <= month <= 12:
            return _month_window(day, month)
    return None
