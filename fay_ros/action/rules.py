"""The action rules table (Fay's config/action_rules.csv) and the matcher over it.

Table: UTF-8 CSV in Fay's format, header `code,behavior,affect,intensity,priority,sentimentHint,keywords`
(columns in any order; extra columns such as `note` are ignored), keywords separated by `|`.
A Fay table loads as it is. code, behavior, affect and keywords are required; a table
without an intensity, priority or sentimentHint column gets Fay's defaults for it (0.5, 0,
0) with a warning. Blank rows and rows whose first cell starts with `#` are skipped.
A row is rejected, with file and line, when:
  - code is not dotted lower-case (`guidance.invite`) or repeats an earlier row's code;
  - behavior / affect is not a lower-case word (`invite`, `be_quiet`);
  - intensity is not a number in 0..1, priority not an integer in 0..100, sentimentHint not a
    number in -2..2 (empty = 0);
  - keywords has no keyword;
  - the row has more cells than the header (usually a comma instead of `|` in keywords) or
    fewer.
Warnings (the table is still used): a behavior or affect outside the shared vocabulary
(fay_ros/common/vocabulary.py; the vocabulary is extensible through the table, but a
consumer that does not map the word falls back to its default, so a typo shows here), an
empty keyword item ("a||b", ignored as Fay does), a keyword listed twice, a keyword used by
several rules, punctuation inside a Latin keyword (ignored by word matching), a column name
that looks like a misspelt known one, a missing optional column.

sentimentHint is on Fay's sentiment scale, -2..2 (the clamp of Fay's keyword scorer): the
rule's own sentiment label. The sentence sentiment of a cue (lexicon_v1, -1..1) is compared
with it after mapping onto the same range (x2, `to_hint_scale`).

Choosing a rule: keywords are found with the shared rule (fay_ros.action.phrases: Latin
keywords on word boundaries, longest match wins, negated keywords do not count). Among the
rules with at least one keyword found, the winner is the first by the match policy:
  `priority` (fay_ros' ranking, the default):
    1. priority, higher first;
    2. match strength: total length of its distinct keywords found (characters), longer first;
    3. number of its distinct keywords found, more first;
    4. agreement of its sentimentHint with the sentence sentiment (smaller distance on -2..2);
    5. row order in the table, earlier first.
  `fay` (Fay's resolve_action_signal ranking, over the same keyword finding):
    1. number of its distinct keywords found, more first;
    2. length of its longest keyword found (characters), longer first;
    3. priority, higher first;
    4. row order in the table, earlier first.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from ..common.errors import Issue, TableError
from ..common.vocabulary import AFFECTS, BEHAVIORS
from .csv_tables import CsvRow, parse_float, read_rows
from .phrases import Hit, Negation, PhraseIndex, Prepared, ignored_punctuation, is_word_keyword, normalize

RULE_COLUMNS = ("code", "behavior", "affect", "intensity", "priority", "sentimentHint", "keywords")
REQUIRED_COLUMNS = ("code", "behavior", "affect", "keywords")
# Fay's loader (core/action_signal.py) uses these when a column is absent.
OPTIONAL_DEFAULTS = {"intensity": "0.5", "priority": "0", "sentimentHint": "0"}
KEYWORD_SEPARATOR = "|"
HINT_LIMIT = 2.0  # sentimentHint range: -2..2, Fay's sentiment scale
HINT_SCALE_NAME = "fay:-2..2"
_CODE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
_WORD = re.compile(r"^[a-z][a-z0-9_]*$")

MatchPolicy = Literal["priority", "fay"]
MATCH_POLICIES: tuple[str, ...] = get_args(MatchPolicy)
DEFAULT_POLICY: MatchPolicy = "priority"


def to_hint_scale(sentiment: float) -> float:
    """A sentence sentiment (lexicon_v1, -1..1) on the sentimentHint range (-2..2)."""
    return sentiment * HINT_LIMIT


@dataclass(frozen=True)
class ActionRule:
    code: str
    behavior: str
    affect: str
    intensity: float
    priority: int
    sentiment_hint: float
    keywords: tuple[str, ...]
    line: int = 0
    order: int = 0


@dataclass(frozen=True)
class RuleTable:
    path: Path | None
    rules: tuple[ActionRule, ...]
    warnings: tuple[str, ...] = ()

    @property
    def keyword_count(self) -> int:
        return sum(len(r.keywords) for r in self.rules)


def load_rules(path: Path | str) -> RuleTable:
    """Read and validate a rules file; raise TableError listing every bad row."""
    path = Path(path)
    issues: list[Issue] = []
    warnings: list[str] = []
    rules: list[ActionRule] = []
    codes: dict[str, int] = {}
    keyword_owner: dict[str, str] = {}
    unknown_words: set[tuple[str, str]] = set()  # reported once per table, not per row

    def word(text: str, kind: str, vocabulary: tuple[str, ...], line: int) -> str:
        problem, warning = _check_word(text, kind, vocabulary, reported=(kind, text) in unknown_words)
        if problem:
            issues.append(Issue(line, problem))
        elif warning:
            unknown_words.add((kind, text))
            warnings.append(f"{path}:{line}: {warning}")
        return text

    header_checked = False
    for row in read_rows(path, RULE_COLUMNS, issues, required=REQUIRED_COLUMNS):
        if not header_checked:
            header_checked = True
            warnings += _header_warnings(path, row)
        before = len(issues)
        if row.extra:
            issues.append(
                Issue(
                    row.line,
                    f"{len(row.extra)} cell(s) beyond the header's columns: "
                    f"{row.extra!r} (separate keywords with '|', not ',')",
                )
            )
            continue
        if row.missing:
            issues.append(Issue(row.line, f"row has {row.missing} cell(s) fewer than the header"))
            continue
        cells = {**OPTIONAL_DEFAULTS, **row.cells}
        code = cells["code"]
        if not _CODE.match(code):
            issues.append(Issue(row.line, f"code {code!r} must be dotted lower-case, e.g. 'guidance.invite'"))
        elif code in codes:
            issues.append(Issue(row.line, f"code {code!r} repeats line {codes[code]}"))
        behavior = word(cells["behavior"], "behavior", BEHAVIORS, row.line)
        affect = word(cells["affect"], "affect", AFFECTS, row.line)
        intensity = parse_float(cells["intensity"], "intensity", 0.0, 1.0, issues, row.line)
        priority = _parse_priority(cells["priority"], issues, row.line)
        hint = parse_float(cells["sentimentHint"] or "0", "sentimentHint", -HINT_LIMIT, HINT_LIMIT, issues, row.line)
        keywords = _parse_keywords(cells["keywords"], issues, warnings, row.line, path)
        # A value that did not parse is None and has added an issue; the None checks say so to the type checker.
        if len(issues) > before or intensity is None or priority is None or hint is None:
            continue
        codes[code] = row.line
        for keyword in keywords:
            owner = keyword_owner.setdefault(normalize(keyword), code)
            if owner != code:
                warnings.append(
                    f"{path}:{row.line}: keyword {keyword!r} of {code} is also a keyword of {owner}; "
                    "the match policy decides between them"
                )
        rules.append(
            ActionRule(code, behavior, affect, intensity, priority, hint, keywords, line=row.line, order=len(rules))
        )
    if not issues and not rules:
        issues.append(Issue(0, "no rules"))
    if issues:
        raise TableError(path, issues)
    return RuleTable(path, tuple(rules), tuple(warnings))


def _header_warnings(path: Path, row: CsvRow) -> list[str]:
    """Columns that look like a misspelt known one (they would be ignored), optional ones absent."""
    warnings = []
    for name in row.header:
        if name in RULE_COLUMNS or not name:
            continue
        close = [c for c in RULE_COLUMNS if c.lower() == name.lower()] or difflib.get_close_matches(
            name, RULE_COLUMNS, n=1, cutoff=0.8
        )
        if close:
            warnings.append(f"{path}:1: column {name!r} is ignored; did you mean {close[0]!r}?")
    for name, default in OPTIONAL_DEFAULTS.items():
        if name not in row.header:
            warnings.append(f"{path}:1: no {name} column: every rule gets {default} (Fay's default)")
    return warnings


def _check_word(text: str, kind: str, vocabulary: tuple[str, ...], reported: bool) -> tuple[str, str]:
    """(problem, warning) of a behavior or affect cell; empty strings when there is none."""
    if not _WORD.match(text):
        return (f"{kind} {text!r} must be one lower-case word (letters, digits, '_'), e.g. {vocabulary[1]!r}", "")
    if text in vocabulary or reported:
        return ("", "")
    close = difflib.get_close_matches(text, vocabulary, n=1, cutoff=0.75)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return (
        "",
        f"{kind} {text!r} is not in the shared vocabulary: consumers that do not map it use their default{hint}",
    )


def _parse_priority(text: str, issues: list[Issue], line: int) -> int | None:
    try:
        value = int(text)
    except ValueError:
        issues.append(Issue(line, f"priority {text!r} is not an integer"))
        return None
    if not 0 <= value <= 100:
        issues.append(Issue(line, f"priority {value} is outside 0..100"))
        return None
    return value


def _parse_keywords(text: str, issues: list[Issue], warnings: list[str], line: int, path: Path) -> tuple[str, ...]:
    items = [k.strip() for k in text.split(KEYWORD_SEPARATOR)]
    if not any(items):
        issues.append(Issue(line, "no keywords"))
        return ()
    if not all(items):
        warnings.append(f"{path}:{line}: empty keyword in {text!r} is ignored (two '|' in a row, or one at an end?)")
    seen: set[str] = set()
    keywords = []
    for keyword in filter(None, items):
        norm = normalize(keyword)
        if norm in seen:
            warnings.append(f"{path}:{line}: keyword {keyword!r} is listed twice")
            continue
        seen.add(norm)
        if is_word_keyword(norm) and ignored_punctuation(norm):
            warnings.append(
                f"{path}:{line}: keyword {keyword!r}: {ignored_punctuation(norm)!r} is ignored "
                "(Latin keywords match whole words)"
            )
        keywords.append(keyword)
    return tuple(keywords)


# The ranking keys of each policy, best first: (name, explanation, higher is better).
RANKING: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "priority": (
        ("priority", "priority", True),
        ("strength", "match strength (characters of the distinct keywords found)", True),
        ("keywords", "number of keywords found", True),
        ("hint_distance", "distance of its sentimentHint from the sentence sentiment (on -2..2)", False),
        ("row", "row order (earlier first)", False),
    ),
    "fay": (
        ("keywords", "number of keywords found", True),
        ("longest", "longest keyword found (characters)", True),
        ("priority", "priority", True),
        ("row", "row order (earlier first)", False),
    ),
}


@dataclass(frozen=True)
class RuleMatch:
    """One rule with at least one of its keywords found."""

    rule: ActionRule
    keywords: tuple[str, ...]  # as written in the table, in text order, distinct
    strength: int  # total characters of those keywords (normalised)
    longest: int = 0  # characters of the longest of them

    def keys(self, policy: str, sentiment: float) -> dict[str, float]:
        """This match's value for every ranking key of the policy (see RANKING)."""
        values = {
            "priority": self.rule.priority,
            "strength": self.strength,
            "keywords": len(self.keywords),
            "longest": self.longest,
            "row": self.rule.line,
            "hint_distance": round(abs(self.rule.sentiment_hint - to_hint_scale(sentiment)), 6),
        }
        return {name: values[name] for name, _, _ in RANKING[policy]}

    def sort_key(self, sentiment: float, policy: str = DEFAULT_POLICY) -> tuple:
        keys = self.keys(policy, sentiment)
        return tuple(-keys[name] if higher else keys[name] for name, _, higher in RANKING[policy])


@dataclass(frozen=True)
class MatchResult:
    winner: RuleMatch | None
    candidates: tuple[RuleMatch, ...]  # every matching rule, best first (winner included)
    negated: tuple[str, ...]  # keywords found but negated (they did not count)
    policy: str = DEFAULT_POLICY
    sentiment: float = 0.0  # the sentence sentiment the ranking used (lexicon_v1)

    def why(self) -> str:
        """One sentence: why the winner won (or why there is none)."""
        if self.winner is None:
            negated = f" (found but negated: {', '.join(self.negated)})" if self.negated else ""
            return f"no rule has a keyword in the text{negated}"
        code = self.winner.rule.code
        if len(self.candidates) == 1:
            return f"{code} is the only rule with a keyword found"
        runner_up = self.candidates[1]
        won, lost = self.winner.keys(self.policy, self.sentiment), runner_up.keys(self.policy, self.sentiment)
        for name, label, _ in RANKING[self.policy]:
            if won[name] != lost[name]:
                return (
                    f"{code} beats {runner_up.rule.code} on {label}: {won[name]:g} vs {lost[name]:g} "
                    f"({self.policy} policy ranks by {', then '.join(n for n, _, _ in RANKING[self.policy])})"
                )
        return f"{code} and {runner_up.rule.code} tie on every key; the earlier row wins"

    def explain(self) -> dict:
        """JSON-ready: every candidate with its ranking keys, best first, and why the winner won."""
        return {
            "policy": self.policy,
            "ranking": [label for _, label, _ in RANKING[self.policy]],
            "sentence_sentiment_on_hint_scale": round(to_hint_scale(self.sentiment), 6),
            "candidates": [
                {
                    "code": m.rule.code,
                    "line": m.rule.line,
                    "keywords": list(m.keywords),
                    "sentiment_hint": m.rule.sentiment_hint,
                    "keys": m.keys(self.policy, self.sentiment),
                }
                for m in self.candidates
            ],
            "negated_keywords": list(self.negated),
            "winner": self.winner.rule.code if self.winner else None,
            "why": self.why(),
        }


class ActionMatcher:
    """Text -> the winning rule of a table under a match policy, with the keywords that made it win."""

    def __init__(self, table: RuleTable, negation: Negation | None = None, policy: str = DEFAULT_POLICY) -> None:
        if policy not in MATCH_POLICIES:
            raise ValueError(f"match policy {policy!r} is not one of {', '.join(MATCH_POLICIES)}")
        self.table = table
        self.policy = policy
        entries = []
        for rule in table.rules:
            for keyword in rule.keywords:
                entries.append((keyword, (rule.order, keyword)))
        self._index: PhraseIndex[tuple[int, str]] = PhraseIndex.build(entries, negation)

    def hits(self, sentence: Prepared | str) -> list[Hit[tuple[int, str]]]:
        return self._index.find(sentence)

    def match(self, sentence: Prepared | str, sentiment: float = 0.0) -> MatchResult:
        found: dict[int, dict[str, None]] = {}
        negated: dict[str, None] = {}
        for hit in self._index.find(sentence):
            for order, keyword in hit.payloads:
                if hit.negated:
                    negated[keyword] = None
                else:
                    found.setdefault(order, {})[keyword] = None
        if not found:
            return MatchResult(None, (), tuple(negated), self.policy, sentiment)
        rules = self.table.rules
        candidates = []
        for order, kws in found.items():
            lengths = [len(normalize(k)) for k in kws]
            candidates.append(RuleMatch(rules[order], tuple(kws), sum(lengths), max(lengths)))
        candidates.sort(key=lambda m: m.sort_key(sentiment, self.policy))
        return MatchResult(candidates[0], tuple(candidates), tuple(negated), self.policy, sentiment)
