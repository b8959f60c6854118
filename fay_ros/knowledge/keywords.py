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
    known = {term: bm25_idf(documents, document_frequency[term]) for term in unique if document_frequency.get(term)}
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
