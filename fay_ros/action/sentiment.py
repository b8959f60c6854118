"""Sentiment of a sentence from an editable lexicon (Fay's keyword scorer, made exact).

Fay's local fallback (fay_core `__analyze_sentiment_by_keywords`): four keyword lists
weighted +2 / +1 / -1 / -2, summed; "?" "!" "~" lift the score by 0.3, an ellipsis lowers it
by 0.3; the result is clamped. fay_ros keeps that and fixes what the original leaves open:

- Words are found with the shared matching rule (fay_ros.action.phrases): the longest word
  wins, so overlapping words never double count ("太好了" is +2 once, not "太好了" + "好").
- A negated word counts with the opposite sign ("不开心" = -2, "not bad" = +1).
- A word may have weight 0: a guard that only stops a shorter word inside it from counting
  ("好奇" is not "好", "不好意思" is not "不好").
- Each punctuation term counts once if present anywhere, however often it repeats.

Scale (ActionCue.SENTIMENT_SCALE = "lexicon_v1:-1..1"): the raw sum divided by 4 and clamped
to -1..1. Fay clamps its raw score to ±2; lexicon_v1 clamps after scaling instead, so one
strong word gives 0.5 and two reach the end of the scale.

Lexicon file (config/sentiment_lexicon.csv), header `kind,term,weight`:
  word     a word or phrase; weight -2, -1, 0, 1 or 2
  punct    a punctuation mark or sequence; weight -1..1 (Fay: 0.3 / -0.3)
  negator  a negation word ("不", "not"); no weight. Also used by the action rule matcher.
  degree   a CJK degree word that may stand between a negator and its word ("很", "太"); no weight
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..common.errors import Issue, TableError
from .csv_tables import parse_float, read_rows
from .phrases import Negation, PhraseIndex, Prepared, normalize

SCALE_NAME = "lexicon_v1:-1..1"
SCALE_DIVISOR = 4.0
LEXICON_COLUMNS = ("kind", "term", "weight")
WORD_WEIGHTS = (-2, -1, 0, 1, 2)
NEGATION_FACTOR = -1.0


@dataclass(frozen=True)
class Lexicon:
    path: Path | None
    words: dict[str, int]  # term (as written) -> weight
    punctuation: dict[str, float]
    negation: Negation

    @property
    def summary(self) -> str:
        return (
            f"{len(self.words)} words, {len(self.punctuation)} punctuation terms, "
            f"{len(self.negation.cjk_negators) + len(self.negation.latin_negators)} negators"
        )


@dataclass(frozen=True)
class SentimentTerm:
    term: str
    weight: float  # contribution after negation
    negated: bool = False


@dataclass(frozen=True)
class Sentiment:
    raw: float
    terms: tuple[SentimentTerm, ...]

    @property
    def value(self) -> float:
        """On the lexicon_v1 scale, -1..1."""
        return max(-1.0, min(1.0, self.raw / SCALE_DIVISOR))


def load_lexicon(path: Path | str) -> Lexicon:
    """Read and validate a lexicon file; raise TableError listing every bad line."""
    path = Path(path)
    issues: list[Issue] = []
    words: dict[str, int] = {}
    punctuation: dict[str, float] = {}
    negators: list[str] = []
    degree: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    for row in read_rows(path, LEXICON_COLUMNS, issues):
        if row.extra:
            issues.append(
                Issue(row.line, f"{len(row.extra)} cell(s) beyond the header's columns (an unquoted comma in a term?)")
            )
            continue
        kind, term, weight = (row.cells.get(c, "") for c in LEXICON_COLUMNS)
        kind = kind.lower()
        if not term:
            issues.append(Issue(row.line, "empty term"))
            continue
        key = (kind, normalize(term).strip())
        if key in seen:
            issues.append(Issue(row.line, f"duplicate {kind} {term!r} (first on line {seen[key]})"))
            continue
        seen[key] = row.line
        if kind == "word":
            try:
                value = int(weight)
            except ValueError:
                value = None
            if value not in WORD_WEIGHTS:
                issues.append(
                    Issue(
                        row.line,
                        f"word {term!r}: weight {weight!r} must be one of {', '.join(str(w) for w in WORD_WEIGHTS)}",
                    )
                )
                continue
            words[term] = value
        elif kind == "punct":
            punct_weight = parse_float(weight, f"punct {term!r}: weight", -1.0, 1.0, issues, row.line)
            if punct_weight is not None:
                punctuation[term] = punct_weight
        elif kind in ("negator", "degree"):
            if weight:
                issues.append(Issue(row.line, f"{kind} {term!r} takes no weight (got {weight!r})"))
                continue
            (negators if kind == "negator" else degree).append(term)
        else:
            issues.append(Issue(row.line, f"kind {kind!r} is not one of word, punct, negator, degree"))
    if not issues and not words:
        issues.append(Issue(0, "no words (rows of kind 'word')"))
    if issues:
        raise TableError(path, issues)
    return Lexicon(path, words, punctuation, Negation.from_words(negators, degree))


class SentimentScorer:
    """Scores sentences with one lexicon; cost grows with the sentence, not the lexicon."""

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon
        self._index: PhraseIndex[tuple[str, int]] = PhraseIndex.build(
            ((term, (term, weight)) for term, weight in lexicon.words.items()), lexicon.negation
        )
        self._punctuation = [(normalize(term), term, weight) for term, weight in lexicon.punctuation.items()]

    def score(self, sentence: Prepared | str) -> Sentiment:
        prepared = sentence if isinstance(sentence, Prepared) else Prepared.of(sentence)
        terms: list[SentimentTerm] = []
        raw = 0.0
        for hit in self._index.find(prepared):
            term, weight = hit.payloads[0]
            if weight == 0:
                continue
            contribution = weight * NEGATION_FACTOR if hit.negated else float(weight)
            raw += contribution
            terms.append(SentimentTerm(term, contribution, hit.negated))
        for norm, term, punct_weight in self._punctuation:
            if norm in prepared.norm:
                raw += punct_weight
                terms.append(SentimentTerm(term, punct_weight))
        return Sentiment(round(raw, 6), tuple(terms))
