"""Questions about what the user told the companion, answered from the facts themselves.

"What's my name?", "What do I like?", "Who is my sister?", "What am I doing tomorrow?",
"What do I do for a living?", "Where do I live?", "What am I allergic to?", "Can I eat
satay?", "What medication do I take?", "How old will my daughter be?" (counted to `now`),
"When is Lena's birthday?", "我对什么过敏？", "我女儿几岁了？"
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
from collections.abc import Sequence
from dataclasses import dataclass

from ..memory import health
from ..memory.self_facts import (
    FEMALE_RELATIONS,
    MALE_RELATIONS,
    PETS,
    RELATION_WORDS,
    RELATIONS,
    USER_EN,
    YOUNG_PETS,
    ZH_RELATIONS,
    SelfFact,
    given_up,
    household_member,
    is_safety_key,
    name_from_content,
    name_in_age,
    name_of_relative,
    relation_key,
    relatives_known,
    second_person,
    taste_from_content,
    third_person_verb,
)
from ..text import when
from ..text.words import and_list, as_written, has_cjk
from . import food_ideas

_NAME_Q_EN = re.compile(
    r"\bwhat(?:'s| is) my name\b|"
    r"\b(?:do|did) you (?:still |even )?(?:remember|know|recall) my name\b|"
    # ("who am I?", "who am I again, Fay?"; not "who am I going fishing with?")
    r"\bwho am i\b(?=(?:,? (?:again|then|now|fay))*\s*[?.!]*$)|\bsay my name\b|"
    r"\bwhat (?:do|should) (?:you|people|they|folk|everyone) call me\b|"
    r"\bhow should you address me\b|"
    # "...my name...?", but not "My name is Tom, what's yours?" (a statement, then a question)
    r"\bmy name\b(?!(?:'s|\s+is)\s+(?!what\b|again\b)\w).*\?",
    re.I,
)
_NAME_Q_ZH = re.compile(
    r"我叫什么|我的名字(?:是|叫)?什么|我是谁|(?:记得|知道)我(?:的名字|叫什么)|(?:应该)?怎么称呼我|你(?:应该)?叫我什么|"
    r"(?:大家|别人|他们)(?:都)?(?:怎么|叫我什么)"
)
_LIKES_Q_EN = re.compile(
    r"\bwhat (?:do|did) i (?:like|love|enjoy)\b|\bwhat (?:things )?i (?:like|love|enjoy)\b|"
    r"\bmy (?:likes|hobbies|hobby|favou?rite things|interests)\b|\bwhat do i do for fun\b|"
    r"\bwhat(?:'s| is| are) my (?:hobby|hobbies)\b|\bwhat (?:sort|kind|type)s? of \w+ do i (?:like|love|enjoy)\b|"
    r"\bwhat hobb(?:y|ies) (?:am i|do i|have i)\b|\bwhat am i (?:doing|into) these days\b|"
    r"\bwhat (?:do )?i do (?:for a hobby|for fun|in my spare time)\b",
    re.I,
)
_LIKES_Q_ZH = re.compile(
    r"我(?:现在|平时|平常|都|最)?(?:都)?喜欢(?:干|做|玩|看|听|吃|喝|唱|读|去)?(?:什么|啥)|我的爱好|"
    r"我爱(?:干|吃|喝|玩|看|听)?(?:什么|啥)"
)
_DISLIKES_Q_EN = re.compile(
    r"\bwhat (?:\w+ )?(?:don'?t|do not|didn'?t) i (?:like|enjoy|love)\b|"
    r"\bwhat (?:\w+ )?do i (?:not like|dislike|hate)\b|"
    r"\bwhat (?:\w+ )?can'?t i stand\b|\bwhat are my dislikes\b|\bwhat (?:\w+ )?did i say i (?:hate|dislike)\b",
    re.I,
)
_DISLIKES_Q_ZH = re.compile(r"我(?:平时|最)?不喜欢(?:干|做|玩|看|听|吃)?(?:什么|啥)|我讨厌(?:什么|啥)")
# a yes/no question only ("what do I like to eat?" is not one)
_DO_I_LIKE_EN = re.compile(r"(?:^|[,.!]\s*)do i (?:like|love|enjoy)\s+(.+?)\s*\?*$", re.I)
_FAVORITE_Q_EN = re.compile(r"\b(?:what|who)(?:'s| is|s) my favou?rite (?:tv |television |radio )?([a-z]+)\b", re.I)
_FAMILY_Q_EN = re.compile(
    r"\bwhat(?:'s| is|s) the name of (?:my|our) ([a-z ]+?)(?: again)?\s*\?*$|"
    r"\b(?:who is|who's|whos|who was|who are|what(?:'s| is| are| was| were|s)) (?:my|our|the) (?:late )?"
    r"((?:(?:daughter|son|sister|brother|wife|husband)'s (?!name\b))?[a-z -]+?)"
    r"(?:'s name|s name| called| named)?(?: again)?\s*\?*$|"
    r"\b(?:do you know|do you remember|can you remember|remember) (?:my|our) ([a-z ]+?)'s name\s*\?*$|"
    # "do you remember what the dog's name is?"
    r"\bwhat (?:my|our|the) ([a-z -]+?)'s name is\b|"
    # "remind me what I called the budgie", "what did I call my dog?"
    r"\bwhat (?:did )?(?:i|we) (?:call|called|name|named) (?:my|our|the) ([a-z -]+?)(?: again)?\s*\?*$",
    re.I,
)
# people a user may ask about that are no family key ("What's my flatmate called?"): never told,
# so said so, not left to the model to invent
_PEOPLE_EN = frozenset(
    "flatmate roommate housemate neighbour neighbor carer caregiver nurse doctor gp boss manager colleague "
    "teacher landlord landlady cleaner niece nephew cousin aunt auntie uncle godson goddaughter stepson "
    "stepdaughter son-in-law daughter-in-law mother-in-law father-in-law fiance fiancé fiancee fiancée "
    "grandchildren grandkids kids children twin physio physiotherapist chiropodist podiatrist optician dentist "
    "social worker".split()
)
# a relative's spouse or parent said through the relative: the in-law it is
_IN_LAWS = {
    **dict.fromkeys(("daughter's husband", "daughters husband"), "son-in-law"),
    **dict.fromkeys(("son's wife", "sons wife"), "daughter-in-law"),
    **dict.fromkeys(("sister's husband",), "brother-in-law"),
    **dict.fromkeys(("brother's wife",), "sister-in-law"),
    **dict.fromkeys(("wife's mother", "wife's mum", "husband's mother", "husband's mum"), "mother-in-law"),
    **dict.fromkeys(("wife's father", "wife's dad", "husband's father", "husband's dad"), "father-in-law"),
}
# "my little boy" is the son they told of, "my little girl" the daughter
_CHILD_WORDS = {"little boy": "son", "boy": "son", "lad": "son", "little girl": "daughter", "girl": "daughter"}
# "my partner" / "我爱人": whoever of these the user named
_PARTNER_WORDS = frozenset({"partner", "spouse", "other half", "significant other", "爱人", "伴侣", "对象", "另一半"})
_PARTNERS = ("wife", "husband", "partner", "spouse", "girlfriend", "boyfriend")
_FAMILY_Q_ZH = re.compile(r"我(?:的)?((?:家的|家|养的)?\w{1,3}?)(?:的名字)?(?:叫(?:什么|啥)|的名字是(?:什么|啥))")
_PLAN_Q_EN = re.compile(
    r"\bwhat (?:am i|was i|are we|did i say i(?:'m| was| am)) (?:doing|going to do|planning)\b|"
    r"\bwhat are my plans\b|\bmy plans?\b.*\?|\bdo i have (?:any )?plans\b|"
    # a visit: "Who's coming to see me on Saturday?", "Who am I seeing tomorrow?"
    r"\bwho(?:'s| is) (?:coming|visiting|popping|dropping)\b|"
    # (with a day: "who's taking me out on Thursday?"; without one the plan that says it answers)
    r"\bwho(?:'s| is) (?:taking|driving|picking) me\b(?=.*\b(?:on|tomorrow|today|tonight|this|next)\b)|"
    r"\bwho am i (?:seeing|meeting|visiting|going with)\b|"
    r"\bwhat (?:have i got|do i have|have i got on|is on for me) (?:on|this|next|tomorrow|today|at the weekend)\b|"
    # "What do I need to do today?", "What did I have to pick up on Wednesday?"
    r"\bwhat (?:do i|did i) (?:need|have) to\b|\bwhat (?:have i|'ve i|i've) got to do\b|"
    r"\bwhat was i (?:supposed|meant|going|planning) to\b|\bwhat did i have (?:on|at)\b|"
    # a trip: "Where am I going next week?", "When is my trip?", "When am I going to Rome?"
    r"\bwhere (?:am i|are we) (?:going|flying|travel+ing|off to|headed|heading)\b|"
    r"\bwhen(?:'s| is) my (?:trip|flight|holiday|vacation|journey|visit)\b|"
    r"\bwhen am i (?:going|flying|travel+ing|leaving|off|heading|visiting)\b(?:(?: to| for)? ((?-i:[A-Z][a-z]+)))?",
    re.I,
)
_TEAM_Q_EN = re.compile(
    r"\b(?:which|what) (?:football |rugby |cricket |baseball |basketball )?(?:team|club|side) (?:do|did) i "
    r"(?:support|follow)\b|\bwho do i (?:support|follow)\b|\bwhat(?:'s| is) my (?:team|club)\b|"
    r"\b(?:which|what) (?:team|club) am i a (?:fan|supporter) of\b",
    re.I,
)
_TEAM_Q_ZH = re.compile(r"我(?:支持|喜欢)(?:哪个|什么)(?:球)?队|我是(?:哪个|什么)(?:球)?队的球迷")
_STUDY_Q_EN = re.compile(
    r"\bwhat (?:am i|do i) (?:study(?:ing)?|learn(?:ing)?)\b|\bwhat(?:'s| is) my (?:degree|course)\b|"
    r"\b(?:which|what) (?:uni|university|college|school) (?:am i at|do i go to|do i study at|am i studying at)\b|"
    r"\bwhere (?:do|am) i (?:study|studying|at uni|at university)\b",
    re.I,
)
_STUDY_Q_ZH = re.compile(
    r"我(?:最近|现在|目前|这段时间|这阵子)?(?:在)?(?:学|学习|读|念)(?:的是)?(?:什么|啥)(?:专业)?|我(?:学|读)的是什么|"
    r"我(?:在)?(?:哪个城市|哪里|哪儿|哪所学校|哪个学校|哪个大学)(?:读书|上学|读大学|上大学|念书|读研究生|读研|学)"
)
_RELATIVE_MED_Q_EN = re.compile(
    rf"\bwhat (?:medicine|medication|tablets?|pills?)? ?(?:does|did) my ({RELATION_WORDS}) "
    r"(?:take|have|need)\b",
    re.I,
)
# an event they told of, by its kind: "When is my hospital appointment?", "what day is my exam?"
_EVENT_Q_EN = re.compile(
    r"\b(?:(?:when|where)(?:'s| is| was| are| were)|what (?:day|time|date) (?:is|are)|what day's) "
    r"(?:my|the) (?:[a-z]+(?:'s)? )?"
    r"(appointment|exam|interview|operation|check-?up|surgery|test|party|wedding|meeting|scan)s?\b",
    re.I,
)
_PLAN_Q_ZH = re.compile(
    r"我(?:明天|后天|周末|下周|今晚|这周末|(?:这|下)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天]|"
    r"(?:下个?月)?[0-9一二三四五六七八九十]{1,3}[号日])?(?:早上|上午|中午|下午|晚上)?"
    r"(?:要|打算|准备)?(?:去)?(?:做|干|去)(?:什么|啥|嘛|哪)|我(?:明天|周末|下周|今晚)?要干嘛|我的(?:计划|安排)|"
    r"我(?:明天|后天|周末|这个?周末|下周|下个?星期|今晚)?有(?:什么|啥|哪些)(?:安排|计划|事)"
)

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
    "about_me": {
        "en": "You haven't told me much about yourself yet. I'd love to hear about you.",
        "zh": "你还没怎么跟我说过你自己呢，我很想多了解你。",
    },
    "occupation": {
        "en": "You haven't told me what you do for a living yet.",
        "zh": "你还没告诉我你是做什么工作的呢。",
    },
    "home": {"en": "You haven't told me where you live yet.", "zh": "你还没告诉我你住在哪里呢。"},
    "allergy": {"en": "You haven't told me about any allergies.", "zh": "你还没告诉我你对什么过敏。"},
    "own_age": {"en": "You haven't told me how old you are.", "zh": "你还没告诉我你多大。"},
    "medication": {
        "en": "You haven't told me about any medication you take.",
        "zh": "你还没告诉我你在吃什么药。",
    },
    "health": {"en": "You haven't told me anything about your health.", "zh": "你还没告诉我你的健康情况。"},
    "age": {
        "en": "You haven't told me how old {} is or when {} birthday is.",
        "zh": "你还没告诉我{}多大、生日是哪天。",
    },
}


def _known_names_capitalised(question: str, facts: dict[str, str]) -> str:
    """ "how old is alfie" → "how old is Alfie" when Alfie is a family member's name: a
    recogniser writes names in lower case, and the questions find names by their capital."""
    for _relation, name in relatives_known(facts):  # (also each of "twin boys, Jayden and Jordan")
        if name.isascii() and name.istitle() and " " not in name:
            question = re.sub(rf"\b{re.escape(name.lower())}\b", name, question)
    return question


def user_name(facts: dict[str, str]) -> str:
    """The user's name from the facts (key "name"), or ""."""
    return name_from_content(facts.get("name", ""))


def answer(
    question: str, facts: dict[str, str], language: str = "en", now: datetime.datetime | None = None
) -> str | None:
    """The answer to a question about the user's own facts, or None when `question` is not one.

    `facts`: key → stored content ("name" → "User's name is Tom.", "taste:hiking" →
    "User likes hiking.", ...); `now`: the moment of the question (ages and birthdays are
    counted to it; default: the current local time)."""
    zh = language.startswith("zh") or has_cjk(question)
    lang = "zh" if zh else "en"
    q = question.strip() if zh else _known_names_capitalised(as_written(question.strip()), facts)
    now = now or datetime.datetime.now().astimezone()
    if (_ABOUT_ME_Q_ZH if zh else _ABOUT_ME_Q_EN).search(q):
        return _about_me(facts, zh) or _UNKNOWN["about_me"][lang]
    about = _about_oneself(q, facts, zh, now)
    if about is not None:
        return about
    if m := (_WHOSE_BIRTHDAY_Q_ZH if zh else _WHOSE_BIRTHDAY_Q_EN).search(q):
        return _whose_birthday(facts, zh, now, tomorrow=bool(re.search(r"tomorrow|明天", m.group(0), re.I)))
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
    if (_DISLIKES_Q_ZH if zh else _DISLIKES_Q_EN).search(q):
        return _tastes(facts, zh, only_dislikes=True) or (
            "你还没告诉我你不喜欢什么。" if zh else "You haven't told me about anything you don't like."
        )
    if (_LIKES_Q_ZH if zh else _LIKES_Q_EN).search(q):
        tastes = _tastes(facts, zh)
        return tastes or _UNKNOWN["likes"][lang]
    if (_TEAM_Q_ZH if zh else _TEAM_Q_EN).search(q):
        if "team" in facts:
            return second_person(facts["team"])
        return "你还没告诉我你支持哪个队。" if zh else "You haven't told me which team you support."
    if (_STUDY_Q_ZH if zh else _STUDY_Q_EN).search(q):
        learning = [v for k, v in facts.items() if k.startswith("taste:") and f"{USER_EN} is learning " in v]
        studies = [facts["study"]] if "study" in facts else []
        if studies or learning:
            return _join([second_person(v) for v in studies + learning], zh)
        return "你还没告诉我你在学什么。" if zh else "You haven't told me what you're studying."
    if not zh and (m := _RELATIVE_MED_Q_EN.search(q)):  # "What does my mum take in the evening?"
        relation = relation_key(m.group(1))
        said = [
            second_person(v)
            for k, v in facts.items()
            if k.startswith("health:medication:") and k.endswith(f":{relation}")
        ]
        return _join(said, zh) if said else f"You haven't told me about any medicine your {m.group(1).lower()} takes."
    if not zh and (m := _EVENT_Q_EN.search(q)):  # "When is my hospital appointment?", "…my brother's wedding?"
        event = m.group(1).lower()
        # a relative's event: the plans that name the relative too ("…my brother's wedding?")
        whose = re.search(r"\bmy ([a-z]+)'s ", m.group(0), re.I)
        relative = whose.group(1).lower() if whose else ""
        named = "wedding|married" if relative and event == "wedding" else re.escape(event[:6])
        # "my dentist appointment" of "I've got the dentist on Monday": the word before it too
        kind = re.search(r"\b(?:my|the) ([a-z]+) " + re.escape(m.group(1)), m.group(0), re.I)
        if kind and not relative and kind.group(1).lower() not in ("next", "first", "last", "big", "new"):
            named = f"{named}|\\b{re.escape(kind.group(1).lower())}\\b"
        named_plans = [
            v
            for k, v in facts.items()
            if k.startswith("plan:") and re.search(named, v, re.I) and re.search(relative, v, re.I)
        ]
        said = [second_person(v) for v in named_plans if plan_still_ahead(v, now.date())]
        if said:
            return _join(said, zh)
        if named_plans:  # its day has gone by: what was told, as told
            return "You told me: " + _lower_first(_join([second_person(v) for v in named_plans], zh))
        if relative:
            return f"You haven't told me about your {relative}'s {event}."
        if re.search(r"\bthe\b", m.group(0), re.I):
            return None  # "when is the party?" may be anyone's: the plans told are not all there is
        return f"You haven't told me about {('an ' if event[0] in 'aeiou' else 'a ') + event}."
    if not zh and (m := _WITH_WHOM_Q_EN.search(q)):  # "Who am I going fishing with?": the plan that says
        doing = re.escape(m.group(1).lower())
        said = [
            second_person(v)
            for k, v in facts.items()
            if k.startswith("plan:") and re.search(rf"\b{doing}\b with ", v, re.I) and plan_still_ahead(v, now.date())
        ]
        if said:
            return _join(said, zh)
    if m := (_PLAN_Q_ZH if zh else _PLAN_Q_EN).search(q):
        told = [v for k, v in facts.items() if k.startswith("plan:")]
        plans = [second_person(v) for v in told if plan_still_ahead(v, now.date())]
        past = bool((_PAST_ZH if zh else _PAST_EN).search(q))
        if told and not plans and not past:
            return "你跟我说过的安排都已经过去了。" if zh else "The plans you told me about have all gone by."
        asked = _day_asked(q, zh, now)
        if asked is not None and (plans or past):  # "我星期五下午要干什么？": that day's plans only
            word, day = asked
            # (a plan stored with its day word only, as older ones were, by that word; a day gone
            # by: the plans told for it, said back as told)
            that_day = [
                p
                for p in ([second_person(v) for v in told] if past else plans)
                if day in p or (not _DATED.search(p) and word.lower() in p.lower())
            ]
            if not that_day:
                return "你还没告诉我那天的安排。" if zh else "You haven't told me any plans for that day."
            if past and not all(plan_still_ahead(p, now.date()) for p in that_day):
                return ("你跟我说过：" if zh else "You told me: ") + _lower_first(_join(that_day, zh))
            plans = that_day
        elif past and not zh and (to_do := re.search(r"\bto ([a-z]+(?: up| out| off| in| back)?)\b", q, re.I)):
            # "What did I need to pick up?": the plans that say it, gone by or not
            said = [second_person(v) for v in told if re.search(rf"\b{re.escape(to_do.group(1))}\b", v, re.I)]
            if said:
                return "You told me: " + _lower_first(_join(said, zh))
        place = None if zh else m.group(1)
        if place:  # "When am I going to Rome?": the plans that say Rome, or that none does
            plans = [p for p in plans if re.search(rf"\b{re.escape(place)}\b", p)]
            if not plans:
                return f"You haven't told me about a trip to {place}."
        return _join(plans, zh) if plans else _UNKNOWN["plans"][lang]
    if not zh and _LIVE_WITH_Q_EN.search(q):  # "Who do I live with?": family, else flatmates
        said = [facts[k] for k in ("household", "family:roommate") if k in facts]
        return second_person(said[0]) if said else "You haven't told me who you live with."
    if not zh and (theirs := _relatives_relative(q, facts)):  # "What's Sue's husband called?"
        return theirs
    if not zh and (who := _who_answer(q, facts, now)):  # "Who pops in every afternoon?", "Who is Joan?"
        return who
    if zh and (their_plan := _someones_plan_zh(q, facts, now)):  # "我儿子什么时候回来？"
        return their_plan
    if zh and (coming := _who_comes_zh(q, facts, now)):  # "谁这个周末回来？"
        return coming
    if not zh and (their_plan := _someones_plan(q, facts, now)):  # "When does Sofia start ballet?"
        return their_plan
    if routine := _routine_answer(q, facts, zh):  # "What do I do every morning?", "我每天早上干什么？"
        return routine
    if not zh and (doings := _own_doings(q, facts)):  # "What sport do I play?", "What do I keep?"
        return doings
    if not zh and (m := _HOW_MANY_Q_EN.search(q)):  # "How many kids do I have?"
        relation = _CHILD_WORDS.get(m.group(1).lower(), m.group(1).lower())
        relation = {"kids": "child", "children": "child"}.get(relation, relation.removesuffix("s"))
        found = facts.get(f"family:{relation_key(relation)}", "")
        if re.search(r"\bhas (?:a|an|one|two|three|four|five|\d+) ", found):
            return second_person(found)
        return None
    m = (_FAMILY_Q_ZH if zh else _FAMILY_Q_EN).search(q)
    if m:
        relation = re.sub(r"^(?:家的|家|养的)", "", next(g for g in m.groups() if g).strip().lower())
        if zh:  # "我大孙子叫什么？", "我的孙子们叫什么？": the grandsons told of
            relation = re.sub(r"^(?:大|小|二|三)(?=(?:" + ZH_RELATIONS + r")$)", "", relation.removesuffix("们"))
        relation = _CHILD_WORDS.get(relation, relation)
        relation = {"grandchildren": "grandchild", "children": "child"}.get(relation, relation)
        relation = _IN_LAWS.get(relation, relation)  # "my daughter's husband": the son-in-law
        asked = relation
        # "my eldest son": the son they told of (or none told)
        relation = re.sub(r"^(?:eldest|youngest|oldest|older|younger|big|baby|middle) (?=\w)", "", relation)
        if not zh and relation.endswith("s") and relation[:-1] in (*RELATIONS, *_PEOPLE_EN):
            relation = relation[:-1]  # "what are my cats called?"
        found = facts.get("family:" + relation_key(relation)) or facts.get("family:" + re.sub(r"\s+", "_", relation))
        if not found and relation in _PARTNER_WORDS:  # "my partner": the wife, husband, … they named
            found = next((facts[f"family:{r}"] for r in _PARTNERS if f"family:{r}" in facts), None)
        if not found and relation in ("twin", "twins"):  # "what are my twins called?": whichever kind
            found = next(
                (v for k, v in facts.items() if k.count(":") == 1 and k.startswith("family:") and " twin" in v), None
            )
            if found:
                return second_person(found)
        if found and re.search(r"called|name|叫|名", q, re.I) and not re.search(r"called|named|name|叫|名", found):
            # "what's my tortoise called?" of "User has a tortoise.": the name was not told
            return f"你还没告诉我你的{asked}叫什么。" if zh else f"You haven't told me your {asked}'s name."
        if found:
            return second_person(_as_of_now(f"family:{relation_key(relation)}", found, facts))
        known = ZH_RELATIONS.split("|") if zh else (*RELATIONS, *_PEOPLE_EN)
        if relation in known or relation in _PARTNER_WORDS:  # "who is my mom?", not "what is my job?"
            return _UNKNOWN["family"][lang].format(asked)
    return None


# "What sport do I play?", "What do I keep in the garden?", "Which team do I support?": what the
# user said they do with that verb ("User plays badminton on Thursdays.", "User keeps bees.")
_OWN_DOING_Q_EN = re.compile(
    r"^(?:and |so |remind me,? |do you (?:know|remember),? )?(?:what|which)(?: (?:[a-z]+ ){0,2}?[a-z]+)? "
    r"(?:do|did) i (play|keep|grow|drive|own|collect|ride|support|speak|read|watch|follow|wear|study|make|breed)"
    r"\b(?: [a-z ]+)?\s*\??$",
    re.I,
)


def _own_doings(question: str, facts: dict[str, str]) -> str | None:
    """What the user does with the verb asked about, said back; None when nothing told says it
    (then `not_told` says so)."""
    m = _OWN_DOING_Q_EN.search(question)
    if m is None:
        return None
    does = third_person_verb(m.group(1).lower())
    said = [v for v in facts.values() if re.match(rf"User (?:also |still |usually |often )?{does}\b", v)]
    return _said_back(said, False) if said else None


# "Who am I going fishing with?", "who are we meeting for lunch with?"
_WITH_WHOM_Q_EN = re.compile(r"\bwho (?:am i|are we) ([a-z]+ing\b.*?) with\b", re.I)


# A question about the user's own life that no fact answers and no recalled memory mentions
# ("What car do I drive?", "What team do I support?", "How many kids do I have?", "我开什么车？"):
# the tiny model made an answer up ("a luxury Toyota Corolla"), so it is said plainly that it
# was not told. Not advice or requests ("what should I…", "can I…"), nor what other answers read.
_OWN_LIFE_Q_EN = [
    (
        re.compile(
            r"^(?:and |so |remind me,? |do you (?:know|remember) )?(?:what|which) ((?:[a-z]+ ){0,2}?[a-z]+) "
            r"(?:do|did) i (drive|own|have|use|play|support|speak|wear|read|watch|follow|collect|ride|study)"
            r"(?: again)?\s*\??$",
            re.I,
        ),
        "You haven't told me what {0} you {1}.",
    ),
    (
        re.compile(r"^(?:and |so )?how many ([a-z]+) (?:do|did) i (?:have|own|keep)\b", re.I),
        "You haven't told me how many {0} you have.",
    ),
    (
        re.compile(r"^(?:and |so )?do i (?:have|own) (?:a|an|any) ([a-z]+(?: [a-z]+)?)\s*\??$", re.I),
        "You haven't told me whether you have {2}.",
    ),
]
_OWN_LIFE_Q_ZH = re.compile(
    r"^我(?:家)?(?:开|养|说|玩|穿|支持)(?:了)?(?:的)?(?:是)?(?:什么|哪|几)(?:个|只|辆|种|些|样的)?(\w{0,4}?)(?:来着)?[？?]?$"
)


def not_told(question: str, facts: dict[str, str], recalled: Sequence[str], language: str = "en") -> str | None:
    """ "You haven't told me what car you drive." for a question about the user's own life that
    nothing they told answers: no stored fact and no recalled memory names what it asks about;
    None for any other question (then the model may answer from what it was given)."""
    zh = language.startswith("zh") or has_cjk(question)
    q = question.strip()
    if zh:
        m = _OWN_LIFE_Q_ZH.search(q)
        if m is None:
            return None
        topic = m.group(1)
        if topic and any(topic in text for text in (*facts.values(), *recalled)):
            return None
        return "你还没告诉我这个呢。"
    for pattern, reply in _OWN_LIFE_Q_EN:
        m = pattern.search(q)
        if m is None:
            continue
        topic = m.group(1).lower()
        if topic in ("thing", "things", "stuff", "kind", "sort", "one") or re.search(
            r"\b(?:should|could|can|would|might|need|want)\b", q, re.I
        ):
            return None
        stem = re.escape(topic.split()[-1].rstrip("s"))
        verb = m.group(2).lower() if m.lastindex and m.lastindex >= 2 else "have"
        said = rf"\b{stem}|\bI(?: also| still)? {verb}s?\b|\bUser {verb}s?\b"
        if any(re.search(said, text, re.I) for text in (*facts.values(), *recalled)):
            return None
        family = re.search(r"kid|child|grand|brother|sister|sibling|pet|son|daughter", topic)
        if family and any(k.startswith("family:") for k in facts):
            return None
        thing = ("an " if topic[:1] in "aeiou" else "a ") + topic
        return reply.format(topic, verb, thing)
    return None


# "When does Sofia start ballet?", "Where's Sam this week?", "when is my son coming home?": a
# relative's plan, found by who it is about and a word of the question
_SOMEONES_PLAN_Q_EN = re.compile(
    r"^(?:so |and |remind me,? )?(?:when|where|what day)(?:'s| is| does| will| did| do)? "
    # (someone by a family word or name, or an event: "when's the baby due?")
    r"(my [a-z]+|the [a-z]+|"
    r"(?!(?:the|it|that|this|your|our|i|we|you|he|she|they|there|is|are|was|does|do|did|will)\b)[a-z]+)"
    r"(?:'s)? (.*?)\s*\??$",
    re.I,
)
_QUESTION_WORDS = frozenset("a an the this that next week weekend going to be get do does is are at on in for".split())


# Who someone the user told of is, or who does what they told of: "Who is Joan?", "Who pops in
# every afternoon?", "Who's taking me to the garden centre?" (not "who am I?", "who are you?")
_WHO_Q_EN = re.compile(
    r"^(?:so |and |remind me,? )?who(?:'s| is) ((?-i:[A-Z])[a-z]+|[a-z]+)\s*\??$|"
    r"^(?:so |and |remind me,? )?who(?:'s| is)? (?!(?:am|are|is|was|were|do|did|does|you|i|my)\b)(.+?)\s*\??$",
    re.I,
)
_WHO_STOP = frozenset("the a an to in on at of me my for and with every each".split())


_LIVE_WITH_Q_EN = re.compile(
    r"\bwho (?:do|did) i live with\b|\bwho lives with me\b|\bdo i live (?:alone|on my own|by myself)\b", re.I
)
# a relative's own relative, by the relative's name: "What's Sue's husband called?" of "…my
# daughter Sue and her husband Mark"
_RELATIVES_RELATIVE_Q_EN = re.compile(
    rf"\bwhat(?:'s| is) ((?-i:[A-Z])[a-z]+)'s ({RELATION_WORDS})(?:'s name| called| named)?\s*\??$|"
    rf"\bwho(?:'s| is) ((?-i:[A-Z])[a-z]+)'s ({RELATION_WORDS})\s*\??$",
    re.I,
)


def _relatives_relative(question: str, facts: dict[str, str]) -> str | None:
    m = _RELATIVES_RELATIVE_Q_EN.search(question)
    if m is None:
        return None
    name, relation = m.group(1) or m.group(3), (m.group(2) or m.group(4)).lower()
    # how the facts say the named one: by name, or by their relation ("their daughter's husband")
    said_as = [re.escape(name)] + [
        rf"their {re.escape(word)}" for word, named in relatives_known(facts) if named == name
    ]
    pattern = re.compile(rf"(?:{'|'.join(said_as)})'s {re.escape(relation)} ((?-i:[A-Z])[a-z]+)")
    for content in facts.values():
        if found := pattern.search(content):
            return f"{name}'s {relation} is called {found.group(1)}."
    return None


def _who_answer(question: str, facts: dict[str, str], now: datetime.datetime) -> str | None:
    m = _WHO_Q_EN.search(question)
    if m is None:
        return None
    if m.group(1):  # a name: the relative of that name
        name = re.compile(rf"\bcalled {re.escape(m.group(1))}\b", re.I)
        said = [second_person(v) for k, v in facts.items() if k.startswith("family:") and name.search(v)]
        if said:
            return _join(said, False)
    # (one word that names no one may say what they do: "who's expecting?")
    asked = m.group(2) or m.group(1)
    words = [w for w in re.findall(r"[a-z]+", asked.lower()) if w not in _WHO_STOP and len(w) > 2]
    if not words:
        return None

    def shares(fact: str) -> int:
        return sum(bool(re.search(rf"\b{re.escape(w[:4])}", fact, re.I)) for w in words)

    # someone else's routine or plan ("User's neighbour Joan pops in…"): one that has the verb,
    # or two of the question's words
    told = [
        v
        for k, v in facts.items()
        if (k.startswith("routine:") or k.startswith("plan:") and plan_still_ahead(v, now.date()))
        and re.match(r"User's ", v)
    ]
    said = [second_person(v) for v in told if shares(v) >= min(2, len(words)) or re.search(rf"\b{words[0][:4]}", v)]
    return _join(said, False) if said else None


def _someones_plan_zh(question: str, facts: dict[str, str], now: datetime.datetime) -> str | None:
    """ "我儿子什么时候回来？", "朵朵哪天来？": the plans that name them (by the family word said,
    or a name), still ahead; None when none does (the birthday answers read "…什么时候过生日")."""
    m = _SOMEONES_PLAN_Q_ZH.search(question)
    if m is None or "生日" in question:
        return None
    said = m.group(1) or m.group(3) or m.group(4) or m.group(6) or ""
    relation = relation_key(said) if m.group(1) or m.group(4) else _by_name(said, facts) or ""
    plans = [
        second_person(v)
        for k, v in facts.items()
        if k.startswith("plan:")
        and plan_still_ahead(v, now.date())
        and (said and said in v or relation and k.startswith(f"plan:{relation}_"))
    ]
    return _join(plans, True) if plans else None


# "谁这个周末回来？", "明天谁来看我？": who of the household said they are coming
_WHO_COMES_Q_ZH = re.compile(r"谁[^，,。？?]{0,8}?(?:要)?(?:回来|回家|过来|来看我|来)|(?:回来|来看我)的是谁")


def _who_comes_zh(question: str, facts: dict[str, str], now: datetime.datetime) -> str | None:
    """The relatives' plans of coming that are still ahead (of the day asked, when one is), or
    that none was told."""
    if not _WHO_COMES_Q_ZH.search(question):
        return None
    asked = _day_asked(question, True, now)
    weekend = re.search(r"(?:这|本|下)?(?:个)?周末", question)
    if asked is None and weekend:  # (a weekend is no one day: the plans said of its Saturday)
        saturday = when.weekend_start(now.date(), following=weekend.group(0).startswith("下"))
        asked = (weekend.group(0), when.format_date(saturday, zh=True, weekday=False))
    plans = [
        second_person(v)
        for k, v in facts.items()
        if re.match(r"plan:[a-z-]+_", k)
        and re.search(r"回来|回家|过来|来看|来", v)
        and plan_still_ahead(v, now.date())
        and (asked is None or asked[1] in v or asked[0] in v)
    ]
    if plans:
        return _join(plans, True)
    # nothing told: said so, not the apology that the model speaks English only
    return f"你还没告诉我{asked[0] if asked else ''}谁要来。"


def _someones_plan(question: str, facts: dict[str, str], now: datetime.datetime) -> str | None:
    m = _SOMEONES_PLAN_Q_EN.search(question)
    if m is None:
        return None
    words = [w for w in re.findall(r"[a-z]+", m.group(2).lower()) if w not in _QUESTION_WORDS and len(w) > 2]
    if any(w in ("birthday", "born", "age", "old") for w in words):
        return None  # (the birthday and age answers read those)
    said = re.sub(r"^(?:my|the) ", "", m.group(1), flags=re.I)  # a name, a family word ("mum", key "mother")
    mentions = re.compile(rf"\b(?:{re.escape(said)}|{re.escape(relation_key(said))})\b", re.I)
    # "where did Michael go?": the plans told of them, those gone by too
    past = re.search(r"\bdid\b", question, re.I) is not None
    plans = [
        v
        for k, v in facts.items()
        if (k.startswith("plan:") and (past or plan_still_ahead(v, now.date())) or k.startswith("routine:"))
        and mentions.search(v)
    ]
    if words:
        # the plans that share a word with the question, else (a question with other words:
        # "when does Carys come to see me?" of "Carys visits on Wednesdays") all of theirs
        plans = [v for v in plans if any(re.search(rf"\b{re.escape(w[:5])}", v, re.I) for w in words)] or plans
    if not plans:
        return None
    said_back = _join([second_person(v) for v in plans], False)
    gone = past and not all(plan_still_ahead(v, now.date()) for v in plans)
    return f"You told me: {_lower_first(said_back)}" if gone else said_back


# What someone does regularly: "What do I do every morning?", "what does Finn do on Saturdays?",
# "which day does my son ring me?", "我每天早上干什么？", "我周末一般做什么？" (the `routine:` facts)
_ROUTINE_Q_EN = re.compile(
    r"\bwhat (?:do|does) (i|we|my [a-z]+|the (?:kids|boys|girls|children|grandkids)|(?-i:[A-Z])[a-z]+) "
    r"(?:usually |normally |always )?do "
    r"((?:every|on|at|in the|each) .+?)\s*\??$|"
    r"\b(?:(?:which|what) days?|when) (?:does|do) (my [a-z]+|(?-i:[A-Z])[a-z]+|i|we) (\w+)",
    re.I,
)
_ROUTINE_Q_ZH = re.compile(
    # (a time of day alone is asked of a routine too: "我早上一般干什么？")
    r"我(?:们)?(?:一般|通常|平常)?(?=每|天天|周末|平时|早上|上午|中午|下午|傍晚|晚上)"
    r"(每天|天天|每周|每个?周末|周末|平时|每个?(?:星期|礼拜)[一二三四五六日天])?(早上|上午|中午|下午|傍晚|晚上)?"
    r"(?:都|一般|通常)?(?:干|做|去)(?:什么|啥|哪)"
)
_TIME_WORDS = re.compile(
    r"morning|afternoon|evening|night|weekend|week|day|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"早上|上午|中午|下午|傍晚|晚上|周末|每天|天天|每周|平时|星期.|礼拜.",
    re.I,
)


# which day something is done: "我每个星期几去上课？", "我哪天去钓鱼？"
_ROUTINE_DAY_Q_ZH = re.compile(
    r"我(?:一般|平时|通常)?(?:每个?)?(?:(?:星期|礼拜|周)几|哪天|哪几天)(?:要|都|会)?(?:去)?([\u4e00-\u9fff]{2,6}?)"
    r"(?:来着)?(?:[？?]|$|呢|啊)"
)


def _routine_answer(question: str, facts: dict[str, str], zh: bool) -> str | None:
    if zh and (day_q := _ROUTINE_DAY_Q_ZH.search(question)):
        doing = [v for k, v in facts.items() if k.startswith("routine:") and day_q.group(1) in v]
        return _join([second_person(v) for v in doing], zh) if doing else None
    m = (_ROUTINE_Q_ZH if zh else _ROUTINE_Q_EN).search(question)
    if m is None:
        return None
    thing_asked = ""
    if zh:
        who, asked = "", (m.group(1) or "") + (m.group(2) or "")
    elif m.group(1):
        who, asked = m.group(1).lower(), m.group(2)
    else:  # "which day does my son ring me?": any routine of theirs that does it
        who, asked = m.group(3).lower(), ""
        # and what it is done with, when said: "what day do I play pickleball?"
        thing = re.match(r"\s+(?:to |at |with )?(?:the |my |a )?([a-z]{4,})", question[m.end() :], re.I)
        thing_asked = thing.group(1) if thing and thing.group(1) != "again" else ""
    whose = (
        ""
        if who in ("i", "we", "")
        else relation_key(who[3:])
        if who.startswith("my ")
        else relation_key(who[4:].removesuffix("s"))  # "the boys": a son's
        if who.startswith("the ")
        else who
    )
    routines = [
        v
        for k, v in facts.items()
        if k.startswith("routine:")
        and (
            # the user's own ("User walks…", "用户每天…"), not a relative's ("User's son…", "用户的…")
            (not whose and not re.match(r"User's |用户的", v))
            or (whose and (k.startswith(f"routine:{whose}_") or re.search(rf"\b{re.escape(whose)}\b", v, re.I)))
        )
    ]
    times = {w.lower() for w in _TIME_WORDS.findall(asked)}
    fitting = [v for v in routines if not times or times & {w.lower() for w in _TIME_WORDS.findall(v)}]
    if thing_asked:
        fitting = [v for v in fitting if re.search(rf"\b{re.escape(thing_asked)}", v, re.I)]
    if not fitting:
        return None
    return _join([second_person(v) for v in fitting], zh)


_HOW_MANY_Q_EN = re.compile(r"\bhow many ([a-z]+) (?:do i have|have i got|do we have|have we got)\b", re.I)
_ASKED_DAY_ZH = re.compile(
    r"(明天|后天|(?:这|本|下)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天]|(?:下个?月)?[0-9一二三四五六七八九十]{1,3}[号日])"
)
_ASKED_DAY_EN = re.compile(
    r"\b(today|tomorrow|yesterday|"
    r"(?:on |this |next |last )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
    re.I,
)
# a question about what was to be done ("What did I have to pick up on Wednesday?")
_PAST_EN = re.compile(
    r"\b(?:did|was|were|had)\b|\byesterday\b|\blast (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.I,
)
_PAST_ZH = re.compile(r"昨天|上(?:个)?(?:周|星期|礼拜)|前天")


_DATED = re.compile(r"\d{4}年\d{1,2}月\d{1,2}日|\d{1,2} [A-Z][a-z]+ \d{4}")


def plan_still_ahead(plan: str, today: datetime.date) -> bool:
    """A plan whose day has not gone by: its last date (a weekend's Sunday, a week's Sunday)
    today or later; one stored without a date is kept."""
    days = [d for d in (when.parse_date(m.group(0)) for m in _DATED.finditer(plan)) if d is not None]
    if not days:
        return True
    last = max(days)
    if re.search(r"weekend of|周末", plan):
        last += datetime.timedelta(days=1)
    elif re.search(r"week of|那一周", plan):
        last += datetime.timedelta(days=6)
    return last >= today


def _day_asked(question: str, zh: bool, now: datetime.datetime) -> tuple[str, str] | None:
    """The day a plan question names ("我星期五要干什么", "What am I doing on Friday?"): the words
    and the date as a plan says it, or None."""
    m = (_ASKED_DAY_ZH if zh else _ASKED_DAY_EN).search(question)
    said = re.sub(r"^last ", "", m.group(1), flags=re.I) if m else ""
    day = when.resolve_day(said, now) if m else None
    if m is None or day is None:
        if m and said.lower() == "yesterday":
            day = now.date() - datetime.timedelta(days=1)
        else:
            return None
    asked_of_the_past = (_PAST_ZH if zh else _PAST_EN).search(question)
    if day > now.date() and asked_of_the_past:  # "…did I have on Wednesday?": the last one
        day -= datetime.timedelta(days=7)
    return m.group(1), when.format_date(day, zh=zh, weekday=False)


def _do_i_like(thing: str, facts: dict[str, str]) -> str:
    found = facts.get("taste:" + re.sub(r"\s+", "_", thing))
    if found is None:
        return f"You haven't told me whether you like {thing}."
    return ("Yes, " if " likes " in found else "No, ") + _lower_first(second_person(found))


def _tastes(facts: dict[str, str], zh: bool, only_dislikes: bool = False) -> str:
    """ "You like hiking and coffee. You don't like tea. Your favorite color is blue."; with
    `only_dislikes`, "You don't like tea." alone."""
    likes: list[str] = []
    dislikes: list[str] = []
    other: list[str] = []
    stopped: list[str] = []  # "You gave up the piano." (not a dislike; said after the rest)
    for key, content in facts.items():
        if key.startswith("taste:") and given_up(content):
            stopped.append(second_person(content))
            continue
        taste = taste_from_content(content) if key.startswith("taste:") else None
        if taste is not None:
            thing, positive = taste
            (likes if positive else dislikes).append(thing)
            continue
        if key.startswith(("taste:", "favorite:")):
            other.append(second_person(content))
    if only_dislikes:
        likes, other, stopped = [], [], []
    parts = []
    if zh:
        parts += [f"你喜欢{'、'.join(likes)}。"] if likes else []
        parts += [f"你不喜欢{'、'.join(dislikes)}。"] if dislikes else []
    else:
        parts += [f"You like {and_list(likes)}."] if likes else []
        parts += [f"You don't like {and_list(dislikes)}."] if dislikes else []
    return _join(parts + other + stopped, zh)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != "I " else text


def _join(sentences: list[str], zh: bool) -> str:
    return ("" if zh else " ").join(sentences[:4])


# The clock's own questions only: "what time do you close?" or "周六几点开门？" ask about a
# place or a plan (the knowledge base, the model), never about the clock.
_TIME_Q_EN = re.compile(
    r"\bwhat(?:'s| is) (?:the )?time\b|\bwhat time is it\b|\bwhat time it is\b|"
    r"\bwhat time(?: now)?\s*[?.!]*$|\bwhat day is (?:it|today)\b|"
    r"\bwhat(?:'s| is) (?:the )?date\b|\bwhich day is (?:it|today)\b|"
    r"\bwhat(?:'s| is) today\b",
    re.I,
)
_TIME_Q_ZH = re.compile(
    r"现在几点|^\s*几点(?:了|钟了|钟)?\s*[?？。！!]*\s*$|几点了|现在.{0,2}时间|"
    r"(?:今天|今日)(?:是)?(?:星期|礼拜|周)几|(?:今天|今日)(?:是)?几号|^\s*(?:星期|礼拜|周)几\s*[?？。]*\s*$|"
    r"今天.{0,2}日期|今天(?:是)?什么日子"
)
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


# -- work, home, health, ages and birthdays -------------------------------------------------
_OCCUPATION_Q_EN = re.compile(
    r"\bwhat do i do (?:for (?:a )?(?:living|work|my job)|these days|nowadays)\b|"
    # "what do I do?" alone (not "what do I do about…", "what do I do now?")
    r"^(?:so |and |remind me,? )?what do i do(?: again)?\s*[?.!]*$|"
    # "what do I drive for a living?": the job said by its verb
    r"\bwhat do i (?:drive|fly|fix|make|sell|teach|build|clean|run) for (?:a )?(?:living|work)\b|"
    r"^(?:so |and )?what (?:do|did) i (?:teach|do for work)(?: again)?\s*\??$|"
    r"\bwhere(?:'s| is) my (?:salon|shop|office|practice|business|restaurant|studio|workshop|surgery|clinic|firm|"
    r"bakery|cafe|café|pub|farm|stall|boutique|bookshop|nursery|kiosk|takeaway|deli|hotel|guest ?house)\b|"
    r"\bwhat(?:'s| is|s) my (?:job|occupation|profession|"
    r"line of work|work)\b|\bwhat (?:job|work|kind of work) do i do\b|\bwhere do i work\b|"
    r"\bwhat did i (?:say|tell you) i do\b|\b(?:know|remember) what i do(?: for a living)?\b|"
    r"\bwhat am i by (?:profession|trade)\b|\bwho do i work for\b|"
    r"\b(?:know|remember) my (?:job|occupation|profession|line of work)\b|\bwhat do i work as\b|"
    r"\bwhat did i (?:say|tell you) about my (?:job|work|occupation)\b|"
    r"\bremind me what i do\b(?! for (?:a hobby|fun)| in my spare time)|"
    r"\bwhat did i do (?:for (?:a )?(?:living|work))\b|\bwhat was my (?:job|occupation|profession|line of work)\b|"
    r"\b(?:know|remember) what my (?:job|occupation|profession) is\b",
    re.I,
)
# the job they had: "What did I use to do?", "What was my job before I retired?", "我以前是做什么的"
_FORMER_JOB_Q_EN = re.compile(
    r"\bwhat did i (?:use|used) to do\b|\bwhat did i do (?:for (?:a )?(?:living|work)|before i retired)\b|"
    r"\bwhat was my (?:job|occupation|profession|line of work|work|trade)\b|\bwhat did i work as\b|"
    # (asked: "where did I work before I retired?"; not told: "…forty years before I retired")
    r"\b(?:what|where|which)\b[^.!]*\bbefore i retired\b|"
    r"\bwhat (?:job|work) did i (?:use to )?do\b|\bwhat did i retire (?:as|from)\b|"
    r"\bwhere did i (?:use to )?work (?:before|previously)\b|\bwhere did i used to work\b|"
    r"\bwhat was my (?:old|last|previous|former) (?:job|work)\b",
    re.I,
)
_FORMER_JOB_Q_ZH = re.compile(
    r"我(?:以前|之前|过去|原来|年轻的?时候|退休(?:以)?前)(?:是)?(?:做|干|当)(?:什么|啥|过什么)|"
    r"我(?:以前|之前|过去|原来|退休(?:以)?前)在哪(?:里|儿)?(?:上班|工作)"
)
_OCCUPATION_Q_ZH = re.compile(
    r"我(?:现在)?(?:是)?(?:做|干)(?:什么|啥)(?:工作)?的|我(?:现在)?的(?:工作|职业)是(?:什么|啥)|"
    r"我(?:现在)?(?:是)?(?:做|干)(?:什么|啥)工作|"
    r"我(?:现在)?在哪(?:里|儿)?(?:工作|上班)|我是干嘛的|我的职业|我(?:的)?工作是什么|我从事什么|"
    # "我现在做什么？" (what they do now, after a change of work)
    r"^我现在(?:在)?(?:做|干)(?:什么|啥)[？?]?$"
)
_HOME_Q_EN = re.compile(
    r"\bwhere do (?:i|we) live\b|\bwhere(?:'s| is) my home\b|"
    r"\b(?:what|which) (?:city|town|country|place|village) do i live in\b|"
    r"\b(?:what|which) (?:city|town) (?:am i in|is home|am i living in)\b|"
    r"\bwhere am i (?:living|based|from now)\b|\bwhere did i say i live\b|\bwhere(?:'s| is) home for me\b|"
    r"\b(?:know|remember|remind me|tell me) where i live\b|\bwhere did (?:i|we) move to\b|"
    r"\b(?:what|which) (?:city|town|country|place|village) did (?:i|we) move to\b",
    re.I,
)
# where they come from: "Where am I from?", "Where did I grow up?", "我老家是哪里？"
_HOMETOWN_Q_EN = re.compile(
    r"\bwhere (?:am i|was i|do i come|did i say i(?:'m| am| was)) (?:originally )?from\b|"
    r"\bwhere did i grow up\b|\bwhere was i (?:born|raised|brought up)\b|"
    r"\bwhere did (?:i|we) (?:just |first )?(?:move|come) (?:here )?from\b|\bwhere did (?:i|we) live before\b|"
    r"\b(?:what|where)(?:'s| is) my home ?town\b|\b(?:know|remember) where i(?:'m| am) from\b|"
    r"\b(?:know|remember|tell me) where i (?:grew up|was born|come from|was raised)\b",
    re.I,
)
_HOMETOWN_Q_ZH = re.compile(
    r"我(?:的)?老家(?:是|在)?(?:哪|什么地方)|我是哪(?:里|儿)人|我(?:是)?在哪(?:里|儿)?(?:长大|出生)|"
    r"我(?:是)?从哪(?:里|儿)?(?:搬)?(?:过)?来的?"
)
_PETS_Q_EN = re.compile(
    r"\bwhat pets? (?:have i got|do i have|have we got|do we have)\b|\bdo i (?:still )?have (?:any )?pets\b|"
    rf"\bdo (?:i|we) (?:still )?have (?:an? |the |my |our |any )?(?:{'|'.join(PETS)})s?\b",
    re.I,
)
_PET_KEYS = frozenset(pet.replace(" ", "_") for pet in PETS)
# "What kind of dog have I got?", "What breed is Biscuit?", "我的狗是什么品种？" (`family:<pet>:breed`)
_PET_BREED_Q_EN = re.compile(
    r"\bwhat (?:kind|sort|type|breed) of (dog|cat|puppy|kitten)\b(?! (?:food|toy|bed|lead|collar))|"
    r"\bwhat (?:breed|kind of (?:dog|cat)|sort of (?:dog|cat)) (?:is|was) (?:my |our )?(\w+)\b",
    re.I,
)
_PET_BREED_Q_ZH = re.compile(r"我(?:的|家)?(狗|猫)(?:狗|咪)?(?:是|属于)?(?:什么|啥|哪个|哪种)(?:品种|狗|猫)")
_HOME_Q_ZH = re.compile(
    r"我(?:现在)?(?:住|家)在哪|我(?:现在)?住哪|我(?:现在)?住在什么地方|我(?:现在)?(?:住|家)在(?:什么|哪个)(?:城市|地方)"
)
_ALLERGY_LIST_Q_EN = re.compile(
    r"\bwhat (?:\w+ )?am i allergic to\b|\bwhat (?:are|were) my (?:food )?allergies\b|"
    r"\bwhat did i (?:say|tell you) i(?:'m| am| was) allergic to\b|"
    r"\bdo i have (?:any )?(?:food )?allergies\b|"
    r"\b(?:remember|know|tell me) (?:about )?my (?:food )?allergies\b|\bis there anything i(?:'m| am) allergic to\b|"
    r"\bwhich (?:foods?|things|medicines?|medications?|drugs?|tablets?|pills?) am i allergic to\b|"
    r"\b(?:any )?foods? i can(?:'t| ?not) eat\b|"
    r"\bis there anything i (?:can(?:'t| ?not)|shouldn'?t|should not|mustn'?t|must not) eat\b|"
    r"\bwhat (?:shouldn'?t|should not|mustn'?t|must not) i eat\b|\bwhat should i not eat\b|"
    r"\bwhat (?:do|should) i (?:need to )?avoid(?: eating)?\s*\?*$|"
    r"\bwhat allergies do i have\b|\bam i allergic to anything\b|\bwhat can(?:'t| ?not) i eat\b|"
    r"\b(?:which|what) (?:\w+ )?(?:can(?:'t| ?not)|mustn'?t|shouldn'?t) i (?:have|eat)\b|"
    r"\bwhat (?:food|foods) (?:should|must) i avoid\b|"
    r"\bwhat(?: is|'s| was) it (?:that )?i can(?:'t| ?not) (?:eat|have)\b",
    re.I,
)
_ALLERGY_LIST_Q_ZH = re.compile(
    r"我对(?:什么|啥|哪些|哪种)(?:东西|药|药物)?过敏|我有(?:什么|哪些)过敏|我(?:有|对)没有.{0,4}过敏|我不能吃(?:什么|啥)|"
    r"我(?:有)?过敏吗"
)
_CAN_EAT_Q_EN = re.compile(
    r"(?:^|[,.!]\s*)(?:can|could|may|should|do) i (?:eat|have|drink|try)\s+"
    r"(?!for\b|something|anything|what)(.+?)\s*\?*$|"
    r"\b(?:am i allergic to|should i avoid|do i need to avoid|must i avoid)\s+(.+?)\s*\?*$|"
    r"\bis it (?:ok|okay|safe|fine|alright) (?:for me )?to (?:eat|have|drink)\s+(.+?)\s*\?*$|"
    r"\bis (?:it )?(.+?) (?:ok|okay|safe|fine) for me\b|\bare (.+?) (?:ok|okay|safe|fine) for me\b",
    re.I,
)
_CAN_EAT_Q_ZH = re.compile(
    r"我(?:能|可以|能不能|可不可以)(?:吃|喝)(.+?)(?:吗|么|嘛)?[？?。]?$|"
    r"我(?:是不是对(.+?)过敏|对(.+?)过敏(?:吗|么|[？?]))"
)
_MEDICATION_Q_EN = re.compile(
    r"\b(?:what|which) (?:medication|medications|medicine|medicines|meds|pills?|tablets?|drugs|injections?) "
    r"(?:do|did|should) i "
    r"(?:take|use|need)\b|\bwhat am i taking\b|\bwhat (?:medication|medicine|meds|pills) am i (?:on|taking)\b|"
    r"\bdo i take any (?:medication|medicine|meds|pills|tablets)\b|"
    # "what was the name of that pill I take for my sugar?"
    r"\bname of (?:that|the|my) (?:pills?|tablets?|medicines?|medications?|drugs?|injections?) i (?:take|use|have)\b|"
    # when: "when am I supposed to take it?", "what time's my tablet?"
    r"\bwhen (?:am i supposed to|should i|do i|must i|have i got to|do i have to) take (?:it|them|my\b)|"
    r"\bwhat time (?:do |should |must )?i take\b|"
    r"\bwhat time(?:'s| is| are| do i take) my (?:tablets?|pills?|medicines?|medication|meds|insulin)\b|"
    r"\b(?:which|what) (?:blood thinners?|statins?|painkillers?|water tablets?|inhalers?|antibiotics?|"
    r"tablets?|pills?|medicines?|medications?|meds) am i (?:on|taking)\b|"
    r"\bwhat(?: are|'s| is) my (?:[a-z]+ )?(?:medication|medications|medicine|medicines|meds|pills|tablets)\b|"
    r"\bwhich (?:medication|medications|medicine|medicines|meds|pills|tablets) (?:do|did|should) i\b|"
    r"\bwhat do i take (?:every|each|in the|at)\b|\bwhat (?:do|did) i take (?:for|when)\b|^what do i take\??$|"
    r"\bwhat (?:\w+ )?(?:inhaler|tablets?|pills?|spray|injection|medicine|medication) (?:do|should) i "
    r"(?:use|take|have)\b|"
    r"\bwhat(?:'s| is|s) my (?:[\w ]+ )?(?:tablet|pill|inhaler|spray|medicine|medication)s?(?: called)?\b",
    re.I,
)
_MEDICATION_Q_ZH = re.compile(
    r"我(?:每天|平时|现在)?(?:早上|上午|中午|下午|晚上|睡前|饭前|饭后)?(?:要|在|都|需要|得)?(?:吃|服用|打|用)(?:的)?(?:是)?"
    r"(?:什么|哪些|啥)(?:药|针)|我的药是什么|"
    r"我吃的(?:是)?什么[\u4e00-\u9fff]{0,3}药|"
    # "我早上吃的那个药叫啥来着？"
    r"(?:吃|服)的(?:那个|这个|那种)?药叫(?:什么|啥)|"
    # when: "我早上几点吃药？", "我什么时候吃药？"
    r"我(?:每天)?(?:早上|上午|中午|下午|晚上|睡前)?(?:几点|什么时候|啥时候)(?:要|得)?(?:吃|服)(?:药|[\u4e00-\u9fff]{1,4}药)"
)
_HEALTH_Q_EN = re.compile(
    r"\bwhat (?:health )?(?:conditions?|problems?|issues?|illness(?:es)?) (?:do i have|have i got)\b|"
    r"\bwhat(?:'s| is) wrong with me\b|\bwhat(?:'s| is) my (?:health |medical )?condition\b|"
    r"\bwhat(?:'s| is) (?:wrong|the matter) with my (?:legs?|knees?|back|hips?|feet|foot|arms?|shoulders?)\b|"
    r"\bwhat (?:medical|health) (?:conditions|problems)\b|\bdo i have any (?:health )?(?:conditions|"
    r"problems|issues)\b|\bwhat do you know about my health\b|\bmy health conditions\b|"
    r"\bhave i (?:got|any) (?:any )?(?:health |medical )?(?:conditions|problems|issues)\b",
    re.I,
)
_HEALTH_Q_ZH = re.compile(
    r"我有(?:什么|哪些)(?:病|健康问题|慢性病)|我的(?:健康|身体)(?:状况|情况)|"
    r"我(?:的)?(?:血压|血糖|身体|健康)(?:怎么样|如何|高吗|正常吗|好吗)|"
    # "医生让我注意什么？", "医生叫我少吃什么？"
    r"医生(?:让|叫|要|说)我(?:注意|少吃|别吃|不能吃|忌口|忌)(?:些)?(?:什么|啥)"
)
# who a question is about: "my daughter" (a family word), "Lena" (a name), "she"
_WHO_EN = (
    r"(my (" + RELATION_WORDS + r")(?!\w)|(?-i:[A-Z][a-z]+)|she|he|her|him|"
    # several of a kind: "how old are the twins?"
    r"(?:the|my|our) (?:twins|boys|girls|kids|children|grandkids|grandchildren)(?:')?)"
)
_RELATIVE_HOME_Q_EN = re.compile(rf"\bwhere (?:does|did) {_WHO_EN} live\b", re.I)
# whom a relative is to marry: "who's Tyler marrying?", "who is my son engaged to?"
_RELATIVE_ENGAGED_Q_EN = re.compile(
    rf"\bwho(?:'s| is) {_WHO_EN} (?:marrying|engaged to|getting married to|going to marry)\b", re.I
)
_RELATIVE_JOB_Q_EN = re.compile(
    rf"\bwhat (?:does|did) {_WHO_EN} do(?: for (?:a )?(?:living|work))?\b(?! (?:on|every|at|in the|each)\b)|"
    rf"\bwhat(?:'s| is) {_WHO_EN}(?:'s)? job\b|"
    rf"\bwhere (?:does|did) {_WHO_EN} work\b|"
    # a student: "What is Liam studying?", "where does my granddaughter study?"
    rf"\bwhat(?: is|'s) {_WHO_EN} (?:studying|reading)\b|\bwhat (?:does|did) {_WHO_EN} study\b|"
    rf"\bwhere (?:does|did|is) {_WHO_EN} (?:study|studying|at uni|at university|at college|go to "
    r"(?:college|uni|university|school))\b",
    re.I,
)

_AGE_Q_EN = re.compile(
    rf"\bhow old(?: is|'s| will| was| are) {_WHO_EN}(?:'s)?( be| turn)?\b|"
    rf"\bwhat age (?:is|will) {_WHO_EN}( be| turn)?\b|"
    rf"\bhow old is {_WHO_EN} going to (be|turn)\b|\bwhat(?:'s| is) {_WHO_EN}(?:'s)? age\b|"
    rf"\bhow old (?:does|did) {_WHO_EN} turn\b|\bhow old is {_WHO_EN} turning\b",
    re.I,
)
_BIRTHDAY_Q_EN = re.compile(
    rf"\bwhen(?:'s| is| was) {_WHO_EN}(?:'s)? (?:birthday|born)\b|\bwhen(?:'s| is) (?:(his|her) )birthday\b|"
    rf"\bwhen does {_WHO_EN} turn\b|\bwhat day is {_WHO_EN}(?:'s)? birthday\b",
    re.I,
)
# (a name is no "我的…" or "你…": "我的爱好是什么？" asks about the person themself)
_ZH_WHO = r"(?:我(?:的)?(" + ZH_RELATIONS + r")|(她|他)|(?![我你])([\u4e00-\u9fff]{2,3}?))"
# "我老婆是做什么的？", "李梅在哪里上班？", "我儿子住在哪里？": a relative's job and home
_RELATIVE_JOB_Q_ZH = re.compile(
    _ZH_WHO + r"(?:(?:现在)?(?:是)?(?:做|干)(?:什么|啥)(?:工作)?(?:的)?|(?:的)?(?:工作|职业)是(?:什么|啥)|"
    r"(?:现在)?在哪(?:里|儿|个城市|个地方|个学校|家公司)?(?:工作|上班|读书|上学|读大学|上大学|念书)|"
    r"学(?:的是)?(?:什么|啥)(?:专业)?|教(?:什么|哪个|哪种)(?:学校)?(?:的)?)"
)
_RELATIVE_HOME_Q_ZH = re.compile(_ZH_WHO + r"(?:现在)?(?:住|家)(?:在)?(?:哪|什么地方)")
# when someone comes, goes, marries…: "我儿子什么时候回来？" (see _someones_plan_zh)
_SOMEONES_PLAN_Q_ZH = re.compile(
    _ZH_WHO
    + r"(?:什么时候|啥时候|哪天|几号|哪一天|几月份?)|"
    # "我儿子周六干什么？"
    + _ZH_WHO
    + r"(?:这|下)?(?:个)?(?:(?:周|星期|礼拜)[一二三四五六日天]|周末|明天|后天)(?:要)?(?:干|做|去)(?:什么|啥|哪)"
)
# what a relative likes: "What does my wife like doing?", "我老伴喜欢干什么？"
_RELATIVE_LIKES_Q_EN = re.compile(
    rf"\bwhat (?:does|did) {_WHO_EN} (?:like|love|enjoy)(?: doing| to do)?\s*\??$|"
    rf"\bwhat(?:'s| is) {_WHO_EN} (?:into|mad about)\b|\bwhat (?:are|is) {_WHO_EN}(?:'s)? hobb(?:y|ies)\b",
    re.I,
)
# which school year: "What year is my son in?", "我儿子上几年级？"
_RELATIVE_SCHOOL_Q_EN = re.compile(
    rf"\bwhat (?:year|grade|class)(?: is|'s) {_WHO_EN} in\b|\bwhat (?:year|grade)(?: is|'s) {_WHO_EN}\b|"
    rf"\bwhat school (?:year )?(?:is|'s) {_WHO_EN} in\b",
    re.I,
)
_RELATIVE_SCHOOL_Q_ZH = re.compile(
    _ZH_WHO + r"(?:今年|现在)?(?:在)?(?:上|读|念)(?:几年级|初几|高几|哪个年级|什么年级|大几|小学还是初中|初中还是高中)"
)
_RELATIVE_LIKES_Q_ZH = re.compile(
    _ZH_WHO + r"(?:平时|最|特别)?(?:喜欢|爱)(?:干|做|玩|吃|看)?(?:什么|啥)|" + _ZH_WHO + r"(?:的)?爱好是(?:什么|啥)"
)
_AGE_Q_ZH = re.compile(
    _ZH_WHO
    + r"(?:今年|今天|现在|到时候|那天|(?:这|下)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天]?)?(?:就|要)?(?:满)?"
    + r"(?:几岁|多大|多少岁)(?:了)?"
)
_BIRTHDAY_Q_ZH = re.compile(
    _ZH_WHO
    + r"(?:的)?(?:生日是?(?:什么时候|哪天|哪一天|几月几号|几号)|什么时候(?:过)?生日|(?:哪天|几号|几月几号)(?:过)?生日|"
    r"什么时候满)"
)
_ZH_RELATION_NAMES = {
    "daughter": "女儿",
    "son": "儿子",
    "mother": "妈妈",
    "father": "爸爸",
    "wife": "妻子",
    "husband": "丈夫",
    "child": "孩子",
    "friend": "朋友",
    "girlfriend": "女朋友",
    "boyfriend": "男朋友",
    "dog": "狗",
    "cat": "猫",
    "grandson": "孙子",
    "granddaughter": "孙女",
    "partner": "老伴",
    "roommate": "室友",
    "brother": "兄弟",
    "sister": "姐妹",
    "daughter-in-law": "儿媳",
    "son-in-law": "女婿",
}
_EN_RELATION_NAMES = {"mother": "mom", "father": "dad", "child": "child"}


def _relation_word(relation: str, facts: dict[str, str]) -> str:
    """The word the user says for the relative ("mum" of "User's mum's birthday is 16 March."),
    else the usual one ("mom" for the mother)."""
    for key, content in facts.items():
        if key == f"family:{relation}" or key.startswith(f"family:{relation}:"):
            said = re.match(r"User's ([a-z]+)\b", content)
            if said and relation_key(said.group(1)) == relation:
                return said.group(1)
    return _EN_RELATION_NAMES.get(relation, relation.replace("_", " "))


_OWN_AGE_Q_EN = re.compile(
    r"\bhow old am i\b|\bwhat(?:'s| is) my age\b|\b(?:do you )?(?:know|remember) (?:how old i am|my age)\b|"
    r"\bhow old did i (?:say|tell you) i (?:am|was)\b",
    re.I,
)
_OWN_AGE_Q_ZH = re.compile(
    r"^(?:你知道)?我(?:今年|现在)?(?:几岁|多大|多少岁)(?:了)?|我(?:的)?年龄是?多少|你知道我(?:今年)?多大"
)


# "When's my birthday?", "When was I born?", "我的生日是哪天？"; "How old will I be?", "我下次生日几岁？"
_OWN_BIRTHDAY_Q_EN = re.compile(
    r"\bwhen(?:'s| is| was) my birthday\b|\bwhat(?:'s| is) my (?:birthday|date of birth)\b|\bwhen was i born\b|"
    r"\bwhat (?:day|date) is my birthday\b|\b(?:know|remember) (?:when )?my birthday\b|"
    r"\bwhat did i (?:say|tell you) my birthday\b",
    re.I,
)
_OWN_BIRTHDAY_Q_ZH = re.compile(
    r"我(?:的)?生日(?:是)?(?:哪天|哪一天|几号|什么时候|几月几[号日])|我(?:是)?(?:哪天|哪一天|哪年|什么时候)(?:出生|生)的?|"
    r"我什么时候过生日|你(?:知道|记得)我(?:的)?生日"
)
_OWN_NEXT_AGE_Q_EN = re.compile(
    r"\bhow old (?:will i be|am i (?:going to be|turning)|do i turn)\b|\bwhat age (?:will i be|am i turning)\b", re.I
)
_OWN_NEXT_AGE_Q_ZH = re.compile(
    r"我(?:下次|下个|今年|明年)?(?:过)?生日(?:就|的时候)?(?:满|是)?(?:几岁|多大|多少岁)|我(?:快|要)满几岁"
)


def _own_birthday(facts: dict[str, str], zh: bool, now: datetime.datetime, next_age: bool) -> str:
    """The user's own birthday said back, or the age they will be on the next one (from the
    birthday and an age or a year of birth they told)."""
    dates = _own_dates(facts)
    if dates.month_day is None:
        return "你还没告诉我你的生日是哪天。" if zh else "You haven't told me when your birthday is."
    if not next_age:
        return _said_back([facts["birthday"]], zh)
    coming = when.next_anniversary(*dates.month_day, now.date())
    day = when.format_date(coming, zh=zh, weekday=False)
    if dates.born is None:
        told = "你还没告诉我你多大，" if zh else "You haven't told me how old you are, "
        return f"{told}你的下一个生日是{day}。" if zh else f"{told}but your next birthday is {day}."
    age = when.years_between(dates.born, coming)
    words = (when.zh_words if zh else when.en_words)(age)
    return f"{day}你就满{words}岁了。" if zh else f"You'll be {words} on {day}."


def _own_age(facts: dict[str, str], zh: bool, now: datetime.datetime) -> str:
    """ "How old am I?": the age they told, with the day they told it when that was over a year ago."""
    told = _told_age(facts.get("age", ""))
    if told is None:
        return _UNKNOWN["own_age"]["zh" if zh else "en"]
    age = (when.zh_words if zh else when.en_words)(told[0])  # said as words, like a relative's
    said_on = told[1]
    if said_on is not None and (now.date() - said_on).days > 365:
        day = when.format_date(said_on, zh=zh, weekday=False)
        return f"你在{day}告诉我你{age}岁。" if zh else f"You told me you were {age} on {day}."
    return f"你告诉过我你{age}岁。" if zh else f"You told me you're {age}."


# "What is my son allergic to?", "What's Oliver allergic to?", "Does my wife have any allergies?",
# "我儿子对什么过敏？": a household member's allergies, from their `health:*:<relation>` facts
_RELATIVE_ALLERGY_Q_EN = re.compile(
    rf"\bwhat(?: is|'s| are) {_WHO_EN} allergic to\b|\b(?:is|are) {_WHO_EN} allergic to anything\b|"
    rf"\bdoes {_WHO_EN} have (?:any )?(?:food )?allergies\b|\bwhat allergies does {_WHO_EN} have\b|"
    rf"\bwhat (?:can't|cannot|can not) {_WHO_EN} (?:eat|have|drink)\b|\bwhat(?: is|'s| are) {_WHO_EN} intolerant to\b|"
    # their health as a whole: "What's wrong with my husband?"
    rf"\bwhat(?:'s| is) (?:wrong|the matter) with {_WHO_EN}|"
    rf"\bwhat (?:operation|surgery|op) (?:did|has|does) {_WHO_EN}(?: had| have)?\b|"
    rf"\bwhat (?:did|has) {_WHO_EN} (?:have|had) done\b|\bwhat(?: has|'s)? happened to {_WHO_EN}|"
    rf"\bwhat (?:illness|illnesses|condition|conditions|health problems?) (?:does|has) {_WHO_EN}(?: got| have)?\b",
    re.I,
)
_RELATIVE_ALLERGY_Q_ZH = re.compile(
    _ZH_WHO + r"(?:对(?:什么|啥|哪些|哪种)(?:东西|药|药物)?过敏|有(?:什么|哪些)过敏|有没有.{0,4}过敏|不能吃(?:什么|啥)|"
    r"(?:有|得了|得的是)(?:什么|啥)病|(?:身体|健康)(?:怎么样|有什么问题))"
)


def _relative_allergies(q: str, facts: dict[str, str], zh: bool) -> str | None:
    """A household member's allergies and foods they cannot eat, said back; that none were told
    when the question names a member and there are none (never the model's guess)."""
    found = (_RELATIVE_ALLERGY_Q_ZH if zh else _RELATIVE_ALLERGY_Q_EN).search(q)
    if found is None:
        return None
    said = [g for g in found.groups() if g]
    relation = _member(found, facts, zh, among=[household_member(k) for k in facts if household_member(k)])
    if relation is None:
        return None  # a name or "he" with no one known behind it: not this question
    contents = [
        v
        for k, v in facts.items()
        if k.startswith(("health:allergy:", "health:avoid:", "health:condition:", "health:event:"))
        and household_member(k) == relation
    ]
    if contents:
        return _said_back(contents, zh)
    health_asked = re.search(
        r"wrong|matter|illness|condition|health|operation|surgery|\bop\b|happened|病|身体|健康", found.group(0), re.I
    )
    if zh:
        who = found.group(1) or found.group(3) or found.group(2)
        return f"你还没告诉我你{who}的健康情况。" if health_asked else f"你还没告诉我你{who}对什么过敏。"
    whose = f"your {said[0][3:]}" if said and said[0].lower().startswith("my ") else said[0] if said else "them"
    if health_asked:
        return f"You haven't told me about {whose}'s health." if whose != "them" else "You haven't told me."
    return f"You haven't told me about any allergies {whose} has."


def _relative_life(q: str, facts: dict[str, str], zh: bool) -> str | None:
    """Where a relative lives, what they do and what they like ("Where does my daughter live?",
    "What does Fiona do?", "我老伴喜欢干什么？"), said back; that it was not told when the question
    names someone known."""
    asked = (
        # (what they like first: "我老伴喜欢干什么" is not "…干什么" of a job)
        (
            (_RELATIVE_LIKES_Q_ZH, "likes", "{}喜欢什么"),
            (_RELATIVE_SCHOOL_Q_ZH, "school", "{}上几年级"),
            (_RELATIVE_HOME_Q_ZH, "home", "{}住在哪里"),
            (_RELATIVE_JOB_Q_ZH, "job", "{}做什么工作"),
        )
        if zh
        else (
            (_RELATIVE_ENGAGED_Q_EN, "engaged", "whom {} is to marry"),
            (_RELATIVE_LIKES_Q_EN, "likes", "what {} likes"),
            (_RELATIVE_SCHOOL_Q_EN, "school", "what year {} is in"),
            (_RELATIVE_HOME_Q_EN, "home", "where {} lives"),
            (_RELATIVE_JOB_Q_EN, "job", "what {} does"),
        )
    )
    for pattern, part, unknown in asked:
        found = pattern.search(q)
        if found is None:
            continue
        among = [k.split(":")[1] for k in facts if k.startswith("family:") and k.endswith(f":{part}")]
        relation = _member(found, facts, zh, among=among)
        if relation is None:
            return None
        said = facts.get(f"family:{relation}:{part}")
        if said:
            return _said_back([said], zh)
        who = next(g for g in found.groups() if g)
        if zh:
            return "你还没告诉我" + unknown.format(("你" + who) if found.group(1) else who) + "。"
        whom = f"your {who[3:]}" if who.lower().startswith("my ") else who
        return "You haven't told me " + unknown.format(whom) + "."
    return None


def _pet_breed(found: re.Match[str], facts: dict[str, str], zh: bool) -> str:
    """The breed of the pet asked about, by its kind or its name; that it was not told (never the
    model's guess: it gave one person a cat named Luna)."""
    said = next(g for g in found.groups() if g).lower()
    if zh:
        pet = relation_key(said)  # 狗 -> dog
    else:
        named = [
            k.split(":")[1]
            for k, v in facts.items()
            if k.count(":") == 1 and k.startswith("family:") and re.search(rf"\bcalled {re.escape(said)}\b", v, re.I)
        ]
        pet = YOUNG_PETS.get(said, named[0] if named else said)
    breed = facts.get(f"family:{pet}:breed")
    if breed:
        return _said_back([breed], zh)
    kind = {"dog": "狗", "cat": "猫"}.get(pet, pet) if zh else pet
    if f"family:{pet}" in facts:
        return f"你还没告诉我你的{kind}是什么品种。" if zh else f"You haven't told me what kind of {kind} it is."
    if not zh and pet not in ("dog", "cat"):  # a name no pet has: "What breed is Biscuit?"
        return f"You haven't told me about {said.capitalize()}."
    return f"你还没告诉我你养了{kind}。" if zh else f"You haven't told me about a {kind}."


def _about_oneself(q: str, facts: dict[str, str], zh: bool, now: datetime.datetime) -> str | None:
    lang = "zh" if zh else "en"
    relative = _relative_allergies(q, facts, zh) or _relative_life(q, facts, zh)
    if relative is not None:
        return relative
    if (_OWN_NEXT_AGE_Q_ZH if zh else _OWN_NEXT_AGE_Q_EN).search(q):
        return _own_birthday(facts, zh, now, next_age=True)
    if (_OWN_BIRTHDAY_Q_ZH if zh else _OWN_BIRTHDAY_Q_EN).search(q):
        return _own_birthday(facts, zh, now, next_age=False)
    if (_OWN_AGE_Q_ZH if zh else _OWN_AGE_Q_EN).search(q):
        return _own_age(facts, zh, now)
    former = facts.get("occupation:former")
    past = (_FORMER_JOB_Q_ZH if zh else _FORMER_JOB_Q_EN).search(q)
    current = (_OCCUPATION_Q_ZH if zh else _OCCUPATION_Q_EN).search(q)
    if former and past:
        return _said_back([former], zh)
    if past and not current and "occupation" in facts:
        now_said = _said_back([facts["occupation"]], zh)
        return f"你还没告诉我你以前做什么。{now_said}" if zh else f"You haven't told me what you did before. {now_said}"
    if past or current:
        said = [facts[k] for k in ("occupation", "workplace") if k in facts]
        retired = "occupation" not in facts or re.search(r"\bretired\b|退休", facts["occupation"])
        if former and retired:  # "You are retired. You used to be a postman."
            said.append(former)
        return _said_back(said, zh) or _UNKNOWN["occupation"][lang]
    breed_asked = (_PET_BREED_Q_ZH if zh else _PET_BREED_Q_EN).search(q)
    if breed_asked:
        return _pet_breed(breed_asked, facts, zh)
    if not zh and _PETS_Q_EN.search(q):
        pets = [
            second_person(_as_of_now(k, v, facts))
            for k, v in facts.items()
            if k.split(":")[-1] in _PET_KEYS and k.count(":") == 1
        ]
        return _join(pets, zh) if pets else "You haven't told me about any pets."
    if (_HOMETOWN_Q_ZH if zh else _HOMETOWN_Q_EN).search(q):
        if "hometown" in facts:
            return _said_back([facts["hometown"]], zh)
        return "你还没告诉我你老家是哪里。" if zh else "You haven't told me where you're from."
    if (_HOME_Q_ZH if zh else _HOME_Q_EN).search(q):
        if "home" in facts:
            return _said_back([facts["home"]], zh)
        # no home told, but a job in a place ("在上海做设计师", "I work in a warehouse in Leeds"):
        # said as what it is, never as where they live
        near = [
            second_person(facts[k])
            for k in ("workplace", "occupation")
            if k in facts
            and (
                re.search(r"在[\u4e00-\u9fff]{2,4}(?:做|当|上班|工作)", facts[k])
                if zh
                else re.search(r"\b(?:in|near) (?-i:[A-Z])[a-z]+", facts[k])
            )
        ]
        if near:
            return ("你还没告诉我你住在哪里，不过你说过：" if zh else "You haven't told me where you live, but ") + (
                near[0] if zh else _lower_first(near[0])
            )
        return _UNKNOWN["home"][lang]
    if (_MEDICATION_Q_ZH if zh else _MEDICATION_Q_EN).search(q):
        said = [v for k, v in facts.items() if k.startswith("health:medication:")]
        return _said_back(said, zh) or _UNKNOWN["medication"][lang]
    if (_ALLERGY_LIST_Q_ZH if zh else _ALLERGY_LIST_Q_EN).search(q):
        # (none told: what they do not like is still worth saying: "我不吃香菜" then "我不能吃什么？")
        disliked = _tastes(facts, zh, only_dislikes=True)
        return _allergies(facts, zh) or _join([_UNKNOWN["allergy"][lang], *([disliked] if disliked else [])], zh)
    if (_HEALTH_Q_ZH if zh else _HEALTH_Q_EN).search(q):
        said = [  # the user's own (a relative's are theirs: "what's wrong with my husband?")
            v
            for k, v in facts.items()
            if is_safety_key(k) and not k.startswith(("health:allergy:", "health:avoid:")) and not household_member(k)
        ]
        parts = [p for p in (_allergies(facts, zh), _said_back(said, zh)) if p]
        return ("" if zh else " ").join(parts) or _UNKNOWN["health"][lang]
    m = (_CAN_EAT_Q_ZH if zh else _CAN_EAT_Q_EN).search(q)
    if m:
        # "am I allergic to…" / "我对…过敏吗", not "can I eat…"
        allergy_q = bool(m.group(2) or (zh and m.group(3)))
        thing = next(g for g in m.groups() if g)
        if not zh and re.fullmatch(r"(?:some|it|one|any|that|them|those|a bit|a little|some of it)\W*", thing.strip()):
            thing = q  # "there's prawn cocktail at the do, should I have some?": the food said before
        reply = _can_eat(thing, facts, zh, allergy_q)
        if reply is not None:
            return reply
    age_q = (_AGE_Q_ZH if zh else _AGE_Q_EN).search(q)
    birthday_q = None if age_q else (_BIRTHDAY_Q_ZH if zh else _BIRTHDAY_Q_EN).search(q)
    if age_q or birthday_q:
        found = age_q or birthday_q
        assert found is not None
        member = _member(found, facts, zh)
        if member is None:
            return None
        # one of several of a kind asked by name, whose dates name another ("how old is Max?"
        # with only "User's grandchild Lily is 9" told): not Lily's age
        asked = next((g.strip() for g in found.groups() if g and re.fullmatch(r"[A-Z][a-z]+", g.strip())), "")
        own_age = facts.get(f"family:{member}:age_{asked.lower()}") if asked else None
        if own_age:  # one of several, whose age was kept under their name
            facts = {**facts, f"family:{member}:age": own_age}
        each = [v for k, v in facts.items() if k.startswith(f"family:{member}:age_")]
        only_each = bool(each) and f"family:{member}:age" not in facts
        dated = " ".join(facts.get(f"family:{member}:{k}", "") for k in ("age", "birthday"))
        another = re.match(r"User's [a-z ]+ [A-Z][a-z]+", dated) and not re.search(rf"\b{asked}\b", dated)
        if asked and (only_each or another):  # another of them was told of, not this one
            return f"You haven't told me how old {asked} is."
        if only_each:  # "how old are my grandchildren?"
            return _said_back([_without_as_of(v) for v in each], zh)
        will = bool(age_q and not zh and re.search(r"\b(?:will|going to|does)\b.*\b(?:be|turn)|\bturning\b", q, re.I))
        will = will or bool(zh and re.search(r"到时候|那天|下周|满|(?:周|星期|礼拜)[一二三四五六日天]", q))
        several = re.match(r"User's (.+?) are (\d+) \(as of (.+?)\)", facts.get(f"family:{member}:age", ""))
        told = when.parse_date(several.group(3)) if several else None
        if several and not birthday_q and not will and told is not None and (now.date() - told).days < 365:
            # one age of several ("twin boys Jayden and Jordan are 7"), told this year
            return f"Your {several.group(1)} are {when.en_words(int(several.group(2)))}."
        return _age_answer(member, facts, zh, now, birthday=birthday_q is not None, will=will)
    return None


def _as_of_now(key: str, content: str, facts: dict[str, str]) -> str:
    """A relative's or pet's name said of the past once the user told of their death ("User's
    late cat was called Marmalade.", "用户的狗叫豆豆，已经去世了。")."""
    if f"{key}:passed" not in facts:
        return content
    if " is called " in content:
        return content.replace("User's ", "User's late ", 1).replace(" is called ", " was called ", 1)
    if "叫" in content and "去世" not in content:
        return content.rstrip("。") + "，已经去世了。"
    return content


# "What do you know about me?", "说说你对我的了解": a few of the facts, the person first (the tiny
# model said "You've got a pet named Rhys" of a son)
_ABOUT_ME_Q_EN = re.compile(
    r"\bwhat (?:do|did) you (?:know|remember) about me\b|"
    r"\btell me (?:what you (?:know|remember) )?about (?:me|myself)\b|\bwhat have i told you about myself\b",
    re.I,
)
_ABOUT_ME_Q_ZH = re.compile(
    r"(?:说说|讲讲|说一说|讲一讲)?你对我(?:有)?(?:的)?(?:什么|多少|哪些)?了解|你(?:都)?(?:知道|记得)(?:关于)?我(?:的)?(?:哪些|什么)(?:事)?"
)


def _about_me(facts: dict[str, str], zh: bool) -> str:
    """Four sentences at most (`_join`): their name, their job (or the one they had), where they
    live (or are from), then one of the family they named or what keeps them safe."""
    said = [
        facts.get(k) or (facts.get(alt) if alt else None)
        for k, alt in (("name", ""), ("occupation", "occupation:former"), ("home", "hometown"))
    ]
    family = [v for k, v in facts.items() if k.startswith("family:") and k.count(":") == 1]
    safety = [v for k, v in facts.items() if is_safety_key(k) and not household_member(k)]
    said += family[:1] + safety[:1] + family[1:2]
    return _said_back([_without_as_of(v) for v in said if v], zh)


def _without_as_of(content: str) -> str:
    """A stored fact without the day an age was told ("User's son is 7 (as of 4 December 2026)."),
    for saying it back at once."""
    return re.sub(r" \(as of [^)]*\)|（[^）]*时）", "", content)


def _said_back(contents: list[str], zh: bool) -> str:
    """Stored facts said back to the user, in the question's language where they were said in
    it; a fact said in the other language is quoted as it was ("You told me in Chinese: …")."""
    out: list[str] = []
    for content in contents:
        said = second_person(content)
        if has_cjk(content) != zh:
            said = ("你用英文告诉过我：" if zh else "You told me in Chinese: ") + said
        out.append(said)
    return _join(out, zh)


def _allergies(facts: dict[str, str], zh: bool) -> str:
    """ "You're allergic to peanuts and shellfish. You cannot eat gluten." in the question's
    language (the table names an allergen in both)."""
    allergic: list[str] = []
    avoid: list[str] = []
    for key, content in facts.items():
        parts = key.split(":")
        if len(parts) != 3 or parts[0] != "health" or parts[1] not in ("allergy", "avoid"):
            continue
        known = health.term(health.ALLERGENS, parts[2])
        # the word they said, when said in the question's language
        said = re.match(r"^.*?(?:对|allergic to |cannot \w+ |不能.|不[吃喝])(.+)$", content)
        own = said.group(1).rstrip("。.过敏") if said and has_cjk(content) == zh else None
        if own and zh:  # (虾, not the table's 贝类)
            name = own
        elif known is not None:
            name = known.name(zh)
        elif own is not None:
            name = own
        else:
            name = parts[2].replace("_", " ")
        (allergic if parts[1] == "allergy" else avoid).append(name)
    for key in facts:  # lactose intolerance: milk; coeliac disease: gluten
        parts = key.split(":")
        condition = health.term(health.CONDITIONS, parts[2]) if len(parts) == 3 and parts[1] == "condition" else None
        if condition is not None and condition.rules_out:
            ruled = health.term(health.ALLERGENS, condition.rules_out)
            name = ruled.name(zh) if ruled is not None else condition.rules_out
            if name not in avoid and name not in allergic:
                avoid.append(name)
    out = []
    if zh:
        out += [f"你对{'、'.join(allergic)}过敏。"] if allergic else []
        out += [f"你不能吃{'、'.join(avoid)}。"] if avoid else []
    else:
        out += [f"You're allergic to {and_list(allergic)}."] if allergic else []
        out += (
            [f"You can't {'have' if any(map(health.is_drink, avoid)) else 'eat'} {and_list(avoid)}."] if avoid else []
        )
    return ("" if zh else " ").join(out)


_ZH_MEASURE = re.compile(r"^(?:一|两|几)?(?:块|个|片|碗|杯|根|点儿?|些|口|颗|粒|盒|包|瓶|勺)")


def _can_eat(thing: str, facts: dict[str, str], zh: bool, allergy_q: bool = False) -> str | None:
    """ "Can I eat peanut butter?" against the user's allergies: a plain no with the reason;
    "Am I allergic to cats?": yes, or that they have not told of it (also when nothing about
    their health is known: the model said "It's true that some people can be allergic to
    shellfish" to one whose friend was). None when the food is none they must avoid, or
    nothing about their health is known (the model answers then)."""
    keys = health.avoided_keys(list(facts))
    thing = thing.strip(" ?？。.!")
    if zh:  # the food, not its measure ("我可以吃块蛋糕吗？": 蛋糕)
        thing = _ZH_MEASURE.sub("", thing) or thing
    hit = health.mentioned_allergen(thing, keys) if keys else None
    if hit is None and allergy_q:
        return f"你没告诉过我你对{thing}过敏。" if zh else f"You haven't told me of any allergy to {thing}."
    if hit is None:
        # (what a condition keeps small: "Should I have a slice of chocolate cake?" with diabetes;
        # the model said "You can always just eat the cake")
        small = food_ideas.kept_small(thing, facts)
        if small is None:
            return None  # nothing the user must avoid: the model answers (and the guard still listens)
        condition, tag, thing = small
        known = health.term(health.CONDITIONS, condition)
        name = known.name(zh) if known is not None else condition.replace("_", " ")
        high_in = food_ideas.high_in_said(tag, zh)
        if zh:
            return f"少吃点吧：你有{name}，{thing}一般{high_in}。"
        return f"Only a little, if any: you have {name}, and there's usually {high_in} {thing}."
    food, key = hit
    known = health.term(health.ALLERGENS, key)
    name = known.name(zh) if known is not None else key.replace("_", " ")
    allergic = f"health:allergy:{key}" in facts
    if zh:
        why = f"你对{name}过敏" if allergic else f"你不能吃{name}"
        contains = "" if food in (known.zh if known else ()) or food == name else f"，{food}里有{name}"
        return f"{'是的' if allergy_q else '不行'}，{why}{contains}。"
    # (as they said it: "User cannot have dairy." → "you can't have dairy", not "can't eat milk")
    own = re.match(r"User cannot (\w+) (.+?)\.$", facts.get(f"health:avoid:{key}", ""))
    why = (
        f"you're allergic to {name}"
        if allergic
        else f"you can't {own.group(1)} {own.group(2)}"
        if own
        else f"you can't {'drink' if health.is_drink(name) else 'eat'} {name}"
    )
    contains = "" if known is None or food in known.en else f", and {food} usually contains {name}"
    return f"{'Yes' if allergy_q else 'No'}, {why}{contains}."


def _member(found: re.Match, facts: dict[str, str], zh: bool, among: list[str] | None = None) -> str | None:
    """The relation key of the family member a question names: "my daughter", "Lena" (a name
    the user gave), "she" (the last one of that gender `among` the relations the question is
    about: by default those with an age or birthday)."""
    among = _dated_members(facts) if among is None else among
    groups = [g for g in found.groups() if g]
    if not groups:
        return None
    who = groups[0].strip()
    if zh:
        relation, pronoun, name = found.group(1), found.group(2), found.group(3)
        if relation:
            return relation_key(relation)
        if pronoun:
            return _by_pronoun(among, female=pronoun == "她")
        return _by_name(name or "", facts)
    low = who.lower()
    low = re.sub(r"^(?:my|our) (?=(?:twins|boys|girls|kids|children|grandkids|grandchildren)'?$)", "the ", low)
    low = low.rstrip("'")
    if low.startswith("my "):
        return relation_key(low[3:])
    if low.startswith("the "):  # "the twins", "the boys": whose family fact says them
        plural = {"boys": "son", "girls": "daughter", "kids": "child", "children": "child"}.get(low[4:])
        said = re.compile(r"\btwin" if low[4:] == "twins" else rf"\b{low[4:]}\b", re.I)
        named = [k.split(":")[1] for k, v in facts.items() if k.startswith("family:") and said.search(v)]
        return named[0] if named else plural
    if low in ("she", "her", "he", "him", "his"):
        return _by_pronoun(among, female=low in ("she", "her"))
    return _by_name(who, facts)


def _dated_members(facts: dict[str, str]) -> list[str]:
    """Relations with an age or a birthday, oldest statement first."""
    out = [k.split(":")[1] for k in facts if k.startswith("family:") and k.endswith((":age", ":birthday"))]
    return list(dict.fromkeys(out))


def _by_pronoun(members: list[str], female: bool) -> str | None:
    fitting = FEMALE_RELATIONS if female else MALE_RELATIONS
    matching = [r for r in members if r in fitting]
    found = matching or members
    return found[-1] if found else None


def _by_name(name: str, facts: dict[str, str]) -> str | None:
    for key, content in facts.items():
        parts = key.split(":")
        if parts[0] != "family":
            continue
        if has_cjk(name) and name in content:  # no word boundaries in Chinese
            return parts[1]
        if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", content):
            return parts[1]
    return None


def _member_name(relation: str, facts: dict[str, str]) -> str:
    said = facts.get(f"family:{relation}", "")
    several = re.match(r"User has (?:twin \w+|twins), called (.+?)\.$", said)  # "Amara and Kofi" (one age)
    if several:
        return several.group(1)
    # (one of several whose age was told: "User's grandchild Lily is 9 (as of …)")
    dated = name_in_age(facts.get(f"family:{relation}:age", ""))
    return name_of_relative(said) or (dated if re.match(r"User has ", said) else "")


# "Whose birthday is it today?", "今天是谁过生日？": the family's birthdays that fall on the day
_WHOSE_BIRTHDAY_Q_EN = re.compile(
    r"\bwhose birthday is (?:it )?(?:today|tomorrow)\b|"
    r"\bis it (?:anyone|anybody|someone)'s birthday (?:today|tomorrow)\b|"
    r"\bwho(?:'s| is| has) (?:got )?(?:a |their )?birthday (?:today|tomorrow)\b",
    re.I,
)
_WHOSE_BIRTHDAY_Q_ZH = re.compile(r"(?:今天|明天)(?:是)?谁(?:的)?(?:过)?生日|谁(?:今天|明天)过生日")


def _whose_birthday(facts: dict[str, str], zh: bool, now: datetime.datetime, tomorrow: bool) -> str:
    day = now.date() + datetime.timedelta(days=1 if tomorrow else 0)
    who = []
    for key in facts:
        parts = key.split(":")
        if len(parts) == 3 and parts[0] == "family" and parts[2] in ("birthday", "age"):
            if _dates(parts[1], facts).month_day == (day.month, day.day):
                name = _member_name(parts[1], facts)
                relation = _ZH_RELATION_NAMES.get(parts[1], parts[1]) if zh else parts[1]
                who.append(f"你{relation}{name}" if zh else f"your {relation}" + (f" {name}" if name else ""))
    who = list(dict.fromkeys(who))
    own = _own_dates(facts).month_day == (day.month, day.day)
    when_said = ("明天" if tomorrow else "今天") if zh else ("tomorrow" if tomorrow else "today")
    if zh:
        if not who and not own:
            return f"你告诉过我的人里，{when_said}没有人过生日。"
        return f"{when_said}是{'和'.join(['你自己'] * own + who)}的生日！"
    if not who and not own:
        return f"No one whose birthday you've told me has it {when_said}."
    if not who:
        return f"It's your birthday {when_said}!"
    if own:
        return f"It's your birthday {when_said}, and {and_list(who)}'s too!"
    return f"It's {and_list(who)}'s birthday {when_said}!"


def _own_dates(facts: dict[str, str]) -> _Dates:
    """What the user's own facts say of their birth (their `age` and `birthday`), read as a
    family member's are."""
    return _dates("self", {"family:self:age": facts.get("age", ""), "family:self:birthday": facts.get("birthday", "")})


@dataclass
class _Dates:
    born: datetime.date | None = None  # a full date of birth
    month_day: tuple[int, int] | None = None  # the birthday without its year
    age: int | None = None  # an age as told on `told`
    told: datetime.date | None = None


def _told_age(content: str) -> tuple[int, datetime.date | None] | None:
    """(age, the day it was told) from a stored age: "… is 12 (as of 4 December 2026)." /
    "…12岁（2026年12月4日时）。" (the user's own or a family member's), else None."""
    m = re.search(r"(?:is|are) (\d+) \(as of (.+?)\)|(\d+)岁（(.+?)时）", content)
    return (int(m.group(1) or m.group(3)), when.parse_date(m.group(2) or m.group(4))) if m else None


def _dates(relation: str, facts: dict[str, str]) -> _Dates:
    """What the stored facts say of a family member's birth: "turns 7 on Sunday, 6 December
    2026", "is 12 (as of 4 December 2026)", "was born on 3 March 1950", "birthday is 3 March"."""
    out = _Dates()
    age_fact = facts.get(f"family:{relation}:age", "")
    birthday_fact = facts.get(f"family:{relation}:birthday", "")
    m = re.search(r"turns? (\d+) on (.+?)\.$|在(.+?)满(\d+)岁", age_fact)
    if m:
        day = when.parse_date(m.group(2) or m.group(3))
        age = int(m.group(1) or m.group(4))
        if day is not None:
            out.born = when.anniversary(day.month, day.day, day.year - age)
    told = _told_age(age_fact)
    if told is not None:
        out.age, out.told = told
    m = re.search(r"was born on (.+?)\.$|出生于(.+?)。", birthday_fact)
    if m:
        out.born = when.parse_date(m.group(1) or m.group(2)) or out.born
    m = re.search(r"birthday is (\d{1,2}) ([A-Z][a-z]+)\.$|生日是(\d{1,2})月(\d{1,2})日", birthday_fact)
    if m:
        if m.group(1):
            out.month_day = (when.MONTHS_EN.index(m.group(2)) + 1, int(m.group(1)))
        else:
            out.month_day = (int(m.group(3)), int(m.group(4)))
    if out.born is not None:
        out.month_day = (out.born.month, out.born.day)
    elif out.month_day is not None and out.age is not None and out.told is not None:
        # an age told on a day and the birthday: the year of birth follows
        month, mday = out.month_day
        year = out.told.year - out.age - (1 if (out.told.month, out.told.day) < (month, mday) else 0)
        out.born = when.anniversary(month, mday, year)
    return out


def _age_answer(
    relation: str, facts: dict[str, str], zh: bool, now: datetime.datetime, birthday: bool, will: bool
) -> str:
    today = now.date()
    name = _member_name(relation, facts)
    female, male = relation in FEMALE_RELATIONS, relation in MALE_RELATIONS
    if zh:
        who = name or "你" + _ZH_RELATION_NAMES.get(relation, relation)
        she = "她" if female else "他" if male else "TA"
        num = when.zh_words
    else:
        who = name or "your " + _relation_word(relation, facts)
        she = "she" if female else "he" if male else "they"
        num = when.en_words
    turns = "turn" if she == "they" else "turns"
    be = "are" if " and " in who else "is"  # (a name or "your cat" is one; "Amara and Kofi" two)
    d = _dates(relation, facts)
    if d.born is None and d.month_day is None and d.age is None:
        if zh:
            return _UNKNOWN["age"]["zh"].format(who)
        return _UNKNOWN["age"]["en"].format(who, "her" if female else "his" if male else "their")
    if d.born is not None:
        age = when.years_between(d.born, today)
        upcoming = when.next_anniversary(d.born.month, d.born.day, today)
        last = when.anniversary(d.born.month, d.born.day, upcoming.year - 1) if upcoming != today else today
        next_age = when.years_between(d.born, upcoming)
        md_zh = when.format_month_day(d.born.month, d.born.day, True)
        recent = 0 <= (today - last).days <= 31 and not will
        if zh:
            if upcoming == today:
                return f"{who}今天满{num(age)}岁！"
            if birthday and recent:
                return f"{who}的生日是{md_zh}，{she}在{when.format_date(last, True)}满了{num(age)}岁。"
            if recent:
                return f"{who}现在{num(age)}岁，{she}在{when.format_date(last, True)}满了{num(age)}岁。"
            if birthday:
                return f"{who}的生日是{md_zh}，{when.format_date(upcoming, True)}满{num(next_age)}岁。"
            if will:
                return f"{who}在{when.format_date(upcoming, True)}满{num(next_age)}岁。"
            return f"{who}现在{num(age)}岁，{when.format_date(upcoming, True)}满{num(next_age)}岁。"
        who_cap = who[:1].upper() + who[1:]
        if upcoming == today:
            return f"{who_cap} turns {num(age)} today!"
        if birthday and recent:
            md = when.format_month_day(d.born.month, d.born.day, False)
            return f"{who_cap}'s birthday is on {md}; {she} turned {num(age)} on {when.format_date(last, False)}."
        if recent:
            return f"{who_cap} {be} {num(age)}; {she} turned {num(age)} on {when.format_date(last, False)}."
        if birthday:
            md = when.format_month_day(d.born.month, d.born.day, False)
            on = when.format_date(upcoming, False)
            return f"{who_cap}'s birthday is on {md}; {she} {turns} {num(next_age)} on {on}."
        if will:
            return f"{who_cap} will be {num(next_age)} on {when.format_date(upcoming, False)}."
        return f"{who_cap} {be} {num(age)}; {she} {turns} {num(next_age)} on {when.format_date(upcoming, False)}."
    parts: list[str] = []
    if d.age is not None and d.told is not None:
        years = when.years_between(d.told, today)
        if zh:
            if years < 1:
                parts.append(f"{who}{num(d.age)}岁。")
            else:
                parts.append(
                    f"你{when.format_date(d.told, True, weekday=False)}告诉我{who}{num(d.age)}岁，"
                    f"现在大概{num(d.age + years)}岁了。"
                )
        else:
            who_cap = who[:1].upper() + who[1:]
            if years < 1:
                parts.append(f"{who_cap} {be} {num(d.age)}.")
            else:
                told = when.format_date(d.told, False, weekday=False)
                parts.append(
                    f"{who_cap} was {num(d.age)} when you told me on {told}, "
                    f"so {she} {'are' if she == 'they' else 'is'} about {num(d.age + years)} now."
                )
    if d.month_day is not None:
        md = when.format_month_day(*d.month_day, zh)
        upcoming = when.next_anniversary(*d.month_day, today)
        if zh:
            parts.append(f"{who}的生日是{md}，下一个是{when.format_date(upcoming, True)}。")
        else:
            parts.append(
                f"{who[:1].upper() + who[1:]}'s birthday is on {md}; "
                f"the next one is {when.format_date(upcoming, False)}."
            )
    elif birthday or will:
        parts.append(f"你还没告诉我{who}的生日是哪天。" if zh else f"You haven't told me when {who}'s birthday is.")
    if d.age is None and not birthday:
        parts.insert(0, f"你还没告诉我{who}多大了。" if zh else f"You haven't told me how old {who} is.")
    return ("" if zh else " ").join(parts)


# -- acknowledgements -------------------------------------------------------------------------
# The kinds of statement the tiny profile acknowledges itself (a 135M model would make up a
# reply to "I'm allergic to peanuts", or apologise for its English to "我对花生过敏").
# A name is greeted ("Nice to meet you, Bea!"), a plan said back: the model took "I'm Helen" for
# its own name, and answered "I'm starting at the zoo next month" with "You're welcome, Sam".
# Tastes and where one is from too: to "I love doing crosswords and watching the snooker" it
# said "that's a great way to remember the game you play with your husband" (no husband told).
ACKNOWLEDGED = (
    "name",
    "occupation",
    "workplace",
    "home",
    "hometown",
    "age",
    "family:",
    "health:",
    "plan:",
    "routine:",
    "study",
    "team",
    "car",
    "taste:",
    "favorite:",
)


def _names_it(other: SelfFact, fact: SelfFact) -> bool:
    """`other` says the family member `fact` names, by name: "my daughter Lena turns seven" (her
    age), "my son Oliver is allergic to peanuts" (his allergy, health:allergy:peanut:son) or
    "she's coming over on Sunday" of Karen named before (her plan, plan:daughter_sunday)."""
    if fact.value not in other.content or not fact.key.startswith("family:"):
        return False
    relation = fact.key.split(":")[1]
    return (
        other.key.startswith(fact.key + ":")
        or household_member(other.key) == relation
        or other.key.startswith((f"plan:{relation}_", f"routine:{relation}_"))
    )


def acknowledgement(learned: Sequence[SelfFact], zh: bool, every_kind: bool = False) -> str:
    """ "Got it — you're allergic to peanuts. I'll keep that in mind." / "好的，我记住了：你对花生过敏。"
    for what the user just said about themselves (`learned`), or "" when none of it is of an
    acknowledged kind (`every_kind`: acknowledge names, tastes and plans too)."""
    said = [f for f in learned if every_kind or f.key.startswith(ACKNOWLEDGED)]
    # "my daughter Lena turns seven": her name is in the age already
    said = [f for f in said if not any(o is not f and _names_it(o, f) for o in said)]
    if not said:
        return ""
    names = [f.value for f in said if f.key == "name"]
    said = [f for f in said if f.key != "name"]
    greeting = (f"很高兴认识你，{names[-1]}！" if zh else f"Nice to meet you, {names[-1]}!") if names else ""
    if not said:
        return greeting
    # (dict: one line for the facts of one diet, which all say the whole diet; tastes in one line:
    # "You like doing crosswords and watching the snooker.")
    tastes = _tastes({f.key: f.content for f in said if f.key.startswith("taste:")}, zh)
    lines = list(
        dict.fromkeys(second_person(_without_as_of(f.content)) for f in said if not f.key.startswith("taste:"))
    ) + ([tastes] if tastes else [])
    if zh:
        return greeting + "好的，我记住了：" + "".join(lines)
    body = " ".join(lines)
    body = re.sub(r"^You are\b", "you're", body)
    body = body[:1].lower() + body[1:] if body.startswith(("You ", "Your ")) else body
    return f"{greeting} Got it — {body} I'll keep that in mind.".strip()
