"""Split a sentence into runs of one script, so each run gets a voice that can read it.

`cmn-latn-pinyin` reads Latin letters as pinyin and `en-us` reads Han characters as
"Chinese letter", so a mixed sentence ("我喜欢用Python编程") is spoken run by run: Han runs
by the Chinese voice, Latin runs by the English voice. Characters of neither script (digits,
spaces, punctuation) stay with the run they touch: between two runs, what follows the first
whitespace goes to the next run (Chinese is written without spaces), so "3个" is read in
Chinese and "3 apples" in English; leading ones join the first run.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Literal

from ..text.words import CJK_CHAR

Language = Literal["en", "zh"]


@dataclass(frozen=True)
class Run:
    language: Language
    text: str


def char_language(ch: str) -> Language | None:
    """ "zh" for Han characters, "en" for Latin letters, None for neutral characters."""
    code = ord(ch)
    if CJK_CHAR.match(ch):
        return "zh"
    if ch.isalpha() and code < 0x250:
        return "en"
    if ch.isalpha() and unicodedata.name(ch, "").startswith("FULLWIDTH LATIN"):
        return "en"
    return None


def split_runs(text: str, default: Language = "en") -> list[Run]:
    """Runs of one language in order; text without letters becomes one `default` run."""
    runs: list[list] = []  # [language, chars]
    leading: list[str] = []
    neutral: list[str] = []  # neutral characters since the last letter
    for ch in text:
        lang = char_language(ch)
        if lang is None:
            neutral.append(ch)
            continue
        if runs and runs[-1][0] == lang:
            runs[-1][1].extend(neutral)
        elif runs:
            gap = "".join(neutral)
            cut = next((i for i, c in enumerate(gap) if c.isspace()), len(gap))
            runs[-1][1].extend(gap[:cut])
            runs.append([lang, list(gap[cut:])])
        else:
            leading.extend(neutral)
            runs.append([lang, []])
        runs[-1][1].append(ch)
        neutral = []
    if not runs:
        return [Run(default, text)] if text.strip() else []
    runs[-1][1].extend(neutral)
    runs[0][1][:0] = leading
    return [Run(lang, "".join(chars)) for lang, chars in runs if "".join(chars).strip()]
