"""The action rules table (Fay's config/action_rules.csv) and the matcher over it.

Table: UTF-8 CSV, header `code,behavior,affect,intensity,priority,sentimentHint,keywords`
(columns in any order; extra columns such as `note` are ignored), keywords separated by `|`.
Blank rows and rows whose first cell starts with `#` are skipped. A row is rejected, with
file and line, when:
  - code is not dotted lower-case (`guidance.invite`) or repeats an earlier row's code;
  - behavior / affect is not a word of the shared vocabulary (fay_ros/common/vocabulary.py:
    every consumer maps exactly those words, so a typo would silently do nothing);
  - intensity is not a number in 0..1, priority not an integer in 0..100, sentimentHint not a
    number in -1..1 (empty = 0, on the ActionCue sentiment scale);
  - keywords is empty or has an empty item ("a||b");
  - the row has more cells than the header (usually a comma instead of `|` in keywords).
Warnings (the table is still used): a keyword listed twice, a keyword used by several rules,
punctuation inside a Latin keyword (ignored by word matching).

Choosing a rule: keywords are found with the shared rule (fay_ros.action.phrases: longest
match wins, negated keywords do not count). Among the rules with at least one keyword found,
the winner is the first by
  1. priority, higher first;
  2. match strength: total length of its distinct keywords found (characters), longer first;
  3. number of its distinct keywords found, more first;
  4. agreement of its sentimentHint with the sentence sentiment (smaller |hint - sentiment|);
  5. row order in the table, earlier first.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..common.errors import Issue, TableError
from ..common.vocabulary import AFFECTS, BEHAVIORS
from .phrases import Hit, Negation, PhraseIndex, Prepared, ignored_punctuation, is_word_keyword, normalize
from .tables import parse_float, read_rows

RULE_COLUMNS = ("code", "behavior", "affect", "intensity", "priority", "sentimentHint", "keywords")
KEYWORD_SEPARATOR = "|"
_CODE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")


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
    for row in read_rows(path, RULE_COLUMNS, issues):
        before = len(issues)
        if row.extra:
            issues.append(Issue(row.line, f"{len(row.extra)} cell(s) beyond the header's columns: "
                                          f"{row.extra!r} (separate keywords with '|', not ',')"))
            continue
        if row.missing:
            issues.append(Issue(row.line, f"row has {row.missing} cell(s) fewer than the header"))
            continue
        cells = row.cells
        code = cells["code"]
        if not _CODE.match(code):
            issues.append(Issue(row.line, f"code {code!r} must be dotted lower-case, e.g. 'guidance.invite'"))
        elif code in codes:
            issues.append(Issue(row.line, f"code {code!r} repeats line {codes[code]}"))
        behavior, affect = cells["behavior"], cells["affect"]
        if behavior not in BEHAVIORS:
            issues.append(Issue(row.line, f"behavior {behavior!r} is not in the shared vocabulary "
                                          f"({', '.join(BEHAVIORS)})"))
        if affect not in AFFECTS:
            issues.append(Issue(row.line, f"affect {affect!r} is not in the shared vocabulary "
                                          f"({', '.join(AFFECTS)})"))
        intensity = parse_float(cells["intensity"], "intensity", 0.0, 1.0, issues, row.line)
        priority = _parse_priority(cells["priority"], issues, row.line)
        hint_text = cells["sentimentHint"] or "0"
        hint = parse_float(hint_text, "sentimentHint", -1.0, 1.0, issues, row.line)
        keywords = _parse_keywords(cells["keywords"], issues, warnings, row.line, path)
        # A value that did not parse is None and has added an issue; the None checks say so to the type checker.
        if len(issues) > before or intensity is None or priority is None or hint is None:
            continue
        codes[code] = row.line
        for keyword in keywords:
            owner = keyword_owner.setdefault(normalize(keyword), code)
            if owner != code:
                warnings.append(f"{path}:{row.line}: keyword {keyword!r} of {code} is also a keyword of {owner}; "
                                "priority decides between them")
        rules.append(ActionRule(code, behavior, affect, intensity, priority, hint, keywords,
                                line=row.line, order=len(rules)))
    if not issues and not rules:
        issues.append(Issue(0, "no rules"))
    if issues:
        raise TableError(path, issues)
    return RuleTable(path, tuple(rules), tuple(warnings))


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
    if not text:
        issues.append(Issue(line, "no keywords"))
        return ()
    items = [k.strip() for k in text.split(KEYWORD_SEPARATOR)]
    if any(not k for k in items):
        issues.append(Issue(line, f"empty keyword in {text!r} (two '|' in a row, or one at an end?)"))
        return ()
    seen: set[str] = set()
    keywords = []
    for keyword in items:
        norm = normalize(keyword)
        if norm in seen:
            warnings.append(f"{path}:{line}: keyword {keyword!r} is listed twice")
            continue
        seen.add(norm)
        if is_word_keyword(norm) and ignored_punctuation(norm):
            warnings.append(f"{path}:{line}: keyword {keyword!r}: {ignored_punctuation(norm)!r} is ignored "
                            "(Latin keywords match whole words)")
        keywords.append(keyword)
    return tuple(keywords)


@dataclass(frozen=True)
class RuleMatch:
    """One rule with at least one of its keywords found."""

    rule: ActionRule
    keywords: tuple[str, ...]          # as written in the table, in text order, distinct
    strength: int

    def sort_key(self, sentiment: float) -> tuple:
        return (-self.rule.priority, -self.strength, -len(self.keywords),
                abs(self.rule.sentiment_hint - sentiment), self.rule.order)


@dataclass(frozen=True)
class MatchResult:
    winner: RuleMatch | None
    candidates: tuple[RuleMatch, ...]   # every matching rule, best first (winner included)
    negated: tuple[str, ...]            # keywords found but negated (they did not count)


class ActionMatcher:
    """Text -> the winning rule of a table, with the keywords that made it win."""

    def __init__(self, table: RuleTable, negation: Negation | None = None) -> None:
        self.table = table
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
            return MatchResult(None, (), tuple(negated))
        rules = self.table.rules
        candidates = [
            RuleMatch(rules[order], tuple(kws), sum(len(normalize(k)) for k in kws))
            for order, kws in found.items()
        ]
        candidates.sort(key=lambda m: m.sort_key(sentiment))
        return MatchResult(candidates[0], tuple(candidates), tuple(negated))
