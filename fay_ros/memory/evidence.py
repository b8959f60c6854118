"""Hybrid recall over long histories: the evidence for a question (issue 35).

`search(...)` ranks the owner's heard turns (the turn log) and memories (observations and
reflections, current and superseded) for a question by reciprocal-rank fusion (RRF,
Cormack et al. 2009) of:

- words: BM25 (Okapi, k1 = 1.2, b = 0.75) over `tokens()` -- English words (lower case,
  a light plural/-ing/-ed folding) and Chinese characters as unigrams + bigrams; no model.
- meaning: the cosine of the store's sentence embeddings (embeddings.make_embedder).
- time: a question about a span ("last week", "in November", "上个月", "昨天") ranks the
  turns said in it or referring to a day in it; a "when…" question favours turns that name
  a day. Days are resolved against the turn's own time when it is stored (temporal.py).
- facts: current keyed facts (one active value per key) are boosted; superseded values are
  still found, marked as history.
- recency: among what matches, later words rank higher -- strongly when the question asks
  about the present ("now", "现在").
- relatives: a question about "my sister" / "我姐姐" ranks the items that name her (the
  owner's current family:sister fact says she is Ella), so "Ella just got promoted" answers
  "what does my sister do?" though "sister" is not in it.

Every item carries its source turn ids (a turn: itself; a memory: `MemoryNode.sources`) and an
absolute date, and `Evidence.render()` puts the date in the text, so "yesterday I went hiking"
said on 2026-11-03 is recalled as "[2026-11-02] …".

`TurnIndex` keeps one owner's turns in memory (postings, vectors, days as numpy arrays),
appended to as turns are heard. BM25 is written here rather than taken from bm25s: bm25s
builds a static index, and a companion adds a turn every few seconds to an index of up to
100k turns (a rebuild per turn); the scoring is the textbook formula.

Pure Python + numpy, no ROS.
"""

from __future__ import annotations

import datetime
import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .model import CONFIRMED, SUPERSEDED, MemoryNode
from .self_facts import name_of_relative, relations_in
from .temporal import Window, asks_current, asks_when, question_window
from .turn_log import ASSISTANT, Turn

RRF_K = 60.0
MAX_TWINS = 5  # sources added for the same sentence said again
SUPERSEDED_FACTOR = 0.9
CANDIDATES = 200
# Fusion weights of the rank lists (one list per signal; see module docstring).
W_WORDS = 1.0
W_MEANING = 1.0
W_TIME = 1.5
W_FACTS = 0.5
W_RECENT = 0.3
W_RECENT_CURRENT = 1.0
W_DATED = 0.5
W_HOP = 0.7
# The items that name the relative the question speaks of ("my sister" → Ella), by relevance.
W_ENTITY = 1.5
# A second hop adds at most this many rare words of the first hop's best items to the query.
HOP_TERMS = 4
HOP_FROM = 3
# The companion's own words are weaker evidence about the owner than the owner's.
ASSISTANT_FACTOR = 0.6

_EN_STOP = frozenset(
    "a an the and or but if of to in on at for with from by about as is am are was were be been being do does "
    "did i me my mine you your we our us he him his she her it its they them their this that these those what "
    "which who whom whose when where why how there here so than then too very just also not no yes can could "
    "would should will shall may might must have has had having up down out over again any some all each "
    "tell know remember please ok okay oh".split()
)
# Time words: the time signal reads them (temporal.py); as words they match any small talk.
# A document's words keep them (`tokens(time_words=True)`: "open on weekend mornings").
_EN_TIME_WORDS = frozenset(
    "now currently lately recently these days still anymore again really honestly yesterday today tomorrow "
    "tonight ago last next week weekend month year morning evening".split()
)
_ZH_STOP = frozenset("的了吗呢吧啊呀嘛我你他她它们是在有和就都也还这那么什么怎样哪个一不很要说过")
# Bigrams with one of these are question or function words ("做什", "什么", "叫什"), not topics.
_ZH_BIGRAM_STOP = frozenset("的了吗呢吧啊呀嘛么什哪谁几怎")
# Time words, read by the time signal instead (temporal.py).
_ZH_TIME_WORDS = frozenset(
    "现在 目前 如今 最近 近来 昨天 今天 明天 前天 后天 上周 这周 本周 下周 "
    "上个 个月 星期 礼拜 时候 上午 下午 晚上".split()
)
_TOKEN_RE = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]+")


# British spellings as the self-facts write them (American): "favourite" finds "User's favorite …".
_SPELLING = {"favourite": "favorite", "colour": "color", "flavour": "flavor", "neighbour": "neighbor"}


def _fold(word: str) -> str:
    """A light English folding: British spelling, plural -s/-es, -ing, -ed (hikes/hiking/hiked → hik)."""
    word = _SPELLING.get(word, word)
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    if len(word) > 4 and word.endswith("e"):
        return word[:-1]
    return word


def tokens(text: str, time_words: bool = False) -> list[str]:
    """BM25 terms: English words (stop words dropped, folded) and, for Chinese, every
    character but the commonest function characters, plus every bigram. Time words are
    left to the time signal unless `time_words` (the knowledge base's documents and
    questions: "What time do you open in the morning?")."""
    out: list[str] = []
    for run in _TOKEN_RE.findall((text or "").lower()):
        if run[0] < "\u3400":
            if run not in _EN_STOP and (time_words or run not in _EN_TIME_WORDS):
                out.append(_fold(run))
            continue
        out += [ch for ch in run if ch not in _ZH_STOP]
        out += [
            run[i : i + 2]
            for i in range(len(run) - 1)
            if run[i] not in _ZH_BIGRAM_STOP
            and run[i + 1] not in _ZH_BIGRAM_STOP
            and (time_words or run[i : i + 2] not in _ZH_TIME_WORDS)
        ]
    return out


@functools.lru_cache(maxsize=65_536)
def cached_tokens(text: str) -> tuple[str, ...]:
    """`tokens` of a memory's content, remembered (memories are searched again and again)."""
    return tuple(tokens(text))


# Okapi BM25's usual constants: term-frequency saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75


def bm25_idf(documents: int, document_frequency: int) -> float:
    """Okapi BM25's inverse document frequency of a term in `document_frequency` of
    `documents` documents, never negative."""
    return math.log(1.0 + (documents - document_frequency + 0.5) / (document_frequency + 0.5))


class BM25:
    """Okapi BM25 over documents added one at a time (postings per term)."""

    def __init__(self, k1: float = BM25_K1, b: float = BM25_B) -> None:
        self.k1, self.b = k1, b
        self._postings: dict[str, tuple[list[int], list[int]]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._lengths: list[int] = []
        self._length_array = np.zeros(0, dtype=np.float32)

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, terms: Sequence[str]) -> int:
        doc = len(self._lengths)
        counts: dict[str, int] = {}
        for term in terms:
            counts[term] = counts.get(term, 0) + 1
        for term, tf in counts.items():
            docs, tfs = self._postings.setdefault(term, ([], []))
            docs.append(doc)
            tfs.append(tf)
            self._arrays.pop(term, None)
        self._lengths.append(len(terms))
        return doc

    def _posting(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        cached = self._arrays.get(term)
        if cached is None:
            found = self._postings.get(term)
            if found is None:
                return None
            cached = (np.asarray(found[0], dtype=np.int64), np.asarray(found[1], dtype=np.float32))
            self._arrays[term] = cached
        return cached

    def idf(self, term: str) -> float:
        """The term's inverse document frequency (0 for a term in no document)."""
        found = self._postings.get(term)
        if not found:
            return 0.0
        return bm25_idf(len(self._lengths), len(found[0]))

    def score_texts(self, docs: Sequence[Sequence[str]], query_terms: Iterable[str]) -> np.ndarray:
        """BM25 of other documents (their terms) with this index's statistics (idf, average length)."""
        out = np.zeros(len(docs), dtype=np.float32)
        if not self._lengths or not docs:
            return out
        avgdl = max(sum(self._lengths) / len(self._lengths), 1e-9)
        weights = {t: self.idf(t) for t in dict.fromkeys(query_terms)}
        weights = {t: w for t, w in weights.items() if w > 0}
        if not weights:
            return out
        for d, terms in enumerate(docs):
            norm = self.k1 * (1 - self.b + self.b * len(terms) / avgdl)
            for term, w in weights.items():
                tf = terms.count(term)
                if tf:
                    out[d] += w * tf * (self.k1 + 1) / (tf + norm)
        return out

    def scores(self, query_terms: Iterable[str]) -> np.ndarray:
        n = len(self._lengths)
        out = np.zeros(n, dtype=np.float32)
        if not n:
            return out
        if self._length_array.size != n:
            self._length_array = np.asarray(self._lengths, dtype=np.float32)
        lengths = self._length_array
        norm = self.k1 * (1 - self.b + self.b * lengths / max(float(lengths.mean()), 1e-9))
        for term in dict.fromkeys(query_terms):
            posting = self._posting(term)
            if posting is None:
                continue
            docs, tf = posting
            df = docs.size
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            out[docs] += idf * tf * (self.k1 + 1) / (tf + norm[docs])
        return out


def _ordinal(iso: str) -> int:
    return datetime.date.fromisoformat(iso).toordinal()


class TurnIndex:
    """One owner's turns for hybrid recall: BM25 postings, vectors and days, append-only."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.turns: list[Turn] = []
        self.bm25 = BM25()
        self._vectors = np.zeros((256, dim), dtype=np.float32)
        self._said = np.zeros(256, dtype=np.int64)  # ordinal of the day said
        self._user = np.zeros(256, dtype=bool)
        self._dated = np.zeros(256, dtype=bool)  # its words name a day
        self._times = np.zeros(256, dtype=np.float64)
        self._date_turn: list[int] = []
        self._date_day: list[int] = []
        self._date_arrays: tuple[np.ndarray, np.ndarray] | None = None
        self.ids: dict[str, int] = {}
        self.stamp: tuple[int, float] = (0, 0.0)

    def __len__(self) -> int:
        return len(self.turns)

    def _grow(self, need: int) -> None:
        cap = self._said.size
        if need <= cap:
            return
        cap = max(need, cap * 2)
        self._vectors = np.resize(self._vectors, (cap, self.dim))
        for name in ("_said", "_user", "_dated", "_times"):
            old = getattr(self, name)
            new = np.zeros(cap, dtype=old.dtype)
            new[: old.size] = old
            setattr(self, name, new)

    def add(self, turn: Turn, vector: np.ndarray) -> None:
        if turn.turn_id in self.ids:
            return
        i = len(self.turns)
        self._grow(i + 1)
        self.turns.append(turn)
        self.ids[turn.turn_id] = i
        self.bm25.add(tokens(turn.text))
        self._vectors[i] = vector
        self._said[i] = datetime.date.fromisoformat(turn.day).toordinal()
        self._user[i] = turn.speaker != ASSISTANT
        self._dated[i] = bool(turn.dates)
        self._times[i] = turn.time
        for iso in turn.dates:
            self._date_turn.append(i)
            self._date_day.append(_ordinal(iso))
        self._date_arrays = None

    def in_window(self, window: Window) -> np.ndarray:
        n = len(self.turns)
        lo, hi = window.first.toordinal(), window.last.toordinal()
        said = self._said[:n]
        mask = (said >= lo) & (said <= hi)
        if self._date_arrays is None:
            self._date_arrays = (np.asarray(self._date_turn, dtype=np.int64), np.asarray(self._date_day, np.int64))
        turn_of, day_of = self._date_arrays
        if turn_of.size:
            hit = turn_of[(day_of >= lo) & (day_of <= hi)]
            mask[hit] = True
            # A turn that names another day is about that day, not about when it was said.
            named_elsewhere = np.zeros(n, dtype=bool)
            named_elsewhere[turn_of[(day_of < lo) | (day_of > hi)]] = True
            named_elsewhere[hit] = False
            mask &= ~named_elsewhere
        return mask

    def meaning(self, query_vector: np.ndarray) -> np.ndarray:
        return self._vectors[: len(self.turns)] @ np.asarray(query_vector, dtype=np.float32)

    def user_mask(self) -> np.ndarray:
        return self._user[: len(self.turns)]

    def dated_mask(self) -> np.ndarray:
        return self._dated[: len(self.turns)]

    def times(self) -> np.ndarray:
        return self._times[: len(self.turns)]


@dataclass
class Evidence:
    """One recalled item: a heard turn or a memory, with its evidence and absolute date."""

    kind: str  # "turn" or "memory"
    id: str  # the turn id, or the memory id
    text: str
    date: str  # ISO day it is about: the first day its words name, else the day said / written
    said: str  # ISO day it was said (a turn) or written (a memory)
    time: float  # when it was said / written, seconds since the epoch
    sources: list[str] = field(default_factory=list)  # turn ids it rests on
    score: float = 0.0
    speaker: str = ""  # a turn: "user" / "assistant"
    session: str = ""
    status: str = ""  # a memory: confirmed / superseded
    key: str = ""  # a memory: its fact key, if any
    dates: list[str] = field(default_factory=list)  # every day its words name

    @property
    def current(self) -> bool:
        return self.kind == "memory" and self.status == CONFIRMED

    def render(self) -> str:
        """One line for a prompt or a person: the absolute date(s) first."""
        days = ", ".join(self.dates) if self.dates else self.date
        head = f"[{days}]" + (f" (said {self.said})" if self.dates and self.dates != [self.said] else "")
        if self.kind == "turn":
            who = "User" if self.speaker != ASSISTANT else "Assistant"
            return f"{head} {who}: {self.text}"
        note = " (superseded: an earlier value)" if self.status == SUPERSEDED else ""
        return f"{head} {self.text}{note}"

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "id": self.id,
            "text": self.text,
            "date": self.date,
            "said": self.said,
            "dates": list(self.dates),
            "time": self.time,
            "sources": list(self.sources),
            "score": round(float(self.score), 6),
            "speaker": self.speaker,
            "session": self.session,
            "status": self.status,
            "key": self.key,
            "rendered": self.render(),
        }


def turn_evidence(turn: Turn, score: float = 0.0) -> Evidence:
    return Evidence(
        kind="turn",
        id=turn.turn_id,
        text=turn.text,
        date=turn.dates[0] if turn.dates else turn.day,
        said=turn.day,
        time=turn.time,
        sources=[turn.turn_id],
        score=score,
        speaker=turn.speaker,
        session=turn.session,
        dates=list(turn.dates),
    )


def node_evidence(node: MemoryNode, turns_by_id: dict[str, Turn], score: float = 0.0) -> Evidence:
    said = datetime.datetime.fromtimestamp(node.created).date().isoformat() if node.created else ""
    dates: list[str] = []
    for turn_id in node.sources:
        turn = turns_by_id.get(turn_id)
        if turn is not None:
            dates += [d for d in turn.dates if d not in dates]
    return Evidence(
        kind="memory",
        id=node.id,
        text=node.content,
        date=dates[0] if dates else said,
        said=said,
        time=node.created,
        sources=list(node.sources),
        score=score,
        session=node.source_session,
        status=node.status,
        key=node.key,
        dates=dates,
    )


def _ranks(scores: np.ndarray, mask: np.ndarray | None, k: int) -> list[int]:
    """Indexes of the best k positive scores (within mask), best first."""
    if scores.size == 0:
        return []
    s = scores if mask is None else np.where(mask, scores, 0.0)
    positive = int(np.count_nonzero(s > 0))
    if not positive:
        return []
    k = min(k, positive)
    top = np.argpartition(-s, k - 1)[:k] if k < s.size else np.arange(s.size)
    top = top[s[top] > 0]
    return [int(i) for i in top[np.argsort(-s[top], kind="stable")]]


@dataclass(frozen=True)
class SearchWeights:
    words: float = W_WORDS
    meaning: float = W_MEANING
    time: float = W_TIME
    facts: float = W_FACTS
    recent: float = W_RECENT
    recent_current: float = W_RECENT_CURRENT
    dated: float = W_DATED
    assistant_factor: float = ASSISTANT_FACTOR
    hop: float = W_HOP
    entity: float = W_ENTITY


HYBRID = SearchWeights()
# The baselines: one signal alone, every other weight off (and the assistant's words as the owner's).
_ALONE = dict(time=0.0, facts=0.0, recent=0.0, recent_current=0.0, dated=0.0, assistant_factor=1.0, hop=0.0, entity=0.0)
WORDS_ONLY = SearchWeights(meaning=0.0, **_ALONE)
MEANING_ONLY = SearchWeights(words=0.0, **_ALONE)


def search(
    index: TurnIndex,
    nodes: Sequence[MemoryNode],
    node_vectors: np.ndarray | None,
    query: str,
    query_vector: np.ndarray,
    now: float,
    n: int = 10,
    weights: SearchWeights = HYBRID,
    include_nodes: bool = True,
) -> list[Evidence]:
    """The best n items for `query` among the index's turns and `nodes` (with their vectors,
    rows in order), fused as the module docstring says; `now` is the reference time of the
    question's time words.

    Items are numbered jointly: turns 0..T-1, then memories T..T+M-1, and each signal is one
    ranked list over both (memories are scored by BM25 with the turns' statistics, so a word's
    weight is the same in both)."""
    terms = tokens(query)
    window = question_window(query, now)
    current = asks_current(query)
    when = asks_when(query)
    n_turns = len(index)
    use_nodes = include_nodes and bool(nodes) and node_vectors is not None
    node_list = list(nodes) if use_nodes else []
    total = n_turns + len(node_list)
    if not total:
        return []
    node_terms = [cached_tokens(node.content) for node in node_list]

    def word_scores(query_terms: list[str]) -> np.ndarray:
        out = np.zeros(total, dtype=np.float32)
        if n_turns:
            out[:n_turns] = index.bm25.scores(query_terms)
        if node_list:
            out[n_turns:] = index.bm25.score_texts(node_terms, query_terms)
        return out

    words = word_scores(terms) if weights.words > 0 or weights.time > 0 or weights.hop > 0 else np.zeros(total)
    meaning = np.zeros(total, dtype=np.float32)
    if weights.meaning > 0 or weights.time > 0 or weights.recent > 0 or weights.recent_current > 0:
        qv = np.asarray(query_vector, dtype=np.float32)
        if n_turns:
            meaning[:n_turns] = index.meaning(qv)
        if node_list and node_vectors is not None:
            meaning[n_turns:] = node_vectors @ qv
        meaning = np.maximum(meaning, 0.0)

    fused: dict[int, float] = {}

    def rrf(items: Iterable[int], weight: float) -> None:
        if weight <= 0:
            return
        for rank, item in enumerate(items):
            fused[item] = fused.get(item, 0.0) + weight / (RRF_K + rank + 1)

    word_rank = _ranks(words, None, CANDIDATES)
    meaning_rank = _ranks(meaning, None, CANDIDATES)
    rrf(word_rank, weights.words)
    rrf(meaning_rank, weights.meaning)
    relevance = words / (float(words.max()) or 1.0) + meaning / (float(meaning.max()) or 1.0)
    best_relevant = _ranks(relevance, None, 20)
    # time: a question about a span ranks the turns said in it or naming a day in it
    if window is not None and weights.time > 0 and n_turns:
        mask = np.zeros(total, dtype=bool)
        mask[:n_turns] = index.in_window(window)
        rrf(_ranks(relevance + 1e-6, mask, CANDIDATES), weights.time)
    # a "when" question: the relevant turns that name a day
    if when and weights.dated > 0 and n_turns:
        dated = index.dated_mask()
        rrf((i for i in word_rank[:50] if i < n_turns and dated[i]), weights.dated)
    # facts: the current value of a key, among the relevant
    if node_list and weights.facts > 0:
        facts = [i for i in best_relevant if i >= n_turns and node_list[i - n_turns].key]
        rrf((i for i in facts if node_list[i - n_turns].status == CONFIRMED), weights.facts)
    # recency among the most relevant: later words first (strongly for "now", "still", "现在")
    times = np.concatenate([index.times(), np.asarray([node.created for node in node_list], dtype=np.float64)])
    rrf(sorted(best_relevant, key=lambda i: -times[i]), weights.recent_current if current else weights.recent)
    # an entity hop: "my sister" in the question is Ella in the owner's current facts, so the
    # turns about Ella ("Ella just got promoted") answer it even where "sister" is not said
    names = _relatives_named(query, node_list)
    if names and weights.entity > 0:
        naming = word_scores(names) > 0
        rrf(_ranks(relevance + 1e-6, naming, CANDIDATES), weights.entity)
    # a second hop: the rare words of the first hop's best items ("my sister" -> "Ella")
    if fused and weights.hop > 0 and n_turns:
        first = sorted(fused, key=lambda i: -fused[i])[:HOP_FROM]
        seen = set(terms)
        extra: dict[str, float] = {}
        for i in first:
            for term in cached_tokens(_text(index, node_list, i)):
                if term not in seen and term not in extra:
                    extra[term] = index.bm25.idf(term)
        rare = sorted((t for t, idf in extra.items() if idf > 0), key=lambda t: -extra[t])[:HOP_TERMS]
        if rare:
            rrf(_ranks(word_scores(terms + rare), None, CANDIDATES), weights.hop)
    if not fused:
        return []
    user = index.user_mask()
    for i in list(fused):
        if i < n_turns and not user[i]:
            fused[i] *= weights.assistant_factor
        elif i >= n_turns and node_list[i - n_turns].status == SUPERSEDED:
            fused[i] *= SUPERSEDED_FACTOR  # history: found, but after the current value
    # One item per distinct text: a sentence said again is the same evidence, resting on each
    # time it was said.
    best: list[tuple[int, float]] = []
    twins: dict[str, list[str]] = {}
    for i in sorted(fused, key=lambda i: -fused[i]):
        key = ("t:" if i < n_turns else "m:") + _text(index, node_list, i).strip().casefold()
        if key in twins:
            if i < n_turns:
                twins[key].append(index.turns[i].turn_id)
            continue
        if len(best) < n:  # past n, only the twins of what is kept are still collected
            twins[key] = []
            best.append((i, fused[i]))
    turns_by_id = {}
    for i, _score in best:
        if i >= n_turns:
            for turn_id in node_list[i - n_turns].sources:
                pos = index.ids.get(turn_id)
                if pos is not None:
                    turns_by_id[turn_id] = index.turns[pos]
    out = []
    for i, score in best:
        if i < n_turns:
            turn = index.turns[i]
            item = turn_evidence(turn, score)
            item.sources += twins.get("t:" + turn.text.strip().casefold(), [])[:MAX_TWINS]
            out.append(item)
        else:
            out.append(node_evidence(node_list[i - n_turns], turns_by_id, score))
    return out


def _relatives_named(query: str, nodes: Sequence[MemoryNode]) -> list[str]:
    """The name terms of the relatives the query speaks of ("my sister" → the current
    family:sister fact's name), from the owner's keyed facts among `nodes`."""
    relations = relations_in(query)
    if not relations:
        return []
    names: list[str] = []
    for node in nodes:
        family, _, relation = node.key.partition(":")
        if family == "family" and relation in relations and node.status == CONFIRMED:
            names += tokens(name_of_relative(node.content))
    return names


def _text(index: TurnIndex, nodes: Sequence[MemoryNode], i: int) -> str:
    n_turns = len(index)
    return index.turns[i].text if i < n_turns else nodes[i - n_turns].content
