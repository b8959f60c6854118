"""Questions about when something was said or done, answered from the dated evidence.

"When did I go hiking?", "When did I tell you about my new job?", "What did I do last
week?", "我什么时候去的长城？", "我上周做了什么？": the answer is a day, and the tiny embedded
model cannot do dates, so the tiny profile answers these here, without a model call, from the
evidence the turn recalled for the question (MemoryGateway.search_evidence: the owner's heard
turns, each with the day it is about and the day it was said). Only the owner's own turns
count (not the companion's words, not questions); the answer gives the absolute date and
quotes what was said (the sentence that fits), in the question's language. When nothing
fits it says so and asks, instead of guessing. A capable model answers these from the dated
lines in its prompt instead.

Three kinds of question:
- an event ("when did I go hiking?"): the day the words name ("yesterday I went hiking",
  said on 3 November: 2 November), else the day it was said ("you mentioned it on …");
- a telling ("when did I tell you about …?"): the day it was said;
- a span ("what did I do last week?"): what was said about days in it (temporal.question_window).

The same evidence answers a question about what the person told (`told_answer`): "how much
warfarin am I on now?", "where does Olwen live?", "我那鹦鹉叫啥？" get their own statement that
fits, quoted ('You told me: "…"'), when no stored fact answers it; the tiny model made these
up, and in a language it does not speak it could only apologise.

Pure Python, no ROS.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..memory.evidence import tokens
from ..memory.self_facts import render_fact
from ..memory.temporal import question_window
from ..memory.turn_log import USER
from ..text.when import format_date, put_right_zh
from ..text.words import has_cjk
from .tools import Memory

EVENT, TOLD, SPAN = "event", "told", "span"

_PAST_I = r"(?:did|was|were|had|have) (?:i|we)\b"
_TOLD_EN = re.compile(
    r"\b(?:when|what day|which day|what date|on what day|how long ago)\b(?: exactly)?(?: was it)?(?: that)? "
    r"(?:did i|have i|i) (?:first |last |ever )?(?:tell|told|mention|say|said|talk|bring up|brought up|speak|spoke|"
    r"share|shared)\b",
    re.I,
)
_EVENT_EN = re.compile(
    rf"\b(?:when|what day|which day|what date|on what day|how long ago|how many (?:days|weeks|months) ago)\b"
    rf"(?: exactly)?(?: was it)?(?: that)? {_PAST_I}|"
    r"\bwhen was (?:the last time|the first time|my|our) |"
    r"\b(?:what day|which day|what date) was it (?:that|when) (?:i|we)\b|"
    r"\b(?:remember|recall|know|remind me|tell me) when (?:i|we)\b|"
    r"\b(?:when|what day|which day|what date|how long ago) was it (?:that |when )?(?:i|we)\b|"
    r"\b(?:what|which) (?:day|date) (?:was it |was that )?(?:when|that) (?:i|we)\b",
    re.I,
)
_SPAN_EN = re.compile(
    r"\bwhat (?:did|have) (?:i|we) (?:do|done|been doing|been up to|get up to|got up to|tell you about)\b|"
    r"\bwhat was i (?:doing|up to)\b|\bwhere (?:did|have) (?:i|we) (?:go|been)\b|\bwhat did i (?:say|tell you)\b|"
    r"\bwhat (?:i|we) did\b|\bwhere was i\b|"
    r"\bwhat happened (?:to me )?(?:last|this|on|in|yesterday|during)\b|\banything i did\b",
    re.I,
)
_WHEN_ZH = r"(?:什么时候|啥时候|哪天|哪一天|几号|几月几[号日]|何时)"
# the future: "我什么时候要去…", "我能什么时候…", "明天…"
_FUTURE_ZH = r"(?:要|会|得|能|可以|应该|该|将|打算|准备|计划)"
_NOT_PAST_ZH = re.compile(
    rf"{_WHEN_ZH}{_FUTURE_ZH}|{_FUTURE_ZH}(?:在)?{_WHEN_ZH}|打算|准备|计划|将要|明天|后天|下周|下个?星期|下个?月|明年|将来|以后"
)
_TOLD_ZH = re.compile(
    rf"我(?:是)?{_WHEN_ZH}(?:跟你|和你|对你|给你|向你)?(?:说|讲|提|告诉|聊|谈)|"
    rf"我(?:上次|第一次)?(?:跟你|和你|对你|给你|向你)(?:说|讲|提|告诉|聊|谈).{{0,16}}是{_WHEN_ZH}"
)
_EVENT_ZH = re.compile(rf"我(?:们)?(?:是|上次|上一次|最近一次|第一次)?{_WHEN_ZH}|我(?:们)?.{{0,14}}是{_WHEN_ZH}")
_SPAN_ZH = re.compile(
    r"我(?:们)?.{0,6}(?:做|干|说|讲|聊)(?:了|过)?(?:些)?(?:什么|啥)|我(?:们)?.{0,6}干嘛|我(?:们)?.{0,6}去(?:了|过)?哪"
)

_FRAME_ZH = re.compile(
    rf"{_WHEN_ZH}|上上周|上周末|上个?周末|上周|上个?星期|上个?礼拜|这周|本周|这个?星期|上个?月|这个月|本月|去年|最近|近来|"
    r"这几天|昨天|前天|今天|你还记得|还记得|记得|记不记得|你知道|知道|想一想|想想|告诉我|跟你|和你|对你|给你|向你|告诉|提到|提起|提过|说过|说|讲|聊|谈|什么|干嘛|做|干|些|啥|哪儿|哪里|哪|"
    r"上次|上一次|第一次|最近一次|哪些地方|什么地方|地方|哪些|都|我们|我|是|的|了|过|呢|吗|啊|呀|去|[？?。！!，,]"
)


@dataclass(frozen=True)
class WhenQuestion:
    kind: str  # EVENT, TOLD or SPAN
    zh: bool
    topic: dict[str, float]  # the question's topic terms and their weights
    window: tuple[datetime.date, datetime.date] | None = None  # SPAN: the days asked about


def recognise(question: str, language: str = "en", now: datetime.datetime | None = None) -> WhenQuestion | None:
    """The question as a question about when (or what, in a span of days) the user said or did
    something, or None. A question about the future ("when will I…", "我什么时候要…") is not one."""
    q = (question or "").strip()
    zh = language.startswith("zh") or has_cjk(q)
    now = now or datetime.datetime.now().astimezone()
    if zh:
        if _NOT_PAST_ZH.search(q):
            return None
        if _TOLD_ZH.search(q):
            return WhenQuestion(TOLD, True, _topic(q, True))
        if _EVENT_ZH.search(q):
            return WhenQuestion(EVENT, True, _topic(q, True))
        if _SPAN_ZH.search(q):
            return _span(q, True, now)
        return None
    if _TOLD_EN.search(q):
        return WhenQuestion(TOLD, False, _topic(q, False))
    if _EVENT_EN.search(q):
        return WhenQuestion(EVENT, False, _topic(q, False))
    if _SPAN_EN.search(q):
        return _span(q, False, now)
    return None


def _span(q: str, zh: bool, now: datetime.datetime) -> WhenQuestion | None:
    window = question_window(q, now.date())
    if window is None or window.first > now.date():
        return None  # "what did I do?" with no span of days is not about dates
    return WhenQuestion(SPAN, zh, _topic(q, zh), (window.first, window.last))


def _terms(text: str) -> list[str]:
    """`tokens`, with a final -e of an English word dropped too ("hike" and "hiking" alike)."""
    return [t[:-1] if len(t) >= 4 and t.endswith("e") and t < "\u3400" else t for t in tokens(text)]


# Words of the question's frame, not its topic (folded as `tokens` folds them).
_FRAME_EN = frozenset(
    _terms(
        "go goes going went gone do does doing did done tell telling told say saying said mention mentioning "
        "mentioned talk talking talked bring brought speak spoke share shared happen happened time times first "
        "day date exactly ago long many ever get got up recall remind weekend night afternoon "
        "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
        "august september october november december"
    )
)


def _topic(q: str, zh: bool) -> dict[str, float]:
    """The question's topic terms: English words count 1 and a person's name 2 ("when did I say
    Bronwen's baby is due?" of "Bronwen rang, she's expecting again in May"), Chinese bigrams 1,
    single Chinese characters 0.5 (they match too much alone)."""
    if zh:
        q = _FRAME_ZH.sub(" ", q)
    # (a capital after "of", "in", "to"… is a place: "the capital of France")
    names = (
        set()
        if zh
        else {
            t
            for w in re.findall(r"(?<!\b(?:of|in|to|at))(?<!\bfrom)(?<!\bnear)(?<=\S)\s+([A-Z][a-z]+)", q)
            for t in _terms(w)
        }
    )
    terms = [t for t in _terms(q) if t not in _FRAME_EN and (len(t) > 1 or t >= "\u3400")]
    return {t: (0.5 if len(t) == 1 and t >= "\u3400" else 2.0 if t in names else 1.0) for t in terms}


def _fit(topic: dict[str, float], text: str) -> float:
    """How well `text` fits the topic: the weight of the topic terms it has, 0 when that is
    under half the topic (or under one whole term)."""
    if not topic:
        return 1.0
    have = set(_terms(text))
    score = sum(w for t, w in topic.items() if t in have)
    return score if score >= 1.0 and score >= 0.5 * sum(topic.values()) else 0.0


def _own_statements(evidence: Sequence[Memory], question: str) -> list[Memory]:
    """The user's own dated turns that are statements (not this question, not other questions)."""
    asked = question.strip().casefold()
    return [
        m
        for m in evidence
        if m.node_type == "turn"
        and m.speaker == USER
        and m.date
        and m.text.strip()
        and m.text.strip().casefold() != asked
        and not _is_question(m.text)
    ]


_QUESTION_MARK = re.compile(r"[?？]\s*$|吗\s*$|什么时候|啥时候|^\s*(?:when|what|where|which|did i|do you)\b", re.I)


def _is_question(text: str) -> bool:
    return bool(_QUESTION_MARK.search(text.strip()))


def _day(iso: str) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(iso)
    except ValueError:
        return None


_SENTENCE = re.compile(r"[^.!?。！？]+[.!?。！？]*")


def _quote(text: str, topic: dict[str, float], zh: bool) -> str:
    """The sentence of `text` that fits the topic best (the first one when none does), as said,
    without its closing punctuation, at most 140 characters."""
    text = put_right_zh(text) if zh else text  # ("十二月十号，不对，十二号": what they meant)
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()] or [text.strip()]
    best = max(sentences, key=lambda s: (sum(w for t, w in topic.items() if t in set(_terms(s))), -sentences.index(s)))
    best = best.rstrip(" .!?。！？")
    return best if len(best) <= 140 else best[:137].rstrip() + "…"


def _said(m: Memory, topic: dict[str, float], zh: bool) -> str:
    quote = _quote(m.text, topic, zh)
    return f"“{quote}”" if zh else f'"{quote}"'


_UNKNOWN = {
    (EVENT, False): "I don't remember you mentioning that. When was it?",
    (TOLD, False): "I don't remember you telling me about that. Could you tell me again?",
    (SPAN, False): "I don't remember you telling me what you did then. What did you get up to?",
    (EVENT, True): "我不记得你跟我提过这件事。是什么时候的事呀？",
    (TOLD, True): "我不记得你跟我说过这件事。能再跟我说说吗？",
    (SPAN, True): "我不记得你跟我说过那几天做了什么。你做了些什么呀？",
}


def answer(
    question: str, evidence: Sequence[Memory], language: str = "en", now: datetime.datetime | None = None
) -> str | None:
    """The answer to a question about when (or, in a span of days, what) the user said or did
    something, from `evidence` (the turn's search_evidence items), or None when `question`
    is not one. `now`: the moment of the question (a span is counted from it)."""
    asked = recognise(question, language, now)
    if asked is None:
        return None
    zh = asked.zh
    own = _own_statements(evidence, question)
    if asked.kind == SPAN:
        return _span_answer(asked, own) or _UNKNOWN[(SPAN, zh)]
    scored = [(fit, -i, m) for i, m in enumerate(own) if (fit := _fit(asked.topic, m.text)) > 0]
    if not scored:
        return _UNKNOWN[(asked.kind, zh)]
    # the latest telling of those that fit half as well as the best: an appointment moved
    # ("心内科复查，十一月二十四号", then "改到十二月一号") is where it is now
    top = max(fit for fit, _rank, _m in scored)
    _said_on, _fit_score, _rank, best = max(
        (
            (m.said or m.date if asked.kind == EVENT else "", fit, rank, m)
            for fit, rank, m in scored
            if fit >= 0.5 * top or asked.kind != EVENT
        ),
        key=lambda s: s[:3],
    )
    said = _day(best.said) or _day(best.date)
    about = _day(best.date) or said
    assert said is not None and about is not None
    quote = _said(best, asked.topic, zh)
    if asked.kind == TOLD or about == said:
        if zh:
            verb = "说的" if asked.kind == TOLD else "提到的"
            return f"你是{format_date(said, True)}跟我{verb}：{quote}。"
        lead = "You told me on" if asked.kind == TOLD else "You mentioned it on"
        return f"{lead} {format_date(said, False)}: {quote}."
    if zh:
        return f"是{format_date(about, True)}。你{format_date(said, True, weekday=False)}跟我说：{quote}。"
    return f"That was {format_date(about, False)}. On {format_date(said, False, weekday=False)} you told me: {quote}."


def _span_answer(asked: WhenQuestion, own: list[Memory]) -> str | None:
    assert asked.window is not None
    first, last = asked.window
    found: list[tuple[datetime.date, datetime.date, Memory]] = []
    for m in own:
        about, said = _day(m.date), _day(m.said) or _day(m.date)
        if about is None or said is None or not first <= about <= last:
            continue
        if asked.topic and not _fit(asked.topic, m.text):
            continue
        found.append((about, said, m))
    if not found:
        return None
    found.sort(key=lambda f: (f[0], f[1]))
    zh = asked.zh
    parts = []
    for about, said, m in found[:3]:
        quote = _said(m, asked.topic, zh)
        if zh:
            told = "" if said == about else f"（你{format_date(said, True, weekday=False)}说的）"
            parts.append(f"{format_date(about, True)}{told}：{quote}")
        else:
            told = "" if said == about else f" (you told me on {format_date(said, False, weekday=False)})"
            parts.append(f"{format_date(about, False)}{told}: {quote}")
    if zh:
        return "你跟我说过：" + "；".join(parts) + "。"
    return "You told me: " + "; ".join(parts) + "."


# -- what the user told, quoted ----------------------------------------------------------------


_OTHERS_ZH = re.compile(r"邻居|隔壁|对门|楼上|楼下的|他家|她家|他们家|人家|别人家")
_NOW_ASKED = re.compile(
    r"\b(?:now|noo|these days|currently|at the moment|any more|anymore|still)\b|现在|目前|如今|这阵子", re.I
)
# how a quoted answer starts, in each language
QUOTED = ("You told me: ", "你跟我说过：")


@dataclass(frozen=True)
class _ToldWords:
    """How one language says what a quoted answer needs."""

    clause: re.Pattern[str]  # a clause of a statement
    joiner: str  # how clauses are joined again
    short: int  # a clause this short (characters / words) is read with the next one
    goes_on: re.Pattern[str]  # a clause that goes on from the one before ("就去…")
    names_it: re.Pattern[str]  # a clause that names what the one before was about ("叫豆豆")
    changed: re.Pattern[str]  # a later clause that changes it ("现在…", "now it's…")
    name_asked: re.Pattern[str]
    name_said: re.Pattern[str]  # a quote that says a name
    named_next: re.Pattern[str]  # a clause that is a name said for the one before
    number_asked: re.Pattern[str]
    number_said: re.Pattern[str]
    time_asked: re.Pattern[str]  # when: a time of day, a day (not a dose)
    time_said: re.Pattern[str]
    why_asked: re.Pattern[str]  # why: a reason (a condition, what a doctor said)
    why_said: re.Pattern[str]
    filler: re.Pattern[str]
    not_remembered: str
    said: str  # "You told me: {}"
    zh: bool

    def size(self, clause: str) -> int:
        return len(clause) if self.zh else len(clause.split())


_QUOTED_ZH = _ToldWords(
    clause=re.compile(r"[^，,。！？；;!?\s]+"),
    joiner="，",
    short=8,
    goes_on=re.compile(r"^(?:就|便|才|然后|再)"),
    names_it=re.compile(r"^(?:叫|是|在|有|一只|一个|今年)"),
    changed=re.compile(r"现在|改成|改了|换成|换了|加到|减到|加了|减了|搬到|搬去|搬回"),
    name_asked=re.compile(r"叫(?:啥|什么)|名字|名儿|姓(?:啥|什么)"),
    name_said=re.compile(r"叫|名|姓"),
    named_next=re.compile(r"^叫"),
    number_asked=re.compile(r"几|多少|多大"),
    number_said=re.compile(r"[零〇一二两三四五六七八九十百半\d]"),
    time_asked=re.compile(r"几点|哪天|哪一天|什么时候|啥时候|礼拜几|星期几|周几|几号"),
    time_said=re.compile(
        r"[零〇一二两三四五六七八九十\d][点號号日]|(?:周|礼拜|星期)[一二三四五六日天](?!次)|[今明后]天|"
        r"早上|上午|中午|下午|傍晚|晚上|夜里|饭前|饭后|睡前|睡觉前|空腹"
    ),
    why_asked=re.compile(r"为啥|为什么|咋不|怎么不"),
    why_said=re.compile(
        r"因为|所以|得了|有[^，,]{0,4}(?:病|症|炎|高)|痛风|糖尿病|高血压|血压高|血糖高|过敏|胆固醇|尿酸|"
        r"(?:医生|大夫)(?:说|让|不让|叫)"
    ),
    filler=re.compile(r"^(?:嗯|那个|就是说|就是|我跟你说|哎呀|哎|啊|呃|对了)+"),
    not_remembered="我不记得你跟我说过这个。能再跟我说说吗？",
    said=QUOTED[1] + "“{}”。",
    zh=True,
)
_QUOTED_EN = _ToldWords(
    clause=re.compile(r"[^,.;!?]+"),
    joiner=", ",
    short=5,
    # ("…Arvind comes every evening, and his dog Bruno stays with me": whose dog is said before)
    goes_on=re.compile(r"^(?:and then|then|so|(?:and )?(?:his|her|he|she|they|their|its))\b", re.I),
    names_it=re.compile(r"^(?:called|named|that's|it's|she's called|he's called)\b", re.I),
    changed=re.compile(
        r"\bnow\b|\bnoo\b|\bchanged\b|\bput (?:me|it) up\b|\bcut (?:it|that)\b|\bhalved\b|\braised\b|\bmoved\b",
        re.I,
    ),
    name_asked=re.compile(r"\b(?:called|call(?:ed)? (?:him|her|it|the)|name|named)\b", re.I),
    # "called Pickles", "her name's Mere", or a capitalised word after the first ("our Rab")
    name_said=re.compile(r"\b(?:called|named|name is|name's|'s name)\b|(?<=\S)\s+(?!I\b)[A-Z][a-z]+"),
    named_next=re.compile(r"^(?:called|named)\b|^[A-Z][a-z]+$"),
    number_asked=re.compile(r"\bhow (?:many|much|long|old)\b|\bdose\b|\bmilligrams?\b|\bmg\b", re.I),
    number_said=re.compile(
        r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
        r"sixty|seventy|eighty|ninety|hundred|half|quarter|once|twice|a couple)\b",
        re.I,
    ),
    time_asked=re.compile(
        r"\b(?:what|which) (?:time|days?|date|night|morning|afternoon|evening)s?\b|\bwhen\b|\bhow often\b", re.I
    ),
    time_said=re.compile(
        r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|o'clock|half past|first thing|"
        r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)s?|"
        r"january|february|march|april|may|june|july|august|september|october|november|december|"
        r"morning|afternoon|evening|night|bed|bedtime|breakfast|lunch|dinner|supper|tea|noon|midday|"
        r"today|tomorrow|tonight|next week|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
        r"eleventh|twelfth|\w+teenth|twentieth|thirtieth)\b",
        re.I,
    ),
    why_asked=re.compile(r"\bwhy\b", re.I),
    why_said=re.compile(
        r"\b(?:because|'cause|cos|since|for (?:my|the)|with (?:my|the)|allergic|allergy|doctor|gp|gout|diabet\w*|"
        r"statin|pressure|cholesterol|kidneys?|migraines?|rash|hives|itch\w*|swell\w*|sugar)\b",
        re.I,
    ),
    filler=re.compile(r"^(?:(?:and|so|well|oh|um|er|anyway)\b[,\s]*)+", re.I),
    not_remembered="I don't remember you telling me that. Could you tell me again?",
    said=QUOTED[0] + '"{}".',
    zh=False,
)

# A question about the user's own life, in Chinese: "我那鹦鹉叫啥？", "俺老家是哪儿的来着？",
# "胰岛素我一天打几回？", "手术在哪个医院做来着？"; not advice, a request or a yes/no question
_TOLD_LEAD_ZH = r"^(?:(?:哎呀?|嗯|那|那个|对了|你说|你还记得|你记得|还记得|你知道)[，,、\s]*)*"
_OWN_Q_ZH = re.compile(
    _TOLD_LEAD_ZH + r"(?:(?:我|俺|咱)(?!想|要|能|可以|该|应该|觉得|问你|跟你说|告诉你)|[\u4e00-\u9fff]{1,6}?(?:我|俺)|"
    r"[^，,。？?]{0,12}来着)"
)
_ASKING_ZH = re.compile(r"啥|什么|哪|几|多少|谁|多大|咋|还是")
_NOT_TOLD_Q_ZH = re.compile(
    r"你(?!还记得|记得|知道|说)|推荐|建议|好呢|怎么办|要不要|能不能|可不可以|该不该|行不行|吃点|做什么菜|天气"
)
# words of such a question that are no part of its topic
_FRAME_TOLD_ZH = re.compile(
    r"叫|名字|名儿|来着|一般|现在|以前|那只|那条|那个|那|在|俺|咱|还|记得|知道|你|不|吗|一天|每天|回|次|"
    r"几|多少|多大|谁|哪个|哪家|哪儿|哪里|哪|啥|什么|的|了|是|子|哦|呀|呢|干|做"
)
# English: a wh-question about what the person has, takes or is, or about someone they named
_WH_EN = re.compile(
    r"^(?:(?:and|so|now|well|oh|right|ok|okay|remind me|tell me|here|hen|love|dear|"
    r"did i (?:tell|say to|mention to) you|have i told you|do you (?:know|remember)|can you remember)[,\s]+)*"
    r"(?:what|whit|wot|which|where|when|who|whose|how many|how much|how long|how old|why)(?:'s|s|'re)?\b",
    re.I,
)
_OWN_EN = re.compile(r"\b(?:my|me|ma|i|i'm|i've|i'd|am i|do i|did i)\b", re.I)
_NOT_TOLD_Q_EN = re.compile(
    r"\b(?:should|could|would|might|shall|can) (?:i|we)\b|\byou (?:think|like|recommend|suggest|reckon|fancy)\b|"
    r"\byour\b|\byou(?:'re| are)\b|\bweather\b|\btime is it\b|\bwhat day is it\b|\bwhat(?:'s| is) the date\b|"
    r"\bhow (?:do|does|can|to)\b|\bmeaning\b|\bjoke\b|\bstory\b|\bnews\b|"
    # ("why is the sky blue?"; not "why is it I'm off the cheese?")
    r"\bwhy (?:do|does|is|are) (?:people|the)\b|\bwhy is it (?!(?:that )?(?:i|i'm|i've|we)\b)",
    re.I,
)
_TOLD_FRAME_EN = frozenset(
    _terms(
        "called call name named again remember remind tell told say said mention mentioned meant supposed take "
        "taking on got get gets whit noo wot me ma hen love dear doll mun now currently these days know "
        "think reckon exactly right does did is was were has had much many long old time day date "
        "tae ye yer wis gonnae aye off one ones come comes coming"
    )
)


def told_answer(
    question: str, evidence: Sequence[Memory], language: str = "en", known: Sequence[str] = ()
) -> str | None:
    """A question about the user's own life or the people they told of ("我那鹦鹉叫啥？", "how
    much warfarin am I on now?", "where does Olwen live?"), answered by quoting what they told
    ("你跟我说过：“我还养了只鹦鹉，叫豆豆”。", 'You told me: "they've put my warfarin up to four
    milligrams".'): the latest of their own statements that fits it best and says what is asked
    (a name for "叫啥" / "called", a number for "几" / "how many"). A small model makes these
    up (a dose of a medicine, a pet's name), so the person's own words stand in for it. When
    nothing they said fits, "I don't remember you telling me" for their own life, unless one of
    the facts `known` of them fits (then None: the model answers from those); None for a
    question about others in English (the model may answer) and for any other question."""
    q = (question or "").strip()
    if language.startswith("zh") or has_cjk(q):
        if not _ASKING_ZH.search(q) or _NOT_TOLD_Q_ZH.search(q):
            return None
        # (one about someone or something they spoke of, "小周是礼拜几来的？", must fit more closely)
        own_life = bool(_OWN_Q_ZH.search(q))
        return _told(q, evidence, _QUOTED_ZH, _topic(_FRAME_TOLD_ZH.sub(" ", q), True), own_life, known)
    if not _WH_EN.search(q):
        # the question after a lead-in: "I keep writing the old address on things, Fay, where is
        # it I live now?"
        later = re.search(
            r"[,.;]\s*(?:(?:fay|love|dear|hen)\s*[,.]\s*)*(?=(?:what|whit|which|where|when|who|how)\b)", q, re.I
        )
        q = q[later.end() :] if later and q.rstrip().endswith("?") else q
    if not _WH_EN.search(q) or _NOT_TOLD_Q_EN.search(q):
        return None
    # (a person's name weighs double: "where does Karen live?" of "our Karen's moved to Swansea")
    topic = {t: w for t, w in _topic(q, False).items() if t not in _TOLD_FRAME_EN}
    asking = re.sub(
        r"\b(?:tell me|remind me|did i (?:tell|say to|mention to) you|do you remember|i forget)\b", "", q, flags=re.I
    )
    return _told(q, evidence, _QUOTED_EN, topic, bool(_OWN_EN.search(asking)), known)


def _told(
    q: str, evidence: Sequence[Memory], words: _ToldWords, topic: dict[str, float], own_life: bool, known: Sequence[str]
) -> str | None:
    if not topic:
        return None
    wanted = next(
        (
            said
            for asked, said in (
                (words.name_asked, words.name_said),
                (words.time_asked, words.time_said),
                (words.number_asked, words.number_said),
                (words.why_asked, words.why_said),
            )
            if asked.search(q)
        ),
        None,
    )
    total = sum(topic.values())
    # a count with its measure ("几楼", "几片", "几回"): that measure with a number
    count = re.search(r"几([楼片粒颗次回岁个年遍趟])", q) if words.zh else None
    unit = (
        {"次": "次回", "回": "次回", "粒": "粒颗片", "颗": "粒颗片", "片": "片粒颗"}.get(count.group(1), count.group(1))
        if count
        else ""
    )
    measured = re.compile(rf"[零〇一二两三四五六七八九十百半\d][{unit}]") if unit else None
    # what the question calls theirs ("my dog"): someone else's in a quote is no answer
    mine = {t: 1.0 for m in re.finditer(r"\b(?:my|me|our) ((?:\w+ ){0,2}\w+)", q, re.I) for t in _terms(m.group(1))}
    mine = {t: w for t, w in mine.items() if t in topic}
    found = []
    for i, m in enumerate(_own_statements(evidence, q)):
        text = put_right_zh(m.text) if words.zh else m.text
        clauses = [c.strip() for c in words.clause.findall(text) if c.strip()]
        have = set(_terms(text))
        score = sum(w for t, w in topic.items() if t in have)
        # (one about others must fit closely, or by the person's name: "what's the capital of
        # France?" is no question about "my son lives in France"; "when's Kayla's wedding?" is
        # about "our granddaughter Kayla is getting married")
        named = any(w >= 2 and t in have for t, w in topic.items())
        least = (0.4 if own_life else 0.6) if words.zh else (0.5 if own_life or named else 0.75)
        # (a single character may be the whole topic: "我那只猫叫啥？")
        floor = min(0.5 if words.zh and own_life else 1.0, total)
        if not clauses or score < floor or score < least * total:
            continue
        weights = [sum(w for t, w in topic.items() if t in terms) for terms in map(set, map(_terms, clauses))]
        # (of two as good, the one with more of the question's words -- "以前在中学教历史", not
        # "教到六十岁退休" -- then the later: "原来一天一片，现在一天两片" puts the first right)
        shared = [len(set(c) & set(q)) if words.zh else 0 for c in clauses]
        at = max(range(len(clauses)), key=lambda k: (weights[k], shared[k], k))
        quote = _told_window(clauses, weights, at, wanted, words)
        if wanted is not None and not wanted.search(quote):
            continue
        if wanted is _QUOTED_EN.name_said and not _THINGS & set(topic) and not _named_near(quote, topic):
            continue
        if not words.zh and mine and _someone_elses(quote, mine):
            continue
        if words.zh and _OTHERS_ZH.search(quote) and re.search(r"(?:我|俺)(?:家|的)?(?:那|这)?", q):
            continue  # ("邻居家那只老猫叫花花" for "我那只猫叫啥？")
        if measured is not None and not measured.search(quote):
            continue
        found.append((score, m.said or m.date, -i, quote))
    if not found:
        if not own_life or any(_fit(topic, text) for text in known):
            return None
        return words.not_remembered
    if wanted in (words.time_said, words.number_said) or _NOW_ASKED.search(q):
        # a value that changes over the weeks ("the chest clinic's moved to the twentieth", then
        # "moved again, the twenty-seventh now"): the latest of those that fit half as well
        best = max(score for score, *_ in found)
        quote = max((said, score, rank, text) for score, said, rank, text in found if score >= 0.5 * best)[3]
    else:
        quote = max(found)[3]
    return words.said.format(quote if len(quote) <= _QUOTE_CHARS else quote[: _QUOTE_CHARS - 3].rstrip() + "…")


# What is named in whatever words ("those eye drops called" -- latanoprost): a medicine, a
# programme, a place; anyone else (a person, a pet, "the fella Brooke's marrying") is named with
# a capital or "called"
_THINGS = frozenset(
    _terms(
        "drop drops tablet tablets pill pills medicine medication inhaler cream injection jab programme program show "
        "film book song street road hospital home village place church pub shop club team paper thinner painkiller "
        "painkillers vitamin vitamins statin antibiotic antibiotics insulin patch spray"
    )
)


def _someone_elses(quote: str, topic: dict[str, float]) -> bool:
    """The thing asked about is someone else's in the quote: "he's got a pit bull called Duke"
    for "what's my dog's name?" (the neighbour's dog), "Stan's dog", "her cat"."""
    words = re.findall(r"[A-Za-z'-]+", quote)
    for k, w in enumerate(words):
        if not any(t in topic for t in _terms(w)) or w.lower() in ("i", "me", "my"):
            continue
        before = [x.lower() for x in words[max(0, k - 4) : k]]
        if any(x in ("my", "our", "i", "i've", "i'm", "me", "we", "we've") for x in before):
            return False
        if any(x in ("his", "her", "their", "he's", "she's", "they've", "he", "she", "they") for x in before) or any(
            re.fullmatch(r"[A-Z][a-z]+'s", x) for x in words[max(0, k - 2) : k]
        ):
            return True
    return False


def _named_near(quote: str, topic: dict[str, float]) -> bool:
    """A name said for what is asked about: "called"/"named", or a capitalised word at most three
    words after a word of the topic ("my greyhound now, Lightning"; not "my husband passed six
    years ago, and now I am in Oadby")."""
    # ("called Pickles"; not "the doctor's office called")
    if re.search(
        r"\b(?:called|named) (?!(?:me|us|him|her|them|to|about|back|round|in|on|and|the|a|yesterday|today|this|last)\b)"
        r"\w|\bname is\b|\bname's\b|'s name\b",
        quote,
        re.I,
    ):
        return True
    words = re.findall(r"[A-Za-z'-]+", quote)
    # (a name may open the clause: "Joy comes from the agency"; a word that opens any sentence
    # is no name)
    if (
        words
        and re.fullmatch(r"[A-Z][a-z]+(?:'s)?", words[0])
        and words[0].lower().removesuffix("'s") not in _OPENERS_EN
    ):
        return True
    # (not a place: "the audiologist in the Bon Secours")
    return any(
        re.fullmatch(r"(?!I\b)[A-Z][a-z]+", w)
        and words[k - 1].lower() not in ("in", "at", "from", "to", "near", "the", "of", "on", "up", "down")
        and any(t in topic for t in _terms(" ".join(words[max(0, k - 3) : k])))
        for k, w in enumerate(words)
        if k
    )


_LIST_GOES_ON_EN = re.compile(
    r"(?:and |or )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|\d|one|two|three|four|five)\b", re.I
)
_OPENERS_EN = frozenset(
    "i the a an my our your his her their and but so she he it they we well oh now then this that there "
    "yes no not when what where who why how if after before since because last next every one two".split()
)


def _told_window(
    clauses: list[str], weights: list[float], at: int, wanted: re.Pattern[str] | None, words: _ToldWords
) -> str:
    """The clause that fits, with the one before when it goes on from it (or, in English, is
    short: "any of that shellfish, I come out in hives"), the one after when it is about the
    same, names what it was about, follows a short clause or (a number asked) has the number,
    and on to a later clause that changes it ("原来一天一片，现在一天两片"); when that does not
    say what is asked (a name, a number), out to the nearest clause that does (a name: only the
    next clause, said as a name; "…有只猫，叫花花" is no dog's name)."""
    first, last = at, at
    if at > 0 and (words.goes_on.match(clauses[at]) or not words.zh and words.size(clauses[at]) <= words.short):
        first = at - 1
    if at + 1 < len(clauses):
        after = clauses[at + 1]
        if (
            words.size(clauses[at]) <= words.short
            or weights[at + 1] > 0
            or words.names_it.match(after)
            or wanted in (words.number_said, words.time_said)
            and wanted.search(after)
        ):
            last = at + 1
    # (on to a clause as close that has more of the topic: "Kiki, that's Keisha, she's at Spelman
    # studying biology")
    more = [k for k in range(last + 1, min(last + 3, len(clauses))) if weights[k] > 0]
    if more:
        last = more[-1]
    changed = [k for k in range(last + 1, len(clauses)) if words.changed.search(clauses[k])]
    if changed:
        last = changed[0]
    if words.changed.search(clauses[last]) and last + 1 < len(clauses) and words.names_it.match(clauses[last + 1]):
        last += 1  # ("搬到儿子那儿去了，在城东": where to)
    if wanted is not None and not wanted.search(words.joiner.join(clauses[first : last + 1])):
        naming = wanted is words.name_said
        said = words.named_next if naming else wanted
        reach = 2 if naming else 4
        ahead = [k for k in range(last + 1, min(last + reach, len(clauses))) if said.search(clauses[k])]
        behind = [] if naming else [k for k in range(first - 1, max(first - reach, -1), -1) if said.search(clauses[k])]
        if ahead:
            last = ahead[0]
        elif behind:
            first = behind[0]
    # (a list said with commas: "she comes monday, wednesday and friday")
    while (
        not words.zh
        and last + 1 < len(clauses)
        and last - at < 4
        and (words.size(clauses[last + 1]) <= 3 or _LIST_GOES_ON_EN.match(clauses[last + 1]))
    ):
        last += 1
    # (a long quote loses its lead, not its end, where a change is said: "…for tuesday, but they
    # rang, it's thursday now")
    while first < at and len(words.joiner.join(clauses[first : last + 1])) > _QUOTE_CHARS:
        first += 1
    quote = words.joiner.join(clauses[first : last + 1])
    return words.filler.sub("", quote) or quote


_QUOTE_CHARS = 140


def tiny_line(m: Memory, user: str) -> str:
    """An evidence item for a tiny prompt: its absolute date, and whether a value is current,
    in a plain sentence -- no role labels ("User: …"), which a tiny model would copy."""
    said = _day(m.said) or _day(m.date)
    about = _day(m.date) or said
    when = format_date(said, False, weekday=False) if said else "some day"
    if m.node_type == "turn":
        who = (user or "the user") if m.speaker == USER else "you"
        line = f'On {when}, {who} said: "{m.text.strip()}"'
        if about and said and about != said:
            line += f" (that is about {format_date(about, False)})"
        return line
    note = "an earlier value, no longer current" if m.status == "superseded" else "current"
    return f"{render_fact(m.text.strip(), user)} (noted on {when}; {note})"
