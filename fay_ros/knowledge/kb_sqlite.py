"""The knowledge base in one SQLite file (the default): FTS5 for the keyword candidates, and
the embeddings searched as one numpy matrix held in memory.

A brute-force product of the question's vector with every chunk's is exact and costs about
10 ms for 100k chunks of 512 floats; the matrix is reloaded only when the file's
`generation` (bumped by every write, whichever process made it) has changed, so a node sees
what `fay-ros knowledge add` indexed meanwhile. WAL mode lets the node read while the command
writes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import sqlite_utils
from sqlite_utils.migrations import Migrations

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

migrations = Migrations("fay_knowledge")


@migrations(name="0001_knowledge")
def _m0001(db: sqlite_utils.Database) -> None:
    db.execute("""
        CREATE TABLE kb_documents (
            kb TEXT NOT NULL,
            source TEXT NOT NULL,
            root TEXT NOT NULL DEFAULT '',
            content_hash TEXT NOT NULL DEFAULT '',
            chunks INTEGER NOT NULL DEFAULT 0,
            indexed_at REAL NOT NULL DEFAULT 0,
            error TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (kb, source)
        )""")
    db.execute("""
        CREATE TABLE kb_chunks (
            id INTEGER PRIMARY KEY,
            kb TEXT NOT NULL,
            source TEXT NOT NULL,
            position INTEGER NOT NULL,
            locator TEXT NOT NULL,
            text TEXT NOT NULL,
            terms TEXT NOT NULL,
            term_count INTEGER NOT NULL,
            vector BLOB NOT NULL
        )""")
    db.execute("CREATE INDEX kb_chunks_document ON kb_chunks (kb, source)")
    # the terms are already split (keywords.keyword_terms): unicode61 only parts them on spaces
    db.execute("CREATE VIRTUAL TABLE kb_fts USING fts5(terms, tokenize = 'unicode61 remove_diacritics 0')")
    db.execute("CREATE TABLE kb_terms (term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID")
    db.execute("CREATE TABLE kb_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO kb_meta (key, value) VALUES ('generation', '0')")


LATEST = [m.name for m in migrations._migrations]


def fts_query(terms: Sequence[str]) -> str:
    """An FTS5 expression matching any of `terms` (letters, digits and ideographs only)."""
    return " OR ".join(f'"{term}"' for term in dict.fromkeys(terms))


class SqliteKnowledgeStore:
    def __init__(self, path: Path, embedder: Embedder) -> None:
        self.path = Path(path).expanduser()
        self.embedder = embedder
        self.lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0)
            self.db = sqlite_utils.Database(conn)
            self.db.enable_wal()
            applied = [m.name for m in migrations.applied(self.db)]
            unknown = [name for name in applied if name not in LATEST]
            if unknown:
                raise KnowledgeStoreError(
                    f"{self.path}: written by a newer fay_ros (unknown migration(s) {unknown}); upgrade fay_ros"
                )
            migrations.apply(self.db)
            stored = self._meta(MODEL_KEY)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise KnowledgeStoreError(f"{self.path}: not a usable knowledge database ({exc})") from None
        if stored and stored != embedder.name:
            raise model_mismatch(str(self.path), stored, embedder)
        self._matrix_generation = -1
        self._matrix = np.zeros((0, embedder.dim), dtype=np.float32)
        self._matrix_ids = np.zeros(0, dtype=np.int64)
        self._matrix_kbs = np.zeros(0, dtype=object)
        self._stats_generation = -1
        self._stats = (0, 0.0)

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        self.db.conn.close()

    # ------------------------------------------------------------------ helpers
    def _meta(self, key: str) -> str:
        row = self.db.execute("SELECT value FROM kb_meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else ""

    def _generation(self) -> int:
        return int(self._meta("generation") or 0)

    def _bump(self) -> None:
        self.db.execute("UPDATE kb_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")

    @staticmethod
    def _document(row: Sequence) -> StoredDocument:
        return StoredDocument(*row)

    _DOC_COLUMNS = "kb, source, root, content_hash, chunks, indexed_at, error"

    def _drop_chunks(self, kb: str, source: str) -> None:
        rows = self.db.execute("SELECT id, terms FROM kb_chunks WHERE kb = ? AND source = ?", [kb, source]).fetchall()
        if not rows:
            return
        gone: Counter[str] = Counter()
        for _, terms in rows:
            gone.update(set(terms.split()))
        self.db.conn.executemany(
            "UPDATE kb_terms SET df = df - ? WHERE term = ?", [(n, term) for term, n in sorted(gone.items())]
        )
        self.db.execute("DELETE FROM kb_terms WHERE df <= 0")
        self.db.conn.executemany("DELETE FROM kb_fts WHERE rowid = ?", [(r[0],) for r in rows])
        self.db.execute("DELETE FROM kb_chunks WHERE kb = ? AND source = ?", [kb, source])

    # ------------------------------------------------------------------ documents
    def document(self, kb: str, source: str) -> StoredDocument | None:
        with self.lock:
            row = self.db.execute(
                f"SELECT {self._DOC_COLUMNS} FROM kb_documents WHERE kb = ? AND source = ?", [kb, source]
            ).fetchone()
        return self._document(row) if row else None

    def documents(self, kb: str | None = None) -> list[StoredDocument]:
        where, args = ("WHERE kb = ?", [kb]) if kb is not None else ("", [])
        with self.lock:
            rows = self.db.execute(
                f"SELECT {self._DOC_COLUMNS} FROM kb_documents {where} ORDER BY kb, source", args
            ).fetchall()
        return [self._document(r) for r in rows]

    def replace_document(self, document: StoredDocument, chunks: Sequence[NewChunk], vectors: np.ndarray) -> None:
        vectors = np.asarray(vectors, dtype=np.float32)
        with self.lock, self.db.conn:
            if not self._meta(MODEL_KEY):
                self.db.execute("INSERT INTO kb_meta (key, value) VALUES (?, ?)", [MODEL_KEY, self.embedder.name])
            self._drop_chunks(document.kb, document.source)
            added: Counter[str] = Counter()
            for chunk, vector in zip(chunks, vectors):
                joined = " ".join(chunk.terms)
                cursor = self.db.execute(
                    "INSERT INTO kb_chunks (kb, source, position, locator, text, terms, term_count, vector) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        document.kb,
                        document.source,
                        chunk.position,
                        chunk.locator,
                        chunk.text,
                        joined,
                        len(chunk.terms),
                        vector.tobytes(),
                    ],
                )
                self.db.execute("INSERT INTO kb_fts (rowid, terms) VALUES (?, ?)", [cursor.lastrowid, joined])
                added.update(set(chunk.terms))
            self.db.conn.executemany(
                "INSERT INTO kb_terms (term, df) VALUES (?, ?) ON CONFLICT (term) DO UPDATE SET df = df + excluded.df",
                sorted(added.items()),
            )
            self.db.execute(
                "INSERT OR REPLACE INTO kb_documents (kb, source, root, content_hash, chunks, indexed_at, error) "
                "VALUES (?, ?, ?, ?, ?, ?, '')",
                [document.kb, document.source, document.root, document.content_hash, len(chunks), document.indexed_at],
            )
            self._bump()

    def record_error(self, kb: str, source: str, root: str, error: str) -> None:
        with self.lock, self.db.conn:
            self.db.execute(
                "INSERT INTO kb_documents (kb, source, root, error) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (kb, source) DO UPDATE SET error = excluded.error",
                [kb, source, root, error],
            )

    def delete_document(self, kb: str, source: str) -> bool:
        with self.lock, self.db.conn:
            self._drop_chunks(kb, source)
            deleted = self.db.execute("DELETE FROM kb_documents WHERE kb = ? AND source = ?", [kb, source]).rowcount
            self._bump()
        return deleted > 0

    # ------------------------------------------------------------------ search
    def keyword_candidates(self, terms: Sequence[str], kb: str | None, n: int) -> list[int]:
        if not terms:
            return []
        # FTS5's own rank (BM25) with ORDER BY rank is its fast path; the join only with a filter
        if kb is None:
            query, args = "SELECT rowid FROM kb_fts WHERE kb_fts MATCH ? ORDER BY rank LIMIT ?", [fts_query(terms), n]
        else:
            query = (
                "SELECT f.rowid FROM kb_fts f JOIN kb_chunks c ON c.id = f.rowid "
                "WHERE kb_fts MATCH ? AND c.kb = ? ORDER BY f.rank LIMIT ?"
            )
            args = [fts_query(terms), kb, n]
        with self.lock:
            rows = self.db.execute(query, args).fetchall()
        return [r[0] for r in rows]

    def _load_matrix(self) -> None:
        generation = self._generation()
        if generation == self._matrix_generation:
            return
        rows = self.db.execute("SELECT id, kb, vector FROM kb_chunks ORDER BY id").fetchall()
        dim = self.embedder.dim
        matrix = np.empty((len(rows), dim), dtype=np.float32)
        for i, (_, _, blob) in enumerate(rows):
            matrix[i] = np.frombuffer(blob, dtype=np.float32, count=dim)
        self._matrix = matrix
        self._matrix_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        self._matrix_kbs = np.array([r[1] for r in rows], dtype=object)
        self._matrix_generation = generation

    def vector_candidates(self, vector: np.ndarray, kb: str | None, n: int) -> list[int]:
        with self.lock:
            self._load_matrix()
            if not len(self._matrix_ids):
                return []
            scores = self._matrix @ np.asarray(vector, dtype=np.float32)
            if kb is not None:
                scores = np.where(self._matrix_kbs == kb, scores, -np.inf)
            n = min(n, len(scores))
            best = np.argpartition(-scores, n - 1)[:n]
            best = best[np.argsort(-scores[best])]
            return [int(self._matrix_ids[i]) for i in best if np.isfinite(scores[i])]

    def chunks(self, ids: Sequence[int]) -> list[StoredChunk]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        with self.lock:
            rows = self.db.execute(
                f"SELECT id, kb, source, locator, text, terms, vector FROM kb_chunks WHERE id IN ({marks})", list(ids)
            ).fetchall()
        by_id = {
            r[0]: StoredChunk(r[0], r[1], r[2], r[3], r[4], r[5].split(), np.frombuffer(r[6], dtype=np.float32))
            for r in rows
        }
        return [by_id[i] for i in ids if i in by_id]

    def term_stats(self, terms: Sequence[str]) -> TermStats:
        unique = sorted(set(terms))
        with self.lock:
            generation = self._generation()
            if generation != self._stats_generation:
                count, average = self.db.execute("SELECT count(*), avg(term_count) FROM kb_chunks").fetchone()
                self._stats = (int(count), float(average or 0.0))
                self._stats_generation = generation
            frequency: dict[str, int] = {}
            if unique:
                marks = ",".join("?" * len(unique))
                frequency = dict(
                    self.db.execute(f"SELECT term, df FROM kb_terms WHERE term IN ({marks})", unique).fetchall()
                )
        return TermStats(frequency, self._stats[0], self._stats[1])
