"""What a person says about themselves, read from their own words by rules (no model).

"My name is Tom", "I like hiking", "I don't like coffee", "my sister is called Anna",
"I'm going to Paris tomorrow", "我叫林", "我喜欢咖啡", "我女儿叫小雨", "我明天要去北京" are
first-person statements: the user's own word about the user, not something a model
inferred. The memory policy therefore treats a statement found here as confirmed (see
docs/MEMORY_SCHEMA.md, "Statements about oneself"), while anything a model concludes stays a
candidate.

Each statement becomes a keyed Fay observation, so a later statement with the same key
supersedes the earlier one ("I like coffee" → "I don't like coffee anymore"):

| kind | key | content (English / Chinese) |
|---|---|---|
| fact | `name` | `User's name is Tom.` / `用户的名字是林。` |
| preference | `taste:<thing>` | `User likes hiking.` / `User does not like coffee.` / `用户喜欢咖啡。` |
| fact | `family:<relation>` | `User's sister is called Anna.` / `User has a sister.` / `用户的女儿叫小雨。` |
| event | `plan:<when>` | `User is going to Paris tomorrow.` / `用户明天要去北京。` |

Questions are never statements ("what is my name?", "我叫什么", "do I like tea?"), and
nothing is read from a sentence that reports someone else's words. The content names the
person "User"/"用户"; `render_fact()` puts the real name in for a prompt.

Pure Python, no ROS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text.words import CJK_IDEOGRAPHS, has_cjk

USER_EN = "User"
USER_ZH = "用户"


@dataclass(frozen=True)
class SelfFact:
    kind: str  # "fact", "preference" or "event" (the memory's kind: tag)
    key: str  # updatable-fact key, e.g. "name", "taste:coffee", "family:sister", "plan:tomorrow"
    value: str  # the bare value: "Tom", "coffee", "Anna", "going to Paris"
    content: str  # one plain sentence about the user, as stored in memory
    language: str  # "en" or "zh"

    @property
    def tags(self) -> tuple[str, ...]:
        # source:user: the person's own words (not a model's summary)
        return (f"kind:{self.kind}", "source:user")


# -- English --------------------------------------------------------------------------------
# Words that follow "I'm"/"I am" but are not names ("I'm Tired", "I am Fine" after ASR casing).
_NOT_NAMES = {
    "a",
    "an",
    "the",
    "so",
    "very",
    "really",
    "just",
    "not",
    "fine",
    "good",
    "great",
    "ok",
    "okay",
    "here",
    "back",
    "home",
    "sorry",
    "tired",
    "happy",
    "sad",
    "hungry",
    "busy",
    "ready",
    "sure",
    "glad",
    "well",
    "going",
    "from",
    "in",
    "at",
    "on",
    "feeling",
    "doing",
    "trying",
    "looking",
    "thinking",
    "also",
    "still",
    "always",
    "never",
    "english",
    "chinese",
    "american",
    "british",
    "bored",
    "excited",
    "fay",
    "your",
    "yours",
    "afraid",
    "bad",
    "sick",
    "cold",
    "hot",
    "done",
    "new",
    "old",
    "alone",
    "late",
    "early",
    "free",
    "working",
    "learning",
}
_NAME_WORD = r"[A-Z][a-zA-Z'\-]{1,30}"
# A second name word is capitalised even in a case-insensitive pattern ("Mary Ann", not "Tom and").
_SURNAME = r"(?-i:[A-Z][a-zA-Z'\-]{1,30})"
# After "my name is", a lowercase word that ends the clause is a name too (ASR writes "my name is tom").
_LOWER_NAME_END = re.compile(r"\s*(?:[.!?,;]|$|\b(?:and|but)\b)", re.I)
_EN_NAME = [
    re.compile(rf"\bmy name(?:'s| is)\s+({_NAME_WORD}(?:\s+{_SURNAME})?)", re.I),
    re.compile(rf"\b(?:please\s+)?call me\s+({_NAME_WORD})", re.I),
    # "I'm Tom" / "I am Tom": only a capitalised word that is not a common adjective
    re.compile(rf"(?:^|[.!,;]\s*|\b(?i:hi|hello|hey)\b,?\s+)I(?:'m| am)\s+({_NAME_WORD})(?=\s*(?:[.!,;]|$|\band\b))"),
]
# Family words a person may name; public, as the dialogue's fact answers read them too.
RELATIONS = (
    "wife",
    "husband",
    "son",
    "daughter",
    "mother",
    "mom",
    "mum",
    "father",
    "dad",
    "brother",
    "sister",
    "grandmother",
    "grandma",
    "grandfather",
    "grandpa",
    "friend",
    "best friend",
    "boyfriend",
    "girlfriend",
    "partner",
    "dog",
    "cat",
    "baby",
    "kid",
    "child",
)
_REL = "|".join(sorted((re.escape(r) for r in RELATIONS), key=len, reverse=True))
_EN_FAMILY_NAMED = [
    re.compile(rf"\bmy ({_REL})(?:'s name is| is called| is named| called| named)\s+({_NAME_WORD})", re.I),
    re.compile(rf"\bI have an? ({_REL})\s+(?:called|named)\s+({_NAME_WORD})", re.I),
]
_EN_FAMILY_HAS = re.compile(rf"\bI have (an?|one|two|three|four|five) ({_REL})s?\b", re.I)
_STOP_CLAUSE = r"(?=\s*(?:[.!?;,]|$|\b(?:but|because|and i|so|when|if)\b))"
_STOP_LIST = r"(?=\s*(?:[.!?;]|$|\b(?:but|because|and i|so|when|if)\b))"  # "tea, cake and jazz" is one list
_EN_TASTE = [
    (re.compile(rf"\bI (?:do not|don't|dont|do n't) (?:really )?(?:like|love|enjoy)\s+(.+?){_STOP_LIST}", re.I), False),
    (re.compile(rf"\bI (?:hate|dislike|can't stand|cannot stand)\s+(.+?){_STOP_LIST}", re.I), False),
    (re.compile(rf"\bI (?:really |also |just )?(?:like|love|enjoy|adore)\s+(.+?){_STOP_LIST}", re.I), True),
    (re.compile(rf"\bI'm (?:really )?into\s+(.+?){_STOP_CLAUSE}", re.I), True),
]
_EN_FAVORITE = re.compile(rf"\bmy (?:favou?rite) ([a-z]+) is\s+(.+?){_STOP_CLAUSE}", re.I)
_WHEN = (
    r"tomorrow|tonight|this weekend|next week|next month"
    r"|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|later today|this evening"
)
_EN_PLAN = [
    re.compile(rf"\bI(?:'m| am) (going to|planning to|gonna)\s+(.+?)\s+({_WHEN})\b", re.I),
    re.compile(rf"\b({_WHEN}),? I(?:'m| am| will|'ll) (?:going to |gonna )?(.+?){_STOP_CLAUSE}", re.I),
    re.compile(rf"\bI (?:will|'ll)\s+(.+?)\s+({_WHEN})\b", re.I),
]
# Not about one's own taste: "I like to think", "I like it", "I love you" (said to Fay).
_TASTE_OBJECT_SKIP = {
    "it",
    "that",
    "this",
    "you",
    "them",
    "him",
    "her",
    "us",
    "so",
    "too",
    "very",
    "much",
    "what",
    "how",
    "your",
    "talking",
    "talking to you",
    "you too",
    "it too",
    "to you",
    "to talk",
    "to talk to you",
}
# First person in a value becomes the user's: "visit my mom" -> "visit their mom".
_PRONOUNS = {"my": "their", "me": "them", "myself": "themselves", "mine": "theirs", "i": "they"}
_QUESTION_EN = re.compile(
    r"\?\s*$|^\s*(?:what|who|which|do|does|did|is|am|are|can|could|would|should|will|how|"
    r"why|where|when)\b",
    re.I,
)
# Reported speech or a hypothetical: not a statement about oneself.
_NOT_OWN_EN = re.compile(r"\b(?:if|suppose|pretend|imagine|he said|she said|they said|says that)\b", re.I)


# -- Chinese --------------------------------------------------------------------------------
_ZH_STOP = "，。！？；、,.!?;~～ "
_ZH_NAME = [
    re.compile(
        r"我(?:叫|的名字(?:是|叫))([" + CJK_IDEOGRAPHS + r"A-Za-z]{1,6}?)"
        r"(?=[" + _ZH_STOP + r"]|$|吧|哦|啊|呀|就)"
    ),
    re.compile(r"(?:你)?(?:可以)?叫我([" + CJK_IDEOGRAPHS + r"A-Za-z]{1,6}?)(?=就|吧|[" + _ZH_STOP + r"]|$)"),
]
ZH_RELATIONS = (
    "老婆|妻子|老公|丈夫|儿子|女儿|妈妈|母亲|爸爸|父亲|哥哥|弟弟|姐姐|妹妹|奶奶|爷爷|外婆|外公"
    "|朋友|女朋友|男朋友|狗|猫|孩子"
)
_ZH_FAMILY_NAMED = re.compile(
    r"我(?:的)?(" + ZH_RELATIONS + r")(?:叫|名字叫|的名字是)(?!我)"
    r"([" + CJK_IDEOGRAPHS + r"A-Za-z]{1,6}?)"
    r"(?=[" + _ZH_STOP + r"]|$)"
)
_ZH_FAMILY_HAS = re.compile(r"我有(一个|两个|三个|一只|两只|个|只)(" + ZH_RELATIONS + r")")
# (?!的): "我喜欢的东西很多", "我最喜欢吃的是…" say no taste (a favourite is read separately)
_ZH_VERB = r"(?!(?:吃|喝|看|听|玩)?的)(?:吃|喝|看|听|玩)?"
_ZH_TASTE = [
    (re.compile(r"我(?:不太|不怎么|不)(?:喜欢|爱)" + _ZH_VERB + r"([^" + _ZH_STOP + r"]{1,12})"), False),
    (re.compile(r"我(?:讨厌|受不了|不吃|不喝)(?!的)([^" + _ZH_STOP + r"]{1,12})"), False),
    (re.compile(r"我(?:很|特别|最|也|非常|真的)?(?:喜欢|爱)" + _ZH_VERB + r"([^" + _ZH_STOP + r"]{1,12})"), True),
]
_ZH_FAVORITE = re.compile(r"我最(?:喜欢|爱)的([" + CJK_IDEOGRAPHS + r"]{1,4}?)是([^" + _ZH_STOP + r"]{1,12})")
_ZH_WHEN = "明天|今晚|周末|下周|下个月|后天|今天下午|今天晚上"
_ZH_PLAN = re.compile(
    r"我(" + _ZH_WHEN + r")(?:要|打算|准备|会)([^" + _ZH_STOP + r"]{1,20})|"
    r"(" + _ZH_WHEN + r")我(?:要|打算|准备|会)([^" + _ZH_STOP + r"]{1,20})"
)
# Chinese hypotheticals and someone else's words about the user ("要是我叫…", "妈妈说我喜欢…").
_NOT_OWN_ZH = re.compile(r"如果|假如|假设|要是|倘若|万一|(?<![我你跟和对])说我")
_QUESTION_ZH = re.compile(r"[吗么呢？?]\s*$|什么|谁|哪|几|怎么|是不是|多少")
_ZH_NOT_NAMES = {"什么", "谁", "啥", "哪个"}


def is_question(text: str) -> bool:
    return bool(_QUESTION_EN.search(text) or _QUESTION_ZH.search(text))


def extract_self_facts(text: str) -> list[SelfFact]:
    """The statements about oneself in `text` (one utterance of the user), in order; [] for
    questions and for anything that is not plainly a first-person statement."""
    facts: list[SelfFact] = []
    for clause in _clauses(text):
        if not clause or _NOT_OWN_EN.search(clause) or _NOT_OWN_ZH.search(clause):
            continue
        if is_question(clause):
            # "My name is Tom, what's yours?" / "我叫林，你呢？": the statement before the question
            clause = _statement_before_question(clause)
            if not clause:
                continue
        if has_cjk(clause):
            facts += _zh(clause)
        else:
            facts += _en(clause)
    # one fact per key: the last statement in the utterance wins
    by_key: dict[str, SelfFact] = {}
    for fact in facts:
        by_key.pop(fact.key, None)
        by_key[fact.key] = fact
    return list(by_key.values())


def states_fact(texts: list[str], key: str, content: str) -> bool:
    """True when the user's own words in `texts` state this fact: same key, and the stated
    value is in `content` (the memory policy's check that a `user_confirmed` self-statement
    really came from the user, and says what they said)."""
    if not key:
        return False
    return any(f.key == key and _says_value(f, content) for t in texts for f in extract_self_facts(t))


_NEGATED = re.compile(r"\b(?:not|don't|doesn't|never|no longer)\b|不|没", re.I)


def _says_value(fact: SelfFact, content: str) -> bool:
    """`content` says the value of `fact`: the whole value ("Tom", not "Tommy"; "林", not
    "林小雨"), with the same polarity ("likes tea", not "does not like tea")."""
    if content.strip() == fact.content:
        return True  # as the dialogue writes it ("用户明天要去北京。" for the value "明天去北京")
    stored_name = name_from_content(content)
    if fact.key == "name" and stored_name:
        return stored_name.lower() == fact.value.lower()
    if bool(_NEGATED.search(content)) != bool(_NEGATED.search(fact.content)):
        return False
    if has_cjk(fact.value):
        return fact.value in content  # no word boundaries in Chinese
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(fact.value)}(?![A-Za-z0-9])", content, re.I) is not None


def render_fact(content: str, name: str = "") -> str:
    """A stored self-fact as a prompt line: "User likes hiking." → "Tom likes hiking."."""
    if not name:
        return content
    if content.startswith(USER_EN + "'s name is") or content.startswith(USER_ZH + "的名字是"):
        return content  # "User's name is Tom." stays as it is: it says who the user is
    if content.startswith(USER_EN):
        return name + content[len(USER_EN) :]
    if content.startswith(USER_ZH):
        return name + content[len(USER_ZH) :]
    return content


def taste_from_content(content: str) -> tuple[str, bool] | None:
    """(thing, likes it) from a stored taste ("User likes hiking." / "User does not like tea." /
    "用户喜欢咖啡。"), else None."""
    m = re.match(rf"(?:{USER_EN} (likes|does not like) (.+?)\.|{USER_ZH}(喜欢|不喜欢)(.+?)。)$", content.strip())
    if not m:
        return None
    return (m.group(2) or m.group(4)), (m.group(1) or m.group(3)) in ("likes", "喜欢")


def name_from_content(content: str) -> str:
    """The name in a stored name fact ("User's name is Tom." / "用户的名字是林。"), else ""."""
    m = re.match(rf"(?:{USER_EN}'s name is|{USER_ZH}的名字是)\s*(.+?)[.。]?$", content.strip())
    return m.group(1).strip() if m else ""


def _statement_before_question(clause: str) -> str:
    """The statement before a question in one clause: "My name is Tom, what's yours?" →
    "My name is Tom"; "" when the clause opens with the question."""
    head: list[str] = []
    for part in re.split(r"\s*[,，]\s*", clause)[:-1]:
        if is_question(part):
            break
        head.append(part)
    return ", ".join(head)


def _clauses(text: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<=[.!?。！？；;])\s*", text.strip()) if c.strip()]


def _clean_object(value: str) -> str:
    value = re.sub(r"^(?:to\s+)?(?:eat|drink|eating|drinking)\s+", "", value.strip(), flags=re.I)
    value = re.sub(r"\s+(?:very much|a lot|so much|too|anymore|any more|now)$", "", value, flags=re.I)
    return value.strip(" .,!;\"'").lower()


def _third_person(value: str) -> str:
    return re.sub(r"\b(my|me|myself|mine|I)\b", lambda m: _PRONOUNS[m.group(1).lower()], value)


def _split_objects(value: str) -> list[str]:
    """ "hiking and coffee" / "tea, cake and jazz" -> one object each."""
    parts = [
        re.sub(r"^(?:both|especially|mostly|mainly)\s+", "", p.strip(), flags=re.I)
        for p in re.split(r",\s*(?:and|or)\s+|,\s*|\s+and\s+|\s+or\s+|、|和|还有", value)
        if p.strip()
    ]
    return parts if parts and all(len(p.split()) <= 4 for p in parts) else [value]


def _key_part(value: str) -> str:
    return re.sub(r"\s+", "_", value.strip().lower())[:60]


def _en(clause: str) -> list[SelfFact]:
    out: list[SelfFact] = []
    for i, pattern in enumerate(_EN_NAME):
        m = pattern.search(clause)
        if m:
            name = m.group(1).strip()
            first = name.split()[0]
            if first.lower() in _NOT_NAMES:
                continue
            if not first[0].isupper():
                if i != 0 or " " in name or not _LOWER_NAME_END.match(clause, m.end()):
                    continue
                name = first.capitalize()
            out.append(SelfFact("fact", "name", name, f"{USER_EN}'s name is {name}.", "en"))
            break
    for pattern in _EN_FAMILY_NAMED:
        m = pattern.search(clause)
        if m and m.group(2)[0].isupper():
            relation, name = m.group(1).lower(), m.group(2)
            out.append(
                SelfFact(
                    "fact", f"family:{_key_part(relation)}", name, f"{USER_EN}'s {relation} is called {name}.", "en"
                )
            )
            break
    else:
        m = _EN_FAMILY_HAS.search(clause)
        if m:
            count, relation = m.group(1).lower(), m.group(2).lower()
            noun = relation if count in ("a", "an", "one") else relation + "s"
            out.append(
                SelfFact(
                    "fact", f"family:{_key_part(relation)}", f"{count} {noun}", f"{USER_EN} has {count} {noun}.", "en"
                )
            )
    m = _EN_FAVORITE.search(clause)
    if m:
        what, value = m.group(1).lower(), _clean_object(m.group(2))
        if value:
            out.append(
                SelfFact(
                    "preference", f"favorite:{_key_part(what)}", value, f"{USER_EN}'s favorite {what} is {value}.", "en"
                )
            )
    else:
        taken: list[tuple[int, int]] = []
        for pattern, likes in _EN_TASTE:
            for m in pattern.finditer(clause):
                if any(m.start() < end and start < m.end() for start, end in taken):
                    continue
                taken.append(m.span())
                value = _clean_object(m.group(1))
                if (
                    not value
                    or value in _TASTE_OBJECT_SKIP
                    or value.split()[0] in _TASTE_OBJECT_SKIP
                    or len(value.split()) > 8
                ):
                    continue
                verb = "likes" if likes else "does not like"
                for thing in _split_objects(_third_person(value)):
                    out.append(
                        SelfFact("preference", f"taste:{_key_part(thing)}", thing, f"{USER_EN} {verb} {thing}.", "en")
                    )
    for i, pattern in enumerate(_EN_PLAN):
        m = pattern.search(clause)
        if not m:
            continue
        if i == 0:
            what, when = f"{m.group(1).lower()} {m.group(2).strip()}", m.group(3).lower()
            what = re.sub(r"^(?:gonna|going to)\s+", "going to ", what)
        elif i == 1:
            when, what = m.group(1).lower(), m.group(2).strip()
        else:
            what, when = m.group(1).strip(), m.group(2).lower()
        what = _third_person(what.strip(" .,!"))
        # "I will call you tomorrow" is about Fay too: said back it would read "You will call you"
        if what and len(what.split()) <= 10 and not re.search(r"\b(?:you|your|yours)\b", what, re.I):
            verb = "is " + what if what.startswith(("going", "planning")) else "will " + what
            out.append(
                SelfFact("event", f"plan:{_key_part(when)}", f"{what} {when}", f"{USER_EN} {verb} {when}.", "en")
            )
        break
    return out


def _zh(clause: str) -> list[SelfFact]:
    out: list[SelfFact] = []
    for pattern in _ZH_NAME:
        m = pattern.search(clause)
        if m and m.group(1) not in _ZH_NOT_NAMES:
            name = m.group(1)
            out.append(SelfFact("fact", "name", name, f"{USER_ZH}的名字是{name}。", "zh"))
            break
    m = _ZH_FAMILY_NAMED.search(clause)
    if m:
        relation, name = m.group(1), m.group(2)
        out.append(SelfFact("fact", f"family:{relation}", name, f"{USER_ZH}的{relation}叫{name}。", "zh"))
    else:
        m = _ZH_FAMILY_HAS.search(clause)
        if m:
            out.append(
                SelfFact(
                    "fact",
                    f"family:{m.group(2)}",
                    f"{m.group(1)}{m.group(2)}",
                    f"{USER_ZH}有{m.group(1)}{m.group(2)}。",
                    "zh",
                )
            )
    m = _ZH_FAVORITE.search(clause)
    if m:
        what, value = m.group(1), m.group(2)
        out.append(SelfFact("preference", f"favorite:{what}", value, f"{USER_ZH}最喜欢的{what}是{value}。", "zh"))
    for pattern, likes in _ZH_TASTE:
        m = pattern.search(clause)
        if m:
            value = m.group(1).strip()
            # "我喜欢你的声音", "我喜欢和你聊天": about the companion, not a taste
            if value and value not in ("你", "它", "这个", "那个") and not value.startswith(("你", "和你", "跟你")):
                verb = "喜欢" if likes else "不喜欢"
                for thing in _split_objects(value):
                    out.append(SelfFact("preference", f"taste:{thing}", thing, f"{USER_ZH}{verb}{thing}。", "zh"))
            break
    m = _ZH_PLAN.search(clause)
    if m:
        when = m.group(1) or m.group(3)
        what = m.group(2) or m.group(4)
        out.append(SelfFact("event", f"plan:{when}", f"{when}{what}", f"{USER_ZH}{when}要{what}。", "zh"))
    return out


def second_person(content: str) -> str:
    """A stored self-fact said back to the user: "User likes hiking." → "You like hiking.",
    "User's sister is called Anna." → "Your sister is called Anna.", "用户喜欢咖啡。" → "你喜欢咖啡。"."""
    text = content.strip()
    if text.startswith(USER_ZH):
        rest = text[len(USER_ZH) :]
        if rest.startswith("的名字是"):
            return "你叫" + rest[len("的名字是") :]
        return "你" + rest
    if not text.startswith(USER_EN):
        return text
    rest = text[len(USER_EN) :]
    for old, new in (
        ("'s ", "Your "),
        (" does not ", "You don't "),
        (" is ", "You are "),
        (" has ", "You have "),
        (" likes ", "You like "),
        (" will ", "You will "),
    ):
        if rest.startswith(old):
            rest = new + rest[len(old) :]
            break
    else:
        rest = "You" + rest
    return re.sub(
        r"\b(their|them|themselves|theirs)\b",
        lambda m: {"their": "your", "them": "you", "themselves": "yourself", "theirs": "yours"}[m.group(1)],
        rest,
    )
