"""Questions about what the user told the companion, answered from the facts themselves.

"What's my name?", "What do I like?", "Who is my sister?", "What am I doing tomorrow?",
(and the clock's questions, `time_answer`: "What time is it?", "现在几点？")
"我叫什么名字？", "我喜欢什么？": the answer is in the user's stored facts (their own words,
see `fay_ros.memory.self_facts`), so it is said back as it was stored, not re-told by a
model. The tiny embedded model gets these wrong more often than right ("My name is Alex."),
so the tiny profile answers them here; a capable model finds them through its tools.

When the fact is not known, the answer says so plainly and asks, instead of guessing.

Pure Python, no ROS.
"""

from __future__ import annotations

import datetime
import re

from ..memory.self_facts import RELATIONS, ZH_RELATIONS, name_from_content, second_person, taste_from_content
from ..text.words import has_cjk

_NAME_Q_EN = re.compile(
    r"\bwhat(?:'s| is) my name\b|"
    r"\b(?:do|did) you (?:still |even )?(?:remember|know|recall) my name\b|"
    r"\bwho am i\b|\bsay my name\b|\bwhat do you call me\b|"
    # "...my name...?", but not "My name is Tom, what's yours?" (a statement, then a question)
    r"\bmy name\b(?!(?:'s|\s+is)\s+(?!what\b|again\b)\w).*\?",
    re.I,
)
_NAME_Q_ZH = re.compile(r"我叫什么|我的名字(?:是|叫)?什么|我是谁|(?:记得|知道)我(?:的名字|叫什么)")
_LIKES_Q_EN = re.compile(
    r"\bwhat (?:do|did) i (?:like|love|enjoy)\b|\bwhat (?:things )?i (?:like|love|enjoy)\b|"
    r"\bmy (?:likes|hobbies|favou?rite things)\b",
    re.I,
)
_LIKES_Q_ZH = re.compile(r"我(?:都)?喜欢(?:什么|啥)|我的爱好|我爱(?:什么|啥)")
# a yes/no question only ("what do I like to eat?" is not one)
_DO_I_LIKE_EN = re.compile(r"(?:^|[,.!]\s*)do i (?:like|love|enjoy)\s+(.+?)\s*\?*$", re.I)
_FAVORITE_Q_EN = re.compile(r"\b(?:what|who)(?:'s| is) my favou?rite ([a-z]+)\b", re.I)
_FAMILY_Q_EN = re.compile(r"\b(?:who is|who's|what(?:'s| is)) my ([a-z ]+?)(?:'s name| called| named)?\s*\?*$", re.I)
_FAMILY_Q_ZH = re.compile(r"我(?:的)?(\w{1,3}?)叫什么")
_PLAN_Q_EN = re.compile(
    r"\bwhat (?:am i|was i|did i say i(?:'m| was| am)) (?:doing|going to do|planning)\b|"
    r"\bwhat are my plans\b|\bmy plans?\b.*\?",
    re.I,
)
_PLAN_Q_ZH = re.compile(r"我(?:明天|周末|下周|今晚)?(?:要|打算)(?:做|干)(?:什么|啥)|我的(?:计划|安排)")

_UNKNOWN = {
    "name": {
        "en": "You haven't told me your name yet. What should I call you?",
        "zh": "你还没告诉我你的名字呢，我该怎么称呼你？",
    },
    "likes": {
        "en": "You haven't told me what you like yet. What do you enjoy?",
        "zh": "你还没告诉我你喜欢什么呢，说说看？",
    },
    "plans": {"en": "You haven't told me your plans yet.", "zh": "你还没告诉我你的安排呢。"},
    "favorite": {"en": "You haven't told me your favorite {} yet. What is it?", "zh": "你还没告诉我你最喜欢的{}呢。"},
    "family": {"en": "You haven't told me about your {} yet.", "zh": "你还没告诉我你{}的名字呢。"},
}


def user_name(facts: dict[str, str]) -> str:
    """The user's name from the facts (key "name"), or ""."""
    return name_from_content(facts.get("name", ""))


def answer(question: str, facts: dict[str, str], language: str = "en") -> str | None:
    """The answer to a question about the user's own facts, or None when `question` is not one.

    `facts`: key → stored content ("name" → "User's name is Tom.", "taste:hiking" →
    "User likes hiking.", ...)."""
    zh = language.startswith("zh") or has_cjk(question)
    lang = "zh" if zh else "en"
    q = question.strip()
    if (_NAME_Q_ZH if zh else _NAME_Q_EN).search(q):
        name = user_name(facts)
        if not name:
            return _UNKNOWN["name"][lang]
        return f"你叫{name}。" if zh else f"Your name is {name}."
    if not zh and (m := _FAVORITE_Q_EN.search(q)):
        what = m.group(1).lower()
        found = facts.get(f"favorite:{what}")
        return second_person(found) if found else _UNKNOWN["favorite"]["en"].format(what)
    if not zh and (m := _DO_I_LIKE_EN.search(q)):
        asked = m.group(1).strip(" ?.!").lower()  # "hiking and coffee": each one
        things = [t for t in re.split(r",\s*(?:and|or)\s+|,\s*|\s+and\s+|\s+or\s+", asked) if t]
        return " ".join(_do_i_like(thing, facts) for thing in things[:4])
    if (_LIKES_Q_ZH if zh else _LIKES_Q_EN).search(q):
        tastes = _tastes(facts, zh)
        return tastes or _UNKNOWN["likes"][lang]
    if (_PLAN_Q_ZH if zh else _PLAN_Q_EN).search(q):
        plans = [second_person(v) for k, v in facts.items() if k.startswith("plan:")]
        return _join(plans, zh) if plans else _UNKNOWN["plans"][lang]
    m = (_FAMILY_Q_ZH if zh else _FAMILY_Q_EN).search(q)
    if m:
        relation = m.group(1).strip().lower()
        found = facts.get("family:" + re.sub(r"\s+", "_", relation))
        if found:
            return second_person(found)
        if relation in (ZH_RELATIONS.split("|") if zh else RELATIONS):  # "who is my mom?", not "what is my job?"
            return _UNKNOWN["family"][lang].format(relation)
    return None


def _do_i_like(thing: str, facts: dict[str, str]) -> str:
    found = facts.get("taste:" + re.sub(r"\s+", "_", thing))
    if found is None:
        return f"You haven't told me whether you like {thing}."
    return ("Yes, " if " likes " in found else "No, ") + _lower_first(second_person(found))


def _tastes(facts: dict[str, str], zh: bool) -> str:
    """ "You like hiking and coffee. You don't like tea. Your favorite color is blue."."""
    likes: list[str] = []
    dislikes: list[str] = []
    other: list[str] = []
    for key, content in facts.items():
        taste = taste_from_content(content) if key.startswith("taste:") else None
        if taste is not None:
            thing, positive = taste
            (likes if positive else dislikes).append(thing)
            continue
        if key.startswith(("taste:", "favorite:")):
            other.append(second_person(content))
    parts = []
    if zh:
        parts += [f"你喜欢{'、'.join(likes)}。"] if likes else []
        parts += [f"你不喜欢{'、'.join(dislikes)}。"] if dislikes else []
    else:
        parts += [f"You like {_and(likes)}."] if likes else []
        parts += [f"You don't like {_and(dislikes)}."] if dislikes else []
    return _join(parts + other, zh)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != "I " else text


def _join(sentences: list[str], zh: bool) -> str:
    return ("" if zh else " ").join(sentences[:4])


_TIME_Q_EN = re.compile(
    r"\bwhat(?:'s| is)? (?:the )?time\b|\bwhat time is it\b|\bwhat day is (?:it|today)\b|"
    r"\bwhat(?:'s| is) (?:the )?date\b|\bwhich day is (?:it|today)\b|"
    r"\bwhat(?:'s| is) today\b",
    re.I,
)
_TIME_Q_ZH = re.compile(r"几点|星期几|礼拜几|周几|几号|什么日子|今天.{0,2}日期|现在.{0,2}时间")
_WEEKDAYS_ZH = "一二三四五六日"


def time_answer(question: str, now: datetime.datetime, language: str = "en") -> str | None:
    """ "What time is it?" / "What day is it today?" / "现在几点？": the clock's answer, not a
    model's guess (a tiny model invents times). None for other questions."""
    zh = language.startswith("zh") or has_cjk(question)
    if not (_TIME_Q_ZH if zh else _TIME_Q_EN).search(question):
        return None
    if zh:
        return f"现在是{now.month}月{now.day}日，星期{_WEEKDAYS_ZH[now.weekday()]}，{now.hour}点{now.minute:02d}分。"
    hour = now.hour % 12 or 12
    return f"It's {hour}:{now.minute:02d} {'PM' if now.hour >= 12 else 'AM'} on {now:%A, %B} {now.day}."
