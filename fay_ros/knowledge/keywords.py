"""Keyword terms that work for Chinese as well as English, and BM25 over them.

Chinese is written without spaces, so splitting on spaces finds no words in it. A run of CJK
ideographs gives its overlapping character bigrams ("营业时间" -> 营业 业时 时间), the usual
segmenter-free indexing of Chinese (no dictionary to keep, and no word a dictionary lacks is
missed); a single ideograph between punctuation is kept as it is. Latin text gives its
lower-case words without a short list of stop words, with a light plural folding
("hours" ~ "hour"). Terms are made of letters, digits and ideographs only, so they can be
joined into an FTS5 or tsquery expression safely.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping

from ..text.words import CJK_IDEOGRAPHS

_TOKEN = re.compile(f"([{CJK_IDEOGRAPHS}]+)|([a-z0-9]+)")
# The commonest English function words: they match everything, so they only add noise.
STOP_WORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have how i if in "
    "into is it its me my of on or our so than that the their them then there these they this "
    "to was we were what when where which who whom why will with would you your".split()
)

# BM25's usual constants (Robertson): term-frequency saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75


def _fold(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def keyword_terms(text: str) -> list[str]:
    """The keyword terms of `text`, in order, repeats kept (term frequency counts)."""
    text = unicodedata.normalize("NFKC", text).lower()
    terms: list[str] = []
    for cjk, latin in _TOKEN.findall(text):
        if cjk:
            if len(cjk) == 1:
                terms.append(cjk)
            else:
                terms.extend(cjk[i : i + 2] for i in range(len(cjk) - 1))
        elif latin not in STOP_WORDS:
            terms.append(_fold(latin))
    return terms


def idf(document_frequency: int, documents: int) -> float:
    """BM25's inverse document frequency, never negative (a term in most chunks weighs ~0)."""
    return math.log(1.0 + (documents - document_frequency + 0.5) / (document_frequency + 0.5))


def bm25_coverage(
    query_terms: Iterable[str],
    chunk_terms: Counter[str],
    document_frequency: Mapping[str, int],
    documents: int,
    average_length: float,
) -> float:
    """BM25 of a chunk for a query on a [0, 1] scale: each query term's BM25 share is capped
    at what one occurrence earns in a chunk of average length (1.0), and the sum is divided by
    the query's total IDF. 1 when every query term is in the chunk, 0 when none is; unlike
    raw BM25 it is comparable across questions, so a threshold can be set on it."""
    unique = set(query_terms)
    if not unique or documents <= 0:
        return 0.0
    length = sum(chunk_terms.values())
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / max(average_length, 1.0))
    known = {term: idf(document_frequency[term], documents) for term in unique if document_frequency.get(term)}
    # A term no chunk has would weigh the most (IDF is highest at df 0), and Chinese bigrams
    # that straddle two words ("间在" in "洗手间在几楼") are such terms: it tells which chunk is
    # right nothing, but that the question may be about something else, so it counts as an
    # average term of the question.
    absent_weight = sum(known.values()) / len(known) if known else 1.0
    reached = best = 0.0
    for term in unique:
        weight = known.get(term, absent_weight)
        best += weight
        tf = chunk_terms.get(term, 0)
        if tf:
            reached += weight * min(1.0, tf * (BM25_K1 + 1.0) / (tf + norm))
    return min(1.0, reached / best) if best > 0 else 0.0
