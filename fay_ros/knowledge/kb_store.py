"""Where a knowledge base keeps its documents and chunks, behind one interface for the two
backends memory has (`fay_ros.memory.backend`): a SQLite file by default
(`kb_sqlite.SqliteKnowledgeStore`), PostgreSQL with pgvector for a fleet of robots sharing one
knowledge base (`kb_postgres.PostgresKnowledgeStore`). The location is chosen the same way:
a path or sqlite:///<path>, or postgresql://user@host/db (password from PGPASSWORD or a
passfile, never in a message).

A store keeps the chunks' text, locator, keyword terms (`keywords.keyword_terms`, joined by
spaces) and embedding, each chunk's keyword index entry (FTS5 / a tsvector with a GIN index),
and the document frequency of every term, so that BM25 weights are the same on both backends.
It answers the two candidate searches of hybrid retrieval (keyword, vector); scoring and
fusion are the same code for both (`base.KnowledgeBase`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..common.errors import FayError
from ..common.paths import user_data_dir
from ..memory.embeddings import Embedder
from .api import DocumentInfo


class KnowledgeStoreError(FayError):
    """The knowledge database cannot be used (unreadable, unreachable, newer schema, indexed
    with another embedding model); the message names it without credentials."""


# The meta key holding the embedding model a store's vectors were made with: vectors of two
# models are not comparable, so a store refuses an embedder other than its own.
MODEL_KEY = "embedding_model"


def model_mismatch(location: str, stored: str, embedder: Embedder) -> KnowledgeStoreError:
    return KnowledgeStoreError(
        f"{location}: indexed with the embedding model {stored!r}, not {embedder.name!r}; use the "
        "same --embedder, or index into another database"
    )


@dataclass(frozen=True)
class StoredDocument:
    """A document's row: what `DocumentInfo` shows plus what incremental indexing needs."""

    kb: str
    source: str
    root: str  # the folder it was found in when a folder was added ("" for a file given alone)
    content_hash: str  # sha256 of the bytes last indexed ("" when it never indexed)
    chunks: int
    indexed_at: float
    error: str = ""

    def info(self) -> DocumentInfo:
        return DocumentInfo(self.kb, self.source, self.chunks, self.indexed_at, self.error)


@dataclass(frozen=True)
class NewChunk:
    position: int
    locator: str
    text: str
    terms: list[str]


@dataclass(frozen=True)
class StoredChunk:
    id: int
    kb: str
    source: str
    locator: str
    text: str
    terms: list[str]
    vector: np.ndarray


@dataclass(frozen=True)
class TermStats:
    document_frequency: dict[str, int]
    chunks: int
    average_length: float


class KnowledgeStore(Protocol):
    embedder: Embedder

    @property
    def location(self) -> str: ...  # for messages: no credentials

    def close(self) -> None: ...

    def document(self, kb: str, source: str) -> StoredDocument | None: ...

    def documents(self, kb: str | None = None) -> list[StoredDocument]: ...

    def replace_document(
        self, document: StoredDocument, chunks: Sequence[NewChunk], vectors: np.ndarray
    ) -> None: ...  # one transaction: the old chunks gone, the new ones in

    def record_error(self, kb: str, source: str, root: str, error: str) -> None: ...  # chunks kept

    def delete_document(self, kb: str, source: str) -> bool: ...

    def keyword_candidates(self, terms: Sequence[str], kb: str | None, n: int) -> list[int]: ...

    def vector_candidates(self, vector: np.ndarray, kb: str | None, n: int) -> list[int]: ...

    def chunks(self, ids: Sequence[int]) -> list[StoredChunk]: ...

    def term_stats(self, terms: Sequence[str]) -> TermStats: ...


def default_location() -> str:
    """$XDG_DATA_HOME/fay_ros/knowledge.db (~/.local/share/fay_ros/knowledge.db)."""
    return str(user_data_dir() / "knowledge.db")


__all__ = [
    "KnowledgeStore",
    "KnowledgeStoreError",
    "NewChunk",
    "StoredChunk",
    "StoredDocument",
    "TermStats",
    "default_location",
]
