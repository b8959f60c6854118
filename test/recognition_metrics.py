"""Word and character error rates for measuring recognition accuracy (tests only)."""

from __future__ import annotations

import re
import unicodedata


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            cur = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
            prev = cur
    return row[-1]


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch if unicodedata.category(ch)[0] in "LN" or ch.isspace() else " " for ch in text)


def words(text: str) -> list[str]:
    return re.split(r"\s+", _clean(text).strip()) if _clean(text).strip() else []


def chars(text: str) -> list[str]:
    return [ch for ch in _clean(text) if not ch.isspace()]


def error_rate(pairs: list[tuple[str, str]], unit: str) -> float:
    """Corpus WER (unit 'word') or CER (unit 'char') over (reference, hypothesis) pairs."""
    split = words if unit == "word" else chars
    errors = sum(edit_distance(split(r), split(h)) for r, h in pairs)
    total = sum(len(split(r)) for r, _ in pairs)
    return errors / max(total, 1)
