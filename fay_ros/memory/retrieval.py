"""Retrieval scoring as in Fay / Generative Agents, vectorised with numpy.

score = w_recency · recency + w_relevance · relevance + w_importance · importance

each component min-max normalised over the candidate set (a constant component becomes 0.5,
as in Fay's normalize_dict_floats), and the sum divided by the sum of the weights so the
score lies in 0..1. Recency decays exponentially with the hours since the node was last
retrieved (Fay counts time steps; a robot lives in real time, so the decay is per hour).
Relevance is the cosine between the query and node embeddings.

`OwnerIndex` keeps one owner's nodes as columns (numpy arrays) so a recall is a masked
matrix-vector product and an argpartition, not a Python loop over nodes.
Fay's per-node Python loop, the benchmark baseline and the reference the vectorised scorer
is tested against, lives with the tests (test/reference_retrieval.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .model import CANDIDATE, CONFIRMED, NODE_TYPES, STATUSES, SUPERSEDED, MemoryNode

# Fay: default [0, 1, 0.5]; the chat path uses [0.8, 0.5, 0.5] (more weight on time).
CHAT_WEIGHTS = (0.8, 0.5, 0.5)
DEFAULT_WEIGHTS = (0.0, 1.0, 0.5)
# Generative Agents' recency decay per sandbox hour.
DEFAULT_DECAY_PER_HOUR = 0.995

STATUS_CODE = {s: i for i, s in enumerate(STATUSES)}
DELETED = len(STATUSES)
TYPE_CODE = {t: i for i, t in enumerate(NODE_TYPES)}


@dataclass(frozen=True)
class Weights:
    recency: float = CHAT_WEIGHTS[0]
    relevance: float = CHAT_WEIGHTS[1]
    importance: float = CHAT_WEIGHTS[2]

    def __post_init__(self) -> None:
        values = (self.recency, self.relevance, self.importance)
        if any(v < 0 or not math.isfinite(v) for v in values) or sum(values) <= 0:
            raise ValueError(f"retrieval weights must be >= 0 with a positive sum, got {values}")

    @property
    def total(self) -> float:
        return self.recency + self.relevance + self.importance


def minmax(values: np.ndarray) -> np.ndarray:
    if values.size == 0:
        return values
    lo, hi = float(values.min()), float(values.max())
    if hi - lo <= 1e-12:
        return np.full(values.shape, 0.5, dtype=np.float64)
    return (values - lo) / (hi - lo)


def scale(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """`minmax` with the bounds given: those of a candidate set larger than `values` (the
    PostgreSQL backend scores a few hundred candidates but normalises over every match)."""
    if hi - lo <= 1e-12:
        return np.full(values.shape, 0.5, dtype=np.float64)
    return (values - lo) / (hi - lo)


def combine(recency: np.ndarray, relevance: np.ndarray, importance: np.ndarray, weights: Weights) -> np.ndarray:
    return (
        weights.recency * minmax(recency)
        + weights.relevance * minmax(relevance)
        + weights.importance * minmax(importance)
    ) / weights.total


def combine_bounded(
    recency: np.ndarray,
    relevance: np.ndarray,
    importance: np.ndarray,
    weights: Weights,
    bounds: tuple[tuple[float, float], tuple[float, float], tuple[float, float]],
) -> np.ndarray:
    """`combine` normalising each component by (lo, hi) bounds: recency, relevance, importance."""
    (r_lo, r_hi), (v_lo, v_hi), (i_lo, i_hi) = bounds
    return (
        weights.recency * scale(recency, r_lo, r_hi)
        + weights.relevance * scale(relevance, v_lo, v_hi)
        + weights.importance * scale(importance, i_lo, i_hi)
    ) / weights.total


def top_n(ids: Sequence[str], scores: np.ndarray, n: int) -> list[tuple[str, float]]:
    """(id, score) of the n best, best first; ties keep the order of `ids` (insertion order)."""
    return [(ids[i], score) for i, score in _top_positions(scores, n)]


def recency_of(now: float, last_retrieved: np.ndarray, decay_per_hour: float) -> np.ndarray:
    hours = np.maximum(now - last_retrieved, 0.0) / 3600.0
    return np.power(decay_per_hour, hours)


class OwnerIndex:
    """Column store of one owner's nodes for vectorised retrieval. Not thread-safe by itself."""

    def __init__(self, dim: int, capacity: int = 256) -> None:
        self.dim = dim
        self.count = 0
        self.ids: list[str] = []
        self.pos: dict[str, int] = {}
        self.emb = np.zeros((capacity, dim), dtype=np.float32)
        self.importance = np.zeros(capacity)
        self.created = np.zeros(capacity)
        self.last_retrieved = np.zeros(capacity)
        self.expires = np.zeros(capacity)
        self.status = np.full(capacity, DELETED, dtype=np.int8)
        self.node_type = np.zeros(capacity, dtype=np.int8)
        self._tag_rows: dict[str, list[int]] = {}
        self._tag_arrays: dict[str, np.ndarray] = {}

    def _grow(self, needed: int) -> None:
        cap = self.emb.shape[0]
        if needed <= cap:
            return
        new_cap = max(needed, cap * 2)

        def grow(arr: np.ndarray, fill) -> np.ndarray:
            out = np.full((new_cap,) + arr.shape[1:], fill, dtype=arr.dtype)
            out[:cap] = arr
            return out

        self.emb = grow(self.emb, 0)
        self.importance = grow(self.importance, 0)
        self.created = grow(self.created, 0)
        self.last_retrieved = grow(self.last_retrieved, 0)
        self.expires = grow(self.expires, 0)
        self.status = grow(self.status, DELETED)
        self.node_type = grow(self.node_type, 0)

    def add(self, node: MemoryNode, vector: np.ndarray) -> None:
        if node.id in self.pos:
            self.update(node)
            self.emb[self.pos[node.id]] = vector
            return
        self._grow(self.count + 1)
        row = self.count
        self.count += 1
        self.ids.append(node.id)
        self.pos[node.id] = row
        self.emb[row] = vector
        self.update(node)
        for tag in node.tags:
            self._tag_rows.setdefault(tag, []).append(row)
            self._tag_arrays.pop(tag, None)

    def update(self, node: MemoryNode) -> None:
        row = self.pos[node.id]
        self.importance[row] = node.importance
        self.created[row] = node.created
        self.last_retrieved[row] = node.last_retrieved
        self.expires[row] = node.expires
        self.status[row] = STATUS_CODE[node.status]
        self.node_type[row] = TYPE_CODE.get(node.node_type, 0)

    def set_status(self, node_id: str, status: str) -> None:
        row = self.pos.get(node_id)
        if row is not None:
            self.status[row] = STATUS_CODE[status]

    def add_tag(self, node_id: str, tag: str) -> None:
        row = self.pos.get(node_id)
        if row is not None and row not in self._tag_rows.get(tag, []):
            self._tag_rows.setdefault(tag, []).append(row)
            self._tag_arrays.pop(tag, None)

    def remove(self, node_id: str) -> None:
        row = self.pos.get(node_id)
        if row is not None:
            self.status[row] = DELETED

    def touch(self, node_ids: Iterable[str], when: float) -> None:
        rows = [self.pos[i] for i in node_ids if i in self.pos]
        if rows:
            self.last_retrieved[rows] = when

    def _tag_mask(self, tag: str) -> np.ndarray:
        rows = self._tag_arrays.get(tag)
        if rows is None:
            rows = np.asarray(self._tag_rows.get(tag, []), dtype=np.int64)
            self._tag_arrays[tag] = rows
        mask = np.zeros(self.count, dtype=bool)
        mask[rows] = True
        return mask

    def candidates(
        self,
        now: float,
        statuses: Iterable[str],
        tags_all: Iterable[str] = (),
        tags_any: Iterable[str] = (),
        node_types: Iterable[str] = (),
    ) -> np.ndarray:
        """Rows passing status, expiry, node type and tag filters."""
        n = self.count
        codes = [STATUS_CODE[s] for s in statuses]
        mask = np.isin(self.status[:n], codes)
        exp = self.expires[:n]
        mask &= (exp == 0) | (exp > now)
        types = [TYPE_CODE[t] for t in node_types]
        if types:
            mask &= np.isin(self.node_type[:n], types)
        for tag in tags_all:
            mask &= self._tag_mask(tag)
        tags_any = list(tags_any)
        if tags_any:
            any_mask = np.zeros(n, dtype=bool)
            for tag in tags_any:
                any_mask |= self._tag_mask(tag)
            mask &= any_mask
        return np.flatnonzero(mask)

    def score(
        self, rows: np.ndarray, query: np.ndarray | None, now: float, weights: Weights, decay_per_hour: float
    ) -> np.ndarray:
        if query is None:
            relevance = np.zeros(rows.size)
        elif rows.size * 8 < self.count:
            relevance = self.emb[rows] @ query  # few candidates: gather them
        else:
            # Most rows pass the filters: one contiguous product is far cheaper than gathering
            # the rows first (a copy of the whole matrix).
            relevance = (self.emb[: self.count] @ query)[rows]
        recency = recency_of(now, self.last_retrieved[rows], decay_per_hour)
        return combine(recency, relevance, self.importance[rows], weights)

    def top(self, rows: np.ndarray, scores: np.ndarray, n: int) -> list[tuple[str, float]]:
        return [(self.ids[rows[i]], score) for i, score in _top_positions(scores, n)]


def _top_positions(scores: np.ndarray, n: int) -> list[tuple[int, float]]:
    """Positions and scores of the n best without building an id list of every candidate."""
    if scores.size == 0 or n <= 0:
        return []
    part = np.argpartition(-scores, n - 1)[:n] if scores.size > n else np.arange(scores.size)
    order = part[np.argsort(-scores[part], kind="stable")]
    return [(int(i), float(scores[i])) for i in order]


class ScoringStore(Protocol):
    """What `scored_recall` needs of a store (either backend)."""

    embedder: Any
    lock: Any

    def recall_ids(
        self,
        owner: str,
        query_vector: np.ndarray | None,
        n: int,
        statuses: Iterable[str],
        tags_all: Iterable[str],
        tags_any: Iterable[str],
        node_types: Iterable[str],
        weights: Weights,
        decay_per_hour: float,
        stateless: bool,
    ) -> list[tuple[str, float]]: ...

    def get_many(self, owner: str, node_ids: Iterable[str]) -> list[MemoryNode]: ...


def scored_recall(
    store: ScoringStore,
    owner: str,
    query: str,
    n: int,
    statuses: Iterable[str],
    tags_all: Iterable[str],
    tags_any: Iterable[str],
    node_types: Iterable[str],
    weights: Weights,
    decay_per_hour: float,
    stateless: bool,
    query_vector: np.ndarray | None,
) -> list[MemoryNode]:
    """`recall` on either backend: the query embedded (unless given), the store's own scoring
    (`recall_ids`) and the nodes read under one hold of its lock, each with its score."""
    if query_vector is None and query.strip():
        query_vector = store.embedder.embed([query])[0]
    with store.lock:
        top = store.recall_ids(
            owner, query_vector, n, statuses, tags_all, tags_any, node_types, weights, decay_per_hour, stateless
        )
        nodes = store.get_many(owner, [i for i, _ in top])
    scores = dict(top)
    for node in nodes:
        node.score = scores[node.id]
    return nodes


__all__ = [
    "Weights",
    "OwnerIndex",
    "ScoringStore",
    "scored_recall",
    "CHAT_WEIGHTS",
    "DEFAULT_WEIGHTS",
    "DEFAULT_DECAY_PER_HOUR",
    "CONFIRMED",
    "CANDIDATE",
    "SUPERSEDED",
]
