"""The knowledge base on PostgreSQL with pgvector: one database that several robots share.

Keyword candidates come from a `tsvector` of the chunk's terms (the 'simple' configuration:
the terms are already split and folded by `keywords.keyword_terms`, Chinese bigrams
included) with a GIN index; vector candidates from an HNSW index (cosine) on the
embeddings, with pgvector's iterative scan so a filter on the knowledge base still returns
enough rows. Every write is one transaction; term document frequencies are updated in term
order, so two robots indexing at once do not deadlock on them.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql

from ..common.urls import error_without_secrets, safe_url
from ..memory.embeddings import Embedder
from .kb_store import (
    MODEL_KEY,
    KnowledgeStoreError,
    NewChunk,
    StoredChunk,
    StoredDocument,
    TermStats,
    model_mismatch,
)

SCHEMA_VERSION = "1"
# A lock id of its own (memory's schema lock is another), held while the schema is created.
_SCHEMA_LOCK = 0x4B4E4F57  # "KNOW"
# How many index entries HNSW looks at per query: recall of the 50 nearest stays near 1.
_EF_SEARCH = 100


def _schema(dim: int) -> list[str]:
    return [
        """CREATE TABLE IF NOT EXISTS kb_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS kb_documents (
            kb TEXT NOT NULL,
            source TEXT NOT NULL,
            root TEXT NOT NULL DEFAULT '',
            content_hash TEXT NOT NULL DEFAULT '',
            chunks INTEGER NOT NULL DEFAULT 0,
            indexed_at DOUBLE PRECISION NOT NULL DEFAULT 0,
            error TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (kb, source))""",
        f"""CREATE TABLE IF NOT EXISTS kb_chunks (
            id BIGSERIAL PRIMARY KEY,
            kb TEXT NOT NULL,
            source TEXT NOT NULL,
            position INTEGER NOT NULL,
            locator TEXT NOT NULL,
            text TEXT NOT NULL,
            terms TEXT NOT NULL,
            term_count INTEGER NOT NULL,
            embedding vector({dim}) NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', terms)) STORED)""",
        "CREATE INDEX IF NOT EXISTS kb_chunks_document ON kb_chunks (kb, source)",
        "CREATE INDEX IF NOT EXISTS kb_chunks_tsv ON kb_chunks USING gin (tsv)",
        "CREATE INDEX IF NOT EXISTS kb_chunks_embedding ON kb_chunks USING hnsw (embedding vector_ip_ops)",
        "CREATE TABLE IF NOT EXISTS kb_terms (term TEXT PRIMARY KEY, df INTEGER NOT NULL)",
    ]


def ts_query(terms: Sequence[str]) -> str:
    """A to_tsquery expression matching any of `terms` (letters, digits and ideographs only)."""
    return " | ".join(f"'{term}'" for term in dict.fromkeys(terms))


class PostgresKnowledgeStore:
    def __init__(self, url: str, embedder: Embedder) -> None:
        self.url = url
        self.embedder = embedder
        self.lock = threading.RLock()
        try:
            self.conn = psycopg.connect(url, autocommit=True, connect_timeout=10, application_name="fay_ros-knowledge")
        except psycopg.Error as exc:
            raise KnowledgeStoreError(f"{self.location}: cannot connect ({self._scrub(exc)})") from None
        try:
            with self.conn.transaction():
                self.conn.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
                self.conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                for statement in _schema(embedder.dim):
                    self.conn.execute(statement)
                self.conn.execute(
                    "INSERT INTO kb_meta (key, value) VALUES ('schema', %s) ON CONFLICT (key) DO NOTHING",
                    [SCHEMA_VERSION],
                )
            register_vector(self.conn)
            row = self.conn.execute("SELECT value FROM kb_meta WHERE key = 'schema'").fetchone()
            if row and row[0] != SCHEMA_VERSION:
                raise KnowledgeStoreError(f"{self.location}: knowledge schema {row[0]} is not {SCHEMA_VERSION}")
            stored = self._meta(MODEL_KEY)
        except psycopg.Error as exc:
            self.conn.close()
            raise KnowledgeStoreError(f"{self.location}: {self._scrub(exc)}") from None
        if stored and stored != embedder.name:
            self.conn.close()
            raise model_mismatch(self.location, stored, embedder)
        self.conn.execute(sql.SQL("SET hnsw.ef_search = {}").format(sql.Literal(_EF_SEARCH)))
        self.conn.execute("SET hnsw.iterative_scan = relaxed_order")

    @property
    def location(self) -> str:
        return safe_url(self.url)

    def _scrub(self, exc: BaseException) -> str:
        return error_without_secrets(exc, self.url)

    def close(self) -> None:
        self.conn.close()

    def _meta(self, key: str) -> str:
        row = self.conn.execute("SELECT value FROM kb_meta WHERE key = %s", [key]).fetchone()
        return row[0] if row else ""

    _DOC_COLUMNS = "kb, source, root, content_hash, chunks, indexed_at, error"

    def _drop_chunks(self, cur: psycopg.Cursor, kb: str, source: str) -> None:
        cur.execute("DELETE FROM kb_chunks WHERE kb = %s AND source = %s RETURNING terms", [kb, source])
        gone: Counter[str] = Counter()
        rows = cur.fetchall()
        for (terms,) in rows:
            gone.update(set(terms.split()))
        self._count(cur, -len(rows), -sum(len(terms.split()) for (terms,) in rows))
        if gone:
            cur.executemany(
                "UPDATE kb_terms SET df = df - %s WHERE term = %s", [(n, term) for term, n in sorted(gone.items())]
            )
            cur.execute("DELETE FROM kb_terms WHERE df <= 0")

    @staticmethod
    def _count(cur: psycopg.Cursor, chunks: int, terms: int) -> None:
        """Keep the chunk and term totals (BM25's average chunk length) without a count(*)
        over every chunk at each search."""
        if chunks or terms:
            cur.executemany(
                "INSERT INTO kb_meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = (kb_meta.value::bigint + EXCLUDED.value::bigint)::text",
                [("chunks", str(chunks)), ("terms", str(terms))],
            )

    # ------------------------------------------------------------------ documents
    def document(self, kb: str, source: str) -> StoredDocument | None:
        with self.lock:
            row = self.conn.execute(
                f"SELECT {self._DOC_COLUMNS} FROM kb_documents WHERE kb = %s AND source = %s", [kb, source]
            ).fetchone()
        return StoredDocument(*row) if row else None

    def documents(self, kb: str | None = None) -> list[StoredDocument]:
        where, args = ("WHERE kb = %s", [kb]) if kb is not None else ("", [])
        with self.lock:
            rows = self.conn.execute(
                f"SELECT {self._DOC_COLUMNS} FROM kb_documents {where} ORDER BY kb, source", args
            ).fetchall()
        return [StoredDocument(*r) for r in rows]

    def replace_document(self, document: StoredDocument, chunks: Sequence[NewChunk], vectors: np.ndarray) -> None:
        vectors = np.asarray(vectors, dtype=np.float32)
        with self.lock, self.conn.transaction():
            cur = self.conn.cursor()
            cur.execute(
                "INSERT INTO kb_meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
                [MODEL_KEY, self.embedder.name],
            )
            self._drop_chunks(cur, document.kb, document.source)
            added: Counter[str] = Counter()
            rows = []
            for chunk, vector in zip(chunks, vectors):
                rows.append(
                    (
                        document.kb,
                        document.source,
                        chunk.position,
                        chunk.locator,
                        chunk.text,
                        " ".join(chunk.terms),
                        len(chunk.terms),
                        vector,
                    )
                )
                added.update(set(chunk.terms))
            self._count(cur, len(rows), sum(len(chunk.terms) for chunk in chunks))
            if rows:
                cur.executemany(
                    "INSERT INTO kb_chunks (kb, source, position, locator, text, terms, term_count, embedding) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                    rows,
                )
            if added:
                cur.executemany(
                    "INSERT INTO kb_terms (term, df) VALUES (%s, %s) "
                    "ON CONFLICT (term) DO UPDATE SET df = kb_terms.df + EXCLUDED.df",
                    sorted(added.items()),
                )
            cur.execute(
                "INSERT INTO kb_documents (kb, source, root, content_hash, chunks, indexed_at, error) "
                "VALUES (%s, %s, %s, %s, %s, %s, '') ON CONFLICT (kb, source) DO UPDATE SET root = EXCLUDED.root, "
                "content_hash = EXCLUDED.content_hash, chunks = EXCLUDED.chunks, indexed_at = EXCLUDED.indexed_at, "
                "error = ''",
                [document.kb, document.source, document.root, document.content_hash, len(chunks), document.indexed_at],
            )

    def record_error(self, kb: str, source: str, root: str, error: str) -> None:
        with self.lock:
            self.conn.execute(
                "INSERT INTO kb_documents (kb, source, root, error) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (kb, source) DO UPDATE SET error = EXCLUDED.error",
                [kb, source, root, error],
            )

    def delete_document(self, kb: str, source: str) -> bool:
        with self.lock, self.conn.transaction():
            cur = self.conn.cursor()
            self._drop_chunks(cur, kb, source)
            cur.execute("DELETE FROM kb_documents WHERE kb = %s AND source = %s", [kb, source])
            return cur.rowcount > 0

    # ------------------------------------------------------------------ search
    def keyword_candidates(self, terms: Sequence[str], kb: str | None, n: int) -> list[int]:
        if not terms:
            return []
        kb_filter, args = ("AND kb = %s", [kb]) if kb is not None else ("", [])
        with self.lock:
            rows = self.conn.execute(
                "SELECT id FROM kb_chunks, to_tsquery('simple', %s) q "
                f"WHERE tsv @@ q {kb_filter} ORDER BY ts_rank(tsv, q, 1) DESC LIMIT %s",
                [ts_query(terms), *args, n],
            ).fetchall()
        return [r[0] for r in rows]

    def vector_candidates(self, vector: np.ndarray, kb: str | None, n: int) -> list[int]:
        kb_filter, args = ("WHERE kb = %s", [kb]) if kb is not None else ("", [])
        with self.lock:
            rows = self.conn.execute(
                f"SELECT id FROM kb_chunks {kb_filter} ORDER BY embedding <#> %s LIMIT %s",
                [*args, np.asarray(vector, dtype=np.float32), n],
            ).fetchall()
        return [r[0] for r in rows]

    def chunks(self, ids: Sequence[int]) -> list[StoredChunk]:
        if not ids:
            return []
        with self.lock:
            rows = self.conn.execute(
                "SELECT id, kb, source, locator, text, terms, embedding FROM kb_chunks WHERE id = ANY(%s)", [list(ids)]
            ).fetchall()
        by_id = {
            r[0]: StoredChunk(r[0], r[1], r[2], r[3], r[4], r[5].split(), np.asarray(r[6].to_numpy(), dtype=np.float32))
            for r in rows
        }
        return [by_id[i] for i in ids if i in by_id]

    def term_stats(self, terms: Sequence[str]) -> TermStats:
        unique = sorted(set(terms))
        with self.lock:
            totals: dict[str, int] = dict(
                self.conn.execute("SELECT key, value::bigint FROM kb_meta WHERE key IN ('chunks', 'terms')").fetchall()
            )
            count = totals.get("chunks", 0)
            average = totals.get("terms", 0) / count if count else 0.0
            frequency: dict[str, int] = dict(
                self.conn.execute("SELECT term, df FROM kb_terms WHERE term = ANY(%s)", [unique]).fetchall()
            )
        return TermStats(frequency, int(count), float(average))
