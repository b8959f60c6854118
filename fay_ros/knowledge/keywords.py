"""Keyword terms for the knowledge base, and BM25 on a scale a threshold can use.

The terms are memory's BM25 terms (`fay_ros.memory.evidence.tokens`, time words kept): lower
case English words without stop words, lightly folded ("hours" ~ "hour"), and for Chinese,
which is written without spaces, every character but the commonest function characters plus
every bigram ("营业时间" -> 营 业 时 间 营业 业时 时间), so no segmenter dictionary is needed
and no word one lacks is missed. Terms are made of letters, digits and ideographs only, so
they can be joined into an FTS5 or tsquery expression safely.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping

from ..memory.evidence import BM25_B, BM25_K1, bm25_idf, tokens


def keyword_terms(text: str) -> list[str]:
    """The keyword terms of `text`, in order, repeats kept (term frequency counts). NFKC
    first: full-width letters and digits ("１０ａｍ") are the ASCII ones."""
    return tokens(unicodedata.normalize("NFKC", text), time_words=True)


# A term in more than this share of the chunks is left out of the keyword candidate search
# (it still counts in the score): it matches so many chunks that ranking them all costs more
# than its weight is worth (BM25 weighs it near 0), and a rarer term of the question finds
# the same passages. Without this, search time grows with the chunks sharing any word with
# the question (docs/knowledge.md, the bench).
COMMON_TERM_SHARE = 0.05
COMMON_TERM_MIN_CHUNKS = 50
# When every term of the question is common, the rarest ones still look for candidates.
RAREST_TERMS_KEPT = 3


def term_weights(query_terms: Iterable[str], document_frequency: Mapping[str, int], documents: int) -> dict[str, float]:
    """Each distinct query term's BM25 IDF. A term no chunk has would weigh the most (IDF is
    highest at df 0), and Chinese bigrams that straddle two words ("间在" in "洗手间在几楼")
    are such terms: it tells nothing about which chunk is right, but that the question may be
    about something else, so it counts as an average term of the question."""
    unique = list(dict.fromkeys(query_terms))
    known = {t: bm25_idf(documents, document_frequency[t]) for t in unique if document_frequency.get(t)}
    absent_weight = sum(known.values()) / len(known) if known else 1.0
    return {t: known.get(t, absent_weight) for t in unique}


def candidate_terms(query_terms: Iterable[str], document_frequency: Mapping[str, int], documents: int) -> list[str]:
    """The query terms worth a keyword candidate search: those no more common than
    COMMON_TERM_SHARE of the chunks, else the rarest few present."""
    present = sorted((document_frequency[t], t) for t in dict.fromkeys(query_terms) if document_frequency.get(t))
    limit = max(COMMON_TERM_SHARE * documents, COMMON_TERM_MIN_CHUNKS)
    kept = [t for df, t in present if df <= limit]
    return kept or [t for _, t in present[:RAREST_TERMS_KEPT]]


def bm25_coverage(weights: Mapping[str, float], chunk_terms: Counter[str], average_length: float) -> float:
    """BM25 of a chunk for a query (`term_weights`) on a [0, 1] scale: each query term's BM25
    share is capped at what one occurrence earns in a chunk of average length (1.0), and the
    sum is divided by the query's total weight. 1 when every query term is in the chunk, 0
    when none is; unlike raw BM25 it is comparable across questions, so a threshold can be
    set on it."""
    best = sum(weights.values())
    if best <= 0:
        return 0.0
    length = sum(chunk_terms.values())
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / max(average_length, 1.0))
    reached = 0.0
    for term, weight in weights.items():
        tf = chunk_terms.get(term, 0)
        if tf:
            reached += weight * min(1.0, tf * (BM25_K1 + 1.0) / (tf + norm))
    return min(1.0, reached / best)
