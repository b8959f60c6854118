"""Fay's question-answer table (`config/qa.csv`: 问题,答案,脚本), answered before any LLM.

- Column 1 holds one or more phrasings of a question, separated by `|` (or `；`/`;`).
- Column 2 is the answer, spoken verbatim.
- Column 3 (optional, Fay's "script") is NEVER executed. At most it names a tool from the
  engine's allow-list (`tool:<name>` or `<name>`); the engine may then run that registered
  tool and put its result where the answer says `{{result}}`. Anything else there is
  ignored with a warning.

Matching is fuzzy: both sides are normalised (case, width, punctuation and spaces removed)
and compared with difflib's ratio; the best row at or above the threshold wins. There is no
substring rule on purpose: "你好" must not answer "你好，明天天气怎么样"; list the phrasings
a row should answer as alternatives instead.
"""

from __future__ import annotations

import csv
import difflib
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ..common.errors import Issue, TableError, read_table_text

HEADER_WORDS = {"问题", "question", "q"}
_DROP = re.compile(r"[\W_]+", re.UNICODE)
_ALTERNATIVES = re.compile(r"[|;；]")
# difflib ratio needed for a hit: "你叫什么名字呀" ~ "你叫什么名字" (0.92) matches, while
# "how are you" ~ "who are you" (0.89) must not.
DEFAULT_THRESHOLD = 0.9


class QaTableError(TableError):
    """A malformed qa.csv; the message names the file and the line of every bad row."""


@dataclass(frozen=True)
class QaEntry:
    questions: tuple[str, ...]
    answer: str
    script: str
    line: int


@dataclass(frozen=True)
class QaMatch:
    entry: QaEntry
    score: float
    matched: str

    @property
    def answer(self) -> str:
        return self.entry.answer


def normalize(text: str) -> str:
    return _DROP.sub("", unicodedata.normalize("NFKC", text).lower())


class QaTable:
    def __init__(self, entries: list[QaEntry], threshold: float = DEFAULT_THRESHOLD, source: str = "<memory>") -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"qa threshold must be in (0, 1], got {threshold}")
        self.entries = entries
        self.threshold = threshold
        self.source = source
        self._index = [(normalize(q), q, e) for e in entries for q in e.questions]

    @classmethod
    def load(cls, path: str | Path, threshold: float = DEFAULT_THRESHOLD) -> QaTable:
        path = Path(path)
        text = read_table_text(path, error=QaTableError)
        return cls(parse_rows(text, str(path)), threshold, str(path))

    def match(self, text: str) -> QaMatch | None:
        query = normalize(text)
        if not query:
            return None
        best: QaMatch | None = None
        for norm, original, entry in self._index:
            if not norm:
                continue
            score = 1.0 if norm == query else difflib.SequenceMatcher(None, norm, query).ratio()
            if score >= self.threshold and (best is None or score > best.score):
                best = QaMatch(entry, score, original)
        return best


def parse_rows(text: str, source: str) -> list[QaEntry]:
    """The rows of a qa table; every malformed row is reported (one QaTableError), not only
    the first, so a person fixes them in one go."""
    entries: list[QaEntry] = []
    issues: list[Issue] = []
    reader = csv.reader(text.splitlines())
    for row in reader:
        line = reader.line_num
        cells = [c.strip() for c in row]
        if not any(cells) or cells[0].startswith("#"):
            continue
        if not entries and cells[0].lower() in HEADER_WORDS:
            continue
        if len(cells) < 2:
            issues.append(Issue(line, f"expected '问题,答案[,脚本]', got {len(cells)} column(s): {row!r}"))
            continue
        if len(cells) > 3:
            issues.append(
                Issue(
                    line,
                    f"expected at most 3 columns (问题,答案,脚本), got {len(cells)}; quote answers that contain commas",
                )
            )
            continue
        questions = tuple(q.strip() for q in _ALTERNATIVES.split(cells[0]) if q.strip())
        if not questions:
            issues.append(Issue(line, "empty question"))
            continue
        if not cells[1]:
            issues.append(Issue(line, f"empty answer for {cells[0]!r}"))
            continue
        entries.append(QaEntry(questions, cells[1], cells[2] if len(cells) > 2 else "", line))
    if issues:
        raise QaTableError(source, issues)
    return entries


def script_tool_name(script: str) -> str:
    """The tool a script cell names (`tool:<name>` or a bare identifier), else ""."""
    script = script.strip()
    if script.startswith("tool:"):
        script = script[5:].strip()
    return script if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", script) else ""
