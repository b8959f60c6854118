"""Finding keywords in mixed Chinese / English text: the one matching rule of the action tables
and the sentiment lexicon.

The rule, in four parts:

1. Normalisation. Text and keywords are compared after Unicode NFKC and lower-casing (so
   full-width "ＯＫ！" equals "ok!", "…" equals "...") and curly apostrophes become "'".
2. Two kinds of keyword.
   - A keyword with any CJK character (or with no letter/digit at all, e.g. "~") matches as a
     substring: "谢谢" is found in "谢谢你".
   - A keyword made only of Latin-script words ("hi", "thank you") matches whole words,
     case-insensitively: "hi" is not found in "this", "no" not in "know". Punctuation between
     and around its words is ignored, so "thank you" also matches "Thank, you".
3. Overlaps: forward maximum matching (正向最大匹配). Scanning from the left, at each place the
   longest keyword that starts there wins and consumes its text; a shorter keyword inside it
   is not counted ("不是" consumes "是", "你好" consumes "好", "no problem" consumes "no").
4. Negation. A found keyword is *negated* when, in the same clause, a negator precedes it:
   - CJK: a negator ("不", "没", "别", ...) ends right before the keyword, or is separated from
     it only by up to two degree words ("不太好", "不是很好"; degree words: "很", "太", "是", ...).
     Where a negator and a degree word both end at the same place, the longer wins ("特别好"
     is not negated by the "别" inside "特别").
   - Latin: a negator ("not", "no", "never", any word ending in "n't", ...) is one of the three
     words before the keyword, with no clause break (, . ; : ! ? or "but") in between
     ("not happy", "don't really like").
   A negator that is part of an earlier found keyword is used up and negates nothing after
   it ("是不是累了" is a question, not "not tired", once "是不是" is listed; "no problem,
   thanks" does not negate "thanks").
   Negated keywords are reported as such; what negation means is up to the caller (the rule
   matcher ignores them, the sentiment scorer flips their sign). A table can still match a
   negated phrase on purpose by listing it ("不是", "not bad"): being longer, it wins.

Nothing here imports ROS; the negator and degree word lists come from the lexicon file.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_CJK_RANGES = "\u2e80-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002fa1f"
_CJK = re.compile(f"[{_CJK_RANGES}]")
# A Latin-script word: letters/digits that are not CJK, with inner apostrophes ("don't").
_WORD = re.compile(f"[^\\W_{_CJK_RANGES}]+(?:'[^\\W_{_CJK_RANGES}]+)*")
# What ends a clause for Latin negation scope (after NFKC, full-width marks are ASCII).
_CLAUSE_BREAK = re.compile(r"[,.;:!?\n。、，；：！？]")
_CLAUSE_WORDS = frozenset({"but", "however", "although", "though", "yet"})
LATIN_NEGATION_WINDOW = 3
CJK_MAX_DEGREE_WORDS = 2


def normalize(text: str) -> str:
    """The form in which text and keywords are compared (see the module docstring)."""
    return unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'").replace("\u2018", "'")


def is_word_keyword(normalized: str) -> bool:
    """True for a keyword matched on word boundaries (Latin words only, no CJK)."""
    return not _CJK.search(normalized) and _WORD.search(normalized) is not None


def keyword_words(normalized: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(normalized))


def ignored_punctuation(normalized: str) -> str:
    """Characters of a word keyword that matching ignores (for a tuner's warning)."""
    rest = _WORD.sub(" ", normalized)
    return "".join(ch for ch in rest if not ch.isspace())


@dataclass(frozen=True)
class Negation:
    """Negator and degree words (from the lexicon file). Empty lists: nothing is negated."""

    cjk_negators: tuple[str, ...] = ()
    cjk_degree_words: tuple[str, ...] = ()
    latin_negators: frozenset[str] = frozenset()

    @classmethod
    def from_words(cls, negators: Iterable[str], degree_words: Iterable[str]) -> Negation:
        cjk, latin = set(), set()
        for word in negators:
            norm = normalize(word).strip()
            if is_word_keyword(norm) and len(keyword_words(norm)) == 1:
                latin.add(keyword_words(norm)[0])
            elif norm:
                cjk.add(norm)
        degree = {normalize(w).strip() for w in degree_words if normalize(w).strip()}
        by_length = lambda words: tuple(sorted(words, key=lambda w: (-len(w), w)))  # noqa: E731
        return cls(by_length(cjk), by_length(degree), frozenset(latin))

    def is_latin_negator(self, word: str) -> bool:
        return word in self.latin_negators or word.endswith("n't")


@dataclass(frozen=True)
class Prepared:
    """A sentence prepared once for several indexes: normalised text and its Latin words."""

    text: str
    norm: str
    words: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, text: str) -> Prepared:
        norm = normalize(text)
        words, spans = [], []
        for m in _WORD.finditer(norm):
            words.append(m.group())
            spans.append(m.span())
        return cls(text, norm, tuple(words), tuple(spans))


@dataclass(frozen=True)
class Hit(Generic[T]):
    """One keyword found in a sentence."""

    keyword: str  # normalised keyword as found
    start: int  # span in the normalised text
    end: int
    payloads: tuple[T, ...]
    negated: bool = False


@dataclass
class PhraseIndex(Generic[T]):
    """Keywords (each with one or more payloads) indexed for forward maximum matching.

    Substring keywords are found by looking up, at each position, only the keyword lengths
    that exist for the character there; word keywords the same way over the word sequence.
    The cost therefore grows with the sentence, not with the number of keywords.
    """

    negation: Negation = field(default_factory=Negation)

    def __post_init__(self) -> None:
        self._substrings: dict[str, list[T]] = {}
        self._substring_lengths: dict[str, tuple[int, ...]] = {}
        self._words: dict[tuple[str, ...], list[T]] = {}
        self._word_lengths: dict[str, tuple[int, ...]] = {}
        self._word_keyword: dict[tuple[str, ...], str] = {}

    @classmethod
    def build(cls, entries: Iterable[tuple[str, T]], negation: Negation | None = None) -> PhraseIndex[T]:
        index: PhraseIndex[T] = cls(negation or Negation())
        for keyword, payload in entries:
            index.add(keyword, payload)
        index.freeze()
        return index

    def add(self, keyword: str, payload: T) -> None:
        norm = normalize(keyword).strip()
        if not norm:
            raise ValueError("empty keyword")
        if is_word_keyword(norm):
            words = keyword_words(norm)
            self._words.setdefault(words, []).append(payload)
            self._word_keyword.setdefault(words, " ".join(words))
        else:
            self._substrings.setdefault(norm, []).append(payload)

    def freeze(self) -> None:
        lengths: dict[str, set[int]] = {}
        for key in self._substrings:
            lengths.setdefault(key[0], set()).add(len(key))
        self._substring_lengths = {c: tuple(sorted(ls, reverse=True)) for c, ls in lengths.items()}
        counts: dict[str, set[int]] = {}
        for words in self._words:
            counts.setdefault(words[0], set()).add(len(words))
        self._word_lengths = {w: tuple(sorted(ns, reverse=True)) for w, ns in counts.items()}
        self._frozen_substrings = {k: tuple(v) for k, v in self._substrings.items()}
        self._frozen_words = {k: tuple(v) for k, v in self._words.items()}

    def __len__(self) -> int:
        return len(self._substrings) + len(self._words)

    def find(self, sentence: Prepared | str) -> list[Hit[T]]:
        """Every keyword found, in text order, with its negation flag."""
        prepared = sentence if isinstance(sentence, Prepared) else Prepared.of(sentence)
        hits = self._find_substrings(prepared.norm)
        word_hits = self._find_words(prepared)
        if word_hits:
            hits = _merge(hits, word_hits) if hits else word_hits
        result, previous_end = [], 0
        for hit in hits:
            result.append(self._with_negation(prepared, hit, previous_end))
            previous_end = hit[1]
        return result

    def _find_substrings(self, s: str) -> list[tuple[int, int, str, tuple[T, ...], int]]:
        return [
            (i, i + length, key, payloads, -1)
            for i, length, key, payloads in _greedy_scan(s, self._frozen_substrings, self._substring_lengths)
        ]

    def _find_words(self, p: Prepared) -> list[tuple[int, int, str, tuple[T, ...], int]]:
        spans = p.spans
        return [
            (spans[j][0], spans[j + count - 1][1], self._word_keyword[key], payloads, j)
            for j, count, key, payloads in _greedy_scan(p.words, self._frozen_words, self._word_lengths)
        ]

    def _with_negation(self, p: Prepared, raw: tuple[int, int, str, tuple[T, ...], int], floor: int) -> Hit[T]:
        start, end, keyword, payloads, word_index = raw
        if word_index >= 0:
            negated = self._latin_negated(p, word_index, floor)
        else:
            negated = self._cjk_negated(p.norm, start, floor)
        return Hit(keyword, start, end, payloads, negated)

    def _cjk_negated(self, s: str, start: int, floor: int) -> bool:
        neg = self.negation
        if not neg.cjk_negators:
            return False
        pos = start
        for _ in range(CJK_MAX_DEGREE_WORDS + 1):
            # Longest match here too: "特别" (degree) beats the negator "别" inside it.
            negator = max((len(w) for w in neg.cjk_negators if s.endswith(w, floor, pos)), default=0)
            degree = max((len(w) for w in neg.cjk_degree_words if s.endswith(w, floor, pos)), default=0)
            if negator and negator >= degree:
                return True
            if not degree:
                return False
            pos -= degree
        return False

    def _latin_negated(self, p: Prepared, j: int, floor: int) -> bool:
        neg = self.negation
        for k in range(j - 1, max(j - 1 - LATIN_NEGATION_WINDOW, -1), -1):
            if p.spans[k][0] < floor:
                return False
            if _CLAUSE_BREAK.search(p.norm, p.spans[k][1], p.spans[k + 1][0]):
                return False
            word = p.words[k]
            if word in _CLAUSE_WORDS:
                return False
            if neg.is_latin_negator(word):
                return True
        return False


def _merge(a: list, b: list) -> list:
    """Combine substring and word hits; where they overlap the longer (then earlier) wins."""
    kept: list = []
    for hit in sorted(a + b, key=lambda h: (h[0], -(h[1] - h[0]))):
        if kept and hit[0] < kept[-1][1]:  # overlaps the last kept hit
            longer = hit[1] - hit[0] > kept[-1][1] - kept[-1][0]
            if longer and (len(kept) < 2 or hit[0] >= kept[-2][1]):
                kept[-1] = hit
            continue
        kept.append(hit)
    return kept


def _greedy_scan(items: Any, table: dict[Any, Any], lengths_at: dict[Any, Any]) -> list[tuple[int, int, Any, Any]]:
    """Left to right, the longest key of `table` starting at each position (lengths to try,
    longest first, come from `lengths_at[first item]`); a match skips past itself. Works
    on a string (substring keys) and on a tuple of words (word-sequence keys) alike.
    Returns (start, length, key, payloads)."""
    found = []
    i, n = 0, len(items)
    while i < n:
        for length in lengths_at.get(items[i], ()):
            if i + length > n:
                continue
            key = items[i : i + length]
            payloads = table.get(key)
            if payloads is not None:
                found.append((i, length, key, payloads))
                i += length
                break
        else:
            i += 1
    return found
