"""PostgresMemoryStore: the memory stream on PostgreSQL with pgvector (psycopg 3).

The PostgreSQL backend of backend.MemoryBackend, for several robots sharing one memory:

- Every read and write names the owner; every write is one transaction, committed before
  the caller is answered. Nothing is cached between calls but the recall times not yet
  written (as in the SQLite store), so what another robot wrote or forgot is seen by the
  next call.
- A confirmed keyed memory supersedes every other active memory of its owner + kind + key in
  its own transaction, under an advisory lock of that owner + kind + key: two robots writing
  the same key at once end with one active value (the later commit).
- Vectors are stored per node and embedding model (`embeddings.model`); recall compares only
  vectors of this store's model, so robots with different embedders never compare
  incompatible vectors. A memory written under another model gets this model's vector when
  it is first a recall candidate, or by `maintain_embeddings` (the node's maintenance tick).
- Recall scores as retrieval.py does (recency, relevance, importance, each min-max
  normalised over every memory passing the filters). When at most `EXACT_LIMIT` memories
  pass, all are scored: the same ranking and scores as the SQLite store. Beyond that the
  candidates are the best k by relevance (HNSW) and the best k by recency + importance (SQL,
  normalised by exact bounds from aggregates), widened while a memory outside them could
  still rank; the relevance bounds are HNSW's estimates (nearest neighbour of the query and
  of the negated query: an exact minimum needs every distance). The bench measures the
  top-10 agreement with SQLite.
"""

from __future__ import annotations

import builtins
import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import psycopg
import psycopg.errors
from pgvector.psycopg import register_vector
from psycopg import sql

from ..common.urls import error_without_secrets, safe_url
from .embeddings import Embedder
from .model import CANDIDATE, CONFIRMED, SUPERSEDED, MemoryNode, tag_value
from .pg_schema import ensure_vector_index, hnsw_build_memory, migrate, vector_index_name
from .retrieval import (
    DEFAULT_DECAY_PER_HOUR,
    Weights,
    combine,
    combine_bounded,
    recency_of,
    scale,
    scored_recall,
    top_n,
)
from .schema import SchemaError
from .turn_log import Turn

_RECALL_WEIGHTS = Weights()
_COLUMNS = (
    "id",
    "owner",
    "node_type",
    "content",
    "importance",
    "created",
    "last_retrieved",
    "status",
    "key",
    "source_session",
    "source_turn",
    "expires",
    "origin",
    "superseded_by",
    "tags",
    "pointer_ids",
    "sources",  # turn log (issue 35)
)
_SELECT = "SELECT " + ", ".join(f"n.{c}" for c in _COLUMNS) + " FROM nodes n"
_INSERT = (
    "INSERT INTO nodes (id, owner, node_type, content, importance, created, last_retrieved, status, kind, key, "
    "source_session, source_turn, expires, origin, superseded_by, tags, pointer_ids, sources) VALUES "
    "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
# At most this many matches: every one is scored (the SQLite ranking exactly).
EXACT_LIMIT = 2000
# A memory lacking this model's vector is looked for again after this many seconds when none was found.
_BACKFILL_IDLE = 60.0
# A write that lost a deadlock or serialisation race against another robot is run again.
_WRITE_ATTEMPTS = 3


def _array(value: Any) -> np.ndarray:
    """A vector read from the database (pgvector's Vector) as float32."""
    return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value, dtype=np.float32)


def _one(cur: psycopg.Cursor) -> tuple:
    """The row of a query that always returns one (an aggregate)."""
    row = cur.fetchone()
    assert row is not None
    return row


def _node_row(node: MemoryNode) -> list:
    return [
        node.id,
        node.owner,
        node.node_type,
        node.content,
        float(node.importance),
        float(node.created),
        float(node.last_retrieved),
        node.status,
        tag_value(node.tags, "kind"),
        node.key,
        node.source_session,
        int(node.source_turn),
        float(node.expires),
        node.origin,
        node.superseded_by,
        list(node.tags),
        list(node.pointer_ids),
        list(node.sources),  # turn log (issue 35)
    ]


def _to_node(row: Sequence) -> MemoryNode:
    values = dict(zip(_COLUMNS, row))
    values["tags"], values["pointer_ids"] = list(values["tags"]), list(values["pointer_ids"])
    values["sources"] = list(values["sources"])  # turn log (issue 35)
    return MemoryNode(**values)


# Column types of a binary COPY into nodes (in _COPY_COLUMNS order, as _node_row gives them).
_COPY_COLUMNS = (
    "id",
    "owner",
    "node_type",
    "content",
    "importance",
    "created",
    "last_retrieved",
    "status",
    "kind",
    "key",
    "source_session",
    "source_turn",
    "expires",
    "origin",
    "superseded_by",
    "tags",
    "pointer_ids",
    "sources",  # turn log (issue 35)
)
_COPY_TYPES = [
    "text",
    "text",
    "text",
    "text",
    "float8",
    "float8",
    "float8",
    "text",
    "text",
    "text",
    "text",
    "int4",
    "float8",
    "text",
    "text",
    "text[]",
    "text[]",
    "text[]",  # sources: turn log (issue 35)
]


def _copy_nodes(cur: psycopg.Cursor, table: str, nodes: Iterable[MemoryNode]) -> None:
    """COPY (binary) the nodes into `table` (nodes, or a temporary table of its columns)."""
    with cur.copy(
        sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, _COPY_COLUMNS))
        )
    ) as copy:
        copy.set_types(_COPY_TYPES)
        for node in nodes:
            copy.write_row(_node_row(node))


def _copy_vectors(cur: psycopg.Cursor, table: str, rows: Iterable[tuple[str, str, str | None, np.ndarray]]) -> None:
    """COPY (binary) (node_id, model, owner, vector) rows into `table`: embeddings, or a
    temporary table of (node_id, model, vector) when owner is None."""
    with_owner = table == "embeddings"
    columns = "node_id, model, owner, dim, vector" if with_owner else "node_id, model, vector"
    with cur.copy(
        sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(sql.Identifier(table), sql.SQL(columns))
    ) as copy:
        copy.set_types(["text", "text", "text", "int4", "vector"] if with_owner else ["text", "text", "vector"])
        for node_id, model, owner, vector in rows:
            vec = np.asarray(vector, dtype=np.float32)
            copy.write_row((node_id, model, owner, int(vec.size), vec) if with_owner else (node_id, model, vec))


class PostgresMemoryStore:
    def __init__(
        self, url: str, embedder: Embedder, clock: Callable[[], float] = time.time, candidates: int = 200
    ) -> None:
        self.url = url
        self.embedder = embedder
        self.clock = clock
        self.candidates = candidates
        self.lock = threading.RLock()
        self._pending_touch: dict[str, tuple[str, float]] = {}  # node id -> (owner, time)
        self._backfill_after = 0.0
        self.exact_fallbacks = 0  # recalls that had to score every match (see _approximate)
        self._model = sql.Literal(embedder.name)
        self._vec = sql.SQL(f"vector({int(embedder.dim)})")
        self.conn = self._connect()
        try:
            migrate(self.conn, self.location)
            ensure_vector_index(self.conn, embedder.name, embedder.dim)
        except psycopg.Error as exc:
            self.conn.close()
            raise SchemaError(f"{self.location}: {self._scrub(exc)}") from None

    # ------------------------------------------------------------------ basics
    @property
    def location(self) -> str:
        return safe_url(self.url)

    def _scrub(self, exc: BaseException) -> str:
        return error_without_secrets(exc, self.url)

    def _connect(self) -> psycopg.Connection:
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10, application_name="fay_ros-memory")
        except psycopg.Error as exc:
            raise SchemaError(f"{self.location}: cannot connect ({self._scrub(exc)})") from None
        try:
            register_vector(conn)
        except psycopg.ProgrammingError:
            # a database without the extension yet: migrate() creates it, then register
            migrate(conn, self.location)
            register_vector(conn)
        return conn

    def _db(self) -> psycopg.Connection:
        """The connection, opened again after the server went away (the call that saw it go
        failed; the next one reconnects)."""
        if self.conn.closed or self.conn.broken:
            self.conn = self._connect()
        return self.conn

    def close(self) -> None:
        with self.lock:
            try:
                if not self.conn.closed and not self.conn.broken:
                    self.flush_touches()
            finally:
                self.conn.close()

    def _rows(self, query: Any, params: Sequence = ()) -> list[tuple]:
        return self._db().execute(query, list(params), binary=True).fetchall()

    def _select(
        self, where: str, params: Sequence, order: str = "n.seq", limit: int | None = None
    ) -> builtins.list[MemoryNode]:
        text = f"{_SELECT} WHERE {where} ORDER BY {order}"
        if limit:
            text += f" LIMIT {int(limit)}"
        return [_to_node(r) for r in self._rows(text, params)]

    # ------------------------------------------------------------------ reads
    def get(self, owner: str, node_id: str) -> MemoryNode | None:
        with self.lock:
            found = self._select("n.owner = %s AND n.id = %s", [owner, node_id])
            return found[0] if found else None

    def get_many(self, owner: str, node_ids: Iterable[str]) -> builtins.list[MemoryNode]:
        ids = list(dict.fromkeys(node_ids))
        if not ids:
            return []
        with self.lock:
            found = self._select("n.owner = %s AND n.id = ANY(%s)", [owner, ids])
        order = {i: k for k, i in enumerate(ids)}
        return sorted(found, key=lambda node: order[node.id])

    def list(
        self,
        owner: str,
        statuses: Iterable[str] = (CONFIRMED, CANDIDATE),
        node_types: Iterable[str] = (),
        tags_all: Iterable[str] = (),
        limit: int | None = None,
        newest_first: bool = True,
        created_after: float | None = None,
        include_expired: bool = False,
        tags_any: Iterable[str] = (),
    ) -> builtins.list[MemoryNode]:
        """The owner's memories passing the filters, by creation time (newest first unless
        `newest_first` is false); `tags_all`: every tag; `tags_any`: at least one."""
        where, params = self._filters(
            owner, statuses, tags_all, tags_any, node_types, None if include_expired else self.clock()
        )
        if created_after is not None:
            where += " AND n.created > %s"
            params.append(created_after)
        with self.lock:
            return self._select(
                where, params, order="n.created DESC, n.seq DESC" if newest_first else "n.created, n.seq", limit=limit
            )

    def find_keyed(self, owner: str, kind: str, key: str, statuses: Iterable[str]) -> builtins.list[MemoryNode]:
        with self.lock:
            return self._select(
                "n.owner = %s AND n.kind = %s AND n.key = %s AND n.status = ANY(%s)", [owner, kind, key, list(statuses)]
            )

    def find_content(self, owner: str, content: str, statuses: Iterable[str]) -> builtins.list[MemoryNode]:
        with self.lock:
            return self._select(
                "n.owner = %s AND md5(n.content) = md5(%s) AND n.content = %s AND n.status = ANY(%s)",
                [owner, content, content, list(statuses)],
            )

    def pointing_to(self, owner: str, node_ids: Iterable[str]) -> builtins.list[MemoryNode]:
        ids = list(node_ids)
        if not ids:
            return []
        with self.lock:
            return self._select("n.owner = %s AND n.pointer_ids && %s::text[]", [owner, ids])

    def count(self, owner: str | None = None) -> int:
        with self.lock:
            if owner is None:
                return self._rows("SELECT count(*) FROM nodes")[0][0]
            return self._rows("SELECT count(*) FROM nodes WHERE owner = %s", [owner])[0][0]

    def owners(self) -> builtins.list[str]:
        with self.lock:
            return [r[0] for r in self._rows("SELECT DISTINCT owner FROM nodes ORDER BY owner")]

    @staticmethod
    def _filters(
        owner: str,
        statuses: Iterable[str],
        tags_all: Iterable[str],
        tags_any: Iterable[str],
        node_types: Iterable[str],
        now: float | None,
    ) -> tuple[str, builtins.list]:
        where: builtins.list[str] = ["n.owner = %s"]
        params: builtins.list[Any] = [owner]
        statuses = list(statuses)
        if statuses:
            where.append("n.status = ANY(%s)")
            params.append(statuses)
        node_types = list(node_types)
        if node_types:
            where.append("n.node_type = ANY(%s)")
            params.append(node_types)
        tags_all, tags_any = list(tags_all), list(tags_any)
        if tags_all:
            where.append("n.tags @> %s::text[]")
            params.append(tags_all)
        if tags_any:
            where.append("n.tags && %s::text[]")
            params.append(tags_any)
        if now is not None:
            where.append("(n.expires = 0 OR n.expires > %s)")
            params.append(now)
        return " AND ".join(where), params

    # ------------------------------------------------------------------ writes
    def write(
        self,
        add: Sequence[tuple[MemoryNode, np.ndarray | None]] = (),
        status: Sequence[tuple[str, str, str, str]] = (),
        delete: Sequence[tuple[str, str]] = (),
        update: Sequence[MemoryNode] = (),
    ) -> None:
        """One transaction: add nodes (with vectors), change statuses (owner, id, status,
        superseded_by), update whole nodes, delete (owner, id). Committed on return."""
        keyed = [n for n in [n for n, _v in add] + list(update) if n.status == CONFIRMED and n.key]
        with self.lock:
            for attempt in range(_WRITE_ATTEMPTS):
                try:
                    self._write_once(add, status, delete, update, keyed)
                    return
                except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure):
                    if attempt == _WRITE_ATTEMPTS - 1:
                        raise

    def _write_once(
        self,
        add: Sequence[tuple[MemoryNode, np.ndarray | None]],
        status: Sequence[tuple[str, str, str, str]],
        delete: Sequence[tuple[str, str]],
        update: Sequence[MemoryNode],
        keyed: Sequence[MemoryNode],
    ) -> None:
        conn = self._db()
        touches = dict(self._pending_touch)
        try:
            with conn.transaction():
                cur = conn.cursor()
                # Serialise writers of one owner + kind + key (other keys are not held up), before
                # touching any row, in one order: no two robots wait on each other.
                for lock_key in sorted({f"{n.owner}\x1f{n.kind}\x1f{n.key}" for n in keyed}):
                    cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [lock_key])
                for node, vector in add:
                    cur.execute(_INSERT, _node_row(node))
                    if vector is None:
                        vector = self.embedder.embed([node.content])[0]
                    self._insert_vector(cur, node.id, node.owner, self.embedder.name, vector)
                for node in update:
                    row = _node_row(node)
                    cur.execute(
                        "UPDATE nodes SET node_type = %s, content = %s, importance = %s, created = %s, "
                        "last_retrieved = %s, status = %s, kind = %s, key = %s, source_session = %s, "
                        "source_turn = %s, expires = %s, origin = %s, superseded_by = %s, tags = %s, "
                        "pointer_ids = %s, sources = %s WHERE owner = %s AND id = %s",
                        [*row[2:], node.owner, node.id],
                    )
                for owner, node_id, new_status, by in status:
                    cur.execute(
                        "UPDATE nodes SET status = %s, superseded_by = %s WHERE owner = %s AND id = %s",
                        [new_status, by, owner, node_id],
                    )
                for owner, node_id in delete:
                    cur.execute("DELETE FROM nodes WHERE owner = %s AND id = %s", [owner, node_id])
                for node in keyed:
                    self._supersede_others(cur, node)
                self._write_touches(cur)
        except BaseException:
            self._pending_touch = {**touches, **self._pending_touch}  # not written: keep them for the next write
            raise

    @staticmethod
    def _supersede_others(cur: psycopg.Cursor, node: MemoryNode) -> None:
        # Under the key's advisory lock (write): this statement sees every value committed
        # before, whichever robot wrote it.
        cur.execute(
            "UPDATE nodes SET status = %s, superseded_by = %s WHERE owner = %s AND kind = %s AND key = %s "
            "AND status = ANY(%s) AND id <> %s",
            [SUPERSEDED, node.id, node.owner, node.kind, node.key, [CONFIRMED, CANDIDATE], node.id],
        )

    @staticmethod
    def _insert_vector(cur: psycopg.Cursor, node_id: str, owner: str, model: str, vector: np.ndarray) -> None:
        vec = np.asarray(vector, dtype=np.float32)
        cur.execute(
            "INSERT INTO embeddings (node_id, model, owner, dim, vector) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (node_id, model) DO UPDATE SET vector = EXCLUDED.vector, dim = EXCLUDED.dim",
            [node_id, model, owner, int(vec.size), vec],
        )

    def add_many(
        self,
        nodes: Sequence[MemoryNode],
        vectors: np.ndarray | None = None,
        extra_vectors: Sequence[tuple[str, str, np.ndarray]] = (),
    ) -> None:
        """Bulk insert in one transaction (import, benchmarks); `extra_vectors` are
        (node_id, model, vector) kept alongside, e.g. Fay's original embeddings (replacing a
        vector of the same node and model; the node must be among `nodes` or stored already).
        Rows go in by COPY (binary): 1M 512-d memories in about 75 s on 2 cores."""
        if vectors is None:
            vectors = self.embedder.embed([n.content for n in nodes]) if nodes else None
        with self.lock:
            conn = self._db()
            with conn.transaction():
                cur = conn.cursor()
                _copy_nodes(cur, "nodes", nodes)
                if vectors is not None:
                    _copy_vectors(
                        cur,
                        "embeddings",
                        ((n.id, self.embedder.name, n.owner, vectors[i]) for i, n in enumerate(nodes)),
                    )
                if extra_vectors:
                    self._upsert_vectors(cur, extra_vectors)
            self._analyze()

    @staticmethod
    def _upsert_vectors(cur: psycopg.Cursor, rows: Iterable[tuple[str, str, np.ndarray]]) -> None:
        """(node_id, model, vector) rows, each replacing a vector of the same node and model
        (the last of duplicates wins), with the owner of the stored node."""
        latest = {(node_id, model): vec for node_id, model, vec in rows}
        cur.execute("CREATE TEMPORARY TABLE fay_vectors_in (node_id TEXT, model TEXT, vector vector) ON COMMIT DROP")
        _copy_vectors(cur, "fay_vectors_in", ((node_id, model, None, vec) for (node_id, model), vec in latest.items()))
        cur.execute(
            "SELECT v.node_id FROM fay_vectors_in v LEFT JOIN nodes n ON n.id = v.node_id WHERE n.id IS NULL LIMIT 5"
        )
        unknown = [r[0] for r in cur.fetchall()]
        if unknown:
            raise KeyError(f"vectors of memories not in the store: {unknown}")
        cur.execute(
            "INSERT INTO embeddings (node_id, model, owner, dim, vector) "
            "SELECT v.node_id, v.model, n.owner, vector_dims(v.vector), v.vector "
            "FROM fay_vectors_in v JOIN nodes n ON n.id = v.node_id "
            "ON CONFLICT (node_id, model) DO UPDATE SET vector = EXCLUDED.vector, dim = EXCLUDED.dim"
        )
        cur.execute("DROP TABLE fay_vectors_in")

    @contextlib.contextmanager
    def vector_index_deferred(self, build_workers: int | None = None) -> Iterator[None]:
        """For a bulk load into a database no robot is using yet (a migration into a new
        database, the benchmark): this model's HNSW index is dropped for the load and, when
        the load succeeded, built in one pass over every vector with enough memory for its
        graph (`hnsw_build_memory`): 9 minutes for 1M 512-d vectors on 2 cores, where a
        migration growing it row by row ran at 375 memories/s already at 30,000. A failed load
        leaves the index to the next start (the constructor builds it). Meanwhile recall is
        right but scans every vector, and the build blocks writes."""
        name, dim = self.embedder.name, self.embedder.dim
        with self.lock:
            self._db().execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(vector_index_name(name, dim))))
            yield
            (vectors,) = _one(
                self._db().execute(sql.SQL("SELECT count(*) FROM embeddings WHERE model = {}").format(self._model))
            )
            memory = hnsw_build_memory(vectors, dim)
            try:
                ensure_vector_index(self._db(), name, dim, build_memory=memory, build_workers=build_workers)
            except (psycopg.errors.OutOfMemory, psycopg.errors.DiskFull):
                # parallel workers keep the graph in shared memory, which a container may not
                # have (docker's 64 MB /dev/shm): build it in the backend alone
                ensure_vector_index(self._db(), name, dim, build_memory=memory, build_workers=0)
            self._analyze()

    def _analyze(self) -> None:
        """Fresh planner statistics after a bulk load: with the statistics of an empty table the
        planner joins by nested loops instead of the HNSW index (seconds instead of milliseconds)."""
        self._db().execute("ANALYZE nodes, embeddings")

    def purge_expired(self) -> int:
        with self.lock:
            expired = self._rows("SELECT owner, id FROM nodes WHERE expires > 0 AND expires <= %s", [self.clock()])
            if expired:
                self.write(delete=[(o, i) for o, i in expired])
            return len(expired)

    # ------------------------------------------------------------------ recall
    def recall(
        self,
        owner: str,
        query: str,
        n: int = 10,
        statuses: Iterable[str] = (CONFIRMED,),
        tags_all: Iterable[str] = (),
        tags_any: Iterable[str] = (),
        node_types: Iterable[str] = (),
        weights: Weights = _RECALL_WEIGHTS,
        decay_per_hour: float = DEFAULT_DECAY_PER_HOUR,
        stateless: bool = False,
        query_vector: np.ndarray | None = None,
    ) -> builtins.list[MemoryNode]:
        """The owner's top-n memories for `query` (see retrieval.py), best first."""
        nodes = scored_recall(
            self,
            owner,
            query,
            n,
            statuses,
            tags_all,
            tags_any,
            node_types,
            weights,
            decay_per_hour,
            stateless,
            query_vector,
        )
        for node in nodes:  # retrieval times not yet written (flush_touches) are already true
            if node.id in self._pending_touch:
                node.last_retrieved = max(node.last_retrieved, self._pending_touch[node.id][1])
        return nodes

    def recall_ids(
        self,
        owner: str,
        query_vector: np.ndarray | None,
        n: int,
        statuses: Iterable[str] = (CONFIRMED,),
        tags_all: Iterable[str] = (),
        tags_any: Iterable[str] = (),
        node_types: Iterable[str] = (),
        weights: Weights = _RECALL_WEIGHTS,
        decay_per_hour: float = DEFAULT_DECAY_PER_HOUR,
        stateless: bool = False,
    ) -> builtins.list[tuple[str, float]]:
        """Scoring only: (id, score) of the top n."""
        now = self.clock()
        where, params = self._filters(owner, statuses, tags_all, tags_any, node_types, now)
        query = None if query_vector is None else np.asarray(query_vector, dtype=np.float32)
        with self.lock:
            conn = self._db()
            with conn.transaction():  # one snapshot for the bounds and the candidates
                cur = conn.cursor(binary=True)  # vectors as bytes: pgvector's text parsing is slow
                cur.execute(
                    f"SELECT count(*) FROM (SELECT 1 FROM nodes n WHERE {where} LIMIT {EXACT_LIMIT + 1}) m", params
                )
                matching = _one(cur)[0]
                if matching == 0:
                    return []
                if matching <= EXACT_LIMIT:
                    ids, last, importance, relevance = self._scored_rows(cur, where, params, None, query)
                    recency = recency_of(now, last, decay_per_hour)
                    scores = combine(recency, relevance, importance, weights)
                else:
                    ids, scores = self._approximate(cur, owner, where, params, query, now, weights, decay_per_hour, n)
            top = top_n(ids, scores, n)
            if not stateless and top:
                for node_id, _score in top:
                    self._pending_touch[node_id] = (owner, now)
        return top

    def _scored_rows(
        self,
        cur: psycopg.Cursor,
        where: str,
        params: builtins.list,
        ids: builtins.list[str] | None,
        query: np.ndarray | None,
        server_side: bool = False,
    ) -> tuple[builtins.list[str], np.ndarray, np.ndarray, np.ndarray]:
        """(ids, last_retrieved, importance, relevance) of the matching rows (of `ids` only if
        given), in insertion order; recall times not yet written are applied. Relevance is the
        dot product in numpy (as the SQLite store computes it), or with `server_side` pgvector's
        cosine computed by the server (no vectors sent: for large candidate sets)."""
        relevance_sql: sql.Composable = sql.SQL("e.vector")
        args: builtins.list = []
        if server_side and query is not None:
            relevance_sql = sql.SQL("1 - ((e.vector::{vec}) <=> (%s::{vec}))").format(vec=self._vec)
            args.append(query)
        text = sql.SQL(
            "SELECT n.id, n.last_retrieved, n.importance, {relevance}, "
            "CASE WHEN e.vector IS NULL THEN n.content END FROM nodes n "
            "LEFT JOIN embeddings e ON e.node_id = n.id AND e.model = {model} WHERE "
        ).format(model=self._model, relevance=relevance_sql) + sql.SQL(where)
        args += params
        if ids is not None:
            text += sql.SQL(" AND n.id = ANY(%s)")
            args.append(ids)
        cur.execute(text + sql.SQL(" ORDER BY n.seq"), args)
        rows = cur.fetchall()
        relevance = np.zeros(len(rows))
        missing = [k for k, r in enumerate(rows) if r[3] is None]
        if query is not None and rows:
            if server_side:
                relevance = np.array([0.0 if r[3] is None else r[3] for r in rows], dtype=np.float64)
            else:
                vectors = np.zeros((len(rows), self.embedder.dim), dtype=np.float32)
                for k, r in enumerate(rows):
                    if r[3] is not None:
                        vectors[k] = _array(r[3])
                relevance = vectors @ query
        if missing:  # written under another embedder: add this model's vectors now
            fresh = self.embedder.embed([rows[k][4] for k in missing])
            owner = params[0]
            for k, vec in zip(missing, fresh):
                self._insert_vector(cur, rows[k][0], owner, self.embedder.name, vec)
                if query is not None:
                    relevance[k] = float(np.asarray(vec, dtype=np.float32) @ query)
        ids_out = [r[0] for r in rows]
        last = np.array([max(r[1], self._pending_touch.get(r[0], ("", 0.0))[1]) for r in rows], dtype=np.float64)
        importance = np.array([r[2] for r in rows], dtype=np.float64)
        return ids_out, last, importance, relevance

    def _approximate(
        self,
        cur: psycopg.Cursor,
        owner: str,
        where: str,
        params: builtins.list,
        query: np.ndarray | None,
        now: float,
        weights: Weights,
        decay_per_hour: float,
        n: int,
    ) -> tuple[builtins.list[str], np.ndarray]:
        """Exact top n over many matches without reading every vector: the best k by relevance
        (HNSW) and the best k by the rest of the score (recency and importance, in SQL), scored
        together; if a memory in neither set could still beat the n-th score, every match is
        scored instead (counted in `exact_fallbacks`)."""
        cur.execute(
            f"SELECT min(n.last_retrieved), max(n.last_retrieved), min(n.importance), max(n.importance) "
            f"FROM nodes n WHERE {where}",
            params,
        )
        lr_lo, lr_hi, imp_lo, imp_hi = _one(cur)
        pending = [i for i, (o, _t) in self._pending_touch.items() if o == owner]
        if pending:
            lr_hi = max(lr_hi, max(self._pending_touch[i][1] for i in pending))
        rec_lo, rec_hi = (float(v) for v in recency_of(now, np.array([lr_lo, lr_hi], dtype=np.float64), decay_per_hour))
        # The recency + importance part of the score, as retrieval.combine_bounded computes it.
        terms = []
        for weight, value, lo, hi in (
            (
                weights.recency,
                f"power({float(decay_per_hour)!r}::float8, "
                f"greatest({float(now)!r}::float8 - n.last_retrieved, 0) / 3600.0)",
                rec_lo,
                rec_hi,
            ),
            (weights.importance, "n.importance", float(imp_lo), float(imp_hi)),
        ):
            if hi - lo <= 1e-12:
                terms.append(f"{weight * 0.5!r}::float8")
            else:
                terms.append(f"{float(weight)!r}::float8 * ({value} - {lo!r}::float8) / {hi - lo!r}::float8")
        rest = " + ".join(terms)
        k = max(self.candidates, 10 * n)
        for _widening in range(3):  # many ties (e.g. memories written the same second): look 4x deeper
            found = self._candidates_scored(
                cur,
                owner,
                where,
                params,
                query,
                rest,
                k,
                pending,
                n,
                (rec_lo, rec_hi),
                (float(imp_lo), float(imp_hi)),
                now,
                weights,
                decay_per_hour,
            )
            if found is not None:
                return found
            k *= 4
        self.exact_fallbacks += 1
        ids, last, importance, relevance = self._scored_rows(cur, where, params, None, query, server_side=True)
        return ids, combine(recency_of(now, last, decay_per_hour), relevance, importance, weights)

    def _candidates_scored(
        self,
        cur: psycopg.Cursor,
        owner: str,
        where: str,
        params: builtins.list,
        query: np.ndarray | None,
        rest: str,
        k: int,
        pending: builtins.list[str],
        n: int,
        rec_bounds: tuple[float, float],
        imp_bounds: tuple[float, float],
        now: float,
        weights: Weights,
        decay_per_hour: float,
    ) -> tuple[builtins.list[str], np.ndarray] | None:
        """The top-k candidates scored, or None when a memory outside them might score higher."""
        rec_lo, rec_hi = rec_bounds
        imp_lo, imp_hi = imp_bounds
        cur.execute(f"SELECT n.id, {rest} FROM nodes n WHERE {where} ORDER BY 2 DESC LIMIT {k}", params)
        by_rest = cur.fetchall()
        rest_bound = by_rest[-1][1] if len(by_rest) >= k else -np.inf  # no memory outside scores more
        candidates: dict[str, None] = dict.fromkeys(pending)
        candidates.update(dict.fromkeys(r[0] for r in by_rest))
        rel_lo = rel_hi = rel_edge = None
        if query is not None:
            # Relevance bounds from the HNSW index (an exact scan computes 100k distances): the
            # nearest neighbour is the most relevant, the neighbour of the negated query the least.
            cur.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            cur.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.SQL(str(min(1000, max(40, k))))))
            nearest = sql.SQL(
                "SELECT n.id, 1 - ((e.vector::{vec}) <=> (%s::{vec})) FROM embeddings e "
                "JOIN nodes n ON n.id = e.node_id WHERE e.model = {model} AND e.owner = %s AND {where} "
                "ORDER BY (e.vector::{vec}) <=> (%s::{vec}) LIMIT {limit}"
            )
            # a custom plan each time (prepare=False): a generic plan does not use the HNSW index well
            cur.execute(
                nearest.format(model=self._model, where=sql.SQL(where), vec=self._vec, limit=sql.SQL(str(k))),
                [query, owner, *params, query],
                prepare=False,
            )
            near = cur.fetchall()
            candidates.update(dict.fromkeys(r[0] for r in near))
            if near:
                rel_hi = max(float(r[1]) for r in near)
            if len(near) >= k:  # no memory outside is more relevant (as far as HNSW finds them)
                rel_edge = min(float(r[1]) for r in near)  # relaxed order: the last is not always the least
            # a wider search: the farthest memory is harder to find than the nearest
            cur.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.SQL(str(min(1000, max(40, 2 * k))))))
            cur.execute(
                nearest.format(model=self._model, where=sql.SQL(where), vec=self._vec, limit=sql.SQL("1")),
                [query, owner, *params, -query],
                prepare=False,
            )
            farthest = cur.fetchall()
            if farthest:
                rel_lo = float(farthest[0][1])
        ids, last, importance, relevance = self._scored_rows(
            cur, where, params, list(candidates), query, server_side=True
        )
        if not ids:
            return [], np.zeros(0)
        recency = recency_of(now, last, decay_per_hour)
        rel_bounds = (0.0, 0.0)
        if query is not None:
            rel_bounds = (
                min(float(relevance.min()), rel_lo if rel_lo is not None else np.inf),
                max(float(relevance.max()), rel_hi if rel_hi is not None else -np.inf),
            )
        bounds = (
            (min(rec_lo, float(recency.min())), max(rec_hi, float(recency.max()))),
            rel_bounds,
            (min(float(imp_lo), float(importance.min())), max(float(imp_hi), float(importance.max()))),
        )
        scores = combine_bounded(recency, relevance, importance, weights, bounds)
        if len(ids) > n:
            nth = float(np.partition(-scores, n - 1)[n - 1]) * -1
            rel_part = 0.0
            if query is not None and rel_edge is not None:
                rel_part = float(scale(np.array([rel_edge]), *rel_bounds)[0]) * weights.relevance
            elif query is not None:
                rel_part = 0.0  # every memory with a vector is a candidate already
            outside = (float(rest_bound) + (rel_part if query is not None else weights.relevance * 0.5)) / weights.total
            if np.isfinite(outside) and nth < outside - 1e-9:
                return None
        return ids, scores

    def vectors(self, owner: str, nodes: Sequence[MemoryNode]) -> np.ndarray:
        """This embedder's vectors of `nodes` (rows in order); computed for those lacking one."""
        if not nodes:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        with self.lock:
            found = dict(
                self._rows(
                    sql.SQL(
                        "SELECT node_id, vector FROM embeddings WHERE model = {model} "
                        "AND owner = %s AND node_id = ANY(%s)"
                    ).format(model=self._model),
                    [owner, [n.id for n in nodes]],
                )
            )
        missing = [n.content for n in nodes if n.id not in found]
        fresh = iter(self.embedder.embed(missing)) if missing else iter(())
        return np.stack([_array(found[n.id]) if n.id in found else next(fresh) for n in nodes])

    def maintain_embeddings(self, limit: int = 256) -> int:
        """Give up to `limit` memories written under another embedder this model's vector (so
        relevance search finds them); looks again a minute after finding none."""
        if time.monotonic() < self._backfill_after:
            return 0
        with self.lock:
            rows = self._rows(
                sql.SQL(
                    "SELECT n.id, n.owner, n.content FROM nodes n WHERE NOT EXISTS (SELECT 1 FROM embeddings e "
                    "WHERE e.node_id = n.id AND e.model = {model}) LIMIT {limit}"
                ).format(model=self._model, limit=sql.SQL(str(int(limit))))
            )
            if not rows:
                self._backfill_after = time.monotonic() + _BACKFILL_IDLE
                return 0
            vectors = self.embedder.embed([r[2] for r in rows])
            conn = self._db()
            with conn.transaction():
                cur = conn.cursor()
                for (node_id, owner, _content), vec in zip(rows, vectors):
                    cur.execute(
                        "INSERT INTO embeddings (node_id, model, owner, dim, vector) "
                        "SELECT %s, %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM nodes WHERE id = %s) "
                        "ON CONFLICT DO NOTHING",
                        [
                            node_id,
                            self.embedder.name,
                            owner,
                            int(self.embedder.dim),
                            np.asarray(vec, dtype=np.float32),
                            node_id,
                        ],
                    )
            return len(rows)

    def flush_touches(self) -> int:
        with self.lock:
            if not self._pending_touch:
                return 0
            conn = self._db()
            with conn.transaction():
                return self._write_touches(conn.cursor())

    def _write_touches(self, cur: psycopg.Cursor) -> int:
        pending, self._pending_touch = self._pending_touch, {}
        if pending:
            # GREATEST: another robot may have recalled the memory later
            cur.executemany(
                "UPDATE nodes SET last_retrieved = GREATEST(last_retrieved, %s) WHERE owner = %s AND id = %s",
                [(when, owner, node_id) for node_id, (owner, when) in sorted(pending.items())],
            )
        return len(pending)

    # ------------------------------------------------------------------ per-owner state
    def get_state(self, table: str, owner: str) -> dict:
        assert table in ("profiles", "reflection_state")
        with self.lock:
            cur = self._db().execute(
                sql.SQL("SELECT * FROM {} WHERE owner = %s").format(sql.Identifier(table)), [owner]
            )
            row = cur.fetchone()
            if row is None:
                return {}
            return dict(zip([d.name for d in cur.description or ()], row))

    def set_state(self, table: str, owner: str, **values) -> None:
        assert table in ("profiles", "reflection_state")
        with self.lock:
            conn = self._db()
            with conn.transaction():
                conn.execute(
                    sql.SQL("INSERT INTO {} (owner) VALUES (%s) ON CONFLICT DO NOTHING").format(sql.Identifier(table)),
                    [owner],
                )
                if values:
                    conn.execute(
                        sql.SQL("UPDATE {} SET {} WHERE owner = %s").format(
                            sql.Identifier(table),
                            sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(k)) for k in values),
                        ),
                        [*values.values(), owner],
                    )

    # ------------------------------------------------------------------ migration between backends
    def export_rows(
        self, after_id: str = "", limit: int = 1000
    ) -> builtins.list[tuple[MemoryNode, builtins.list[tuple[str, np.ndarray]]]]:
        """Every node (all owners, every status) with id > after_id, by id, with its vectors."""
        with self.lock:
            nodes = [
                _to_node(r)
                for r in self._rows(
                    f'{_SELECT} WHERE n.id COLLATE "C" > %s ORDER BY n.id COLLATE "C" LIMIT {int(limit)}', [after_id]
                )
            ]
            vectors: dict[str, builtins.list[tuple[str, np.ndarray]]] = {n.id: [] for n in nodes}
            if nodes:
                for node_id, model, vec in self._rows(
                    "SELECT node_id, model, vector FROM embeddings WHERE node_id = ANY(%s) ORDER BY node_id, model",
                    [[n.id for n in nodes]],
                ):
                    vectors[node_id].append((model, _array(vec)))
            return [(n, vectors[n.id]) for n in nodes]

    def import_rows(self, rows: Sequence[tuple[MemoryNode, Sequence[tuple[str, np.ndarray]]]]) -> int:
        """Insert the nodes not yet here (by id) with their vectors, in one transaction (by
        COPY into a temporary table, then one INSERT that skips the ids already here)."""
        if not rows:
            return 0
        columns = sql.SQL(", ").join(map(sql.Identifier, _COPY_COLUMNS))
        with self.lock:
            conn = self._db()
            with conn.transaction():
                cur = conn.cursor()
                cur.execute(
                    sql.SQL(
                        "CREATE TEMPORARY TABLE fay_nodes_in ON COMMIT DROP AS SELECT {} FROM nodes WITH NO DATA"
                    ).format(columns)
                )
                cur.execute("ALTER TABLE fay_nodes_in ADD COLUMN ord BIGSERIAL")  # keeps the given order
                _copy_nodes(cur, "fay_nodes_in", (node for node, _vectors in rows))
                cur.execute(
                    sql.SQL(
                        "INSERT INTO nodes ({columns}) SELECT {columns} FROM fay_nodes_in ORDER BY ord "
                        "ON CONFLICT (id) DO NOTHING RETURNING id"
                    ).format(columns=columns)
                )
                inserted = {r[0] for r in cur.fetchall()}
                cur.execute("DROP TABLE fay_nodes_in")
                vectors: dict[tuple[str, str], np.ndarray] = {}
                seen: set[str] = set()
                for node, node_vectors in rows:
                    if node.id in inserted and node.id not in seen:  # a repeated id: its first row went in
                        seen.add(node.id)
                        for model, vec in node_vectors:
                            vectors[(node.id, model)] = vec
                if vectors:
                    self._upsert_vectors(cur, [(node_id, model, vec) for (node_id, model), vec in vectors.items()])
            if inserted:
                self._analyze()
            return len(inserted)

    def export_states(self) -> dict[str, builtins.list[dict]]:
        out: dict[str, builtins.list[dict]] = {}
        with self.lock:
            for table in ("profiles", "reflection_state"):
                cur = self._db().execute(sql.SQL("SELECT * FROM {} ORDER BY owner").format(sql.Identifier(table)))
                names = [d.name for d in cur.description or ()]
                out[table] = [dict(zip(names, row)) for row in cur.fetchall()]
        return out

    def import_states(self, states: dict[str, builtins.list[dict]]) -> None:
        for table, rows in states.items():
            for row in rows:
                self.set_state(table, row["owner"], **{k: v for k, v in row.items() if k != "owner"})

    # --- issue 35: the layered profile -----------------------------------------------------
    def profile_layers(self):
        """The layered profile's tables in this database (layers/layer_tables.py)."""
        from .layers.layer_tables import PostgresLayers

        return PostgresLayers(self)

    # --- end issue 35 ------------------------------------------------------------------------

    # --- issue 36: reminders and commitments -------------------------------------------------
    def reminder_tables(self):
        """The reminder store's tables in this database (reminder_tables.py; reminders.ReminderBook)."""
        from .reminder_tables import PostgresReminderTables

        return PostgresReminderTables(self)

    # --- end issue 36 ------------------------------------------------------------------------

    # --- turn log (issue 35): the heard turns and what rests on them ----------------------------
    def add_turns(self, turns: Sequence[Turn], vectors: np.ndarray | None = None) -> builtins.list[str]:
        """Store the turns not stored yet (by owner + turn id), with their vectors under this
        store's embedder, in one transaction; the ids stored (a turn already there is left as it is)."""
        if not turns:
            return []
        rows = [
            (
                t.owner,
                t.turn_id,
                t.session,
                float(t.time),
                t.speaker,
                t.text,
                ",".join(t.dates),
                self.embedder.name if vectors is not None else "",
                None if vectors is None else np.asarray(vectors[i], dtype=np.float32).tobytes(),
            )
            for i, t in enumerate(turns)
        ]
        with self.lock:
            conn = self._db()
            with conn.transaction():
                cur = conn.cursor()
                cur.execute(
                    "CREATE TEMPORARY TABLE fay_turns_in (owner TEXT, turn_id TEXT, session TEXT, time FLOAT8, "
                    "speaker TEXT, text TEXT, dates TEXT, model TEXT, vector BYTEA, ord BIGSERIAL) ON COMMIT DROP"
                )
                with cur.copy(
                    "COPY fay_turns_in (owner, turn_id, session, time, speaker, text, dates, model, vector) "
                    "FROM STDIN (FORMAT BINARY)"
                ) as copy:
                    copy.set_types(["text", "text", "text", "float8", "text", "text", "text", "text", "bytea"])
                    for row in rows:
                        copy.write_row(row)
                cur.execute(
                    "INSERT INTO turns (owner, turn_id, session, time, speaker, text, dates, model, vector) "
                    "SELECT owner, turn_id, session, time, speaker, text, dates, model, vector FROM fay_turns_in "
                    "ORDER BY ord ON CONFLICT (owner, turn_id) DO NOTHING RETURNING turn_id"
                )
                stored = [r[0] for r in cur.fetchall()]
                cur.execute("DROP TABLE fay_turns_in")
        return stored

    def get_turns(self, owner: str, turn_ids: Iterable[str]) -> builtins.list[Turn]:
        ids = list(dict.fromkeys(turn_ids))
        if not ids:
            return []
        with self.lock:
            rows = self._rows(
                f"SELECT {_TURN_COLUMNS} FROM turns WHERE owner = %s AND turn_id = ANY(%s) ORDER BY time, turn_id",
                [owner, ids],
            )
        return [_to_turn(r) for r in rows]

    def list_turns(
        self, owner: str, since: float | None = None, until: float | None = None, limit: int | None = None
    ) -> builtins.list[Turn]:
        """The owner's turns said in [since, until), oldest first."""
        where: builtins.list[str] = ["owner = %s"]
        params: builtins.list[object] = [owner]
        if since is not None:
            where.append("time >= %s")
            params.append(since)
        if until is not None:
            where.append("time < %s")
            params.append(until)
        text = f"SELECT {_TURN_COLUMNS} FROM turns WHERE {' AND '.join(where)} ORDER BY time, seq"
        if limit:
            text += f" LIMIT {int(limit)}"
        with self.lock:
            return [_to_turn(r) for r in self._rows(text, params)]

    def turns_with_vectors(self, owner: str) -> builtins.list[tuple[Turn, np.ndarray | None]]:
        with self.lock:
            rows = self._rows(
                f"SELECT {_TURN_COLUMNS}, model, vector FROM turns WHERE owner = %s ORDER BY time, seq", [owner]
            )
        name = self.embedder.name
        return [
            (_to_turn(r[:7]), np.frombuffer(r[8], dtype=np.float32) if r[7] == name and r[8] is not None else None)
            for r in rows
        ]

    def turn_stamp(self, owner: str) -> tuple[int, float]:
        with self.lock:
            count, newest = self._rows("SELECT count(*), coalesce(max(time), 0) FROM turns WHERE owner = %s", [owner])[
                0
            ]
        return int(count), float(newest)

    def count_turns(self, owner: str | None = None) -> int:
        with self.lock:
            if owner is None:
                return self._rows("SELECT count(*) FROM turns")[0][0]
            return self._rows("SELECT count(*) FROM turns WHERE owner = %s", [owner])[0][0]

    def delete_turns(self, owner: str, turn_ids: Iterable[str]) -> int:
        ids = list(turn_ids)
        if not ids:
            return 0
        with self.lock:
            cur = self._db().execute("DELETE FROM turns WHERE owner = %s AND turn_id = ANY(%s)", [owner, ids])
            return cur.rowcount

    def resting_on(self, owner: str, turn_ids: Iterable[str]) -> builtins.list[MemoryNode]:
        """The owner's memories (any status) with one of `turn_ids` among their sources."""
        ids = list(turn_ids)
        if not ids:
            return []
        with self.lock:
            return self._select("n.owner = %s AND n.sources && %s::text[]", [owner, ids])

    def export_turns(self, after: tuple[str, str] = ("", ""), limit: int = 1000) -> builtins.list[Turn]:
        """Every turn (all owners) after (owner, turn_id), by owner and turn id: migration pages."""
        with self.lock:
            rows = self._rows(
                f'SELECT {_TURN_COLUMNS} FROM turns WHERE (owner COLLATE "C", turn_id COLLATE "C") > (%s, %s) '
                f'ORDER BY owner COLLATE "C", turn_id COLLATE "C" LIMIT {int(limit)}',
                [after[0], after[1]],
            )
        return [_to_turn(r) for r in rows]

    # --- end turn log ---


_TURN_COLUMNS = "owner, turn_id, session, time, speaker, text, dates"


def _to_turn(row: Sequence) -> Turn:
    owner, turn_id, session, when, speaker, text, dates = row
    return Turn(owner, turn_id, float(when), speaker, text, session, [d for d in dates.split(",") if d])
