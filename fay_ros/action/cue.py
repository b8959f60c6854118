"""Text -> ActionCue fields: the winning rule plus sentence sentiment, or a neutral default.

Default cue (no rule matched): code "default.neutral", behavior "idle", priority 10, and an
affect that follows sentiment s (lexicon_v1 scale): s >= 0.25 -> "smile", s <= -0.25 -> "sad",
otherwise "neutral"; intensity 0.3 + 0.4 * |s| (a livelier idle for a clearly felt sentence).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from ..common.vocabulary import DEFAULT_AFFECT, DEFAULT_BEHAVIOR
from .phrases import Prepared
from .rules import ActionMatcher, MatchResult, RuleTable, load_rules
from .sentiment import SCALE_NAME, Lexicon, Sentiment, SentimentScorer, load_lexicon

DEFAULT_CODE = "default.neutral"
DEFAULT_PRIORITY = 10
DEFAULT_INTENSITY = 0.3
POSITIVE_AFFECT, NEGATIVE_AFFECT = "smile", "sad"
AFFECT_THRESHOLD = 0.25


@dataclass(frozen=True)
class Cue:
    """Everything of an ActionCue except header and utterance_id (the node adds those)."""

    code: str
    behavior: str
    affect: str
    intensity: float
    priority: int
    sentiment: float
    text: str
    matched_keywords: tuple[str, ...]
    # Explanations for people tuning tables (not on the message).
    sentiment_raw: float = 0.0
    sentiment_terms: tuple[tuple[str, float], ...] = ()
    negated_keywords: tuple[str, ...] = ()
    other_rules: tuple[str, ...] = ()
    rule_line: int = 0

    def as_dict(self) -> dict:
        """JSON-ready, in reading order: the message fields first, then the explanations."""
        return {
            "code": self.code, "behavior": self.behavior, "affect": self.affect,
            "intensity": self.intensity, "priority": self.priority,
            "sentiment": self.sentiment, "sentiment_scale": SCALE_NAME,
            "text": self.text, "matched_keywords": list(self.matched_keywords),
            "rule_line": self.rule_line, "other_rules": list(self.other_rules),
            "negated_keywords": list(self.negated_keywords),
            "sentiment_raw": self.sentiment_raw,
            "sentiment_terms": [{"term": t, "weight": w} for t, w in self.sentiment_terms],
        }


def default_affect(sentiment: float) -> str:
    if sentiment >= AFFECT_THRESHOLD:
        return POSITIVE_AFFECT
    if sentiment <= -AFFECT_THRESHOLD:
        return NEGATIVE_AFFECT
    return DEFAULT_AFFECT


@dataclass
class CueEngine:
    """A rules table and a lexicon, ready to turn sentences into cues."""

    rules: RuleTable
    lexicon: Lexicon
    matcher: ActionMatcher = field(init=False)
    scorer: SentimentScorer = field(init=False)

    def __post_init__(self) -> None:
        self.matcher = ActionMatcher(self.rules, self.lexicon.negation)
        self.scorer = SentimentScorer(self.lexicon)

    @classmethod
    def from_files(cls, rules_path: Path | str, lexicon_path: Path | str) -> "CueEngine":
        return cls(load_rules(rules_path), load_lexicon(lexicon_path))

    def cue(self, text: str) -> Cue:
        prepared = Prepared.of(text)
        sentiment = self.scorer.score(prepared)
        result = self.matcher.match(prepared, sentiment.value)
        return build_cue(text, sentiment, result)


class _Explanation(TypedDict):
    """The explanation fields of a Cue, passed as keywords."""

    sentiment_raw: float
    sentiment_terms: tuple[tuple[str, float], ...]
    negated_keywords: tuple[str, ...]
    other_rules: tuple[str, ...]


def build_cue(text: str, sentiment: Sentiment, result: MatchResult) -> Cue:
    s = sentiment.value
    explain = _Explanation(
        sentiment_raw=sentiment.raw,
        sentiment_terms=tuple((t.term, t.weight) for t in sentiment.terms),
        negated_keywords=result.negated,
        other_rules=tuple(m.rule.code for m in result.candidates[1:]),
    )
    if result.winner is None:
        return Cue(DEFAULT_CODE, DEFAULT_BEHAVIOR, default_affect(s), round(DEFAULT_INTENSITY + 0.4 * abs(s), 3),
                   DEFAULT_PRIORITY, s, text, (), **explain)
    rule = result.winner.rule
    return Cue(rule.code, rule.behavior, rule.affect, rule.intensity, rule.priority, s, text,
               result.winner.keywords, rule_line=rule.line, **explain)


def transcript_cue_id(sec: int, nanosec: int) -> str:
    """utterance_id of the cue of a Transcript: its header stamp, `transcript:<sec>.<nanosec:09>`."""
    return f"transcript:{sec}.{nanosec:09d}"
