"""Text -> ActionCue fields: the winning rule plus sentence sentiment, or a neutral default.

A cue carries the winning rule's sentimentHint (`sentiment_hint`, Fay's -2..2 scale; 0 when
no rule matched) beside the sentence sentiment (lexicon_v1, -1..1).

Two options of the CueEngine (node parameters `match_policy` and `no_match`):
- match policy: `priority` (default) or `fay`, how the winning rule is ranked (see rules.py);
- no match: `idle` (default) gives the default cue below; `none` gives no cue at all
  (`CueEngine.cue` returns None), as Fay sends no Action when no rule matches.

Default cue (no rule matched): code "default.neutral", behavior "idle", priority 10, and an
affect that follows sentiment s (lexicon_v1 scale): s >= 0.25 -> "smile", s <= -0.25 -> "sad",
otherwise "neutral"; intensity 0.3 + 0.4 * |s| (a livelier idle for a clearly felt sentence).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict, get_args

from ..common.vocabulary import DEFAULT_AFFECT, DEFAULT_BEHAVIOR
from .phrases import Prepared
from .rules import DEFAULT_POLICY, HINT_SCALE_NAME, ActionMatcher, MatchResult, RuleTable, load_rules
from .sentiment import SCALE_NAME, Lexicon, Sentiment, SentimentScorer, load_lexicon

NoMatch = Literal["idle", "none"]
NO_MATCH_OPTIONS: tuple[str, ...] = get_args(NoMatch)
DEFAULT_NO_MATCH: NoMatch = "idle"

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
    sentiment_hint: float = 0.0  # the winning rule's sentimentHint (-2..2); 0 without a rule
    # Explanations for people tuning tables (not on the message).
    sentiment_raw: float = 0.0
    sentiment_terms: tuple[tuple[str, float], ...] = ()
    negated_keywords: tuple[str, ...] = ()
    other_rules: tuple[str, ...] = ()
    rule_line: int = 0
    match_policy: str = DEFAULT_POLICY

    def as_dict(self) -> dict:
        """JSON-ready, in reading order: the message fields first, then the explanations."""
        return {
            "code": self.code,
            "behavior": self.behavior,
            "affect": self.affect,
            "intensity": self.intensity,
            "priority": self.priority,
            "sentiment": self.sentiment,
            "sentiment_scale": SCALE_NAME,
            "sentiment_hint": self.sentiment_hint,
            "sentiment_hint_scale": HINT_SCALE_NAME,
            "text": self.text,
            "matched_keywords": list(self.matched_keywords),
            "match_policy": self.match_policy,
            "rule_line": self.rule_line,
            "other_rules": list(self.other_rules),
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


@dataclass(frozen=True)
class Analysis:
    """Everything the engine found in one sentence: the cue (None: no cue) and how it came about."""

    text: str
    cue: Cue | None
    sentiment: Sentiment
    match: MatchResult


@dataclass
class CueEngine:
    """A rules table and a lexicon, ready to turn sentences into cues.

    policy: how the winning rule is ranked (`priority` or `fay`, see fay_ros.action.rules).
    no_match: `idle` (a default cue when no rule matches) or `none` (no cue: `cue` returns None).
    """

    rules: RuleTable
    lexicon: Lexicon
    policy: str = DEFAULT_POLICY
    no_match: str = DEFAULT_NO_MATCH
    matcher: ActionMatcher = field(init=False)
    scorer: SentimentScorer = field(init=False)

    def __post_init__(self) -> None:
        if self.no_match not in NO_MATCH_OPTIONS:
            raise ValueError(f"no_match {self.no_match!r} is not one of {', '.join(NO_MATCH_OPTIONS)}")
        self.matcher = ActionMatcher(self.rules, self.lexicon.negation, self.policy)
        self.scorer = SentimentScorer(self.lexicon)

    @classmethod
    def from_files(
        cls,
        rules_path: Path | str,
        lexicon_path: Path | str,
        policy: str = DEFAULT_POLICY,
        no_match: str = DEFAULT_NO_MATCH,
    ) -> CueEngine:
        return cls(load_rules(rules_path), load_lexicon(lexicon_path), policy, no_match)

    def with_tables(self, rules: RuleTable, lexicon: Lexicon) -> CueEngine:
        """The same options over other tables (a reload)."""
        return CueEngine(rules, lexicon, self.policy, self.no_match)

    def analyse(self, text: str) -> Analysis:
        prepared = Prepared.of(text)
        sentiment = self.scorer.score(prepared)
        result = self.matcher.match(prepared, sentiment.value)
        cue = None if result.winner is None and self.no_match == "none" else build_cue(text, sentiment, result)
        return Analysis(text, cue, sentiment, result)

    def cue(self, text: str) -> Cue | None:
        """The cue of a sentence; None when no rule matches and no_match is `none`."""
        return self.analyse(text).cue


class _Explanation(TypedDict):
    """The explanation fields of a Cue, passed as keywords."""

    sentiment_raw: float
    sentiment_terms: tuple[tuple[str, float], ...]
    negated_keywords: tuple[str, ...]
    other_rules: tuple[str, ...]
    match_policy: str


def build_cue(text: str, sentiment: Sentiment, result: MatchResult) -> Cue:
    s = sentiment.value
    explain = _Explanation(
        sentiment_raw=sentiment.raw,
        sentiment_terms=tuple((t.term, t.weight) for t in sentiment.terms),
        negated_keywords=result.negated,
        other_rules=tuple(m.rule.code for m in result.candidates[1:]),
        match_policy=result.policy,
    )
    if result.winner is None:
        return Cue(
            DEFAULT_CODE,
            DEFAULT_BEHAVIOR,
            default_affect(s),
            round(DEFAULT_INTENSITY + 0.4 * abs(s), 3),
            DEFAULT_PRIORITY,
            s,
            text,
            (),
            **explain,
        )
    rule = result.winner.rule
    return Cue(
        rule.code,
        rule.behavior,
        rule.affect,
        rule.intensity,
        rule.priority,
        s,
        text,
        result.winner.keywords,
        rule.sentiment_hint,
        rule_line=rule.line,
        **explain,
    )


def transcript_cue_id(sec: int, nanosec: int) -> str:
    """utterance_id of the cue of a Transcript: its header stamp, `transcript:<sec>.<nanosec:09>`."""
    return f"transcript:{sec}.{nanosec:09d}"
