"""Fay's retrieve() as a per-node Python loop: the executable reference the vectorised scorer
(fay_ros.memory.retrieval.OwnerIndex) is tested against, and the baseline of bench_memory.
Test and benchmark code only; the companion never runs it."""

from __future__ import annotations

import numpy as np

from fay_ros.memory.retrieval import DEFAULT_DECAY_PER_HOUR, Weights


def naive_scores(
    nodes: list[dict],
    embeddings: dict[str, list[float]],
    query_vec: list[float],
    now: float,
    weights: Weights,
    decay_per_hour: float = DEFAULT_DECAY_PER_HOUR,
    n: int = 10,
) -> list[tuple[str, float]]:
    """Fay's retrieve(): one Python pass per component over dicts of nodes, then a full sort.

    `nodes` are dicts with node_id, content, importance, last_retrieved; `embeddings` maps
    content -> vector (Fay keys embeddings by content). Kept as the benchmark baseline.
    """

    def cos_sim(a, b):
        return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))

    def normalise(d: dict) -> dict:
        if not d:
            return d
        lo, hi = min(d.values()), max(d.values())
        if hi - lo <= 1e-12:
            return {k: 0.5 for k in d}
        return {k: (v - lo) / (hi - lo) for k, v in d.items()}

    recency = {nd["node_id"]: decay_per_hour ** (max(now - nd["last_retrieved"], 0.0) / 3600.0) for nd in nodes}
    importance = {nd["node_id"]: nd["importance"] for nd in nodes}
    relevance = {}
    for nd in nodes:
        relevance[nd["node_id"]] = cos_sim(embeddings[nd["content"]], query_vec)
    recency, importance, relevance = normalise(recency), normalise(importance), normalise(relevance)
    master = {
        k: (weights.recency * recency[k] + weights.relevance * relevance[k] + weights.importance * importance[k])
        / weights.total
        for k in recency
    }
    return sorted(master.items(), key=lambda kv: kv[1], reverse=True)[:n]
