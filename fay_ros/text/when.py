"""Numbers and days as people say them, in English and Chinese: "seven", "十二", "两",
"on Sunday", "下周日", "March 3", "3月3号", and the way back ("7" → "seven", "七").

A statement such as "my daughter turns seven on Sunday" is kept with the day it names
resolved against the moment it was said (`resolve_day(text, now)`), so that a question
asked weeks later is answered with an absolute date, not a "Sunday" that has moved on.

Chinese numerals are read by a small converter (0-9999: 零〇一二两三四五六七八九十百千),
which is all an age, a day or a month needs; no library.

Pure Python, no ROS.
"""

from __future__ import annotations

import datetime
import re

_EN_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_EN_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_ZH_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
ZH_NUMERAL = "零〇一二两三四五六七八九十百千"
# An English number word or a run of digits, for patterns: "7", "seven", "twenty-one".
EN_NUMBER = (
    r"\d{1,3}|(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|"
    r"seven|eight|nine))?|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)"
)
ZH_NUMBER = rf"\d{{1,4}}|[{ZH_NUMERAL}]{{1,6}}"

MONTHS_EN = "January February March April May June July August September October November December".split()
WEEKDAYS_EN = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_WEEKDAYS_ZH = "一二三四五六日"
MONTH_EN = (  # an English month name or its abbreviation
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_WEEKDAY_EN = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"

# English days: "today", "tomorrow", "on Sunday", "this Sunday", "next Sunday", "March 3",
# "3rd of March", "on the 5th"
EN_DAY = (
    rf"(?:today|tonight|tomorrow|the day after tomorrow|(?:on |this |next |coming )?{_WEEKDAY_EN}|"
    rf"(?:on )?(?:the )?{_ORDINAL} (?:of )?{MONTH_EN}|(?:on )?{MONTH_EN} (?:the )?{_ORDINAL}|"
    # a day of the month alone: "on the 9th" (this month's, or next month's once past)
    r"(?:on )?the \d{1,2}(?:st|nd|rd|th)\b)"
)
# Chinese days: "今天", "明天", "后天", "周日", "这周日", "下周日", "下个星期天", "3月3日", "三月三号"
_ZH_WEEKDAY = r"(?:周|星期|礼拜)(?:[一二三四五六日天])"
ZH_DAY = (
    rf"(?:今天|明天|后天|(?:这|本|下)?(?:个)?{_ZH_WEEKDAY}|"
    rf"(?:{ZH_NUMBER})月(?:{ZH_NUMBER})(?:日|号)|"
    # "这个月十二号", "下个月五号" (a day of this month or the next)
    rf"(?:这个?月|本月|下个?月)(?:{ZH_NUMBER})(?:日|号))"
)


def number(text: str) -> int | None:
    """ "7", "seven", "twenty-one", "七", "十二", "二十一", "两", "一百零五" → the integer; None
    when `text` is no number."""
    t = text.strip().lower()
    if t.isdigit():
        return int(t)
    if t in _EN_UNITS:
        return _EN_UNITS.index(t)
    m = re.fullmatch(r"([a-z]+)(?:[- ]([a-z]+))?", t)
    if m and m.group(1) in _EN_TENS[2:]:
        tens = _EN_TENS.index(m.group(1)) * 10
        unit = m.group(2)
        if unit is None:
            return tens
        if unit in _EN_UNITS[1:10]:
            return tens + _EN_UNITS.index(unit)
        return None
    return _zh_number(t)


def _zh_number(text: str) -> int | None:
    if not text or any(c not in _ZH_DIGITS and c not in _ZH_UNITS for c in text):
        return None
    if all(c in _ZH_DIGITS for c in text) and len(text) > 1:
        return int("".join(str(_ZH_DIGITS[c]) for c in text))  # "二〇一九": digit by digit
    total, digit = 0, None
    for c in text:
        if c in _ZH_DIGITS:
            digit = _ZH_DIGITS[c]
            continue
        unit = _ZH_UNITS[c]
        total += (1 if digit is None else digit) * unit  # "十二": a bare 十 is one ten
        digit = None
    return total + (digit or 0)


def en_words(n: int) -> str:
    """7 → "seven", 21 → "twenty-one" (0-99; larger numbers stay digits)."""
    if 0 <= n < 20:
        return _EN_UNITS[n]
    if 20 <= n < 100:
        tens, unit = divmod(n, 10)
        return _EN_TENS[tens] + (f"-{_EN_UNITS[unit]}" if unit else "")
    return str(n)


def zh_words(n: int) -> str:
    """7 → "七", 12 → "十二", 21 → "二十一" (0-99; larger numbers stay digits)."""
    digits = "零一二三四五六七八九"
    if 0 <= n < 10:
        return digits[n]
    if 10 <= n < 100:
        tens, unit = divmod(n, 10)
        return ("" if tens == 1 else digits[tens]) + "十" + (digits[unit] if unit else "")
    return str(n)


def resolve_day(text: str, now: datetime.datetime) -> datetime.date | None:
    """The date a day expression names, seen from `now`: "Sunday" is the coming Sunday (today
    when it is Sunday), "next Sunday"/"下周日" the Sunday of next week, "March 3" the next
    3 March (today included). None when `text` names no day."""
    t = text.strip().lower()
    today = now.date()
    simple = {
        "today": 0,
        "tonight": 0,
        "tomorrow": 1,
        "the day after tomorrow": 2,
        "今天": 0,
        "明天": 1,
        "后天": 2,
    }
    if t in simple:
        return today + datetime.timedelta(days=simple[t])
    m = re.fullmatch(rf"(?:on |this |(next )|coming )?({_WEEKDAY_EN})", t)
    if m:
        return _weekday(today, WEEKDAYS_EN.index(m.group(2).capitalize()), next_week=bool(m.group(1)))
    m = re.fullmatch(r"(这|本|下)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天])", t)
    if m:
        day = 6 if m.group(2) in "日天" else _WEEKDAYS_ZH.index(m.group(2))
        return _weekday(today, day, next_week=bool(m.group(1) and m.group(1).startswith("下")))
    month_day = month_and_day(t)
    if month_day is not None:
        month, day = month_day
        return next_anniversary(month, day, today)
    # "下个月五号"; "五号", "这个月二十号" (this month's, or next month's once past)
    m = re.fullmatch(rf"(下个?月|(?:这个?|本)月)?({ZH_NUMBER})[号日]", t) or re.fullmatch(
        r"(next month )?(?:on )?the (\d{1,2})(?:st|nd|rd|th)",
        t,  # "on the 9th"
    )
    day_n = number(m.group(2)) if m else None
    if m and day_n is not None and 1 <= day_n <= 31:
        next_month = bool(m.group(1) and m.group(1).startswith(("下", "next"))) or day_n < today.day
        return day_of_month(month_start(today, 1) if next_month else today, day_n)
    return None


def month_start(day: datetime.date, months_on: int = 0) -> datetime.date:
    """The first day of `day`'s month, or of the month `months_on` after it."""
    index = day.month - 1 + months_on
    return datetime.date(day.year + index // 12, index % 12 + 1, 1)


def day_of_month(day: datetime.date, day_n: int) -> datetime.date | None:
    """The `day_n`th of `day`'s month; None when that month has no such day (the 31st of June)."""
    try:
        return day.replace(day=day_n)
    except ValueError:
        return None


def month_and_day(text: str) -> tuple[int, int] | None:
    """ "March 3", "3rd of March", "3月3日", "三月三号" → (3, 3); None otherwise."""
    t = text.strip().lower()
    m = re.fullmatch(rf"(?:on )?(?:the )?{_ORDINAL} (?:of )?({MONTH_EN})", t) or re.fullmatch(
        rf"(?:on )?({MONTH_EN}) (?:the )?{_ORDINAL}", t
    )
    if m:
        day_text, month_text = (m.group(1), m.group(2)) if m.group(1).isdigit() else (m.group(2), m.group(1))
        month = next(i + 1 for i, name in enumerate(MONTHS_EN) if name.lower().startswith(month_text[:3]))
        day = int(day_text)
    else:
        m = re.fullmatch(rf"({ZH_NUMBER})月({ZH_NUMBER})(?:日|号)", t)
        if not m:
            return None
        month_n, day_n = number(m.group(1)), number(m.group(2))
        if month_n is None or day_n is None:
            return None
        month, day = month_n, day_n
    try:
        datetime.date(2000, month, day)  # a leap year: 29 February is a day
    except ValueError:
        return None
    return month, day


def _weekday(today: datetime.date, weekday: int, next_week: bool) -> datetime.date:
    if next_week:  # the named day in the week (Monday to Sunday) after this one
        monday = today - datetime.timedelta(days=today.weekday()) + datetime.timedelta(days=7)
        return monday + datetime.timedelta(days=weekday)
    return today + datetime.timedelta(days=(weekday - today.weekday()) % 7)


def weekend_start(today: datetime.date, following: bool = False) -> datetime.date:
    """The Saturday "this weekend" starts on (today's, said on a Saturday or a Sunday), or the
    one after it (`following`: "next weekend", 下周末)."""
    saturday = today + datetime.timedelta(days=(5 - today.weekday()) % 7)
    if today.weekday() == 6:  # (said on a Sunday: the weekend is today's)
        saturday = today - datetime.timedelta(days=1)
    return saturday + datetime.timedelta(days=7 if following else 0)


def anniversary(month: int, day: int, year: int) -> datetime.date:
    """The day of `month`/`day` in `year`; 29 February is kept on 28 February in other years."""
    try:
        return datetime.date(year, month, day)
    except ValueError:
        return datetime.date(year, month, day - 1)


# Days people name that fall on the same date every year (the ones that move, Easter, Mother's
# Day, 春节, 中秋, are not here: they are asked about). Pattern (lower case) -> (month, day).
FIXED_DATE_DAYS_EN = {
    r"christmas eve": (12, 24),
    r"christmas(?: day)?": (12, 25),
    r"boxing day": (12, 26),
    r"new year'?s eve": (12, 31),
    r"new year'?s day": (1, 1),
    r"valentine'?s(?: day)?": (2, 14),
    r"halloween": (10, 31),
}
FIXED_DATE_DAYS_ZH = {
    r"平安夜": (12, 24),
    r"圣诞(?:节)?": (12, 25),
    r"元旦": (1, 1),
    r"情人节": (2, 14),
    r"妇女节": (3, 8),
    r"劳动节|五一(?!点)": (5, 1),
    r"儿童节|六一(?!点)": (6, 1),
    r"国庆节": (10, 1),
}


def fixed_date_day(name: str) -> tuple[int, int] | None:
    """(month, day) of a day named by one of FIXED_DATE_DAYS_EN/ZH ("Christmas Eve", "元旦")."""
    for table in (FIXED_DATE_DAYS_EN, FIXED_DATE_DAYS_ZH):
        for pattern, month_day in table.items():
            if re.fullmatch(pattern, name.strip(), re.I):
                return month_day
    return None


def next_anniversary(month: int, day: int, today: datetime.date) -> datetime.date:
    """The next `month`/`day` from `today` on (today included)."""
    this_year = anniversary(month, day, today.year)
    return this_year if this_year >= today else anniversary(month, day, today.year + 1)


def years_between(born: datetime.date, on: datetime.date) -> int:
    """Whole years from `born` to `on`: an age, one more from the birthday on."""
    return on.year - born.year - (1 if (on.month, on.day) < (born.month, born.day) else 0)


def format_date(day: datetime.date, zh: bool, weekday: bool = True) -> str:
    """ "Sunday, 6 December 2026" / "2026年12月6日（星期日）"."""
    if zh:
        return f"{day.year}年{day.month}月{day.day}日" + (f"（星期{_WEEKDAYS_ZH[day.weekday()]}）" if weekday else "")
    return (f"{WEEKDAYS_EN[day.weekday()]}, " if weekday else "") + f"{day.day} {MONTHS_EN[day.month - 1]} {day.year}"


def format_month_day(month: int, day: int, zh: bool) -> str:
    """ "6 December" / "12月6日"."""
    return f"{month}月{day}日" if zh else f"{day} {MONTHS_EN[month - 1]}"


def parse_date(text: str) -> datetime.date | None:
    """The date `format_date` wrote ("Sunday, 6 December 2026", "6 December 2026",
    "2026年12月6日（星期日）"), else None."""
    m = re.search(r"(\d{1,2}) (" + "|".join(MONTHS_EN) + r") (\d{4})", text)
    if m:
        return datetime.date(int(m.group(3)), MONTHS_EN.index(m.group(2)) + 1, int(m.group(1)))
    m = re.search(r"(\d{4})年(\d{1,2})月(\d{1,2})日", text)
    if m:
        return datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    return None


# -- a value put right in the same breath ------------------------------------------------------

_ZH_VALUE_SAID = (
    r"(?:[零〇一二两三四五六七八九十百\d]+(?:[点點]钟?(?:半|一刻|三刻|[零〇一二三四五六七八九十\d]+分?)?|岁|号|日|块|片|粒|次|个)?"
    r"|(?:礼拜|星期|周)[一二三四五六日天])"
)
_ZH_SAID_AGAIN = re.compile(
    rf"{_ZH_VALUE_SAID}[，,、\s]*(?:(?:[哦噢啊呃哎]?不对|说错了|我说错了)[，,、\s]*)+(?:应该是|是)?(?P<new>{_ZH_VALUE_SAID})"
)


def put_right_zh(text: str) -> str:
    """`text` with a number, time, day or weekday put right in the same breath replaced by the
    later one ("我今年七十四，不对不对，七十五了" -> "我今年七十五了", "十二月十号，不对，十二号" ->
    "十二月十二号", "星期三，不对，星期四" -> "星期四"): what the person meant, for every reader.
    ("七十五，不是七十四" is left: it says which one it is not.)"""
    return _ZH_SAID_AGAIN.sub(r"\g<new>", text)
