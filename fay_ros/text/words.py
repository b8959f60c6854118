"""Text helpers shared by every package: the one definition of a CJK (Han) character, and the
one way to split a transcript into its words (`spoken_words`).

"CJK" here means the Han ideographs Chinese is written in (and Japanese kanji): the CJK
Unified Ideographs block, Extension A, the Compatibility Ideographs, Extensions B to H with
the Compatibility Ideographs Supplement, and 〇 (U+3007, the ideographic zero of dates such
as 二〇二四). Not in it: CJK punctuation (。，), Kana, Hangul, radicals, and the Yijing
hexagram symbols (U+4DC0-U+4DFF, which sit between Extension A and the main block).

Pure Python, no ROS.
"""

from __future__ import annotations

import re

# The ranges, for building a regex character class together with other characters
# (e.g. f"[{CJK_IDEOGRAPHS}A-Za-z]" for a name written in Han characters or Latin letters).
CJK_IDEOGRAPHS = "\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U000323af"
CJK_CHAR = re.compile(f"[{CJK_IDEOGRAPHS}]")


def has_cjk(text: str) -> bool:
    """True when `text` holds at least one CJK ideograph."""
    return CJK_CHAR.search(text) is not None


# Where a transcript's words part: spaces and sentence or clause punctuation, Latin and CJK.
_WORD_BREAK = re.compile(r"[\s,，。.!！?？、;；]+")
_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


def spoken_words(text: str) -> list[str]:
    """The words of a transcript, lower case, without punctuation ("Mm-hm, yeah!" -> ["mmhm",
    "yeah"]; "等一下，我" -> ["等一下", "我"]); a hyphen or an apostrophe joins, it does not part."""
    words = (_NOT_WORD.sub("", w) for w in _WORD_BREAK.split(text.lower()))
    return [w for w in words if w]


def and_list(items: list[str]) -> str:
    """ "tea", "tea and cake", "tea, cake and jam": English words listed as they are said."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# How a recogniser writes what people say: "ive got", "im", "dont", a lower-case "i", "um" mid-sentence
_SPOKEN_FORMS = (
    (re.compile(r"\b(?:um+|uh+|erm|er)\b,?\s*", re.I), ""),
    # a chat laugh or shrug is no word of the sentence ("I hate jazz lol": not "jazz lol")
    (re.compile(r"\s*\b(?:lol|lmao|rofl|haha(?:ha)*|hehe|xd|tbh|idk)\b[.!]*", re.I), ""),
    (re.compile(r"\bi\b"), "I"),
    (re.compile(r"\bive\b", re.I), "I've"),
    (re.compile(r"\bmy names\b", re.I), "my name's"),
    (re.compile(r"\bim\b", re.I), "I'm"),
    (re.compile(r"\b(don|doesn|didn|isn|wasn|aren|weren|haven|hasn|wouldn|couldn|shouldn)t\b", re.I), r"\1't"),
    (re.compile(r"\bcant\b", re.I), "can't"),
    # "whens ezra's birthday", "whats my name": the question word's 's
    (re.compile(r"\b(what|when|where|how|who|that|there)s\b", re.I), r"\1's"),
    (re.compile(r"\bwont\b", re.I), "won't"),
)


def as_written(text: str) -> str:
    """English words as a reader of sentences expects them written (a recogniser's "ive got",
    "im", "dont", "cant", a lower-case "i", an "um" mid-sentence, a "lol"); Chinese is left as it
    is, and the English of a line that mixes both is written so too ("hi, im sam, 我在上海教英语")."""
    if has_cjk(text):
        return "".join(
            part if has_cjk(part) or not re.search(r"[A-Za-z]", part) else as_written(part)
            for part in _CJK_RUNS.split(text)
        )
    for pattern, written in _SPOKEN_FORMS:
        text = pattern.sub(written, text)
    return text


# runs of Chinese characters and full-width punctuation (the rest of a mixed line is English)
_CJK_RUNS = re.compile(r"([\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+)")
