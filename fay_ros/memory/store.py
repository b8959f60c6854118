"""MemoryStore: the memory stream on SQLite (sqlite-utils), with a vectorised recall index.
The SQLite backend of backend.MemoryBackend (pg_store.py is the PostgreSQL one).

- One database file in WAL mode (schema.connect); every write is one transaction, committed
  before the caller is answered, so an acknowledged write survives a crash of the process.
- Every read and write names the owner; there is no query path across owners.
- Embeddings are stored by node id and embedding model; a node without a vector for the
  current model (imported, or written under another embedder) is embedded when its owner's
  index is first loaded.
- last_retrieved updates from recalls are kept in memory and written with the next write
  transaction or `flush_touches()`: a recall does not pay for a disk write, and losing a
  last-retrieved time in a crash is harmless.
- Another process (the `fay-ros memory` CLI) may write the same file; the store notices it
  through SQLite's data_version and reloads its index.
- A write costs the same at any size: the identical-memory lookup is indexed (migration 0003),
  the owner's index is appended to (never reloaded by the store's own writes) and grows with
  headroom.
- A confirmed keyed memory written supersedes, in the same transaction, every other active
  memory of its owner + kind + key (one active value, whoever wrote first).
"""

from __future__ import annotations

import builtins
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from .embeddings import Embedder
from .model import CANDIDATE, CONFIRMED, SUPERSEDED, MemoryNode, tag_value
from .retrieval import DEFAULT_DECAY_PER_HOUR, OwnerIndex, Weights, scored_recall
from .schema import connect as connect_database
from .turn_log import Turn

# The recall weights when the caller names none (Weights is frozen, so one shared instance is safe).
_RECALL_WEIGHTS = Weights()

_NODE_COLUMNS = (
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
)


class MemoryStore:
    # `list` below is a method: signatures after it name the builtin type as builtins.list.
    def __init__(
        self, path: str | Path, embedder: Embedder, clock: Callable[[], float] = time.time, synchronous: str = "FULL"
    ) -> None:
        self.path = Path(path).expanduser()
        self.embedder = embedder
        self.clock = clock
        self.db = connect_database(self.path, synchronous=synchronous)
        self.lock = threading.RLock()
        self._indexes: dict[str, OwnerIndex] = {}
        self._pending_touch: dict[str, tuple[str, float]] = {}  # node id -> (owner, time)
        self._data_version = self._read_data_version()

    # ------------------------------------------------------------------ basics
    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        with self.lock:
            self.flush_touches()
            self.db.close()

    def _read_data_version(self) -> int:
        return self.db.execute("PRAGMA data_version").fetchone()[0]

    def _check_external_writes(self) -> None:
        version = self._read_data_version()
        if version != self._data_version:
            self._data_version = version
            self._indexes.clear()

    def _row_to_node(self, row: Sequence, tags: list[str], pointers: list[str]) -> MemoryNode:
        values = dict(zip(_NODE_COLUMNS, row))
        values.pop("kind")
        return MemoryNode(tags=tags, pointer_ids=pointers, **values)

    def _select(self, where: str, params: Sequence, order: str = "rowid", limit: int | None = None) -> list[MemoryNode]:
        sql = f"SELECT {', '.join(_NODE_COLUMNS)} FROM nodes WHERE {where} ORDER BY {order}"
        if limit:
            sql += f" LIMIT {int(limit)}"
        rows = self.db.execute(sql, list(params)).fetchall()
        if not rows:
            return []
        ids = [r[0] for r in rows]
        tags: dict[str, list[str]] = {i: [] for i in ids}
        pointers: dict[str, list[str]] = {i: [] for i in ids}
        sources: dict[str, list[str]] = {i: [] for i in ids}  # turn log (issue 35)
        for chunk in _chunks(ids, 500):
            marks = ",".join("?" * len(chunk))
            for node_id, tag in self.db.execute(
                f"SELECT node_id, tag FROM node_tags WHERE node_id IN ({marks}) ORDER BY rowid", chunk
            ):
                tags[node_id].append(tag)
            for node_id, pointer in self.db.execute(
                f"SELECT node_id, pointer_id FROM node_pointers WHERE node_id IN ({marks}) ORDER BY node_id, position",
                chunk,
            ):
                pointers[node_id].append(pointer)
            # --- turn log (issue 35): each memory's evidence ---
            for node_id, turn_id in self.db.execute(
                f"SELECT node_id, turn_id FROM node_sources WHERE node_id IN ({marks}) ORDER BY node_id, position",
                chunk,
            ):
                sources[node_id].append(turn_id)
            # --- end turn log ---
        nodes = [self._row_to_node(r, tags[r[0]], pointers[r[0]]) for r in rows]
        for node in nodes:
            node.sources = sources[node.id]
        return nodes

    # ------------------------------------------------------------------ reads
    def get(self, owner: str, node_id: str) -> MemoryNode | None:
        with self.lock:
            found = self._select("+owner = ? AND id = ?", [owner, node_id])
            return found[0] if found else None

    def get_many(self, owner: str, node_ids: Iterable[str]) -> list[MemoryNode]:
        ids = list(dict.fromkeys(node_ids))
        out: list[MemoryNode] = []
        with self.lock:
            for chunk in _chunks(ids, 500):
                # "+owner": look the ids up by primary key, then check the owner (not a scan of
                # the owner's rows through the owner index).
                out += self._select(f"+owner = ? AND id IN ({','.join('?' * len(chunk))})", [owner, *chunk])
        order = {i: n for n, i in enumerate(ids)}
        return sorted(out, key=lambda node: order[node.id])

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
        tags_all, tags_any = list(tags_all), list(tags_any)
        # With a tag, the tag's rows drive the query ("+": not through the owner's index, which
        # would visit every memory of the owner to find a few tagged ones).
        plain = "+" if tags_all or tags_any else ""
        where = [f"{plain}owner = ?"]
        params: list = [owner]
        statuses = list(statuses)
        if statuses:
            where.append(f"{plain}status IN ({','.join('?' * len(statuses))})")
            params += statuses
        node_types = list(node_types)
        if node_types:
            where.append(f"node_type IN ({','.join('?' * len(node_types))})")
            params += node_types
        for tag in tags_all:
            where.append("id IN (SELECT node_id FROM node_tags WHERE tag = ?)")
            params.append(tag)
        if tags_any:
            where.append(f"id IN (SELECT node_id FROM node_tags WHERE tag IN ({','.join('?' * len(tags_any))}))")
            params += tags_any
        if created_after is not None:
            where.append("created > ?")
            params.append(created_after)
        if not include_expired:
            where.append("(expires = 0 OR expires > ?)")
            params.append(self.clock())
        with self.lock:
            return self._select(
                " AND ".join(where),
                params,
                order="created DESC, rowid DESC" if newest_first else "created, rowid",
                limit=limit,
            )

    def find_keyed(self, owner: str, kind: str, key: str, statuses: Iterable[str]) -> builtins.list[MemoryNode]:
        statuses = list(statuses)
        with self.lock:
            return self._select(
                f"owner = ? AND kind = ? AND key = ? AND status IN ({','.join('?' * len(statuses))})",
                [owner, kind, key, *statuses],
            )

    def find_content(self, owner: str, content: str, statuses: Iterable[str]) -> builtins.list[MemoryNode]:
        statuses = list(statuses)
        with self.lock:
            return self._select(
                f"owner = ? AND content = ? AND +status IN ({','.join('?' * len(statuses))})",
                [owner, content, *statuses],
            )

    def pointing_to(self, owner: str, node_ids: Iterable[str]) -> builtins.list[MemoryNode]:
        ids = list(node_ids)
        out: list[MemoryNode] = []
        with self.lock:
            for chunk in _chunks(ids, 500):
                out += self._select(
                    f"owner = ? AND id IN (SELECT node_id FROM node_pointers WHERE pointer_id IN "
                    f"({','.join('?' * len(chunk))}))",
                    [owner, *chunk],
                )
        return out

    def count(self, owner: str | None = None) -> int:
        with self.lock:
            if owner is None:
                return self.db.execute("SELECT count(*) FROM nodes").fetchone()[0]
            return self.db.execute("SELECT count(*) FROM nodes WHERE owner = ?", [owner]).fetchone()[0]

    def owners(self) -> builtins.list[str]:
        with self.lock:
            return [r[0] for r in self.db.execute("SELECT DISTINCT owner FROM nodes ORDER BY owner")]

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
        with self.lock:
            with self.db.atomic():
                self._write_touches()
                for node, vector in add:
                    self._insert(node, vector)
                for node in update:
                    self._update(node)
                for owner, node_id, new_status, by in status:
                    self.db.execute(
                        "UPDATE nodes SET status = ?, superseded_by = ? WHERE owner = ? AND id = ?",
                        [new_status, by, owner, node_id],
                    )
                for owner, node_id in delete:
                    self.db.execute("DELETE FROM nodes WHERE owner = ? AND id = ?", [owner, node_id])
                status = [*status, *self._supersede_others([n for n, _v in add] + list(update))]
            # Only once committed does the in-memory index change.
            for node, vector in add:
                index = self._indexes.get(node.owner)
                if index is not None:
                    index.add(node, vector if vector is not None else self.embedder.embed([node.content])[0])
            for node in update:
                index = self._indexes.get(node.owner)
                if index is not None:
                    if node.id in index.pos:
                        index.update(node)
                        for tag in node.tags:
                            index.add_tag(node.id, tag)
                    else:
                        self._indexes.pop(node.owner, None)
            for owner, node_id, new_status, _by in status:
                index = self._indexes.get(owner)
                if index is not None:
                    index.set_status(node_id, new_status)
            for owner, node_id in delete:
                index = self._indexes.get(owner)
                if index is not None:
                    index.remove(node_id)
            self._data_version = self._read_data_version()

    def _supersede_others(self, written: Sequence[MemoryNode]) -> builtins.list[tuple[str, str, str, str]]:
        """Within the write transaction: every other active memory of a confirmed keyed
        memory's owner + kind + key becomes superseded by it. The status changes made."""
        changes = []
        for node in written:
            if node.status != CONFIRMED or not node.key:
                continue
            others = self.db.execute(
                "SELECT id FROM nodes WHERE owner = ? AND kind = ? AND key = ? AND status IN (?, ?) AND id != ?",
                [node.owner, node.kind, node.key, CONFIRMED, CANDIDATE, node.id],
            ).fetchall()
            for (other,) in others:
                self.db.execute(
                    "UPDATE nodes SET status = ?, superseded_by = ? WHERE id = ?", [SUPERSEDED, node.id, other]
                )
                changes.append((node.owner, other, SUPERSEDED, node.id))
        return changes

    def _insert(self, node: MemoryNode, vector: np.ndarray | None) -> None:
        row = [getattr(node, c) if c != "kind" else tag_value(node.tags, "kind") for c in _NODE_COLUMNS]
        self.db.execute(f"INSERT INTO nodes ({', '.join(_NODE_COLUMNS)}) VALUES ({','.join('?' * len(row))})", row)
        self._write_tags_pointers(node)
        if vector is not None:
            vec = np.asarray(vector, dtype=np.float32)
            self.db.execute(
                "INSERT OR REPLACE INTO embeddings (node_id, model, dim, vector) VALUES (?, ?, ?, ?)",
                [node.id, self.embedder.name, int(vec.size), vec.tobytes()],
            )

    def _update(self, node: MemoryNode) -> None:
        sets = [c for c in _NODE_COLUMNS if c not in ("id", "owner")]
        values = [getattr(node, c) if c != "kind" else tag_value(node.tags, "kind") for c in sets]
        self.db.execute(
            f"UPDATE nodes SET {', '.join(c + ' = ?' for c in sets)} WHERE owner = ? AND id = ?",
            [*values, node.owner, node.id],
        )
        self.db.execute("DELETE FROM node_tags WHERE node_id = ?", [node.id])
        self.db.execute("DELETE FROM node_pointers WHERE node_id = ?", [node.id])
        self.db.execute("DELETE FROM node_sources WHERE node_id = ?", [node.id])  # turn log (issue 35)
        self._write_tags_pointers(node)

    def _write_tags_pointers(self, node: MemoryNode) -> None:
        if node.tags:
            self.db.conn.executemany(
                "INSERT OR IGNORE INTO node_tags (node_id, tag) VALUES (?, ?)", [(node.id, t) for t in node.tags]
            )
        if node.pointer_ids:
            self.db.conn.executemany(
                "INSERT INTO node_pointers (node_id, position, pointer_id) VALUES (?, ?, ?)",
                [(node.id, i, p) for i, p in enumerate(node.pointer_ids)],
            )
        if node.sources:  # turn log (issue 35)
            self.db.conn.executemany(
                "INSERT INTO node_sources (node_id, position, turn_id) VALUES (?, ?, ?)",
                [(node.id, i, t) for i, t in enumerate(node.sources)],
            )

    def add_many(
        self,
        nodes: Sequence[MemoryNode],
        vectors: np.ndarray | None = None,
        extra_vectors: Sequence[tuple[str, str, np.ndarray]] = (),
    ) -> None:
        """Bulk insert in one transaction (import, benchmarks). `extra_vectors` are
        (node_id, model, vector) kept alongside, e.g. Fay's original embeddings."""
        if vectors is None:
            vectors = self.embedder.embed([n.content for n in nodes]) if nodes else None
        with self.lock:
            with self.db.atomic():
                for i, node in enumerate(nodes):
                    self._insert(node, vectors[i] if vectors is not None else None)
                for node_id, model, vec in extra_vectors:
                    vec = np.asarray(vec, dtype=np.float32)
                    self.db.execute(
                        "INSERT OR REPLACE INTO embeddings (node_id, model, dim, vector) VALUES (?,?,?,?)",
                        [node_id, model, int(vec.size), vec.tobytes()],
                    )
            for owner in {n.owner for n in nodes}:
                self._indexes.pop(owner, None)
            self._data_version = self._read_data_version()

    def purge_expired(self) -> int:
        now = self.clock()
        with self.lock:
            expired = self.db.execute(
                "SELECT owner, id FROM nodes WHERE expires > 0 AND expires <= ?", [now]
            ).fetchall()
            if expired:
                self.write(delete=[(o, i) for o, i in expired])
            return len(expired)

    # ------------------------------------------------------------------ recall
    def index(self, owner: str) -> OwnerIndex:
        """The owner's recall index (loaded from SQLite on first use). Call with the lock held."""
        self._check_external_writes()
        index = self._indexes.get(owner)
        if index is None:
            index = self._load_index(owner)
            self._indexes[owner] = index
        return index

    def _load_index(self, owner: str) -> OwnerIndex:
        rows = self.db.execute(
            "SELECT n.id, n.node_type, n.importance, n.created, n.last_retrieved, n.status, n.expires, e.vector "
            "FROM nodes n LEFT JOIN embeddings e ON e.node_id = n.id AND e.model = ? "
            "WHERE n.owner = ? ORDER BY n.rowid",
            [self.embedder.name, owner],
        ).fetchall()
        # headroom: the next writes append without copying the whole index
        index = OwnerIndex(self.embedder.dim, capacity=max(256, len(rows) + len(rows) // 4))
        missing = [r for r in rows if r[7] is None]
        if missing:
            self._embed_missing(owner, missing)
            vectors = dict(
                self.db.execute(
                    "SELECT n.id, e.vector FROM nodes n JOIN embeddings e ON e.node_id = n.id AND e.model = ? "
                    "WHERE n.owner = ?",
                    [self.embedder.name, owner],
                ).fetchall()
            )
            rows = [(*r[:7], vectors[r[0]]) for r in rows]
        tags: dict[str, list[str]] = {}
        for node_id, tag in self.db.execute(
            "SELECT t.node_id, t.tag FROM node_tags t JOIN nodes n ON n.id = t.node_id WHERE n.owner = ?", [owner]
        ):
            tags.setdefault(node_id, []).append(tag)
        for node_id, node_type, importance, created, last, status, expires, blob in rows:
            node = MemoryNode(
                owner=owner,
                content="",
                node_type=node_type,
                importance=importance,
                created=created,
                last_retrieved=last,
                status=status,
                expires=expires,
                tags=tags.get(node_id, []),
                id=node_id,
            )
            index.add(node, np.frombuffer(blob, dtype=np.float32))
        for node_id, (touch_owner, when) in self._pending_touch.items():
            if touch_owner == owner:
                index.touch([node_id], when)
        return index

    def _embed_missing(self, owner: str, rows: builtins.list) -> None:
        contents = (
            dict(
                self.db.execute(
                    f"SELECT id, content FROM nodes WHERE owner = ? AND id IN ({','.join('?' * len(rows))})",
                    [owner, *[r[0] for r in rows]],
                ).fetchall()
            )
            if len(rows) < 900
            else dict(self.db.execute("SELECT id, content FROM nodes WHERE owner = ?", [owner]).fetchall())
        )
        ids = [r[0] for r in rows]
        with self.db.atomic():
            for chunk in _chunks(ids, 256):
                vectors = self.embedder.embed([contents[i] for i in chunk])
                self.db.conn.executemany(
                    "INSERT OR REPLACE INTO embeddings (node_id, model, dim, vector) VALUES (?, ?, ?, ?)",
                    [
                        (i, self.embedder.name, int(v.size), np.asarray(v, dtype=np.float32).tobytes())
                        for i, v in zip(chunk, vectors)
                    ],
                )
        self._data_version = self._read_data_version()

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
        """The owner's top-n memories for `query` (see retrieval.py), newest scoring first."""
        return scored_recall(
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
        """Vectorised scoring only: (id, score) of the top n, no node rows read."""
        now = self.clock()
        with self.lock:
            index = self.index(owner)
            rows = index.candidates(now, statuses, tags_all, tags_any, node_types)
            scores = index.score(rows, query_vector, now, weights, decay_per_hour)
            top = index.top(rows, scores, n)
            if not stateless and top:
                ids = [i for i, _ in top]
                index.touch(ids, now)
                for node_id in ids:
                    self._pending_touch[node_id] = (owner, now)
        return top

    def vectors(self, owner: str, nodes: Sequence[MemoryNode]) -> np.ndarray:
        """The current embedder's vectors of `nodes` (rows in order), from the owner's index."""
        with self.lock:
            index = self.index(owner)
            missing = [n.content for n in nodes if n.id not in index.pos]
            fresh = iter(self.embedder.embed(missing)) if missing else iter(())
            if not nodes:
                return np.zeros((0, self.embedder.dim), dtype=np.float32)
            return np.stack([index.emb[index.pos[n.id]] if n.id in index.pos else next(fresh) for n in nodes])

    def maintain_embeddings(self, limit: int = 256) -> int:
        """Nothing to do: an owner's index embeds what lacks a vector when it is loaded."""
        return 0

    # ------------------------------------------------------------------ migration between backends
    def export_rows(
        self, after_id: str = "", limit: int = 1000
    ) -> builtins.list[tuple[MemoryNode, builtins.list[tuple[str, np.ndarray]]]]:
        """Every node (all owners, every status) with id > after_id, by id, with its vectors
        (model, vector): the pages of `fay-ros memory migrate`."""
        with self.lock:
            ids = [
                r[0]
                for r in self.db.execute(
                    "SELECT id FROM nodes WHERE id > ? ORDER BY id LIMIT ?", [after_id, int(limit)]
                )
            ]
            if not ids:
                return []
            nodes = self._select(f"id IN ({','.join('?' * len(ids))})", ids, order="id")
            vectors: dict[str, builtins.list[tuple[str, np.ndarray]]] = {i: [] for i in ids}
            for node_id, model, blob in self.db.execute(
                f"SELECT node_id, model, vector FROM embeddings WHERE node_id IN ({','.join('?' * len(ids))}) "
                f"ORDER BY node_id, model",
                ids,
            ):
                vectors[node_id].append((model, np.frombuffer(blob, dtype=np.float32)))
            return [(n, vectors[n.id]) for n in nodes]

    def import_rows(self, rows: Sequence[tuple[MemoryNode, Sequence[tuple[str, np.ndarray]]]]) -> int:
        """Insert the nodes not yet here (by id) with their vectors, in one transaction; the
        count inserted. Nodes already present are left as they are (a resumed migration)."""
        if not rows:
            return 0
        with self.lock:
            ids = [n.id for n, _v in rows]
            present = {
                r[0] for r in self.db.execute(f"SELECT id FROM nodes WHERE id IN ({','.join('?' * len(ids))})", ids)
            }
            fresh = [(n, v) for n, v in rows if n.id not in present]
            with self.db.atomic():
                for node, vectors in fresh:
                    self._insert(node, None)
                    for model, vec in vectors:
                        vec = np.asarray(vec, dtype=np.float32)
                        self.db.execute(
                            "INSERT OR REPLACE INTO embeddings (node_id, model, dim, vector) VALUES (?, ?, ?, ?)",
                            [node.id, model, int(vec.size), vec.tobytes()],
                        )
            for owner in {n.owner for n, _v in fresh}:
                self._indexes.pop(owner, None)
            self._data_version = self._read_data_version()
            return len(fresh)

    def export_states(self) -> dict[str, builtins.list[dict]]:
        with self.lock:
            out: dict[str, builtins.list[dict]] = {}
            for table in ("profiles", "reflection_state"):
                cur = self.db.execute(f"SELECT * FROM {table} ORDER BY owner")
                names = [d[0] for d in cur.description]
                out[table] = [dict(zip(names, row)) for row in cur.fetchall()]
            return out

    def import_states(self, states: dict[str, builtins.list[dict]]) -> None:
        for table, rows in states.items():
            for row in rows:
                values = {k: v for k, v in row.items() if k != "owner"}
                self.set_state(table, row["owner"], **values)

    def flush_touches(self) -> int:
        with self.lock:
            if not self._pending_touch:
                return 0
            with self.db.atomic():
                count = self._write_touches()
            self._data_version = self._read_data_version()
            return count

    def _write_touches(self) -> int:
        pending, self._pending_touch = self._pending_touch, {}
        if pending:
            self.db.conn.executemany(
                "UPDATE nodes SET last_retrieved = ? WHERE owner = ? AND id = ?",
                [(when, owner, node_id) for node_id, (owner, when) in pending.items()],
            )
        return len(pending)

    # ------------------------------------------------------------------ per-owner state
    def get_state(self, table: str, owner: str) -> dict:
        assert table in ("profiles", "reflection_state")
        with self.lock:
            cur = self.db.execute(f"SELECT * FROM {table} WHERE owner = ?", [owner])
            row = cur.fetchone()
            if row is None:
                return {}
            return dict(zip([d[0] for d in cur.description], row))

    def set_state(self, table: str, owner: str, **values) -> None:
        assert table in ("profiles", "reflection_state")
        with self.lock:
            with self.db.atomic():
                self.db.execute(f"INSERT OR IGNORE INTO {table} (owner) VALUES (?)", [owner])
                if values:
                    self.db.execute(
                        f"UPDATE {table} SET {', '.join(k + ' = ?' for k in values)} WHERE owner = ?",
                        [*values.values(), owner],
                    )

    # --- issue 35: the layered profile -----------------------------------------------------
    def profile_layers(self):
        """The layered profile's tables in this database (layers/layer_tables.py)."""
        from .layers.layer_tables import SqliteLayers

        return SqliteLayers(self.db, self.lock)

    # --- end issue 35 ------------------------------------------------------------------------

    # --- issue 36: reminders and commitments -------------------------------------------------
    def reminder_tables(self):
        """The reminder store's tables in this database (reminder_tables.py; reminders.ReminderBook)."""
        from .reminder_tables import SqliteReminderTables

        return SqliteReminderTables(self.db, self.lock)

    # --- end issue 36 ------------------------------------------------------------------------

    # --- turn log (issue 35): the heard turns and what rests on them ----------------------------
    def add_turns(self, turns: Sequence[Turn], vectors: np.ndarray | None = None) -> builtins.list[str]:
        """Store the turns not stored yet (by owner + turn id), with their vectors under this
        store's embedder, in one transaction; the ids stored (a turn already there is left as
        it is: replaying a log twice changes nothing)."""
        if not turns:
            return []
        with self.lock:
            stored: builtins.list[str] = []
            with self.db.atomic():
                for i, turn in enumerate(turns):
                    vec = None if vectors is None else np.asarray(vectors[i], dtype=np.float32).tobytes()
                    cur = self.db.execute(
                        "INSERT OR IGNORE INTO turns (owner, turn_id, session, time, speaker, text, dates, model, "
                        "vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [
                            turn.owner,
                            turn.turn_id,
                            turn.session,
                            float(turn.time),
                            turn.speaker,
                            turn.text,
                            ",".join(turn.dates),
                            self.embedder.name if vec is not None else "",
                            vec,
                        ],
                    )
                    if cur.rowcount:
                        stored.append(turn.turn_id)
            self._data_version = self._read_data_version()
            return stored

    def get_turns(self, owner: str, turn_ids: Iterable[str]) -> builtins.list[Turn]:
        ids = list(dict.fromkeys(turn_ids))
        out: builtins.list[Turn] = []
        with self.lock:
            for chunk in _chunks(ids, 500):
                out += [
                    _to_turn(r)
                    for r in self.db.execute(
                        f"SELECT {_TURN_COLUMNS} FROM turns WHERE owner = ? "
                        f"AND turn_id IN ({','.join('?' * len(chunk))})",
                        [owner, *chunk],
                    )
                ]
        return sorted(out, key=lambda t: (t.time, t.turn_id))

    def list_turns(
        self, owner: str, since: float | None = None, until: float | None = None, limit: int | None = None
    ) -> builtins.list[Turn]:
        """The owner's turns said in [since, until), oldest first."""
        where: builtins.list[str] = ["owner = ?"]
        params: builtins.list[object] = [owner]
        if since is not None:
            where.append("time >= ?")
            params.append(since)
        if until is not None:
            where.append("time < ?")
            params.append(until)
        sql = f"SELECT {_TURN_COLUMNS} FROM turns WHERE {' AND '.join(where)} ORDER BY time, rowid"
        if limit:
            sql += f" LIMIT {int(limit)}"
        with self.lock:
            return [_to_turn(r) for r in self.db.execute(sql, params)]

    def turns_with_vectors(self, owner: str) -> builtins.list[tuple[Turn, np.ndarray | None]]:
        """Every turn of the owner, oldest first, with its vector under this store's embedder
        (None when it has none: stored by another embedder)."""
        with self.lock:
            rows = self.db.execute(
                f"SELECT {_TURN_COLUMNS}, model, vector FROM turns WHERE owner = ? ORDER BY time, rowid", [owner]
            ).fetchall()
        name = self.embedder.name
        return [
            (_to_turn(r[:7]), np.frombuffer(r[8], dtype=np.float32) if r[7] == name and r[8] is not None else None)
            for r in rows
        ]

    def turn_stamp(self, owner: str) -> tuple[int, float]:
        """(count, newest time) of the owner's turns: changes when turns are stored or deleted."""
        with self.lock:
            count, newest = self.db.execute(
                "SELECT count(*), coalesce(max(time), 0) FROM turns WHERE owner = ?", [owner]
            ).fetchone()
        return int(count), float(newest)

    def count_turns(self, owner: str | None = None) -> int:
        with self.lock:
            if owner is None:
                return self.db.execute("SELECT count(*) FROM turns").fetchone()[0]
            return self.db.execute("SELECT count(*) FROM turns WHERE owner = ?", [owner]).fetchone()[0]

    def delete_turns(self, owner: str, turn_ids: Iterable[str]) -> int:
        ids = list(turn_ids)
        deleted = 0
        with self.lock:
            with self.db.atomic():
                for chunk in _chunks(ids, 500):
                    deleted += self.db.execute(
                        f"DELETE FROM turns WHERE owner = ? AND turn_id IN ({','.join('?' * len(chunk))})",
                        [owner, *chunk],
                    ).rowcount
            self._data_version = self._read_data_version()
        return deleted

    def resting_on(self, owner: str, turn_ids: Iterable[str]) -> builtins.list[MemoryNode]:
        """The owner's memories (any status) with one of `turn_ids` among their sources."""
        ids = list(turn_ids)
        out: builtins.list[MemoryNode] = []
        with self.lock:
            for chunk in _chunks(ids, 500):
                out += self._select(
                    f"owner = ? AND id IN (SELECT node_id FROM node_sources WHERE turn_id IN "
                    f"({','.join('?' * len(chunk))}))",
                    [owner, *chunk],
                )
        return out

    def export_turns(self, after: tuple[str, str] = ("", ""), limit: int = 1000) -> builtins.list[Turn]:
        """Every turn (all owners) after (owner, turn_id), by owner and turn id: migration pages."""
        with self.lock:
            return [
                _to_turn(r)
                for r in self.db.execute(
                    f"SELECT {_TURN_COLUMNS} FROM turns WHERE (owner, turn_id) > (?, ?) "
                    "ORDER BY owner, turn_id LIMIT ?",
                    [after[0], after[1], int(limit)],
                )
            ]

    # --- end turn log ---


_TURN_COLUMNS = "owner, turn_id, session, time, speaker, text, dates"


def _to_turn(row: Sequence) -> Turn:
    owner, turn_id, session, when, speaker, text, dates = row
    return Turn(owner, turn_id, when, speaker, text, session, [d for d in dates.split(",") if d])


def _chunks(items: Sequence, size: int):
    for i in range(0, len(items), size):
        yield list(items[i : i + size])


__all__ = ["MemoryStore", "SUPERSEDED"]
