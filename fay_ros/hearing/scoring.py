"""Word and character error rates with the normalisation a listener would accept.

English (WER over words): lower case, punctuation and hyphens removed, numbers read out
("10" = "ten", "9th" = "ninth"), a few spoken forms of abbreviations ("Mr." = "mister"), British
spellings as American ones ("colour" = "color", "theatre" = "theater": the 1,700-word list of
OpenAI's Whisper English normaliser, from the `whisper-normalizer` package; LibriVox readings
come with Project Gutenberg's British spellings, and Whisper writes American ones).
Chinese (CER over characters): punctuation and spaces removed, Traditional folded to Simplified
(OpenCC), Arabic and Chinese numerals folded together ("9点" = "九点", "两" = "二").
Both: hesitations ("um", "uh", "hmm", 嗯, 呃) and a corpus's annotations ("[laughter]", "<unk>",
"(noise)", "[笑]") are not counted on either side: transcripts of spontaneous speech write them,
Whisper leaves them out, and a listener would not call that a mistake (Whisper's own English
normaliser drops them too).

`score(reference, hypothesis)` picks the measure from the reference (mostly Chinese characters:
CER, else WER); `Score`s add up, so a corpus total is the sum of its clips' errors over the sum
of their reference lengths. The same file gives `max_repeats`, how often a phrase comes back
to back, for the tests that look for repetition loops.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
).split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
ORDINAL = {
    "one": "first",
    "two": "second",
    "three": "third",
    "five": "fifth",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}
ABBREVIATIONS = {"mr": "mister", "mrs": "missus", "dr": "doctor", "st": "saint", "vs": "versus", "ok": "okay"}


@lru_cache(maxsize=1)
def _american_spellings() -> dict[str, str]:
    """British spelling -> American (Whisper's English normaliser's list)."""
    from whisper_normalizer.english import EnglishSpellingNormalizer

    return EnglishSpellingNormalizer().mapping


@dataclass(frozen=True)
class Score:
    errors: int  # substitutions + deletions + insertions
    length: int  # reference tokens (words or characters)
    unit: str = "word"  # "word" (WER) or "char" (CER)

    @property
    def rate(self) -> float:
        return self.errors / self.length if self.length else float(self.errors > 0)

    def __add__(self, other: Score) -> Score:
        unit = self.unit if self.unit == other.unit else "mixed"
        return Score(self.errors + other.errors, self.length + other.length, unit)


def is_chinese(text: str) -> bool:
    """Mostly Chinese characters (the reference decides between CER and WER)."""
    letters = [c for c in text if c.isalnum()]
    return bool(letters) and sum(bool(_CJK.match(c)) for c in letters) * 2 >= len(letters)


# -- English --------------------------------------------------------------------------------
def _cardinal(n: int) -> str:
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else " " + ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return ONES[n // 100] + " hundred" + ("" if rest == 0 else " " + _cardinal(rest))
    for size, name in ((10**9, "billion"), (10**6, "million"), (1000, "thousand")):
        if n >= size:
            rest = n % size
            return _cardinal(n // size) + " " + name + ("" if rest == 0 else " " + _cardinal(rest))
    raise AssertionError(n)


def number_words(digits: str) -> str:
    """A digit string read out: years as years ("1961" = "nineteen sixty one"), a leading zero
    digit by digit, else the cardinal."""
    if digits.startswith("0") and len(digits) > 1 or len(digits) > 12:
        return " ".join(ONES[int(d)] for d in digits)
    n = int(digits)
    if 1100 <= n <= 2099 and n % 1000 >= 10 and len(digits) == 4 and not 2000 <= n < 2010:
        hi, lo = divmod(n, 100)
        return _cardinal(hi) + " " + ("hundred" if lo == 0 else ("oh " + ONES[lo] if lo < 10 else _cardinal(lo)))
    return _cardinal(n)


def _ordinal(words: str) -> str:
    head, _, last = words.rpartition(" ")
    if last in ORDINAL:
        last = ORDINAL[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return (head + " " + last).strip()


# What a transcript of spontaneous speech writes and a recogniser leaves out (Whisper does), so
# neither side is counted for it: hesitation sounds, and a corpus's annotations of noises and
# unclear words ("[laughter]", "<unk>", "(noise)", "{breath}", "[笑]").
_ANNOTATION = re.compile(r"\[[^\]]*\]|<[^>]*>|\{[^}]*\}|\((?:noise|laughter|laughs|cough|breath|inaudible|unk)\)", re.I)
FILLERS_EN = frozenset("um umm uh uhh uhm er erm hmm hm mm mmm mhm ah eh".split())
_FILLERS_ZH = re.compile(r"[嗯呃]")


def normalize_english(text: str) -> list[str]:
    text = _ANNOTATION.sub(" ", unicodedata.normalize("NFKC", text)).lower()
    text = text.replace("%", " percent ").replace("&", " and ")
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)  # 10,000
    text = re.sub(r"(\d+)\.(\d+)", lambda m: f"{m.group(1)} point {' '.join(m.group(2))}", text)
    text = re.sub(r"\b(\d+)(st|nd|rd|th)\b", lambda m: _ordinal(number_words(m.group(1))), text)
    text = re.sub(r"\d+", lambda m: f" {number_words(m.group(0))} ", text)
    text = re.sub(r"[’'`]", "", text)  # don't = dont on both sides
    text = re.sub(r"[^\w\s]|_", " ", text)  # punctuation and hyphens
    american = _american_spellings()
    return [american.get(w, w) for w in (ABBREVIATIONS.get(w, w) for w in text.split()) if w not in FILLERS_EN]


# -- Chinese --------------------------------------------------------------------------------
CN_DIGITS = "零一二三四五六七八九"
CN_FOLD = str.maketrans({"〇": "零", "两": "二", "兩": "二", "倆": "俩", "幺": "一"})


def _cn_cardinal(n: int) -> str:
    if n < 10:
        return CN_DIGITS[n]
    if n >= 10**8:
        hi, lo = divmod(n, 10**8)
        return _cn_cardinal(hi) + "亿" + ("" if lo == 0 else ("零" if lo < 10**7 else "") + _cn_cardinal(lo))
    if n >= 10**4:
        hi, lo = divmod(n, 10**4)
        return _cn_cardinal(hi) + "万" + ("" if lo == 0 else ("零" if lo < 1000 else "") + _cn_cardinal(lo))
    out, zero = "", False
    for value, unit in ((1000, "千"), (100, "百"), (10, "十")):
        d, n = divmod(n, value)
        if d:
            out += ("零" if zero else "") + CN_DIGITS[d] + unit
            zero = False
        elif out:
            zero = True
    if n:
        out += ("零" if zero else "") + CN_DIGITS[n]
    return out[1:] if out.startswith("一十") else out  # 十五, not 一十五


def _digits(digits: str) -> str:
    return "".join(CN_DIGITS[int(d)] for d in digits)


def chinese_number(digits: str, after: str = "") -> str:
    """A digit string as it is read in Chinese: a year or a code digit by digit, else the
    cardinal ("15" = "十五")."""
    if after == "年" or (digits.startswith("0") and len(digits) > 1) or len(digits) > 9:
        return _digits(digits)
    return _cn_cardinal(int(digits))


@lru_cache(maxsize=1)
def _t2s():
    import opencc

    return opencc.OpenCC("t2s")


def to_simplified(text: str) -> str:
    return _t2s().convert(text)


def normalize_chinese(text: str) -> list[str]:
    """The characters a CER counts: Simplified, numerals folded, no punctuation or spaces
    (Latin words inside Chinese count as one token each, lower-cased)."""
    text = _FILLERS_ZH.sub("", to_simplified(_ANNOTATION.sub(" ", unicodedata.normalize("NFKC", text))))
    text = text.translate(CN_FOLD)
    text = re.sub(r"(\d+)\.(\d+)", lambda m: chinese_number(m.group(1)) + "点" + _digits(m.group(2)), text)
    text = re.sub(r"\d+", lambda m: chinese_number(m.group(0), m.string[m.end() : m.end() + 1]), text)
    return re.findall(r"[a-z]+|[^\W\d_a-z]", text.lower())


# -- distance -------------------------------------------------------------------------------
def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Levenshtein distance over tokens (substitution, deletion, insertion all cost 1)."""
    if not ref:
        return len(hyp)
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1]


def tokens(text: str, chinese: bool) -> list[str]:
    return normalize_chinese(text) if chinese else normalize_english(text)


def score(reference: str, hypothesis: str, chinese: bool | None = None) -> Score:
    """WER (English and other spaced languages) or CER (Chinese, chosen from the reference)."""
    chinese = is_chinese(reference) if chinese is None else chinese
    ref, hyp = tokens(reference, chinese), tokens(hypothesis, chinese)
    return Score(edit_distance(ref, hyp), len(ref), "char" if chinese else "word")


def max_repeats(text: str, min_len: int = 2) -> int:
    """The most times a phrase of at least `min_len` tokens comes back to back in `text` ("fail
    again fail again fail again" = 3), after normalisation; 1 when nothing repeats."""
    toks = tokens(text, is_chinese(text))
    best = 1
    for n in range(min_len, len(toks) // 2 + 1):
        for start in range(len(toks) - 2 * n + 1):
            count = 1
            while toks[start + count * n : start + (count + 1) * n] == toks[start : start + n]:
                count += 1
            best = max(best, count)
    return best
