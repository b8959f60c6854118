"""The knowledge base in the conversation (issue 41): what the companion says from the user's
documents, without the model where the model would only make it worse.

- `KnowledgeDesk.search`: the configured knowledge bases searched for a question (the store's
  `KnowledgeSearch`, on a worker thread of its own), their passages merged best first, cut at `k`.
- The tiny embedded model rewrites a fact into a different fact more often than not, so with
  the `tiny` profile an answer is EXTRACTIVE: the best sentence of the best passage, said as it
  is written (`extractive_answer`); a question nothing in the documents reaches gets the honest
  line (`dont_know`), never an invention.
- "Where does that come from?" / "这是哪里说的？" is answered from what the last answer of that
  user was taken from (`source_answer`): the document and where in it.
- A capable model gets the passages and their sources in the prompt before its one call
  (`prestart_block`, Fay's prestart route) or searches itself (the `knowledge_search` tool,
  `knowledge_tools.py`).

Knowledge is shared by everyone the companion serves: a guest may search it, and nothing a
user says is ever written into it (this module only reads). Pure Python, no ROS.
"""

from __future__ import annotations

import asyncio
import datetime
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..knowledge.api import DocumentInfo, KnowledgeSearch, Passage
from ..memory.evidence import tokens
from ..text.sentences import split_sentences
from ..text.words import has_cjk
from . import fact_answers, when_answers


@dataclass(frozen=True)
class KnowledgeTalkSettings:
    """What the dialogue searches and how (the node's knowledge_* parameters; the score threshold
    is the store's own, `knowledge.base.KnowledgeSettings.threshold`)."""

    bases: tuple[str, ...] = ()  # knowledge bases to search; () = every one in the store
    k: int = 3  # passages per question (prompt, tool answer)
    prestart: bool = True  # the capable profile gets the passages in the prompt before its call


# -- what the user asks ------------------------------------------------------------------------
_SOURCE_Q_EN = re.compile(
    r"\bwhere (?:does|did|do) (?:that|this|it|the answer|that answer|this answer) (?:come|came) from\b|"
    r"\bwhere (?:did|do) you (?:get|read|find|learn|see|take) (?:that|this|it)\b|"
    r"\bwhere(?:'s| is) (?:that|this|it) (?:from|written|said)\b|"
    r"\bwhat(?:'s| is| was) (?:the|your) source\b|\b(?:which|what) (?:document|file|page)\b.*\b(?:say|said|from)\b|"
    r"\bhow do you know (?:that|this)\b|\bsource\?|\bcite (?:your|the) source",
    re.I,
)
_SOURCE_Q_ZH = re.compile(
    r"(?:哪里|哪儿|哪|什么地方)(?:说|写|看|查|找|得)(?:的|到的|来的)|出处|来源|(?:从哪|哪里|哪儿)(?:来的|知道的?)|"
    r"(?:怎么|如何)知道的|根据(?:是)?什么|(?:哪个|哪份|哪篇)(?:文档|文件|资料)"
)

# A question form: a question mark, or a question word where a sentence starts.
_QUESTION_EN = re.compile(
    r"\?\s*$|^\s*(?:(?:and|so|but|ok|okay|well|hi|hello|excuse me|sorry)[, ]+)*"
    r"(?:what|when|where|which|who|whom|whose|why|how|do|does|did|is|are|was|were|can|could|may|"
    r"will|would|should|shall|have|has|tell me|i (?:want|need|would like) to know)\b",
    re.I,
)
_QUESTION_ZH = re.compile(r"[?？]\s*$|吗|什么|几|多少|哪|怎么|谁|为什么|是否|有没有|能不能|可不可以|可以.{0,6}吗|请问")
# Small talk: questions to or about the companion itself, not about the place. They go to the
# model (or the persona), never get "I don't have that in my documents".
_SMALL_TALK_EN = re.compile(
    r"\bhow are you\b|\bhow(?:'s| is) it going\b|\bhow do you do\b|\bwhat(?:'s| is) up\b|\bwho are you\b|"
    r"\bwhat(?:'s| is) your name\b|\bwhat are you\b|\bwhat can you do\b|\bare you (?:a |an )?"
    r"(?:robot|human|real|ok|okay|happy|sad|there|alive|ai)\b|\bhow old are you\b|"
    r"\b(?:do|would) you (?:like|love|enjoy|want|feel|think|prefer|remember)\b|"
    r"\bwhat do you (?:like|love|think|feel|want)\b|\btell me (?:a joke|a story|about yourself)\b|"
    r"\bcan you (?:sing|dance|hear|see|help)\b|\b(?:and|what about) you\b|\bthank",
    re.I,
)
_SMALL_TALK_ZH = re.compile(
    r"你好吗|你还好吗|你是谁|你叫什么|你的名字|你会(?:做)?什么|你能(?:做)?什么|你(?:喜欢|觉得|想|爱|记得)|"
    r"(?:讲|说)个(?:笑话|故事)|你几岁|你多大|在吗|你呢|最近(?:怎么样|好吗)|谢谢"
)


def asks_for_source(question: str) -> bool:
    """ "Where does that come from?", "What's your source?", "这是哪里说的？", "出处是什么？"."""
    return bool(_SOURCE_Q_ZH.search(question) if has_cjk(question) else _SOURCE_Q_EN.search(question))


def asks_for_information(question: str) -> bool:
    """A question a document could answer ("When do you open on Sunday?", "自行车多少钱？"); not
    small talk to or about the companion ("How are you?", "你叫什么名字？")."""
    if has_cjk(question):
        return bool(_QUESTION_ZH.search(question)) and not _SMALL_TALK_ZH.search(question)
    return bool(_QUESTION_EN.search(question)) and not _SMALL_TALK_EN.search(question)


# -- the extractive answer ---------------------------------------------------------------------
# Markdown a chunk may still hold at a line's start (headings, list markers, quotes) and inline
# emphasis: the sentence is read out, so none of it may be spoken.
_LINE_MARK = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)", re.M)
_INLINE_MARK = re.compile(r"\*\*|__|`|\[([^\]]*)\]\([^)]*\)")
_NUMBER = re.compile(r"\d")
# Questions that ask for a number, a time or a price: a sentence with a figure in it answers them.
_ASKS_FIGURE = re.compile(
    r"\bhow (?:much|many|long|far|old|often)\b|\bwhat time\b|\bwhen\b|\bwhat(?:'s| is) the (?:price|cost|fee|number)\b|"
    r"多少|几|什么时候|价格|价钱|费用|电话|号码",
    re.I,
)


def _clean(text: str) -> str:
    return _INLINE_MARK.sub(lambda m: m.group(1) or "", _LINE_MARK.sub("", text)).strip()


def sentences_of(text: str) -> list[str]:
    """A passage's sentences, markup removed; a line without a full stop (a table row, a heading
    left in the chunk) counts as a sentence of its own."""
    found: list[str] = []
    for line in text.splitlines():
        line = _clean(line)
        if line:
            found += [s.strip() for s in split_sentences(line, min_chars=1) if s.strip()]
    return found


def best_sentence(question: str, passage_text: str) -> str:
    """The sentence of the passage that shares the most with the question, and a figure when the
    question asks for one; the first sentence on a tie. "" for an empty passage.

    A term counts more when fewer sentences of the passage have it ("Is the shop open on
    Sunday?": every sentence says "shop", one says "Sunday"), and a name the question
    capitalises mid-sentence (a day, a product) counts double."""
    sentences = sentences_of(passage_text)
    if not sentences:
        return ""
    asked = set(tokens(question))
    named = set(tokens(" ".join(_NAME.findall(question))))
    figure = bool(_ASKS_FIGURE.search(question))
    terms_of = [set(tokens(s)) for s in sentences]
    weight = {t: _term_weight(t, named) / max(1, sum(t in terms for terms in terms_of)) for t in asked}
    most = sum(_term_weight(t, named) for t in asked) or 1.0

    def score(index: int) -> tuple[float, int]:
        terms = terms_of[index]
        shared = sum(weight[t] for t in asked & terms) / most
        if figure and _NUMBER.search(sentences[index]):
            shared += 0.25
        if len(terms) <= 1:  # a heading's words alone ("Opening hours") tell nothing
            shared -= 0.6
        return shared, -index

    return sentences[max(range(len(sentences)), key=score)]


# A capitalised word after a sentence's first word: a name, a day, a product ("open on Sunday").
_NAME = re.compile(r"(?<=\w[ ,])([A-Z][a-z]+)")


def _term_weight(term: str, named: set[str]) -> float:
    if term in named:
        return 2.0
    # a single Chinese character is shared by unrelated words (周一, 周日); its bigrams tell
    return 0.3 if len(term) == 1 and has_cjk(term) else 1.0


def extractive_answer(question: str, passages: Sequence[Passage]) -> str:
    """The best sentence of the best passage, as it is written ("" when there is none)."""
    for passage in passages:
        sentence = best_sentence(question, passage.text)
        if sentence:
            return sentence
    return ""


def dont_know(zh: bool) -> str:
    """The line for a question nothing in the documents answers: honest, and says what was looked at."""
    return "这个我的资料里没有，我不知道。" if zh else "I don't have that in my documents, so I don't know."


def where_words(passage: Passage, zh: bool) -> str:
    """ "hours.md, under Opening hours > Weekends" / "《hours.md》“周末”部分"."""
    if zh:
        return f"《{passage.source}》" + (f"“{passage.locator}”部分" if passage.locator else "")
    return passage.source + (f", under {passage.locator}" if passage.locator else "")


def source_answer(used: Sequence[Passage], zh: bool) -> str:
    """Where the last answer came from: its first passage's document and place (and the others')."""
    if not used:
        return "刚才的回答不是从我的资料里来的。" if zh else "My last answer did not come from my documents."
    first, *others = list(dict.fromkeys((p.source, p.locator) for p in used))
    passage = {(p.source, p.locator): p for p in used}
    main = where_words(passage[first], zh)
    if zh:
        line = f"这是{main}里写的。"
        return line + (f"也参考了{'、'.join(where_words(passage[o], True) for o in others)}。" if others else "")
    line = f"That comes from {main}."
    return line + (f" I also read {'; '.join(where_words(passage[o], False) for o in others)}." if others else "")


def prestart_block(passages: Sequence[Passage]) -> str:
    """The passages for the prompt before the model's one call (Fay's prestart route): each with
    its source, and what to do when they do not answer the question."""
    if not passages:
        return (
            "[knowledge_search] nothing in the documents matches this question. If it asks about this "
            "place or its documents, say you don't have that in your documents; do not invent it."
        )
    lines = ["[knowledge_search] from the documents (answer from them and keep their facts exactly):"]
    lines += [f"- ({where_words(p, False)}) {' '.join(sentences_of(p.text))}" for p in passages]
    return "\n".join(lines)


# -- which turns are the documents' ------------------------------------------------------------
def _personal_or_clock(question: str, language: str, now: datetime.datetime) -> bool:
    """A question about the user themselves (their name, family, what they did when) or a bare
    clock question ("What time is it?", "现在几点？"): answered from their facts, the evidence or
    the clock, never from the documents. "周日几点开门？" asks the clock's words about something
    else, so it stays a documents' question."""
    if fact_answers.answer(question, {}, language, now) is not None:
        return True
    if when_answers.answer(question, [], language, now) is not None:
        return True
    if fact_answers.time_answer(question, now, language) is None:
        return False
    return not (set(tokens(question)) - _CLOCK_TERMS)


# Terms of a clock question that name no topic ("what time is it today", "现在几点了").
_CLOCK_TERMS = frozenset(tokens("time date day clock 点 几点 现在 今天 星期 几号 日期 时间 周几 礼拜"))


@dataclass(frozen=True)
class KnowledgeAnswer:
    """What the documents say to a turn: the words, the turn's path (trace), the passages used."""

    text: str
    path: str  # "knowledge:source" | "knowledge:answer" | "knowledge:unknown"
    used: tuple[Passage, ...] = ()


# -- the desk ------------------------------------------------------------------------------------
class KnowledgeDesk:
    """The dialogue's one way into the knowledge base: search, the documents, and what each
    user's last answer was taken from (for "where does that come from?"). Read-only.

    The store is opened by `open_store` and used on ONE worker thread of its own: a SQLite
    connection belongs to the thread that opened it, the embedder loads for seconds on first
    use, and neither may stall the engine's loop."""

    def __init__(
        self, open_store: Callable[[], KnowledgeSearch], settings: KnowledgeTalkSettings | None = None
    ) -> None:
        self.settings = settings or KnowledgeTalkSettings()
        self._open = open_store
        self._store: KnowledgeSearch | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="knowledge")
        self._last: dict[str, tuple[Passage, ...]] = {}

    def _opened(self) -> KnowledgeSearch:  # on the worker thread only
        if self._store is None:
            self._store = self._open()
        return self._store

    async def _on_worker(self, work: Callable[[KnowledgeSearch], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._worker, lambda: work(self._opened()))

    async def open(self) -> None:
        """Open the store now (the node's start), so the first question does not wait for it."""
        await self._on_worker(lambda _store: None)

    async def search(self, question: str, k: int = 0, kb: str = "") -> list[Passage]:
        """The best passages for `question` in `kb` ("" = the configured ones), best first, at most
        `k` (0 = the setting); the store returns none under its threshold."""
        question, k = question.strip(), k or self.settings.k
        if not question:
            return []
        bases: Sequence[str | None] = [kb] if kb else (self.settings.bases or [None])

        def each(store: KnowledgeSearch) -> list[Passage]:
            return [p for base in bases for p in store.search(question, k, base)]

        found: list[Passage] = await self._on_worker(each)
        return sorted(found, key=lambda p: p.score, reverse=True)[:k]

    async def documents(self, kb: str | None = None) -> list[DocumentInfo]:
        return await self._on_worker(lambda store: store.documents(kb))

    def close(self) -> None:
        """Close the store on its thread (when it can be closed) and end the thread."""

        def close_store() -> None:
            closer = getattr(self._store, "close", None)
            if closer is not None:
                closer()

        self._worker.submit(close_store)
        self._worker.shutdown(wait=True)

    def used(self, owner: str, passages: Sequence[Passage]) -> None:
        """The passages the owner's answer of this turn was taken from ([] = none)."""
        self._last[owner] = tuple(passages)

    def last_used(self, owner: str) -> tuple[Passage, ...]:
        return self._last.get(owner, ())

    async def answer(
        self,
        owner: str,
        question: str,
        language: str,
        *,
        extractive: bool,
        now: datetime.datetime | None = None,
        record: bool = True,
    ) -> KnowledgeAnswer | None:
        """The documents' answer to a turn, or None when the turn is not theirs (the model, the
        facts or the clock answer it). "Where does that come from?" is answered in any profile;
        `extractive` (the tiny profile): a question about the place is answered with the best
        sentence of the best passage, or the don't-know line when nothing reaches the threshold.
        `record`: what was used is kept for the owner's next "where does that come from?" (a
        speculative probe records nothing)."""
        zh = language.startswith("zh") or has_cjk(question)
        if asks_for_source(question):
            return KnowledgeAnswer(source_answer(self.last_used(owner), zh), "knowledge:source")
        if record:
            self.used(owner, ())  # this turn's answer comes from somewhere else until shown otherwise
        now = now or datetime.datetime.now().astimezone()
        if not extractive or _personal_or_clock(question, language, now):
            return None
        for passage in await self.search(question):
            sentence = best_sentence(question, passage.text)
            if sentence:
                if record:
                    self.used(owner, [passage])
                return KnowledgeAnswer(sentence, "knowledge:answer", (passage,))
        if asks_for_information(question):
            return KnowledgeAnswer(dont_know(zh), "knowledge:unknown")
        return None

    async def prestart(self, owner: str, question: str, *, record: bool = True) -> str:
        """The prompt's passages for a capable model's one call (Fay's prestart route); what they
        came from is kept for "where does that come from?"."""
        found = await self.search(question)
        if record:
            self.used(owner, found)
        return prestart_block(found)
